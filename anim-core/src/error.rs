use thiserror::Error;

/// A slice or array whose length is not the one it must have: the runtime's one
/// length-mismatch error. The error enums of this crate and of `anim-ik` wrap it in their
/// `WrongLength` variant (each converts from it with `?`), so every caller reads the same
/// three fields whichever operation failed.
///
/// ```
/// use anim_core::LengthMismatch;
///
/// assert_eq!(LengthMismatch::check("pose", 3, 3), Ok(()));
/// let e = LengthMismatch::check("output positions", 9, 10).unwrap_err();
/// assert_eq!(e, LengthMismatch::new("output positions", 9, 10));
/// assert_eq!(e.to_string(), "output positions has 9 entries, expected 10");
/// ```
#[derive(Debug, Error, Clone, Copy, PartialEq, Eq, Hash)]
#[error("{what} has {got} entries, expected {expected}")]
pub struct LengthMismatch {
    /// Which slice or array ("pose", "output positions", "contact weights", …).
    pub what: &'static str,
    /// Its length.
    pub got: usize,
    /// The length it must have.
    pub expected: usize,
}

impl LengthMismatch {
    /// `what` has `got` entries where `expected` are needed.
    pub const fn new(what: &'static str, got: usize, expected: usize) -> Self {
        Self { what, got, expected }
    }

    /// `Ok` when `got == expected`, otherwise the mismatch (which `?` converts into any
    /// error enum with a `WrongLength` variant).
    ///
    /// # Errors
    /// The mismatch, when the lengths differ.
    pub const fn check(what: &'static str, got: usize, expected: usize) -> Result<(), Self> {
        if got == expected { Ok(()) } else { Err(Self::new(what, got, expected)) }
    }
}

/// Why a [`crate::Skeleton`] could not be built.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum SkeletonError {
    /// A joint names a parent index that does not exist.
    #[error("joint {joint} ({name:?}) has parent {parent}, but there are only {count} joints")]
    ParentOutOfRange {
        /// Index of the joint in the source order.
        joint: usize,
        /// Its name.
        name: String,
        /// The parent index it names.
        parent: usize,
        /// Number of joints.
        count: usize,
    },
    /// The parent links form a cycle, so there is no root above these joints.
    #[error("joint {joint} ({name:?}) is part of a parent cycle")]
    Cycle {
        /// Index (source order) of one joint on the cycle.
        joint: usize,
        /// Its name.
        name: String,
    },
    /// A rest or bind transform has a NaN or infinite component.
    #[error("joint {joint} ({name:?}) has a non-finite {what} transform")]
    NonFinite {
        /// Index of the joint.
        joint: usize,
        /// Its name.
        name: String,
        /// Which transform: "rest", "bind" or "inverse bind".
        what: &'static str,
    },
    /// A per-joint array does not have the skeleton's joint count (`expected`).
    #[error("{0} (one per skeleton joint)")]
    WrongLength(#[from] LengthMismatch),
    /// More joints than the runtime supports (joint indices are stored as `u16`).
    #[error("{count} joints is more than the supported {max}")]
    TooManyJoints {
        /// Joint count asked for.
        count: usize,
        /// The limit.
        max: usize,
    },
}

/// Why a [`crate::Track`] could not be built.
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

/// Why a [`crate::Clip`] could not be built or sampled.
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
}

/// Why a pose operation could not run.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum PoseError {
    /// A slice has the wrong length.
    #[error(transparent)]
    WrongLength(#[from] LengthMismatch),
    /// A skin names a joint the skeleton or pose does not have.
    #[error("skin joint {index} is skeleton joint {joint}, but there are only {count}")]
    JointOutOfRange {
        /// Index in the skin's joint list.
        index: usize,
        /// The joint it names.
        joint: usize,
        /// Joint count.
        count: usize,
    },
}

/// Why skinning data was rejected.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum SkinningError {
    /// Joint and weight arrays disagree, or are not a multiple of the influence count.
    #[error("influences: {0}")]
    Layout(String),
    /// A vertex references a joint the palette does not have (with a non-zero weight).
    #[error("vertex {vertex} influence {slot} uses joint {joint}, but the skin has {count} joints")]
    JointOutOfRange {
        /// Vertex index.
        vertex: usize,
        /// Influence slot.
        slot: usize,
        /// Joint index.
        joint: usize,
        /// Joints in the skin.
        count: usize,
    },
    /// A weight is negative, NaN or infinite.
    #[error("vertex {vertex} influence {slot} has weight {weight}, which is negative or not finite")]
    BadWeight {
        /// Vertex index.
        vertex: usize,
        /// Influence slot.
        slot: usize,
        /// The weight.
        weight: f32,
    },
    /// The palette is shorter than the joints the influences use.
    #[error("palette has {got} entries, the influences use joints up to {needed}")]
    PaletteTooShort {
        /// Palette length.
        got: usize,
        /// Smallest acceptable length.
        needed: usize,
    },
    /// Input and output slices disagree in length.
    #[error(transparent)]
    WrongLength(#[from] LengthMismatch),
}
