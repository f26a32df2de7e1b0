//! Analytic two-bone IK (hip–knee–ankle, shoulder–elbow–wrist) with a pole direction.

use crate::chain::renormalize;
use crate::error::{IkError, check_finite_vec};
use anim_core::{LengthMismatch, Pose, Skeleton};
use anim_math::{EPSILON, Quat, Transform, Vec3, quat};

/// What a two-bone solve did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TwoBoneResult {
    /// The target was within reach (the end joint now sits on it).
    pub reached: bool,
    /// Distance from the end joint to the target after the solve.
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
///    keeps bending the way it bent);
/// 2. the hip turns the ankle onto the hip–target line;
/// 3. with a `pole` (a world direction), the hip twists about the hip–target line so the
///    knee points towards the pole.
///
/// An unreachable target straightens the leg towards it (`reached = false`); a target
/// closer than `|upper − lower|` folds it as far as the lengths allow. Zero-length bones
/// and a target on the hip only skip the steps that have no direction. Allocates nothing.
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
    let b = wb.translation;
    let c = wb.transform_point(end);
    let ab = b - a;
    let cb = c - b;
    let lab = ab.norm();
    let lcb = cb.norm();
    let at = target - a;
    let lat_raw = at.norm();

    // Trigonometry-free: every angle is carried as (cos, sin) and turned into a quaternion
    // by half-angle formulas, which keeps the solve at a few square roots.
    let mut r_upper = Quat::identity();
    let mut r_middle = Quat::identity();
    let mut c1 = c;
    let mut b1 = b;
    if lab > EPSILON && lcb > EPSILON {
        let lo = (lab - lcb).abs() + 1e-5 * (lab + lcb);
        let hi = (lab + lcb) * (1.0 - 1e-5);
        let lat = lat_raw.clamp(lo.min(hi), hi);
        let ac = c - a;
        let lac = ac.norm();
        // Bend-plane normal; a straight leg takes it from the pole (or any side).
        let mut axis = ac.cross(&ab);
        let mut an = axis.norm();
        let (cos_hip_0, sin_hip_0) = if lac > EPSILON {
            let inv = 1.0 / (lac * lab);
            ((ac.dot(&ab) * inv).clamp(-1.0, 1.0), (an * inv).min(1.0))
        } else {
            (1.0, 0.0)
        };
        let inv_ab_cb = 1.0 / (lab * lcb);
        let cos_knee_0 = (-ab.dot(&cb) * inv_ab_cb).clamp(-1.0, 1.0);
        let sin_knee_0 = (ab.cross(&cb).norm() * inv_ab_cb).min(1.0);
        let cos_hip_1 = ((lab * lab + lat * lat - lcb * lcb) / (2.0 * lab * lat)).clamp(-1.0, 1.0);
        let cos_knee_1 = ((lab * lab + lcb * lcb - lat * lat) * 0.5 * inv_ab_cb).clamp(-1.0, 1.0);
        let sin_hip_1 = (1.0 - cos_hip_1 * cos_hip_1).max(0.0).sqrt();
        let sin_knee_1 = (1.0 - cos_knee_1 * cos_knee_1).max(0.0).sqrt();
        if an * an < 1e-10 * (lab * lab * lab * lab) {
            let side = pole
                .copied()
                .filter(|p| p.cross(&ac).norm_squared() > 1e-12)
                .unwrap_or_else(|| if ac.norm_squared() > 1e-12 { quat::any_orthogonal(&ac) } else { Vec3::y() });
            axis = ac.cross(&side);
            an = axis.norm();
        }
        if an > 1e-10 {
            let axis = axis * (1.0 / an);
            // Turn by θ1 − θ0: cos(θ1 − θ0) = c1·c0 + s1·s0, sin(θ1 − θ0) = s1·c0 − c1·s0.
            let cos_d = cos_hip_1 * cos_hip_0 + sin_hip_1 * sin_hip_0;
            let sin_d = sin_hip_1 * cos_hip_0 - cos_hip_1 * sin_hip_0;
            r_upper = rotation_cos_sin(&axis, cos_d, sin_d);
            r_middle = rotation_cos_sin(
                &axis,
                cos_knee_1 * cos_knee_0 + sin_knee_1 * sin_knee_0,
                sin_knee_1 * cos_knee_0 - cos_knee_1 * sin_knee_0,
            );
            // Knee and ankle after both bends, in the bend plane (u along the thigh,
            // w = axis × u): the thigh turns by θ1 − θ0, and the hip–ankle line lies at
            // −θ1 from the new thigh. Plane arithmetic instead of quaternion rotations.
            let u = ab * (1.0 / lab);
            let w = axis.cross(&u);
            let u1 = u * cos_d + w * sin_d;
            let w1 = w * cos_d - u * sin_d;
            b1 = a + u1 * lab;
            c1 = a + (u1 * cos_hip_1 - w1 * sin_hip_1) * lat;
        }
    }
    // Swing the ankle onto the hip–target line.
    let ac1 = c1 - a;
    let mut post = if at.norm_squared() > 1e-12 && ac1.norm_squared() > 1e-12 {
        anim_math::quat::from_to(&ac1, &at)
    } else {
        Quat::identity()
    };
    // Twist about the hip–target line so the knee faces the pole.
    if let Some(p) = pole
        && at.norm_squared() > 1e-12
    {
        let axis = at / lat_raw;
        let knee = post * (b1 - a);
        let k = knee - axis * knee.dot(&axis);
        let q = p - axis * p.dot(&axis);
        let kq = (k.norm_squared() * q.norm_squared()).sqrt();
        if kq > 1e-12 {
            post = rotation_cos_sin(&axis, k.dot(&q) / kq, axis.dot(&k.cross(&q)) / kq) * post;
        }
    }
    let total = post * r_upper;
    let pr = parent_world.rotation;
    // New local = parent⁻¹ · (world turn · old world); the old worlds are wa and wb.
    upper.rotation = renormalize(pr.inverse() * (total * wa.rotation));
    middle.rotation = renormalize(wa.rotation.inverse() * (r_middle * wb.rotation));

    // The swing puts the ankle on the hip–target line and the twist turns about it, so
    // only the lengths differ.
    let distance = if at.norm_squared() > 1e-12 && ac1.norm_squared() > 1e-12 {
        (lat_raw - ac1.norm()).abs()
    } else {
        (ac1 - at).norm()
    };
    let reached = lat_raw <= lab + lcb && distance <= 1e-3 * (lab + lcb).max(EPSILON);
    Ok(TwoBoneResult { reached, distance })
}

/// Two-bone IK over three skeleton joints (`upper` → `middle` → `end`, each the parent of
/// the next), working on a pose.
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
        LengthMismatch::check("pose", pose.len(), skeleton.len())?;
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
