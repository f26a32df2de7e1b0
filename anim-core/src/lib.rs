//! The skeletal-animation runtime core: what one character needs each frame, and the
//! offline steps that prepare its data.
//!
//! Data flows one way, and every step is a function over slices the caller owns. The
//! modules follow it, one stage each:
//!
//! ```text
//! clip     Clip / BakedClip / RuntimeClip ──sample(t)──▶ Pose (local transforms)
//! blend    poses ──blend / additive / layers / crossfade──▶ Pose
//! pose     Pose + Skeleton ──local_to_model──▶ model matrices
//! skin     model matrices + Skin ──Palette──▶ matrices or dual quaternions
//!          Palette + Mesh ──skinning──▶ skinned positions and normals
//! offline  Clip ──compile / bake / trim / extract root motion──▶ what playback reads
//! ```
//!
//! - [`pose`]: [`Skeleton`](pose::Skeleton), [`Pose`](pose::Pose), the SIMD
//!   structure-of-arrays pose and the hierarchy pass.
//! - [`clip`]: tracks, the three clip forms (exact, baked, runtime) and their common
//!   [`SoaSampler`](clip::SoaSampler) interface, [`Playback`](clip::Playback), events, root
//!   motion, morph weights.
//! - [`blend`]: two-pose blends, additive layers, masked N-layer blends, crossfades.
//! - [`skin`]: skins, meshes and influences, morph targets, palettes, CPU skinning.
//! - [`offline`]: runtime-clip compilation, baking, root-motion extraction, trimming, the
//!   numeric range check. Nothing in it runs per frame.
//!
//! [`prelude`] brings the types most programs touch. This crate depends on `anim-math`,
//! nalgebra, thiserror, bytemuck and half only: no file format, GPU, window or crowd code.
//!
//! ```
//! use anim_core::prelude::*;
//! use anim_math::{Mat4, Transform, Vec3};
//!
//! // Two joints: a root at the origin and a child one unit up.
//! let skeleton = Skeleton::new(vec![
//!     JointDesc::new("root", None, Transform::IDENTITY),
//!     JointDesc::new("tip", Some(0), Transform::from_translation(Vec3::new(0.0, 1.0, 0.0))),
//! ])?;
//! let pose = skeleton.rest_pose().clone();
//! let mut model = vec![Mat4::identity(); skeleton.len()];
//! pose.local_to_model(&skeleton, &mut model)?;
//! let skin = Skin::from_skeleton(&skeleton);
//! let mut palette = Palette::new(SkinMethod::Lbs);
//! palette.update(&model, &skin)?;
//! // The rest pose is the bind pose here, so the palette is the identity.
//! assert!((palette.matrices().unwrap()[1] - Mat4::identity()).abs().max() < 1e-6);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

pub mod blend;
pub mod clip;
mod length;
pub mod offline;
pub mod pose;
pub mod prelude;
pub mod skin;

pub use anim_math;
pub use length::LengthMismatch;

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
