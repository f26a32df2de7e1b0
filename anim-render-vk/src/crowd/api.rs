//! The crowd methods of [`Renderer`]: registering a crowd, setting its characters, and
//! reading back what the last frame computed for it (visible count, palettes).

use super::CrowdId;
use super::buffers::{
    ARGS_LEVELS_WORD, ARGS_VISIBLE_WORD, CrowdLods, CrowdSlot, ENTRY_DQ, ENTRY_LBS, GpuCrowd, SlotRecord,
};
use super::error::CrowdError;
use crate::error::RenderError;
use crate::renderer::Renderer;
use crate::resources::{Buffer, buffer_barrier, copy_buffer};
use crate::types::MeshId;
use anim_core::skin::SkinMethod;
use anim_crowd::atlas::AnimAtlas;
use anim_crowd::crowd::CrowdInstance;
use anim_crowd::lod::{MAX_LODS, MeshLods};
use anim_math::{Mat4, Quat, Vec3};
use ash::vk;
use gpu_allocator::MemoryLocation;

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

    /// Gives the crowd the levels of detail of its mesh (every level's indices uploaded into
    /// one index buffer; replaces earlier ones, waiting for the frames in flight). Draws with
    /// [`CrowdDraw::lod_pixels`](super::CrowdDraw::lod_pixels) pick each character's level.
    ///
    /// # Errors
    /// [`CrowdError::UnknownCrowd`]; [`CrowdError::InvalidMeshLods`] for levels with indices
    /// beyond the crowd mesh's vertices, an empty level, or more than
    /// [`MAX_LODS`] levels; a failing upload.
    pub fn set_crowd_lods(&mut self, id: CrowdId, lods: &MeshLods) -> Result<(), RenderError> {
        let c = self.crowds.get(id.0).ok_or(CrowdError::UnknownCrowd(id.0))?;
        let vertices = self.meshes[c.mesh].vertex_count();
        let levels = lods.levels();
        let bad = |s: String| RenderError::from(CrowdError::InvalidMeshLods(s));
        if levels.is_empty() || levels.len() > MAX_LODS {
            return Err(bad(format!("{} levels (1 to {MAX_LODS})", levels.len())));
        }
        let mut indices = Vec::with_capacity(levels.iter().map(|l| l.indices.len()).sum());
        let (mut first, mut count, mut error) = ([0u32; 4], [0u32; 4], [0f32; 4]);
        for (k, l) in levels.iter().enumerate() {
            if l.indices.is_empty() || !l.indices.len().is_multiple_of(3) {
                return Err(bad(format!("level {k} has {} indices", l.indices.len())));
            }
            if let Some(i) = l.indices.iter().find(|&&i| i >= vertices) {
                return Err(bad(format!("level {k} names vertex {i} of {vertices}")));
            }
            if !(l.error.is_finite() && l.error >= 0.0) {
                return Err(bad(format!("level {k} has error {}", l.error)));
            }
            first[k] = indices.len() as u32;
            count[k] = l.indices.len() as u32;
            error[k] = l.error;
            indices.extend_from_slice(&l.indices);
        }
        use vk::AccessFlags2 as A;
        use vk::PipelineStageFlags2 as S;
        let buffer = Buffer::device_local(
            &self.ctx,
            bytemuck::cast_slice(&indices),
            vk::BufferUsageFlags::INDEX_BUFFER,
            S::INDEX_INPUT,
            A::INDEX_READ,
            "crowd level-of-detail indices",
        )?;
        self.wait_idle()?;
        self.crowds[id.0].lods = Some(CrowdLods { indices: buffer, first, count, error, levels: levels.len() as u32 });
        Ok(())
    }

    /// How many characters each mesh level of detail drew in the most recently submitted
    /// frame (waits for that frame), full detail first, one entry a level. `None` when that
    /// frame did not draw the crowd with [`CrowdDraw::lod_pixels`](super::CrowdDraw::lod_pixels).
    pub fn crowd_level_counts(&self, id: CrowdId) -> Option<Vec<u32>> {
        let (s, r) = self.last_crowd_slot(id).ok().flatten()?;
        if r.levels == 0 {
            return None;
        }
        let words: &[u32] = bytemuck::cast_slice(s.args_readback.mapped().ok()?);
        Some((0..r.levels as usize).map(|l| words[ARGS_LEVELS_WORD as usize + 5 * l + 1]).collect())
    }

    /// Triangles the most recently submitted frame drew for the crowd (waits for that
    /// frame): each level's characters times its triangles with mesh levels of detail, else
    /// the visible (or all) characters times the mesh's triangles. `None` for an unknown
    /// crowd or one that frame did not draw.
    pub fn crowd_triangles(&self, id: CrowdId) -> Option<u64> {
        let (s, r) = self.last_crowd_slot(id).ok().flatten()?;
        let c = &self.crowds[id.0];
        let words: &[u32] = bytemuck::cast_slice(s.args_readback.mapped().ok()?);
        if r.levels > 0 {
            let lods = c.lods.as_ref()?;
            let per = |l: usize| u64::from(words[ARGS_LEVELS_WORD as usize + 5 * l + 1]) * u64::from(lods.count[l] / 3);
            return Some((0..r.levels as usize).map(per).sum());
        }
        let drawn = if r.listed { words[ARGS_VISIBLE_WORD] } else { r.instances };
        Some(u64::from(drawn) * u64::from(self.meshes[c.mesh].index_count() / 3))
    }

    /// Caps the bytes of each chunk of the PaletteCompute path's skinned-vertex buffer below
    /// the device's storage-buffer range (`None`, the default: the range itself), so that
    /// chunking can be exercised with small crowds; the chunks are re-created on the next
    /// frame that draws a crowd on that path. A chunk holds whole characters: a cap below
    /// one character's vertices makes those draws fail with [`CrowdError::DeviceLimit`].
    pub fn set_crowd_chunk_bytes(&mut self, bytes: Option<u64>) {
        self.crowd_chunk_bytes = bytes;
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
