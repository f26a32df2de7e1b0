//! The offline steps: what prepares data for playback, run once at load or build time,
//! never per frame (ozz-animation's `offline/` next to its `runtime/`). Everything else in
//! this crate is what a frame runs.
//!
//! - [`compile`]: a [`Clip`](crate::clip::Clip) compiled into a
//!   [`RuntimeClip`](crate::clip::RuntimeClip): keyframe reduction to a tolerance at the
//!   skin ([`JointRadii`]) and quantization.
//! - [`bake`]: a clip resampled at a fixed rate into a [`BakedClip`](crate::clip::BakedClip).
//! - [`root_motion`]: a clip's root travel extracted into a
//!   [`MotionTrack`](crate::clip::MotionTrack).
//! - [`trim`]: a skeleton trimmed to the joints a character needs, with clips, skins and
//!   poses carried over ([`JointMap`]).
//! - [`range`]: the runtime's documented numeric range and the conservative check that
//!   keeps a model inside it.

pub mod bake;
pub mod compile;
pub mod range;
pub mod root_motion;
pub mod trim;

pub use bake::{BakeError, MAX_BAKED_TRANSFORMS};
pub use compile::{JointRadii, RuntimeClipError};
pub use range::{RangeError, check_model_range};
pub use root_motion::{RootMotionError, RootMotionSettings};
pub use trim::{JointMap, TrimError};
