//! Two-bone IK and aim: reach, stretch, pole side, and look-at frames.

mod common;

use anim_ik::{IkError, TwoBoneIk, aim, aim_joint, solve_two_bone};
use anim_math::{Quat, Transform, Vec3, quat};
use common::{Rng, legs, t};

struct Leg {
    parent: Transform,
    upper: Transform,
    middle: Transform,
    end: Vec3,
}

impl Leg {
    fn random(rng: &mut Rng) -> Self {
        Leg {
            parent: Transform::new(
                Vec3::new(rng.range(-1.0, 1.0), rng.range(0.0, 2.0), rng.range(-1.0, 1.0)),
                Quat::from_euler_angles(rng.range(-3.0, 3.0), rng.range(-3.0, 3.0), rng.range(-3.0, 3.0)),
                Vec3::repeat(1.0),
            ),
            upper: Transform::new(
                Vec3::new(0.1, 0.0, 0.0),
                Quat::from_euler_angles(rng.range(-1.0, 1.0), rng.range(-1.0, 1.0), rng.range(-1.0, 1.0)),
                Vec3::repeat(1.0),
            ),
            middle: Transform::new(
                Vec3::new(0.0, -rng.range(0.3, 0.6), 0.0),
                Quat::from_euler_angles(rng.range(-1.0, 1.0), 0.0, 0.0),
                Vec3::repeat(1.0),
            ),
            end: Vec3::new(0.0, -rng.range(0.3, 0.6), 0.0),
        }
    }

    fn positions(&self) -> (Vec3, Vec3, Vec3) {
        let wa = self.parent.combine(&self.upper);
        let wb = wa.combine(&self.middle);
        (wa.translation, wb.translation, wb.transform_point(&self.end))
    }

    fn solve(&mut self, target: &Vec3, pole: Option<&Vec3>) -> anim_ik::TwoBoneResult {
        solve_two_bone(&self.parent, &mut self.upper, &mut self.middle, &self.end, target, pole).unwrap()
    }
}

#[test]
fn reachable_targets_are_hit_exactly_and_bones_keep_their_length() {
    let mut rng = Rng(2024);
    for _ in 0..2000 {
        let mut leg = Leg::random(&mut rng);
        let (a, b, c) = leg.positions();
        let (lab, lcb) = ((b - a).norm(), (c - b).norm());
        let reach = rng.range((lab - lcb).abs() + 0.01, lab + lcb - 0.01);
        let target = a + rng.dir() * reach;
        let pole = rng.dir();
        let r = leg.solve(&target, Some(&pole));
        let (a2, b2, c2) = leg.positions();
        assert!(r.reached && r.distance < 1e-4, "{r:?}");
        assert!((c2 - target).norm() < 1e-4);
        assert!((a2 - a).norm() < 1e-6, "the hip does not move");
        assert!(((b2 - a2).norm() - lab).abs() < 1e-4 && ((c2 - b2).norm() - lcb).abs() < 1e-4);
        // The knee lies in the plane of hip, target and pole, on the pole's side.
        let axis = (target - a).normalize();
        let knee = b2 - a2;
        let knee_perp = knee - axis * knee.dot(&axis);
        let pole_perp = pole - axis * pole.dot(&axis);
        if knee_perp.norm() > 1e-3 && pole_perp.norm() > 1e-3 {
            assert!(quat::angle_between(&knee_perp, &pole_perp) < 1e-2, "knee not towards the pole");
        }
    }
}

#[test]
fn without_a_pole_the_bend_plane_is_kept() {
    let mut rng = Rng(5);
    for _ in 0..500 {
        let mut leg = Leg::random(&mut rng);
        let (a, b, c) = leg.positions();
        let normal = (c - a).cross(&(b - a)).normalize();
        // A target in the current bend plane.
        let in_plane = (c - a).normalize();
        let side = normal.cross(&in_plane);
        let dir = (in_plane * rng.range(0.5, 1.0) + side * rng.range(-0.5, 0.5)).normalize();
        let (lab, lcb) = ((b - a).norm(), (c - b).norm());
        let target = a + dir * rng.range((lab - lcb).abs() + 0.02, lab + lcb - 0.02);
        let r = leg.solve(&target, None);
        assert!(r.reached);
        let (a2, b2, _) = leg.positions();
        assert!((b2 - a2).dot(&normal).abs() < 1e-3, "knee left the bend plane");
    }
}

#[test]
fn unreachable_targets_straighten_the_leg_towards_them() {
    let mut rng = Rng(77);
    for _ in 0..500 {
        let mut leg = Leg::random(&mut rng);
        let (a, b, c) = leg.positions();
        let total = (b - a).norm() + (c - b).norm();
        let dir = rng.dir();
        let target = a + dir * total * rng.range(1.01, 5.0);
        let r = leg.solve(&target, Some(&Vec3::z()));
        assert!(!r.reached);
        let (a2, b2, c2) = leg.positions();
        assert!(quat::angle_between(&(b2 - a2), &dir) < 1e-2);
        assert!(quat::angle_between(&(c2 - b2), &dir) < 1e-2);
        assert!(((target - a).norm() - total - r.distance).abs() < 1e-3 * total);
    }
}

#[test]
fn degenerate_inputs_stay_finite_and_bad_ones_are_errors() {
    let mut rng = Rng(3);
    let mut leg = Leg::random(&mut rng);
    let (a, _, _) = leg.positions();
    // Target on the hip: folds as far as the lengths allow, no NaN.
    leg.solve(&a, None);
    assert!(leg.upper.is_finite() && leg.middle.is_finite());
    // Zero-length lower bone.
    leg.end = Vec3::zeros();
    leg.solve(&(a + Vec3::new(0.2, -0.3, 0.1)), Some(&Vec3::z()));
    assert!(leg.upper.is_finite() && leg.middle.is_finite());
    let nan = Vec3::new(f32::NAN, 0.0, 0.0);
    let r = solve_two_bone(&leg.parent, &mut leg.upper, &mut leg.middle, &leg.end, &nan, None);
    assert_eq!(r, Err(IkError::NonFinite { what: "goal" }));
    let r = solve_two_bone(&leg.parent, &mut leg.upper, &mut leg.middle, &leg.end, &a, Some(&nan));
    assert_eq!(r, Err(IkError::NonFinite { what: "pole" }));
}

#[test]
fn pose_level_two_bone_ik() {
    let s = legs();
    let (hip, knee, ankle) = (s.find("hip_r").unwrap(), s.find("knee_r").unwrap(), s.find("ankle_r").unwrap());
    let ik = TwoBoneIk::new(&s, hip, knee, ankle).unwrap();
    let mut pose = s.rest_pose().clone();
    let placement = t(0.0, 0.5, 2.0);
    let target = Vec3::new(0.15, 0.9, 2.3);
    let r = ik.solve(&s, &mut pose, &placement, &target, Some(&Vec3::z())).unwrap();
    assert!(r.reached);
    let got = placement.combine(&pose.global(&s, ankle).unwrap()).translation;
    assert!((got - target).norm() < 1e-4);
    let knee_world = placement.combine(&pose.global(&s, knee).unwrap()).translation;
    let hip_world = placement.combine(&pose.global(&s, hip).unwrap()).translation;
    assert!((knee_world - hip_world).z > 0.0, "knee bends forward, towards the pole");
    assert!(matches!(TwoBoneIk::new(&s, hip, ankle, knee), Err(IkError::NotAChain { .. })));
}

#[test]
fn aim_points_forward_at_the_target_with_up_towards_world_up() {
    let mut rng = Rng(11);
    for _ in 0..1000 {
        let parent = Transform::new(
            Vec3::new(rng.range(-1.0, 1.0), rng.range(-1.0, 1.0), rng.range(-1.0, 1.0)),
            Quat::from_euler_angles(rng.range(-3.0, 3.0), rng.range(-3.0, 3.0), rng.range(-3.0, 3.0)),
            Vec3::repeat(1.0),
        );
        let mut head = Transform::new(Vec3::new(0.0, 0.3, 0.0), Quat::identity(), Vec3::repeat(1.0));
        let forward = Vec3::z();
        let up = Vec3::y();
        let target = rng.dir() * rng.range(0.5, 5.0);
        let world_up = Vec3::y();
        assert!(aim(&parent, &mut head, &target, &forward, &up, &world_up).unwrap());
        let w = parent.combine(&head);
        let f = w.rotation * forward;
        let u = w.rotation * up;
        let to_target = (target - w.translation).normalize();
        assert!((f - to_target).norm() < 1e-4);
        // Up is the world up made orthogonal to the aim direction.
        let expected = world_up - to_target * world_up.dot(&to_target);
        if expected.norm() > 1e-2 {
            assert!((u - expected.normalize()).norm() < 1e-3);
        }
    }
    // Target on the joint: nothing to do.
    let mut j = Transform::IDENTITY;
    assert!(!aim(&Transform::IDENTITY, &mut j, &Vec3::zeros(), &Vec3::z(), &Vec3::y(), &Vec3::y()).unwrap());
    assert!(matches!(
        aim(&Transform::IDENTITY, &mut j, &Vec3::x(), &Vec3::z(), &Vec3::z(), &Vec3::y()),
        Err(IkError::InvalidSetting { .. })
    ));
}

#[test]
fn aim_a_joint_of_a_pose() {
    // The left toe (a child of the ankle) aims its +z axis at a point in the world.
    let s = legs();
    let toe = s.find("toe_l").unwrap();
    let mut pose = s.rest_pose().clone();
    let placement = t(1.0, 0.0, 0.0);
    let target = Vec3::new(3.0, 2.0, -1.0);
    assert!(aim_joint(&s, &mut pose, toe, &placement, &target, &Vec3::z(), &Vec3::y(), &Vec3::y()).unwrap());
    let w = placement.combine(&pose.global(&s, toe).unwrap());
    assert!((w.rotation * Vec3::z() - (target - w.translation).normalize()).norm() < 1e-4);
    assert!(matches!(
        aim_joint(&s, &mut pose, 99, &placement, &target, &Vec3::z(), &Vec3::y(), &Vec3::y()),
        Err(IkError::JointOutOfRange { joint: 99, .. })
    ));
}

/// A straight leg (knee unbent) with bones of different lengths, in a random orientation.
fn straight_leg(rng: &mut Rng, folded: bool) -> Leg {
    let (l1, l2) = loop {
        let (l1, l2) = (rng.range(0.2, 0.7), rng.range(0.2, 0.7));
        if (l1 - l2).abs() > 0.02 {
            break (l1, l2);
        }
    };
    Leg {
        parent: Transform::new(
            Vec3::new(rng.range(-1.0, 1.0), rng.range(0.0, 2.0), rng.range(-1.0, 1.0)),
            Quat::from_euler_angles(rng.range(-3.0, 3.0), rng.range(-3.0, 3.0), rng.range(-3.0, 3.0)),
            Vec3::repeat(1.0),
        ),
        upper: Transform::new(
            Vec3::new(0.1, 0.0, 0.0),
            Quat::from_euler_angles(rng.range(-1.0, 1.0), rng.range(-1.0, 1.0), rng.range(-1.0, 1.0)),
            Vec3::repeat(1.0),
        ),
        middle: Transform::new(Vec3::new(0.0, -l1, 0.0), Quat::identity(), Vec3::repeat(1.0)),
        end: Vec3::new(0.0, if folded { l2 } else { -l2 }, 0.0),
    }
}

/// Straight legs are the degenerate case of the bend plane: every reachable target must be
/// hit, with or without a pole, and the reported distance must be the true one.
#[test]
fn straight_legs_of_unequal_bones_reach_every_reachable_target() {
    let mut rng = Rng(0x5eed_2bb1);
    let mut worst: f32 = 0.0;
    for i in 0..24_000 {
        let mut leg = straight_leg(&mut rng, i % 2 == 1);
        let (a, b, c) = leg.positions();
        let (lab, lcb) = ((b - a).norm(), (c - b).norm());
        let reach = rng.range((lab - lcb).abs() + 1e-3, lab + lcb - 1e-3);
        let target = a + rng.dir() * reach;
        let along = (c - a) * rng.range(0.5, 20.0);
        let pole = match i % 4 {
            0 => None,
            1 => Some(rng.dir()),
            // A pole along the leg gives no side either.
            2 => Some(along),
            // Nor, to working precision, does one a hair off it.
            _ => Some(along + quat::any_orthogonal(&along) * 10f32.powf(rng.range(-7.0, -2.0))),
        };
        let r = leg.solve(&target, pole.as_ref());
        let (_, _, c2) = leg.positions();
        let miss = (c2 - target).norm();
        worst = worst.max(miss);
        assert!((r.distance - miss).abs() < 1e-6, "case {i}: reported {} but missed by {miss}", r.distance);
        assert!(r.reached && miss < 2e-5, "case {i}: {r:?}, missed by {miss}");
    }
    assert!(worst < 1e-4);
}

/// A `world_up` of any length that is parallel (to rounding) to the aim direction must not
/// leak into the frame: the forward axis still hits the target, the frame stays
/// orthonormal, and long or short but clearly tilted `world_up`s give the same result as
/// their unit version.
#[test]
fn aim_is_independent_of_the_length_of_world_up() {
    let mut rng = Rng(909);
    for i in 0..2000 {
        let parent = Transform::new(
            Vec3::new(rng.range(-1.0, 1.0), rng.range(-1.0, 1.0), rng.range(-1.0, 1.0)),
            Quat::from_euler_angles(rng.range(-3.0, 3.0), rng.range(-3.0, 3.0), rng.range(-3.0, 3.0)),
            Vec3::repeat(1.0),
        );
        let start = Transform::new(
            Vec3::new(0.0, 0.3, 0.0),
            Quat::from_euler_angles(rng.range(-3.0, 3.0), rng.range(-3.0, 3.0), rng.range(-3.0, 3.0)),
            Vec3::repeat(1.0),
        );
        let (forward, up) = (Vec3::z() * 3.0, Vec3::new(0.1, 0.02, 0.0));
        let position = parent.transform_point(&start.translation);
        let target = position + rng.dir() * rng.range(0.5, 5.0);
        let aim_dir = (target - position).normalize();
        let length = 10f32.powf(rng.range(-3.0, 4.0));
        // Parallel or antiparallel to the aim direction, with at most rounding off it.
        let sign = if i % 2 == 0 { 1.0 } else { -1.0 };
        let parallel_up = aim_dir * (sign * length);
        let mut head = start;
        assert!(aim(&parent, &mut head, &target, &forward, &up, &parallel_up).unwrap());
        let w = parent.combine(&head);
        let (f, u) = ((w.rotation * forward).normalize(), (w.rotation * up).normalize());
        assert!(
            (f - aim_dir).norm() < 1e-4,
            "case {i}: |world_up| = {length}, forward off by {}",
            (f - aim_dir).norm()
        );
        assert!(f.dot(&u).abs() < 1e-4, "case {i}: frame not orthogonal");
        // A tilted world_up: its length must not matter.
        let tilted = (aim_dir + rng.dir() * 0.5) * length;
        let (mut unit, mut long) = (start, start);
        aim(&parent, &mut unit, &target, &forward, &up, &tilted.normalize()).unwrap();
        aim(&parent, &mut long, &target, &forward, &up, &tilted).unwrap();
        assert!(quat::angle_between(&(unit.rotation * Vec3::y()), &(long.rotation * Vec3::y())) < 1e-3);
        assert!(quat::angle_between(&(unit.rotation * Vec3::z()), &(long.rotation * Vec3::z())) < 1e-3);
    }
    // Axes of any length are accepted, parallel ones of any length are not.
    let mut j = Transform::IDENTITY;
    assert!(
        aim(&Transform::IDENTITY, &mut j, &Vec3::x(), &(Vec3::z() * 1e-4), &(Vec3::y() * 1e-4), &Vec3::y()).unwrap()
    );
    assert!(((j.rotation * Vec3::z()) - Vec3::x()).norm() < 1e-5);
    assert!(matches!(
        aim(&Transform::IDENTITY, &mut j, &Vec3::x(), &(Vec3::z() * 1e4), &(Vec3::z() * 1e-3), &Vec3::y()),
        Err(IkError::InvalidSetting { .. })
    ));
}

/// Targets almost straight behind the ankle (as seen from the hip) need a swing of nearly
/// a half turn, where a one-step half-way quaternion loses the angle to cancellation.
#[test]
fn targets_behind_the_ankle_are_reached() {
    let mut rng = Rng(0xbac4);
    for i in 0..5000 {
        let mut leg = if i % 2 == 0 { Leg::random(&mut rng) } else { straight_leg(&mut rng, false) };
        let (a, b, c) = leg.positions();
        let (lab, lcb) = ((b - a).norm(), (c - b).norm());
        let behind = -(c - a).normalize();
        let off = quat::any_orthogonal(&behind) * 10f32.powf(rng.range(-6.0, -2.0));
        let target = a + (behind + off).normalize() * rng.range((lab - lcb).abs() + 1e-3, lab + lcb - 1e-3);
        let pole = if i % 3 == 0 { None } else { Some(rng.dir()) };
        let r = leg.solve(&target, pole.as_ref());
        let miss = (leg.positions().2 - target).norm();
        assert!(r.reached && miss < 2e-5, "case {i}: {r:?}, missed by {miss}");
        assert!((r.distance - miss).abs() < 1e-6);
    }
}

/// A straight leg bends towards the pole whatever side rounding puts its knee on: the
/// knee nudged by ±1e-7 of the leg's length off the line (below the solver's "straight"
/// threshold), in the pole's plane and across it, gives the same small corrections, the
/// knee ends up in front (the pole's side), and the thigh is not turned half a turn about
/// its axis. (Before the fix, a knee nudged away from the pole bent away, and the pole
/// twist then turned the whole limb by π: the goal was reached with the thigh back to
/// front, which no direction test sees.)
#[test]
fn a_straight_leg_bends_towards_the_pole_whatever_the_rounding() {
    use anim_ik::{TwoBoneJoints, two_bone_corrections};
    let (hip, ankle) = (Vec3::new(0.0, 1.0, 0.0), Vec3::zeros());
    let target = Vec3::new(0.0, 0.1, 0.05);
    let pole = Vec3::new(0.0, 0.0, 1.0);
    let mut corrections = Vec::new();
    for nudge in [Vec3::zeros(), Vec3::z() * 1e-7, -Vec3::z() * 1e-7, Vec3::x() * 1e-7, -Vec3::x() * 1e-7] {
        let joints = TwoBoneJoints {
            upper: hip,
            middle: Vec3::new(0.0, 0.5, 0.0) + nudge,
            end: ankle,
            upper_rotation: Quat::identity(),
            middle_rotation: Quat::identity(),
        };
        let c = two_bone_corrections(&joints, &target, Some(&pole)).expect("finite");
        // World rotations are the identity, so the corrections are the world turns.
        let knee = hip + c.upper * (joints.middle - hip);
        let end = knee + (c.upper * c.middle) * (ankle - joints.middle);
        assert!((end - target).norm() < 1e-4, "{nudge:?}: reached {end:?}");
        assert!(knee.z > 0.1, "{nudge:?}: the knee bends to the pole's side, {knee:?}");
        assert!(c.upper.angle() < 1.0, "{nudge:?}: the thigh turns {} rad", c.upper.angle());
        corrections.push(c);
    }
    for c in &corrections[1..] {
        assert!(c.upper.angle_to(&corrections[0].upper) < 1e-3 && c.middle.angle_to(&corrections[0].middle) < 1e-3);
    }
}
