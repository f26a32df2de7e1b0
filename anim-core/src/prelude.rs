//! The types most programs touch, in one import: `use anim_core::prelude::*;`.
//!
//! Each is also at its stage module's path ([`crate::clip::Clip`], …), which is where its
//! docs live. Functions stay in their modules (`blend::blend`, `skin::skinning::skin`).

pub use crate::LengthMismatch;
pub use crate::blend::{BlendError, CrossFadeController, CrossFadeError};
pub use crate::clip::{
    BakedClip, Clip, ClipError, Interpolation, JointTracks, LoopMode, Playback, RuntimeClip, RuntimeClipContext,
    SamplingCache, SoaSampler, TimePolicy, Track,
};
pub use crate::offline::JointRadii;
pub use crate::pose::{JointDesc, Pose, PoseError, Skeleton, SoaPose};
pub use crate::skin::{
    Influences, Mesh, MorphTargets, NormalMode, Palette, Skin, SkinMethod, SkinningError, SkinningInput, SkinningOutput,
};
pub use anim_math::Transform;
