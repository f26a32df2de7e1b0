//! The one pipeline layout every pass shares (a push-descriptor set and a push-constant
//! block, mirrored by `shaders/common.glsl`) and the graphics and compute pipelines.

use crate::context::Context;
use crate::error::{RenderError, VkCall};
use crate::shaders::{self, Module};
use ash::vk;
use bytemuck::{Pod, Zeroable};
use std::sync::Arc;

/// Descriptor bindings of set 0 (see `shaders/*.glsl`).
pub(crate) mod binding {
    use ash::vk;

    /// Camera uniform buffer.
    pub const CAMERA: u32 = 0;
    /// Bind-pose vertices (storage).
    pub const BIND_VERTICES: u32 = 1;
    /// Joint indices, `influences` a vertex (storage, u32).
    pub const JOINTS: u32 = 2;
    /// Weights, `influences` a vertex (storage, f32).
    pub const WEIGHTS: u32 = 3;
    /// Skinning palette: mat4 (LBS) or two vec4, real then dual part (DQ), a joint
    /// (storage).
    pub const PALETTE: u32 = 4;
    /// Skinned output vertices (storage, compute).
    pub const OUT_VERTICES: u32 = 5;
    /// Bone matrices as an RGBA32F texel buffer.
    pub const BONES: u32 = 6;
    /// Bind-space scale matrices of a DQ palette, three vec4 columns a joint (storage).
    pub const DQ_SCALES: u32 = 7;
    /// Morph-target deltas, two vec4 (position, normal) a target and vertex, target-major
    /// (storage; the `*_morph` passes).
    pub const MORPH_DELTAS: u32 = 8;
    /// The active morph targets of a draw: count and vertex count, then (target, weight)
    /// pairs (storage; the `*_morph` passes).
    pub const MORPH_ACTIVE: u32 = 9;
    /// The material block (uniform; `MATERIAL_BINDING` in `shaders/common.glsl`).
    pub const MATERIAL: u32 = 10;
    /// The material's five textures (combined image samplers): base colour,
    /// metallic-roughness, normal, occlusion, emissive.
    pub const TEXTURES: u32 = 11;
    /// Number of bindings.
    pub const COUNT: u32 = 16;

    /// The descriptor type of `binding`, as the set layout declares it.
    pub fn ty(binding: u32) -> vk::DescriptorType {
        match binding {
            CAMERA | MATERIAL => vk::DescriptorType::UNIFORM_BUFFER,
            BONES => vk::DescriptorType::UNIFORM_TEXEL_BUFFER,
            TEXTURES..COUNT => vk::DescriptorType::COMBINED_IMAGE_SAMPLER,
            _ => vk::DescriptorType::STORAGE_BUFFER,
        }
    }
}

/// Depth format of every pass.
pub const DEPTH_FORMAT: vk::Format = vk::Format::D32_SFLOAT;

/// The push-constant block (`Push` in `shaders/common.glsl`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub(crate) struct Push {
    pub model: [[f32; 4]; 4],
    pub tint: [f32; 4],
    pub palette_offset: u32,
    pub influences: u32,
    pub vertex_count: u32,
    pub out_offset: u32,
    pub flags: u32,
    pub scale_offset: u32,
}

const _: () = assert!(std::mem::size_of::<Push>() == 104, "Push must match shaders/common.glsl");

/// `Push::flags` bit: LBS normals by the inverse transpose (`FLAG_INVERSE_TRANSPOSE`).
pub(crate) const FLAG_INVERSE_TRANSPOSE: u32 = 1;
/// `Push::flags` bit: the DQ palette has scale; read `DQ_SCALES` from `scale_offset`
/// (`FLAG_DQ_SCALE`).
pub(crate) const FLAG_DQ_SCALE: u32 = 2;
/// `Push::flags` bit: shade with the mesh's material (`FLAG_MATERIAL`).
pub(crate) const FLAG_MATERIAL: u32 = 4;

/// The shared descriptor-set layout (push descriptors) and pipeline layout.
pub struct PipelineLayout {
    ctx: Arc<Context>,
    pub(crate) set_layout: vk::DescriptorSetLayout,
    pub(crate) raw: vk::PipelineLayout,
}

impl std::fmt::Debug for PipelineLayout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PipelineLayout").field("raw", &self.raw).finish()
    }
}

impl PipelineLayout {
    /// Creates the layout.
    ///
    /// # Errors
    /// A failing Vulkan call.
    pub fn new(ctx: &Arc<Context>) -> Result<Self, RenderError> {
        let all = vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT | vk::ShaderStageFlags::COMPUTE;
        let b = |binding: u32, ty: vk::DescriptorType| {
            vk::DescriptorSetLayoutBinding::default()
                .binding(binding)
                .descriptor_type(ty)
                .descriptor_count(1)
                .stage_flags(all)
        };
        let bindings: [vk::DescriptorSetLayoutBinding<'_>; binding::COUNT as usize] =
            std::array::from_fn(|i| b(i as u32, binding::ty(i as u32)));
        let info = vk::DescriptorSetLayoutCreateInfo::default()
            .flags(vk::DescriptorSetLayoutCreateFlags::PUSH_DESCRIPTOR_KHR)
            .bindings(&bindings);
        let d = ctx.device();
        // SAFETY: a valid device; one binding per slot, all with count 1.
        let set_layout = unsafe { d.create_descriptor_set_layout(&info, None) }.vk("vkCreateDescriptorSetLayout")?;
        let ranges =
            [vk::PushConstantRange::default().stage_flags(all).offset(0).size(std::mem::size_of::<Push>() as u32)];
        let sets = [set_layout];
        let info = vk::PipelineLayoutCreateInfo::default().set_layouts(&sets).push_constant_ranges(&ranges);
        // SAFETY: a valid device; `set_layout` was just created and the push range fits the
        // device's 128-byte minimum (`Push` is 104 bytes, asserted below).
        let raw = match unsafe { d.create_pipeline_layout(&info, None) } {
            Ok(r) => r,
            Err(result) => {
                // SAFETY: no pipeline layout or command uses the set layout yet.
                unsafe { d.destroy_descriptor_set_layout(set_layout, None) };
                return Err(RenderError::from_vk("vkCreatePipelineLayout", result));
            }
        };
        Ok(Self { ctx: ctx.clone(), set_layout, raw })
    }

    /// Records the push constants.
    pub(crate) fn push(&self, cmd: vk::CommandBuffer, push: &Push) {
        let all = vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT | vk::ShaderStageFlags::COMPUTE;
        // SAFETY: `cmd` is in the recording state (callers record between begin and end); the
        // stages, offset 0 and size of `Push` are exactly the layout's one push range.
        unsafe { self.ctx.device().cmd_push_constants(cmd, self.raw, all, 0, bytemuck::bytes_of(push)) };
    }

    /// Records the push descriptors of `set` for `bind_point`.
    pub(crate) fn push_descriptors(
        &self,
        cmd: vk::CommandBuffer,
        bind_point: vk::PipelineBindPoint,
        set: &Descriptors,
    ) {
        let mut writes = [vk::WriteDescriptorSet::default(); Descriptors::MAX];
        for (w, e) in writes.iter_mut().zip(&set.entries[..set.len]) {
            *w = vk::WriteDescriptorSet::default().dst_binding(e.binding).descriptor_type(e.ty);
            *w = match e.ty {
                vk::DescriptorType::UNIFORM_TEXEL_BUFFER => w.texel_buffer_view(std::slice::from_ref(&e.view)),
                vk::DescriptorType::COMBINED_IMAGE_SAMPLER => w.image_info(std::slice::from_ref(&e.image)),
                _ => w.buffer_info(std::slice::from_ref(&e.buffer)),
            };
        }
        // SAFETY: `cmd` is in the recording state (callers record between begin and end);
        // every write names a binding of `set_layout` with its declared descriptor type
        // (`Descriptors` takes the type from `binding::ty`), and the buffers and views are
        // owned by the renderer, a mesh or the skinner and outlive the submission; images are
        // in SHADER_READ_ONLY_OPTIMAL since their upload.
        unsafe { self.ctx.push_descriptor.cmd_push_descriptor_set(cmd, bind_point, self.raw, 0, &writes[..set.len]) };
    }
}

/// One descriptor of a [`Descriptors`] set.
#[derive(Clone, Copy, Default)]
struct Entry {
    binding: u32,
    ty: vk::DescriptorType,
    buffer: vk::DescriptorBufferInfo,
    view: vk::BufferView,
    image: vk::DescriptorImageInfo,
}

/// The descriptors of one draw or dispatch, written with [`PipelineLayout::push_descriptors`]:
/// whole buffers or texel views by binding, the descriptor type taken from the layout. Fixed
/// capacity, so building one allocates nothing.
#[derive(Clone, Copy, Default)]
pub(crate) struct Descriptors {
    entries: [Entry; Descriptors::MAX],
    len: usize,
}

impl Descriptors {
    /// Every binding of the set layout at most once.
    const MAX: usize = binding::COUNT as usize;

    /// Binds the whole `buffer` at `slot` (a buffer binding of [`binding`]).
    pub(crate) fn buffer(&mut self, slot: u32, buffer: vk::Buffer) -> &mut Self {
        let ty = binding::ty(slot);
        assert!(ty != vk::DescriptorType::UNIFORM_TEXEL_BUFFER, "binding {slot} takes a texel view");
        let buffer = vk::DescriptorBufferInfo { buffer, offset: 0, range: vk::WHOLE_SIZE };
        self.add(Entry { binding: slot, ty, buffer, ..Entry::default() })
    }

    /// Binds a sampled image `view` (in SHADER_READ_ONLY_OPTIMAL) with `sampler` at `slot`
    /// (an image binding of [`binding`]).
    pub(crate) fn image(&mut self, slot: u32, view: vk::ImageView, sampler: vk::Sampler) -> &mut Self {
        let ty = binding::ty(slot);
        assert!(ty == vk::DescriptorType::COMBINED_IMAGE_SAMPLER, "binding {slot} takes no image");
        let image = vk::DescriptorImageInfo {
            sampler,
            image_view: view,
            image_layout: vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL,
        };
        self.add(Entry { binding: slot, ty, image, ..Entry::default() })
    }

    /// Binds `range` bytes of `buffer` from `offset` at `slot` (a buffer binding of
    /// [`binding`]; `offset` a multiple of the device's offset alignment for its type).
    pub(crate) fn buffer_range(&mut self, slot: u32, buffer: vk::Buffer, offset: u64, range: u64) -> &mut Self {
        let ty = binding::ty(slot);
        assert!(ty != vk::DescriptorType::UNIFORM_TEXEL_BUFFER, "binding {slot} takes a texel view");
        let buffer = vk::DescriptorBufferInfo { buffer, offset, range };
        self.add(Entry { binding: slot, ty, buffer, ..Entry::default() })
    }

    /// Binds a texel buffer `view` at `slot` (a texel binding of [`binding`]).
    pub(crate) fn texel(&mut self, slot: u32, view: vk::BufferView) -> &mut Self {
        let ty = binding::ty(slot);
        assert!(ty == vk::DescriptorType::UNIFORM_TEXEL_BUFFER, "binding {slot} takes a buffer");
        self.add(Entry { binding: slot, ty, view, ..Entry::default() })
    }

    fn add(&mut self, e: Entry) -> &mut Self {
        assert!(self.len < Self::MAX, "more descriptors than the set layout has bindings");
        self.entries[self.len] = e;
        self.len += 1;
        self
    }
}

impl Drop for PipelineLayout {
    fn drop(&mut self) {
        // SAFETY: all pipelines using the layout are gone (they are dropped first by their
        // owners' field order) and no command buffer using it is pending.
        unsafe {
            self.ctx.device().destroy_pipeline_layout(self.raw, None);
            self.ctx.device().destroy_descriptor_set_layout(self.set_layout, None);
        }
    }
}

/// One pipeline, destroyed on drop.
pub struct Pipeline {
    ctx: Arc<Context>,
    pub(crate) raw: vk::Pipeline,
}

impl std::fmt::Debug for Pipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pipeline").field("raw", &self.raw).finish()
    }
}

impl Drop for Pipeline {
    fn drop(&mut self) {
        // SAFETY: no pending command buffer uses it (owners wait for their fences).
        unsafe { self.ctx.device().destroy_pipeline(self.raw, None) };
    }
}

/// Creates a compute pipeline from SPIR-V.
///
/// # Errors
/// A failing Vulkan call.
pub fn compute_pipeline(ctx: &Arc<Context>, layout: &PipelineLayout, spirv: &[u8]) -> Result<Pipeline, RenderError> {
    compute_pipeline_with(ctx, layout.raw, spirv, None)
}

/// Creates a compute pipeline from SPIR-V for the pipeline layout `layout`, with optional
/// specialization constants.
pub(crate) fn compute_pipeline_with(
    ctx: &Arc<Context>,
    layout: vk::PipelineLayout,
    spirv: &[u8],
    spec: Option<&vk::SpecializationInfo<'_>>,
) -> Result<Pipeline, RenderError> {
    let d = ctx.device();
    let module = Module::new(d, spirv)?;
    let mut stage = vk::PipelineShaderStageCreateInfo::default()
        .stage(vk::ShaderStageFlags::COMPUTE)
        .module(module.raw)
        .name(c"main");
    if let Some(spec) = spec {
        stage = stage.specialization_info(spec);
    }
    let info = [vk::ComputePipelineCreateInfo::default().stage(stage).layout(layout)];
    // SAFETY: a valid device; the module is alive for the call and its `main` uses only
    // bindings and push constants that `layout` declares (shaders/common.glsl, or
    // shaders/crowd_common.glsl for the crowd layout), and `spec` names only the shader's
    // specialization constants with their sizes.
    let raw = unsafe { d.create_compute_pipelines(vk::PipelineCache::null(), &info, None) }
        .map_err(|(_, r)| r)
        .vk("vkCreateComputePipelines")?[0];
    Ok(Pipeline { ctx: ctx.clone(), raw })
}

/// Vertex layouts of the graphics passes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum VertexLayout {
    /// Binding 0: [`crate::GpuVertex`] (position, tangent, normal, sign); binding 1:
    /// colour; binding 2: both texture coordinate sets.
    Mesh,
    /// Bindings 1 and 2 only (positions are pulled from storage buffers; the mesh skinning
    /// passes and the crowd passes).
    Pulled,
    /// Binding 0: position and normal; binding 1: colour (the bone-texture debug pass).
    Debug,
    /// Binding 0: [`crate::LineVertex`].
    Lines,
}

/// What a graphics pipeline draws.
#[derive(Clone, Copy, Debug)]
pub(crate) struct GraphicsDesc<'a> {
    pub vert: &'a [u8],
    pub frag: &'a [u8],
    pub layout: VertexLayout,
    pub topology: vk::PrimitiveTopology,
    pub depth_test: bool,
    /// Alpha blending (and no depth writes): the BLEND materials' pass.
    pub blend: bool,
    /// Cull mode and front face are set per draw (the material passes).
    pub dynamic_cull: bool,
    /// Specialization constants of the vertex shader.
    pub spec: Option<&'a vk::SpecializationInfo<'a>>,
}

/// Creates a graphics pipeline for dynamic rendering into `color_format` + [`DEPTH_FORMAT`].
pub(crate) fn graphics_pipeline(
    ctx: &Arc<Context>,
    layout: vk::PipelineLayout,
    color_format: vk::Format,
    desc: &GraphicsDesc<'_>,
) -> Result<Pipeline, RenderError> {
    let d = ctx.device();
    let vert = Module::new(d, desc.vert)?;
    let frag = Module::new(d, desc.frag)?;
    let mut vert_stage =
        vk::PipelineShaderStageCreateInfo::default().stage(vk::ShaderStageFlags::VERTEX).module(vert.raw).name(c"main");
    if let Some(spec) = desc.spec {
        vert_stage = vert_stage.specialization_info(spec);
    }
    let stages = [
        vert_stage,
        vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::FRAGMENT)
            .module(frag.raw)
            .name(c"main"),
    ];
    let attr = |location: u32, binding: u32, format: vk::Format, offset: u32| vk::VertexInputAttributeDescription {
        location,
        binding,
        format,
        offset,
    };
    let vb = |binding: u32, stride: u32| vk::VertexInputBindingDescription {
        binding,
        stride,
        input_rate: vk::VertexInputRate::VERTEX,
    };
    let rgb = vk::Format::R32G32B32_SFLOAT;
    let rgba = vk::Format::R32G32B32A32_SFLOAT;
    let (bindings, attributes): (Vec<_>, Vec<_>) = match desc.layout {
        VertexLayout::Mesh => (
            vec![vb(0, 32), vb(1, 16), vb(2, 16)],
            vec![
                attr(0, 0, rgb, 0),
                attr(3, 0, vk::Format::R32_UINT, 12),
                attr(1, 0, rgb, 16),
                attr(4, 0, vk::Format::R32_SFLOAT, 28),
                attr(2, 1, rgba, 0),
                attr(5, 2, rgba, 0),
            ],
        ),
        VertexLayout::Pulled => (vec![vb(1, 16), vb(2, 16)], vec![attr(2, 1, rgba, 0), attr(5, 2, rgba, 0)]),
        VertexLayout::Debug => {
            (vec![vb(0, 32), vb(1, 16)], vec![attr(0, 0, rgb, 0), attr(1, 0, rgb, 16), attr(2, 1, rgba, 0)])
        }
        VertexLayout::Lines => (vec![vb(0, 28)], vec![attr(0, 0, rgb, 0), attr(1, 0, rgba, 12)]),
    };
    let vertex_input = vk::PipelineVertexInputStateCreateInfo::default()
        .vertex_binding_descriptions(&bindings)
        .vertex_attribute_descriptions(&attributes);
    let input_assembly = vk::PipelineInputAssemblyStateCreateInfo::default().topology(desc.topology);
    let viewport = vk::PipelineViewportStateCreateInfo::default().viewport_count(1).scissor_count(1);
    let raster = vk::PipelineRasterizationStateCreateInfo::default()
        .polygon_mode(vk::PolygonMode::FILL)
        .cull_mode(vk::CullModeFlags::NONE)
        .front_face(vk::FrontFace::COUNTER_CLOCKWISE)
        .line_width(1.0);
    let multisample =
        vk::PipelineMultisampleStateCreateInfo::default().rasterization_samples(vk::SampleCountFlags::TYPE_1);
    let depth = vk::PipelineDepthStencilStateCreateInfo::default()
        .depth_test_enable(desc.depth_test)
        .depth_write_enable(desc.depth_test && !desc.blend)
        .depth_compare_op(vk::CompareOp::LESS_OR_EQUAL);
    let mut attachment =
        vk::PipelineColorBlendAttachmentState::default().color_write_mask(vk::ColorComponentFlags::RGBA);
    if desc.blend {
        attachment = attachment
            .blend_enable(true)
            .src_color_blend_factor(vk::BlendFactor::SRC_ALPHA)
            .dst_color_blend_factor(vk::BlendFactor::ONE_MINUS_SRC_ALPHA)
            .color_blend_op(vk::BlendOp::ADD)
            .src_alpha_blend_factor(vk::BlendFactor::ONE)
            .dst_alpha_blend_factor(vk::BlendFactor::ONE_MINUS_SRC_ALPHA)
            .alpha_blend_op(vk::BlendOp::ADD);
    }
    let blend_attachments = [attachment];
    let blend = vk::PipelineColorBlendStateCreateInfo::default().attachments(&blend_attachments);
    let culled = [
        vk::DynamicState::VIEWPORT,
        vk::DynamicState::SCISSOR,
        vk::DynamicState::CULL_MODE,
        vk::DynamicState::FRONT_FACE,
    ];
    let dynamic_states = if desc.dynamic_cull { &culled[..] } else { &culled[..2] };
    let dynamic = vk::PipelineDynamicStateCreateInfo::default().dynamic_states(dynamic_states);
    let color_formats = [color_format];
    let mut rendering = vk::PipelineRenderingCreateInfo::default()
        .color_attachment_formats(&color_formats)
        .depth_attachment_format(DEPTH_FORMAT);
    let info = [vk::GraphicsPipelineCreateInfo::default()
        .stages(&stages)
        .vertex_input_state(&vertex_input)
        .input_assembly_state(&input_assembly)
        .viewport_state(&viewport)
        .rasterization_state(&raster)
        .multisample_state(&multisample)
        .depth_stencil_state(&depth)
        .color_blend_state(&blend)
        .dynamic_state(&dynamic)
        .layout(layout)
        .push_next(&mut rendering)];
    // SAFETY: everything referenced by `info` lives until the call returns; the shaders'
    // interfaces match `layout` and the vertex input state of `desc.layout`.
    let raw = unsafe { d.create_graphics_pipelines(vk::PipelineCache::null(), &info, None) }
        .map_err(|(_, r)| r)
        .vk("vkCreateGraphicsPipelines")?[0];
    Ok(Pipeline { ctx: ctx.clone(), raw })
}

/// The compute skinning pipelines.
#[derive(Debug)]
pub struct ComputePipelines {
    /// Linear blend skinning.
    pub lbs: Pipeline,
    /// Dual-quaternion skinning.
    pub dq: Pipeline,
    /// Linear blend skinning of morphed vertices.
    pub lbs_morph: Pipeline,
    /// Dual-quaternion skinning of morphed vertices.
    pub dq_morph: Pipeline,
}

impl ComputePipelines {
    /// Creates both.
    ///
    /// # Errors
    /// A failing Vulkan call.
    pub fn new(ctx: &Arc<Context>, layout: &PipelineLayout) -> Result<Self, RenderError> {
        Ok(Self {
            lbs: compute_pipeline(ctx, layout, shaders::SKIN_LBS_COMP)?,
            dq: compute_pipeline(ctx, layout, shaders::SKIN_DQ_COMP)?,
            lbs_morph: compute_pipeline(ctx, layout, shaders::SKIN_LBS_MORPH_COMP)?,
            dq_morph: compute_pipeline(ctx, layout, shaders::SKIN_DQ_MORPH_COMP)?,
        })
    }
}

/// Every graphics pipeline, for one colour format. The mesh passes come in pairs: `[0]`
/// opaque (and MASK), `[1]` alpha-blended without depth writes (BLEND materials); both set
/// their cull mode and front face per draw.
#[derive(Debug)]
pub struct GraphicsPipelines {
    /// Static meshes (and compute- or CPU-skinned vertices).
    pub mesh: [Pipeline; 2],
    /// Vertex-shader linear blend skinning.
    pub skin_lbs: [Pipeline; 2],
    /// Vertex-shader dual-quaternion skinning.
    pub skin_dq: [Pipeline; 2],
    /// Vertex-shader linear blend skinning of morphed vertices.
    pub skin_lbs_morph: [Pipeline; 2],
    /// Vertex-shader dual-quaternion skinning of morphed vertices.
    pub skin_dq_morph: [Pipeline; 2],
    /// Skinning with bone matrices from a texel buffer.
    pub bone_texture: Pipeline,
    /// Depth-tested lines.
    pub lines: Pipeline,
    /// Lines drawn over everything (skeleton overlay).
    pub overlay: Pipeline,
}

impl GraphicsPipelines {
    /// Creates all of them for `color_format`.
    ///
    /// # Errors
    /// A failing Vulkan call.
    pub fn new(ctx: &Arc<Context>, layout: &PipelineLayout, color_format: vk::Format) -> Result<Self, RenderError> {
        let tri = vk::PrimitiveTopology::TRIANGLE_LIST;
        let mesh = |vert, vl, blend| GraphicsDesc {
            vert,
            frag: shaders::MESH_FRAG,
            layout: vl,
            topology: tri,
            depth_test: true,
            blend,
            dynamic_cull: true,
            spec: None,
        };
        let lines = |depth_test| GraphicsDesc {
            vert: shaders::LINES_VERT,
            frag: shaders::LINES_FRAG,
            layout: VertexLayout::Lines,
            topology: vk::PrimitiveTopology::LINE_LIST,
            depth_test,
            blend: false,
            dynamic_cull: false,
            spec: None,
        };
        let g = |desc: GraphicsDesc<'_>| graphics_pipeline(ctx, layout.raw, color_format, &desc);
        let pair = |vert, vl| -> Result<[Pipeline; 2], RenderError> {
            Ok([g(mesh(vert, vl, false))?, g(mesh(vert, vl, true))?])
        };
        Ok(Self {
            mesh: pair(shaders::MESH_VERT, VertexLayout::Mesh)?,
            skin_lbs: pair(shaders::SKIN_LBS_VERT, VertexLayout::Pulled)?,
            skin_dq: pair(shaders::SKIN_DQ_VERT, VertexLayout::Pulled)?,
            skin_lbs_morph: pair(shaders::SKIN_LBS_MORPH_VERT, VertexLayout::Pulled)?,
            skin_dq_morph: pair(shaders::SKIN_DQ_MORPH_VERT, VertexLayout::Pulled)?,
            bone_texture: g(mesh(shaders::BONE_TEXTURE_VERT, VertexLayout::Debug, false))?,
            lines: g(lines(true))?,
            overlay: g(lines(false))?,
        })
    }
}
