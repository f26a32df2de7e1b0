//! Forward and backward reaching IK (the book's `FABRIKSolver`).

use crate::ccd::{SolveResult, TINY_SQ};
use crate::chain::Constraint;
use crate::chain::IkChain;
use crate::error::{IkError, check_finite_vec};
use anim_math::{Quat, Vec3};
use nalgebra::Unit;

/// The hinge rotation `rotation(axis, θ) · reference` whose bone points closest to
/// `desired` (parent frame): both directions are projected onto the plane normal to the
/// axis and `θ` is the signed angle between them, clamped to `limits`. `None` when either
/// projection vanishes (the bone lies along the axis, or the goal does).
fn aim_hinge(
    axis: &Unit<Vec3>,
    reference: &Quat,
    limits: Option<(f32, f32)>,
    bone: &Vec3,
    desired: &Vec3,
) -> Option<Quat> {
    let at_zero = reference * bone;
    let a = at_zero - axis.as_ref() * at_zero.dot(axis);
    let b = desired - axis.as_ref() * desired.dot(axis);
    if a.norm_squared() < TINY_SQ || b.norm_squared() < TINY_SQ {
        return None;
    }
    let mut theta = axis.dot(&a.cross(&b)).atan2(a.dot(&b));
    if let Some((lo, hi)) = limits {
        theta = theta.clamp(lo, hi);
    }
    Some(Quat::from_axis_angle(axis, theta) * reference)
}

/// FABRIK: works on the joints' world positions and bone lengths. The backward pass puts
/// the end effector on the goal and pulls each joint towards its child at bone length; the
/// forward pass puts the first joint back on its base and pushes each joint out from its
/// parent. Afterwards each joint is turned from its start rotation (the chain's rotation
/// when it was read) by the shortest arc (`anim_math::quat::from_to`) that points its bone along
/// the solved segment, so the twist the pose had is kept.
///
/// With constraints the forward pass works on rotations, parents first: each joint is
/// turned to aim its bone, from where the joint really is, at its child's position from the
/// backward pass; the joint's constraint is applied to that rotation; the child's position
/// is read back from the constrained result. A hinge joint aims within its plane (the
/// wanted direction projected onto the plane normal to the axis, then the limits), which
/// reaches much more often than aiming freely and clamping afterwards. A goal farther
/// than the chain's length stretches the chain straight towards it. The solver owns
/// scratch buffers that grow to the longest chain it has seen; after that nothing allocates.
#[derive(Clone, Debug, PartialEq)]
pub struct FabrikSolver {
    /// Maximum number of backward + forward passes.
    pub iterations: usize,
    /// Distance to the goal that counts as reached.
    pub threshold: f32,
    positions: Vec<Vec3>,
    lengths: Vec<f32>,
    dirs: Vec<Vec3>,
}

impl Default for FabrikSolver {
    fn default() -> Self {
        Self::new(15, 1e-4)
    }
}

impl FabrikSolver {
    /// A solver with `iterations` passes and a distance `threshold`.
    pub fn new(iterations: usize, threshold: f32) -> Self {
        Self { iterations, threshold, positions: Vec::new(), lengths: Vec::new(), dirs: Vec::new() }
    }

    /// Moves the end effector of `chain` towards `goal` (world space) and writes the
    /// rotations back into the chain.
    ///
    /// # Errors
    /// A non-finite goal.
    pub fn solve(&mut self, chain: &mut IkChain, goal: &Vec3) -> Result<SolveResult, IkError> {
        check_finite_vec("goal", goal)?;
        chain.update_worlds(0);
        let n = chain.len();
        let last = n - 1;
        let end_distance = |c: &IkChain| (c.worlds()[last].translation - goal).norm();
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
            for it in 0..self.iterations {
                iterations = it + 1;
                self.backward(goal);
                if constrained {
                    self.forward_constrained(chain);
                } else {
                    self.forward(&base);
                }
                if (self.positions[last] - goal).norm() < self.threshold {
                    break;
                }
            }
            if !constrained {
                self.write_rotations(chain);
            }
        }
        let d = end_distance(chain);
        Ok(SolveResult { solved: d < self.threshold, iterations, distance: d })
    }

    /// Copies world positions, bone lengths and fallback directions out of the chain.
    fn load(&mut self, chain: &IkChain) {
        let n = chain.len();
        self.positions.clear();
        self.positions.extend(chain.worlds().iter().map(|w| w.translation));
        self.lengths.clear();
        self.dirs.clear();
        let mut fallback = chain.root().rotation * Vec3::y();
        for i in 0..n - 1 {
            let seg = self.positions[i + 1] - self.positions[i];
            let len = seg.norm();
            self.lengths.push(len);
            if len * len > TINY_SQ {
                fallback = seg / len;
            }
            self.dirs.push(fallback);
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
            if let Constraint::Hinge { axis, reference, limits } = chain.constraints()[i] {
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
            self.positions[i] = pos;
            self.positions[i + 1] = chain.worlds()[i].transform_point(&chain.locals()[i + 1].translation);
        }
        chain.update_world(n - 1);
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
