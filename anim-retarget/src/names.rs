//! Reading a joint name: its side and what kind of body part it names, for the common
//! naming conventions (the mannequin's and Unreal's `pelvis`/`thigh_l`/`calf_l`, Mixamo's
//! `mixamorig:LeftUpLeg`, Blender/Rigify's `DEF-thigh.L` and `DEF-spine.003`, `L_Thigh`,
//! `thigh.L`, and the generic `leg_joint_L_1` chains of CesiumMan and RiggedFigure).

use crate::profile::Side;

/// What a joint name says it is. The generic classes (`Torso`, `Arm`, `Leg`) name a chain
/// without saying which joint of it: the hierarchy decides ([`crate::auto`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Class {
    /// Nothing of the profile (fingers, end markers, twist and IK helpers, face, props).
    Ignore,
    /// `hips`, `pelvis`, Rigify's `DEF-spine`.
    Hips,
    /// A joint of the torso: `spine`, `spine1`, `torso_joint_2`, `chest`, `abdomen`.
    Torso,
    /// Rigify's `DEF-spine.003`: the chest by number.
    Chest,
    /// `neck`, `neck_01`.
    Neck,
    /// `head`.
    Head,
    /// `clavicle`, `shoulder`, `collar`.
    Shoulder,
    /// `upperarm`, `upper_arm`.
    UpperArm,
    /// `forearm`, `lowerarm`.
    LowerArm,
    /// `hand`, `wrist`.
    Hand,
    /// A plain `arm` (Mixamo's upper arm, CesiumMan's whole arm chain).
    Arm,
    /// `thigh`, `upleg`, a sided `hip`.
    UpperLeg,
    /// `calf`, `shin`, `lowerleg`, `knee`.
    LowerLeg,
    /// `foot`, `ankle`.
    Foot,
    /// `toe`, `toebase`, `ball`.
    Toes,
    /// A plain `leg` (Mixamo's lower leg, CesiumMan's whole leg chain).
    Leg,
}

/// A joint name read: its class and side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Reading {
    pub class: Class,
    pub side: Option<Side>,
}

/// Words that make a joint a helper, an end marker or a part outside the profile.
const IGNORE: &[&str] = &[
    "end",
    "top",
    "nub",
    "tip",
    "null",
    "ik",
    "fk",
    "pole",
    "target",
    "twist",
    "roll",
    "helper",
    "ctrl",
    "jaw",
    "eye",
    "eyes",
    "eyelid",
    "tongue",
    "teeth",
    "brow",
    "lip",
    "lips",
    "ear",
    "hair",
    "breast",
    "weapon",
    "prop",
    "thumb",
    "index",
    "middle",
    "ring",
    "pinky",
    "pinkie",
    "little",
    "finger",
    "fingers",
    "digit",
    "metacarpal",
    "carpal",
    "tail",
    "wing",
    "cheek",
    "nose",
    "mouth",
    "attach",
    "socket",
    "camera",
    "light",
    "mesh",
    "offset",
];

/// Words that carry no meaning for the profile.
const NOISE: &[&str] =
    &["skeleton", "joint", "jnt", "jt", "bone", "bn", "bip", "biped", "def", "deform", "j", "b", "bind", "sk", "rig"];

/// Splits a name into lower-case words: at separators, at lower-to-upper case changes
/// (`LeftUpLeg` → left, up, leg) and between letters and digits (`Spine1` → spine, 1).
pub(crate) fn words(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev: Option<char> = None;
    for c in name.chars() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev = None;
            continue;
        }
        if let Some(p) = prev {
            let case_break = p.is_lowercase() && c.is_uppercase();
            let digit_break = p.is_ascii_digit() != c.is_ascii_digit();
            if (case_break || digit_break) && !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
        }
        cur.extend(c.to_lowercase());
        prev = Some(c);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Reads a joint name (see the module docs for the conventions).
pub(crate) fn read(name: &str) -> Reading {
    // A namespace (`mixamorig:`, `Character1:`) says nothing about the joint.
    let base = name.rsplit(':').next().unwrap_or(name);
    let upper = base.to_ascii_uppercase();
    // Rigify keeps its deforming bones under `DEF-`; `ORG-`, `MCH-` and widgets are not
    // deforming.
    if ["ORG-", "MCH-", "WGT-", "VIS-", "CTRL-"].iter().any(|p| upper.starts_with(p)) {
        return Reading { class: Class::Ignore, side: None };
    }
    let rigify = upper.starts_with("DEF-");
    let base = if rigify { &base[4..] } else { base };
    let all = words(base);
    let mut side = None;
    let mut number = None;
    let mut key = String::new();
    for w in &all {
        match w.as_str() {
            "left" | "l" | "lf" | "lft" => side = side.or(Some(Side::Left)),
            "right" | "r" | "rt" | "rgt" => side = side.or(Some(Side::Right)),
            w if w.chars().all(|c| c.is_ascii_digit()) => number = number.or(w.parse::<u32>().ok()),
            w if IGNORE.contains(&w) => return Reading { class: Class::Ignore, side },
            w if NOISE.contains(&w) => {}
            w => key.push_str(w),
        }
    }
    // A side glued to the word: `LThigh` reads as one word "lthigh".
    if side.is_none() {
        for (prefix, s) in [("left", Side::Left), ("right", Side::Right), ("l", Side::Left), ("r", Side::Right)] {
            if let Some(rest) = key.strip_prefix(prefix)
                && !matches!(classify(rest, true), Class::Ignore | Class::Hips | Class::Torso)
            {
                key = rest.to_owned();
                side = Some(s);
                break;
            }
        }
    }
    let class = if rigify && key == "spine" {
        // Rigify numbers its torso: spine (hips), .001-.002 spine, .003 chest, .004 neck,
        // .005 upper neck, .006 head.
        match number {
            None => Class::Hips,
            Some(1 | 2) => Class::Torso,
            Some(3) => Class::Chest,
            Some(4) => Class::Neck,
            Some(6) => Class::Head,
            _ => Class::Ignore,
        }
    } else {
        classify(&key, side.is_some())
    };
    let limb = !matches!(class, Class::Ignore | Class::Hips | Class::Torso | Class::Chest | Class::Neck | Class::Head);
    if limb && side.is_none() {
        return Reading { class: Class::Ignore, side: None };
    }
    Reading { class, side }
}

fn classify(key: &str, sided: bool) -> Class {
    match key {
        "hips" | "pelvis" => Class::Hips,
        "hip" if !sided => Class::Hips,
        "spine" | "torso" | "abdomen" | "waist" | "back" | "chest" | "upperchest" | "thorax" | "ribcage" | "body" => {
            Class::Torso
        }
        "neck" => Class::Neck,
        "head" => Class::Head,
        "shoulder" | "clavicle" | "collar" | "collarbone" | "clav" => Class::Shoulder,
        "upperarm" | "uparm" | "humerus" => Class::UpperArm,
        "forearm" | "lowerarm" | "loarm" | "elbow" | "radius" => Class::LowerArm,
        "hand" | "wrist" | "palm" => Class::Hand,
        "arm" => Class::Arm,
        "upleg" | "upperleg" | "thigh" | "hip" | "femur" => Class::UpperLeg,
        "calf" | "shin" | "lowerleg" | "loleg" | "knee" | "crus" => Class::LowerLeg,
        "foot" | "ankle" => Class::Foot,
        "toe" | "toes" | "toebase" | "ball" => Class::Toes,
        "leg" => Class::Leg,
        _ => Class::Ignore,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(name: &str) -> (Class, Option<Side>) {
        let x = read(name);
        (x.class, x.side)
    }

    #[test]
    fn conventions() {
        use Class::*;
        use Side::*;
        assert_eq!(words("LeftUpLeg"), ["left", "up", "leg"]);
        assert_eq!(words("Skeleton_arm_joint_L__4_"), ["skeleton", "arm", "joint", "l", "4"]);
        assert_eq!(r("mixamorig:LeftUpLeg"), (UpperLeg, Some(Left)));
        assert_eq!(r("mixamorig:RightLeg"), (Leg, Some(Right)));
        assert_eq!(r("mixamorig:Hips"), (Hips, None));
        assert_eq!(r("mixamorig:Spine2"), (Torso, None));
        assert_eq!(r("mixamorig:LeftToeBase"), (Toes, Some(Left)));
        assert_eq!(r("LeftToe_End"), (Ignore, Some(Left)));
        assert_eq!(r("HeadTop_End").0, Ignore);
        assert_eq!(r("LeftHandIndex1").0, Ignore);
        assert_eq!(r("DEF-thigh.L"), (UpperLeg, Some(Left)));
        assert_eq!(r("DEF-shin.R"), (LowerLeg, Some(Right)));
        assert_eq!(r("DEF-upper_arm.L"), (UpperArm, Some(Left)));
        assert_eq!(r("DEF-forearm.L.001"), (LowerArm, Some(Left)));
        assert_eq!(r("DEF-spine"), (Hips, None));
        assert_eq!(r("DEF-spine.003"), (Chest, None));
        assert_eq!(r("DEF-spine.006"), (Head, None));
        assert_eq!(r("ORG-thigh.L").0, Ignore);
        assert_eq!(r("pelvis"), (Hips, None));
        assert_eq!(r("thigh_l"), (UpperLeg, Some(Left)));
        assert_eq!(r("calf_r"), (LowerLeg, Some(Right)));
        assert_eq!(r("ball_l"), (Toes, Some(Left)));
        assert_eq!(r("clavicle_r"), (Shoulder, Some(Right)));
        assert_eq!(r("upperarm_twist_01_l").0, Ignore);
        assert_eq!(r("ik_foot_l").0, Ignore);
        assert_eq!(r("L_Thigh"), (UpperLeg, Some(Left)));
        assert_eq!(r("thigh.L"), (UpperLeg, Some(Left)));
        assert_eq!(r("LThigh"), (UpperLeg, Some(Left)));
        assert_eq!(r("Bip01 R Calf"), (LowerLeg, Some(Right)));
        assert_eq!(r("leg_joint_L_1"), (Leg, Some(Left)));
        assert_eq!(r("Skeleton_arm_joint_R"), (Arm, Some(Right)));
        assert_eq!(r("Skeleton_torso_joint_1"), (Torso, None));
        assert_eq!(r("Skeleton_neck_joint_2"), (Neck, None));
        assert_eq!(r("hand"), (Ignore, None), "a limb without a side is not mapped");
    }
}
