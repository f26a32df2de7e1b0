//! Clips and how they are played: keyframed tracks, the three clip forms that sample into
//! a pose, and the playback state around them.
//!
//! - [`track`]: [`Track`], keys with glTF's STEP, LINEAR and CUBICSPLINE interpolation.
//! - [`exact`]: [`Clip`], per-joint tracks sampled exactly as glTF defines them (with a
//!   per-instance [`SamplingCache`] for the fast path), plus curves, morph weights
//!   ([`weights`]), [`events`] and root motion ([`root_motion`]).
//! - [`baked`]: [`BakedClip`], a clip resampled at a fixed rate (made by
//!   [`crate::offline::bake`]).
//! - [`runtime`]: [`RuntimeClip`], a clip reduced to a tolerance and quantized (made by
//!   [`crate::offline::compile`]), sampled four joints at a time.
//! - [`sampler`]: the [`TimePolicy`] every sampler applies, and [`SoaSampler`], the one
//!   interface of the three forms for jobs that sample many characters.
//! - [`playback`]: [`Playback`], the time, speed, loop mode and end behaviour of one
//!   playing clip.
//!
//! ```
//! use anim_core::clip::{Clip, Interpolation, JointTracks, LoopMode, Playback, TimePolicy, Track};
//! use anim_core::pose::Pose;
//! use anim_math::Vec3;
//!
//! let mut tracks = JointTracks::new(0);
//! tracks.translation = Some(Track::new(
//!     Interpolation::Linear,
//!     vec![0.0, 1.0],
//!     vec![Vec3::zeros(), Vec3::new(2.0, 0.0, 0.0)],
//! )?);
//! let slide = Clip::new("slide", vec![tracks], vec![])?;
//! let mut playback = Playback::new(slide.duration(), LoopMode::Repeat);
//! playback.advance(1.25); // wraps to 0.25 s
//! let mut pose = Pose::identity(1);
//! slide.sample(playback.time(), TimePolicy::Wrap, &mut pose)?;
//! assert!((pose.locals()[0].translation.x - 0.5).abs() < 1e-6);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod baked;
mod error;
pub mod events;
pub mod exact;
mod interp;
mod packed;
pub mod playback;
pub mod root_motion;
pub mod runtime;
pub mod sampler;
pub mod track;
pub mod weights;

pub use baked::BakedClip;
pub use error::{ClipError, TrackError};
pub use events::{ClipEvent, EventError, FiredEvent};
pub use exact::{Clip, ClipContext, JointTracks, SamplingCache, ScalarCurve};
pub use playback::{LoopMode, Playback, Step};
pub use root_motion::MotionTrack;
pub use runtime::{RuntimeClip, RuntimeClipContext};
pub use sampler::{SoaSampler, TimePolicy};
pub use track::{Interpolation, Track};
pub use weights::WeightTrack;
