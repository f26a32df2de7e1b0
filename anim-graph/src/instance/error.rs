//! Why an update could not run. After [`crate::graph::Graph::build`] accepted a graph,
//! only the caller's arguments can be wrong: a bad time step or a pose of another
//! skeleton. The other variants carry what the runtime jobs report, and a test of every
//! node kind on hostile but accepted graphs keeps them unreachable.

use thiserror::Error;

/// Why [`crate::instance::GraphInstance::update`] failed.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum UpdateError {
    /// The time step is negative, NaN or infinite.
    #[error("time step {0} is not a finite number of seconds ≥ 0")]
    BadTimeStep(f32),
    /// The output pose does not fit the graph's skeleton.
    #[error(transparent)]
    Pose(#[from] anim_core::pose::PoseError),
    /// Sampling failed.
    #[error(transparent)]
    Clip(#[from] anim_core::clip::ClipError),
    /// Blending failed.
    #[error(transparent)]
    Blend(#[from] anim_core::blend::BlendError),
    /// An IK node failed.
    #[error(transparent)]
    Ik(#[from] anim_ik::IkError),
}
