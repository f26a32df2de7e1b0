//! A frame's crowd draws resolved once against the registered crowds (checks, pipeline
//! keys, push constants) into [`CrowdItem`]s, then prepared: pipelines created, buffers
//! grown and instances staged into the frame slot. Recording reads only the items.

use super::buffers::{ENTRY_LBS, GpuCrowd, SKINNED_VERTEX_BYTES, SlotRecord, limit};
use super::error::CrowdError;
use super::pipelines::{
    CrowdPipelines, CrowdPush, FLAG_FRUSTUM, FLAG_LIST, FLAG_LOD, FLAG_MATERIAL, GROUP, Kind, MAX_CHUNKS,
    MAX_ROW_GROUPS, layout_index, method_index,
};
use super::{CrowdDraw, CrowdPath};
use crate::context::Context;
use crate::error::RenderError;
use crate::mesh::GpuMesh;
use crate::resources::Buffer;
use anim_core::skin::SkinMethod;
use ash::vk;
use gpu_allocator::MemoryLocation;
use std::sync::Arc;

/// One crowd draw of the frame, resolved.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CrowdItem {
    pub(super) crowd: usize,
    pub(super) path: CrowdPath,
    pub(super) layout: u32,
    pub(super) method: u32,
    pub(super) listed: bool,
    pub(super) push: CrowdPush,
}

impl CrowdItem {
    /// Characters the draw submits.
    pub(crate) fn instances(&self) -> u32 {
        self.push.instance_count
    }
}

/// Resolves the frame's crowd draws against the registered crowds into `out`; `fov_y` is
/// the camera's vertical field of view and `height` the render target's, in pixels;
/// `chunk_bytes` caps the skinned-vertex chunks below the device's storage-buffer range.
#[allow(clippy::too_many_arguments)]
pub(crate) fn plan(
    draws: &[CrowdDraw],
    fov_y: f32,
    height: u32,
    chunk_bytes: Option<u64>,
    crowds: &[GpuCrowd],
    meshes: &[GpuMesh],
    ctx: &Context,
    out: &mut Vec<CrowdItem>,
) -> Result<(), RenderError> {
    out.clear();
    // Pixels an object-space unit covers at distance 1.
    let pixels_per_unit = height as f32 / (2.0 * (0.5 * fov_y).tan());
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
        if let Some(p) = draw.lod_pixels {
            if !(p.is_finite() && p > 0.0) {
                return Err(CrowdError::InvalidLodPixels(p).into());
            }
            if c.lods.is_none() {
                return Err(CrowdError::NoMeshLods(id).into());
            }
        }
        let mesh = &meshes[c.mesh];
        let limits = ctx.limits();
        if draw.path.has_palette() {
            let bytes = u64::from(c.capacity) * u64::from(c.joints) * ENTRY_LBS;
            limit("crowd palette buffer (capacity × joints)", bytes, u64::from(limits.max_storage_buffer_range))?;
        }
        let mut chunk_characters = 0;
        if draw.path == CrowdPath::PaletteCompute {
            // The skinned vertices in chunks of whole characters, each within one
            // storage-buffer range.
            let range = u64::from(limits.max_storage_buffer_range).min(chunk_bytes.unwrap_or(u64::MAX));
            let per = u64::from(mesh.vertex_count()) * SKINNED_VERTEX_BYTES;
            limit("one character's skinned vertices", per, range)?;
            let chars = (range / per).min(u64::from(c.capacity)).max(1);
            let chunks = u64::from(c.capacity).div_ceil(chars);
            limit(
                "crowd skinned vertex chunks (capacity × vertices in storage-buffer ranges)",
                chunks,
                MAX_CHUNKS as u64,
            )?;
            chunk_characters = chars as u32;
            limit(
                "crowd skinning dispatch (workgroup rows)",
                u64::from(c.capacity) * u64::from(mesh.vertex_count().div_ceil(GROUP)),
                MAX_ROW_GROUPS * u64::from(limits.max_compute_work_group_count[1]),
            )?;
        }
        let listed = draw.cull || draw.lod_distance.is_some() || draw.lod_pixels.is_some();
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
        if mesh.shaded {
            flags |= FLAG_MATERIAL;
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
                chunk_characters,
                ..CrowdPush::default()
            },
        });
        if let (Some(p), Some(l)) = (draw.lod_pixels, &c.lods) {
            let push = &mut out.last_mut().expect("pushed above").push;
            push.level_first = l.first;
            push.level_count = l.count;
            push.level_error = l.error;
            push.levels = l.levels;
            push.level_pixels = pixels_per_unit / p;
        }
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
    meshes: &[GpuMesh],
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
        let chunk = item.push.chunk_characters;
        if item.path == CrowdPath::PaletteCompute && (s.skinned.is_empty() || s.chunk_characters != chunk) {
            s.skinned.clear();
            let per = u64::from(meshes[c.mesh].vertex_count()) * SKINNED_VERTEX_BYTES;
            let mut first = 0;
            while first < capacity.max(1) {
                let chars = u64::from(chunk).min(capacity.max(1) - first);
                let name = "crowd skinned vertices (a chunk)";
                s.skinned.push(Buffer::new(ctx, chars * per, storage, MemoryLocation::GpuOnly, name)?);
                first += chars;
            }
            s.chunk_characters = chunk;
        }
        s.instances.stage(ctx, &[bytemuck::cast_slice(&c.pending)])?;
        let method = if item.method == 1 { SkinMethod::Dq } else { SkinMethod::Lbs };
        s.record = Some(SlotRecord {
            instances: item.push.instance_count,
            listed: item.listed,
            palette: item.path.has_palette().then_some(method),
            levels: item.push.levels,
        });
    }
    Ok(())
}
