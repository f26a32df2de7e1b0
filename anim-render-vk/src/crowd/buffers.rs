//! A registered crowd's GPU resources: the atlas image, inverse binds and clip bounds
//! uploaded once, and each frame slot's instance, visible-list, indirect-argument, palette
//! and skinned-vertex buffers, with the sizes and device limits they are checked against.

use super::error::CrowdError;
use super::pipelines::GROUP;
use crate::context::Context;
use crate::error::RenderError;
use crate::mesh::GpuMesh;
use crate::resources::{Buffer, Image, StagedBuffer, image_barrier};
use crate::types::FRAMES_IN_FLIGHT;
use anim_core::skin::SkinMethod;
use anim_crowd::atlas::{AnimAtlas, TexelFormat, TextureLayout};
use anim_crowd::crowd::CrowdInstance;
use anim_crowd::lod::MAX_LODS;
use ash::vk;
use gpu_allocator::MemoryLocation;
use std::sync::Arc;

/// Bytes of the indirect-arguments buffer (see `crowd_common.glsl`): 12 words, then one
/// indexed draw (5 words) a level of detail.
pub(super) const ARGS_BYTES: u64 = 4 * (ARGS_LEVELS_WORD + 5 * MAX_LODS as u64);
/// Word index of the first level's indexed draw.
pub(super) const ARGS_LEVELS_WORD: u64 = 12;
/// Byte offset of the palette dispatch arguments.
pub(super) const ARGS_PALETTE_OFFSET: u64 = 20;
/// Byte offset of the skinning dispatch arguments.
pub(super) const ARGS_SKIN_OFFSET: u64 = 32;
/// Word index of the visible count.
pub(super) const ARGS_VISIBLE_WORD: usize = 11;

/// Bytes of a compute-skinned crowd vertex (`SkinnedVertex` in `crowd_common.glsl`).
pub(super) const SKINNED_VERTEX_BYTES: u64 = 16;

/// Bytes of an LBS palette entry (three vec4 rows); the palette buffer is sized for these.
pub(super) const ENTRY_LBS: u64 = 48;
/// Bytes of a DQ palette entry (real and dual part).
pub(super) const ENTRY_DQ: u64 = 32;

/// What a frame slot's last frame did with a crowd (for the readbacks).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct SlotRecord {
    pub(super) instances: u32,
    pub(super) listed: bool,
    pub(super) palette: Option<SkinMethod>,
    /// Mesh levels of detail the frame picked from (0: none).
    pub(super) levels: u32,
}

/// A crowd's buffers of one frame slot.
pub(crate) struct CrowdSlot {
    pub(super) instances: StagedBuffer,
    pub(super) visible: Buffer,
    pub(super) args: Buffer,
    pub(super) args_readback: Buffer,
    pub(super) palette: Option<Buffer>,
    /// The PaletteCompute path's skinned-vertex chunks, and the characters each holds.
    pub(crate) skinned: Vec<Buffer>,
    pub(super) chunk_characters: u32,
    pub(super) record: Option<SlotRecord>,
}

/// A registered mixed crowd: one crowd per character type, and where each type's clips
/// start in the mixed clip list.
#[derive(Default)]
pub(crate) struct MixedCrowd {
    pub(super) types: Vec<super::CrowdId>,
    /// First mixed clip index of each type, then the total.
    pub(super) clip_base: Vec<u32>,
}

/// A registered crowd.
pub(crate) struct GpuCrowd {
    pub(super) mesh: usize,
    pub(super) capacity: u32,
    pub(super) joints: u32,
    pub(super) layout: TextureLayout,
    pub(super) rigid: bool,
    clip_count: usize,
    width: u32,
    pub(super) atlas: Image,
    pub(super) inverse_bind: Buffer,
    pub(super) bounds: Buffer,
    pub(super) pending: Vec<CrowdInstance>,
    pub(crate) slots: Vec<CrowdSlot>,
    /// The mesh's levels of detail, when set ([`crate::Renderer::set_crowd_lods`]).
    pub(super) lods: Option<CrowdLods>,
}

/// A crowd's levels of detail on the GPU: every level's indices in one buffer.
pub(super) struct CrowdLods {
    pub(super) indices: Buffer,
    pub(super) first: [u32; 4],
    pub(super) count: [u32; 4],
    pub(super) error: [f32; 4],
    pub(super) levels: u32,
}

pub(super) fn limit(what: &'static str, size: u64, max: u64) -> Result<(), RenderError> {
    if size > max { Err(CrowdError::DeviceLimit { what, size, max }.into()) } else { Ok(()) }
}

impl GpuCrowd {
    pub(super) fn new(
        ctx: &Arc<Context>,
        mesh_index: usize,
        mesh: &GpuMesh,
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
        limit("crowd visible and level lists", u64::from(capacity) * 4 * (1 + MAX_LODS as u64), max_storage)?;
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
                // The visible list, then one list a level of detail.
                visible: Buffer::new(
                    ctx,
                    u64::from(capacity) * 4 * (1 + MAX_LODS as u64),
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
                skinned: Vec::new(),
                chunk_characters: 0,
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
            lods: None,
        })
    }

    pub(super) fn check_instances(&self, instances: &[CrowdInstance]) -> Result<(), RenderError> {
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
