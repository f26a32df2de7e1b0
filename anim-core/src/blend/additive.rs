//! Additive animation (the book's chapter 12): a pose minus a reference ("base") pose is a
//! delta that can be added on top of any other pose, e.g. a lean on top of a walk.
//!
//! ```text
//! out.translation = in.translation + (add.translation − base.translation)
//! out.scale       = in.scale       + (add.scale       − base.scale)
//! out.rotation    = normalize(add · base⁻¹ · in)      (nalgebra / Hamilton order)
//! ```
//!
//! # Quaternion order
//! The book writes the rotation as `in * (inverse(base) * add)`, but its quaternion
//! `operator*` is defined so that `p * q` applies `p` first and then `q` (its
//! `combine(parent, child)` computes `child.rotation * parent.rotation`). nalgebra's
//! `p * q` is the Hamilton product, which applies `q` first. This module keeps the
//! book's **behaviour**, which in nalgebra is `add * base.inverse() * in`: the input
//! rotation is applied first, then the base is removed and the additive applied, both
//! in the joint's parent frame. With `add = base` the result is exactly `in`. The tests
//! check the formula against rotation matrices built independently.

use super::mix::{BlendError, check_pose, joint_range};
use crate::clip::{Clip, ClipError, TimePolicy};
use crate::pose::{Pose, Skeleton};
use anim_math::{Quat, Transform, quat};

/// The book's `MakeAdditivePose`: the skeleton's rest pose with `clip` sampled at its
/// start time. Call it once at load time; the result is the `base` of [`add`].
///
/// # Errors
/// The clip animates a joint the skeleton lacks.
pub fn make_additive_base(skeleton: &Skeleton, clip: &Clip) -> Result<Pose, ClipError> {
    make_additive_base_at(skeleton, clip, clip.start_time())
}

/// Like [`make_additive_base`], sampling the clip at `time` (clamped into the clip).
///
/// # Errors
/// A non-finite time, or the clip animates a joint the skeleton lacks.
pub fn make_additive_base_at(skeleton: &Skeleton, clip: &Clip, time: f32) -> Result<Pose, ClipError> {
    let mut pose = skeleton.rest_pose().clone();
    clip.sample(time, TimePolicy::Clamp, &mut pose)?;
    Ok(pose)
}

/// The additive formula for one joint at full weight.
#[inline]
#[must_use]
pub fn add_transform(input: &Transform, additive: &Transform, base: &Transform) -> Transform {
    let delta = additive.rotation * base.rotation.inverse();
    Transform {
        translation: input.translation + (additive.translation - base.translation),
        rotation: Quat::new_normalize((delta * input.rotation).into_inner()),
        scale: input.scale + (additive.scale - base.scale),
    }
}

/// The additive formula for one joint with the delta scaled by `weight` (`0` gives
/// `input`, `1` gives [`add_transform`]); the rotation delta is nlerped from the identity.
#[inline]
#[must_use]
pub fn add_transform_weighted(input: &Transform, additive: &Transform, base: &Transform, weight: f32) -> Transform {
    let delta = quat::nlerp(&Quat::identity(), &(additive.rotation * base.rotation.inverse()), weight);
    Transform {
        translation: input.translation + (additive.translation - base.translation) * weight,
        rotation: Quat::new_normalize((delta * input.rotation).into_inner()),
        scale: input.scale + (additive.scale - base.scale) * weight,
    }
}

/// The book's `Add(out, in, add, base, root)`: for every joint of the subtree under `root`
/// (every joint when `None`), `out = in + (add − base)` as described in the
/// [module docs](self). Joints outside the subtree keep whatever `out` held. For the
/// in-place form (`out` = `in`) use [`add_in_place`].
///
/// # Errors
/// A pose whose length differs from the skeleton's, or a root out of range.
pub fn add(
    out: &mut Pose,
    input: &Pose,
    additive: &Pose,
    base: &Pose,
    root: Option<usize>,
    skeleton: &Skeleton,
) -> Result<(), BlendError> {
    check_pose("output pose", out, skeleton)?;
    check_pose("input pose", input, skeleton)?;
    check_pose("additive pose", additive, skeleton)?;
    check_pose("base pose", base, skeleton)?;
    let range = joint_range(root, skeleton)?;
    let (i, a, b) = (&input.locals()[range.clone()], &additive.locals()[range.clone()], &base.locals()[range.clone()]);
    for (((o, ti), ta), tb) in out.locals_mut()[range].iter_mut().zip(i).zip(a).zip(b) {
        *o = add_transform(ti, ta, tb);
    }
    Ok(())
}

/// In-place additive layer with a weight: `pose = pose + weight · (add − base)` over the
/// subtree under `root` (or every joint). `weight = 1` is [`add`] with `out` = `in`;
/// a weight between 0 and 1 applies part of the delta (a joystick-driven lean).
///
/// # Errors
/// A pose of the wrong length, a root out of range, or a non-finite weight.
pub fn add_in_place(
    pose: &mut Pose,
    additive: &Pose,
    base: &Pose,
    weight: f32,
    root: Option<usize>,
    skeleton: &Skeleton,
) -> Result<(), BlendError> {
    check_pose("pose", pose, skeleton)?;
    check_pose("additive pose", additive, skeleton)?;
    check_pose("base pose", base, skeleton)?;
    if !weight.is_finite() {
        return Err(BlendError::NonFiniteWeight { what: "additive weight", value: weight });
    }
    let range = joint_range(root, skeleton)?;
    let (a, b) = (&additive.locals()[range.clone()], &base.locals()[range.clone()]);
    for ((o, ta), tb) in pose.locals_mut()[range].iter_mut().zip(a).zip(b) {
        *o = add_transform_weighted(o, ta, tb, weight);
    }
    Ok(())
}
