//! Compute skinning: the dispatch the renderer records for [`crate::SkinPath::Compute`]
//! instances, and [`GpuSkinner`], a one-shot API that skins a vertex array on the GPU and
//! reads the result back (the same contract as `anim_core::skin::skinning::skin`).

use crate::context::Context;
use crate::error::RenderError;
use crate::frame::{dq_words, scale_words};
use crate::mesh::GpuVertex;
use crate::pipelines::{
    ComputePipelines, Descriptors, FLAG_DQ_SCALE, FLAG_INVERSE_TRANSPOSE, Pipeline, PipelineLayout, Push, binding,
};
use crate::resources::{Buffer, buffer_barrier, copy_buffer};
use anim_core::skin::skinning;
use anim_core::skin::skinning::{NormalMode, SkinningInput};
use anim_core::skin::{Influences, MorphTargets, Palette, SkinMethod};
use anim_math::{Mat4, Vec3};
use ash::vk;
use gpu_allocator::MemoryLocation;
use std::sync::Arc;

pub use crate::types::MAX_ACTIVE_MORPH_TARGETS;

/// Workgroup size of the compute passes (`local_size_x` in `shaders/skin_compute.glsl`).
pub const WORKGROUP: u32 = 64;

/// Records one compute skinning dispatch of `push.vertex_count` vertices with the
/// descriptors `set` (bind vertices, joints, weights, palette, output; no barriers).
pub(crate) fn record_dispatch(
    d: &ash::Device,
    layout: &PipelineLayout,
    cmd: vk::CommandBuffer,
    pipeline: &Pipeline,
    set: &Descriptors,
    push: &Push,
) {
    // SAFETY: `cmd` is recording outside a render pass (callers record dispatches before
    // the pass or in `run_once`); the pipeline was built with `layout`.
    unsafe { d.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::COMPUTE, pipeline.raw) };
    layout.push_descriptors(cmd, vk::PipelineBindPoint::COMPUTE, set);
    layout.push(cmd, push);
    let (gx, gy) = dispatch_groups(push.vertex_count);
    // SAFETY: as above, with the pipeline, all of its descriptors and the push constants
    // bound; the shader returns for invocations at or past `vertex_count`, and the output
    // buffer holds `vertex_count` vertices (sized by the callers).
    unsafe { d.cmd_dispatch(cmd, gx, gy, 1) };
}

/// Work groups for `vertices` invocations: one row while it fits in the 65,535 groups every
/// Vulkan device supports in x (`maxComputeWorkGroupCount` minimum), otherwise a 2D grid
/// whose rows the shader lays end to end. Any extra invocations return at once.
pub(crate) fn dispatch_groups(vertices: u32) -> (u32, u32) {
    const MAX_X: u32 = 65_535;
    let groups = vertices.div_ceil(WORKGROUP).max(1);
    if groups <= MAX_X { (groups, 1) } else { (MAX_X, groups.div_ceil(MAX_X)) }
}

/// One-shot GPU skinning with readback: uploads bind vertices, influences and palette
/// through staging into device-local buffers, dispatches the compute pass, copies the
/// output into a host-readable buffer and waits. For tools and tests (`animtool skin
/// --backend gpu`), not for the frame loop (the [`crate::Renderer`] keeps data resident).
///
/// Semantics match `anim_core::skin::skinning`: weights as normalized by [`Influences`],
/// vertices without weights keep their rest position and normal, normals are renormalized.
pub struct GpuSkinner {
    ctx: Arc<Context>,
    pipelines: ComputePipelines,
    layout: PipelineLayout,
}

impl std::fmt::Debug for GpuSkinner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuSkinner").field("device", &self.ctx.device_name()).finish()
    }
}

impl GpuSkinner {
    /// Creates the compute pipelines.
    ///
    /// # Errors
    /// A failing Vulkan call.
    pub fn new(ctx: &Arc<Context>) -> Result<Self, RenderError> {
        let layout = PipelineLayout::new(ctx)?;
        let pipelines = ComputePipelines::new(ctx, &layout)?;
        Ok(Self { ctx: ctx.clone(), pipelines, layout })
    }

    /// The context.
    #[inline]
    pub fn context(&self) -> &Arc<Context> {
        &self.ctx
    }

    /// Skins `positions` (and `normals`, when given and asked for) with `palette` on the GPU
    /// and writes the results into `out_positions` / `out_normals`. The palette's variant
    /// picks the method, as [`anim_core::skin::skinning::skin`]: `normal_mode` selects how LBS
    /// transforms normals; DQ follows [`SkinMethod::Dq`] (with the palette's scale, the
    /// scale work skipped for a rigid palette) and ignores it.
    ///
    /// # Errors
    /// The checks of `anim_core::skin::skinning::check` (as [`RenderError::Skinning`]), or a
    /// failing Vulkan call.
    #[allow(clippy::too_many_arguments)]
    pub fn skin(
        &self,
        positions: &[Vec3],
        normals: Option<&[Vec3]>,
        influences: &Influences,
        palette: &Palette,
        normal_mode: NormalMode,
        out_positions: &mut [Vec3],
        out_normals: Option<&mut [Vec3]>,
    ) -> Result<(), RenderError> {
        self.skin_morphed(positions, normals, None, influences, palette, normal_mode, out_positions, out_normals)
    }

    /// [`GpuSkinner::skin`] of morphed vertices: with `morph = Some((targets, weights))`
    /// the targets with a non-zero weight are applied first on the GPU, `p + Σ wᵢ·Δᵢ` (and
    /// the normals likewise, renormalized after skinning), the same as
    /// [`anim_core::skin::MorphTargets::apply`] followed by `anim_core::skin::skinning::skin`.
    ///
    /// # Errors
    /// As [`GpuSkinner::skin`]; targets for another vertex count, not one weight a target, a
    /// non-finite weight ([`RenderError::Input`]), or more than [`MAX_ACTIVE_MORPH_TARGETS`]
    /// non-zero weights ([`RenderError::TooManyMorphTargets`]).
    #[allow(clippy::too_many_arguments)]
    pub fn skin_morphed(
        &self,
        positions: &[Vec3],
        normals: Option<&[Vec3]>,
        morph: Option<(&MorphTargets, &[f32])>,
        influences: &Influences,
        palette: &Palette,
        normal_mode: NormalMode,
        out_positions: &mut [Vec3],
        out_normals: Option<&mut [Vec3]>,
    ) -> Result<(), RenderError> {
        let input = SkinningInput { influences, positions, normals };
        skinning::check(&input, palette.len(), out_positions.len(), out_normals.as_ref().map(|s| s.len()))?;
        let n = influences.vertex_count();
        if n == 0 {
            return Ok(());
        }
        let vertex_count = u32::try_from(n).map_err(|_| RenderError::Input("more than 2^32 vertices".into()))?;
        let zero = Vec3::zeros();
        let verts: Vec<GpuVertex> =
            (0..n).map(|i| GpuVertex::new(&positions[i], normals.map_or(&zero, |ns| &ns[i]))).collect();
        let joints: Vec<u32> = influences.joints().iter().map(|&j| u32::from(j)).collect();
        let mut flags = if normal_mode == NormalMode::InverseTranspose { FLAG_INVERSE_TRANSPOSE } else { 0 };
        let (dq, scales): (Vec<[f32; 8]>, Vec<[[f32; 4]; 3]>) = match palette {
            Palette::Matrices(_) => (Vec::new(), Vec::new()),
            Palette::DualQuats(d) => {
                let scales = if d.is_rigid() {
                    Vec::new()
                } else {
                    flags |= FLAG_DQ_SCALE;
                    d.scales().iter().map(scale_words).collect()
                };
                (d.dual_quats().iter().map(dq_words).collect(), scales)
            }
        };
        let palette_bytes: &[u8] = match palette {
            Palette::Matrices(m) => bytemuck::cast_slice(m),
            Palette::DualQuats(_) => bytemuck::cast_slice(&dq),
        };
        // Morph data: every target's deltas, and the list of the active ones.
        let mut active: Vec<[u32; 2]> = Vec::new();
        let mut deltas: Vec<[f32; 4]> = Vec::new();
        if let Some((targets, w)) = morph {
            if targets.vertex_count() != n || w.len() != targets.target_count() {
                return Err(RenderError::Input(format!(
                    "morph targets for {} vertices with {} weights: the mesh has {n} vertices and {} weights were given",
                    targets.vertex_count(),
                    targets.target_count(),
                    w.len()
                )));
            }
            crate::frame::active_morph_targets(w, "GpuSkinner::skin_morphed")?;
            active.extend(w.iter().enumerate().filter(|(_, x)| **x != 0.0).map(|(t, x)| [t as u32, x.to_bits()]));
            if !active.is_empty() {
                let (pd, nd) = (targets.position_deltas(), targets.normal_deltas());
                deltas.reserve(2 * n * targets.target_count());
                for i in 0..n * targets.target_count() {
                    let p = pd.get(i).copied().unwrap_or_else(Vec3::zeros);
                    let q = nd.get(i).copied().unwrap_or_else(Vec3::zeros);
                    deltas.push([p.x, p.y, p.z, 0.0]);
                    deltas.push([q.x, q.y, q.z, 0.0]);
                }
            }
        }
        let morphing = !active.is_empty();
        let mut list: Vec<[u32; 2]> = vec![[active.len() as u32, vertex_count], [0, 0]];
        list.extend_from_slice(&active);
        let ctx = &self.ctx;
        let storage = vk::BufferUsageFlags::STORAGE_BUFFER;
        let cs = vk::PipelineStageFlags2::COMPUTE_SHADER;
        let sr = vk::AccessFlags2::SHADER_STORAGE_READ;
        let bind = Buffer::device_local(ctx, bytemuck::cast_slice(&verts), storage, cs, sr, "skin: bind vertices")?;
        let jb = Buffer::device_local(ctx, bytemuck::cast_slice(&joints), storage, cs, sr, "skin: joints")?;
        let wb =
            Buffer::device_local(ctx, bytemuck::cast_slice(influences.weights()), storage, cs, sr, "skin: weights")?;
        let pb = Buffer::device_local(ctx, palette_bytes, storage, cs, sr, "skin: palette")?;
        // Bound for DQ even when rigid (the shader declares it), read only with FLAG_DQ_SCALE.
        let sb = Buffer::device_local(ctx, bytemuck::cast_slice(&scales), storage, cs, sr, "skin: DQ scales")?;
        let bytes = (n * std::mem::size_of::<GpuVertex>()) as u64;
        let out = Buffer::new(
            ctx,
            bytes,
            storage | vk::BufferUsageFlags::TRANSFER_SRC,
            MemoryLocation::GpuOnly,
            "skin: output",
        )?;
        let readback =
            Buffer::new(ctx, bytes, vk::BufferUsageFlags::TRANSFER_DST, MemoryLocation::GpuToCpu, "skin: readback")?;
        let pipeline = match (palette.method(), morphing) {
            (SkinMethod::Lbs, false) => &self.pipelines.lbs,
            (SkinMethod::Dq, false) => &self.pipelines.dq,
            (SkinMethod::Lbs, true) => &self.pipelines.lbs_morph,
            (SkinMethod::Dq, true) => &self.pipelines.dq_morph,
        };
        let morph_buffers = if morphing {
            Some((
                Buffer::device_local(ctx, bytemuck::cast_slice(&deltas), storage, cs, sr, "skin: morph deltas")?,
                Buffer::device_local(ctx, bytemuck::cast_slice(&list), storage, cs, sr, "skin: active morph targets")?,
            ))
        } else {
            None
        };
        let push = Push {
            model: Mat4::identity().data.0,
            tint: [1.0; 4],
            palette_offset: 0,
            influences: influences.per_vertex() as u32,
            vertex_count,
            out_offset: 0,
            flags,
            scale_offset: 0,
        };
        let d = ctx.device();
        let mut set = Descriptors::default();
        set.buffer(binding::BIND_VERTICES, bind.raw())
            .buffer(binding::JOINTS, jb.raw())
            .buffer(binding::WEIGHTS, wb.raw())
            .buffer(binding::PALETTE, pb.raw())
            .buffer(binding::OUT_VERTICES, out.raw());
        if palette.method() == SkinMethod::Dq {
            set.buffer(binding::DQ_SCALES, sb.raw());
        }
        if let Some((db, lb)) = &morph_buffers {
            set.buffer(binding::MORPH_DELTAS, db.raw()).buffer(binding::MORPH_ACTIVE, lb.raw());
        }
        ctx.run_once(|cmd| {
            record_dispatch(d, &self.layout, cmd, pipeline, &set, &push);
            buffer_barrier(
                d,
                cmd,
                out.raw(),
                (cs, vk::AccessFlags2::SHADER_STORAGE_WRITE),
                (vk::PipelineStageFlags2::COPY, vk::AccessFlags2::TRANSFER_READ),
            );
            copy_buffer(d, cmd, &out, &readback, bytes);
            buffer_barrier(
                d,
                cmd,
                readback.raw(),
                (vk::PipelineStageFlags2::COPY, vk::AccessFlags2::TRANSFER_WRITE),
                (vk::PipelineStageFlags2::HOST, vk::AccessFlags2::HOST_READ),
            );
        })?;
        let result: &[GpuVertex] = bytemuck::cast_slice(&readback.mapped()?[..bytes as usize]);
        for (o, v) in out_positions.iter_mut().zip(result) {
            *o = Vec3::new(v.position[0], v.position[1], v.position[2]);
        }
        if let Some(on) = out_normals {
            for (o, v) in on.iter_mut().zip(result) {
                *o = Vec3::new(v.normal[0], v.normal[1], v.normal[2]);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dispatch_grid_covers_every_vertex_within_device_minimums() {
        assert_eq!(dispatch_groups(0), (1, 1));
        assert_eq!(dispatch_groups(1), (1, 1));
        assert_eq!(dispatch_groups(64), (1, 1));
        assert_eq!(dispatch_groups(65), (2, 1));
        assert_eq!(dispatch_groups(65_535 * 64), (65_535, 1));
        for n in [65_535 * 64 + 1, 10_000_000, u32::MAX] {
            let (x, y) = dispatch_groups(n);
            assert!(x <= 65_535 && y <= 65_535, "{n}: {x}×{y}");
            // Enough invocations, and the last row is needed.
            let invocations = u64::from(x) * u64::from(y) * u64::from(WORKGROUP);
            assert!(invocations >= u64::from(n));
            assert!(u64::from(x) * u64::from(y - 1) * u64::from(WORKGROUP) < u64::from(n));
        }
    }
}
