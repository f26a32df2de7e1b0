//! Instanced GPU crowds (the book's chapter 15): many characters of one skinned mesh, each
//! playing clips of one animation atlas ([`AnimAtlas`]), drawn with one instanced draw.
//! Crowds do not apply morph targets: characters are drawn from their bind-pose mesh (use
//! [`crate::GpuSkinner::skin_morphed`] or the CPU path for morphed characters).
//!
//! A crowd is registered once with [`Renderer::add_crowd`] (atlas image, inverse binds and
//! clip bounds uploaded; per-frame-slot instance buffers for `capacity` characters), fed
//! [`CrowdInstance`] records with [`Renderer::set_crowd_instances`] (staged into the frame
//! slot when the frame is prepared), and drawn by adding a [`CrowdDraw`] to the
//! [`FrameData`](crate::FrameData). Three paths draw the same images:
//! - [`CrowdPath::Book`]: the vertex shader evaluates every influence's transform from the
//!   atlas (two frames of clip A, and of clip B when blended) for every vertex.
//! - [`CrowdPath::PaletteVertex`]: a compute pass evaluates each character's palette once
//!   per joint into a palette buffer; the vertex shader skins from it.
//! - [`CrowdPath::PaletteCompute`]: the same palette pass, then a compute pass skins every
//!   vertex of every character into a world-space vertex buffer (16 bytes a vertex:
//!   position and an octahedral normal in two snorm16) that one instanced draw pulls from.
//!   That buffer is one storage-buffer range, so this path holds at most
//!   `maxStorageBufferRange / (16 · vertices)` characters (about 155,000 Fox-size
//!   characters where the range is 4 GiB).
//!
//! Every path also keeps each buffer within one storage-buffer range: the instance records
//! (64 bytes a character) and, on the palette paths, the palettes (48 bytes a joint a
//! character: 3.7 million 24-joint characters in 4 GiB). The palette and skinning passes
//! fold their workgroups into rows of at most 65,535 (the x and y limit every device
//! supports); the list pass runs one row of `capacity / 64` workgroups, so a crowd holds
//! at most `64 · maxComputeWorkGroupCount[0]` characters (4.19 million on a device at the
//! minimum). [`Renderer::add_crowd`] and the frame plan refuse larger crowds with
//! [`CrowdError::DeviceLimit`].
//!
//! With [`CrowdDraw::cull`] a list pass tests each character's clip bounds against the view
//! frustum, appends the visible ones to a visible list and writes the indirect draw and
//! dispatch arguments; with [`CrowdDraw::lod_distance`] characters farther than it from the
//! eye skin with their largest-weight influence only (the book's "fewer influences").
//!
//! A crowd may be drawn once per frame.

use crate::context::Context;
use crate::error::{RenderError, VkCall};
use crate::frame::MeshId;
use crate::pipelines::{GraphicsDesc, Pipeline, VertexLayout, compute_pipeline_with, graphics_pipeline};
use crate::renderer::{FRAMES_IN_FLIGHT, Renderer};
use crate::resources::{Buffer, Image, StagedBuffer, buffer_barrier, copy_buffer, image_barrier};
use crate::shaders;
use anim_core::SkinMethod;
use anim_core::anim_texture::{AnimAtlas, TexelFormat, TextureLayout};
use anim_core::crowd::CrowdInstance;
use anim_math::{Mat4, Quat, Vec3};
use ash::vk;
use bytemuck::{Pod, Zeroable};
use gpu_allocator::MemoryLocation;
use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

/// Handle of a crowd registered with [`Renderer::add_crowd`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CrowdId(pub(crate) usize);

/// How a crowd is skinned and drawn (see the [module docs](self)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CrowdPath {
    /// The book's path: the vertex shader reads the atlas for every influence of every vertex.
    #[default]
    Book,
    /// A palette compute pass, then vertex-shader skinning from the palette buffer.
    PaletteVertex,
    /// A palette compute pass, a skinning compute pass into a vertex buffer, then a draw.
    PaletteCompute,
}

impl CrowdPath {
    /// Every path, in declaration order.
    pub const ALL: [CrowdPath; 3] = [CrowdPath::Book, CrowdPath::PaletteVertex, CrowdPath::PaletteCompute];

    /// The path's name: `book`, `palette-vertex` or `palette-compute`.
    pub fn name(self) -> &'static str {
        match self {
            CrowdPath::Book => "book",
            CrowdPath::PaletteVertex => "palette-vertex",
            CrowdPath::PaletteCompute => "palette-compute",
        }
    }

    /// Whether the path runs the palette compute pass.
    pub fn has_palette(self) -> bool {
        self != CrowdPath::Book
    }
}

impl fmt::Display for CrowdPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A crowd path name that is none of `book`, `palette-vertex`, `palette-compute` (or its
/// alias `compute`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown crowd path {0:?} (expected book, palette-vertex or palette-compute)")]
pub struct UnknownCrowdPath(pub String);

impl FromStr for CrowdPath {
    type Err = UnknownCrowdPath;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "book" => Ok(CrowdPath::Book),
            "palette-vertex" => Ok(CrowdPath::PaletteVertex),
            "palette-compute" | "compute" => Ok(CrowdPath::PaletteCompute),
            _ => Err(UnknownCrowdPath(s.to_string())),
        }
    }
}

/// One crowd drawn in a frame ([`crate::FrameData::add_crowd`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CrowdDraw {
    /// The crowd.
    pub crowd: CrowdId,
    /// How it is skinned and drawn.
    pub path: CrowdPath,
    /// LBS, or DQ (rigid atlases only).
    pub method: SkinMethod,
    /// Frustum-cull the characters on the GPU (indirect draw of the visible ones).
    pub cull: bool,
    /// Characters farther than this from the eye skin with their largest-weight influence
    /// only (positive; runs the list pass even without culling).
    pub lod_distance: Option<f32>,
    /// Multiplies the vertex colours (varied slightly per character).
    pub tint: [f32; 3],
}

impl CrowdDraw {
    /// The book path, LBS, no culling, white tint.
    pub fn new(crowd: CrowdId) -> Self {
        Self { crowd, path: CrowdPath::Book, method: SkinMethod::Lbs, cull: false, lod_distance: None, tint: [1.0; 3] }
    }
}

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
}

// ----------------------------------------------------------------------------------------
// GPU side (crate-private).

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
    /// Skinned world-space vertices.
    pub const SKINNED: u32 = 11;
    /// Number of bindings.
    pub const COUNT: u32 = 12;
}

/// `CrowdPush::flags`: draws read the visible list.
const FLAG_LIST: u32 = 1;
/// `CrowdPush::flags`: the list pass tests the frustum.
const FLAG_FRUSTUM: u32 = 2;
/// `CrowdPush::flags`: the list pass flags LOD.
const FLAG_LOD: u32 = 4;
/// Bytes of the indirect-arguments buffer (see `crowd_common.glsl`).
const ARGS_BYTES: u64 = 48;
/// Byte offset of the palette dispatch arguments.
const ARGS_PALETTE_OFFSET: u64 = 20;
/// Byte offset of the skinning dispatch arguments.
const ARGS_SKIN_OFFSET: u64 = 32;
/// Word index of the visible count.
const ARGS_VISIBLE_WORD: usize = 11;
/// Workgroup size of the crowd compute passes.
const GROUP: u32 = 64;

/// Workgroups a dispatch row holds at most (`MAX_ROW_GROUPS` in `crowd_common.glsl`):
/// the x and y limit every Vulkan device supports.
const MAX_ROW_GROUPS: u64 = 65535;

/// Bytes of a compute-skinned crowd vertex (`SkinnedVertex` in `crowd_common.glsl`).
const SKINNED_VERTEX_BYTES: u64 = 16;

/// `groups` workgroups folded into rows of at most [`MAX_ROW_GROUPS`], as the finalize
/// pass folds them: `(x, y)` with `x · y ≥ groups`.
fn fold_groups(groups: u64) -> (u32, u32) {
    if groups <= MAX_ROW_GROUPS {
        (groups as u32, 1)
    } else {
        (MAX_ROW_GROUPS as u32, groups.div_ceil(MAX_ROW_GROUPS) as u32)
    }
}
/// Bytes of an LBS palette entry (three vec4 rows); the palette buffer is sized for these.
const ENTRY_LBS: u64 = 48;
/// Bytes of a DQ palette entry (real and dual part).
const ENTRY_DQ: u64 = 32;

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
}

const _: () = assert!(std::mem::size_of::<CrowdPush>() == 48, "CrowdPush must match shaders/crowd_common.glsl");

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
                    .descriptor_count(1)
                    .stage_flags(all);
                if b == binding::ATLAS { e.immutable_samplers(&samplers) } else { e }
            })
            .collect();
        let info = vk::DescriptorSetLayoutCreateInfo::default()
            .flags(vk::DescriptorSetLayoutCreateFlags::PUSH_DESCRIPTOR_KHR)
            .bindings(&bindings);
        // SAFETY: a valid device; one binding per slot with count 1, the sampler is alive;
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

    fn push(&self, cmd: vk::CommandBuffer, push: &CrowdPush) {
        let all = vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT | vk::ShaderStageFlags::COMPUTE;
        // SAFETY: `cmd` is recording (callers record between begin and end); stages, offset
        // and size are exactly the layout's one push range.
        unsafe { self.ctx.device().cmd_push_constants(cmd, self.raw, all, 0, bytemuck::bytes_of(push)) };
    }

    fn push_descriptors(&self, cmd: vk::CommandBuffer, bind_point: vk::PipelineBindPoint, set: &CrowdSet) {
        let mut writes = [vk::WriteDescriptorSet::default(); binding::COUNT as usize];
        let mut n = 0;
        for b in 0..binding::COUNT {
            if set.mask & (1 << b) == 0 {
                continue;
            }
            let w = vk::WriteDescriptorSet::default().dst_binding(b).descriptor_type(descriptor_type(b));
            writes[n] = if b == binding::ATLAS {
                w.image_info(std::slice::from_ref(&set.image))
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
        binding::CAMERA => vk::DescriptorType::UNIFORM_BUFFER,
        binding::ATLAS => vk::DescriptorType::COMBINED_IMAGE_SAMPLER,
        _ => vk::DescriptorType::STORAGE_BUFFER,
    }
}

/// The descriptors of one crowd dispatch or draw: whole buffers by binding, and the atlas.
#[derive(Clone, Copy, Default)]
struct CrowdSet {
    buffers: [vk::DescriptorBufferInfo; binding::COUNT as usize],
    image: vk::DescriptorImageInfo,
    mask: u32,
}

impl CrowdSet {
    fn buffer(&mut self, b: u32, buffer: vk::Buffer) {
        self.buffers[b as usize] = vk::DescriptorBufferInfo { buffer, offset: 0, range: vk::WHOLE_SIZE };
        self.mask |= 1 << b;
    }

    fn atlas(&mut self, view: vk::ImageView) {
        self.image = vk::DescriptorImageInfo {
            sampler: vk::Sampler::null(),
            image_view: view,
            image_layout: vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL,
        };
        self.mask |= 1 << binding::ATLAS;
    }
}

/// A crowd pipeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Kind {
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
    layout: CrowdLayout,
    color_format: vk::Format,
}

impl CrowdPipelines {
    pub(crate) fn new(ctx: &Arc<Context>, color_format: vk::Format) -> Result<Self, RenderError> {
        Ok(Self { cache: HashMap::new(), layout: CrowdLayout::new(ctx)?, color_format })
    }

    /// Creates the pipeline of `kind` for an atlas `layout` and `method` unless it exists.
    fn ensure(&mut self, ctx: &Arc<Context>, kind: Kind, layout: u32, method: u32) -> Result<(), RenderError> {
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
            layout: VertexLayout::ColorOnly,
            topology: vk::PrimitiveTopology::TRIANGLE_LIST,
            depth_test: true,
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

    fn get(&self, kind: Kind, layout: u32, method: u32) -> vk::Pipeline {
        self.cache.get(&(kind, layout, method)).expect("created in prepare").raw
    }
}

/// What a frame slot's last frame did with a crowd (for the readbacks).
#[derive(Clone, Copy, Debug, PartialEq)]
struct SlotRecord {
    instances: u32,
    listed: bool,
    palette: Option<SkinMethod>,
}

/// A crowd's buffers of one frame slot.
struct CrowdSlot {
    instances: StagedBuffer,
    visible: Buffer,
    args: Buffer,
    args_readback: Buffer,
    palette: Option<Buffer>,
    skinned: Option<Buffer>,
    record: Option<SlotRecord>,
}

/// A registered crowd.
pub(crate) struct GpuCrowd {
    mesh: usize,
    capacity: u32,
    joints: u32,
    layout: TextureLayout,
    rigid: bool,
    clip_count: usize,
    width: u32,
    atlas: Image,
    inverse_bind: Buffer,
    bounds: Buffer,
    pending: Vec<CrowdInstance>,
    slots: Vec<CrowdSlot>,
}

fn layout_index(l: TextureLayout) -> u32 {
    match l {
        TextureLayout::ModelTrs => 0,
        TextureLayout::SkinMatrix => 1,
        TextureLayout::SkinDualQuat => 2,
    }
}

fn method_index(m: SkinMethod) -> u32 {
    match m {
        SkinMethod::Lbs => 0,
        SkinMethod::Dq => 1,
    }
}

fn limit(what: &'static str, size: u64, max: u64) -> Result<(), RenderError> {
    if size > max { Err(CrowdError::DeviceLimit { what, size, max }.into()) } else { Ok(()) }
}

impl GpuCrowd {
    fn new(
        ctx: &Arc<Context>,
        mesh_index: usize,
        mesh: &crate::mesh::GpuMesh,
        atlas: &AnimAtlas,
        capacity: u32,
    ) -> Result<Self, RenderError> {
        if !mesh.is_skinned() {
            return Err(CrowdError::NotSkinned(mesh_index).into());
        }
        if mesh.joint_bound() > atlas.joint_count() {
            return Err(CrowdError::JointsExceedAtlas { mesh: mesh.joint_bound(), atlas: atlas.joint_count() }.into());
        }
        let limits = ctx.limits();
        let (w, h) = (atlas.width(), atlas.height());
        let max_dim = u64::from(limits.max_image_dimension2_d);
        limit("atlas width", u64::from(w), max_dim)?;
        limit("atlas height", u64::from(h), max_dim)?;
        limit(
            "crowd capacity (culling workgroups)",
            u64::from(capacity).div_ceil(u64::from(GROUP)),
            u64::from(limits.max_compute_work_group_count[0]),
        )?;
        let joints = atlas.joint_count() as u32;
        let max_storage = u64::from(limits.max_storage_buffer_range);
        limit("crowd instance buffer", u64::from(capacity) * 64, max_storage)?;
        let (format, texel) = match atlas.format() {
            TexelFormat::F32 => (vk::Format::R32G32B32A32_SFLOAT, 16u64),
            TexelFormat::F16 => (vk::Format::R16G16B16A16_SFLOAT, 8u64),
        };
        let bytes = atlas.texel_bytes();
        if w == 0 || h == 0 || bytes.len() as u64 != u64::from(w) * u64::from(h) * texel {
            return Err(CrowdError::InvalidAtlas(format!("{} texel bytes for {w}x{h} texels", bytes.len())).into());
        }
        if atlas.inverse_bind().len() != atlas.joint_count() {
            return Err(CrowdError::InvalidAtlas("inverse bind count differs from the joint count".into()).into());
        }
        let image = upload_atlas(ctx, bytes, format, w, h)?;
        use vk::AccessFlags2 as A;
        use vk::PipelineStageFlags2 as S;
        let storage = vk::BufferUsageFlags::STORAGE_BUFFER;
        let inverse: Vec<[[f32; 4]; 4]> = atlas.inverse_bind().iter().map(|m| m.data.0).collect();
        let shaders = S::VERTEX_SHADER | S::COMPUTE_SHADER;
        let inverse_bind = Buffer::device_local(
            ctx,
            bytemuck::cast_slice(&inverse),
            storage,
            shaders,
            A::SHADER_STORAGE_READ,
            "atlas inverse binds",
        )?;
        let bounds: Vec<[f32; 4]> = atlas
            .clips()
            .iter()
            .flat_map(|c| {
                [[c.bounds.0.x, c.bounds.0.y, c.bounds.0.z, 0.0], [c.bounds.1.x, c.bounds.1.y, c.bounds.1.z, 0.0]]
            })
            .collect();
        let bounds = Buffer::device_local(
            ctx,
            bytemuck::cast_slice(&bounds),
            storage,
            S::COMPUTE_SHADER,
            A::SHADER_STORAGE_READ,
            "crowd clip bounds",
        )?;
        let mut slots = Vec::with_capacity(FRAMES_IN_FLIGHT);
        for _ in 0..FRAMES_IN_FLIGHT {
            slots.push(CrowdSlot {
                instances: StagedBuffer::new(ctx, u64::from(capacity) * 64, storage, "crowd instances")?,
                visible: Buffer::new(
                    ctx,
                    u64::from(capacity) * 4,
                    storage,
                    MemoryLocation::GpuOnly,
                    "crowd visible list",
                )?,
                args: Buffer::new(
                    ctx,
                    ARGS_BYTES,
                    storage
                        | vk::BufferUsageFlags::INDIRECT_BUFFER
                        | vk::BufferUsageFlags::TRANSFER_DST
                        | vk::BufferUsageFlags::TRANSFER_SRC,
                    MemoryLocation::GpuOnly,
                    "crowd indirect arguments",
                )?,
                args_readback: Buffer::new(
                    ctx,
                    ARGS_BYTES,
                    vk::BufferUsageFlags::TRANSFER_DST,
                    MemoryLocation::GpuToCpu,
                    "crowd arguments readback",
                )?,
                palette: None,
                skinned: None,
                record: None,
            });
        }
        Ok(Self {
            mesh: mesh_index,
            capacity,
            joints,
            layout: atlas.layout(),
            rigid: atlas.is_rigid(),
            clip_count: atlas.clips().len(),
            width: w,
            atlas: image,
            inverse_bind,
            bounds,
            pending: Vec::with_capacity(capacity as usize),
            slots,
        })
    }

    fn check_instances(&self, instances: &[CrowdInstance]) -> Result<(), RenderError> {
        if instances.len() > self.capacity as usize {
            return Err(CrowdError::CapacityExceeded { len: instances.len(), capacity: self.capacity }.into());
        }
        let bad = |index: usize, reason: String| Err(CrowdError::InvalidInstance { index, reason }.into());
        const FRAMES: [&str; 4] = ["clip A frame0", "clip A frame1", "clip B frame0", "clip B frame1"];
        for (i, c) in instances.iter().enumerate() {
            let blended = c.factors[2] > 0.0;
            let frames = if blended { &c.frames[..] } else { &c.frames[..2] };
            if let Some((k, f)) = frames.iter().enumerate().find(|(_, f)| **f >= self.width) {
                let what = FRAMES[k];
                return bad(i, format!("frames[{k}] ({what}) is {f}, beyond an atlas {} frames wide", self.width));
            }
            let clip = c.factors[3];
            if !(clip >= 0.0 && clip.fract() == 0.0 && (clip as usize) < self.clip_count) {
                return bad(i, format!("factors[3] (clip A index) is {clip}, not one of {} clips", self.clip_count));
            }
            let fields = [("position_scale", &c.position_scale), ("rotation", &c.rotation), ("factors", &c.factors)];
            for (name, values) in fields {
                if let Some((k, x)) = values.iter().enumerate().find(|(_, x)| !x.is_finite()) {
                    return bad(i, format!("{name}[{k}] is {x}, not finite"));
                }
            }
        }
        Ok(())
    }
}

/// Uploads the atlas texels into a sampled image left in SHADER_READ_ONLY_OPTIMAL.
fn upload_atlas(ctx: &Arc<Context>, bytes: &[u8], format: vk::Format, w: u32, h: u32) -> Result<Image, RenderError> {
    let extent = vk::Extent2D { width: w, height: h };
    let image = Image::new(
        ctx,
        extent,
        format,
        vk::ImageUsageFlags::SAMPLED | vk::ImageUsageFlags::TRANSFER_DST,
        vk::ImageAspectFlags::COLOR,
        "animation atlas",
    )?;
    let mut staging = Buffer::new(
        ctx,
        bytes.len() as u64,
        vk::BufferUsageFlags::TRANSFER_SRC,
        MemoryLocation::CpuToGpu,
        "atlas staging",
    )?;
    staging.write_bytes(0, bytes)?;
    let d = ctx.device();
    use vk::AccessFlags2 as A;
    use vk::PipelineStageFlags2 as S;
    ctx.run_once(|cmd| {
        let color = vk::ImageAspectFlags::COLOR;
        image_barrier(
            d,
            cmd,
            image.raw(),
            color,
            (vk::ImageLayout::UNDEFINED, vk::ImageLayout::TRANSFER_DST_OPTIMAL),
            (S::NONE, A::NONE),
            (S::COPY, A::TRANSFER_WRITE),
        );
        let region = [vk::BufferImageCopy::default()
            .image_subresource(vk::ImageSubresourceLayers {
                aspect_mask: color,
                mip_level: 0,
                base_array_layer: 0,
                layer_count: 1,
            })
            .image_extent(vk::Extent3D { width: w, height: h, depth: 1 })];
        // SAFETY: `cmd` is recording outside a render pass; the image was moved to
        // TRANSFER_DST_OPTIMAL above and the staging buffer holds w × h texels of its format
        // (checked by the caller).
        unsafe {
            d.cmd_copy_buffer_to_image(cmd, staging.raw(), image.raw(), vk::ImageLayout::TRANSFER_DST_OPTIMAL, &region)
        };
        image_barrier(
            d,
            cmd,
            image.raw(),
            color,
            (vk::ImageLayout::TRANSFER_DST_OPTIMAL, vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL),
            (S::COPY, A::TRANSFER_WRITE),
            (S::VERTEX_SHADER | S::COMPUTE_SHADER, A::SHADER_SAMPLED_READ),
        );
    })?;
    Ok(image)
}

/// One crowd draw of the frame, resolved.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CrowdItem {
    crowd: usize,
    path: CrowdPath,
    layout: u32,
    method: u32,
    listed: bool,
    push: CrowdPush,
}

impl CrowdItem {
    /// Characters the draw submits.
    pub(crate) fn instances(&self) -> u32 {
        self.push.instance_count
    }
}

/// The total visible count that frame slot `slot`'s last frame read back for its listed
/// crowds, `None` when it listed none. The slot's fence must have been waited for.
pub(crate) fn visible_in_slot(crowds: &[GpuCrowd], slot: usize) -> Option<u32> {
    let mut total = None;
    for c in crowds {
        let s = &c.slots[slot];
        if s.record.is_some_and(|r| r.listed) {
            let words: &[u32] = bytemuck::cast_slice(s.args_readback.mapped().ok()?);
            *total.get_or_insert(0) += words[ARGS_VISIBLE_WORD];
        }
    }
    total
}

/// Resolves the frame's crowd draws against the registered crowds into `out`.
pub(crate) fn plan(
    draws: &[CrowdDraw],
    crowds: &[GpuCrowd],
    meshes: &[crate::mesh::GpuMesh],
    ctx: &Context,
    out: &mut Vec<CrowdItem>,
) -> Result<(), RenderError> {
    out.clear();
    for draw in draws {
        let id = draw.crowd.0;
        let c = crowds.get(id).ok_or(CrowdError::UnknownCrowd(id))?;
        if out.iter().any(|i| i.crowd == id) {
            return Err(CrowdError::DrawnTwice(id).into());
        }
        if draw.method == SkinMethod::Dq && !c.rigid {
            return Err(CrowdError::DqNeedsRigidAtlas.into());
        }
        if let Some(l) = draw.lod_distance
            && !(l.is_finite() && l > 0.0)
        {
            return Err(CrowdError::InvalidLod(l).into());
        }
        let mesh = &meshes[c.mesh];
        let limits = ctx.limits();
        if draw.path.has_palette() {
            let bytes = u64::from(c.capacity) * u64::from(c.joints) * ENTRY_LBS;
            limit("crowd palette buffer (capacity × joints)", bytes, u64::from(limits.max_storage_buffer_range))?;
        }
        if draw.path == CrowdPath::PaletteCompute {
            let bytes = u64::from(c.capacity) * u64::from(mesh.vertex_count()) * SKINNED_VERTEX_BYTES;
            limit(
                "crowd skinned vertex buffer (capacity × vertices)",
                bytes,
                u64::from(limits.max_storage_buffer_range),
            )?;
            limit(
                "crowd skinning dispatch (workgroup rows)",
                u64::from(c.capacity) * u64::from(mesh.vertex_count().div_ceil(GROUP)),
                MAX_ROW_GROUPS * u64::from(limits.max_compute_work_group_count[1]),
            )?;
        }
        let listed = draw.cull || draw.lod_distance.is_some();
        let mut flags = 0;
        if listed {
            flags |= FLAG_LIST;
        }
        if draw.cull {
            flags |= FLAG_FRUSTUM;
        }
        if draw.lod_distance.is_some() {
            flags |= FLAG_LOD;
        }
        out.push(CrowdItem {
            crowd: id,
            path: draw.path,
            layout: layout_index(c.layout),
            method: method_index(draw.method),
            listed,
            push: CrowdPush {
                tint: [draw.tint[0], draw.tint[1], draw.tint[2], 1.0],
                instance_count: c.pending.len() as u32,
                joints: c.joints,
                influences: mesh.influences_per_vertex(),
                vertex_count: mesh.vertex_count(),
                index_count: mesh.index_count(),
                flags,
                lod_distance: draw.lod_distance.unwrap_or(0.0),
                pad: 0,
            },
        });
    }
    Ok(())
}

/// Creates the planned crowds' pipelines and buffers and stages their instances into frame
/// slot `slot` (whose previous frame has completed).
pub(crate) fn prepare(
    ctx: &Arc<Context>,
    items: &[CrowdItem],
    crowds: &mut [GpuCrowd],
    pipes: &mut CrowdPipelines,
    meshes: &[crate::mesh::GpuMesh],
    slot: usize,
) -> Result<(), RenderError> {
    for c in crowds.iter_mut() {
        c.slots[slot].record = None;
    }
    for item in items {
        let (l, m) = (item.layout, item.method);
        let draw = match item.path {
            CrowdPath::Book => Kind::Book,
            CrowdPath::PaletteVertex => Kind::PaletteVert,
            CrowdPath::PaletteCompute => Kind::SkinnedVert,
        };
        pipes.ensure(ctx, draw, l, m)?;
        if item.listed {
            pipes.ensure(ctx, Kind::Cull, 0, 0)?;
            pipes.ensure(ctx, Kind::Finalize, 0, 0)?;
        }
        if item.path.has_palette() {
            pipes.ensure(ctx, Kind::PaletteComp, l, m)?;
        }
        if item.path == CrowdPath::PaletteCompute {
            pipes.ensure(ctx, Kind::SkinComp, 0, m)?;
        }
        let c = &mut crowds[item.crowd];
        let storage = vk::BufferUsageFlags::STORAGE_BUFFER;
        let capacity = u64::from(c.capacity);
        let s = &mut c.slots[slot];
        if item.path.has_palette() && s.palette.is_none() {
            let bytes = capacity * u64::from(c.joints) * ENTRY_LBS;
            let usage = storage | vk::BufferUsageFlags::TRANSFER_SRC;
            s.palette = Some(Buffer::new(ctx, bytes, usage, MemoryLocation::GpuOnly, "crowd palettes")?);
        }
        if item.path == CrowdPath::PaletteCompute && s.skinned.is_none() {
            let bytes = capacity * u64::from(meshes[c.mesh].vertex_count()) * SKINNED_VERTEX_BYTES;
            s.skinned = Some(Buffer::new(ctx, bytes, storage, MemoryLocation::GpuOnly, "crowd skinned vertices")?);
        }
        s.instances.stage(ctx, &[bytemuck::cast_slice(&c.pending)])?;
        let method = if item.method == 1 { SkinMethod::Dq } else { SkinMethod::Lbs };
        s.record = Some(SlotRecord {
            instances: item.push.instance_count,
            listed: item.listed,
            palette: item.path.has_palette().then_some(method),
        });
    }
    Ok(())
}

/// What recording needs from the renderer.
pub(crate) struct RecordCtx<'a> {
    pub d: &'a ash::Device,
    pub cmd: vk::CommandBuffer,
    pub slot: usize,
    pub camera: vk::Buffer,
    pub meshes: &'a [crate::mesh::GpuMesh],
    pub crowds: &'a [GpuCrowd],
    pub pipes: &'a CrowdPipelines,
}

impl RecordCtx<'_> {
    fn set(&self, item: &CrowdItem) -> CrowdSet {
        let c = &self.crowds[item.crowd];
        let mesh = &self.meshes[c.mesh];
        let s = &c.slots[self.slot];
        let skin = |b: &Option<Buffer>| b.as_ref().expect("crowd meshes are skinned").raw();
        let mut set = CrowdSet::default();
        set.buffer(binding::CAMERA, self.camera);
        set.buffer(binding::BIND_VERTICES, mesh.vertices.raw());
        set.buffer(binding::JOINTS, skin(&mesh.joints));
        set.buffer(binding::WEIGHTS, skin(&mesh.weights));
        set.atlas(c.atlas.view());
        set.buffer(binding::INVERSE_BIND, c.inverse_bind.raw());
        set.buffer(binding::CLIP_BOUNDS, c.bounds.raw());
        set.buffer(binding::INSTANCES, s.instances.buffer().raw());
        set.buffer(binding::VISIBLE, s.visible.raw());
        set.buffer(binding::ARGS, s.args.raw());
        if let Some(p) = &s.palette {
            set.buffer(binding::PALETTE, p.raw());
        }
        if let Some(p) = &s.skinned {
            set.buffer(binding::SKINNED, p.raw());
        }
        set
    }

    fn dispatch(&self, item: &CrowdItem, pipeline: vk::Pipeline, set: &CrowdSet) {
        let layout = &self.pipes.layout;
        // SAFETY: `cmd` is recording outside a render pass; the pipeline was built with the
        // crowd layout.
        unsafe { self.d.cmd_bind_pipeline(self.cmd, vk::PipelineBindPoint::COMPUTE, pipeline) };
        layout.push_descriptors(self.cmd, vk::PipelineBindPoint::COMPUTE, set);
        layout.push(self.cmd, &item.push);
    }

    fn barrier(
        &self,
        src: (vk::PipelineStageFlags2, vk::AccessFlags2),
        dst: (vk::PipelineStageFlags2, vk::AccessFlags2),
    ) {
        let mb = [vk::MemoryBarrier2::default()
            .src_stage_mask(src.0)
            .src_access_mask(src.1)
            .dst_stage_mask(dst.0)
            .dst_access_mask(dst.1)];
        // SAFETY: `cmd` is recording outside a render pass.
        unsafe { self.d.cmd_pipeline_barrier2(self.cmd, &vk::DependencyInfo::default().memory_barriers(&mb)) };
    }

    /// Records the instance uploads of the planned crowds.
    pub(crate) fn uploads(&self, items: &[CrowdItem]) {
        use vk::AccessFlags2 as A;
        use vk::PipelineStageFlags2 as S;
        for item in items {
            self.crowds[item.crowd].slots[self.slot].instances.record_upload(
                self.d,
                self.cmd,
                (S::VERTEX_SHADER | S::COMPUTE_SHADER, A::SHADER_STORAGE_READ),
            );
        }
    }

    /// Records the list passes (cull and finalize) of the planned crowds; true when there
    /// were any.
    pub(crate) fn cull(&self, items: &[CrowdItem]) -> bool {
        use vk::AccessFlags2 as A;
        use vk::PipelineStageFlags2 as S;
        let listed = || items.iter().filter(|i| i.listed);
        if listed().next().is_none() {
            return false;
        }
        for item in listed() {
            let s = &self.crowds[item.crowd].slots[self.slot];
            // SAFETY: `cmd` is recording outside a render pass; the buffer has TRANSFER_DST
            // usage and holds ARGS_BYTES, a multiple of 4.
            unsafe { self.d.cmd_fill_buffer(self.cmd, s.args.raw(), 0, ARGS_BYTES, 0) };
        }
        self.barrier(
            (S::ALL_TRANSFER, A::TRANSFER_WRITE),
            (S::COMPUTE_SHADER, A::SHADER_STORAGE_READ | A::SHADER_STORAGE_WRITE),
        );
        for item in listed() {
            let set = self.set(item);
            self.dispatch(item, self.pipes.get(Kind::Cull, 0, 0), &set);
            // SAFETY: as in `dispatch`, with descriptors and push constants recorded; the
            // shader returns past `instance_count` (at most the capacity the visible list
            // holds).
            unsafe { self.d.cmd_dispatch(self.cmd, item.push.instance_count.div_ceil(GROUP), 1, 1) };
        }
        self.barrier(
            (S::COMPUTE_SHADER, A::SHADER_STORAGE_WRITE),
            (S::COMPUTE_SHADER, A::SHADER_STORAGE_READ | A::SHADER_STORAGE_WRITE),
        );
        for item in listed() {
            let set = self.set(item);
            self.dispatch(item, self.pipes.get(Kind::Finalize, 0, 0), &set);
            // SAFETY: as above; one invocation.
            unsafe { self.d.cmd_dispatch(self.cmd, 1, 1, 1) };
        }
        self.barrier(
            (S::COMPUTE_SHADER, A::SHADER_STORAGE_WRITE),
            (
                S::DRAW_INDIRECT | S::COMPUTE_SHADER | S::VERTEX_SHADER | S::COPY,
                A::INDIRECT_COMMAND_READ | A::SHADER_STORAGE_READ | A::TRANSFER_READ,
            ),
        );
        for item in listed() {
            let s = &self.crowds[item.crowd].slots[self.slot];
            copy_buffer(self.d, self.cmd, &s.args, &s.args_readback, ARGS_BYTES);
            buffer_barrier(
                self.d,
                self.cmd,
                s.args_readback.raw(),
                (S::COPY, A::TRANSFER_WRITE),
                (S::HOST, A::HOST_READ),
            );
        }
        true
    }

    /// Records the palette passes of the planned crowds; true when there were any.
    pub(crate) fn palettes(&self, items: &[CrowdItem]) -> bool {
        use vk::AccessFlags2 as A;
        use vk::PipelineStageFlags2 as S;
        let mut any = false;
        for item in items.iter().filter(|i| i.path.has_palette()) {
            let set = self.set(item);
            self.dispatch(item, self.pipes.get(Kind::PaletteComp, item.layout, item.method), &set);
            let threads = u64::from(item.push.instance_count) * u64::from(item.push.joints);
            self.indirect_or_direct(item, ARGS_PALETTE_OFFSET, threads.div_ceil(u64::from(GROUP)));
            any = true;
        }
        if any {
            self.barrier(
                (S::COMPUTE_SHADER, A::SHADER_STORAGE_WRITE),
                (S::COMPUTE_SHADER | S::VERTEX_SHADER, A::SHADER_STORAGE_READ),
            );
        }
        any
    }

    /// Records the skinning passes of the planned PaletteCompute crowds; true when there
    /// were any.
    pub(crate) fn skinning(&self, items: &[CrowdItem]) -> bool {
        use vk::AccessFlags2 as A;
        use vk::PipelineStageFlags2 as S;
        let mut any = false;
        for item in items.iter().filter(|i| i.path == CrowdPath::PaletteCompute) {
            let set = self.set(item);
            self.dispatch(item, self.pipes.get(Kind::SkinComp, 0, item.method), &set);
            let groups = u64::from(item.push.instance_count) * u64::from(item.push.vertex_count.div_ceil(GROUP));
            self.indirect_or_direct(item, ARGS_SKIN_OFFSET, groups);
            any = true;
        }
        if any {
            self.barrier((S::COMPUTE_SHADER, A::SHADER_STORAGE_WRITE), (S::VERTEX_SHADER, A::SHADER_STORAGE_READ));
        }
        any
    }

    /// A dispatch of `groups` workgroups over every character, folded into rows
    /// ([`fold_groups`]); indirect from the arguments at `offset` (the finalize pass's
    /// count for the listed characters) when the crowd is listed.
    fn indirect_or_direct(&self, item: &CrowdItem, offset: u64, groups: u64) {
        let s = &self.crowds[item.crowd].slots[self.slot];
        // SAFETY: `cmd` is recording outside a render pass with a compute pipeline, its
        // descriptors and push constants bound (`dispatch`); the indirect arguments were
        // written by the finalize pass and made visible to indirect reads (`cull`), and the
        // folded row count was checked against maxComputeWorkGroupCount[1] when planned.
        unsafe {
            if item.listed {
                self.d.cmd_dispatch_indirect(self.cmd, s.args.raw(), offset);
            } else {
                let (x, y) = fold_groups(groups);
                self.d.cmd_dispatch(self.cmd, x, y, 1);
            }
        }
    }

    /// Records the draws of the planned crowds (inside the pass, viewport and scissor set).
    pub(crate) fn draws(&self, items: &[CrowdItem]) {
        let layout = &self.pipes.layout;
        for item in items {
            let c = &self.crowds[item.crowd];
            let mesh = &self.meshes[c.mesh];
            let kind = match item.path {
                CrowdPath::Book => Kind::Book,
                CrowdPath::PaletteVertex => Kind::PaletteVert,
                CrowdPath::PaletteCompute => Kind::SkinnedVert,
            };
            let set = self.set(item);
            let s = &c.slots[self.slot];
            // SAFETY: inside the pass; the pipeline was built with the crowd layout for this
            // colour format; its descriptors and push constants are recorded below; the
            // mesh's index buffer only names its own vertices (checked in `GpuMesh::new`) and
            // every instance index is below the instance count the buffers were sized for.
            unsafe {
                self.d.cmd_bind_pipeline(
                    self.cmd,
                    vk::PipelineBindPoint::GRAPHICS,
                    self.pipes.get(kind, item.layout, item.method),
                );
            }
            layout.push_descriptors(self.cmd, vk::PipelineBindPoint::GRAPHICS, &set);
            layout.push(self.cmd, &item.push);
            // SAFETY: as above; the indirect arguments were written by the finalize pass
            // and made visible to DRAW_INDIRECT (`cull`).
            unsafe {
                self.d.cmd_bind_vertex_buffers(self.cmd, 1, &[mesh.colors.raw()], &[0]);
                self.d.cmd_bind_index_buffer(self.cmd, mesh.indices.raw(), 0, vk::IndexType::UINT32);
                if item.listed {
                    self.d.cmd_draw_indexed_indirect(self.cmd, s.args.raw(), 0, 1, 20);
                } else {
                    self.d.cmd_draw_indexed(self.cmd, mesh.index_count(), item.push.instance_count, 0, 0, 0);
                }
            }
        }
    }
}

impl Renderer {
    /// Registers a crowd of up to `capacity` characters of the skinned mesh `mesh`, playing
    /// clips of `atlas`: uploads the atlas as a sampled image (RGBA32F or RGBA16F, read with
    /// `texelFetch`), its inverse binds and clip bounds, and creates each frame slot's
    /// instance buffer.
    ///
    /// # Errors
    /// [`CrowdError`] (as [`RenderError::Crowd`]): an unskinned mesh, a mesh naming joints
    /// beyond the atlas's, an atlas or capacity beyond the device's limits, or atlas data
    /// that does not match its size; [`RenderError::Input`] for an unknown mesh; a failing
    /// upload.
    pub fn add_crowd(&mut self, mesh: MeshId, atlas: &AnimAtlas, capacity: u32) -> Result<CrowdId, RenderError> {
        let m = self.meshes.get(mesh.0).ok_or_else(|| RenderError::Input(format!("unknown mesh {}", mesh.0)))?;
        let crowd = GpuCrowd::new(&self.ctx, mesh.0, m, atlas, capacity)?;
        self.crowds.push(crowd);
        Ok(CrowdId(self.crowds.len() - 1))
    }

    /// Sets the characters the crowd draws from the next prepared frame on (copied; staged
    /// into the frame slot's instance buffer when that frame is prepared).
    ///
    /// # Errors
    /// [`CrowdError::UnknownCrowd`], [`CrowdError::CapacityExceeded`], or
    /// [`CrowdError::InvalidInstance`] for a record naming frames or clips the atlas does
    /// not have.
    pub fn set_crowd_instances(&mut self, id: CrowdId, instances: &[CrowdInstance]) -> Result<(), RenderError> {
        let c = self.crowds.get_mut(id.0).ok_or(CrowdError::UnknownCrowd(id.0))?;
        c.check_instances(instances)?;
        c.pending.clear();
        c.pending.extend_from_slice(instances);
        Ok(())
    }

    /// The capacity of a crowd.
    pub fn crowd_capacity(&self, id: CrowdId) -> Option<u32> {
        self.crowds.get(id.0).map(|c| c.capacity)
    }

    /// The crowd's record in the most recently submitted frame's slot, after that frame
    /// completed.
    fn last_crowd_slot(&self, id: CrowdId) -> Result<Option<(&CrowdSlot, SlotRecord)>, RenderError> {
        let c = self.crowds.get(id.0).ok_or(CrowdError::UnknownCrowd(id.0))?;
        let Some(slot) = self.last_submitted else { return Ok(None) };
        self.wait_slot(slot)?;
        let s = &c.slots[slot];
        Ok(s.record.map(|r| (s, r)))
    }

    /// The number of characters the list pass of the most recently submitted frame found
    /// visible (waits for that frame). `None` when that frame did not draw the crowd with
    /// culling or LOD (no list pass), or the crowd is unknown.
    pub fn crowd_visible(&self, id: CrowdId) -> Option<u32> {
        let (s, r) = self.last_crowd_slot(id).ok().flatten()?;
        if !r.listed {
            return None;
        }
        let words: &[u32] = bytemuck::cast_slice(s.args_readback.mapped().ok()?);
        Some(words[ARGS_VISIBLE_WORD])
    }

    /// The palettes the most recently submitted frame computed for the crowd (waits for that
    /// frame; palette paths only), as skinning matrices: entry `instance · joints + joint`
    /// for each of the frame's `instances` characters and the atlas's `joints` joints. DQ
    /// palettes are converted to their rigid matrices. With culling, the entries of culled
    /// characters are undefined: whatever the last frame that used the same frame slot
    /// wrote there, or uninitialised memory.
    ///
    /// # Errors
    /// [`CrowdError::UnknownCrowd`]; [`RenderError::Input`] when that frame did not draw the
    /// crowd on a palette path; a failing readback.
    pub fn crowd_palettes(&self, id: CrowdId) -> Result<Vec<Mat4>, RenderError> {
        let none = || RenderError::Input("the last frame drew no palette for this crowd".into());
        let (s, r) = self.last_crowd_slot(id)?.ok_or_else(none)?;
        let method = r.palette.ok_or_else(none)?;
        let palette = s.palette.as_ref().ok_or_else(none)?;
        let joints = self.crowds[id.0].joints as usize;
        let entries = r.instances as usize * joints;
        let stride = if method == SkinMethod::Dq { ENTRY_DQ } else { ENTRY_LBS };
        let bytes = entries as u64 * stride;
        let host = Buffer::new(
            &self.ctx,
            bytes,
            vk::BufferUsageFlags::TRANSFER_DST,
            MemoryLocation::GpuToCpu,
            "crowd palette readback",
        )?;
        let d = self.ctx.device();
        use vk::AccessFlags2 as A;
        use vk::PipelineStageFlags2 as S;
        self.ctx.run_once(|cmd| {
            buffer_barrier(
                d,
                cmd,
                palette.raw(),
                (S::COMPUTE_SHADER, A::SHADER_STORAGE_WRITE),
                (S::COPY, A::TRANSFER_READ),
            );
            copy_buffer(d, cmd, palette, &host, bytes);
            buffer_barrier(d, cmd, host.raw(), (S::COPY, A::TRANSFER_WRITE), (S::HOST, A::HOST_READ));
        })?;
        let floats: &[f32] = bytemuck::cast_slice(&host.mapped()?[..bytes as usize]);
        Ok(floats
            .chunks_exact((stride / 4) as usize)
            .map(|e| match method {
                SkinMethod::Lbs => {
                    let mut m = Mat4::identity();
                    for (row, v) in e.chunks_exact(4).enumerate() {
                        for (col, x) in v.iter().enumerate() {
                            m[(row, col)] = *x;
                        }
                    }
                    m
                }
                SkinMethod::Dq => dq_matrix(e),
            })
            .collect())
    }
}

/// The rigid matrix of a dual quaternion stored as real (x, y, z, w), dual (x, y, z, w).
fn dq_matrix(e: &[f32]) -> Mat4 {
    let q = Quat::from_quaternion(nalgebra::Quaternion::new(e[3], e[0], e[1], e[2]));
    let (r, dd) = ([e[0], e[1], e[2], e[3]], [e[4], e[5], e[6], e[7]]);
    let rv = Vec3::new(r[0], r[1], r[2]);
    let dv = Vec3::new(dd[0], dd[1], dd[2]);
    let t = 2.0 * (r[3] * dv - dd[3] * rv + rv.cross(&dv));
    Mat4::new_translation(&t) * q.to_homogeneous()
}
