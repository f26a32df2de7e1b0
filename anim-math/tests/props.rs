//! Property tests: quaternion, dual-quaternion and transform identities on random inputs,
//! with tolerances scaled to the magnitudes involved (f32 rounding grows with them).

use anim_math::{DualQuat, Mat4, Quat, Transform, Vec3, dual, quat};
use nalgebra::{DualQuaternion, Quaternion, Unit};
use proptest::prelude::*;

fn config() -> ProptestConfig {
    ProptestConfig { cases: 256, ..ProptestConfig::default() }
}

fn vec3(range: f32) -> impl Strategy<Value = Vec3> {
    (-range..range, -range..range, -range..range).prop_map(|(x, y, z)| Vec3::new(x, y, z))
}

/// A rotation from a random axis (any non-tiny vector) and an angle in [-π, π].
fn rotation() -> impl Strategy<Value = Quat> {
    (vec3(1.0), -std::f32::consts::PI..std::f32::consts::PI).prop_filter_map("axis too short", |(axis, angle)| {
        Unit::try_new(axis, 1e-2).map(|a| Quat::from_axis_angle(&a, angle))
    })
}

/// Positive scale, uniform or not.
fn scale(uniform: bool) -> impl Strategy<Value = Vec3> {
    (0.1f32..10.0, 0.1f32..10.0, 0.1f32..10.0)
        .prop_map(move |(x, y, z)| if uniform { Vec3::repeat(x) } else { Vec3::new(x, y, z) })
}

fn transform(uniform: bool) -> impl Strategy<Value = Transform> {
    (vec3(100.0), rotation(), scale(uniform)).prop_map(|(t, r, s)| Transform::new(t, r, s))
}

fn rigid() -> impl Strategy<Value = Transform> {
    (vec3(100.0), rotation()).prop_map(|(t, r)| Transform::new(t, r, Vec3::repeat(1.0)))
}

/// `|a − b| ≤ rel · (1 + scale)`: an error bound that grows with the magnitudes involved.
fn close(a: &Vec3, b: &Vec3, scale: f32, rel: f32) -> bool {
    (a - b).norm() <= rel * (1.0 + scale)
}

/// The angle in radians of the rotation between `a` and `b` (q and −q are one rotation):
/// `2·atan2(|v|, |w|)` for `a⁻¹·b = (v, w)`, computed in f64 from the f32 components, so it
/// reads a difference of a few f32 ulps as the few 1e-7 rad it is (`1 − |a·b|` in f32 cannot
/// see less than about 7e-4 rad, and at a tolerance of 1e-5 it admitted 0.5°). Neither
/// quaternion needs unit length: the ratio ignores it.
fn rotation_angle(a: &Quat, b: &Quat) -> f64 {
    let (a, b) = (Quaternion::from(a.coords.cast::<f64>()), Quaternion::from(b.coords.cast::<f64>()));
    let d = a.conjugate() * b;
    2.0 * d.imag().norm().atan2(d.w.abs())
}

/// The same rotation within `max_angle` radians.
fn same_rotation(a: &Quat, b: &Quat, max_angle: f64) -> bool {
    rotation_angle(a, b) <= max_angle
}

/// The angle that f32 rounding leaves between two computations of one rotation by a few
/// quaternion products, normalizations or conversions: each component within a few units
/// of f32 roundoff (u = 2⁻²⁴ ≈ 6e-8) and the angle twice the vector part of `a⁻¹·b`, a
/// handful of u. 1e-6 rad is about 17u; the largest seen in 10⁵ random cases of each
/// property below is 3.1e-7 rad.
const ROUNDING: f64 = 1e-6;

/// How far [`Transform::from_matrix`]'s rotation can be from the one its matrix was made of,
/// for a rotation `angle` radians from the identity. It finds the rotation of the normalized
/// columns with nalgebra's iterative `Rotation3::from_matrix_eps` (from the identity, until a
/// step turns less than 1e-7 rad, at most 32 steps); within 0.1 rad of a half turn the steps
/// shrink slowly and it stops short, by up to 2.2e-4 rad (the largest in 10⁶ random
/// rotations and scales of 0.1 to 10, half of them within 0.1 rad of a half turn), and by at
/// most 1e-6 rad elsewhere (9.8e-7 in the same run).
fn from_matrix_tolerance(angle: f32) -> f64 {
    if std::f32::consts::PI - angle < 0.1 { 5e-4 } else { 3e-6 }
}

fn mat_close(a: &Mat4, b: &Mat4, rel: f32) -> bool {
    let m = a.amax().max(b.amax());
    (a - b).amax() <= rel * (1.0 + m)
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn a_quaternion_times_its_inverse_is_the_identity(q in rotation(), v in vec3(100.0)) {
        let id = q * q.inverse();
        prop_assert!(same_rotation(&id, &Quat::identity(), ROUNDING));
        // Two f32 rotations: a few units in the last place of |v| each way.
        prop_assert!(close(&(q.inverse() * (q * v)), &v, v.norm(), 4e-6));
    }

    #[test]
    fn normalizing_any_scaled_quaternion_gives_the_unit_one(q in rotation(), k in prop_oneof![1e-3f32..1e-1, 1e-1f32..1e3]) {
        let scaled = Quaternion::from(q.coords * k);
        let n = Quat::new_normalize(scaled);
        prop_assert!((n.coords.norm() - 1.0).abs() < 1e-6);
        prop_assert!(same_rotation(&n, &q, ROUNDING));
    }

    #[test]
    fn from_to_turns_one_direction_onto_the_other(a in vec3(10.0), b in vec3(10.0)) {
        prop_assume!(a.norm() > 1e-2 && b.norm() > 1e-2);
        let r = quat::from_to(&a, &b);
        prop_assert!((r.coords.norm() - 1.0).abs() < 1e-5);
        let turned = (r * a).normalize();
        prop_assert!(close(&turned, &b.normalize(), 0.0, 2e-5), "{turned:?} vs {:?}", b.normalize());
    }

    #[test]
    fn from_to_stays_precise_just_short_of_a_half_turn(a in vec3(10.0), e in 1e-5f32..2e-2, k in vec3(1.0)) {
        // `b` is `-a` turned by `e` radians about an axis orthogonal to `a`.
        prop_assume!(a.norm() > 1e-2 && k.cross(&a).norm() > 1e-3);
        let axis = nalgebra::Unit::new_normalize(k.cross(&a));
        let b = Quat::from_axis_angle(&axis, e) * (-a);
        let r = quat::from_to(&a, &b);
        let turned = (r * a).normalize();
        prop_assert!(close(&turned, &b.normalize(), 0.0, 2e-5), "{turned:?} vs {:?}", b.normalize());
        // The shortest arc: the angle is π − e.
        prop_assert!((r.angle() - (std::f32::consts::PI - e)).abs() < 1e-4, "{} vs {}", r.angle(), std::f32::consts::PI - e);
    }

    #[test]
    fn a_dual_quaternion_applies_rotation_then_translation(t in rigid(), p in vec3(100.0)) {
        let q = dual::from_transform(&t);
        let expected = t.rotation * p + t.translation;
        prop_assert!(close(&dual::transform_point(&q, &p), &expected, p.norm() + t.translation.norm(), 1e-6 * 4.0));
        prop_assert!(close(&dual::transform_vector(&q, &p), &(t.rotation * p), p.norm(), 4e-6));
    }

    #[test]
    fn the_dual_quaternion_product_is_transform_composition(a in rigid(), b in rigid(), p in vec3(100.0)) {
        let (qa, qb) = (dual::from_transform(&a), dual::from_transform(&b));
        let both = dual::then(&qa, &qb);
        let expected = b.transform_point(&a.transform_point(&p));
        let size = p.norm() + a.translation.norm() + b.translation.norm();
        prop_assert!(close(&dual::transform_point(&both, &p), &expected, size, 8e-6));
        let composed = dual::to_transform(&both);
        let direct = b.combine(&a);
        prop_assert!(close(&composed.translation, &direct.translation, size, 8e-6));
        prop_assert!(same_rotation(&composed.rotation, &direct.rotation, ROUNDING));
        // The conjugate undoes it.
        let back = dual::then(&both, &dual::conjugate(&both));
        prop_assert!(close(&dual::transform_point(&back, &p), &p, size, 1.6e-5));
    }

    #[test]
    fn transform_to_dual_quaternion_and_back(t in rigid(), s in scale(false)) {
        let back = dual::to_transform(&dual::from_transform(&t));
        prop_assert!(close(&back.translation, &t.translation, t.translation.norm(), 4e-6));
        prop_assert!(same_rotation(&back.rotation, &t.rotation, ROUNDING));
        prop_assert_eq!(back.scale, Vec3::repeat(1.0));
        // From a scaled matrix only the rigid part comes back.
        let scaled = Transform::new(t.translation, t.rotation, s);
        let m = dual::to_transform(&dual::from_rigid_matrix(&scaled.to_matrix()));
        prop_assert!(close(&m.translation, &t.translation, t.translation.norm(), 4e-6));
        prop_assert!(same_rotation(&m.rotation, &t.rotation, ROUNDING));
    }

    #[test]
    fn normalizing_a_dual_quaternion_meets_both_unit_conditions(
        t in rigid(),
        k in 1e-2f32..1e2,
        drift in -1e-2f32..1e-2,
    ) {
        let unit = dual::from_transform(&t);
        let q: &DualQuaternion<f32> = unit.as_ref();
        // Scaled, and with a dual part that leans along the real part (a drifted sum).
        let real = q.real.coords * k;
        let dual_part = q.dual.coords * k + q.real.coords * (drift * k * (1.0 + t.translation.norm()));
        let raw = DualQuaternion::from_real_and_dual(Quaternion::from(real), Quaternion::from(dual_part));
        let n = dual::normalize(&raw);
        prop_assert!((n.as_ref().real.coords.norm() - 1.0).abs() < 1e-5);
        let orth = n.as_ref().real.coords.dot(&n.as_ref().dual.coords);
        prop_assert!(orth.abs() <= 1e-5 * (1.0 + t.translation.norm()), "r·d = {orth}");
        // Removing the drift gives back the transform it was made from.
        let back = dual::to_transform(&n);
        prop_assert!(close(&back.translation, &t.translation, t.translation.norm(), 2e-5));
        prop_assert!(same_rotation(&back.rotation, &t.rotation, ROUNDING));
    }

    #[test]
    fn a_transform_times_its_inverse_is_the_identity(t in transform(true), p in vec3(100.0)) {
        let s = t.scale.x;
        let size = (t.translation.norm() + p.norm()) * s.max(1.0 / s);
        for id in [t.combine(&t.inverse()), t.inverse().combine(&t)] {
            prop_assert!(close(&id.translation, &Vec3::zeros(), size, 1e-5));
            prop_assert!(same_rotation(&id.rotation, &Quat::identity(), ROUNDING));
            prop_assert!(close(&id.scale, &Vec3::repeat(1.0), 0.0, 1e-5));
        }
        prop_assert!(close(&t.inverse().transform_point(&t.transform_point(&p)), &p, size, 1e-5));
        prop_assert!(close(&t.transform_point(&t.inverse().transform_point(&p)), &p, size, 1e-5));
        // The matrix of the inverse is the inverse matrix.
        let m = t.to_matrix() * t.inverse().to_matrix();
        prop_assert!(mat_close(&m, &Mat4::identity(), 1e-5 * (1.0 + size)));
    }

    #[test]
    fn unrotated_non_uniform_scales_invert_exactly(tr in vec3(100.0), s in scale(false), p in vec3(100.0)) {
        let t = Transform::new(tr, Quat::identity(), s);
        let inv_s = s.x.max(s.y).max(s.z) / s.x.min(s.y).min(s.z);
        let size = (tr.norm() + p.norm()) * inv_s * 10.0;
        prop_assert!(close(&t.inverse().transform_point(&t.transform_point(&p)), &p, size, 1e-6));
        prop_assert!(close(&t.transform_point(&t.inverse().transform_point(&p)), &p, size, 1e-6));
    }

    #[test]
    fn matrices_compose_like_transforms(a in transform(true), b in transform(false), p in vec3(10.0)) {
        // combine is exact when the parent's scale is uniform.
        let m = a.to_matrix() * b.to_matrix();
        prop_assert!(mat_close(&a.combine(&b).to_matrix(), &m, 1e-5));
        let via_matrix = (m * p.push(1.0)).xyz();
        let size = via_matrix.norm() + a.translation.norm() + b.translation.norm() * a.scale.x;
        prop_assert!(close(&a.combine(&b).transform_point(&p), &via_matrix, size, 1e-5));
        // And a matrix comes back as the transform it was made from.
        let back = Transform::from_matrix(&b.to_matrix());
        prop_assert!(close(&back.translation, &b.translation, b.translation.norm(), 1e-5));
        prop_assert!(close(&back.scale, &b.scale, b.scale.norm(), 1e-5));
        let tolerance = from_matrix_tolerance(b.rotation.angle());
        prop_assert!(
            same_rotation(&back.rotation, &b.rotation, tolerance),
            "{} rad apart, tolerance {tolerance}", rotation_angle(&back.rotation, &b.rotation)
        );
    }
}

/// The identity dual quaternion moves nothing, exactly.
#[test]
fn the_identity_dual_quaternion_moves_nothing() {
    let p = Vec3::new(1.0, -2.0, 3.0);
    assert_eq!(dual::transform_point(&DualQuat::identity(), &p), p);
}
