//! Automatic mapping: every role found on the shared humanoids (CesiumMan and RiggedFigure
//! have no clavicles, and only those are reported missing), the common naming conventions
//! read on skeletons built with them, and left/right checked against the body.

mod common;

use anim_core::pose::{JointDesc, Skeleton};
use anim_retarget::map::MapError;
use anim_retarget::{HumanoidMap, Role, Side, auto_map};

/// The map as role name → joint name, spine as `spine[i]`.
fn named(map: &HumanoidMap, skeleton: &Skeleton) -> Vec<(String, String)> {
    map.slots().map(|(slot, j)| (slot.to_string(), skeleton.name(j).unwrap().to_owned())).collect()
}

fn expect(model: &str, pairs: &[(&str, &str)], unmapped: &[Role]) {
    let m = common::load(model);
    let auto = auto_map(&m.skeleton);
    let got = named(&auto.map, &m.skeleton);
    let want: Vec<(String, String)> = pairs.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect();
    assert_eq!(got, want, "{model}");
    assert_eq!(auto.unmapped, unmapped, "{model}");
    assert!(auto.is_complete());
    auto.map.validate_with_rest(&m.skeleton).unwrap_or_else(|e| panic!("{model}: {e}"));
}

#[test]
fn shared_humanoids_map_every_role_they_have() {
    expect(
        "mannequin",
        &[
            ("hips", "pelvis"),
            ("chest", "spine_03"),
            ("neck", "neck"),
            ("head", "head"),
            ("left_shoulder", "clavicle_l"),
            ("left_upper_arm", "upperarm_l"),
            ("left_lower_arm", "lowerarm_l"),
            ("left_hand", "hand_l"),
            ("left_upper_leg", "thigh_l"),
            ("left_lower_leg", "calf_l"),
            ("left_foot", "foot_l"),
            ("left_toes", "ball_l"),
            ("right_shoulder", "clavicle_r"),
            ("right_upper_arm", "upperarm_r"),
            ("right_lower_arm", "lowerarm_r"),
            ("right_hand", "hand_r"),
            ("right_upper_leg", "thigh_r"),
            ("right_lower_leg", "calf_r"),
            ("right_foot", "foot_r"),
            ("right_toes", "ball_r"),
            ("spine[0]", "spine_01"),
            ("spine[1]", "spine_02"),
        ],
        &[],
    );
    expect(
        "Woman",
        &[
            ("hips", "Hips"),
            ("chest", "Spine2"),
            ("neck", "Neck"),
            ("head", "Head"),
            ("left_shoulder", "LeftShoulder"),
            ("left_upper_arm", "LeftArm"),
            ("left_lower_arm", "LeftForeArm"),
            ("left_hand", "LeftHand"),
            ("left_upper_leg", "LeftUpLeg"),
            ("left_lower_leg", "LeftLeg"),
            ("left_foot", "LeftFoot"),
            ("left_toes", "LeftToeBase"),
            ("right_shoulder", "RightShoulder"),
            ("right_upper_arm", "RightArm"),
            ("right_lower_arm", "RightForeArm"),
            ("right_hand", "RightHand"),
            ("right_upper_leg", "RightUpLeg"),
            ("right_lower_leg", "RightLeg"),
            ("right_foot", "RightFoot"),
            ("right_toes", "RightToeBase"),
            ("spine[0]", "Spine"),
            ("spine[1]", "Spine1"),
        ],
        &[],
    );
    let no_clavicles = [Role::Shoulder(Side::Left), Role::Shoulder(Side::Right)];
    // CesiumMan numbers its left arm 4, 3, 2 from the shoulder down and its right arm 1, 2,
    // 3: the hierarchy, not the numbers, orders a generic chain.
    expect(
        "CesiumMan",
        &[
            ("hips", "Skeleton_torso_joint_1"),
            ("chest", "torso_joint_3"),
            ("neck", "Skeleton_neck_joint_1"),
            ("head", "Skeleton_neck_joint_2"),
            ("left_upper_arm", "Skeleton_arm_joint_L__4_"),
            ("left_lower_arm", "Skeleton_arm_joint_L__3_"),
            ("left_hand", "Skeleton_arm_joint_L__2_"),
            ("left_upper_leg", "leg_joint_L_1"),
            ("left_lower_leg", "leg_joint_L_2"),
            ("left_foot", "leg_joint_L_3"),
            ("left_toes", "leg_joint_L_5"),
            ("right_upper_arm", "Skeleton_arm_joint_R"),
            ("right_lower_arm", "Skeleton_arm_joint_R__2_"),
            ("right_hand", "Skeleton_arm_joint_R__3_"),
            ("right_upper_leg", "leg_joint_R_1"),
            ("right_lower_leg", "leg_joint_R_2"),
            ("right_foot", "leg_joint_R_3"),
            ("right_toes", "leg_joint_R_5"),
            ("spine[0]", "Skeleton_torso_joint_2"),
        ],
        &no_clavicles,
    );
    expect(
        "RiggedFigure",
        &[
            ("hips", "torso_joint_1"),
            ("chest", "torso_joint_3"),
            ("neck", "neck_joint_1"),
            ("head", "neck_joint_2"),
            ("left_upper_arm", "arm_joint_L_1"),
            ("left_lower_arm", "arm_joint_L_2"),
            ("left_hand", "arm_joint_L_3"),
            ("left_upper_leg", "leg_joint_L_1"),
            ("left_lower_leg", "leg_joint_L_2"),
            ("left_foot", "leg_joint_L_3"),
            ("left_toes", "leg_joint_L_5"),
            ("right_upper_arm", "arm_joint_R_1"),
            ("right_lower_arm", "arm_joint_R_2"),
            ("right_hand", "arm_joint_R_3"),
            ("right_upper_leg", "leg_joint_R_1"),
            ("right_lower_leg", "leg_joint_R_2"),
            ("right_foot", "leg_joint_R_3"),
            ("right_toes", "leg_joint_R_5"),
            ("spine[0]", "torso_joint_2"),
        ],
        &no_clavicles,
    );
}

/// The mannequin's skeleton renamed by `rename` (skeleton order), with extra joints
/// inserted: `(name, parent)` puts a joint of that name between `parent` and its children
/// (a twist segment), or below `parent` alone when its name starts with `+` (an end
/// marker, a finger, a helper).
fn renamed(rename: &dyn Fn(&str) -> String, inserts: &[(&str, &str)]) -> Skeleton {
    let man = anim_mannequin::build();
    let s = &man.skeleton;
    let mut joints: Vec<JointDesc> = (0..s.len())
        .map(|j| JointDesc::new(rename(s.name(j).unwrap()), s.parent(j), s.rest_pose().locals()[j]))
        .collect();
    for (name, parent) in inserts {
        let p = joints.iter().position(|j| j.name == *parent).expect("the parent exists");
        let new = joints.len();
        let (name, leaf) = name.strip_prefix('+').map_or((*name, false), |n| (n, true));
        if !leaf {
            for j in joints.iter_mut() {
                if j.parent == Some(p) {
                    j.parent = Some(new);
                }
            }
        }
        joints.push(JointDesc::new(name, Some(p), anim_math::Transform::IDENTITY));
    }
    Skeleton::new(joints).unwrap()
}

/// Maps the mannequin's joints under `rename` and checks every role lands on the renamed
/// mannequin joint of that role.
fn convention(label: &str, rename: &dyn Fn(&str) -> String, inserts: &[(&str, &str)]) {
    let skeleton = renamed(rename, inserts);
    let auto = auto_map(&skeleton);
    assert!(auto.unmapped.is_empty(), "{label}: unmapped {:?}, notes {:?}", auto.unmapped, auto.notes);
    auto.map.validate_with_rest(&skeleton).unwrap_or_else(|e| panic!("{label}: {e}"));
    let man = anim_mannequin::build();
    let reference = auto_map(&man.skeleton).map;
    for (slot, j) in reference.slots() {
        let want = rename(man.skeleton.name(j).unwrap());
        let got = match slot {
            anim_retarget::Slot::Role(r) => auto.map.get(r),
            anim_retarget::Slot::Spine(i) => auto.map.spine().get(i).copied(),
        };
        assert_eq!(got.and_then(|g| skeleton.name(g)), Some(want.as_str()), "{label}: {slot}");
    }
}

/// Splits a mannequin name into (part, side).
fn part(name: &str) -> (&str, Option<&str>) {
    match name.rsplit_once('_') {
        Some((p, s)) if s == "l" || s == "r" => (p, Some(s)),
        _ => (name, None),
    }
}

#[test]
fn naming_conventions() {
    // Mixamo.
    convention(
        "mixamo",
        &|n| {
            let (p, side) = part(n);
            let side = match side {
                Some("l") => "Left",
                Some(_) => "Right",
                None => "",
            };
            let p = match p {
                "pelvis" => "Hips",
                "spine_01" => "Spine",
                "spine_02" => "Spine1",
                "spine_03" => "Spine2",
                "neck" => "Neck",
                "head" => "Head",
                "clavicle" => "Shoulder",
                "upperarm" => "Arm",
                "lowerarm" => "ForeArm",
                "hand" => "Hand",
                "thigh" => "UpLeg",
                "calf" => "Leg",
                "foot" => "Foot",
                _ => "ToeBase",
            };
            format!("mixamorig:{side}{p}")
        },
        &[("+mixamorig:HeadTop_End", "mixamorig:Head"), ("+mixamorig:LeftHandIndex1", "mixamorig:LeftHand")],
    );
    // Blender / Rigify deform bones, with twist segments and a second neck bone.
    convention(
        "rigify",
        &|n| {
            let (p, side) = part(n);
            let side = side.map_or(String::new(), |s| format!(".{}", s.to_uppercase()));
            let p = match p {
                "pelvis" => "spine",
                "spine_01" => "spine.001",
                "spine_02" => "spine.002",
                "spine_03" => "spine.003",
                "neck" => "spine.004",
                "head" => "spine.006",
                "clavicle" => "shoulder",
                "upperarm" => "upper_arm",
                "lowerarm" => "forearm",
                "hand" => "hand",
                "thigh" => "thigh",
                "calf" => "shin",
                "foot" => "foot",
                _ => "toe",
            };
            format!("DEF-{p}{side}")
        },
        &[
            ("DEF-upper_arm.L.001", "DEF-upper_arm.L"),
            ("DEF-forearm.R.001", "DEF-forearm.R"),
            ("DEF-thigh.L.001", "DEF-thigh.L"),
            ("DEF-shin.R.001", "DEF-shin.R"),
            ("DEF-spine.005", "DEF-spine.004"),
            ("+ORG-thigh.L", "DEF-spine"),
        ],
    );
    // Unreal's names are the mannequin's; with twist and IK joints.
    convention(
        "unreal",
        &|n| n.to_owned(),
        &[
            ("+upperarm_twist_01_l", "upperarm_l"),
            ("+thigh_twist_01_r", "thigh_r"),
            ("neck_02", "neck"),
            ("+ik_foot_l", "pelvis"),
        ],
    );
    // L_Thigh.
    convention(
        "L_Thigh",
        &|n| {
            let (p, side) = part(n);
            let p = match p {
                "pelvis" => "Hips",
                "spine_01" => "Spine",
                "spine_02" => "Spine1",
                "spine_03" => "Chest",
                "neck" => "Neck",
                "head" => "Head",
                "clavicle" => "Clavicle",
                "upperarm" => "UpperArm",
                "lowerarm" => "Forearm",
                "hand" => "Hand",
                "thigh" => "Thigh",
                "calf" => "Calf",
                "foot" => "Foot",
                _ => "Toe",
            };
            side.map_or(p.to_owned(), |s| format!("{}_{p}", s.to_uppercase()))
        },
        &[],
    );
    // thigh.L.
    convention(
        "thigh.L",
        &|n| {
            let (p, side) = part(n);
            let p = match p {
                "pelvis" => "hips",
                "spine_01" => "spine",
                "spine_02" => "spine.001",
                "spine_03" => "chest",
                "clavicle" => "shoulder",
                "upperarm" => "upper_arm",
                "lowerarm" => "forearm",
                "calf" => "shin",
                "ball" => "toe",
                other => other,
            };
            side.map_or(p.to_owned(), |s| format!("{p}.{}", s.to_uppercase()))
        },
        &[],
    );
}

#[test]
fn reports_what_it_cannot_map_and_checks_sides() {
    // Without clavicles, toes and neck: the optional roles are reported, the map is valid.
    let man = anim_mannequin::build();
    let drop = ["clavicle_l", "clavicle_r", "ball_l", "ball_r", "neck"];
    let s = &man.skeleton;
    let joints: Vec<JointDesc> = (0..s.len())
        .map(|j| {
            let name = s.name(j).unwrap();
            let name = if drop.contains(&name) { format!("x{j}") } else { name.to_owned() };
            JointDesc::new(name, s.parent(j), s.rest_pose().locals()[j])
        })
        .collect();
    let sk = Skeleton::new(joints).unwrap();
    let auto = auto_map(&sk);
    let mut want = vec![
        Role::Neck,
        Role::Shoulder(Side::Left),
        Role::Toes(Side::Left),
        Role::Shoulder(Side::Right),
        Role::Toes(Side::Right),
    ];
    want.sort_by_key(|r| r.index());
    assert_eq!(auto.unmapped, want);
    assert!(auto.is_complete());
    auto.map.validate_with_rest(&sk).unwrap();

    // Left and right swapped in the names: refused, naming the left role.
    let swapped = renamed(
        &|n| match part(n) {
            (p, Some("l")) => format!("{p}_r"),
            (p, Some(_)) => format!("{p}_l"),
            (p, None) => p.to_owned(),
        },
        &[],
    );
    let e = auto_map(&swapped).map.validate_with_rest(&swapped).unwrap_err();
    assert!(matches!(e, MapError::SideSwapped { role: Role::UpperLeg(Side::Left), .. }), "{e}");
}
