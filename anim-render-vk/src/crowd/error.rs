//! Why a crowd cannot be created, fed or drawn: [`CrowdError`], which
//! [`RenderError::Crowd`](crate::RenderError::Crowd) wraps. It names nothing else of the
//! crate, so the crate's error type can wrap it without importing the crowd renderer.

/// Why a crowd cannot be created, fed or drawn.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CrowdError {
    /// The handle names no crowd of this renderer.
    #[error("unknown crowd {0}")]
    UnknownCrowd(usize),
    /// A crowd's mesh must have skinning influences.
    #[error("mesh {0} has no skinning influences")]
    NotSkinned(usize),
    /// The mesh names joints the atlas does not have.
    #[error("the mesh needs {mesh} joints, the atlas has {atlas}")]
    JointsExceedAtlas {
        /// The mesh's joint bound.
        mesh: usize,
        /// The atlas's joint count.
        atlas: usize,
    },
    /// More instances than the crowd was created for.
    #[error("{len} instances for a crowd of capacity {capacity}")]
    CapacityExceeded {
        /// Instances given.
        len: usize,
        /// The crowd's capacity.
        capacity: u32,
    },
    /// Something exceeds what the device allows (image size, buffer range, dispatch size).
    #[error("{what}: {size} exceeds the device limit {max}")]
    DeviceLimit {
        /// What was too large.
        what: &'static str,
        /// Its size.
        size: u64,
        /// The device's limit.
        max: u64,
    },
    /// Dual-quaternion skinning of an atlas whose transforms are not rigid.
    #[error("dual-quaternion skinning needs a rigid atlas")]
    DqNeedsRigidAtlas,
    /// An instance record that names frames or clips the atlas does not have.
    #[error("instance {index}: {reason}")]
    InvalidInstance {
        /// Index of the record.
        index: usize,
        /// What is wrong.
        reason: String,
    },
    /// The atlas's data does not match its declared size.
    #[error("invalid atlas: {0}")]
    InvalidAtlas(String),
    /// A frame draws the same crowd twice.
    #[error("crowd {0} is drawn twice in one frame")]
    DrawnTwice(usize),
    /// A LOD distance that is not positive and finite.
    #[error("LOD distance {0} is not positive and finite")]
    InvalidLod(f32),
    /// A screen-space error threshold that is not positive and finite.
    #[error("LOD error threshold {0} pixels is not positive and finite")]
    InvalidLodPixels(f32),
    /// A draw picks mesh levels of a crowd that has none.
    #[error("crowd {0} has no mesh levels of detail (Renderer::set_crowd_lods)")]
    NoMeshLods(usize),
    /// Mesh levels that do not fit the crowd's mesh.
    #[error("invalid mesh levels of detail: {0}")]
    InvalidMeshLods(String),
}
