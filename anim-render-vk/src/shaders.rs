//! SPIR-V of every pass, compiled from `shaders/*.{vert,frag,comp}` by `build.rs`
//! (Vulkan 1.2 target) and embedded in the library.

use crate::error::{RenderError, VkCall};
use ash::vk;

macro_rules! spirv {
    ($file:literal) => {
        include_bytes!(concat!(env!("OUT_DIR"), "/", $file, ".spv"))
    };
}

/// Static mesh vertex shader (also draws compute- and CPU-skinned vertices).
pub const MESH_VERT: &[u8] = spirv!("mesh.vert");
/// Fragment shader of all mesh passes: the material (metallic-roughness) or half-Lambert debug colours.
pub const MESH_FRAG: &[u8] = spirv!("mesh.frag");
/// Vertex-shader linear blend skinning.
pub const SKIN_LBS_VERT: &[u8] = spirv!("skin_lbs.vert");
/// Vertex-shader dual-quaternion skinning.
pub const SKIN_DQ_VERT: &[u8] = spirv!("skin_dq.vert");
/// Vertex-shader linear blend skinning of morphed vertices.
pub const SKIN_LBS_MORPH_VERT: &[u8] = spirv!("skin_lbs_morph.vert");
/// Vertex-shader dual-quaternion skinning of morphed vertices.
pub const SKIN_DQ_MORPH_VERT: &[u8] = spirv!("skin_dq_morph.vert");
/// Compute linear blend skinning.
pub const SKIN_LBS_COMP: &[u8] = spirv!("skin_lbs.comp");
/// Compute dual-quaternion skinning.
pub const SKIN_DQ_COMP: &[u8] = spirv!("skin_dq.comp");
/// Compute linear blend skinning of morphed vertices.
pub const SKIN_LBS_MORPH_COMP: &[u8] = spirv!("skin_lbs_morph.comp");
/// Compute dual-quaternion skinning of morphed vertices.
pub const SKIN_DQ_MORPH_COMP: &[u8] = spirv!("skin_dq_morph.comp");
/// Debug lines vertex shader.
pub const LINES_VERT: &[u8] = spirv!("lines.vert");
/// Debug lines fragment shader.
pub const LINES_FRAG: &[u8] = spirv!("lines.frag");
/// Skinning with bone matrices from a texel buffer (seed 003).
pub const BONE_TEXTURE_VERT: &[u8] = spirv!("bone_texture.vert");

/// Crowd book path: skinning from the animation atlas in the vertex shader
/// (specialization constants: atlas layout, skinning method).
pub const CROWD_BOOK_VERT: &[u8] = spirv!("crowd_book.vert");
/// Crowd palette paths: the palette of every listed character from the atlas.
pub const CROWD_PALETTE_COMP: &[u8] = spirv!("crowd_palette.comp");
/// Crowd PaletteVertex path: skinning from the palette buffer in the vertex shader.
pub const CROWD_PALETTE_VERT: &[u8] = spirv!("crowd_palette.vert");
/// Crowd PaletteCompute path: skinning every listed character into a vertex buffer.
pub const CROWD_SKIN_COMP: &[u8] = spirv!("crowd_skin.comp");
/// Crowd PaletteCompute path: drawing the skinned vertices.
pub const CROWD_SKINNED_VERT: &[u8] = spirv!("crowd_skinned.vert");
/// Crowd list pass: frustum culling and LOD flags into the visible list.
pub const CROWD_CULL_COMP: &[u8] = spirv!("crowd_cull.comp");
/// The crowd passes' fragment shader (mesh.frag's shading, crowd push constants).
pub const CROWD_FRAG: &[u8] = spirv!("crowd.frag");
/// Crowd list pass: the indirect arguments from the visible count.
pub const CROWD_FINALIZE_COMP: &[u8] = spirv!("crowd_finalize.comp");
/// Copy-bandwidth probe: one `uvec4` an invocation from one storage buffer to another.
pub const BANDWIDTH_COPY_COMP: &[u8] = spirv!("bandwidth_copy.comp");

/// A shader module that destroys itself.
pub(crate) struct Module<'a> {
    device: &'a ash::Device,
    pub(crate) raw: vk::ShaderModule,
}

impl<'a> Module<'a> {
    /// Creates a module from embedded SPIR-V bytes (re-aligned to `u32` words).
    pub(crate) fn new(device: &'a ash::Device, bytes: &[u8]) -> Result<Self, RenderError> {
        let words = ash::util::read_spv(&mut std::io::Cursor::new(bytes))
            .map_err(|e| RenderError::Input(format!("embedded SPIR-V is malformed: {e}")))?;
        let info = vk::ShaderModuleCreateInfo::default().code(&words);
        // SAFETY: a valid device; `words` is a whole SPIR-V module (compiled by shaderc in
        // build.rs, re-aligned by `read_spv`).
        let raw = unsafe { device.create_shader_module(&info, None) }.vk("vkCreateShaderModule")?;
        Ok(Self { device, raw })
    }
}

impl Drop for Module<'_> {
    fn drop(&mut self) {
        // SAFETY: the module was created from `device`; pipelines keep no reference to their
        // modules once created, and a `Module` lives only while pipelines are built.
        unsafe { self.device.destroy_shader_module(self.raw, None) };
    }
}
