//! Aim / look-at for one joint.

use crate::chain::renormalize_near_unit4;
use crate::error::{IkError, check_finite_vec};
use anim_math::simd::{F4, Plain};
use anim_math::{Quat, Transform, Vec3, quat};

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
    // `transform_point` and the new local, parent⁻¹ · world, with each quaternion and
    // vector in one 4-lane register (a product or a rotation in a dozen instructions).
    let pr = F4::quat(&parent_world.rotation);
    let position = pr
        .rotate_add(
            F4::vec3(&parent_world.scale).mul(F4::vec3(&joint.translation)),
            F4::vec3(&parent_world.translation),
            Plain,
        )
        .to_vec3();
    // The joint's current up is only needed when world_up gives no direction.
    let Some(world) =
        aim_world(&position, target, &(f, u, s), world_up, || parent_world.rotation * (joint.rotation * u))
    else {
        return Ok(false);
    };
    renormalize_near_unit4(pr.conj().qmul(F4::quat(&world), Plain)).store_quat(&mut joint.rotation);
    Ok(true)
}

/// The world rotation that aims the frame `(f, u, s)` from `position` at `target` with its
/// up towards `world_up` (or towards `current_up()`, the joint's up in world space now,
/// when `world_up` gives no direction); `None` when the target is on the joint. The one
/// algorithm behind [`aim`] and [`aim_correction`].
#[inline]
fn aim_world(
    position: &Vec3,
    target: &Vec3,
    (f, u, s): &(Vec3, Vec3, Vec3),
    world_up: &Vec3,
    current_up: impl FnOnce() -> Vec3,
) -> Option<Quat> {
    let to_target = target - position;
    // "On the joint" relative to where the two points are (both finite): closer than a few ulps of
    // their coordinates leaves no direction. Compared squared (no square roots).
    let lt2 = to_target.norm_squared();
    if lt2 <= 1e-12 * position.norm_squared().max(target.norm_squared()) {
        return None;
    }
    let (fw, uw) = match tilted_up(&to_target, lt2, world_up) {
        Some(axes) => axes,
        None => {
            let fw = to_target * (1.0 / lt2.sqrt());
            let uw = pick_up(world_up, &fw)
                .or_else(|| pick_up(&current_up(), &fw))
                .unwrap_or_else(|| quat::any_orthogonal(&fw));
            (fw, uw)
        }
    };
    let sw = fw.cross(&uw);
    // The world rotation takes the local frame (f, u, s) onto (fw, uw, sw): the matrix
    // [fw uw sw]·[f u s]ᵀ, turned into a quaternion without building nalgebra types.
    let m = |r: usize, c: usize| fw[r] * f[c] + uw[r] * u[c] + sw[r] * s[c];
    Some(quat_from_rotation([[m(0, 0), m(0, 1), m(0, 2)], [m(1, 0), m(1, 1), m(1, 2)], [m(2, 0), m(2, 1), m(2, 2)]]))
}

/// The job alone: the same aim as [`aim`] for a joint already in model (or world) space,
/// at `position` with model-space `rotation`, returning the local correction (multiply the
/// joint's local rotation by it on the right, `local · correction`) instead of writing the
/// joint; `None` when the target is on the joint. All inputs are in the joint's space
/// (model or world) except `forward` and `up`, which are joint-local axes as for [`aim`].
/// The correction is unit up to rounding (not renormalized). Allocates nothing.
///
/// # Errors
/// As [`aim`].
pub fn aim_correction(
    position: &Vec3,
    rotation: &Quat,
    target: &Vec3,
    forward: &Vec3,
    up: &Vec3,
    world_up: &Vec3,
) -> Result<Option<Quat>, IkError> {
    check_finite_vec("goal", target)?;
    check_finite_vec("forward axis", forward)?;
    check_finite_vec("up axis", up)?;
    check_finite_vec("world up", world_up)?;
    let Some(frame) = frame(forward, up) else {
        return Err(IkError::InvalidSetting { what: "aim forward/up axes (zero or parallel)", value: 0.0 });
    };
    // New local = parent⁻¹·world = local·(rotation⁻¹·world), as local = parent⁻¹·rotation.
    Ok(aim_world(position, target, &frame, world_up, || rotation * frame.1).map(|w| conj_mul(rotation, &w)))
}

/// The unit aim direction and up axis, `(d/|d|, p/|p|)` with `p = |d|²·w − d·(w·d)` (the
/// part of `w` orthogonal to `d`, scaled by `|d|²`), when `w` leans off `d` by more than
/// about 6° (sin² > 1e-2) and nothing overflows; `None` otherwise, for [`pick_up`]'s
/// careful path. `lt2` is `|d|²`.
///
/// No step waits on a square root: the two lengths are independent, so their square roots
/// and divisions overlap, where normalizing `d` first and projecting `w` on the result puts
/// two of each in a row. One projection leaves `p` off orthogonal to `d` by rounding of
/// the order of ε/sin (a few 1e-6 rad at worst above 6°), which [`pick_up`]'s second
/// projection exists for when sin is small.
#[inline(always)]
fn tilted_up(d: &Vec3, lt2: f32, w: &Vec3) -> Option<(Vec3, Vec3)> {
    let (lw2, wd) = (w.norm_squared(), w.dot(d));
    let p = w * lt2 - d * wd;
    let lp2 = p.norm_squared();
    // sin² of the angle between w and d is lp2 / (lt2²·lw2). Overflowing products (huge
    // lengths) and ones near f32's smallest normal (tiny ones, where the squares lose their
    // digits) fail the test, as does a zero w.
    let scale = lt2 * lt2 * lw2;
    if scale.is_finite() && scale > 1e-30 && lp2.is_finite() && lp2 > 1e-2 * scale {
        Some((d * (1.0 / lt2.sqrt()), p * (1.0 / lp2.sqrt())))
    } else {
        None
    }
}

/// The part of `v` orthogonal to the unit `fw`, normalized, if `v` leans off `fw` by more
/// than 1e-4 rad; `None` for a zero, non-finite or (near-)parallel `v`. The test is on the
/// direction of `v`, not its length, and the projection is taken twice: once leaves
/// rounding of the size of `v` along `fw`, which is not small next to a short remainder.
#[inline]
fn pick_up(v: &Vec3, fw: &Vec3) -> Option<Vec3> {
    let lv2 = v.norm_squared();
    if !(lv2 > 0.0 && lv2.is_finite()) {
        return None;
    }
    // An already-unit v (to a few ulps) is not normalized again.
    let v = if (lv2 - 1.0).abs() <= UNIT_TOLERANCE { *v } else { v * (1.0 / lv2.sqrt()) };
    let p = v - fw * v.dot(fw);
    if p.norm_squared() > 1e-8 {
        let p = p - fw * p.dot(fw);
        Some(p * (1.0 / p.norm()))
    } else {
        None
    }
}

/// `p⁻¹·q` for unit quaternions (the conjugate of `p` times `q`), written out.
#[inline(always)]
fn conj_mul(p: &Quat, q: &Quat) -> Quat {
    let (a, b) = (p.as_ref(), q.as_ref());
    let (pw, px, py, pz) = (a.w, -a.i, -a.j, -a.k);
    Quat::new_unchecked(nalgebra::Quaternion::new(
        pw * b.w - px * b.i - py * b.j - pz * b.k,
        pw * b.i + px * b.w + py * b.k - pz * b.j,
        pw * b.j - px * b.k + py * b.w + pz * b.i,
        pw * b.k + px * b.j - py * b.i + pz * b.w,
    ))
}

/// The unit quaternion of a rotation matrix (rows), by the largest of the four
/// `4·q²` terms (Shepperd's method: one square root, no cancellation).
#[inline]
fn quat_from_rotation(r: [[f32; 3]; 3]) -> Quat {
    let tr = r[0][0] + r[1][1] + r[2][2];
    let (w, x, y, z) = if tr > 0.0 {
        let s = 2.0 * (1.0 + tr).sqrt();
        let is = 1.0 / s;
        (0.25 * s, (r[2][1] - r[1][2]) * is, (r[0][2] - r[2][0]) * is, (r[1][0] - r[0][1]) * is)
    } else if r[0][0] > r[1][1] && r[0][0] > r[2][2] {
        let s = 2.0 * (1.0 + r[0][0] - r[1][1] - r[2][2]).sqrt();
        let is = 1.0 / s;
        ((r[2][1] - r[1][2]) * is, 0.25 * s, (r[0][1] + r[1][0]) * is, (r[0][2] + r[2][0]) * is)
    } else if r[1][1] > r[2][2] {
        let s = 2.0 * (1.0 + r[1][1] - r[0][0] - r[2][2]).sqrt();
        let is = 1.0 / s;
        ((r[0][2] - r[2][0]) * is, (r[0][1] + r[1][0]) * is, 0.25 * s, (r[1][2] + r[2][1]) * is)
    } else {
        let s = 2.0 * (1.0 + r[2][2] - r[0][0] - r[1][1]).sqrt();
        let is = 1.0 / s;
        ((r[1][0] - r[0][1]) * is, (r[0][2] + r[2][0]) * is, (r[1][2] + r[2][1]) * is, 0.25 * s)
    };
    Quat::new_unchecked(nalgebra::Quaternion::new(w, x, y, z))
}

/// How far a squared length may be from 1 for the vector to count as unit (a few ulps).
const UNIT_TOLERANCE: f32 = 4.0 * f32::EPSILON;

/// An orthonormal frame (forward, up, side) from a forward and a rough up axis; `None`
/// when either is zero or they are parallel within 1e-4 rad (lengths do not matter).
#[inline(always)]
fn frame(forward: &Vec3, up: &Vec3) -> Option<(Vec3, Vec3, Vec3)> {
    let (lf2, lu2) = (forward.norm_squared(), up.norm_squared());
    if !(lf2 > 0.0 && lu2 > 0.0 && lf2.is_finite() && lu2.is_finite()) {
        return None;
    }
    // Unit axes at right angles (the usual case: two of the joint's axes) are the frame
    // already; no square root.
    let unit = |l2: f32| (l2 - 1.0).abs() <= UNIT_TOLERANCE;
    if unit(lf2) && unit(lu2) && forward.dot(up) == 0.0 {
        return Some((*forward, *up, forward.cross(up)));
    }
    // Reciprocals, then products: one division a vector instead of three.
    let f = forward * (1.0 / lf2.sqrt());
    let u = up * (1.0 / lu2.sqrt());
    let u = u - f * u.dot(&f);
    if u.norm_squared() <= 1e-8 {
        return None;
    }
    let u = u - f * u.dot(&f);
    let u = u * (1.0 / u.norm());
    Some((f, u, f.cross(&u)))
}

/// [`aim`] for skeleton joint `joint` of `pose`: its parent's world transform is found
/// from the pose and `model_to_world`. Returns `false` when the target is on the joint.
///
/// # Errors
/// A joint out of range, a pose that does not match the skeleton, or as [`aim`].
#[allow(clippy::too_many_arguments)]
pub fn aim_joint(
    skeleton: &anim_core::pose::Skeleton,
    pose: &mut anim_core::pose::Pose,
    joint: usize,
    model_to_world: &Transform,
    target: &Vec3,
    forward: &Vec3,
    up: &Vec3,
    world_up: &Vec3,
) -> Result<bool, IkError> {
    pose.check_skeleton(skeleton.id(), skeleton.len())?;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Shepperd's conversion against nalgebra's over rotations that take each of its four
    /// branches (trace positive, and each diagonal entry the largest).
    #[test]
    fn quaternion_from_matrix_matches_nalgebra() {
        let mut worst = 0.0f32;
        for i in 0..4000 {
            let f = i as f32;
            let axis =
                nalgebra::Unit::new_normalize(Vec3::new((f * 0.37).sin(), (f * 0.71).cos(), (f * 0.13).sin() + 0.1));
            let q = Quat::from_axis_angle(&axis, (f * 0.0123) % std::f32::consts::TAU);
            let m = q.to_rotation_matrix().into_inner();
            let r = [
                [m[(0, 0)], m[(0, 1)], m[(0, 2)]],
                [m[(1, 0)], m[(1, 1)], m[(1, 2)]],
                [m[(2, 0)], m[(2, 1)], m[(2, 2)]],
            ];
            worst = worst.max(quat_from_rotation(r).angle_to(&q));
            let p = Quat::from_euler_angles(f * 0.01, f * 0.02, -f * 0.03);
            worst = worst.max(conj_mul(&p, &q).angle_to(&(p.inverse() * q)));
        }
        assert!(worst < 1e-3, "{worst}");
    }

    /// The direct axes of a clearly tilted world up ([`tilted_up`], one projection) agree
    /// with the careful construction (normalize, then [`pick_up`]'s two projections) over
    /// aim and up vectors of lengths 1e-4 to 1e4, and are orthonormal to the same
    /// tolerance; up vectors tilted less than about 6° off the aim are left to the careful
    /// path.
    #[test]
    fn tilted_up_matches_the_careful_construction() {
        let (mut worst, mut taken) = (0.0f32, 0);
        for i in 0..20_000 {
            let f = i as f32;
            let d = Vec3::new((f * 0.37).sin(), (f * 0.71).cos(), (f * 0.13).sin() + 0.05)
                * 10f32.powf(4.0 * (f * 0.017).sin());
            let w = Vec3::new((f * 0.29).cos(), (f * 0.53).sin(), (f * 0.91).cos() + 0.05)
                * 10f32.powf(4.0 * (f * 0.023).cos());
            let lt2 = d.norm_squared();
            let Some((fw, uw)) = tilted_up(&d, lt2, &w) else {
                let fw0 = d.normalize();
                let sin = (w.normalize() - fw0 * w.normalize().dot(&fw0)).norm();
                assert!(sin < 0.11, "{i}: up {sin} rad off the aim left to the careful path");
                continue;
            };
            taken += 1;
            let fw0 = d * (1.0 / lt2.sqrt());
            let uw0 = pick_up(&w, &fw0).expect("an up tilted by more than 6°");
            worst = worst.max((fw - fw0).norm()).max((uw - uw0).norm());
            worst = worst.max(fw.dot(&uw).abs()).max((uw.norm() - 1.0).abs()).max((fw.norm() - 1.0).abs());
        }
        assert!(worst < 5e-6, "{worst}");
        assert!(taken > 18_000, "{taken}");
        assert!(tilted_up(&Vec3::z(), 1.0, &Vec3::new(0.0, 0.09, 1.0)).is_none());
        assert!(tilted_up(&Vec3::z(), 1.0, &Vec3::new(0.0, 0.11, 1.0)).is_some());
        // Lengths whose squares overflow or leave the normal range take the careful path.
        assert!(tilted_up(&(Vec3::z() * 1e13), 1e26, &Vec3::y()).is_none());
        assert!(tilted_up(&(Vec3::z() * 1e-8), 1e-16, &Vec3::y()).is_none());
    }

    /// The job alone and [`aim`] are one algorithm: the correction applied to the local
    /// rotation gives the rotation `aim` writes, and the joint's forward then points at
    /// the target (checked on the rebuilt joint).
    #[test]
    fn correction_matches_aim() {
        let parent =
            Transform::new(Vec3::new(0.0, 1.6, 0.05), Quat::from_euler_angles(0.1, 0.3, -0.05), Vec3::repeat(1.0));
        let head =
            Transform::new(Vec3::new(0.0, 0.12, 0.02), Quat::from_euler_angles(-0.2, 0.1, 0.0), Vec3::repeat(1.0));
        let world = parent.combine(&head);
        for i in 0..300 {
            let f = i as f32;
            let target = Vec3::new(2.0 * (f * 0.37).sin(), 1.5 + (f * 0.11).cos(), 1.7 + 1.2 * (f * 0.23).sin());
            for (forward, up, world_up) in [
                (Vec3::z(), Vec3::y(), Vec3::y()),
                (Vec3::new(0.0, 0.3, 2.0), Vec3::new(0.1, 1.0, 0.0), Vec3::new(0.2, 3.0, 0.1)),
                (Vec3::z(), Vec3::y(), Vec3::zeros()),
            ] {
                let mut h = head;
                assert!(aim(&parent, &mut h, &target, &forward, &up, &world_up).unwrap());
                let k = aim_correction(&world.translation, &world.rotation, &target, &forward, &up, &world_up)
                    .unwrap()
                    .expect("target off the joint");
                let local = head.rotation * k;
                assert!(local.angle_to(&h.rotation) < 1e-4, "{i}: {}", local.angle_to(&h.rotation));
                let aimed = parent.combine(&Transform { rotation: local, ..head });
                let dir = aimed.transform_vector(&forward).normalize();
                let want = (target - aimed.translation).normalize();
                assert!((dir - want).norm() < 1e-4, "{i}: {dir} vs {want}");
            }
        }
    }
}
