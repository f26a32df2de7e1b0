//! Matrix helpers the runtime's hot loops share: the normal matrix of a linear map and the
//! affine product.

use crate::types::{Mat3, Mat4};

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transform::Transform;
    use crate::types::{Quat, Vec3};

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
}
