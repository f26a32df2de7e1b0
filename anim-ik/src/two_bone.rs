//! Analytic two-bone IK (hip–knee–ankle, shoulder–elbow–wrist) with a pole direction.

use crate::chain::renormalize_near_unit4;
use crate::error::{IkError, check_finite_vec};
use anim_core::pose::{Pose, Skeleton};
use anim_math::simd::{F4, Plain};
use anim_math::{EPSILON, Quat, Transform, Vec3, quat};

/// What a two-bone solve did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TwoBoneResult {
    /// The target was within reach and the end joint now sits on it (within 1e-3 of the
    /// chain's length).
    pub reached: bool,
    /// Distance from the end joint to the target after the solve, measured on the chain's
    /// bones turned by the rotations the solve writes (not predicted from the angles); the
    /// chain rebuilt from the written locals agrees to rounding.
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
    // The solve runs in the parent's frame turned to world axes: world = parent translation
    // + parent rotation · x, so x = parent scale ⊙ (the parent-space position). There the
    // hip sits at `ps ⊙ upper.translation` and its world rotation is its local one, so the
    // chain costs one quaternion product and two rotations (`combine` and `transform_point`
    // term for term, less the parent's rotation), and the target and pole are turned
    // into it aside from the chain. Lengths and angles are the world's. Each quaternion
    // and vector is one 4-lane register (SSE: a product or a rotation is a dozen
    // instructions, against some forty for nalgebra's scalar forms).
    let m = Plain;
    let (pr, ps) = (F4::quat(&parent_world.rotation), F4::vec3(&parent_world.scale));
    let ipr = pr.conj();
    let ur = F4::quat(&upper.rotation);
    let a = ps.mul(F4::vec3(&upper.translation));
    let was = ps.mul(F4::vec3(&upper.scale));
    let b = ur.rotate_add(was.mul(F4::vec3(&middle.translation)), a, m);
    let wbr = ur.qmul(F4::quat(&middle.rotation), m);
    let c = wbr.rotate_add(was.mul(F4::vec3(&middle.scale)).mul(F4::vec3(end)), b, m);
    let target = ipr.rotate(F4::vec3(target).sub(F4::vec3(&parent_world.translation)), m);
    let Turns { total: t, middle: rm, target_distance: lat_raw, reach: scale } =
        world_turns(a, b, c, target, pole.map(|p| ipr.rotate(F4::vec3(p), m)));
    // New local = parent⁻¹ · (world turn · old world). With the world turn pr·t·pr⁻¹ of the
    // turn t found here, that is t · upper for the hip and (upper⁻¹ · rm · upper) · middle
    // for the knee (upper · middle is wbr).
    renormalize_near_unit4(t.qmul(ur, m)).store_quat(&mut upper.rotation);
    renormalize_near_unit4(ur.conj().qmul(rm.qmul(wbr, m), m)).store_quat(&mut middle.rotation);

    // The true miss: the chain's bones turned by what the solve writes, the knee's turn on
    // the shin and the hip's on both. The locals just written place the same bones to
    // rounding (the hip's world rotation becomes parent · t · upper), so this is the
    // rebuilt chain without waiting for the locals, in the frame of the solve (a rotation
    // and a translation away from the world's, so the distance is the world's): measured
    // on the rotated bones, not predicted from the angles, so a turn that misses (rounding
    // in its angles, a clamped reach) shows. The turns are made unit as the written
    // rotations are (rotating by a quaternion 1e-6 off unit stretches the bones by as
    // much).
    let (t, rm) = (renormalize_near_unit4(t), renormalize_near_unit4(rm));
    let c1 = t.rotate_add(b.sub(a).add(rm.rotate(c.sub(b), m)), a, m);
    let miss = c1.sub(target);
    let distance = miss.dot(miss).x().sqrt();
    let reached = lat_raw <= scale && distance <= 1e-3 * scale.max(EPSILON);
    Ok(TwoBoneResult { reached, distance })
}

/// The two turns of a solve, in the frame of its inputs (model space for the job, the
/// parent's frame turned to world axes for [`solve_two_bone`]): the hip's, which moves the
/// whole leg, and the knee's, which moves the shin, both about their joint. `a`, `b`, `c`
/// are the hip, knee and ankle positions, `target` and `pole` in the same frame. The one algorithm behind
/// [`solve_two_bone`] and [`two_bone_corrections`]; inputs are finite. A well-conditioned
/// leg takes the closed form ([`closed_form_turns`]), every other one the general
/// construction ([`general_turns`]); both find the same turns. Always inlined: out of line
/// (as a default release build of a dependent crate leaves it), its result comes back
/// through memory and is read in other pieces than it was written (a store-forwarding
/// stall).
#[inline(always)]
fn world_turns(a: F4, b: F4, c: F4, target: F4, pole: Option<F4>) -> Turns {
    closed_form_turns(a, b, c, target, pole).unwrap_or_else(|| {
        let pole = pole.map(F4::to_vec3);
        general_turns(&Measures::new(&a.to_vec3(), &b.to_vec3(), &c.to_vec3(), &target.to_vec3()), pole.as_ref())
    })
}

/// The lengths and directions both constructions start from.
struct Measures {
    /// Hip and ankle positions.
    a: Vec3,
    c: Vec3,
    /// Thigh (hip → knee), shin (knee → ankle) and hip → target.
    ab: Vec3,
    cb: Vec3,
    at: Vec3,
    /// Their lengths.
    lab: f32,
    lcb: f32,
    lat_raw: f32,
    /// Thigh plus shin.
    scale: f32,
    /// The target is off the hip (relative to the leg's size).
    has_target_dir: bool,
}

impl Measures {
    #[inline(always)]
    fn new(a: &Vec3, b: &Vec3, c: &Vec3, target: &Vec3) -> Self {
        let (ab, cb, at) = (b - a, c - b, target - a);
        let (lab, lcb, lat_raw) = (ab.norm(), cb.norm(), at.norm());
        // Every "no direction" test is relative to the lengths it is about, so a leg in
        // millimetres or kilometres (or a pole of any length) is treated alike.
        let scale = lab + lcb;
        let has_target_dir = lat_raw > 1e-6 * scale && lat_raw > 0.0;
        Self { a: *a, c: *c, ab, cb, at, lab, lcb, lat_raw, scale, has_target_dir }
    }
}

/// The turns of a well-conditioned leg in closed form, or `None` for any other: bones of
/// length, a target off the hip, a knee bent by more than about 3° (`sin² φ > 2.5e-3`) and
/// a hip–ankle distance of at least a tenth of the leg.
///
/// Everything happens in the bend plane, whose normal `n` is the thigh × shin direction.
/// Angles about `n` are carried as (cos, sin) pairs of any length:
/// - the knee turn is the law-of-cosines angle minus the current one, as in
///   [`general_turns`];
/// - the hip–ankle line lies at `β₀` from the thigh before the knee turn,
///   `lab·|a→c|·(cos β₀, sin β₀) = (lab² + thigh·shin, |thigh × shin|)`, and at `β₁`
///   after it, `|a→c'|·(cos β₁, sin β₁) = (lab + lcb·cos φ₁, lcb·sin φ₁)`; the hip turns
///   by `β₀ − β₁`, which puts the ankle back on the hip–ankle line;
/// - the swing takes that line onto the target;
/// - the knee then lies off the target line along `target direction × n'` (`n'`, the
///   swung normal; the knee bends to positive angles about `n`), so the pole twist is the
///   angle of the pair `(pole·(axis × n'), −pole·n')`.
///
/// None of these waits for another's rotated vectors, so the square roots of the knee,
/// hip, swing and twist overlap instead of forming one chain. The general construction
/// measures each step on the vectors the previous one rotated; here the steps are
/// predicted from the plane's geometry, whose rounding grows as `1/sin φ` (the plane of a
/// nearly straight knee) and `1/|a→c|` (the hip–ankle direction of a folded leg), hence
/// the conditions: within them the two place the knee and ankle within a few millionths
/// of the leg's length of each other (`closed_form_matches_the_general_construction`), and
/// a straighter or more folded leg takes the general path.
#[inline(always)]
fn closed_form_turns(a: F4, b: F4, c: F4, target: F4, pole: Option<F4>) -> Option<Turns> {
    let m = Plain;
    // Positions are (x, y, z, 0), so four-lane dot products are the vectors' own.
    let (ab, cb, at, ac) = (b.sub(a), c.sub(b), target.sub(a), c.sub(a));
    // The four squared lengths side by side, and three of their roots in one instruction.
    let [s0, s1, s2, s3] = F4::transpose([ab.mul(ab), cb.mul(cb), at.mul(at), ac.mul(ac)]);
    let squares = s0.add(s1).add(s2.add(s3));
    let ([lab, lcb, lat_raw, _], lac2) = (squares.sqrt().to_array(), squares.to_array()[3]);
    let (lab2, lcb2) = (lab * lab, lcb * lcb);
    let scale = lab + lcb;
    let bent = ab.cross(cb, m);
    let bent2 = bent.dot(bent).x();
    // (A target or leg so far out that a squared length overflows takes the general path,
    // as any non-finite length does.)
    let conditioned = lat_raw > 1e-6 * scale
        && lat_raw > 0.0
        && (lat_raw + scale + lac2).is_finite()
        && lab > 1e-6 * scale
        && lcb > 1e-6 * scale
        && bent2 > 2.5e-3 * lab2 * lcb2
        && lac2 > 1e-2 * scale * scale;
    if !conditioned {
        return None;
    }
    let lo = (lab - lcb).abs() + 1e-5 * scale;
    let hi = scale * (1.0 - 1e-5);
    let lat = lat_raw.clamp(lo.min(hi), hi);
    let (ilab, ilcb) = (1.0 / lab, 1.0 / lcb);
    let inv_ll = ilab * ilcb;
    let lbent = bent2.sqrt();
    let n = bent.mul(F4::splat(1.0 / lbent));
    let d = ab.dot(cb).x();
    // φ₀ (the knee's angle now) and φ₁ (the law-of-cosines one), with `general_turns`'
    // formula for φ₁ (near a folded knee its sine is ill-conditioned, and the two paths
    // should not differ by rounding there); both pairs are unit, and φ₀ is in (0, π)
    // since n is along thigh × shin.
    let (cos_0, sin_0) = (d * inv_ll, lbent * inv_ll);
    let cos_1 = ((lat * lat - lab2 - lcb2) * (0.5 * ilab * ilcb)).clamp(-1.0, 1.0);
    let sin_1 = (1.0 - cos_1 * cos_1).max(0.0).sqrt();
    let r_middle = axis_turn(n, half_angles_cos_sin(cos_1 * cos_0 + sin_1 * sin_0, sin_1 * cos_0 - cos_1 * sin_0));
    let (x0, y0) = (lab2 + d, lbent);
    let (x1, y1) = (lab + lcb * cos_1, lcb * sin_1);
    let r_upper = axis_turn(n, half_angles_of_pair(x0 * x1 + y0 * y1, y0 * x1 - x0 * y1));
    let post = swing4(ac, at);
    let mut total = post.qmul(r_upper, m);
    if let Some(p) = pole {
        let axis = at.mul(F4::splat(1.0 / lat_raw));
        let n1 = post.rotate(n, m);
        let (x, y) = (p.dot(axis.cross(n1, m)).x(), -p.dot(n1).x());
        // As in `general_turns`: the knee off the target line (its distance from it is
        // lab·lcb·sin φ₁ / |a→c'|, against 1e-5·lab), the pole off it by 1e-4 rad.
        if y1 * y1 > 1e-10 * lat * lat && x * x + y * y > 1e-8 * p.dot(p).x() {
            total = axis_turn(axis, half_angles_of_pair(x, y)).qmul(total, m);
        }
    }
    Some(Turns { total, middle: r_middle, target_distance: lat_raw, reach: scale })
}

/// The turns of any leg, each step measured on the vectors the previous one rotated:
/// the knee's, about the bend-plane normal; the hip's, which keeps the hip–ankle line;
/// the swing onto the target; the twist towards the pole.
#[inline(always)]
fn general_turns(m: &Measures, pole: Option<&Vec3>) -> Turns {
    let &Measures { a, c, ab, cb, at, lab, lcb, lat_raw, scale, has_target_dir } = m;
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
    Turns { total: F4::quat(&total), middle: F4::quat(&r_middle), target_distance: lat_raw, reach: scale }
}

/// What [`world_turns`] finds: the two world turns, and the lengths the solve measured on
/// the way (for [`TwoBoneResult`]).
struct Turns {
    /// The hip's world turn (bend, swing and pole twist), a quaternion `(x, y, z, w)`.
    total: F4,
    /// The knee's world turn.
    middle: F4,
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
    let (upper, middle, end) = (F4::vec3(&joints.upper), F4::vec3(&joints.middle), F4::vec3(&joints.end));
    let t = world_turns(upper, middle, end, F4::vec3(target), pole.map(F4::vec3));
    // A world turn t of a joint with world rotation w is the local correction w⁻¹·t·w:
    // parent⁻¹·(t·w) = local·(w⁻¹·t·w), as local = parent⁻¹·w. That conjugation keeps
    // t's scalar part and turns its vector part by w⁻¹: one vector rotation instead of two
    // quaternion products (`F4::rotate` carries lane w through, so it is t's scalar part).
    let local = |w: &Quat, turn: F4| F4::quat(w).conj().rotate(turn, Plain).to_quat();
    Ok(TwoBoneCorrections {
        upper: local(&joints.upper_rotation, t.total),
        middle: local(&joints.middle_rotation, t.middle),
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

/// [`swing`] in 4-lane registers (`from` and `to` as `(x, y, z, 0)`, non-zero and finite).
#[inline(always)]
fn swing4(from: F4, to: F4) -> F4 {
    if from.dot(to).x() >= 0.0 {
        return from_to4(from, to);
    }
    let f = from.mul(F4::splat(1.0 / from.dot(from).x().sqrt()));
    let mid = to.sub(f.mul(to.dot(f)));
    let mid =
        if mid.dot(mid).x() > 1e-12 * to.dot(to).x() { mid } else { F4::vec3(&quat::any_orthogonal(&f.to_vec3())) };
    from_to4(mid, to).qmul(from_to4(from, mid), Plain)
}

/// `quat::from_to` in 4-lane registers, the same construction step for step (the
/// half-way quaternion, kept in the plane past a quarter turn, without cancellation up
/// to a half turn), for vectors `(x, y, z, 0)`.
#[inline(always)]
fn from_to4(from: F4, to: F4) -> F4 {
    let (lf2, lt2) = (from.dot(from).x(), to.dot(to).x());
    let d = from.dot(to).x();
    let mut c = from.cross(to, Plain);
    if d < 0.0 {
        c = c.sub(from.mul(F4::splat(c.dot(from).x() / lf2)));
    }
    let c2 = c.dot(c).x();
    let mag = (lf2 * lt2).sqrt();
    let w = if d >= 0.0 { mag + d } else { c2 / (mag - d) };
    let inv = 1.0 / (w * w + c2).sqrt();
    if lf2 < 1e-24 || lt2 < 1e-24 || !(lf2 + lt2 + inv).is_finite() || (c2 == 0.0 && d < 0.0) {
        // Nothing to turn, lengths out of range, or an exact half turn: the scalar
        // construction's choices.
        return F4::quat(&quat::from_to(&from.to_vec3(), &to.to_vec3()));
    }
    c.mul(F4::splat(inv)).add(F4::new(0.0, 0.0, 0.0, w * inv))
}

/// The rotation by the angle with cosine `c` and sine `s` about the unit `axis`
/// ([`half_angles_cos_sin`]).
#[inline]
fn rotation_cos_sin(axis: &Vec3, c: f32, s: f32) -> Quat {
    let (half_cos, half_sin) = half_angles_cos_sin(c, s);
    Quat::new_unchecked(nalgebra::Quaternion::new(half_cos, axis.x * half_sin, axis.y * half_sin, axis.z * half_sin))
}

/// The rotation about the unit `axis` (`(x, y, z, 0)`) whose half angle has cosine
/// `half.0` and sine `half.1`, as a quaternion `(x, y, z, w)`.
#[inline(always)]
fn axis_turn(axis: F4, (half_cos, half_sin): (f32, f32)) -> F4 {
    axis.mul(F4::splat(half_sin)).add(F4::new(0.0, 0.0, 0.0, half_cos))
}

/// Cosine and sine of half the angle with cosine `c` and sine `s`, from half-angle
/// formulas (no trigonometric calls). Every caller passes a pair that is unit up to
/// rounding (built from normalized vectors), and every result ends in a renormalized joint
/// rotation, so the pair is not normalized again here; a vanishing pair (no defined angle)
/// gives the identity's `(1, 0)`.
#[inline(always)]
fn half_angles_cos_sin(c: f32, s: f32) -> (f32, f32) {
    if c * c + s * s < 1e-24 {
        return (1.0, 0.0);
    }
    let c = c.clamp(-1.0, 1.0);
    // One half-angle formula for the larger of the two, where 1 ± cos θ does not cancel,
    // and sin θ = 2·sin(θ/2)·cos(θ/2) for the other: near a half turn (cos θ → −1) it is
    // sin θ that holds the distance to π, which 1 + cos θ loses to rounding (1e-4 rad
    // for an angle 1e-3 short of π).
    if c > -0.5 {
        let half_cos = ((1.0 + c) * 0.5).sqrt();
        (half_cos, s * 0.5 / half_cos)
    } else {
        let half_sin = ((1.0 - c) * 0.5).sqrt().copysign(s);
        (s * 0.5 / half_sin, half_sin)
    }
}

/// Cosine and sine of half the angle of the pair `(x, y)`, of any length but not zero.
/// The half angle's direction is `(|p| + x, y)`; past a quarter turn, where that sum
/// cancels, the same direction is written `(|y|, (|p| − x)·sign y)` (it is the first times
/// `y / (|p| − x)`, and a negated quaternion is the same rotation).
#[inline(always)]
fn half_angles_of_pair(x: f32, y: f32) -> (f32, f32) {
    let r = (x * x + y * y).sqrt();
    let (w, s) = if x >= 0.0 { (r + x, y) } else { (y.abs(), (r - x).copysign(y)) };
    let inv = 1.0 / (w * w + s * s).sqrt();
    (w * inv, s * inv)
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

    /// The closed form and the general construction find the same turns wherever the
    /// closed form applies: legs of unequal bones bent from 3° to 177°, targets in reach,
    /// out of it and too close, poles on every side, and none. The general construction,
    /// measured step by step on the vectors it rotated, is the reference; the closed
    /// form's turns must also put the ankle on the target, when it is in reach.
    #[test]
    fn closed_form_matches_the_general_construction() {
        let mut state = 0x2b0e_u64;
        let mut next = move || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((state >> 40) as f32) / (1u64 << 24) as f32
        };
        let dir = |next: &mut dyn FnMut() -> f32| loop {
            let v = Vec3::new(next() * 2.0 - 1.0, next() * 2.0 - 1.0, next() * 2.0 - 1.0);
            if v.norm_squared() > 0.01 && v.norm_squared() <= 1.0 {
                break v.normalize();
            }
        };
        let (mut closed, mut worst_knee, mut worst_ankle, mut worst_middle, mut worst_miss) =
            (0, 0.0f32, 0.0f32, 0.0f32, 0.0f32);
        for i in 0..20_000 {
            let (l1, l2) = (0.2 + next(), 0.2 + next());
            let a = dir(&mut next) * 2.0;
            let b = a + dir(&mut next) * l1;
            let c = b + dir(&mut next) * l2;
            let target = a + dir(&mut next) * ((l1 + l2) * (0.02 + 1.3 * next()));
            let pole = (i % 3 != 0).then(|| dir(&mut next) * (0.1 + 10.0 * next()));
            let m = Measures::new(&a, &b, &c, &target);
            let (a4, b4, c4, t4) = (F4::vec3(&a), F4::vec3(&b), F4::vec3(&c), F4::vec3(&target));
            let Some(f) = closed_form_turns(a4, b4, c4, t4, pole.map(|p| F4::vec3(&p))) else { continue };
            let g = general_turns(&m, pole.as_ref());
            closed += 1;
            // Where the leg ends up: rotations about an ill-conditioned axis (the target
            // line of a straightened leg) may differ, the joints they place may not.
            let knee = |t: &Turns| a + t.total.to_quat() * (b - a);
            let ankle = |t: &Turns| knee(t) + (t.total.to_quat() * t.middle.to_quat()) * (c - b);
            let scale = l1 + l2;
            worst_knee = worst_knee.max((knee(&f) - knee(&g)).norm() / scale);
            worst_ankle = worst_ankle.max((ankle(&f) - ankle(&g)).norm() / scale);
            worst_middle = worst_middle.max(angle_between(&f.middle.to_quat(), &g.middle.to_quat()));
            // The solved chain: the knee turn moves the shin, the hip turn both bones.
            let lat = (target - a).norm();
            if lat > (l1 - l2).abs() + 1e-3 && lat < l1 + l2 - 1e-3 {
                worst_miss = worst_miss.max((ankle(&f) - target).norm() / scale);
            }
        }
        assert!(closed > 15_000, "the closed form took {closed} of 20000 legs");
        // Measured: knees 6e-6 of the leg apart (a knee folded to its limit, where the
        // law-of-cosines angle is ill-conditioned), ankles 2e-6, knee turns 2e-6 rad, miss
        // 1.2e-6 of the leg.
        assert!(worst_knee < 2e-5 && worst_ankle < 1e-5, "knees {worst_knee}, ankles {worst_ankle} apart");
        assert!(worst_middle < 1e-5, "knee turns {worst_middle} rad apart");
        assert!(worst_miss < 5e-6, "the closed form missed by {worst_miss}");
    }

    /// Rotations from (cos, sin) pairs keep their precision up to a half turn: the distance
    /// to π is in the sine, which the half-angle cosine `√((1 + cos θ)/2)` alone loses.
    #[test]
    fn rotations_from_pairs_are_precise_near_a_half_turn() {
        for k in 1..=7 {
            for sign in [1.0f64, -1.0] {
                let theta = sign * (std::f64::consts::PI - 10f64.powi(-k));
                let (c, s) = (theta.cos() as f32, theta.sin() as f32);
                let axis = Vec3::new(0.36, 0.48, 0.8);
                let expected = Quat::from_axis_angle(&nalgebra::Unit::new_unchecked(axis), theta as f32);
                for q in [
                    rotation_cos_sin(&axis, c, s),
                    axis_turn(F4::vec3(&axis), half_angles_of_pair(c * 3.0, s * 3.0)).to_quat(),
                ] {
                    let error = angle_between(&q, &expected);
                    assert!(error < 1e-6, "θ = π − 1e-{k} ({sign}): off by {error} rad");
                }
            }
        }
    }

    /// `from_to4` is `quat::from_to` in registers: the same rotation from a few degrees to
    /// a hair short of a half turn, for vectors of different lengths.
    #[test]
    fn registers_swing_as_the_scalar_construction() {
        let axis = Vec3::new(0.36, 0.48, 0.8);
        let from = quat::any_orthogonal(&axis) * 0.7;
        for k in 0..=400 {
            let angle = std::f32::consts::PI * (k as f32 / 400.0).powf(0.3) * 0.999_99;
            let to = Quat::from_axis_angle(&nalgebra::Unit::new_unchecked(axis), angle) * from * 3.0;
            let want = quat::from_to(&from, &to);
            let got = from_to4(F4::vec3(&from), F4::vec3(&to)).to_quat();
            assert!(angle_between(&got, &want) < 1e-6, "{angle} rad: {got:?} against {want:?}");
            let swung = swing4(F4::vec3(&from), F4::vec3(&to)).to_quat();
            assert!(angle_between(&swung, &swing(&from, &to)) < 1e-6, "{angle} rad: swing");
            assert!(((swung * from).normalize() - to.normalize()).norm() < 1e-5, "{angle} rad: swing misses");
        }
        // Lengths whose squares overflow or vanish: the scalar construction's answer.
        for (f, t) in [(from, from * 1e30), (from * 1e-30, from), (from, Vec3::zeros())] {
            let got = from_to4(F4::vec3(&f), F4::vec3(&t)).to_quat();
            assert_eq!(got, quat::from_to(&f, &t), "{f:?} → {t:?}");
        }
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
