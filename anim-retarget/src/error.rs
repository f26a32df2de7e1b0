//! The errors of retargeting itself (building a retargeter, running the job, making a
//! clip). Maps, rigs and map files have their own ([`crate::map::MapError`],
//! [`crate::rig::RigError`], [`crate::file::MapFileError`]).

use anim_core::clip::{ClipError, EventError, TrackError};
use anim_core::pose::PoseError;
use anim_ik::IkError;
use thiserror::Error;

/// Why retargeting could not run.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum RetargetError {
    /// A setting out of its range.
    #[error("retarget setting {what} = {value} must be finite and positive")]
    Setting {
        /// The setting's name.
        what: &'static str,
        /// The value given.
        value: f32,
    },
    /// A pose of another skeleton than the retargeter's source (or target, for the output).
    #[error(transparent)]
    Pose(#[from] PoseError),
    /// The source clip could not be sampled.
    #[error(transparent)]
    Clip(#[from] ClipError),
    /// The source clip's events do not fit the new clip.
    #[error(transparent)]
    Event(#[from] EventError),
    /// A retargeted track could not be built (a non-finite value).
    #[error("retargeted track: {0}")]
    Track(#[from] TrackError),
    /// The IK pass met a non-finite goal (a non-finite source pose).
    #[error(transparent)]
    Ik(#[from] IkError),
    /// A contact weight outside `[0, 1]` or not finite.
    #[error("contact weight {index} is {value}; weights are in [0, 1]")]
    Contact {
        /// Which limb (0 left foot, 1 right foot, 2 left hand, 3 right hand).
        index: usize,
        /// The value given.
        value: f32,
    },
    /// An offline rate that is not finite and positive.
    #[error("sample rate {0} Hz must be finite and positive")]
    Rate(f32),
}
