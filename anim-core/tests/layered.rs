//! The N-layer blend against hand-computed two-joint cases.

use anim_core::blend::blend;
use anim_core::blend::layered::{AdditiveLayer, Layer, blend_layers};
use anim_core::pose::{JointDesc, Pose, Skeleton};
use anim_math::{Quat, Transform, Vec3};

fn skeleton() -> Skeleton {
    let rest = Transform::from_translation(Vec3::new(0.0, 10.0, 0.0));
    Skeleton::new(vec![JointDesc::new("hips", None, rest), JointDesc::new("chest", Some(0), rest)]).unwrap()
}

fn pose(x0: f32, x1: f32, angle: f32) -> Pose {
    let r = Quat::from_axis_angle(&Vec3::z_axis(), angle);
    Pose::from_locals(vec![
        Transform::new(Vec3::new(x0, 0.0, 0.0), r, Vec3::new(1.0, 1.0, 1.0)),
        Transform::new(Vec3::new(x1, 0.0, 0.0), r, Vec3::new(2.0, 2.0, 2.0)),
    ])
}

fn near(a: Vec3, b: Vec3) -> bool {
    (a - b).norm() < 1e-5
}

#[test]
fn weighted_sum_with_masks() {
    let s = skeleton();
    let (a, b, c) = (pose(1.0, 2.0, 0.0), pose(3.0, 6.0, 0.0), pose(9.0, 9.0, 0.0));
    let mask_c = [0.0, 0.5];
    let mut out = s.rest_pose().clone();
    blend_layers(
        &mut out,
        &s,
        &[Layer::new(&a, 1.0), Layer::new(&b, 3.0), Layer::new(&c, 2.0).with_mask(&mask_c)],
        &[],
        0.1,
    )
    .unwrap();
    // Joint 0: (1·1 + 3·3) / 4 = 2.5 (c masked out).
    assert!(near(out.locals()[0].translation, Vec3::new(2.5, 0.0, 0.0)));
    // Joint 1: weights 1, 3, 2·0.5 = 1: (2 + 18 + 9) / 5 = 5.8.
    assert!(near(out.locals()[1].translation, Vec3::new(5.8, 0.0, 0.0)));
    assert!(near(out.locals()[1].scale, Vec3::new(2.0, 2.0, 2.0)));
}

#[test]
fn rotations_are_hemisphere_aligned() {
    let s = skeleton();
    let a = pose(0.0, 0.0, 0.4);
    let mut b = pose(0.0, 0.0, 1.2);
    // The same rotation with the opposite sign must blend as itself.
    for t in b.locals_mut() {
        t.rotation = Quat::new_unchecked(-t.rotation.into_inner());
    }
    let mut out = s.rest_pose().clone();
    blend_layers(&mut out, &s, &[Layer::new(&a, 1.0), Layer::new(&b, 1.0)], &[], 0.1).unwrap();
    // Equal weights of 0.4 rad and 1.2 rad about one axis: the normalized sum is 0.8 rad.
    let angle = out.locals()[0].rotation.angle();
    assert!((angle - 0.8).abs() < 1e-5, "{angle}");
}

#[test]
fn threshold_blends_rest_pose_in() {
    let s = skeleton();
    let a = pose(4.0, 4.0, 0.0);
    let mask = [1.0, 0.0];
    let mut out = s.rest_pose().clone();
    // Total weight 0.25 < 1: the rest pose gets the missing 0.75.
    blend_layers(&mut out, &s, &[Layer::new(&a, 0.25).with_mask(&mask)], &[], 1.0).unwrap();
    // Joint 0: (0.25·(4,0,0) + 0.75·(0,10,0)) / 1.
    assert!(near(out.locals()[0].translation, Vec3::new(1.0, 7.5, 0.0)));
    // Joint 1: no layer: the rest transform.
    assert!(near(out.locals()[1].translation, Vec3::new(0.0, 10.0, 0.0)));
    // Above the threshold the rest pose plays no part.
    blend_layers(&mut out, &s, &[Layer::new(&a, 0.25)], &[], 0.1).unwrap();
    assert!(near(out.locals()[0].translation, Vec3::new(4.0, 0.0, 0.0)));
}

#[test]
fn two_layers_equal_the_two_pose_blend() {
    let s = skeleton();
    let a = pose(1.0, -2.0, 0.3);
    let b = pose(5.0, 7.0, 2.9);
    let mut expected = s.rest_pose().clone();
    let mut out = s.rest_pose().clone();
    for t in [0.0, 0.2, 0.5, 0.9, 1.0] {
        blend(&mut expected, &a, &b, t, None, &s).unwrap();
        blend_layers(&mut out, &s, &[Layer::new(&a, 1.0 - t), Layer::new(&b, t)], &[], 0.01).unwrap();
        for (x, y) in expected.locals().iter().zip(out.locals()) {
            assert!(near(x.translation, y.translation) && near(x.scale, y.scale), "t {t}");
            assert!(x.rotation.angle_to(&y.rotation) < 1e-5, "t {t}");
        }
    }
}

#[test]
fn additive_layer_on_top_with_mask() {
    let s = skeleton();
    let a = pose(1.0, 1.0, 0.0);
    let base = pose(0.0, 0.0, 0.0);
    let add = pose(2.0, 2.0, 0.5);
    let mask = [0.0, 1.0];
    let mut out = s.rest_pose().clone();
    blend_layers(&mut out, &s, &[Layer::new(&a, 1.0)], &[AdditiveLayer::new(&add, &base, 0.5).with_mask(&mask)], 0.1)
        .unwrap();
    assert!(near(out.locals()[0].translation, Vec3::new(1.0, 0.0, 0.0)));
    assert!(near(out.locals()[1].translation, Vec3::new(2.0, 0.0, 0.0)));
    assert!((out.locals()[1].rotation.angle() - 0.25).abs() < 1e-4);
}

#[test]
fn errors() {
    let s = skeleton();
    let a = pose(0.0, 0.0, 0.0);
    let short = Pose::identity(1);
    let mut out = s.rest_pose().clone();
    assert!(blend_layers(&mut out, &s, &[Layer::new(&short, 1.0)], &[], 0.1).is_err());
    let bad_mask = [f32::NAN, 1.0];
    assert!(blend_layers(&mut out, &s, &[Layer::new(&a, 1.0).with_mask(&bad_mask)], &[], 0.1).is_err());
    assert!(blend_layers(&mut out, &s, &[Layer::new(&a, f32::INFINITY)], &[], 0.1).is_err());
}

/// Deterministic poses for `n` joints: rotations anywhere (opposite hemispheres
/// included), translations and scales in a unit box.
fn random_pose(n: usize, seed: &mut u32) -> Pose {
    let mut next = || {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 17;
        *seed ^= *seed << 5;
        (*seed >> 8) as f32 / (1u32 << 24) as f32 * 2.0 - 1.0
    };
    Pose::from_locals(
        (0..n)
            .map(|_| {
                let axis = anim_math::nalgebra::Unit::new_normalize(Vec3::new(next(), next(), next() + 1.5));
                let r = Quat::from_axis_angle(&axis, next() * 6.0);
                Transform::new(
                    Vec3::new(next(), next(), next()),
                    r,
                    Vec3::new(1.5 + next(), 1.5 + next(), 1.5 + next()),
                )
            })
            .collect(),
    )
}

/// The two-layer specialization against the general accumulation (forced by a third
/// layer of weight 0, which contributes nothing): equal within 1e-6 for any positive
/// weights, and equal to `blend_two` / `blend_two_into` (one `Transform::mix` a joint).
#[test]
fn two_layer_fast_path_equals_general_job() {
    let joints: Vec<_> =
        (0..40usize).map(|j| JointDesc::new(format!("j{j}"), j.checked_sub(1), Transform::IDENTITY)).collect();
    let s = Skeleton::new(joints).unwrap();
    let mut seed = 77;
    let zero = s.rest_pose().clone();
    for round in 0..50 {
        let a = random_pose(40, &mut seed);
        let b = random_pose(40, &mut seed);
        let (w0, w1) = ([0.3, 1.0, 0.01, 2.5, 0.999][round % 5], [0.7, 1e-3, 0.99, 4.0, 1.0][round % 5]);
        let mut fast = s.rest_pose().clone();
        let mut general = s.rest_pose().clone();
        blend_layers(&mut fast, &s, &[Layer::new(&a, w0), Layer::new(&b, w1)], &[], 0.1).unwrap();
        blend_layers(&mut general, &s, &[Layer::new(&a, w0), Layer::new(&b, w1), Layer::new(&zero, 0.0)], &[], 0.1)
            .unwrap();
        let t = w1 / (w0 + w1);
        let mut two = s.rest_pose().clone();
        anim_core::blend::layered::blend_two(&mut two, &a, &b, t, &s).unwrap();
        let mut into = a.clone();
        anim_core::blend::layered::blend_two_into(&mut into, &b, t, &s).unwrap();
        assert_eq!(two, fast, "round {round}");
        assert_eq!(into, fast, "round {round}");
        for (x, y) in fast.locals().iter().zip(general.locals()) {
            assert!((x.translation - y.translation).amax() < 1e-6, "round {round}: {x:?} {y:?}");
            assert!((x.scale - y.scale).amax() < 1e-6, "round {round}");
            assert!((x.rotation.coords - y.rotation.coords).amax() < 1e-6, "round {round}: {x:?} {y:?}");
        }
    }
    let mut out = s.rest_pose().clone();
    assert!(matches!(
        anim_core::blend::layered::blend_two(&mut out, &zero, &zero, 1.5, &s),
        Err(anim_core::blend::mix::BlendError::WeightOutOfRange { .. })
    ));
}
