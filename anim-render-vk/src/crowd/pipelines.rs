//! The crowd passes' shader interface and pipelines: descriptor bindings, push constants and
//! their flags, the workgroup size and row folding (all mirroring `shaders/crowd_common.glsl`),
//! the descriptor-set and pipeline layout, and the pipelines, created on first use per
//! (pass, atlas layout, skinning method).

use crate::context::Context;
use crate::error::{RenderError, VkCall};
use crate::pipelines::{GraphicsDesc, Pipeline, VertexLayout, compute_pipeline_with, graphics_pipeline};
use crate::shaders;
use anim_core::skin::SkinMethod;
use anim_crowd::atlas::TextureLayout;
use ash::vk;
use bytemuck::{Pod, Zeroable};
use std::collections::HashMap;
use std::sync::Arc;

/// Descriptor bindings of the crowd set (see `shaders/crowd_*.glsl`).
pub(crate) mod binding {
    /// Camera uniform buffer.
    pub const CAMERA: u32 = 0;
    /// Bind-pose vertices.
    pub const BIND_VERTICES: u32 = 1;
    /// Joint indices.
    pub const JOINTS: u32 = 2;
    /// Weights.
    pub const WEIGHTS: u32 = 3;
    /// The atlas (combined image sampler, immutable nearest sampler).
    pub const ATLAS: u32 = 4;
    /// Inverse bind matrices.
    pub const INVERSE_BIND: u32 = 5;
    /// Clip bounds: min and max (vec4) a clip.
    pub const CLIP_BOUNDS: u32 = 6;
    /// Instance records.
    pub const INSTANCES: u32 = 7;
    /// Visible list.
    pub const VISIBLE: u32 = 8;
    /// Indirect arguments and visible count.
    pub const ARGS: u32 = 9;
    /// Palette buffer.
    pub const PALETTE: u32 = 10;
    /// Skinned world-space vertices: an array of `MAX_CHUNKS` storage buffers (chunks).
    pub const SKINNED: u32 = 11;
    /// The material block (`MATERIAL_BINDING` in `crowd_common.glsl`).
    pub const MATERIAL: u32 = 12;
    /// The material's five textures.
    pub const TEXTURES: u32 = 13;
    /// Number of bindings.
    pub const COUNT: u32 = 18;
}

/// `CrowdPush::flags`: draws read the visible list.
pub(super) const FLAG_LIST: u32 = 1;
/// `CrowdPush::flags`: the list pass tests the frustum.
pub(super) const FLAG_FRUSTUM: u32 = 2;
/// `CrowdPush::flags`: the list pass flags LOD.
pub(super) const FLAG_LOD: u32 = 4;
/// `CrowdPush::flags`: shade with the mesh's material.
pub(super) const FLAG_MATERIAL: u32 = 8;
/// `CrowdPush::flags`: a draw of one mesh level, from that level's list.
pub(super) const FLAG_LEVELS: u32 = 16;
/// Chunks the PaletteCompute path's skinned-vertex buffer may have (`MAX_CHUNKS` in
/// `crowd_chunks.glsl`): the array size of [`binding::SKINNED`]; with the set's 17 other
/// descriptors, the 32 push descriptors every device supports.
pub(super) const MAX_CHUNKS: usize = 15;
/// Workgroup size of the crowd compute passes.
pub(super) const GROUP: u32 = 64;

/// Workgroups a dispatch row holds at most (`MAX_ROW_GROUPS` in `crowd_common.glsl`):
/// the x and y limit every Vulkan device supports.
pub(super) const MAX_ROW_GROUPS: u64 = 65535;

/// `groups` workgroups folded into rows of at most [`MAX_ROW_GROUPS`], as the finalize
/// pass folds them: `(x, y)` with `x · y ≥ groups`.
pub(super) fn fold_groups(groups: u64) -> (u32, u32) {
    if groups <= MAX_ROW_GROUPS {
        (groups as u32, 1)
    } else {
        (MAX_ROW_GROUPS as u32, groups.div_ceil(MAX_ROW_GROUPS) as u32)
    }
}

/// The crowd push-constant block (`CrowdPush` in `shaders/crowd_common.glsl`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub(crate) struct CrowdPush {
    pub tint: [f32; 4],
    pub instance_count: u32,
    pub joints: u32,
    pub influences: u32,
    pub vertex_count: u32,
    pub index_count: u32,
    pub flags: u32,
    pub lod_distance: f32,
    pub pad: u32,
    pub level_first: [u32; 4],
    pub level_count: [u32; 4],
    pub level_error: [f32; 4],
    pub levels: u32,
    pub level_pixels: f32,
    pub level: u32,
    pub chunk_characters: u32,
}

const _: () = assert!(std::mem::size_of::<CrowdPush>() == 112, "CrowdPush must match shaders/crowd_common.glsl");

/// The crowd passes' descriptor-set layout (push descriptors, an immutable nearest sampler
/// for the atlas) and pipeline layout.
pub(crate) struct CrowdLayout {
    ctx: Arc<Context>,
    sampler: vk::Sampler,
    set_layout: vk::DescriptorSetLayout,
    pub(crate) raw: vk::PipelineLayout,
}

impl CrowdLayout {
    fn new(ctx: &Arc<Context>) -> Result<Self, RenderError> {
        let d = ctx.device();
        let info = vk::SamplerCreateInfo::default()
            .mag_filter(vk::Filter::NEAREST)
            .min_filter(vk::Filter::NEAREST)
            .mipmap_mode(vk::SamplerMipmapMode::NEAREST)
            .address_mode_u(vk::SamplerAddressMode::CLAMP_TO_EDGE)
            .address_mode_v(vk::SamplerAddressMode::CLAMP_TO_EDGE)
            .address_mode_w(vk::SamplerAddressMode::CLAMP_TO_EDGE)
            .max_lod(0.0);
        // SAFETY: a valid device and create info; destroyed in Drop (or below on error).
        let sampler = unsafe { d.create_sampler(&info, None) }.vk("vkCreateSampler")?;
        let mut layout = Self {
            ctx: ctx.clone(),
            sampler,
            set_layout: vk::DescriptorSetLayout::null(),
            raw: vk::PipelineLayout::null(),
        };
        let all = vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT | vk::ShaderStageFlags::COMPUTE;
        let samplers = [sampler];
        let bindings: Vec<vk::DescriptorSetLayoutBinding<'_>> = (0..binding::COUNT)
            .map(|b| {
                let e = vk::DescriptorSetLayoutBinding::default()
                    .binding(b)
                    .descriptor_type(descriptor_type(b))
                    .descriptor_count(if b == binding::SKINNED { MAX_CHUNKS as u32 } else { 1 })
                    .stage_flags(all);
                if b == binding::ATLAS { e.immutable_samplers(&samplers) } else { e }
            })
            .collect();
        let info = vk::DescriptorSetLayoutCreateInfo::default()
            .flags(vk::DescriptorSetLayoutCreateFlags::PUSH_DESCRIPTOR_KHR)
            .bindings(&bindings);
        // SAFETY: a valid device; one binding per slot with count 1 (MAX_CHUNKS for the skinned
        // chunks), the sampler is alive;
        // Drop destroys what was created if a later step fails.
        layout.set_layout = unsafe { d.create_descriptor_set_layout(&info, None) }.vk("vkCreateDescriptorSetLayout")?;
        let ranges =
            [vk::PushConstantRange::default().stage_flags(all).offset(0).size(std::mem::size_of::<CrowdPush>() as u32)];
        let sets = [layout.set_layout];
        let info = vk::PipelineLayoutCreateInfo::default().set_layouts(&sets).push_constant_ranges(&ranges);
        // SAFETY: a valid device and a set layout created above; 48 bytes of push constants
        // fit the guaranteed 128.
        layout.raw = unsafe { d.create_pipeline_layout(&info, None) }.vk("vkCreatePipelineLayout")?;
        Ok(layout)
    }

    pub(super) fn push(&self, cmd: vk::CommandBuffer, push: &CrowdPush) {
        let all = vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT | vk::ShaderStageFlags::COMPUTE;
        // SAFETY: `cmd` is recording (callers record between begin and end); stages, offset
        // and size are exactly the layout's one push range.
        unsafe { self.ctx.device().cmd_push_constants(cmd, self.raw, all, 0, bytemuck::bytes_of(push)) };
    }

    pub(super) fn push_descriptors(&self, cmd: vk::CommandBuffer, bind_point: vk::PipelineBindPoint, set: &CrowdSet) {
        let mut writes = [vk::WriteDescriptorSet::default(); binding::COUNT as usize];
        let mut n = 0;
        for b in 0..binding::COUNT {
            if set.mask & (1 << b) == 0 {
                continue;
            }
            let w = vk::WriteDescriptorSet::default().dst_binding(b).descriptor_type(descriptor_type(b));
            writes[n] = if b == binding::ATLAS {
                w.image_info(std::slice::from_ref(&set.image))
            } else if b == binding::SKINNED {
                w.buffer_info(&set.chunks)
            } else if b >= binding::TEXTURES {
                w.image_info(std::slice::from_ref(&set.textures[(b - binding::TEXTURES) as usize]))
            } else {
                w.buffer_info(std::slice::from_ref(&set.buffers[b as usize]))
            };
            n += 1;
        }
        // SAFETY: `cmd` is recording; every write names a binding of the set layout with its
        // declared type, and the buffers and image (in SHADER_READ_ONLY_OPTIMAL since its
        // upload) belong to the renderer and outlive the submission.
        unsafe { self.ctx.push_descriptor.cmd_push_descriptor_set(cmd, bind_point, self.raw, 0, &writes[..n]) };
    }
}

impl Drop for CrowdLayout {
    fn drop(&mut self) {
        // SAFETY: the pipelines using the layout are dropped first (field order of
        // `CrowdPipelines`) and no command buffer using it is pending (the renderer waits for
        // the device before dropping); null handles are ignored by the destroy calls.
        unsafe {
            let d = self.ctx.device();
            d.destroy_pipeline_layout(self.raw, None);
            d.destroy_descriptor_set_layout(self.set_layout, None);
            d.destroy_sampler(self.sampler, None);
        }
    }
}

fn descriptor_type(b: u32) -> vk::DescriptorType {
    match b {
        binding::CAMERA | binding::MATERIAL => vk::DescriptorType::UNIFORM_BUFFER,
        binding::ATLAS | binding::TEXTURES..binding::COUNT => vk::DescriptorType::COMBINED_IMAGE_SAMPLER,
        _ => vk::DescriptorType::STORAGE_BUFFER,
    }
}

/// The descriptors of one crowd dispatch or draw: whole buffers by binding, and the atlas.
#[derive(Clone, Copy, Default)]
pub(super) struct CrowdSet {
    buffers: [vk::DescriptorBufferInfo; binding::COUNT as usize],
    image: vk::DescriptorImageInfo,
    textures: [vk::DescriptorImageInfo; 5],
    chunks: [vk::DescriptorBufferInfo; MAX_CHUNKS],
    mask: u32,
}

impl CrowdSet {
    pub(super) fn buffer(&mut self, b: u32, buffer: vk::Buffer) {
        self.buffers[b as usize] = vk::DescriptorBufferInfo { buffer, offset: 0, range: vk::WHOLE_SIZE };
        self.mask |= 1 << b;
    }

    /// The skinned-vertex chunks (at least one, at most [`MAX_CHUNKS`]); the array's unused
    /// elements repeat the first chunk (the shaders never index them).
    pub(super) fn chunks(&mut self, chunks: &[vk::Buffer]) {
        for (k, info) in self.chunks.iter_mut().enumerate() {
            let buffer = chunks.get(k).copied().unwrap_or(chunks[0]);
            *info = vk::DescriptorBufferInfo { buffer, offset: 0, range: vk::WHOLE_SIZE };
        }
        self.mask |= 1 << binding::SKINNED;
    }

    pub(super) fn atlas(&mut self, view: vk::ImageView) {
        self.image = vk::DescriptorImageInfo {
            sampler: vk::Sampler::null(),
            image_view: view,
            image_layout: vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL,
        };
        self.mask |= 1 << binding::ATLAS;
    }

    /// Texture `k` of the material (sampled image in SHADER_READ_ONLY_OPTIMAL).
    pub(super) fn texture(&mut self, k: u32, view: vk::ImageView, sampler: vk::Sampler) {
        self.textures[k as usize] = vk::DescriptorImageInfo {
            sampler,
            image_view: view,
            image_layout: vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL,
        };
        self.mask |= 1 << (binding::TEXTURES + k);
    }
}

/// A crowd pipeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Kind {
    Book,
    PaletteVert,
    SkinnedVert,
    PaletteComp,
    SkinComp,
    Cull,
    Finalize,
}

/// The crowd layout and its pipelines, created on first use per (kind, layout, method).
pub(crate) struct CrowdPipelines {
    cache: HashMap<(Kind, u32, u32), Pipeline>,
    pub(super) layout: CrowdLayout,
    color_format: vk::Format,
}

impl CrowdPipelines {
    pub(crate) fn new(ctx: &Arc<Context>, color_format: vk::Format) -> Result<Self, RenderError> {
        Ok(Self { cache: HashMap::new(), layout: CrowdLayout::new(ctx)?, color_format })
    }

    /// Creates the pipeline of `kind` for an atlas `layout` and `method` unless it exists.
    pub(super) fn ensure(
        &mut self,
        ctx: &Arc<Context>,
        kind: Kind,
        layout: u32,
        method: u32,
    ) -> Result<(), RenderError> {
        let key = (kind, layout, method);
        if self.cache.contains_key(&key) {
            return Ok(());
        }
        let values = [layout, method];
        let entries = [
            vk::SpecializationMapEntry { constant_id: 0, offset: 0, size: 4 },
            vk::SpecializationMapEntry { constant_id: 1, offset: 4, size: 4 },
        ];
        let spec = vk::SpecializationInfo::default().map_entries(&entries).data(bytemuck::cast_slice(&values));
        let draw = |vert| GraphicsDesc {
            vert,
            frag: shaders::CROWD_FRAG,
            layout: VertexLayout::Pulled,
            topology: vk::PrimitiveTopology::TRIANGLE_LIST,
            depth_test: true,
            blend: false,
            dynamic_cull: false,
            spec: Some(&spec),
        };
        let raw = self.layout.raw;
        let p = match kind {
            Kind::Book => graphics_pipeline(ctx, raw, self.color_format, &draw(shaders::CROWD_BOOK_VERT))?,
            Kind::PaletteVert => graphics_pipeline(ctx, raw, self.color_format, &draw(shaders::CROWD_PALETTE_VERT))?,
            Kind::SkinnedVert => graphics_pipeline(ctx, raw, self.color_format, &draw(shaders::CROWD_SKINNED_VERT))?,
            Kind::PaletteComp => compute_pipeline_with(ctx, raw, shaders::CROWD_PALETTE_COMP, Some(&spec))?,
            Kind::SkinComp => compute_pipeline_with(ctx, raw, shaders::CROWD_SKIN_COMP, Some(&spec))?,
            Kind::Cull => compute_pipeline_with(ctx, raw, shaders::CROWD_CULL_COMP, Some(&spec))?,
            Kind::Finalize => compute_pipeline_with(ctx, raw, shaders::CROWD_FINALIZE_COMP, Some(&spec))?,
        };
        self.cache.insert(key, p);
        Ok(())
    }

    pub(super) fn get(&self, kind: Kind, layout: u32, method: u32) -> vk::Pipeline {
        self.cache.get(&(kind, layout, method)).expect("created in prepare").raw
    }
}

pub(super) fn layout_index(l: TextureLayout) -> u32 {
    match l {
        TextureLayout::ModelTrs => 0,
        TextureLayout::SkinMatrix => 1,
        TextureLayout::SkinDualQuat => 2,
    }
}

pub(super) fn method_index(m: SkinMethod) -> u32 {
    match m {
        SkinMethod::Lbs => 0,
        SkinMethod::Dq => 1,
    }
}
