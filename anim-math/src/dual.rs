//! Dual quaternions for skinning (the book's chapter 14), on nalgebra's
//! [`DualQuaternion`] and [`UnitDualQuaternion`](nalgebra::UnitDualQuaternion).
//!
//! A unit dual quaternion `q = r + ε d` holds a rotation `r` (the real part) and a
//! translation `t` in its dual part, `d = ½ · t · r`. It cannot hold scale: converting a
//! [`Transform`] drops its scale.
//!
//! **Multiplication order.** nalgebra follows the matrix convention: `a * b` applies `b`
//! first, then `a`, like `A · B` on column vectors. The book's `operator*` multiplies the
//! other way round (its `a * b` applies `a` first, then `b`). So the book's `a * b` is
//! nalgebra's `b * a`; [`then`] spells the book's order out by name. A joint's global dual
//! quaternion is therefore `parent_global * local` here, as with matrices.

use crate::transform::Transform;
use crate::types::{DualQuat, EPSILON, Mat3, Mat4, Quat, Vec3};
use nalgebra::{DualQuaternion, Quaternion, Rotation3, Unit};

/// The unit dual quaternion of `rotation` followed by `translation`: real part `r`, dual
/// part `d = (½·t)·r`. Equal to nalgebra's `UnitDualQuaternion::from_parts` bit for bit
/// (halving is exact), but overflow-safe: nalgebra forms `t·r` before halving, whose
/// components overflow for a finite translation near `f32::MAX`; halving first bounds every
/// component of `d`, a sum of three products of `½·tᵢ` with components of the unit `r`, by
/// `½·√3·max|tᵢ| < f32::MAX`: finite for any finite translation.
#[inline]
#[must_use]
pub fn from_parts(translation: &Vec3, rotation: &Quat) -> DualQuat {
    let half = Quaternion::from_parts(0.0, translation * 0.5);
    Unit::new_unchecked(DualQuaternion::from_real_and_dual(rotation.into_inner(), half * rotation.into_inner()))
}

/// The rigid part of `t` (rotation and translation) as a unit dual quaternion. The scale of
/// `t` is dropped: dual quaternions cannot represent it.
#[inline]
#[must_use]
pub fn from_transform(t: &Transform) -> DualQuat {
    from_parts(&t.translation, &t.rotation)
}

/// The rigid part of an affine matrix as a unit dual quaternion: the basis columns are
/// normalized (removing scale), the rotation is read from them, and the translation is the
/// last column. Shear and reflection cannot be represented and give an approximate result;
/// the rotation is always of unit length.
#[inline]
#[must_use]
pub fn from_rigid_matrix(m: &Mat4) -> DualQuat {
    let c0 = m.fixed_view::<3, 1>(0, 0).into_owned();
    let c1 = m.fixed_view::<3, 1>(0, 1).into_owned();
    let c2 = m.fixed_view::<3, 1>(0, 2).into_owned();
    let norm = |v: Vec3| {
        let n = v.norm();
        if n > EPSILON && n <= f32::MAX {
            v / n
        } else if n > EPSILON {
            // The squared length overflowed (components beyond about 1e19): the direction
            // of the column scaled down by 2^-100 is the same and computable.
            let v = v * (1.0 / (1u128 << 100) as f32);
            v / v.norm()
        } else {
            v
        }
    };
    let basis = Mat3::from_columns(&[norm(c0), norm(c1), norm(c2)]);
    // Under shear the normalized basis is not orthogonal and the quaternion read from it
    // is not of unit length; renormalizing makes it the rotation it is then used as. A
    // rotation's quaternion is unit to rounding already, and is left as it is.
    let q = Quat::from_rotation_matrix(&Rotation3::from_matrix_unchecked(basis)).into_inner();
    let rotation =
        if (q.norm_squared() - 1.0).abs() > EPSILON { Quat::new_normalize(q) } else { Quat::new_unchecked(q) };
    let translation = Vec3::new(m[(0, 3)], m[(1, 3)], m[(2, 3)]);
    from_parts(&translation, &rotation)
}

/// The transform a unit dual quaternion represents; its scale is one.
#[inline]
#[must_use]
pub fn to_transform(q: &DualQuat) -> Transform {
    Transform::new(q.translation().vector, q.rotation(), Vec3::new(1.0, 1.0, 1.0))
}

/// The book's multiplication order: apply `first`, then `second`. Equals nalgebra's
/// `second * first`.
#[inline]
#[must_use]
pub fn then(first: &DualQuat, second: &DualQuat) -> DualQuat {
    second * first
}

/// The dot product of the real parts, which says whether two dual quaternions lie in the
/// same hemisphere (positive) or not.
#[inline]
#[must_use]
pub fn dot(a: &DualQuaternion<f32>, b: &DualQuaternion<f32>) -> f32 {
    a.real.coords.dot(&b.real.coords)
}

/// Normalizes a dual quaternion: divides both parts by the norm of the real part and
/// removes the component of the dual part along the real part, so the result satisfies
/// both unit conditions (`|r| = 1`, `r · d = 0`). A zero real part gives the identity.
#[inline]
#[must_use]
pub fn normalize(q: &DualQuaternion<f32>) -> DualQuat {
    let n = q.real.coords.norm();
    if n < EPSILON {
        return DualQuat::identity();
    }
    let real = q.real.coords / n;
    let dual = q.dual.coords / n;
    let dual = dual - real * real.dot(&dual);
    Unit::new_unchecked(DualQuaternion::from_real_and_dual(Quaternion::from(real), Quaternion::from(dual)))
}

/// Conjugate of a unit dual quaternion: its inverse (the inverse rigid transform).
#[inline]
#[must_use]
pub fn conjugate(q: &DualQuat) -> DualQuat {
    q.conjugate()
}

/// Transforms a point by a unit dual quaternion (rotation then translation).
#[inline]
#[must_use]
pub fn transform_point(q: &DualQuat, p: &Vec3) -> Vec3 {
    q.transform_point(&(*p).into()).coords
}

/// Transforms a vector by a unit dual quaternion (rotation only).
#[inline]
#[must_use]
pub fn transform_vector(q: &DualQuat, v: &Vec3) -> Vec3 {
    q.transform_vector(v)
}

/// Weighted blend of dual quaternions (dual-quaternion linear blending, Kavan et al.
/// 2007): each input is negated when its real part lies in the other hemisphere from the
/// first input's, the weighted sum is taken, and the result is renormalized.
///
/// Pairs are `(dual quaternion, weight)`. An empty input, or weights that cancel, give the
/// identity.
#[must_use]
pub fn blend<'a>(items: impl IntoIterator<Item = (&'a DualQuat, f32)>) -> DualQuat {
    let mut iter = items.into_iter();
    let Some((first, w0)) = iter.next() else {
        return DualQuat::identity();
    };
    let pivot = first.as_ref().real.coords;
    let mut real = first.as_ref().real.coords * w0;
    let mut dual = first.as_ref().dual.coords * w0;
    for (q, w) in iter {
        let q = q.as_ref();
        let w = if q.real.coords.dot(&pivot) < 0.0 { -w } else { w };
        real += q.real.coords * w;
        dual += q.dual.coords * w;
    }
    normalize(&DualQuaternion::from_real_and_dual(Quaternion::from(real), Quaternion::from(dual)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Quat;

    fn rigid(a: f32, t: Vec3) -> Transform {
        Transform::new(t, Quat::from_euler_angles(a, 0.5 * a, -a), Vec3::new(1.0, 1.0, 1.0))
    }

    #[test]
    fn transform_round_trip_and_point() {
        let t = rigid(0.7, Vec3::new(1.0, -2.0, 3.0));
        let q = from_transform(&t);
        let p = Vec3::new(0.2, 0.4, -0.8);
        assert!((transform_point(&q, &p) - t.transform_point(&p)).norm() < 1e-5);
        assert!((transform_vector(&q, &p) - t.transform_vector(&p)).norm() < 1e-5);
        let back = to_transform(&q);
        assert!((back.translation - t.translation).norm() < 1e-5);
        assert!(back.rotation.angle_to(&t.rotation) < 1e-5);
    }

    #[test]
    fn multiplication_order_matches_transform_combine() {
        let parent = rigid(0.3, Vec3::new(0.0, 1.0, 0.0));
        let child = rigid(-1.2, Vec3::new(2.0, 0.0, 0.5));
        let combined = parent.combine(&child);
        let q = from_transform(&parent) * from_transform(&child);
        let book = then(&from_transform(&child), &from_transform(&parent));
        let p = Vec3::new(1.0, 2.0, 3.0);
        assert!((transform_point(&q, &p) - combined.transform_point(&p)).norm() < 1e-5);
        assert!((transform_point(&book, &p) - combined.transform_point(&p)).norm() < 1e-5);
    }

    #[test]
    fn rigid_matrix_drops_scale() {
        let t =
            Transform::new(Vec3::new(1.0, 2.0, 3.0), Quat::from_euler_angles(0.4, -1.0, 2.0), Vec3::new(2.0, 2.0, 2.0));
        let q = from_rigid_matrix(&t.to_matrix());
        assert!(q.rotation().angle_to(&t.rotation) < 1e-5);
        assert!((q.translation().vector - t.translation).norm() < 1e-5);
    }

    #[test]
    fn conjugate_inverts() {
        let q = from_transform(&rigid(0.9, Vec3::new(3.0, 1.0, -1.0)));
        let p = Vec3::new(-1.0, 0.5, 2.0);
        assert!((transform_point(&conjugate(&q), &transform_point(&q, &p)) - p).norm() < 1e-5);
    }

    #[test]
    fn blend_flips_hemisphere() {
        let q = from_transform(&rigid(0.4, Vec3::new(1.0, 0.0, 0.0)));
        let neg = Unit::new_unchecked(DualQuaternion::from_real_and_dual(-q.as_ref().real, -q.as_ref().dual));
        let b = blend([(&q, 0.5), (&neg, 0.5)]);
        let p = Vec3::new(0.3, 0.3, 0.3);
        assert!((transform_point(&b, &p) - transform_point(&q, &p)).norm() < 1e-5);
        assert!(dot(q.as_ref(), neg.as_ref()) < 0.0);
    }

    #[test]
    fn blend_of_two_rotations_is_halfway() {
        let a = from_transform(&Transform::from_rotation(Quat::from_axis_angle(&Vec3::z_axis(), 0.0)));
        let b = from_transform(&Transform::from_rotation(Quat::from_axis_angle(&Vec3::z_axis(), 1.0)));
        let m = blend([(&a, 0.5), (&b, 0.5)]);
        assert!((m.rotation().angle() - 0.5).abs() < 1e-5);
        assert_eq!(blend(std::iter::empty()), DualQuat::identity());
    }

    #[test]
    fn normalize_gives_unit_conditions() {
        let raw = DualQuaternion::from_real_and_dual(
            Quaternion::new(2.0, 0.5, 0.0, 1.0),
            Quaternion::new(0.3, 1.0, -2.0, 0.7),
        );
        let n = normalize(&raw);
        assert!((n.as_ref().real.coords.norm() - 1.0).abs() < 1e-6);
        assert!(n.as_ref().real.coords.dot(&n.as_ref().dual.coords).abs() < 1e-6);
    }
}
