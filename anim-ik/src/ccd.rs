//! Cyclic coordinate descent (the book's `CCDSolver`).

use crate::chain::IkChain;
use crate::error::{IkError, check_finite_vec};
use anim_math::Vec3;

/// What a solver did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SolveResult {
    /// The end effector ended within the threshold of the goal.
    pub solved: bool,
    /// Iterations run (0 when the chain already touched the goal).
    pub iterations: usize,
    /// Final distance from the end effector to the goal.
    pub distance: f32,
}

/// Squared distance below which a vector is treated as zero (no direction).
pub(crate) const TINY_SQ: f32 = 1e-12;

/// CCD: from the joint before the end effector back to the chain's first joint, turn each
/// joint so the direction to the end effector matches the direction to the goal; repeat.
///
/// Each joint's constraint is applied right after it turns (inside every iteration), and
/// the solver stops as soon as the end effector is within `threshold` of the goal.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CcdSolver {
    /// Maximum number of passes over the chain (the book's default: 15).
    pub iterations: usize,
    /// Distance to the goal that counts as reached.
    pub threshold: f32,
}

impl Default for CcdSolver {
    fn default() -> Self {
        Self { iterations: 15, threshold: 1e-4 }
    }
}

impl CcdSolver {
    /// A solver with `iterations` passes and a distance `threshold`.
    pub fn new(iterations: usize, threshold: f32) -> Self {
        Self { iterations, threshold }
    }

    /// Turns the joints of `chain` so its end effector approaches `goal` (world space).
    /// Allocates nothing. An unreachable goal leaves the chain stretched towards it; a
    /// goal at a joint leaves that joint unturned (there is no direction to turn to).
    ///
    /// # Errors
    /// A non-finite goal.
    pub fn solve(&self, chain: &mut IkChain, goal: &Vec3) -> Result<SolveResult, IkError> {
        check_finite_vec("goal", goal)?;
        let n = chain.len();
        let last = n - 1;
        let distance = |c: &IkChain| (c.worlds()[last].translation - goal).norm();
        chain.update_worlds(0);
        // Turning joint j moves only its descendants, and the sweep goes from the end
        // towards the base, so within a sweep only the end effector needs tracking: it
        // turns rigidly about joint j. The world transforms are rebuilt once per sweep.
        let mut effector = chain.worlds()[last].translation;
        for it in 0..self.iterations {
            if (effector - goal).norm() < self.threshold {
                return Ok(SolveResult { solved: true, iterations: it, distance: distance(chain) });
            }
            for j in (0..last).rev() {
                let pos = chain.worlds()[j].translation;
                let to_effector = effector - pos;
                let to_goal = goal - pos;
                let before = chain.locals()[j].rotation;
                // "No direction" also relative to where the joint is: far from the origin
                // a difference of a few ulps of its coordinates is only rounding.
                let tiny = TINY_SQ.max(1e-12 * pos.norm_squared());
                if to_goal.norm_squared() > tiny && to_effector.norm_squared() > tiny {
                    let delta = anim_math::quat::from_to(&to_effector, &to_goal);
                    chain.rotate_world(j, &delta);
                }
                chain.constrain(j);
                // The world-space turn actually applied (after the constraint).
                let p = chain.parent_world(j).rotation;
                let applied = p * chain.locals()[j].rotation * before.inverse() * p.inverse();
                effector = pos + applied * to_effector;
                if (effector - goal).norm() < self.threshold {
                    chain.update_worlds(j);
                    return Ok(SolveResult { solved: true, iterations: it + 1, distance: distance(chain) });
                }
            }
            chain.update_worlds(0);
            effector = chain.worlds()[last].translation;
        }
        let d = distance(chain);
        Ok(SolveResult { solved: d < self.threshold, iterations: self.iterations, distance: d })
    }
}
