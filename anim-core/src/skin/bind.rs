//! A skin: the joints a mesh is bound to and their inverse bind matrices.

use crate::length::LengthMismatch;
use crate::pose::{PoseError, Skeleton, SkeletonId};
use anim_math::{Mat4, Transform};

/// A skin: the joints a mesh is bound to, and their inverse bind matrices.
///
/// Meshes index joints through the skin (index `i` means `joints()[i]`), as glTF does, so
/// several skins can share one skeleton with their own inverse binds. For a single-skin
/// character built in code, [`Skin::from_skeleton`] binds every joint with the skeleton's
/// inverse bind matrices.
///
/// A skin belongs to the skeleton it was made for: it keeps that skeleton's
/// [`SkeletonId`] and joint count, and the palette functions refuse model matrices of
/// another joint count ([`PoseError::SkeletonMismatch`]), the jobs that take a skeleton
/// refuse another skeleton.
#[derive(Clone, Debug)]
pub struct Skin {
    joints: Vec<usize>,
    inverse_bind: Vec<Mat4>,
    inverse_bind_transforms: Vec<Transform>,
    skeleton: SkeletonId,
    skeleton_len: usize,
}

impl Skin {
    /// A skin over `joints` (skeleton indices) with one inverse bind matrix each.
    ///
    /// # Errors
    /// A joint out of the skeleton's range, or a count mismatch.
    pub fn new(joints: Vec<usize>, inverse_bind: Vec<Mat4>, skeleton: &Skeleton) -> Result<Self, PoseError> {
        LengthMismatch::check("inverse bind matrices", inverse_bind.len(), joints.len())?;
        if let Some((index, &joint)) = joints.iter().enumerate().find(|(_, j)| **j >= skeleton.len()) {
            return Err(PoseError::JointOutOfRange { index, joint, count: skeleton.len() });
        }
        let inverse_bind_transforms = inverse_bind.iter().map(Transform::from_matrix).collect();
        Ok(Self {
            joints,
            inverse_bind,
            inverse_bind_transforms,
            skeleton: skeleton.id(),
            skeleton_len: skeleton.len(),
        })
    }

    /// Every joint of the skeleton, in skeleton order, with the skeleton's inverse binds.
    pub fn from_skeleton(skeleton: &Skeleton) -> Self {
        Self::new((0..skeleton.len()).collect(), skeleton.inverse_bind().to_vec(), skeleton)
            .expect("skeleton joints and inverse binds are consistent by construction")
    }

    /// The skeleton this skin was made for.
    #[inline]
    pub fn skeleton_id(&self) -> SkeletonId {
        self.skeleton
    }

    /// The joint count of the skeleton this skin was made for: the length model matrices
    /// must have to build its palette.
    #[inline]
    pub fn skeleton_len(&self) -> usize {
        self.skeleton_len
    }

    /// Checks that this skin was made for `skeleton`.
    ///
    /// # Errors
    /// [`PoseError::SkeletonMismatch`] when it was made for another one.
    pub fn check_skeleton(&self, skeleton: &Skeleton) -> Result<(), PoseError> {
        if self.skeleton == skeleton.id() {
            Ok(())
        } else {
            Err(PoseError::SkeletonMismatch { what: "skin", joints: self.skeleton_len })
        }
    }

    /// Checks that `model` matrices (one per joint of the skeleton they were computed for)
    /// fit this skin's skeleton: the one check the palette functions run per call. Model
    /// matrices carry no identity, so this is their length.
    ///
    /// # Errors
    /// [`PoseError::SkeletonMismatch`] for another joint count.
    #[inline]
    pub fn check_model(&self, model: &[Mat4]) -> Result<(), PoseError> {
        if model.len() == self.skeleton_len {
            Ok(())
        } else {
            Err(PoseError::SkeletonMismatch { what: "model matrices", joints: model.len() })
        }
    }

    /// Number of joints in the skin (the palette length).
    #[inline]
    pub fn len(&self) -> usize {
        self.joints.len()
    }

    /// True for a skin without joints.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.joints.is_empty()
    }

    /// Skeleton index of each skin joint.
    #[inline]
    pub fn joints(&self) -> &[usize] {
        &self.joints
    }

    /// Inverse bind matrix of each skin joint.
    #[inline]
    pub fn inverse_bind(&self) -> &[Mat4] {
        &self.inverse_bind
    }

    /// Inverse bind matrices decomposed into transforms (for the transform skinning path).
    #[inline]
    pub fn inverse_bind_transforms(&self) -> &[Transform] {
        &self.inverse_bind_transforms
    }
}
