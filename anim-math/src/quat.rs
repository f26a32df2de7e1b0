//! Quaternion helpers from the book: shortest-arc rotation between two directions,
//! neighbourhood-correct normalized lerp, and the angle between two directions.

use crate::types::{EPSILON, Quat, Vec3};
use nalgebra::{Quaternion, Unit};

/// The shortest rotation that turns direction `from` into direction `to`.
///
/// Neither input needs to be unit length. Parallel directions give the identity;
/// exactly anti-parallel directions give a half turn about an axis orthogonal to `from`,
/// and directions just short of that keep their own axis (no snapping to a half turn). A
/// zero-length or non-finite input gives the identity. Precise down to tiny angles (an
/// iterative IK solver relies on that to close the last millimetre).
#[inline]
#[must_use]
pub fn from_to(from: &Vec3, to: &Vec3) -> Quat {
    let (lf2, lt2) = (from.norm_squared(), to.norm_squared());
    if lf2 < 1e-24 || lt2 < 1e-24 || !(lf2.is_finite() && lt2.is_finite()) {
        return Quat::identity();
    }
    // Half-way construction: (|f||t| + f·t, f × t) is the half-way quaternion scaled by
    // 2|f||t|cos(θ/2), so the inputs need no normalization and tiny angles survive in the
    // cross product.
    let m = (lf2 * lt2).sqrt();
    let d = from.dot(to);
    let mut c = from.cross(to);
    if d < 0.0 {
        // Near a half turn `f × t` is small and its rounding error is not: any part of it
        // along `f` would turn `f` off the plane it must stay in. Keep it orthogonal to `f`.
        c -= from * (c.dot(from) / lf2);
    }
    let c2 = c.norm_squared();
    // Past a quarter turn `m + d` cancels. Lagrange's identity (|f|²|t|² = (f·t)² + |f×t|²)
    // gives it without cancellation as |f×t|² / (m − d), so angles just short of a half
    // turn keep their axis and their precision.
    let w = if d >= 0.0 { m + d } else { c2 / (m - d) };
    if c2 == 0.0 && d < 0.0 {
        // Exactly opposite: every axis orthogonal to `from` is a shortest one.
        let axis = any_orthogonal(from);
        return Quat::from_axis_angle(&Unit::new_unchecked(axis), std::f32::consts::PI);
    }
    let inv = 1.0 / (w * w + c2).sqrt();
    if !inv.is_finite() {
        return Quat::identity();
    }
    Quat::new_unchecked(Quaternion::new(w * inv, c.x * inv, c.y * inv, c.z * inv))
}

/// A unit vector orthogonal to `v` (which must be non-zero).
#[inline]
#[must_use]
pub fn any_orthogonal(v: &Vec3) -> Vec3 {
    let a = v.abs();
    let other = if a.x <= a.y && a.x <= a.z {
        Vec3::x()
    } else if a.y <= a.z {
        Vec3::y()
    } else {
        Vec3::z()
    };
    v.cross(&other).normalize()
}

/// Normalized lerp that takes the short way: `b` is negated when it lies in the other
/// hemisphere from `a` (negative dot product), so the result never spins the long way
/// round. `t = 0` gives `a`, `t = 1` gives `b` (up to sign).
#[inline]
#[must_use]
pub fn nlerp(a: &Quat, b: &Quat, t: f32) -> Quat {
    let (qa, mut qb) = (a.as_ref().coords, b.as_ref().coords);
    if qa.dot(&qb) < 0.0 {
        qb = -qb;
    }
    let v = qa + (qb - qa) * t;
    let n = v.norm();
    if n < EPSILON {
        return *a;
    }
    Quat::new_unchecked(Quaternion::from(v / n))
}

/// Angle in radians (in `[0, π]`) between two directions; zero if either is zero.
#[inline]
#[must_use]
pub fn angle_between(a: &Vec3, b: &Vec3) -> f32 {
    let d = a.norm() * b.norm();
    if d < EPSILON {
        return 0.0;
    }
    (a.dot(b) / d).clamp(-1.0, 1.0).acos()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn from_to_maps_direction() {
        let a = Vec3::new(1.0, 2.0, 3.0);
        let b = Vec3::new(-3.0, 0.5, 1.0);
        let q = from_to(&a, &b);
        assert!((q * a.normalize() - b.normalize()).norm() < 1e-6);
    }

    #[test]
    fn from_to_parallel_and_antiparallel() {
        let a = Vec3::new(0.0, 1.0, 0.0);
        assert!(from_to(&a, &(a * 3.0)).angle() < 1e-6);
        let q = from_to(&a, &-a);
        assert!((q * a + a).norm() < 1e-6);
        assert!((q.angle() - std::f32::consts::PI).abs() < 1e-5);
        assert_eq!(from_to(&Vec3::zeros(), &a), Quat::identity());
    }

    #[test]
    fn nlerp_takes_short_path() {
        let a = Quat::from_axis_angle(&Vec3::z_axis(), 0.2);
        let b = Quat::from_axis_angle(&Vec3::z_axis(), 0.6);
        let neg_b = Quat::new_unchecked(-b.into_inner());
        let m1 = nlerp(&a, &b, 0.5);
        let m2 = nlerp(&a, &neg_b, 0.5);
        assert!(m1.angle_to(&m2) < 1e-6);
        assert!((m1.angle() - 0.4).abs() < 1e-4);
    }

    #[test]
    fn from_to_keeps_tiny_angles() {
        let a = Vec3::new(1.0, 0.0, 0.0);
        let b = Vec3::new(1.0, 1e-5, 0.0);
        let q = from_to(&a, &b);
        assert!((q.angle() - 1e-5).abs() < 1e-7, "{}", q.angle());
    }

    #[test]
    fn angle_between_right_angle() {
        let a = angle_between(&Vec3::x(), &Vec3::new(0.0, 5.0, 0.0));
        assert!((a - std::f32::consts::FRAC_PI_2).abs() < 1e-6);
        assert_eq!(angle_between(&Vec3::zeros(), &Vec3::x()), 0.0);
    }
}
