//! Forward and backward reaching IK (the book's `FABRIKSolver`).

use crate::ccd::{CcdSolver, SolveResult, TINY_SQ};
use crate::chain::Constraint;
use crate::chain::IkChain;
use crate::error::{IkError, check_finite_vec};
use anim_math::{Quat, Vec3, quat};
use nalgebra::Unit;
use std::f32::consts::PI;

/// With constraints, an iteration that ends farther from the goal than this fraction of
/// where it started counts as stalled, and the rest of the budget goes to CCD sweeps.
const STALL: f32 = 0.9;

/// The signed turn `θ` about `axis` (parent frame) that, from the `reference` rotation,
/// points `bone` closest to `desired`: both directions are projected onto the plane normal
/// to the axis and `θ` is the angle between them, in `(-π, π]`. `None` when either
/// projection vanishes (the bone lies along the axis, or the goal does, within 1e-4 rad).
fn hinge_angle(axis: &Unit<Vec3>, reference: &Quat, bone: &Vec3, desired: &Vec3) -> Option<f32> {
    let axis = axis.as_ref();
    let at_zero = reference * bone;
    let a = at_zero - axis * at_zero.dot(axis);
    let b = desired - axis * desired.dot(axis);
    // Relative tests: a projection shorter than 1e-4 of its vector is a direction within
    // 1e-4 rad of the axis, whose remainder is rounding (any length of bone or goal).
    if a.norm_squared() <= 1e-8 * at_zero.norm_squared()
        || b.norm_squared() <= 1e-8 * desired.norm_squared()
        || a.norm_squared() < TINY_SQ
        || b.norm_squared() < TINY_SQ
    {
        return None;
    }
    Some(axis.dot(&a.cross(&b)).atan2(a.dot(&b)))
}

/// The hinge rotation `rotation(axis, θ) · reference` whose bone points closest to
/// `desired` (parent frame): [`hinge_angle`], clamped to `limits`.
fn aim_hinge(
    axis: &Unit<Vec3>,
    reference: &Quat,
    limits: Option<(f32, f32)>,
    bone: &Vec3,
    desired: &Vec3,
) -> Option<Quat> {
    let mut theta = hinge_angle(axis, reference, bone, desired)?;
    if let Some((lo, hi)) = limits {
        theta = theta.clamp(lo, hi);
    }
    Some(Quat::from_axis_angle(axis, theta) * reference)
}

/// Unit `to`, turned towards unit `from` until it lies within `max_angle` of it (in the
/// plane of both; any plane when they are opposite).
fn clamp_to_cone(from: &Vec3, to: &Vec3, max_angle: f32) -> Vec3 {
    if quat::angle_between(from, to) <= max_angle {
        return *to;
    }
    let c = from.cross(to);
    let axis = if c.norm_squared() < TINY_SQ { quat::any_orthogonal(from) } else { c.normalize() };
    Quat::from_axis_angle(&Unit::new_unchecked(axis), max_angle.max(0.0)) * from
}

/// The direction (parent frame, unit) nearest to unit `desired` that `c` lets a joint's
/// bone take; `bone` is the joint's bone in its own frame and `parent_bone` the parent's
/// bone in the parent frame, as in [`Constraint::apply`].
fn allowed_direction(c: &Constraint, bone: &Vec3, parent_bone: &Vec3, desired: &Vec3) -> Vec3 {
    match *c {
        Constraint::Free => *desired,
        Constraint::BallSocket { max_angle, reference } => {
            let r = reference.unwrap_or(*parent_bone);
            if r.norm_squared() < TINY_SQ { *desired } else { clamp_to_cone(&r.normalize(), desired, max_angle) }
        }
        Constraint::Hinge { axis, reference, limits } => {
            let r = aim_hinge(&axis, &reference, limits, bone, desired).unwrap_or_else(|| {
                let zero = limits.map_or(0.0, |(lo, hi)| 0.0f32.clamp(lo, hi));
                Quat::from_axis_angle(&axis, zero) * reference
            });
            (r * bone).try_normalize(0.0).unwrap_or(*desired)
        }
    }
}

/// The largest angle between a joint's bone and its parent's bone that its constraint `c`
/// allows, whatever the parent's twist (`PI`: no limit). Exact for a ball about the parent's
/// bone and for a hinge whose parent may twist; for a ball about another reference it is
/// the bound the triangle inequality gives. `bone` and `parent_bone` as in
/// [`Constraint::apply`].
fn bend_limit(c: &Constraint, bone: &Vec3, parent_bone: &Vec3) -> f32 {
    match *c {
        Constraint::Free => PI,
        Constraint::BallSocket { max_angle, reference: None } => max_angle.min(PI),
        Constraint::BallSocket { max_angle, reference: Some(r) } => {
            (quat::angle_between(&r, parent_bone) + max_angle).min(PI)
        }
        Constraint::Hinge { axis, reference, limits } => {
            let (Some(t), Some(v)) = (parent_bone.try_normalize(1e-6), (reference * bone).try_normalize(1e-6)) else {
                return PI;
            };
            let (lo, hi) = limits.unwrap_or((-PI, PI));
            let a = axis.as_ref();
            let along = v.dot(a);
            let across = v - a * along;
            // t · rotation(a, θ)·v = k + m·cos(θ - φ); the bend is largest where that is least.
            let k = t.dot(a) * along;
            let (cos_part, sin_part) = (t.dot(&across), t.dot(&a.cross(&across)));
            let m = cos_part.hypot(sin_part);
            let phi = sin_part.atan2(cos_part);
            let opposite = lo + (phi + PI - lo).rem_euclid(2.0 * PI);
            let least = if opposite <= hi { -1.0 } else { (lo - phi).cos().min((hi - phi).cos()) };
            (k + m * least).clamp(-1.0, 1.0).acos()
        }
    }
}

/// Whether a joint limited by `c` may turn about its own bone without leaving its limits.
fn twists_freely(c: &Constraint) -> bool {
    matches!(c, Constraint::Free | Constraint::BallSocket { .. })
}

/// FABRIK: works on the joints' world positions and bone lengths. The backward pass puts
/// the end effector on the goal and pulls each joint towards its child at bone length; the
/// forward pass puts the first joint back on its base and pushes each joint out from its
/// parent. Afterwards each joint is turned from its start rotation (the chain's rotation
/// when it was read) by the shortest arc (`anim_math::quat::from_to`) that points its bone along
/// the solved segment, so the twist the pose had is kept.
///
/// With constraints both passes respect them:
/// - The backward pass, tip to base, limits each bone's direction against its child's
///   bone, which is already placed: the child joint's constraint caps the angle between
///   the two bones (a ball's cone; for a hinge the largest bend its limits allow, which is
///   exact when the hinge's parent may twist about its bone, as a ball or free joint may).
///   The first bone also gets its own joint's limit against the root, which does not
///   depend on where the chain's base is.
/// - The forward pass, base to tip, works on rotations: each joint is turned to aim its
///   bone, from where the joint really is, at its child's position from the backward pass,
///   its constraint is applied to that rotation (a hinge aims within its plane: the wanted
///   direction projected onto the plane normal to the axis, then the limits), and the
///   child's position is read back from the result. A ball or free joint whose child is a
///   hinge is then twisted about its own bone so the hinge's plane contains the direction
///   the hinge's bone wants, which the shortest arc alone never does.
///
/// So every iteration ends with rotations inside the limits, and the positions the next
/// backward pass starts from are the ones those rotations give.
///
/// Limited FABRIK can stall: when the chain must curl back towards its base, the bones
/// near the tip sit at their limits and the straight bones near the base are only pushed
/// along their own length, which bends nothing, so the passes repeat the same pose. When
/// a constrained iteration fails to bring the end effector at least 10% closer, the solver
/// finishes as a hybrid: the iterations left in the budget run as constrained
/// [`CcdSolver`] sweeps from the pose FABRIK reached (one sweep per iteration), which turn
/// the base joints the passes could not; if the sweeps end farther away, the FABRIK pose
/// is kept. The iterations reported count both. On the `ch13` tentacle path this is
/// about 4% of the frames, all where the target comes back near the base.
///
/// A goal farther than the chain's length stretches the chain straight towards it. The
/// solver owns scratch buffers that grow to the longest chain it has seen; after that
/// nothing allocates.
#[derive(Clone, Debug, PartialEq)]
pub struct FabrikSolver {
    /// Maximum number of backward + forward passes.
    pub iterations: usize,
    /// Distance to the goal that counts as reached.
    pub threshold: f32,
    positions: Vec<Vec3>,
    lengths: Vec<f32>,
    dirs: Vec<Vec3>,
    /// Per joint, the largest angle to its parent's bone ([`bend_limit`]).
    bends: Vec<f32>,
    /// The rotations a hybrid finish starts from, restored if it ends farther away.
    saved: Vec<Quat>,
}

impl Default for FabrikSolver {
    fn default() -> Self {
        Self::new(15, 1e-4)
    }
}

impl FabrikSolver {
    /// A solver with `iterations` passes and a distance `threshold`.
    pub fn new(iterations: usize, threshold: f32) -> Self {
        Self {
            iterations,
            threshold,
            positions: Vec::new(),
            lengths: Vec::new(),
            dirs: Vec::new(),
            bends: Vec::new(),
            saved: Vec::new(),
        }
    }

    /// Sizes the scratch buffers for chains of up to `joints` joints, so that no solve on
    /// such a chain allocates (otherwise the first solve that runs the passes does).
    #[must_use]
    pub fn with_capacity(mut self, joints: usize) -> Self {
        self.reserve(joints);
        self
    }

    fn reserve(&mut self, joints: usize) {
        self.positions.reserve(joints.saturating_sub(self.positions.len()));
        self.saved.reserve(joints.saturating_sub(self.saved.len()));
        let bones = joints.saturating_sub(1);
        self.lengths.reserve(bones.saturating_sub(self.lengths.len()));
        self.dirs.reserve(bones.saturating_sub(self.dirs.len()));
        self.bends.reserve(bones.saturating_sub(self.bends.len()));
    }

    /// Moves the end effector of `chain` towards `goal` (world space) and writes the
    /// rotations back into the chain. The first call with a chain longer than any before
    /// sizes the solver's scratch buffers; later ones allocate nothing.
    ///
    /// # Errors
    /// A non-finite goal.
    pub fn solve(&mut self, chain: &mut IkChain, goal: &Vec3) -> Result<SolveResult, IkError> {
        check_finite_vec("goal", goal)?;
        chain.update_worlds(0);
        let n = chain.len();
        let last = n - 1;
        let end_distance = |c: &IkChain| (c.worlds()[last].translation - goal).norm();
        // Before the early exit, so that a chain that starts on its goal still warms up.
        self.reserve(n);
        if n == 1 || end_distance(chain) < self.threshold {
            let d = end_distance(chain);
            return Ok(SolveResult { solved: d < self.threshold, iterations: 0, distance: d });
        }
        self.load(chain);
        let base = self.positions[0];
        let total: f32 = self.lengths.iter().sum();
        let constrained = chain.is_constrained();
        let mut iterations = 0;
        if (goal - base).norm() >= total {
            // Out of reach: every bone along the line to the goal.
            let to_goal = goal - base;
            let dir = if to_goal.norm_squared() > TINY_SQ { to_goal.normalize() } else { self.dirs[0] };
            for i in 0..last {
                self.positions[i + 1] = self.positions[i] + dir * self.lengths[i];
            }
            self.write_rotations(chain);
            if constrained {
                chain.apply_constraints();
            }
            iterations = 1;
        } else {
            let mut previous = (self.positions[last] - goal).norm();
            for it in 0..self.iterations {
                iterations = it + 1;
                if constrained {
                    self.backward_constrained(chain, goal);
                    self.forward_constrained(chain);
                } else {
                    self.backward(goal);
                    self.forward(&base);
                }
                let d = (self.positions[last] - goal).norm();
                if d < self.threshold {
                    break;
                }
                if constrained && d > STALL * previous && iterations < self.iterations {
                    iterations += self.finish_with_sweeps(chain, goal, self.iterations - iterations, d)?;
                    break;
                }
                previous = d;
            }
            if !constrained {
                self.write_rotations(chain);
            }
        }
        let d = end_distance(chain);
        Ok(SolveResult { solved: d < self.threshold, iterations, distance: d })
    }

    /// The hybrid finish (see [`FabrikSolver`]): up to `sweeps` constrained CCD sweeps
    /// from where the passes stalled, `distance` from the goal; kept only if they end
    /// closer. Returns the sweeps run.
    fn finish_with_sweeps(
        &mut self,
        chain: &mut IkChain,
        goal: &Vec3,
        sweeps: usize,
        distance: f32,
    ) -> Result<usize, IkError> {
        self.saved.clear();
        self.saved.extend(chain.locals().iter().map(|t| t.rotation));
        let r = CcdSolver::new(sweeps, self.threshold).solve(chain, goal)?;
        if r.distance > distance {
            for (i, q) in self.saved.iter().enumerate() {
                chain.set_rotation(i, *q);
            }
            chain.update_worlds(0);
        }
        Ok(r.iterations)
    }

    /// Copies world positions, bone lengths, fallback directions and bend limits out of
    /// the chain.
    fn load(&mut self, chain: &IkChain) {
        let n = chain.len();
        self.positions.clear();
        self.positions.extend(chain.worlds().iter().map(|w| w.translation));
        self.lengths.clear();
        self.dirs.clear();
        self.bends.clear();
        let mut fallback = chain.root().rotation * Vec3::y();
        for i in 0..n - 1 {
            let seg = self.positions[i + 1] - self.positions[i];
            let len = seg.norm();
            self.lengths.push(len);
            if len * len > TINY_SQ {
                fallback = seg / len;
            }
            self.dirs.push(fallback);
            self.bends.push(bend_limit(&chain.constraints()[i], &chain.bone(i), &chain.locals()[i].translation));
        }
    }

    fn backward(&mut self, goal: &Vec3) {
        let last = self.positions.len() - 1;
        self.positions[last] = *goal;
        for i in (0..last).rev() {
            let v = self.positions[i] - self.positions[i + 1];
            let dir = if v.norm_squared() > TINY_SQ { v.normalize() } else { -self.dirs[i] };
            self.positions[i] = self.positions[i + 1] + dir * self.lengths[i];
        }
    }

    /// The constraint-aware backward pass (see [`FabrikSolver`]): each bone, tip to base,
    /// is kept within its child joint's bend limit of the child's bone, and the first bone
    /// within its own joint's limit against the root.
    fn backward_constrained(&mut self, chain: &IkChain, goal: &Vec3) {
        let last = self.positions.len() - 1;
        self.positions[last] = *goal;
        for i in (0..last).rev() {
            let v = self.positions[i + 1] - self.positions[i];
            let mut dir = if v.norm_squared() > TINY_SQ { v.normalize() } else { self.dirs[i] };
            if i + 1 < last {
                let child = self.positions[i + 2] - self.positions[i + 1];
                if child.norm_squared() > TINY_SQ {
                    dir = clamp_to_cone(&child.normalize(), &dir, self.bends[i + 1]);
                }
            }
            if i == 0 {
                let root = chain.root().rotation;
                let local = root.inverse() * dir;
                let c = chain.constraints()[0];
                dir = root * allowed_direction(&c, &chain.bone(0), &chain.locals()[0].translation, &local);
            }
            self.positions[i] = self.positions[i + 1] - dir * self.lengths[i];
        }
    }

    fn forward(&mut self, base: &Vec3) {
        self.positions[0] = *base;
        for i in 0..self.positions.len() - 1 {
            let v = self.positions[i + 1] - self.positions[i];
            let dir = if v.norm_squared() > TINY_SQ { v.normalize() } else { self.dirs[i] };
            self.positions[i + 1] = self.positions[i] + dir * self.lengths[i];
        }
    }

    /// The constraint-aware forward pass (see [`FabrikSolver`]): rotations are set parents
    /// first, each aimed from the joint's actual position and constrained, and the
    /// positions follow from them.
    fn forward_constrained(&mut self, chain: &mut IkChain) {
        let n = chain.len();
        for i in 0..n - 1 {
            let parent = *chain.parent_world(i);
            let pos = parent.transform_point(&chain.locals()[i].translation);
            let desired = parent.rotation.inverse() * (self.positions[i + 1] - pos);
            let bone = chain.bone(i);
            let c = chain.constraints()[i];
            if let Constraint::Hinge { axis, reference, limits } = c {
                if let Some(r) = aim_hinge(&axis, &reference, limits, &bone, &desired) {
                    chain.set_rotation(i, r);
                }
            } else {
                let start = chain.start_rotation(i);
                let bind = start * bone;
                if desired.norm_squared() > TINY_SQ && bind.norm_squared() > TINY_SQ {
                    chain.set_rotation(i, anim_math::quat::from_to(&bind, &desired) * start);
                }
                chain.constrain(i);
            }
            chain.update_world(i);
            if i + 2 < n && twists_freely(&c) && matches!(chain.constraints()[i + 1], Constraint::Hinge { .. }) {
                self.twist_for_hinge(chain, i);
            }
            self.positions[i] = pos;
            self.positions[i + 1] = chain.worlds()[i].transform_point(&chain.locals()[i + 1].translation);
        }
        chain.update_world(n - 1);
    }

    /// Turns joint `i` (world transform up to date) about its own bone so that the plane
    /// of its child's hinge contains the direction from the child to where the backward
    /// pass put the grandchild, or comes as close as the hinge's axis allows. Of the two
    /// turns that do, the one that keeps the hinge inside its limits wins, then the
    /// smaller. The bone does not move, so joint `i`'s own limit still holds.
    fn twist_for_hinge(&self, chain: &mut IkChain, i: usize) {
        let Constraint::Hinge { axis, reference, limits } = chain.constraints()[i + 1] else {
            return;
        };
        let world = chain.worlds()[i];
        let child = world.transform_point(&chain.locals()[i + 1].translation);
        let (Some(u), Some(d), Some(v)) = (
            (world.rotation * chain.bone(i)).try_normalize(1e-6),
            (self.positions[i + 2] - child).try_normalize(1e-6),
            (reference * chain.bone(i + 1)).try_normalize(1e-6),
        ) else {
            return;
        };
        // After a turn by φ about u the hinge axis is rotation(u, φ)·w; the hinge's bone can
        // point along d when that axis makes the same angle with d as with v: a·d = a·v.
        let w = world.rotation * axis.into_inner();
        let (w_along, d_along) = (w.dot(&u), d.dot(&u));
        let (w_across, d_across) = (w - u * w_along, d - u * d_along);
        let scale = w_across.norm() * d_across.norm();
        if scale < 1e-6 {
            return;
        }
        let k = ((v.dot(axis.as_ref()) - w_along * d_along) / scale).clamp(-1.0, 1.0);
        let gamma = u.dot(&w_across.cross(&d_across)).atan2(w_across.dot(&d_across));
        let wrap = |x: f32| (x + PI).rem_euclid(2.0 * PI) - PI;
        let bone = chain.bone(i + 1);
        let inverse = world.rotation.inverse();
        let u_axis = Unit::new_unchecked(u);
        let cost = |phi: f32| {
            // How far outside its limits the hinge would have to turn, then how far we twist.
            let local = inverse * (Quat::from_axis_angle(&u_axis, -phi) * d);
            let outside = match (hinge_angle(&axis, &reference, &bone, &local), limits) {
                (Some(theta), Some((lo, hi))) => (theta - theta.clamp(lo, hi)).abs(),
                _ => 0.0,
            };
            (outside, phi.abs())
        };
        let spread = k.acos();
        let (a, b) = (wrap(gamma - spread), wrap(gamma + spread));
        let (ca, cb) = (cost(a), cost(b));
        let phi = if cb.0 + 1e-5 < ca.0 || (cb.0 <= ca.0 + 1e-5 && cb.1 < ca.1) { b } else { a };
        if phi.abs() > 1e-7 {
            chain.rotate_world(i, &Quat::from_axis_angle(&u_axis, phi));
            chain.update_world(i);
        }
    }

    /// Turns each joint from its start rotation so its bone points at the solved position
    /// of its child, parents first.
    fn write_rotations(&self, chain: &mut IkChain) {
        let n = chain.len();
        for i in 0..n - 1 {
            let parent = *chain.parent_world(i);
            let pos = parent.transform_point(&chain.locals()[i].translation);
            let desired = parent.rotation.inverse() * (self.positions[i + 1] - pos);
            let start = chain.start_rotation(i);
            let bind = start * chain.bone(i);
            if desired.norm_squared() > TINY_SQ && bind.norm_squared() > TINY_SQ {
                chain.set_rotation(i, anim_math::quat::from_to(&bind, &desired) * start);
            }
            chain.update_world(i);
        }
        chain.update_world(n - 1);
    }
}
