//! Pose blending, masks and errors.

use anim_core::LengthMismatch;
use anim_core::blend::{BlendError, blend, blend_into, blend_masked, subtree_mask};
use anim_core::pose::{JointDesc, Pose, Skeleton};
use anim_math::{Quat, Transform, Vec3};

/// root ─ spine ─ head, root ─ leg ─ foot (source order scrambled on purpose).
fn skeleton() -> Skeleton {
    let t = |y: f32| Transform::from_translation(Vec3::new(0.0, y, 0.0));
    Skeleton::new(vec![
        JointDesc::new("leg", Some(4), t(-1.0)),
        JointDesc::new("head", Some(2), t(0.5)),
        JointDesc::new("spine", Some(4), t(1.0)),
        JointDesc::new("foot", Some(0), t(-1.0)),
        JointDesc::new("root", None, t(1.0)),
    ])
    .unwrap()
}

fn pose(seed: f32, n: usize) -> Pose {
    Pose::from_locals(
        (0..n)
            .map(|i| {
                let f = seed + i as f32;
                Transform::new(
                    Vec3::new(f.sin(), f.cos() * 2.0, 0.3 * f),
                    Quat::from_euler_angles(0.3 * f, -0.2 * f, 0.1 + 0.05 * f),
                    Vec3::new(1.0 + 0.1 * f, 1.0, 0.5 + 0.2 * f),
                )
            })
            .collect(),
    )
}

fn close(a: &Transform, b: &Transform, eps: f32) -> bool {
    (a.translation - b.translation).norm() <= eps
        && a.rotation.angle_to(&b.rotation) <= eps
        && (a.scale - b.scale).norm() <= eps
}

#[test]
fn endpoints_give_a_and_b() {
    let s = skeleton();
    let (a, b) = (pose(0.0, 5), pose(3.0, 5));
    let mut out = Pose::identity(5);
    blend(&mut out, &a, &b, 0.0, None, &s).unwrap();
    for (o, x) in out.locals().iter().zip(a.locals()) {
        assert!(close(o, x, 1e-6));
    }
    blend(&mut out, &a, &b, 1.0, None, &s).unwrap();
    for (o, x) in out.locals().iter().zip(b.locals()) {
        assert!(close(o, x, 1e-5));
    }
}

#[test]
fn midpoint_matches_hand_computed_values() {
    let s = skeleton();
    let mut a = Pose::identity(5);
    let mut b = Pose::identity(5);
    b.locals_mut()[2] = Transform::new(
        Vec3::new(4.0, -2.0, 0.0),
        Quat::from_axis_angle(&Vec3::x_axis(), 1.2),
        Vec3::new(3.0, 1.0, 1.0),
    );
    // The same rotation in the other hemisphere must still blend the short way.
    a.locals_mut()[1].rotation = Quat::new_unchecked(-Quat::from_axis_angle(&Vec3::y_axis(), 0.4).into_inner());
    b.locals_mut()[1].rotation = Quat::from_axis_angle(&Vec3::y_axis(), 0.8);
    let mut out = Pose::identity(5);
    blend(&mut out, &a, &b, 0.25, None, &s).unwrap();
    let o = out.locals()[2];
    assert!((o.translation - Vec3::new(1.0, -0.5, 0.0)).norm() < 1e-6);
    assert!((o.scale - Vec3::new(1.5, 1.0, 1.0)).norm() < 1e-6);
    // nlerp of identity and a 1.2 rad turn at t: angle = 2·atan(t·sin(0.6) / (1 − t + t·cos(0.6))).
    let t = 0.25f32;
    let expected = 2.0 * (t * 0.6f32.sin()).atan2(1.0 - t + t * 0.6f32.cos());
    assert!((o.rotation.angle() - expected).abs() < 1e-5, "{} vs {expected}", o.rotation.angle());
    assert!((o.rotation.axis().unwrap().into_inner() - Vec3::x()).norm() < 1e-5);
    // Short way: between 0.4 and 0.8 rad about y, never through 2π.
    let r = out.locals()[1].rotation;
    assert!(r.angle() > 0.4 && r.angle() < 0.8, "{}", r.angle());
}

#[test]
fn subtree_blend_leaves_other_joints_untouched() {
    let s = skeleton();
    let spine = s.find("spine").unwrap();
    let (a, b) = (pose(0.0, 5), pose(7.0, 5));
    let sentinel = pose(20.0, 5);
    let mut out = sentinel.clone();
    blend(&mut out, &a, &b, 1.0, Some(spine), &s).unwrap();
    for i in 0..5 {
        let name = s.name(i).unwrap();
        if name == "spine" || name == "head" {
            assert!(close(&out.locals()[i], &b.locals()[i], 1e-5), "{name} blended");
        } else {
            assert_eq!(out.locals()[i], sentinel.locals()[i], "{name} untouched");
        }
    }
    // In place, the same subtree rule.
    let mut p = a.clone();
    blend_into(&mut p, &b, 1.0, Some(spine), &s).unwrap();
    assert_eq!(p.locals()[s.find("foot").unwrap()], a.locals()[s.find("foot").unwrap()]);
    assert!(close(&p.locals()[s.find("head").unwrap()], &b.locals()[s.find("head").unwrap()], 1e-5));
}

#[test]
fn masked_blend_scales_weight_per_joint() {
    let s = skeleton();
    let (a, b) = (pose(0.0, 5), pose(2.0, 5));
    let mut mask = vec![0.0; 5];
    subtree_mask(&mut mask, s.find("leg").unwrap(), 0.5, &s).unwrap();
    assert_eq!(mask.iter().filter(|&&w| w == 0.5).count(), 2);
    let mut out = Pose::identity(5);
    blend_masked(&mut out, &a, &b, 0.8, &mask, None, &s).unwrap();
    let mut expected = Pose::identity(5);
    for (i, w) in mask.iter().enumerate() {
        expected.locals_mut()[i] = Transform::mix(&a.locals()[i], &b.locals()[i], 0.8 * w);
    }
    assert_eq!(out, expected);
    assert_eq!(out.locals()[s.find("head").unwrap()], a.locals()[s.find("head").unwrap()]);
}

#[test]
fn errors_name_the_argument() {
    let s = skeleton();
    let (a, b) = (pose(0.0, 5), pose(2.0, 4));
    let mut out = Pose::identity(5);
    assert_eq!(
        blend(&mut out, &a, &b, 0.5, None, &s),
        Err(BlendError::WrongLength(LengthMismatch { what: "pose b", got: 4, expected: 5 }))
    );
    let b = pose(1.0, 5);
    assert_eq!(blend(&mut out, &a, &b, 0.5, Some(9), &s), Err(BlendError::RootOutOfRange { root: 9, count: 5 }));
    assert!(matches!(blend(&mut out, &a, &b, f32::NAN, None, &s), Err(BlendError::NonFiniteWeight { .. })));
    let mask = [1.0, 1.0, f32::INFINITY, 1.0, 1.0];
    assert!(matches!(
        blend_masked(&mut out, &a, &b, 0.5, &mask, None, &s),
        Err(BlendError::NonFiniteWeight { what: "mask weight", .. })
    ));
    // A failed call leaves the output as it was.
    assert_eq!(out, Pose::identity(5));
}
