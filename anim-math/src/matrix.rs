//! Matrix helpers the runtime's hot loops share: the normal matrix of a linear map, the
//! affine product, and the polar decomposition that splits a skinning matrix into the
//! rotation and the scale dual-quaternion skinning blends apart.

use crate::types::{Mat3, Mat4, Quat};
use nalgebra::{Matrix3, Rotation3, UnitQuaternion};

/// The matrix that transforms normals for the linear map `m`: the cofactor matrix of `m`
/// (columns `c1 × c2`, `c2 × c0`, `c0 × c1`), negated when `det m < 0`. It equals the
/// inverse transpose `m⁻ᵀ` times the positive factor `|det m|`, so normals keep their
/// direction (renormalize them after) and it stays finite when `m` is singular.
#[inline]
#[must_use]
pub fn normal_matrix(m: &Mat3) -> Mat3 {
    let (c0, c1, c2) = (m.column(0).into_owned(), m.column(1).into_owned(), m.column(2).into_owned());
    let cofactor = Mat3::from_columns(&[c1.cross(&c2), c2.cross(&c0), c0.cross(&c1)]);
    if c0.dot(&c1.cross(&c2)) < 0.0 { -cofactor } else { cofactor }
}

/// The product `a · b` of two affine matrices (last row `0 0 0 1`), skipping the projective
/// row: the model-matrix product of local-to-model and the skinning palettes.
#[inline]
#[must_use]
pub fn affine_mul(a: &Mat4, b: &Mat4) -> Mat4 {
    let a = a.as_slice();
    let b = b.as_slice();
    let mut r = [0.0f32; 16];
    for c in 0..4 {
        let (b0, b1, b2) = (b[c * 4], b[c * 4 + 1], b[c * 4 + 2]);
        for row in 0..3 {
            r[c * 4 + row] = a[row] * b0 + a[4 + row] * b1 + a[8 + row] * b2;
        }
    }
    for row in 0..3 {
        r[12 + row] += a[12 + row];
    }
    r[15] = 1.0;
    Mat4::from_column_slice(&r)
}

/// The polar decomposition `m = R·S` of a linear map: `R` the rotation nearest `m` (the
/// one that maximizes `trace(Rᵀ·m)`) and `S = Rᵀ·m`, which is then symmetric.
///
/// When `det m > 0`, `R` is the orthogonal polar factor and `S` is positive definite: for a
/// rotation times a scale along any axes, `m = R₀·(B·D·Bᵀ)`, it gives back `R₀` and
/// `B·D·Bᵀ` exactly (to rounding), whatever the scale. When `det m ≤ 0` (a mirror, or a
/// scale of zero along some axis), `R` comes from the singular value decomposition
/// `m = U·Σ·Vᵀ` as `U·diag(1, 1, ±1)·Vᵀ`, the sign making it a rotation and falling on the
/// smallest singular value; `S = V·diag(σ₀, σ₁, ±σ₂)·Vᵀ` then carries the mirror.
///
/// Computed in `f64` (scaled Newton iterations, Higham 1986, in the first case) and
/// returned in `f32`, with `S` made exactly symmetric. `None` when an entry of `m` is not
/// finite.
#[must_use]
pub fn polar_decomposition(m: &Mat3) -> Option<(Quat, Mat3)> {
    if !m.iter().all(|x| x.is_finite()) {
        return None;
    }
    let a: Matrix3<f64> = m.cast();
    let size = a.norm();
    if size == 0.0 {
        return Some((Quat::identity(), Mat3::zeros()));
    }
    // Newton's iteration needs an inverse it can trust; a determinant this small against
    // the matrix's size (condition number beyond about 1e8) takes the SVD instead. A map
    // near a rotation times `s` takes the cheaper Newton-Schulz iteration.
    let det = a.determinant();
    let r = if det > 1e-8 * size * size * size {
        // The rotation of `a` is that of `a` over its root-mean-square singular value.
        let x = a * (3.0f64.sqrt() / size);
        schulz_polar(&x).or_else(|| newton_polar(&a))
    } else {
        None
    };
    let r = match r {
        Some(r) => r,
        None => svd_rotation(&a)?,
    };
    let s = r.transpose() * a;
    let s = (s + s.transpose()) * 0.5;
    let q = UnitQuaternion::from_rotation_matrix(&Rotation3::from_matrix_unchecked(r));
    Some((Quat::new_normalize(q.into_inner().cast()), s.cast()))
}

/// The orthogonal polar factor of `x` (`det x > 0`, singular values near 1) by the
/// Newton-Schulz iteration `X ← X·(3·I − XᵀX) / 2`: products only, no inverse. With
/// `E = XᵀX − I`, a singular value `1 + e` becomes `1 − 3e²/2 + O(e³)`; the iteration stops
/// after the step taken from `|E|² ≤ 2.5e-8` (`|e|` below about 8e-5), which leaves an error
/// near 1e-8, below `f32` rounding. `None` when `|E|² ≥ 0.25` at the start (a singular
/// value outside about 0.7 to 1.2, where the iteration slows or fails) or it has not
/// settled after 16 steps.
fn schulz_polar(x: &Matrix3<f64>) -> Option<Matrix3<f64>> {
    let mut x = *x;
    for k in 0..16 {
        let e = x.tr_mul(&x) - Matrix3::identity();
        let err = e.norm_squared();
        if k == 0 && err.partial_cmp(&0.25) != Some(std::cmp::Ordering::Less) {
            return None;
        }
        x -= x * e * 0.5;
        if err <= 2.5e-8 {
            return Some(x);
        }
    }
    None
}

/// The orthogonal polar factor of `a` (`det a > 0`): `X ← (γ·X + X⁻ᵀ/γ) / 2` from `X = a`,
/// `X⁻ᵀ` the cofactor matrix over the determinant, with Higham's Frobenius-norm scaling
/// `γ = (|X⁻¹|² / |X|²)^¼` while the steps are large (it is 1 near convergence). The
/// iteration converges quadratically, the error of an iterate about half the square of the
/// step that made it: it stops after a step below 1e-4 (an error near 5e-9, below `f32`
/// rounding). `None` when the determinant of an iterate is not positive (rounding, from a
/// nearly singular `a`) or the iteration has not settled after 32 steps (it settles in
/// under ten for any `f32` matrix it is given).
fn newton_polar(a: &Matrix3<f64>) -> Option<Matrix3<f64>> {
    let mut x = *a;
    let mut scaled = true;
    for _ in 0..32 {
        let (c0, c1, c2) = (x.column(0), x.column(1), x.column(2));
        let cof = Matrix3::from_columns(&[c1.cross(&c2), c2.cross(&c0), c0.cross(&c1)]);
        let det = c0.dot(&cof.column(0));
        if det.is_nan() || det <= 0.0 {
            return None;
        }
        let inv_t = cof * (1.0 / det);
        let next = if scaled {
            let gamma = (inv_t.norm_squared() / x.norm_squared()).sqrt().sqrt();
            (x * gamma + inv_t * (1.0 / gamma)) * 0.5
        } else {
            (x + inv_t) * 0.5
        };
        let step = (next - x).norm_squared();
        x = next;
        if step <= 1e-8 {
            return Some(x);
        }
        scaled = step > 1e-4;
    }
    None
}

/// The rotation nearest `a` through its singular value decomposition: `U·Vᵀ`, with the
/// column of `U` of the smallest singular value negated when that is a reflection.
fn svd_rotation(a: &Matrix3<f64>) -> Option<Matrix3<f64>> {
    let svd = a.try_svd(true, true, f64::EPSILON, 200)?;
    let (mut u, v_t) = (svd.u?, svd.v_t?);
    if (u * v_t).determinant() < 0.0 {
        let smallest = svd.singular_values.imin();
        u.column_mut(smallest).neg_mut();
    }
    Some(u * v_t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transform::Transform;
    use crate::types::Vec3;

    #[test]
    fn affine_mul_matches_full_product() {
        let a =
            Transform::new(Vec3::new(1.0, 2.0, 3.0), Quat::from_euler_angles(0.1, 0.7, -0.3), Vec3::new(1.0, 2.0, 0.5))
                .to_matrix();
        let b = Transform::new(
            Vec3::new(-1.0, 0.0, 4.0),
            Quat::from_euler_angles(1.1, -0.2, 0.3),
            Vec3::new(3.0, 1.0, 1.0),
        )
        .to_matrix();
        assert!((affine_mul(&a, &b) - a * b).abs().max() < 1e-5);
    }

    /// The normal matrix is the inverse transpose up to a positive factor, also for a
    /// reflection, and stays finite for a singular map.
    #[test]
    fn normal_matrix_is_scaled_inverse_transpose() {
        for m in [
            Mat3::new(2.0, 0.3, 0.0, -0.1, 0.5, 0.2, 0.0, 0.4, 3.0),
            Mat3::new(-1.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 1.0),
        ] {
            let it = m.try_inverse().expect("invertible test matrix").transpose();
            let n = normal_matrix(&m);
            let k = m.determinant().abs();
            assert!((n - it * k).abs().max() < 1e-5, "{m}");
        }
        let singular = Mat3::new(1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0);
        assert!(normal_matrix(&singular).iter().all(|x| x.is_finite()));
    }

    /// A rotation times a scale along arbitrary axes comes back as that rotation and that
    /// symmetric scale, for stretches up to 1000:1; a uniform scale as `s·I`.
    #[test]
    fn polar_decomposition_recovers_rotation_and_axis_scale() {
        let r0 = Quat::from_euler_angles(0.4, -1.2, 2.0);
        for (axes, d) in [
            (Quat::from_euler_angles(0.3, 0.2, -0.9), Vec3::new(1.0, 1.15, 0.9)),
            (Quat::from_euler_angles(-1.0, 0.5, 0.1), Vec3::new(0.01, 3.0, 10.0)),
            (Quat::identity(), Vec3::new(2.0, 2.0, 2.0)),
        ] {
            let b = axes.to_rotation_matrix().into_inner();
            let scale = b * Mat3::from_diagonal(&d) * b.transpose();
            let m = r0.to_rotation_matrix().into_inner() * scale;
            let (r, s) = polar_decomposition(&m).expect("finite");
            assert!(r.angle_to(&r0) < 1e-5, "{d}: rotation off by {}", r.angle_to(&r0));
            assert!((s - scale).abs().max() < 1e-5 * d.max(), "{d}: {s} against {scale}");
            assert_eq!(s, s.transpose());
        }
    }

    /// A mirror and a map that flattens one axis still give a rotation and a symmetric `S`
    /// whose product is the map; the rotation is the one nearest the map.
    #[test]
    fn polar_decomposition_of_mirrors_and_flattened_maps() {
        let r0 = Quat::from_euler_angles(1.0, 0.3, -0.4).to_rotation_matrix().into_inner();
        for m in [
            r0 * Mat3::from_diagonal(&Vec3::new(-1.0, 1.2, 0.8)),
            r0 * Mat3::from_diagonal(&Vec3::new(1.0, 0.0, 2.0)),
            r0 * Mat3::from_diagonal(&Vec3::new(1.0, 1.0, -1e-9)),
            Mat3::zeros(),
        ] {
            let (r, s) = polar_decomposition(&m).expect("finite");
            let rm = r.to_rotation_matrix().into_inner();
            assert!((rm * s - m).abs().max() < 1e-5, "{m}: {}", rm * s);
            assert_eq!(s, s.transpose());
            // Nearest: no rotation of the sample set scores a larger trace(Rᵀ·m).
            let best = (rm.transpose() * m).trace();
            for k in 0..64 {
                let t = k as f32 * 0.1;
                let other = Quat::from_euler_angles(t, 2.0 * t, -t).to_rotation_matrix().into_inner();
                assert!((other.transpose() * m).trace() <= best + 1e-5, "{m}");
            }
        }
        assert!(polar_decomposition(&Mat3::from_element(f32::NAN)).is_none());
        assert!(polar_decomposition(&Mat3::from_diagonal_element(f32::INFINITY)).is_none());
    }
}
