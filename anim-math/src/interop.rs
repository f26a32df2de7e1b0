//! Hand-over to and from other math crates through [mint] (feature `mint`).
//!
//! nalgebra converts its vectors, points, quaternions and matrices to and from mint's
//! types, so [`Vec3`], [`crate::Point3`], [`crate::Mat4`] and quaternions cross with one
//! `.into()` (and a vector can even be viewed as `&mint::Vector3<f32>` with `as_ref()`).
//! What nalgebra leaves out is a mint quaternion to a *unit* quaternion, the [`Quat`] every
//! rotation here is: [`quat_from_mint`] does that, and [`Transform::from_mint`] takes a
//! whole joint transform from any types that convert to mint's.

use crate::transform::Transform;
use crate::types::{Quat, Vec3};

/// The rotation of any quaternion that converts to mint's (glam's `Quat`, cgmath's
/// `Quaternion<f32>`, mint's own), normalized. A zero quaternion has no rotation and gives
/// NaN components, as [`Quat::new_normalize`] does.
pub fn quat_from_mint(q: impl Into<mint::Quaternion<f32>>) -> Quat {
    Quat::new_normalize(nalgebra::Quaternion::from(q.into()))
}

impl Transform {
    /// A transform from a translation, a rotation (normalized, see [`quat_from_mint`]) and a
    /// scale of any types that convert to mint's: glam's `Vec3` and `Quat`, cgmath's
    /// `Vector3<f32>` and `Quaternion<f32>`, `[f32; 3]` arrays.
    pub fn from_mint(
        translation: impl Into<mint::Vector3<f32>>,
        rotation: impl Into<mint::Quaternion<f32>>,
        scale: impl Into<mint::Vector3<f32>>,
    ) -> Self {
        Transform::new(Vec3::from(translation.into()), quat_from_mint(rotation), Vec3::from(scale.into()))
    }
}
