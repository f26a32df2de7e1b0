//! Pose blending (the book's chapter 12): a joint-local mix of two poses, optionally
//! limited to the subtree under one joint, with per-joint weight masks as an extension.
//!
//! Translation and scale are lerped, rotations use the neighbourhood-correct normalized
//! lerp of [`Transform::mix`]. Because a [`Skeleton`] stores joints parents-first in
//! depth-first order, the subtree under a joint is a contiguous range
//! ([`Skeleton::subtree`]), so a subtree blend touches exactly that range and nothing else.
//! Nothing here allocates.
//!
//! ```
//! use anim_core::blend::mix::blend;
//! use anim_core::pose::{JointDesc, Pose, Skeleton};
//! use anim_math::{Transform, Vec3};
//!
//! let skeleton = Skeleton::new(vec![
//!     JointDesc::new("hips", None, Transform::IDENTITY),
//!     JointDesc::new("spine", Some(0), Transform::from_translation(Vec3::y())),
//! ]).unwrap();
//! let a = skeleton.rest_pose().clone();
//! let mut b = a.clone();
//! b.locals_mut()[1].translation = Vec3::new(0.0, 3.0, 0.0);
//! let mut out = a.clone();
//! blend(&mut out, &a, &b, 0.5, None, &skeleton).unwrap();
//! assert_eq!(out.locals()[1].translation, Vec3::new(0.0, 2.0, 0.0));
//! ```

use crate::length::LengthMismatch;
use crate::pose::{Pose, PoseError, Skeleton};
use anim_math::Transform;
use thiserror::Error;

/// Why a blend (or an additive layer) could not run.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum BlendError {
    /// A pose or mask ("output pose", "pose a", "mask", …) does not have the skeleton's
    /// joint count (`expected`).
    #[error("{0} (one per skeleton joint)")]
    WrongLength(#[from] LengthMismatch),
    /// A pose belongs to another skeleton than the one given.
    #[error(transparent)]
    Skeleton(#[from] PoseError),
    /// The blend root is not a joint of the skeleton.
    #[error("blend root {root} is out of range, the skeleton has {count} joints")]
    RootOutOfRange {
        /// The root asked for.
        root: usize,
        /// Joint count.
        count: usize,
    },
    /// The blend factor (or a mask weight) is NaN or infinite.
    #[error("{what} {value} is not finite")]
    NonFiniteWeight {
        /// Which value: "blend factor", "mask weight" or "additive weight".
        what: &'static str,
        /// The value.
        value: f32,
    },
    /// A weight that must lie in `[0, 1]` does not.
    #[error("{what} {value} is outside [0, 1]")]
    WeightOutOfRange {
        /// Which value.
        what: &'static str,
        /// The value.
        value: f32,
    },
}

/// Checks one pose argument against the skeleton: its length, and its skeleton when the
/// pose knows one.
pub(crate) fn check_pose(what: &'static str, pose: &Pose, skeleton: &Skeleton) -> Result<(), BlendError> {
    check_len(what, pose.len(), skeleton)?;
    Ok(pose.check_skeleton(skeleton.id(), skeleton.len())?)
}

/// Checks the length of one pose-sized argument against the skeleton.
pub(crate) fn check_len(what: &'static str, got: usize, skeleton: &Skeleton) -> Result<(), BlendError> {
    Ok(LengthMismatch::check(what, got, skeleton.len())?)
}

/// The joints a blend touches: the whole skeleton, or the subtree under `root`.
pub(crate) fn joint_range(root: Option<usize>, skeleton: &Skeleton) -> Result<std::ops::Range<usize>, BlendError> {
    match root {
        None => Ok(0..skeleton.len()),
        Some(r) if r >= skeleton.len() => Err(BlendError::RootOutOfRange { root: r, count: skeleton.len() }),
        Some(r) => Ok(skeleton.subtree(r)),
    }
}

fn check_weight(what: &'static str, t: f32) -> Result<(), BlendError> {
    if !t.is_finite() {
        return Err(BlendError::NonFiniteWeight { what, value: t });
    }
    Ok(())
}

/// The book's `Blend(out, a, b, t, root)`: for every joint in the subtree under `root`
/// (every joint when `root` is `None`), `out = mix(a, b, t)`; joints outside the subtree
/// keep whatever `out` held. `t = 0` gives `a`, `t = 1` gives `b`; other finite values
/// extrapolate linearly (rotations renormalized).
///
/// The book passes the output as one of the inputs (`Blend(pose, pose, other, …)`); Rust's
/// borrow rules forbid that aliasing, so use [`blend_into`] for the in-place form.
///
/// # Errors
/// A pose whose length differs from the skeleton's, a root out of range, or a non-finite `t`.
pub fn blend(
    out: &mut Pose,
    a: &Pose,
    b: &Pose,
    t: f32,
    root: Option<usize>,
    skeleton: &Skeleton,
) -> Result<(), BlendError> {
    check_pose("output pose", out, skeleton)?;
    check_pose("pose a", a, skeleton)?;
    check_pose("pose b", b, skeleton)?;
    check_weight("blend factor", t)?;
    let range = joint_range(root, skeleton)?;
    let (a, b) = (&a.locals()[range.clone()], &b.locals()[range.clone()]);
    for ((o, ta), tb) in out.locals_mut()[range].iter_mut().zip(a).zip(b) {
        *o = Transform::mix(ta, tb, t);
    }
    Ok(())
}

/// In-place blend: `pose = mix(pose, b, t)` over the subtree under `root` (or every joint).
///
/// # Errors
/// As [`blend`].
pub fn blend_into(
    pose: &mut Pose,
    b: &Pose,
    t: f32,
    root: Option<usize>,
    skeleton: &Skeleton,
) -> Result<(), BlendError> {
    check_pose("pose", pose, skeleton)?;
    check_pose("pose b", b, skeleton)?;
    check_weight("blend factor", t)?;
    let range = joint_range(root, skeleton)?;
    for (o, tb) in pose.locals_mut()[range.clone()].iter_mut().zip(&b.locals()[range]) {
        *o = Transform::mix(o, tb, t);
    }
    Ok(())
}

/// Masked blend (an extension of the book's): joint `i` of the subtree under `root` gets
/// `mix(a, b, t · mask[i])`. A mask of all ones is [`blend`]; a zero weight copies `a`.
/// Joints outside the subtree keep whatever `out` held. `mask` has one weight per joint.
///
/// # Errors
/// As [`blend`], or a mask of the wrong length or with a non-finite weight.
pub fn blend_masked(
    out: &mut Pose,
    a: &Pose,
    b: &Pose,
    t: f32,
    mask: &[f32],
    root: Option<usize>,
    skeleton: &Skeleton,
) -> Result<(), BlendError> {
    check_pose("output pose", out, skeleton)?;
    check_pose("pose a", a, skeleton)?;
    check_pose("pose b", b, skeleton)?;
    check_len("mask", mask.len(), skeleton)?;
    check_weight("blend factor", t)?;
    if let Some(w) = mask.iter().find(|w| !w.is_finite()) {
        return Err(BlendError::NonFiniteWeight { what: "mask weight", value: *w });
    }
    let range = joint_range(root, skeleton)?;
    let (a, b, m) = (&a.locals()[range.clone()], &b.locals()[range.clone()], &mask[range.clone()]);
    for (((o, ta), tb), w) in out.locals_mut()[range].iter_mut().zip(a).zip(b).zip(m) {
        *o = Transform::mix(ta, tb, t * w);
    }
    Ok(())
}

/// Fills `mask` (one weight per joint) with `weight` for the joints of the subtree under
/// `root` and `0` elsewhere: the usual upper-body / lower-body split for [`blend_masked`].
///
/// # Errors
/// A mask of the wrong length or a root out of range.
pub fn subtree_mask(mask: &mut [f32], root: usize, weight: f32, skeleton: &Skeleton) -> Result<(), BlendError> {
    check_len("mask", mask.len(), skeleton)?;
    let range = joint_range(Some(root), skeleton)?;
    for (i, m) in mask.iter_mut().enumerate() {
        *m = if range.contains(&i) { weight } else { 0.0 };
    }
    Ok(())
}
