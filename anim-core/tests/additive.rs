//! Additive layers: identity, the quaternion order against rotation matrices, weights.

use anim_core::blend::additive::{add, add_in_place, add_transform, make_additive_base, make_additive_base_at};
use anim_core::clip::{Clip, Interpolation, JointTracks, Track};
use anim_core::pose::{JointDesc, Pose, Skeleton};
use anim_math::{Quat, Transform, Vec3};

fn skeleton() -> Skeleton {
    let t = |y: f32| Transform::from_translation(Vec3::new(0.0, y, 0.0));
    Skeleton::new(vec![
        JointDesc::new("root", None, t(0.0)),
        JointDesc::new("spine", Some(0), t(1.0)),
        JointDesc::new("chest", Some(1), t(1.0)),
        JointDesc::new("leg", Some(0), t(-1.0)),
    ])
    .unwrap()
}

fn pose(seed: f32) -> Pose {
    Pose::from_locals(
        (0..4)
            .map(|i| {
                let f = seed + i as f32;
                Transform::new(
                    Vec3::new(f.sin(), f.cos(), 0.1 * f),
                    Quat::from_euler_angles(0.4 * f, 0.3 - 0.2 * f, 0.7 * f.sin()),
                    Vec3::new(1.0 + 0.1 * f, 1.0, 0.9),
                )
            })
            .collect(),
    )
}

#[test]
fn additive_equal_to_base_is_identity() {
    let s = skeleton();
    let input = pose(0.3);
    let base = pose(5.0);
    let mut out = Pose::identity(4);
    add(&mut out, &input, &base, &base, None, &s).unwrap();
    for (o, i) in out.locals().iter().zip(input.locals()) {
        assert!((o.translation - i.translation).norm() < 1e-6);
        assert!((o.scale - i.scale).norm() < 1e-6);
        assert!(o.rotation.angle_to(&i.rotation) < 1e-5);
    }
}

#[test]
fn rotation_order_matches_matrices_built_independently() {
    // The book's `in * (inverse(base) * add)` with its left-to-right quaternion product is,
    // as rotation matrices acting on column vectors, R_add · R_base⁻¹ · R_in.
    let input = Transform::from_rotation(Quat::from_axis_angle(&Vec3::x_axis(), 0.9));
    let base = Transform::from_rotation(Quat::from_axis_angle(&Vec3::y_axis(), 0.4));
    let additive = Transform::from_rotation(Quat::from_axis_angle(&Vec3::z_axis(), 1.1));
    let m = |t: &Transform| t.rotation.to_rotation_matrix().into_inner();
    let expected = m(&additive) * m(&base).transpose() * m(&input);
    let got = m(&add_transform(&input, &additive, &base));
    assert!((got - expected).abs().max() < 1e-5);
    // And it is not the other (Hamilton-literal) order: these rotations do not commute.
    let other = m(&input) * m(&base).transpose() * m(&additive);
    assert!((got - other).abs().max() > 0.1);
    // Hand-checked point: base = identity, add = +90° about z, in = +90° about x.
    // x-axis: in leaves it, add turns it to +y.
    let r = add_transform(
        &Transform::from_rotation(Quat::from_axis_angle(&Vec3::x_axis(), std::f32::consts::FRAC_PI_2)),
        &Transform::from_rotation(Quat::from_axis_angle(&Vec3::z_axis(), std::f32::consts::FRAC_PI_2)),
        &Transform::IDENTITY,
    );
    assert!((r.rotation * Vec3::x() - Vec3::y()).norm() < 1e-6);
    // y-axis: in turns it to +z, add (about z) leaves +z.
    assert!((r.rotation * Vec3::y() - Vec3::z()).norm() < 1e-6);
}

#[test]
fn translation_and_scale_add_deltas_and_root_limits_joints() {
    let s = skeleton();
    let input = pose(1.0);
    let base = pose(2.0);
    let additive = pose(4.0);
    let sentinel = pose(9.0);
    let mut out = sentinel.clone();
    let spine = s.find("spine").unwrap();
    add(&mut out, &input, &additive, &base, Some(spine), &s).unwrap();
    for i in 0..4 {
        if s.is_in_hierarchy(spine, i) {
            let e = input.locals()[i].translation + additive.locals()[i].translation - base.locals()[i].translation;
            assert!((out.locals()[i].translation - e).norm() < 1e-6);
            let e = input.locals()[i].scale + additive.locals()[i].scale - base.locals()[i].scale;
            assert!((out.locals()[i].scale - e).norm() < 1e-6);
        } else {
            assert_eq!(out.locals()[i], sentinel.locals()[i]);
        }
    }
    // Weighted in-place: weight 0 is the input, weight 1 is `add`, 0.5 is half the translation delta.
    let mut p = input.clone();
    add_in_place(&mut p, &additive, &base, 0.0, None, &s).unwrap();
    for (a, b) in p.locals().iter().zip(input.locals()) {
        assert!((a.translation - b.translation).norm() < 1e-6 && a.rotation.angle_to(&b.rotation) < 1e-5);
    }
    let mut full = Pose::identity(4);
    add(&mut full, &input, &additive, &base, None, &s).unwrap();
    let mut p = input.clone();
    add_in_place(&mut p, &additive, &base, 1.0, None, &s).unwrap();
    for (a, b) in p.locals().iter().zip(full.locals()) {
        assert!(a.rotation.angle_to(&b.rotation) < 1e-5 && (a.translation - b.translation).norm() < 1e-6);
    }
    let mut p = input.clone();
    add_in_place(&mut p, &additive, &base, 0.5, None, &s).unwrap();
    let e = input.locals()[2].translation + 0.5 * (additive.locals()[2].translation - base.locals()[2].translation);
    assert!((p.locals()[2].translation - e).norm() < 1e-6);
}

#[test]
fn additive_base_samples_clip_start() {
    let s = skeleton();
    let mut jt = JointTracks::new(1);
    jt.translation = Some(
        Track::new(Interpolation::Linear, vec![0.5, 1.5], vec![Vec3::new(2.0, 0.0, 0.0), Vec3::new(4.0, 0.0, 0.0)])
            .unwrap(),
    );
    let clip = Clip::new("lean", vec![jt], vec![]).unwrap();
    let base = make_additive_base(&s, &clip).unwrap();
    assert_eq!(base.locals()[1].translation, Vec3::new(2.0, 0.0, 0.0));
    // Joints the clip does not animate keep the rest pose.
    assert_eq!(base.locals()[2], s.rest_pose().locals()[2]);
    let mid = make_additive_base_at(&s, &clip, 1.0).unwrap();
    assert!((mid.locals()[1].translation.x - 3.0).abs() < 1e-6);
    // Sampling the additive clip at its start and adding it changes nothing.
    let input = pose(0.0);
    let mut out = input.clone();
    add(&mut out, &input, &base, &base, None, &s).unwrap();
    assert!((out.locals()[1].translation - input.locals()[1].translation).norm() < 1e-6);
}
