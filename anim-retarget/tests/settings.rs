//! The settings and options beyond the defaults, checked against the source sampled and
//! composed on its own: the reference pose given as a clip at a time (for rigs whose clips
//! assume another pose than their bind pose), the hips' horizontal and vertical factors,
//! and hands placed by IK.

use anim_core::clip::{Clip, TimePolicy};
use anim_core::pose::{JointDesc, Pose, Skeleton};
use anim_math::{Transform, Vec3};
use anim_retarget::{HumanoidRig, Reference, RetargetJob, RetargetSettings, Retargeter, Role, Side, auto_map};

/// Model-space transforms of `clip` at `t` (clamped), sampled over the rest pose.
fn globals(skeleton: &Skeleton, clip: &Clip, t: f32) -> Vec<Transform> {
    let mut pose = skeleton.rest_pose().clone();
    clip.sample(t, TimePolicy::Clamp, &mut pose).expect("the clip fits its skeleton");
    let mut g = vec![Transform::IDENTITY; skeleton.len()];
    pose.globals(skeleton, &mut g).expect("pose fits");
    g
}

/// The mannequin with every bone 1.2 times as long (same names, same rest rotations).
fn tall(s: &Skeleton) -> Skeleton {
    proportioned(s, 1.2, 1.2)
}

/// The mannequin with its forearms and hands' bones `arms` times as long, every other bone
/// `body` times.
fn proportioned(s: &Skeleton, body: f32, arms: f32) -> Skeleton {
    Skeleton::new(
        (0..s.len())
            .map(|j| {
                let rest = s.rest_pose().locals()[j];
                let name = s.name(j).unwrap();
                let f = if name.starts_with("lowerarm_") || name.starts_with("hand_") { arms } else { body };
                let t = Transform { translation: rest.translation * f, ..rest };
                JointDesc::new(s.name(j).unwrap(), s.parent(j), t)
            })
            .collect(),
    )
    .expect("the tall skeleton")
}

fn sampled(skeleton: &Skeleton, clip: &Clip, t: f32) -> Pose {
    let mut pose = skeleton.rest_pose().clone();
    clip.sample(t, TimePolicy::Clamp, &mut pose).expect("the clip fits its skeleton");
    pose
}

/// Largest rotation angle (radians) and translation distance between two poses' locals.
fn pose_distance(a: &Pose, b: &Pose) -> (f32, f32) {
    a.locals().iter().zip(b.locals()).fold((0.0f32, 0.0f32), |(r, d), (x, y)| {
        (r.max(x.rotation.angle_to(&y.rotation)), d.max((x.translation - y.translation).norm()))
    })
}

/// `Reference::Clip` is the clip's pose at that time in model space, the time clamped into
/// the clip.
#[test]
fn clip_reference_is_the_clip_at_its_time() {
    let man = anim_mannequin::build();
    let s = &man.skeleton;
    let walk = man.clip("walk").unwrap();
    for (time, expected_at) in
        [(0.3 * walk.duration(), 0.3 * walk.duration()), (walk.duration() + 5.0, walk.duration())]
    {
        let rig = HumanoidRig::new(s, auto_map(s).map, Reference::Clip { clip: walk, time }).expect("rig");
        let want = globals(s, walk, expected_at);
        for (j, (r, w)) in rig.reference().iter().zip(&want).enumerate() {
            assert!((r.translation - w.translation).norm() < 1e-6, "joint {j} at {time}");
            assert!(r.rotation.angle_to(&w.rotation) < 1e-5, "joint {j} at {time}");
        }
        let hips = rig.joint(Role::Hips).unwrap();
        assert_eq!(rig.hips_height(), want[hips].translation.y);
    }
    // Not the bind pose: the walk at 30 % has its legs apart.
    let bind = HumanoidRig::new(s, auto_map(s).map, Reference::SkeletonBind).expect("rig");
    let at = HumanoidRig::new(s, auto_map(s).map, Reference::Clip { clip: walk, time: 0.3 * walk.duration() }).unwrap();
    let thigh = at.joint(Role::UpperLeg(Side::Left)).unwrap();
    assert!(bind.reference()[thigh].rotation.angle_to(&at.reference()[thigh].rotation) > 0.05);
}

/// The reference is what maps onto the target's reference: with the source's reference
/// the walk at time `t`, the source posed as the walk at `t` puts the target (another
/// skeleton, its reference its rest pose) exactly in its rest pose; with the source's
/// bind pose as reference, the same source pose does not.
#[test]
fn a_source_in_its_reference_pose_gives_the_target_its_reference() {
    let man = anim_mannequin::build();
    let s = &man.skeleton;
    let big = tall(s);
    let walk = man.clip("walk").unwrap();
    let t = 0.3 * walk.duration();
    let settings = RetargetSettings { align_bones: false, foot_ik: false, ..RetargetSettings::default() };
    let target = HumanoidRig::new(&big, auto_map(&big).map, Reference::Rest).expect("target rig");
    let source_pose = sampled(s, walk, t);
    let mut out = big.rest_pose().clone();
    let mut run = |reference: Reference<'_>| {
        let source = HumanoidRig::new(s, auto_map(s).map, reference).expect("source rig");
        let rt = Retargeter::new(&source, &target, settings).expect("retargeter");
        let mut job = RetargetJob::new(&rt);
        job.run(&rt, &source_pose, &[0.0; 4], &mut out).expect("job runs");
        pose_distance(&out, big.rest_pose())
    };
    let (angle, distance) = run(Reference::Clip { clip: walk, time: t });
    assert!(angle < 1e-4 && distance < 1e-5, "at the reference: {angle} rad, {distance} m from rest");
    let (angle, _) = run(Reference::SkeletonBind);
    assert!(angle > 0.05, "from the bind pose the walk at {t} turns joints: {angle} rad");
}

/// The hips' horizontal and vertical factors scale their travel axis by axis:
/// `hips − reference hips = diag(h·k, v·k, h·k) · (source hips − source reference hips)`,
/// with `k` the leg ratio (1.2 here), on every frame of the walk and the jump, their hips
/// also moved about horizontally.
#[test]
fn hips_factors_scale_each_axis() {
    let man = anim_mannequin::build();
    let s = &man.skeleton;
    let big = tall(s);
    let (h, v) = (0.5, 2.0);
    let settings = RetargetSettings { hips_horizontal: h, hips_vertical: v, foot_ik: false, ..Default::default() };
    let source = HumanoidRig::new(s, auto_map(s).map, Reference::SkeletonBind).expect("source rig");
    let target = HumanoidRig::new(&big, auto_map(&big).map, Reference::Rest).expect("target rig");
    let rt = Retargeter::new(&source, &target, settings).expect("retargeter");
    let k = rt.leg_ratio();
    assert!((k - 1.2).abs() < 1e-5, "{k}");
    let expected = Vec3::new(h * k, v * k, h * k);
    assert!((rt.scale() - expected).norm() < 1e-6, "{:?}", rt.scale());
    let (sh, th) = (source.joint(Role::Hips).unwrap(), target.joint(Role::Hips).unwrap());
    let (s_ref, t_ref) = (source.reference()[sh].translation, target.reference()[th].translation);
    let mut job = RetargetJob::new(&rt);
    let mut out = big.rest_pose().clone();
    let mut moved = Vec3::zeros();
    for name in ["walk", "jump"] {
        let clip = man.clip(name).unwrap();
        for i in 0..=60 {
            let t = clip.duration() * i as f32 / 60.0;
            // The mannequin's clips play in place: the hips are moved about horizontally too.
            let mut pose = sampled(s, clip, t);
            let phase = std::f32::consts::TAU * i as f32 / 60.0;
            pose.locals_mut()[sh].translation += Vec3::new(0.1 * phase.sin(), 0.0, 0.3 * phase.cos());
            job.run(&rt, &pose, &[0.0; 4], &mut out).expect("job runs");
            let mut g = vec![Transform::IDENTITY; big.len()];
            out.globals(&big, &mut g).expect("pose fits");
            let mut sg = vec![Transform::IDENTITY; s.len()];
            pose.globals(s, &mut sg).expect("pose fits");
            let source_offset = sg[sh].translation - s_ref;
            let want = expected.component_mul(&source_offset);
            let got = g[th].translation - t_ref;
            assert!((got - want).norm() < 1e-5, "{name} at {t}: {got:?} != {want:?}");
            moved = moved.sup(&source_offset.abs());
        }
    }
    assert!(moved.y > 0.01 && moved.x.max(moved.z) > 0.01, "the clips move the hips both ways: {moved:?}");
}

/// Hands are placed as feet are when asked (`hand_ik`): on a mannequin whose arms are
/// relatively longer than its legs (the rotations alone put its hand elsewhere), a
/// left-hand weight of 1 puts the left hand at the scaled source position on every frame
/// of the punch; a weight of 0 leaves it where the rotations put it.
#[test]
fn hand_ik_places_a_hand_at_the_scaled_source_position() {
    let man = anim_mannequin::build();
    let s = &man.skeleton;
    let long_arms = proportioned(s, 1.2, 1.35);
    let settings = RetargetSettings { hand_ik: true, foot_ik: false, ..RetargetSettings::default() };
    let source = HumanoidRig::new(s, auto_map(s).map, Reference::SkeletonBind).expect("source rig");
    let target = HumanoidRig::new(&long_arms, auto_map(&long_arms).map, Reference::Rest).expect("target rig");
    let rt = Retargeter::new(&source, &target, settings).expect("retargeter");
    let (s_hand, t_hand) = rt.limb_ends(2).expect("the left hand is placed by IK");
    assert_eq!(
        (s_hand, t_hand),
        (source.joint(Role::Hand(Side::Left)).unwrap(), target.joint(Role::Hand(Side::Left)).unwrap())
    );
    let mut job = RetargetJob::new(&rt);
    let mut out = long_arms.rest_pose().clone();
    let mut g = vec![Transform::IDENTITY; long_arms.len()];
    let punch = man.clip("punch").unwrap();
    let mut unplaced = 0.0f32;
    for i in 0..=30 {
        let t = punch.duration() * i as f32 / 30.0;
        let goal = rt.scaled_position(2, &globals(s, punch, t)[s_hand].translation).expect("a hand");
        let pose = sampled(s, punch, t);
        job.run(&rt, &pose, &[0.0, 0.0, 1.0, 0.0], &mut out).expect("job runs");
        out.globals(&long_arms, &mut g).expect("pose fits");
        let error = (g[t_hand].translation - goal).norm();
        assert!(error < 1e-4, "punch at {t}: the hand {error} m from its goal");
        assert!((job.report().contact_error[2] - error).abs() < 1e-4, "the report says so");
        job.run(&rt, &pose, &[0.0; 4], &mut out).expect("job runs");
        out.globals(&long_arms, &mut g).expect("pose fits");
        unplaced = unplaced.max((g[t_hand].translation - goal).norm());
    }
    assert!(unplaced > 0.01, "without the IK the hand is elsewhere ({unplaced} m): the test can fail");
}
