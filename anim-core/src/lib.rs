//! The skeletal-animation runtime core.
//!
//! Data flows one way, and every step is a function over slices the caller owns:
//!
//! ```text
//! Skeleton + Clip ──sample──▶ Pose (local transforms)
//!                 ──local_to_model──▶ model matrices
//!                 ──palette──▶ skinning palette (matrices / dual quaternions)
//!                 ──skin──▶ skinned positions and normals
//! ```
//!
//! This crate depends on `anim-math` and nalgebra only: no file format, no GPU, no window.
//!
//! ```
//! use anim_core::{Skeleton, JointDesc, Pose, Skin, palette, skinning};
//! use anim_math::{Transform, Vec3, Mat4};
//!
//! // Two joints: a root at the origin and a child one unit up.
//! let skeleton = Skeleton::new(vec![
//!     JointDesc::new("root", None, Transform::IDENTITY),
//!     JointDesc::new("tip", Some(0), Transform::from_translation(Vec3::new(0.0, 1.0, 0.0))),
//! ]).unwrap();
//! let pose = skeleton.rest_pose().clone();
//! let mut model = vec![Mat4::identity(); skeleton.len()];
//! pose.local_to_model(&skeleton, &mut model).unwrap();
//! let skin = Skin::from_skeleton(&skeleton);
//! let mut pal = vec![Mat4::identity(); skin.len()];
//! palette::skinning_matrices(&model, &skin, &mut pal).unwrap();
//! // The rest pose is the bind pose here, so the palette is the identity.
//! assert!((pal[1] - Mat4::identity()).abs().max() < 1e-6);
//! ```

//! What games build on clips: [`playback`] (time scale, ping-pong, loop counts, a
//! `finished` signal), [`events`] (named times, and the in-order query of the events one
//! step crossed), [`root_motion`] (the root's travel as a separate motion track) and
//! [`layered`] (N-layer weighted blending with per-joint masks and additive layers).
//! Each module's docs start with a runnable example.

#![warn(missing_docs)]

pub mod additive;
pub mod anim_texture;
pub mod bake;
pub mod blend;
pub mod clip;
pub mod crossfade;
pub mod crowd;
pub mod crowd_job;
mod error;
pub mod events;
pub mod hierarchy;
pub mod layered;
pub mod mesh;
pub mod morph;
pub mod palette;
pub mod playback;
mod pose;
pub mod range;
pub mod root_motion;
pub mod runtime_clip;
mod skeleton;
mod skin;
pub mod skinning;
pub mod soa;
pub mod track;
pub mod trim;

pub use anim_texture::{
    AnimAtlas, AtlasClip, AtlasError, AtlasSource, BakeSettings, FramePair, TexelFormat, TextureLayout,
};
pub use bake::BakedClip;
pub use clip::{Clip, JointTracks, SamplingCache, ScalarCurve, TimePolicy};
pub use crowd::{CharacterDesc, Crowd, CrowdError, CrowdInstance};
pub use error::{ClipError, LengthMismatch, PoseError, SkeletonError, SkinningError, TrackError};
pub use mesh::{Influences, Mesh};
pub use morph::{MorphError, MorphTargets, WeightTrack};
pub use palette::{DqPalette, Palette};
pub use pose::Pose;
pub use runtime_clip::{JointRadii, RuntimeClip, RuntimeClipContext, RuntimeClipError};
pub use skeleton::{JointDesc, Skeleton};
pub use skin::Skin;
pub use skinning::{SkinMethod, UnknownSkinMethod};
pub use track::{Interpolation, Track};

pub use anim_math;

pub use additive::{add, add_in_place, make_additive_base};
pub use blend::{BlendError, blend, blend_into, blend_masked};
pub use crossfade::{CrossFadeController, CrossFadeError};
