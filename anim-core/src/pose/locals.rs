//! A pose: one local (parent-relative) transform per joint. The operations that need the
//! hierarchy (model-space transforms and matrices) are in [`super::hierarchy`].

use super::id::SkeletonId;
use crate::length::LengthMismatch;
use anim_math::Transform;
use thiserror::Error;

/// A pose: one local (parent-relative) transform per joint, in skeleton order.
///
/// A pose holds no hierarchy: the operations that need one take the
/// [`Skeleton`](super::Skeleton), so one skeleton serves any number of poses (instances,
/// blend inputs, layers). A pose cloned from a skeleton's rest or bind pose remembers that
/// skeleton's [`SkeletonId`], and the operations that take a skeleton refuse another one
/// ([`PoseError::SkeletonMismatch`]); a pose built from bare transforms
/// ([`Pose::from_locals`], [`Pose::identity`]) has no id and is checked by length only.
/// Equality compares the transforms only.
#[derive(Clone, Debug, Default)]
pub struct Pose {
    locals: Vec<Transform>,
    skeleton: Option<SkeletonId>,
}

impl PartialEq for Pose {
    fn eq(&self, other: &Self) -> bool {
        self.locals == other.locals
    }
}

impl Pose {
    /// A pose from local transforms (skeleton order).
    pub fn from_locals(locals: Vec<Transform>) -> Self {
        Self { locals, skeleton: None }
    }

    /// A pose of `joints` identity transforms.
    pub fn identity(joints: usize) -> Self {
        Self { locals: vec![Transform::IDENTITY; joints], skeleton: None }
    }

    /// The skeleton this pose was made for, when known (see the type's docs).
    #[inline]
    pub fn skeleton_id(&self) -> Option<SkeletonId> {
        self.skeleton
    }

    /// Marks the pose as made for the skeleton `id` (a pose of the skeleton's joint count,
    /// built from bare transforms).
    #[must_use]
    pub fn with_skeleton_id(mut self, id: SkeletonId) -> Self {
        self.skeleton = Some(id);
        self
    }

    /// Checks that this pose fits a skeleton of `joints` joints with id `id`: the same
    /// length, and the same id when the pose knows one.
    ///
    /// # Errors
    /// [`PoseError::WrongLength`] or [`PoseError::SkeletonMismatch`].
    pub fn check_skeleton(&self, id: SkeletonId, joints: usize) -> Result<(), PoseError> {
        LengthMismatch::check("pose", self.len(), joints)?;
        match self.skeleton {
            Some(own) if own != id => Err(PoseError::SkeletonMismatch { what: "pose", joints: self.len() }),
            _ => Ok(()),
        }
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
    /// Data made for one skeleton met another: a pose, skin, runtime clip or set of model
    /// matrices of another skeleton than the one it is combined with.
    #[error(
        "{what} was made for another skeleton (of {joints} joints) than the one it is used with: skins, \
         runtime clips and poses work only with the skeleton they were built for (a trimmed runtime \
         skeleton comes with its own remapped skins and clips)"
    )]
    SkeletonMismatch {
        /// What was mixed up: "pose", "skin", "model matrices", "runtime clip".
        what: &'static str,
        /// The joint count of the skeleton it was made for.
        joints: usize,
    },
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
