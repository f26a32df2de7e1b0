//! The small types and constants that every layer of the renderer names: the mesh handle,
//! the GPU skinning paths, the number of frames in flight and the morph-target limit.
//!
//! This file imports nothing from the crate: it sits at the bottom of the import graph, so
//! the error type, the frame description and the renderer can all name these without
//! importing each other (`tests/no_import_cycles.rs` keeps that graph free of cycles). Each
//! item is re-exported where users find it: [`MeshId`] and [`SkinPath`] from `frame`,
//! [`FRAMES_IN_FLIGHT`] from `renderer`, [`MAX_ACTIVE_MORPH_TARGETS`] from `skinning`.

/// Handle of a mesh registered with [`crate::Renderer::add_mesh`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MeshId(pub(crate) usize);

/// Where GPU skinning runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SkinPath {
    /// In the vertex shader of the draw (LBS or DQ).
    #[default]
    VertexShader,
    /// In a compute pass that writes a vertex buffer, then drawn by the static pipeline
    /// (LBS or DQ).
    Compute,
    /// In the vertex shader, with the bone matrices read from a texel buffer (seed 003):
    /// linear blend skinning only, drawn unlit by default; does not apply morph targets
    /// (non-zero weights are [`crate::RenderError::MorphUnsupported`]).
    BoneTexture,
}

/// Frames the CPU may record while the GPU still works on earlier ones.
pub const FRAMES_IN_FLIGHT: usize = 2;

/// The most morph targets with a non-zero weight one draw may apply on the GPU (the
/// `*_morph` passes, compute and vertex shader, loop over them per vertex; the renderer
/// answers more with [`RenderError::TooManyMorphTargets`]). A mesh may have any number of
/// targets; only the active ones count.
///
/// [`RenderError::TooManyMorphTargets`]: crate::RenderError::TooManyMorphTargets
pub const MAX_ACTIVE_MORPH_TARGETS: usize = 64;
