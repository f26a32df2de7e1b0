//! Why skinning data or a skinning call was rejected.

use crate::length::LengthMismatch;
use thiserror::Error;

/// Why skinning data was rejected.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum SkinningError {
    /// Joint and weight arrays disagree, or are not a multiple of the influence count.
    #[error("influences: {0}")]
    Layout(String),
    /// A vertex references a joint the palette does not have (with a non-zero weight).
    #[error("vertex {vertex} influence {slot} uses joint {joint}, but the skin has {count} joints")]
    JointOutOfRange {
        /// Vertex index.
        vertex: usize,
        /// Influence slot.
        slot: usize,
        /// Joint index.
        joint: usize,
        /// Joints in the skin.
        count: usize,
    },
    /// A weight is negative, NaN or infinite.
    #[error("vertex {vertex} influence {slot} has weight {weight}, which is negative or not finite")]
    BadWeight {
        /// Vertex index.
        vertex: usize,
        /// Influence slot.
        slot: usize,
        /// The weight.
        weight: f32,
    },
    /// The palette is shorter than the joints the influences use.
    #[error("palette has {got} entries, the influences use joints up to {needed}")]
    PaletteTooShort {
        /// Palette length.
        got: usize,
        /// Smallest acceptable length.
        needed: usize,
    },
    /// Skinned normals were asked for, but the mesh has none: glTF files may omit them
    /// (Fox does). Compute them once with
    /// [`Mesh::smooth_normals`](crate::skin::Mesh::smooth_normals), or pass `normals: None`
    /// in both the input and the output.
    #[error(
        "the mesh has no normals ({vertices} vertices; glTF files may omit them): compute them once with \
         Mesh::smooth_normals, or skin positions only (normals: None in input and output)"
    )]
    NoNormals {
        /// Vertices of the mesh.
        vertices: usize,
    },
    /// Input and output slices disagree in length.
    #[error(transparent)]
    WrongLength(#[from] LengthMismatch),
}
