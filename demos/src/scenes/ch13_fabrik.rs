//! Chapter 13: the tentacle of [`crate::chain`] (as in [`crate::scenes::ch13_ccd`]) solved with FABRIK: backward
//! and forward reaching passes over the joint positions, with the constraints applied to
//! the rotations inside every iteration.
//!
//! What to look for: without constraints (`c`) FABRIK reaches every point of the path in
//! a few passes, fewer than CCD needs. With the limits on it often stops short (the red
//! line from the tip to the target, the distance in the title): `anim_ik`'s FABRIK moves
//! the joint positions freely and only afterwards projects the rotations onto the limits,
//! and it turns each joint by the shortest arc, so it never twists a parent to line up a
//! hinge's plane with the goal. CCD, which turns one joint at a time under its limit,
//! reaches the same path with the same limits.

use crate::chain::{ChainDemo, ChainSolver, ITERATIONS, THRESHOLD};
use anim_ik::{FabrikSolver, IkChain, IkError, SolveResult};
use anim_math::Vec3;

/// FABRIK ([`FabrikSolver`]).
#[derive(Clone, Debug)]
pub struct Fabrik(pub FabrikSolver);

impl ChainSolver for Fabrik {
    const NAME: &'static str = "ch13_fabrik";
    const ABOUT: &'static str =
        "FABRIK: a constrained 9-joint tentacle reaching for a moving target (cones: ball joints, arc: hinge).";
    const LABEL: &'static str = "FABRIK";

    fn create() -> Self {
        Self(FabrikSolver::new(ITERATIONS, THRESHOLD))
    }

    fn solve(&mut self, chain: &mut IkChain, goal: &Vec3) -> Result<SolveResult, IkError> {
        self.0.solve(chain, goal)
    }
}

/// The FABRIK demo.
pub type FabrikDemo = ChainDemo<Fabrik>;
