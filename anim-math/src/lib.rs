//! Math for skeletal animation on top of [nalgebra]: the [`Transform`] a joint carries
//! (translation, rotation, non-uniform scale), the quaternion helpers the animation book
//! uses ([`quat`]), and dual quaternions for skinning without scale ([`dual`]).
//!
//! Everything is concrete `f32`. The nalgebra types are re-exported under short names so
//! the other crates of the workspace speak one vocabulary.
//!
//! # From glam, cgmath and other math crates (feature `mint`)
//! With the `mint` feature on, vectors, points, quaternions and matrices convert to and
//! from the [mint](https://docs.rs/mint) interchange types, which glam, cgmath and most
//! other math crates also convert to and from (glam and cgmath with their own `mint`
//! feature). So a game's values go in with `.into()`, whole, not component by component;
//! the `interop` module adds what nalgebra leaves out (a mint quaternion to a unit
//! quaternion, a whole [`Transform`]):
//!
//! ```
//! # #[cfg(feature = "mint")] {
//! use anim_math::{Transform, Vec3, interop, mint};
//!
//! // What `glam::Vec3::into()` or `cgmath::Vector3::into()` hands over:
//! let position = mint::Vector3 { x: 1.0f32, y: 2.0, z: 3.0 };
//! let rotation = mint::Quaternion { v: mint::Vector3 { x: 0.0, y: 0.0, z: 0.0 }, s: 1.0f32 };
//!
//! let v: Vec3 = position.into();
//! let q = interop::quat_from_mint(rotation);
//! let joint = Transform::from_mint(position, rotation, [1.0, 1.0, 1.0]);
//! assert_eq!(joint.translation, v);
//!
//! // And back out: `glam::Vec3::from(m)` / `cgmath::Vector3::from(m)` take these.
//! let m: mint::Vector3<f32> = joint.transform_point(&Vec3::zeros()).into();
//! let r: mint::Quaternion<f32> = q.into();
//! assert_eq!((m.x, r.s), (1.0, 1.0));
//! # }
//! ```

#![warn(missing_docs)]

pub mod dual;
#[cfg(feature = "mint")]
pub mod interop;
pub mod quat;
mod transform;

#[cfg(feature = "mint")]
pub use mint;
pub use nalgebra;
pub use transform::Transform;

/// A 3-component `f32` vector (positions, directions, scales).
pub type Vec3 = nalgebra::Vector3<f32>;
/// A 4-component `f32` vector.
pub type Vec4 = nalgebra::Vector4<f32>;
/// A 3D point.
pub type Point3 = nalgebra::Point3<f32>;
/// A unit quaternion: a rotation.
pub type Quat = nalgebra::UnitQuaternion<f32>;
/// A 4×4 `f32` matrix, column-major, acting on column vectors (`M * v`).
pub type Mat4 = nalgebra::Matrix4<f32>;
/// A 3×3 `f32` matrix.
pub type Mat3 = nalgebra::Matrix3<f32>;
/// A unit dual quaternion: a rigid transform (rotation then translation).
pub type DualQuat = nalgebra::UnitDualQuaternion<f32>;

/// Tolerance used when deciding that a length or a determinant is zero.
pub const EPSILON: f32 = 1e-6;

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

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
