//! A skin: the joints a mesh is bound to and their inverse bind matrices.

use crate::length::LengthMismatch;
use crate::pose::{PoseError, Skeleton};
use anim_math::{Mat4, Transform};

/// A skin: the joints a mesh is bound to, and their inverse bind matrices.
///
/// Meshes index joints through the skin (index `i` means `joints()[i]`), as glTF does, so
/// several skins can share one skeleton with their own inverse binds. For a single-skin
/// character built in code, [`Skin::from_skeleton`] binds every joint with the skeleton's
/// inverse bind matrices.
#[derive(Clone, Debug)]
pub struct Skin {
    joints: Vec<usize>,
    inverse_bind: Vec<Mat4>,
    inverse_bind_transforms: Vec<Transform>,
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
        Ok(Self { joints, inverse_bind, inverse_bind_transforms })
    }

    /// Every joint of the skeleton, in skeleton order, with the skeleton's inverse binds.
    pub fn from_skeleton(skeleton: &Skeleton) -> Self {
        Self::new((0..skeleton.len()).collect(), skeleton.inverse_bind().to_vec(), skeleton)
            .expect("skeleton joints and inverse binds are consistent by construction")
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
