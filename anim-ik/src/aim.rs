//! Aim / look-at for one joint.

use crate::chain::renormalize;
use crate::error::{IkError, check_finite_vec};
use anim_core::LengthMismatch;
use anim_math::{Mat3, Quat, Transform, Vec3, quat};
use nalgebra::Rotation3;

/// Turns `joint` (a local transform under `parent_world`) so its local `forward` axis
/// points at the world point `target`, and its local `up` axis leans as far towards
/// `world_up` as that allows (the up axis ends in the plane of the aim direction and
/// `world_up`, on `world_up`'s side).
///
/// Returns `false` and leaves the joint as it was when the target is on the joint (no
/// direction). When `world_up` is parallel to the aim direction (within 1e-4 rad,
/// whatever its length) the joint's current up is kept as the reference instead.
/// `forward` and `up` need not be unit or orthogonal (up is made orthogonal to forward)
/// but must not be parallel.
///
/// # Errors
/// A non-finite input, or `forward`/`up` zero or parallel.
pub fn aim(
    parent_world: &Transform,
    joint: &mut Transform,
    target: &Vec3,
    forward: &Vec3,
    up: &Vec3,
    world_up: &Vec3,
) -> Result<bool, IkError> {
    check_finite_vec("goal", target)?;
    check_finite_vec("forward axis", forward)?;
    check_finite_vec("up axis", up)?;
    check_finite_vec("world up", world_up)?;
    let Some((f, u, s)) = frame(forward, up) else {
        return Err(IkError::InvalidSetting { what: "aim forward/up axes (zero or parallel)", value: 0.0 });
    };
    let position = parent_world.transform_point(&joint.translation);
    let to_target = target - position;
    // "On the joint" relative to where the two points are (both finite): closer than a few ulps of
    // their coordinates leaves no direction.
    let lt = to_target.norm();
    if lt <= 1e-6 * position.norm().max(target.norm()) {
        return Ok(false);
    }
    let current_up = parent_world.rotation * joint.rotation * u;
    let fw = to_target / lt;
    // The part of v orthogonal to the aim direction, if v leans off it by more than
    // 1e-4 rad. v is normalized first so the test is about its direction, not its
    // length, and the projection is taken twice: once leaves rounding of the size of v
    // along fw, which is not small next to a short remainder.
    let pick_up = |v: &Vec3| {
        let lv = v.norm();
        if !(lv > 0.0 && lv.is_finite()) {
            return None;
        }
        let v = v / lv;
        let p = v - fw * v.dot(&fw);
        if p.norm_squared() > 1e-8 {
            let p = p - fw * p.dot(&fw);
            Some(p.normalize())
        } else {
            None
        }
    };
    let uw = pick_up(world_up).or_else(|| pick_up(&current_up)).unwrap_or_else(|| quat::any_orthogonal(&fw));
    let sw = fw.cross(&uw);
    let world = Mat3::from_columns(&[fw, uw, sw]) * Mat3::from_columns(&[f, u, s]).transpose();
    let world = Quat::from_rotation_matrix(&Rotation3::from_matrix_unchecked(world));
    joint.rotation = renormalize(parent_world.rotation.inverse() * world);
    Ok(true)
}

/// An orthonormal frame (forward, up, side) from a forward and a rough up axis; `None`
/// when either is zero or they are parallel within 1e-4 rad (lengths do not matter).
fn frame(forward: &Vec3, up: &Vec3) -> Option<(Vec3, Vec3, Vec3)> {
    let (lf, lu) = (forward.norm(), up.norm());
    if !(lf > 0.0 && lu > 0.0 && lf.is_finite() && lu.is_finite()) {
        return None;
    }
    let f = forward / lf;
    let u = up / lu;
    let u = u - f * u.dot(&f);
    if u.norm_squared() <= 1e-8 {
        return None;
    }
    let u = (u - f * u.dot(&f)).normalize();
    Some((f, u, f.cross(&u)))
}

/// [`aim`] for skeleton joint `joint` of `pose`: its parent's world transform is found
/// from the pose and `model_to_world`. Returns `false` when the target is on the joint.
///
/// # Errors
/// A joint out of range, a pose that does not match the skeleton, or as [`aim`].
#[allow(clippy::too_many_arguments)]
pub fn aim_joint(
    skeleton: &anim_core::Skeleton,
    pose: &mut anim_core::Pose,
    joint: usize,
    model_to_world: &Transform,
    target: &Vec3,
    forward: &Vec3,
    up: &Vec3,
    world_up: &Vec3,
) -> Result<bool, IkError> {
    LengthMismatch::check("pose", pose.len(), skeleton.len())?;
    if joint >= skeleton.len() {
        return Err(IkError::JointOutOfRange { joint, count: skeleton.len() });
    }
    let parent = match skeleton.parent(joint) {
        Some(p) => model_to_world.combine(&pose.global(skeleton, p).expect("pose length and joint were checked")),
        None => *model_to_world,
    };
    let mut local = pose.locals()[joint];
    let turned = aim(&parent, &mut local, target, forward, up, world_up)?;
    pose.locals_mut()[joint] = local;
    Ok(turned)
}
