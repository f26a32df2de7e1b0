//! Recording a frame's crowd work from its [`CrowdItem`]s: the instance uploads, the palette
//! and skinning compute passes (direct, or indirect from the list pass's arguments) and the
//! instanced draws. The list pass itself is in `cull.rs`.

use super::CrowdPath;
use super::buffers::{ARGS_LEVELS_WORD, ARGS_PALETTE_OFFSET, ARGS_SKIN_OFFSET, GpuCrowd};
use super::pipelines::{CrowdPipelines, CrowdSet, FLAG_LEVELS, GROUP, Kind, binding, fold_groups};
use super::plan::CrowdItem;
use crate::mesh::GpuMesh;
use crate::resources::Buffer;
use crate::texture::{GpuMaterial, GpuTexture};
use ash::vk;

/// What recording needs from the renderer.
pub(crate) struct RecordCtx<'a> {
    pub d: &'a ash::Device,
    pub cmd: vk::CommandBuffer,
    pub slot: usize,
    pub camera: vk::Buffer,
    pub meshes: &'a [GpuMesh],
    pub crowds: &'a [GpuCrowd],
    pub pipes: &'a CrowdPipelines,
    pub materials: &'a [GpuMaterial],
    pub textures: &'a [GpuTexture],
}

impl RecordCtx<'_> {
    pub(super) fn set(&self, item: &CrowdItem) -> CrowdSet {
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
        if !s.skinned.is_empty() {
            let mut chunks = [vk::Buffer::null(); super::pipelines::MAX_CHUNKS];
            for (c, b) in chunks.iter_mut().zip(&s.skinned) {
                *c = b.raw();
            }
            set.chunks(&chunks[..s.skinned.len()]);
        }
        set
    }

    pub(super) fn dispatch(&self, item: &CrowdItem, pipeline: vk::Pipeline, set: &CrowdSet) {
        let layout = &self.pipes.layout;
        // SAFETY: `cmd` is recording outside a render pass; the pipeline was built with the
        // crowd layout.
        unsafe { self.d.cmd_bind_pipeline(self.cmd, vk::PipelineBindPoint::COMPUTE, pipeline) };
        layout.push_descriptors(self.cmd, vk::PipelineBindPoint::COMPUTE, set);
        layout.push(self.cmd, &item.push);
    }

    pub(super) fn barrier(
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
            let mut set = self.set(item);
            // The mesh's material, or the default one (not read) for a debug colouring.
            let m = &self.materials[if mesh.shaded { mesh.material } else { 0 }];
            set.buffer(binding::MATERIAL, m.uniform.raw());
            for (k, &t) in m.textures.iter().enumerate() {
                let t = &self.textures[t];
                set.texture(k as u32, t.image.view(), t.sampler);
            }
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
                self.d.cmd_bind_vertex_buffers(self.cmd, 1, &[mesh.colors.raw(), mesh.uvs.raw()], &[0, 0]);
                if let (true, Some(lods)) = (item.push.levels > 0, &c.lods) {
                    // One indirect draw a level, from the level's list; the level indices
                    // only name the mesh's vertices (checked in `set_crowd_lods`).
                    self.d.cmd_bind_index_buffer(self.cmd, lods.indices.raw(), 0, vk::IndexType::UINT32);
                    for level in 0..item.push.levels {
                        let push =
                            super::pipelines::CrowdPush { flags: item.push.flags | FLAG_LEVELS, level, ..item.push };
                        layout.push(self.cmd, &push);
                        let offset = 4 * (ARGS_LEVELS_WORD + 5 * u64::from(level));
                        self.d.cmd_draw_indexed_indirect(self.cmd, s.args.raw(), offset, 1, 20);
                    }
                    continue;
                }
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
