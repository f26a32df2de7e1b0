//! Why a track or a clip could not be built or sampled.

use crate::length::LengthMismatch;
use crate::pose::PoseError;
use thiserror::Error;

/// Why a [`Track`](super::Track) could not be built.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum TrackError {
    /// A track needs at least one key.
    #[error("track has no keys")]
    Empty,
    /// Key times must be finite and strictly increasing.
    #[error("key time {index} ({time}) is not finite or not greater than the previous key time")]
    TimesNotIncreasing {
        /// Index of the offending key.
        index: usize,
        /// Its time.
        time: f32,
    },
    /// Value count does not match the key count (three values a key for cubic splines).
    #[error("track has {times} keys but {values} values (expected {expected})")]
    ValueCount {
        /// Number of key times.
        times: usize,
        /// Number of values.
        values: usize,
        /// Number expected.
        expected: usize,
    },
    /// A value has a NaN or infinite component.
    #[error("value {index} is not finite")]
    NonFiniteValue {
        /// Index of the value.
        index: usize,
    },
}

/// Why a [`Clip`](super::Clip) could not be built or sampled.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum ClipError {
    /// A track in the clip is invalid.
    #[error("clip {clip:?}: {channel} track of joint {joint}: {source}")]
    Track {
        /// Clip name.
        clip: String,
        /// Joint the track animates.
        joint: usize,
        /// "translation", "rotation" or "scale".
        channel: &'static str,
        /// What is wrong with the track.
        source: TrackError,
    },
    /// A named curve in the clip is invalid.
    #[error("clip {clip:?}: curve {curve:?}: {source}")]
    Curve {
        /// Clip name.
        clip: String,
        /// Curve name.
        curve: String,
        /// What is wrong with the curve.
        source: TrackError,
    },
    /// Two track sets animate the same joint.
    #[error("clip {clip:?}: joint {joint} has two track sets")]
    DuplicateJoint {
        /// Clip name.
        clip: String,
        /// The joint.
        joint: usize,
    },
    /// The clip animates a joint the pose does not have.
    #[error("clip {clip:?} animates joint {joint}, but the pose has {count} joints")]
    JointOutOfRange {
        /// Clip name.
        clip: String,
        /// The joint.
        joint: usize,
        /// Joints in the pose.
        count: usize,
    },
    /// The pose has another joint count than the skeleton the clip was compiled or baked
    /// for.
    #[error("clip {clip:?} is for a skeleton of {expected} joints, the pose has {got}")]
    JointCount {
        /// Clip name.
        clip: String,
        /// Joints of the clip's skeleton.
        expected: usize,
        /// Joints in the pose.
        got: usize,
    },
    /// The pose belongs to another skeleton than the one the clip was compiled for.
    #[error("clip {clip:?}: {source}")]
    Skeleton {
        /// Clip name.
        clip: String,
        /// The mix-up.
        source: PoseError,
    },
    /// The sampling cache was made for another clip.
    #[error("sampling cache has {got} channels, clip {clip:?} has {expected}")]
    CacheMismatch {
        /// Clip name.
        clip: String,
        /// Channels in the cache.
        got: usize,
        /// Channels in the clip.
        expected: usize,
    },
    /// The sample time is NaN or infinite.
    #[error("sample time {0} is not finite")]
    NonFiniteTime(f32),
    /// An output slice has the wrong length (sampled morph weights, say).
    #[error(transparent)]
    WrongLength(#[from] LengthMismatch),
}
