//! Analytic two-bone IK (hip–knee–ankle, shoulder–elbow–wrist) with a pole direction.

use crate::chain::renormalize;
use crate::error::{IkError, check_finite_vec};
use anim_core::pose::{Pose, Skeleton};
use anim_math::{EPSILON, Quat, Transform, Vec3, quat};

/// What a two-bone solve did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TwoBoneResult {
    /// The target was within reach and the end joint now sits on it (within 1e-3 of the
    /// chain's length).
    pub reached: bool,
    /// Distance from the end joint to the target after the solve, measured on the chain
    /// put together again from the rotations written (not predicted from the angles).
    pub distance: f32,
}

/// Solves a two-bone chain by the law of cosines.
///
/// `parent_world` is the world transform of the upper joint's parent; `upper` and
/// `middle` are the local transforms of the upper joint (hip) and of its child (knee), and
/// `end` is the local translation of the middle joint's child (ankle). Their rotations are
/// changed so the ankle lands on `target`:
///
/// 1. the knee angle is set so the hip–ankle distance equals the (clamped) hip–target
///    distance, both joints turning about the normal of the current bend plane (the knee
///    keeps bending the way it bent, and the hip keeps the hip–ankle direction). A
///    straight or fully folded leg has no bend plane: it bends about the plane of the thigh
///    and the `pole`, or about any axis across the thigh without a usable pole;
/// 2. the hip turns the ankle onto the hip–target line;
/// 3. with a `pole` (a world direction), the hip twists about the hip–target line so the
///    knee points towards the pole.
///
/// An unreachable target straightens the leg towards it (`reached = false`); a target
/// closer than `|upper − lower|` folds it as far as the lengths allow. Zero-length bones
/// and a target on the hip only skip the steps that have no direction. "No direction" is
/// judged relative to the lengths involved (a pole of any length, a leg of any size).
/// Allocates nothing.
///
/// # Errors
/// A non-finite target or pole.
pub fn solve_two_bone(
    parent_world: &Transform,
    upper: &mut Transform,
    middle: &mut Transform,
    end: &Vec3,
    target: &Vec3,
    pole: Option<&Vec3>,
) -> Result<TwoBoneResult, IkError> {
    check_finite_vec("goal", target)?;
    if let Some(p) = pole {
        check_finite_vec("pole", p)?;
    }
    let wa = parent_world.combine(upper);
    let wb = wa.combine(middle);
    let a = wa.translation;
    let c = wb.transform_point(end);
    let Turns { total, middle: r_middle, target_distance: lat_raw, reach: scale } =
        world_turns(&a, &wb.translation, &c, target, pole);
    let pr = parent_world.rotation;
    // New local = parent⁻¹ · (world turn · old world); the old worlds are wa and wb.
    upper.rotation = renormalize(pr.inverse() * (total * wa.rotation));
    middle.rotation = renormalize(wa.rotation.inverse() * (r_middle * wb.rotation));

    // The true miss: the chain is put together again from what was written. Only the
    // rotations changed, so the hip's world position and both world scales are reused (the
    // same operations `combine` and `transform_point` would do).
    // (ra·rm)·x = ra·(rm·x): one vector rotation instead of a quaternion product.
    let ra = pr * upper.rotation;
    let c1 = a + ra * (wa.scale.component_mul(&middle.translation) + middle.rotation * wb.scale.component_mul(end));
    let distance = (c1 - target).norm();
    let reached = lat_raw <= scale && distance <= 1e-3 * scale.max(EPSILON);
    Ok(TwoBoneResult { reached, distance })
}

/// The two world-space (model-space) turns of a solve: the hip's, which moves the whole
/// leg, and the knee's, which moves the shin, both about the world origin of their joint.
/// `a`, `b`, `c` are the hip, knee and ankle positions. The one algorithm behind
/// [`solve_two_bone`] and [`two_bone_corrections`]; inputs are finite. Always inlined: out
/// of line (as a default release build of a dependent crate leaves it), its result comes
/// back through memory and is read in other pieces than it was written (a
/// store-forwarding stall).
#[inline(always)]
fn world_turns(a: &Vec3, b: &Vec3, c: &Vec3, target: &Vec3, pole: Option<&Vec3>) -> Turns {
    let (a, b, c) = (*a, *b, *c);
    let ab = b - a;
    let cb = c - b;
    let lab = ab.norm();
    let lcb = cb.norm();
    let at = target - a;
    let lat_raw = at.norm();
    // Every "no direction" test below is relative to the lengths it is about, so a leg in
    // millimetres or kilometres (or a pole of any length) is treated alike.
    let scale = lab + lcb;
    let has_target_dir = lat_raw > 1e-6 * scale && lat_raw > 0.0;

    // Trigonometry-free: every angle is carried as (cos, sin) and turned into a quaternion
    // by half-angle formulas, which keeps the solve at a few square roots.
    let mut r_upper = Quat::identity();
    let mut r_middle = Quat::identity();
    let mut ac1 = c - a;
    if lab > 1e-6 * scale && lcb > 1e-6 * scale && scale > 0.0 {
        let lo = (lab - lcb).abs() + 1e-5 * scale;
        let hi = scale * (1.0 - 1e-5);
        let lat = lat_raw.clamp(lo.min(hi), hi);
        // Reciprocals, then products: one division a vector instead of three.
        let (ilab, ilcb) = (1.0 / lab, 1.0 / lcb);
        let (u, v) = (ab * ilab, cb * ilcb);
        // Bend-plane normal n, exactly orthogonal to the thigh. A bent leg takes it from
        // its bones; a straight or fully folded one (no plane to working precision) from
        // the pole, else from any side. The knee turns about n, so whichever way the
        // normal points the angles below are measured about it, with their sign.
        let bent = u.cross(&v);
        let straight = bent.norm_squared() <= 1e-10;
        let side = if !straight {
            bent
        } else {
            // |p × u| = |p|·sin(angle): a pole within 1e-4 rad of the leg gives no side.
            pole.filter(|p| p.cross(&u).norm_squared() > 1e-8 * p.norm_squared())
                .map_or_else(|| quat::any_orthogonal(&u), |p| p.cross(&u))
        };
        let n = side - u * side.dot(&u);
        let n = n * (1.0 / n.norm());
        // φ: the signed angle from the thigh's direction to the shin's, about n. The new
        // one follows from the law of cosines, |a→c|² = lab² + lcb² + 2·lab·lcb·cos φ,
        // bending the same way as before (a straight leg bends to positive φ).
        // u and v are unit and n is unit and orthogonal to u, so (u·v, n·(u × v)) is a
        // unit pair already (Lagrange's identity; when n is not along u × v, that is
        // below 1e-5 and the pair is (±1, ~0)): no normalization.
        // A straight (or folded) leg has no bend of its own: what `bent` holds is rounding,
        // and its sign must not choose the way the knee goes (against the pole, the twist
        // below would then turn the whole limb half a turn about its axis). Its angle is
        // taken as exactly 0 (or π), within 1e-5 rad of the truth.
        let (cos_0, sin_0) = if straight { (u.dot(&v).signum(), 0.0) } else { (u.dot(&v), n.dot(&bent)) };
        let cos_1 = ((lat * lat - lab * lab - lcb * lcb) * (0.5 * ilab * ilcb)).clamp(-1.0, 1.0);
        let sin_1 = (1.0 - cos_1 * cos_1).max(0.0).sqrt().copysign(if sin_0 < 0.0 { -1.0 } else { 1.0 });
        r_middle = rotation_cos_sin(&n, cos_1 * cos_0 + sin_1 * sin_0, sin_1 * cos_0 - cos_1 * sin_0);
        // The ankle after the knee turn, from the rotated shin itself (not from the
        // intended angle), so that rounding in the angles cannot hide a miss.
        let bent_ac = ab + r_middle * cb;
        // The hip turns about n so the hip–ankle line keeps its direction (the swing
        // below then moves it); a fully folded leg of equal bones has no such line.
        let ac = c - a;
        let m = (ac.norm_squared() * bent_ac.norm_squared()).sqrt();
        if m > 1e-10 * scale * scale {
            let im = 1.0 / m;
            // Both lines lie across n (to rounding), so the pair divided by their lengths
            // is unit already.
            r_upper = rotation_cos_sin(&n, bent_ac.dot(&ac) * im, n.dot(&bent_ac.cross(&ac)) * im);
        }
        ac1 = r_upper * bent_ac;
    }
    // Swing the ankle onto the hip–target line.
    let post =
        if has_target_dir && ac1.norm_squared() > 1e-12 * scale * scale { swing(&ac1, &at) } else { Quat::identity() };
    // The hip's turn so far, which also places the knee (one rotation of the thigh).
    let mut total = post * r_upper;
    // Twist about the hip–target line so the knee faces the pole.
    if let Some(p) = pole
        && has_target_dir
    {
        let axis = at * (1.0 / lat_raw);
        let knee = total * ab;
        let k = knee - axis * knee.dot(&axis);
        let q = p - axis * p.dot(&axis);
        let (k2, q2) = (k.norm_squared(), q.norm_squared());
        if k2 > 1e-10 * lab * lab && q2 > 1e-8 * p.norm_squared() {
            let kq = (k2 * q2).sqrt();
            let ikq = 1.0 / kq;
            total = rotation_cos_sin(&axis, k.dot(&q) * ikq, axis.dot(&k.cross(&q)) * ikq) * total;
        }
    }
    Turns { total, middle: r_middle, target_distance: lat_raw, reach: scale }
}

/// What [`world_turns`] finds: the two world turns, and the lengths the solve measured on
/// the way (for [`TwoBoneResult`]).
struct Turns {
    /// The hip's world turn (bend, swing and pole twist).
    total: Quat,
    /// The knee's world turn.
    middle: Quat,
    /// Hip–target distance.
    target_distance: f32,
    /// Thigh plus shin length.
    reach: f32,
}

/// A two-bone chain in model (or world) space: the three joints' positions and the upper
/// and middle joints' rotations, as read from their model matrices.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TwoBoneJoints {
    /// Position of the upper joint (hip, shoulder).
    pub upper: Vec3,
    /// Position of the middle joint (knee, elbow).
    pub middle: Vec3,
    /// Position of the end joint (ankle, wrist).
    pub end: Vec3,
    /// Model-space rotation of the upper joint.
    pub upper_rotation: Quat,
    /// Model-space rotation of the middle joint.
    pub middle_rotation: Quat,
}

/// The two local corrections of a two-bone solve: multiply each joint's local rotation by
/// its correction on the right (`local · correction`) to solve the chain.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TwoBoneCorrections {
    /// Correction of the upper joint's local rotation.
    pub upper: Quat,
    /// Correction of the middle joint's local rotation.
    pub middle: Quat,
}

/// The job alone: the same solve as [`solve_two_bone`] (same algorithm, same steps, same
/// treatment of straight legs, unreachable targets and poles) from a chain already in model
/// space, returning the two local corrections instead of rebuilding the chain and measuring
/// the miss. `target` and `pole` are in the chain's space. The corrections are unit up to
/// rounding (not renormalized). Allocates nothing.
///
/// # Errors
/// A non-finite target or pole.
pub fn two_bone_corrections(
    joints: &TwoBoneJoints,
    target: &Vec3,
    pole: Option<&Vec3>,
) -> Result<TwoBoneCorrections, IkError> {
    check_finite_vec("goal", target)?;
    if let Some(p) = pole {
        check_finite_vec("pole", p)?;
    }
    let t = world_turns(&joints.upper, &joints.middle, &joints.end, target, pole);
    // A world turn t of a joint with world rotation w is the local correction w⁻¹·t·w:
    // parent⁻¹·(t·w) = local·(w⁻¹·t·w), as local = parent⁻¹·w. That conjugation keeps
    // t's scalar part and turns its vector part by w⁻¹: one vector rotation instead of two
    // quaternion products.
    let local = |w: &Quat, turn: &Quat| {
        let t = turn.quaternion();
        Quat::new_unchecked(nalgebra::Quaternion::from_parts(t.w, w.inverse_transform_vector(&t.imag())))
    };
    Ok(TwoBoneCorrections {
        upper: local(&joints.upper_rotation, &t.total),
        middle: local(&joints.middle_rotation, &t.middle),
    })
}

/// Two-bone IK over three skeleton joints (`upper` → `middle` → `end`, each the parent of
/// the next), working on a pose.
///
/// ```
/// use anim_core::pose::{JointDesc, Skeleton};
/// use anim_ik::TwoBoneIk;
/// use anim_math::{Mat4, Transform, Vec3};
///
/// // A leg: hip 1 up, knee 0.5 below it (slightly forward, so it knows which way to bend),
/// // ankle 0.5 below the knee.
/// let t = |x: f32, y: f32, z: f32| Transform::from_translation(Vec3::new(x, y, z));
/// let skeleton = Skeleton::new(vec![
///     JointDesc::new("hip", None, t(0.0, 1.0, 0.0)),
///     JointDesc::new("knee", Some(0), t(0.0, -0.5, 0.01)),
///     JointDesc::new("ankle", Some(1), t(0.0, -0.5, -0.01)),
/// ])?;
/// let leg = TwoBoneIk::new(&skeleton, 0, 1, 2)?;
/// let mut pose = skeleton.rest_pose().clone();
/// // Crouch: the ankle goes 0.3 up and 0.1 forward; the knee bends.
/// let target = Vec3::new(0.0, 0.3, 0.1);
/// let result = leg.solve(&skeleton, &mut pose, &Transform::IDENTITY, &target, None)?;
/// assert!(result.reached && result.distance < 1e-4);
/// let mut model = vec![Mat4::identity(); 3];
/// pose.local_to_model(&skeleton, &mut model)?;
/// assert!((model[2].column(3).xyz() - target).norm() < 1e-4);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TwoBoneIk {
    /// The upper joint (hip, shoulder).
    pub upper: usize,
    /// The middle joint (knee, elbow).
    pub middle: usize,
    /// The end joint (ankle, wrist).
    pub end: usize,
}

impl TwoBoneIk {
    /// Checks that the three joints exist and are parent, child and grandchild.
    ///
    /// # Errors
    /// A joint out of range or a broken parent link.
    pub fn new(skeleton: &Skeleton, upper: usize, middle: usize, end: usize) -> Result<Self, IkError> {
        for j in [upper, middle, end] {
            if j >= skeleton.len() {
                return Err(IkError::JointOutOfRange { joint: j, count: skeleton.len() });
            }
        }
        if skeleton.parent(middle) != Some(upper) {
            return Err(IkError::NotAChain { parent: upper, child: middle });
        }
        if skeleton.parent(end) != Some(middle) {
            return Err(IkError::NotAChain { parent: middle, child: end });
        }
        Ok(Self { upper, middle, end })
    }

    /// Solves in place on `pose`; `model_to_world` places the skeleton in the world, and
    /// `target` and `pole` are world-space.
    ///
    /// # Errors
    /// A pose that does not match the skeleton, or a non-finite target or pole.
    pub fn solve(
        &self,
        skeleton: &Skeleton,
        pose: &mut Pose,
        model_to_world: &Transform,
        target: &Vec3,
        pole: Option<&Vec3>,
    ) -> Result<TwoBoneResult, IkError> {
        pose.check_skeleton(skeleton.id(), skeleton.len())?;
        let parent = match skeleton.parent(self.upper) {
            Some(p) => pose.global(skeleton, p).expect("pose length was checked"),
            None => Transform::IDENTITY,
        };
        let parent_world = model_to_world.combine(&parent);
        let end = pose.locals()[self.end].translation;
        let locals = pose.locals_mut();
        let mut upper = locals[self.upper];
        let mut middle = locals[self.middle];
        let r = solve_two_bone(&parent_world, &mut upper, &mut middle, &end, target, pole)?;
        locals[self.upper] = upper;
        locals[self.middle] = middle;
        Ok(r)
    }
}

/// The shortest rotation taking the direction of `from` to that of `to` (both non-zero).
/// Past a right angle it goes through a perpendicular: the one-step half-way formula
/// loses the angle to cancellation near a half turn (millimetres over a leg).
fn swing(from: &Vec3, to: &Vec3) -> Quat {
    if from.dot(to) >= 0.0 {
        return quat::from_to(from, to);
    }
    let f = from.normalize();
    let mid = to - f * to.dot(&f);
    let mid = if mid.norm_squared() > 1e-12 * to.norm_squared() { mid } else { quat::any_orthogonal(&f) };
    quat::from_to(&mid, to) * quat::from_to(from, &mid)
}

/// The rotation by the angle with cosine `c` and sine `s` about the unit `axis`, from
/// half-angle formulas (no trigonometric calls). Every caller passes a pair that is unit up
/// to rounding (built from normalized vectors), and every result ends in a renormalized
/// joint rotation, so the pair is not normalized again here; a vanishing pair (no defined
/// angle) gives the identity.
#[inline]
fn rotation_cos_sin(axis: &Vec3, c: f32, s: f32) -> Quat {
    if c * c + s * s < 1e-24 {
        return Quat::identity();
    }
    let c = c.clamp(-1.0, 1.0);
    let half_cos = ((1.0 + c) * 0.5).sqrt();
    // sin(θ/2) = sin θ / (2 cos(θ/2)) is accurate for small angles; near a half turn use
    // the other half-angle formula.
    let half_sin = if half_cos > 0.5 { s * 0.5 / half_cos } else { ((1.0 - c) * 0.5).sqrt().copysign(s) };
    Quat::new_unchecked(nalgebra::Quaternion::new(half_cos, axis.x * half_sin, axis.y * half_sin, axis.z * half_sin))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The angle between two rotations from the vector part of their difference, precise
    /// for small angles (`angle_to` goes through `acos` of the scalar part, which in `f32`
    /// cannot tell angles below ~3e-4 rad from zero: one ulp of rounding reads as 1e-4).
    fn angle_between(a: &Quat, b: &Quat) -> f32 {
        2.0 * (a.inverse() * b).imag().norm().min(1.0).asin()
    }

    /// The job alone and the whole solve are one algorithm: the corrections applied to the
    /// locals give the rotations `solve_two_bone` writes, and the rebuilt chain ends on the
    /// target when it is in reach (checked independently of both, by composing transforms).
    #[test]
    fn corrections_match_the_whole_solve() {
        let parent =
            Transform::new(Vec3::new(0.1, 1.0, 0.0), Quat::from_euler_angles(0.1, 0.2, 0.0), Vec3::repeat(1.0));
        let upper = Transform::new(Vec3::new(0.1, 0.0, 0.0), Quat::from_euler_angles(0.2, 0.0, 0.1), Vec3::repeat(1.0));
        let middle =
            Transform::new(Vec3::new(0.0, -0.45, 0.0), Quat::from_euler_angles(-0.3, 0.0, 0.0), Vec3::repeat(1.0));
        let end = Vec3::new(0.0, -0.45, 0.0);
        let wa = parent.combine(&upper);
        let wb = wa.combine(&middle);
        let joints = TwoBoneJoints {
            upper: wa.translation,
            middle: wb.translation,
            end: wb.transform_point(&end),
            upper_rotation: wa.rotation,
            middle_rotation: wb.rotation,
        };
        let mut reached = 0;
        for i in 0..200 {
            let f = i as f32;
            let target = Vec3::new(0.4 * (f * 0.37).sin(), 0.3 + 0.5 * (f * 0.11).cos(), 0.3 * (f * 0.23).sin());
            for pole in [None, Some(Vec3::new(0.2, 0.1, 1.0))] {
                let (mut u, mut m) = (upper, middle);
                let r = solve_two_bone(&parent, &mut u, &mut m, &end, &target, pole.as_ref()).unwrap();
                let k = two_bone_corrections(&joints, &target, pole.as_ref()).unwrap();
                let (u2, m2) = (upper.rotation * k.upper, middle.rotation * k.middle);
                let (du, dm) = (angle_between(&u2, &u.rotation), angle_between(&m2, &m.rotation));
                assert!(du < 1e-4, "{i}: upper {du}");
                assert!(dm < 1e-4, "{i}: middle {dm}");
                let w1 = parent.combine(&Transform { rotation: u2, ..upper });
                let ankle = w1.combine(&Transform { rotation: m2, ..middle }).transform_point(&end);
                if (target - wa.translation).norm() < 0.85 {
                    assert!((ankle - target).norm() < 1e-4, "{i}: miss {}", (ankle - target).norm());
                    assert!(r.reached);
                    reached += 1;
                }
            }
        }
        assert!(reached > 100, "{reached}");
    }
}
