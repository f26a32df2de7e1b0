//! A pose: one local (parent-relative) transform per joint. The operations that need the
//! hierarchy (model-space transforms and matrices) are in [`super::hierarchy`].

use crate::length::LengthMismatch;
use anim_math::Transform;
use thiserror::Error;

/// A pose: one local (parent-relative) transform per joint, in skeleton order.
///
/// A pose holds no hierarchy: the operations that need one take the [`Skeleton`](super::Skeleton), so one
/// skeleton serves any number of poses (instances, blend inputs, layers).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Pose {
    locals: Vec<Transform>,
}

impl Pose {
    /// A pose from local transforms (skeleton order).
    pub fn from_locals(locals: Vec<Transform>) -> Self {
        Self { locals }
    }

    /// A pose of `joints` identity transforms.
    pub fn identity(joints: usize) -> Self {
        Self { locals: vec![Transform::IDENTITY; joints] }
    }

    /// Number of joints.
    #[inline]
    pub fn len(&self) -> usize {
        self.locals.len()
    }

    /// True when the pose has no joints.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.locals.is_empty()
    }

    /// The local transforms.
    #[inline]
    pub fn locals(&self) -> &[Transform] {
        &self.locals
    }

    /// The local transforms, writable.
    #[inline]
    pub fn locals_mut(&mut self) -> &mut [Transform] {
        &mut self.locals
    }

    /// Local transform of one joint.
    #[inline]
    pub fn local(&self, joint: usize) -> Option<&Transform> {
        self.locals.get(joint)
    }
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
