//! Math for skeletal animation on top of [nalgebra]: the [`Transform`] a joint carries
//! (translation, rotation, non-uniform scale), the quaternion helpers the animation book
//! uses ([`quat`]), dual quaternions for skinning without scale ([`dual`]), and
//! quaternions and vectors held in one 4-lane register for the runtime's hot paths
//! ([`simd`]).
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
mod matrix;
pub mod quat;
pub mod simd;
mod transform;
mod types;

#[cfg(feature = "mint")]
pub use mint;
pub use nalgebra;
pub use transform::Transform;

pub use matrix::{affine_mul, normal_matrix, polar_decomposition};
pub use types::{DualQuat, EPSILON, Mat3, Mat4, Point3, Quat, Vec3, Vec4};

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
