//! One import for a program that loads a model and animates it:
//! `use anim_gltf::prelude::*;` brings [`anim_core::prelude`] (skeleton, pose, clips,
//! playback, blending, skinning types) and the loader's types, so `anim-gltf` alone is
//! enough for the smallest program (it re-exports `anim_core` and `anim_math` too).

pub use crate::error::GltfError;
pub use crate::model::{MeshInstance, Model};
pub use crate::options::LoadOptions;
pub use crate::skinning::SkinScratch;
pub use crate::trim::RuntimeSkeleton;
pub use anim_core::prelude::*;
