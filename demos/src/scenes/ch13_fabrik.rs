//! Chapter 13: the tentacle of [`crate::chain`] (as in [`crate::scenes::ch13_ccd`]) solved with FABRIK: backward
//! and forward reaching passes over the joint positions, with the constraints applied to
//! the rotations inside every iteration.
//!
//! What to look for: without constraints (`c`) FABRIK reaches every point of the path in
//! a few passes, fewer than CCD needs. With the limits on both passes respect them (the
//! backward pass keeps each bone within its child joint's limit, the forward pass aims and
//! limits the rotations, twisting the hinge's parent so the hinge's plane faces the goal),
//! and where the target comes back near the base and the passes stall, `anim_ik`'s FABRIK
//! finishes with constrained CCD sweeps from the same iteration budget: it comes within
//! 1 mm on at least as many frames of the path as CCD (`demos/tests/ch13_fabrik_limits.rs`).

use crate::chain::{ChainDemo, ChainSolver, SolverKind};

/// FABRIK ([`anim_ik::FabrikSolver`]) first.
#[derive(Clone, Copy, Debug)]
pub struct Fabrik;

impl ChainSolver for Fabrik {
    const NAME: &'static str = "ch13_fabrik";
    const ABOUT: &'static str =
        "FABRIK: a constrained 9-joint tentacle reaching for a moving target (cones: ball joints, arc: hinge).";
    const LABEL: &'static str = "FABRIK";
    const KIND: SolverKind = SolverKind::Fabrik;
}

/// The FABRIK demo.
pub type FabrikDemo = ChainDemo<Fabrik>;
