//! Chapter 13: a tentacle of [`JOINTS`] joints rooted on the ground reaches for a target
//! that flies along a Lissajous path, solved with CCD. The same scene runs FABRIK in
//! [`crate::scenes::ch13_fabrik`]: [`ChainDemo`] is generic over the [`ChainSolver`].
//!
//! Constraints (toggled with `c`): the first joint may lean at most
//! [`ROOT_CONE`] from straight up, joint [`HINGE_JOINT`] is a hinge about its parent's x
//! axis limited to ±[`HINGE_LIMIT`], every other joint is a ball and socket that keeps its
//! bone within [`BALL_CONE`] of its parent's bone. The limits are drawn: cones for the
//! balls, an arc for the hinge, green while inside and red at the limit.

pub use crate::chain::{
    BALL_CONE, BONE_LENGTHS, ChainDemo, ChainSolver, HINGE_JOINT, HINGE_LIMIT, ITERATIONS, JOINTS, Limits, PATH_CENTRE,
    ROOT_CONE, SolverKind, THRESHOLD, Tentacle, bone_mesh, constraint, reach, straight_chain, target_at,
};

/// CCD ([`anim_ik::CcdSolver`]) first.
#[derive(Clone, Copy, Debug)]
pub struct Ccd;

impl ChainSolver for Ccd {
    const NAME: &'static str = "ch13_ccd";
    const ABOUT: &'static str =
        "CCD: a constrained 9-joint tentacle reaching for a moving target (cones: ball joints, arc: hinge).";
    const LABEL: &'static str = "CCD";
    const KIND: SolverKind = SolverKind::Ccd;
}

/// The CCD demo.
pub type CcdDemo = ChainDemo<Ccd>;
