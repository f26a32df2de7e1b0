//! How clips are sampled: the [`TimePolicy`] that brings a time into a clip, and the
//! [`SoaSampler`] interface every clip type implements (exact [`Clip`](super::Clip),
//! [`BakedClip`](super::BakedClip), [`RuntimeClip`](super::RuntimeClip)), which jobs that
//! sample many characters are written against.

use super::error::ClipError;
use crate::pose::{SkeletonId, SoaPose};

/// How a sample time outside `[0, duration]` is brought inside.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum TimePolicy {
    /// `t` is clamped to `[0, duration]`; each channel holds its first or last value
    /// outside its own keys.
    #[default]
    Clamp,
    /// `t` becomes `t − duration·⌊t / duration⌋` (looping playback).
    Wrap,
}

impl TimePolicy {
    /// The time actually sampled for `t` in a clip of `duration` seconds.
    #[inline]
    pub fn apply(self, t: f32, duration: f32) -> f32 {
        if duration <= 0.0 {
            return 0.0;
        }
        match self {
            TimePolicy::Clamp => t.clamp(0.0, duration),
            TimePolicy::Wrap => {
                let w = t - duration * (t / duration).floor();
                // Guard against rounding putting w at `duration` or just below zero.
                if w >= duration || w < 0.0 { 0.0 } else { w }
            }
        }
    }
}

/// A clip that samples straight into a [`SoaPose`], with per-playback state (a key cursor
/// or cache) kept in a [`SoaSampler::Context`] that the caller owns, one per playing
/// instance. Jobs that sample many characters (a crowd) are written against this trait.
pub trait SoaSampler: Sync {
    /// Per-instance sampling state; reusing it across frames is what makes forward
    /// playback cheap.
    type Context: Send;

    /// A fresh context for one playing instance of this clip.
    fn new_context(&self) -> Self::Context;

    /// The clip's duration in seconds.
    fn duration(&self) -> f32;

    /// The skeleton this clip was made for, when it is tied to one (a runtime clip is
    /// compiled for one skeleton; an exact or baked clip animates joints by index and
    /// fits any skeleton that has them). Jobs over a skeleton check it once.
    fn skeleton_id(&self) -> Option<SkeletonId> {
        None
    }

    /// Samples every joint at `time` (raw seconds, brought into `[0, duration]` by
    /// `policy`: [`TimePolicy::Wrap`] for a running clock on a looping clip,
    /// [`TimePolicy::Clamp`] to hold the ends) into `out`, and returns the time sampled.
    /// Joints the clip does not animate keep their values in `out`. Allocates nothing.
    ///
    /// The same `(time, policy)` gives the same pose on every clip form (exact, baked,
    /// runtime), up to each form's documented error.
    ///
    /// # Errors
    /// `time` is not finite, `out` does not fit the clip (shorter than its highest
    /// animated joint; for a runtime clip, another joint count than its skeleton's), or
    /// `context` belongs to another clip.
    fn sample_soa(
        &self,
        context: &mut Self::Context,
        time: f32,
        policy: TimePolicy,
        out: &mut SoaPose,
    ) -> Result<f32, ClipError>;
}
