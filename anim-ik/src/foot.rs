//! Foot grounding (the book's chapter 13 pipeline): keep planted feet on uneven ground.

use crate::ccd::CcdSolver;
use crate::chain::{IkChain, renormalize};
use crate::error::IkError;
use crate::fabrik::FabrikSolver;
use crate::ground::{GroundQuery, RayHit};
use crate::two_bone::solve_two_bone;
use anim_core::LengthMismatch;
use anim_core::clip::{Clip, TimePolicy};
use anim_core::pose::{Pose, Skeleton};
use anim_math::{Quat, Transform, Vec3, quat};

/// One leg: four skeleton joints, each the parent of the next, and the name of the clip
/// curve that says when the foot is planted (1) or in the air (0).
#[derive(Clone, Debug, PartialEq)]
pub struct Leg {
    /// Hip (thigh) joint.
    pub hip: usize,
    /// Knee joint.
    pub knee: usize,
    /// Ankle joint.
    pub ankle: usize,
    /// Toe joint (a child of the ankle).
    pub toe: usize,
    /// Name of the foot-contact curve in the clips (e.g. `foot_contact_l`).
    pub contact_curve: String,
}

/// Which solver bends the leg.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LegSolver {
    /// Analytic two-bone IK (exact, fastest).
    TwoBone,
    /// CCD over hip, knee and ankle. Iterative solvers shorten a nearly straight leg only
    /// slowly (the goal lies almost on the line they turn about): with 100 iterations the
    /// ankle can still be a centimetre or two short. Prefer [`LegSolver::TwoBone`] for legs.
    Ccd(CcdSolver),
    /// FABRIK over hip, knee and ankle (same caveat as CCD).
    Fabrik {
        /// Maximum passes.
        iterations: usize,
        /// Distance that counts as reached.
        threshold: f32,
    },
}

/// Model-specific tuning of the grounding pass (world units; the world is y-up).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FootSettings {
    /// Height of the ankle joint above the ground when the foot is flat.
    pub ankle_height: f32,
    /// Height of the toe joint above the ground when the foot is flat.
    pub toe_height: f32,
    /// How far below the sole the "future" ray keeps looking for ground.
    pub search_below: f32,
    /// Move the character vertically to the lower grounded target (the book's vertical
    /// placement); the offset applied is returned by [`FootGrounding::apply`].
    pub adjust_root: bool,
    /// Turn the ankle so the foot lies on the ground (the toe ray).
    pub align_toes: bool,
    /// The leg solver.
    pub solver: LegSolver,
}

impl Default for FootSettings {
    fn default() -> Self {
        Self {
            ankle_height: 0.08,
            toe_height: 0.03,
            search_below: 0.5,
            adjust_root: true,
            align_toes: true,
            solver: LegSolver::TwoBone,
        }
    }
}

/// What the last [`FootGrounding::apply`] did for one leg (world space).
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct LegReport {
    /// The contact weight used (0 = in the air, 1 = planted).
    pub contact: f32,
    /// Ground under the ankle was found.
    pub grounded: bool,
    /// Current target: the animated ankle (after the vertical placement), raised to the
    /// ground point plus the ankle height when the sole would be below the ground.
    pub current: Vec3,
    /// Future target: the ground point under the ankle plus the ankle height (the
    /// animated ankle when no ground was found).
    pub future: Vec3,
    /// `lerp(current, future, contact)`: where the ankle was sent.
    pub target: Vec3,
    /// Ankle position after the pass.
    pub ankle: Vec3,
    /// Toe position after the pass.
    pub toe: Vec3,
}

#[derive(Clone, Debug)]
struct LegState {
    leg: Leg,
    hit: Option<RayHit>,
    animated_ankle: Vec3,
    hip_parent: Option<usize>,
    chain: IkChain,
    report: LegReport,
}

/// Foot grounding for one character: call [`FootGrounding::apply`] every frame after
/// sampling (and blending) the pose.
///
/// Per leg: a ray straight down through the animated ankle, from hip height to below the
/// sole, finds the ground. The character is moved vertically by the most negative of the
/// planted feet's `contact · (ground + ankle height − animated ankle)`: the lower ground
/// target becomes exactly reachable, so legs never over-extend (feet above their ground
/// target only lower the character as much as they are planted). Then per leg the
/// *current* target is the (moved) animated ankle clamped above the ground, the *future*
/// target the ankle on the ground, interpolated by the contact weight (1 = planted); the
/// leg is bent onto it (two-bone or CCD), and a toe ray turns the ankle so the foot lies
/// along the ground (fully when planted or when the toe would sink into the ground).
/// Nothing allocates per frame.
#[derive(Clone, Debug)]
pub struct FootGrounding {
    legs: Vec<LegState>,
    settings: FootSettings,
    globals: Vec<Transform>,
    fabrik: FabrikSolver,
}

impl FootGrounding {
    /// Grounding for `legs` of `skeleton`.
    ///
    /// # Errors
    /// A joint out of range, leg joints that are not parent and child in order, or
    /// non-finite / negative settings.
    pub fn new(skeleton: &Skeleton, legs: Vec<Leg>, settings: FootSettings) -> Result<Self, IkError> {
        for (what, v) in [
            ("ankle height", settings.ankle_height),
            ("toe height", settings.toe_height),
            ("search distance below the sole", settings.search_below),
        ] {
            if !v.is_finite() || v < 0.0 {
                return Err(IkError::InvalidSetting { what, value: v });
            }
        }
        let rest = skeleton.rest_pose();
        let mut states = Vec::with_capacity(legs.len());
        for leg in legs {
            let chain = IkChain::from_pose(skeleton, rest, &[leg.hip, leg.knee, leg.ankle], &Transform::IDENTITY)?;
            if leg.toe >= skeleton.len() {
                return Err(IkError::JointOutOfRange { joint: leg.toe, count: skeleton.len() });
            }
            if skeleton.parent(leg.toe) != Some(leg.ankle) {
                return Err(IkError::NotAChain { parent: leg.ankle, child: leg.toe });
            }
            states.push(LegState {
                hit: None,
                animated_ankle: Vec3::zeros(),
                hip_parent: skeleton.parent(leg.hip),
                leg,
                chain,
                report: LegReport::default(),
            });
        }
        Ok(Self {
            legs: states,
            settings,
            globals: vec![Transform::IDENTITY; skeleton.len()],
            // Sized for the legs' three-joint chains now, so the first frame that needs
            // FABRIK (possibly long after start-up) does not allocate.
            fabrik: FabrikSolver::default().with_capacity(3),
        })
    }

    /// The settings.
    pub fn settings(&self) -> &FootSettings {
        &self.settings
    }

    /// The settings, writable (e.g. to switch the toe pass or the solver at run time).
    pub fn settings_mut(&mut self) -> &mut FootSettings {
        &mut self.settings
    }

    /// The legs, in the order given.
    pub fn legs(&self) -> impl ExactSizeIterator<Item = &Leg> {
        self.legs.iter().map(|l| &l.leg)
    }

    /// What the last `apply` did, one report per leg.
    pub fn reports(&self) -> impl ExactSizeIterator<Item = &LegReport> {
        self.legs.iter().map(|l| &l.report)
    }

    /// `foot_down:<curve>` / `foot_up:<curve>` events for every leg whose contact curve
    /// `clip` carries, where the curve crosses 0.5 (see
    /// [`anim_core::clip::events::threshold_events`]); attach them with [`Clip::with_events`].
    /// Allocates (load-time work).
    pub fn contact_events(&self, clip: &Clip) -> Vec<anim_core::clip::events::ClipEvent> {
        let mut out = Vec::new();
        for l in &self.legs {
            let name = &l.leg.contact_curve;
            if let Some(c) = clip.curve_index(name).map(|i| &clip.curves()[i]) {
                let (down, up) = (format!("foot_down:{name}"), format!("foot_up:{name}"));
                out.extend(anim_core::clip::events::threshold_events(&c.track, 0.5, &down, &up));
            }
        }
        out.sort_by(|a, b| a.time.total_cmp(&b.time));
        out
    }

    /// Samples each leg's contact curve from `clip` at `time` (the clip's own seconds,
    /// brought into the clip by `policy`; the curves share the clip's time line, so this
    /// is the book's sample at normalized time `time / duration`) into `out`. A clip
    /// without the curve gives 1 (always planted).
    ///
    /// # Errors
    /// `out` does not have one entry per leg.
    pub fn sample_contacts(&self, clip: &Clip, time: f32, policy: TimePolicy, out: &mut [f32]) -> Result<(), IkError> {
        LengthMismatch::check("contact weights", out.len(), self.legs.len())?;
        for (o, l) in out.iter_mut().zip(&self.legs) {
            *o = clip
                .curve_index(&l.leg.contact_curve)
                .and_then(|i| clip.sample_curve(i, time, policy))
                .filter(|v| v.is_finite())
                .map_or(1.0, |v| v.clamp(0.0, 1.0));
        }
        Ok(())
    }

    /// Grounds the feet of `pose` (local transforms, changed in place at the leg joints).
    /// `model_to_world` places the character; when [`FootSettings::adjust_root`] is on its
    /// height is changed and the vertical offset applied is returned (0 otherwise).
    /// `contacts` has one weight in `[0, 1]` per leg (see [`Self::sample_contacts`]).
    /// The offset is recomputed every frame and not smoothed: a caller that wants no pop
    /// when a foot lifts can low-pass it and pass the smoothed placement next frame.
    ///
    /// # Errors
    /// A pose or contact slice of the wrong length, or non-finite inputs.
    pub fn apply(
        &mut self,
        skeleton: &Skeleton,
        pose: &mut Pose,
        model_to_world: &mut Transform,
        contacts: &[f32],
        ground: &(impl GroundQuery + ?Sized),
    ) -> Result<f32, IkError> {
        LengthMismatch::check("contact weights", contacts.len(), self.legs.len())?;
        if !contacts.iter().all(|c| c.is_finite()) {
            return Err(IkError::NonFinite { what: "contact weight" });
        }
        if !model_to_world.is_finite() {
            return Err(IkError::NonFinite { what: "root transform" });
        }
        pose.globals(skeleton, &mut self.globals)
            .map_err(|_| LengthMismatch::new("pose", pose.len(), skeleton.len()))?;
        if !self.globals.iter().all(Transform::is_finite) {
            return Err(IkError::NonFinite { what: "joint transform" });
        }
        let s = self.settings;
        let up = Vec3::y();
        // 1. Rays straight down through each animated ankle, from hip height to below the sole.
        let mut offset = 0.0f32;
        for (l, &contact) in self.legs.iter_mut().zip(contacts) {
            let contact = contact.clamp(0.0, 1.0);
            let hip = model_to_world.transform_point(&self.globals[l.leg.hip].translation);
            let ankle = model_to_world.transform_point(&self.globals[l.leg.ankle].translation);
            let top = hip.y.max(ankle.y + s.ankle_height);
            let origin = Vec3::new(ankle.x, top, ankle.z);
            let to_sole = top - (ankle.y - s.ankle_height);
            l.hit = ground.raycast(&origin, &-up, to_sole + s.search_below);
            l.animated_ankle = ankle;
            l.report = LegReport { contact, grounded: l.hit.is_some(), ..LegReport::default() };
            // 2. Vertical placement: how far the character must move for this foot's ground
            // target to be exactly reachable, as much as the foot is planted.
            if let Some(h) = l.hit {
                offset = offset.min(contact * (h.point.y + s.ankle_height - ankle.y));
            }
        }
        // The lower target wins (the most negative offset), so no leg over-extends.
        let offset = if s.adjust_root { offset } else { 0.0 };
        model_to_world.translation += up * offset;
        for l in &mut self.legs {
            let ankle = l.animated_ankle + up * offset;
            // Current target: the ankle clamped above the ground; future: on the ground.
            let (current, future) = match l.hit {
                Some(h) => {
                    let grounded = h.point + up * s.ankle_height;
                    (if grounded.y > ankle.y { grounded } else { ankle }, grounded)
                }
                None => (ankle, ankle),
            };
            l.report.current = current;
            l.report.future = future;
            l.report.target = current.lerp(&future, l.report.contact);
        }
        // 3. Leg IK, then 4. the toe ray.
        for l in &mut self.legs {
            let parent = match l.hip_parent {
                Some(p) => model_to_world.combine(&self.globals[p]),
                None => *model_to_world,
            };
            let target = l.report.target;
            let locals = pose.locals_mut();
            match s.solver {
                LegSolver::TwoBone => {
                    let (mut hip, mut knee) = (locals[l.leg.hip], locals[l.leg.knee]);
                    let ankle_t = locals[l.leg.ankle].translation;
                    // Keep the knee pointing where the animation points it.
                    let wh = parent.combine(&hip);
                    let wk = wh.combine(&knee);
                    let wa = wk.transform_point(&ankle_t);
                    let line = wa - wh.translation;
                    let knee_off = wk.translation - wh.translation;
                    let pole = if line.norm_squared() > 1e-12 * knee_off.norm_squared() {
                        let d = line.normalize();
                        knee_off - d * knee_off.dot(&d)
                    } else {
                        knee_off
                    };
                    // A knee within 1e-4 rad of the hip–ankle line (a straight leg) has no
                    // side of its own: only rounding is left, whatever the leg's size.
                    let pole = (pole.norm_squared() > 1e-8 * knee_off.norm_squared()).then_some(pole);
                    solve_two_bone(&parent, &mut hip, &mut knee, &ankle_t, &target, pole.as_ref())?;
                    locals[l.leg.hip] = hip;
                    locals[l.leg.knee] = knee;
                }
                LegSolver::Ccd(solver) => {
                    for (i, &j) in [l.leg.hip, l.leg.knee, l.leg.ankle].iter().enumerate() {
                        l.chain.set_local(i, locals[j])?;
                    }
                    l.chain.set_root(parent)?;
                    solver.solve(&mut l.chain, &target)?;
                    l.chain.write_pose(pose)?;
                }
                LegSolver::Fabrik { iterations, threshold } => {
                    for (i, &j) in [l.leg.hip, l.leg.knee, l.leg.ankle].iter().enumerate() {
                        l.chain.set_local(i, locals[j])?;
                    }
                    l.chain.set_root(parent)?;
                    self.fabrik.iterations = iterations;
                    self.fabrik.threshold = threshold;
                    self.fabrik.solve(&mut l.chain, &target)?;
                    l.chain.write_pose(pose)?;
                }
            }
            let locals = pose.locals_mut();
            let w_hip = parent.combine(&locals[l.leg.hip]);
            let w_knee = w_hip.combine(&locals[l.leg.knee]);
            let w_ankle = w_knee.combine(&locals[l.leg.ankle]);
            let toe_t = locals[l.leg.toe].translation;
            let ankle_pos = w_ankle.translation;
            let mut toe_pos = w_ankle.transform_point(&toe_t);
            if s.align_toes {
                let foot = toe_pos - ankle_pos;
                let len = foot.norm();
                let top = w_hip.translation.y.max(ankle_pos.y + len + s.ankle_height);
                let origin = Vec3::new(toe_pos.x, top, toe_pos.z);
                let reach = top - (toe_pos.y - s.toe_height) + s.search_below;
                if let Some(h) = ground.raycast(&origin, &-up, reach)
                    && len > 1e-6
                {
                    let n = h.normal;
                    let above = (toe_pos - h.point).dot(&n);
                    let weight = if above < s.toe_height - 1e-4 { 1.0 } else { l.report.contact };
                    let ankle_above = (ankle_pos - h.point).dot(&n);
                    let along = foot - n * foot.dot(&n);
                    if along.norm_squared() > 1e-8 * len * len && weight > 0.0 {
                        let c = (s.toe_height - ankle_above).clamp(-0.999 * len, 0.999 * len);
                        let wanted = along.normalize() * (len * len - c * c).sqrt() + n * c;
                        let delta = quat::nlerp(&Quat::identity(), &anim_math::quat::from_to(&foot, &wanted), weight);
                        let pr = w_knee.rotation;
                        let ankle_local = &mut locals[l.leg.ankle];
                        ankle_local.rotation = renormalize(pr.inverse() * delta * pr * ankle_local.rotation);
                        toe_pos = w_knee.combine(ankle_local).transform_point(&toe_t);
                    }
                }
            }
            l.report.ankle = ankle_pos;
            l.report.toe = toe_pos;
        }
        Ok(offset)
    }
}
