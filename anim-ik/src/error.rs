use anim_core::LengthMismatch;
use thiserror::Error;

/// Why an IK operation could not run.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum IkError {
    /// The goal (target, pole or aim point) has a NaN or infinite component.
    #[error("{what} is not finite")]
    NonFinite {
        /// Which input: "goal", "pole", "root transform", "joint transform", ...
        what: &'static str,
    },
    /// A chain needs at least one joint.
    #[error("an IK chain needs at least one joint")]
    EmptyChain,
    /// A joint index is not in the skeleton or pose.
    #[error("joint {joint} is out of range, the skeleton has {count} joints")]
    JointOutOfRange {
        /// The joint index.
        joint: usize,
        /// Joint count.
        count: usize,
    },
    /// A ground mesh triangle names a vertex that does not exist.
    #[error("triangle {triangle} uses vertex {vertex}, but the mesh has {count} vertices")]
    VertexOutOfRange {
        /// Index of the triangle.
        triangle: usize,
        /// The vertex index it names.
        vertex: usize,
        /// Vertex count.
        count: usize,
    },
    /// Consecutive chain joints are not parent and child.
    #[error("chain joint {child} does not have chain joint {parent} as its parent")]
    NotAChain {
        /// The joint expected to be the parent.
        parent: usize,
        /// The joint whose parent differs.
        child: usize,
    },
    /// A pose, per-leg or per-sample array has the wrong length.
    #[error(transparent)]
    WrongLength(#[from] LengthMismatch),
    /// The pose belongs to another skeleton than the one given.
    #[error(transparent)]
    Pose(#[from] anim_core::pose::PoseError),
    /// A constraint index is past the end of the chain.
    #[error("constraint for chain joint {index}, but the chain has {len} joints")]
    ConstraintOutOfRange {
        /// The chain index.
        index: usize,
        /// Chain length.
        len: usize,
    },
    /// A constraint or setting has an invalid value.
    #[error("invalid {what}: {value}")]
    InvalidSetting {
        /// Which setting.
        what: &'static str,
        /// Its value.
        value: f32,
    },
}

/// `Ok` for a vector of finite components, else the error naming `what`. Per call on the
/// IK hot paths: the three tests are written out (the iterator version did not fold).
#[inline]
pub(crate) fn check_finite_vec(what: &'static str, v: &anim_math::Vec3) -> Result<(), IkError> {
    if v.x.is_finite() && v.y.is_finite() && v.z.is_finite() { Ok(()) } else { Err(IkError::NonFinite { what }) }
}
