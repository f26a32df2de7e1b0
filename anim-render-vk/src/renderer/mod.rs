//! The frame: uploads of the frame's data, compute skinning, then one dynamic-rendering pass
//! that draws grid lines, instances and the overlay. Windowed and headless targets share
//! all of it; they differ only in where the colour image comes from and what happens to it
//! afterwards (see `offscreen.rs` and `swapchain.rs`).
//!
//! A frame is first resolved into a frame plan (`plan.rs`: one item per instance: pipeline,
//! bindings, vertex source, compute slot, palette range); staging, compute recording and
//! pass recording all read that plan.
//!
//! Morphed instances ([`FrameData::add_skinned_morphed`]) read their mesh's deltas (uploaded
//! once by [`Renderer::add_morph_targets`]) and an active list (target, weight) that the plan
//! builds from the non-zero weights, at most [`crate::MAX_ACTIVE_MORPH_TARGETS`] a draw; the
//! lists of a frame share one buffer of the slot, each bound at its own aligned offset.
//!
//! Crowds (`crowd/`) are planned alongside: their list, palette and skinning compute passes
//! are recorded after the instances' compute skinning, and their draws follow the instances'
//! in the pass. A GPU timer per slot marks the passes; [`Renderer::frame_stats`] reads them
//! after the slot's fence.
//!
//! Two frames are in flight: each [`FRAMES_IN_FLIGHT`] slot owns a command buffer, a fence,
//! its staging and device buffers, compute outputs and bone texel view. Filling slot N+1
//! waits only for the fence of the frame that last used that slot (two frames ago), so the
//! CPU prepares one frame while the GPU draws the previous one.

use crate::context::Context;
use crate::crowd::buffers::GpuCrowd;
use crate::crowd::pipelines::CrowdPipelines;
use crate::crowd::plan::CrowdItem;
use crate::crowd::record::RecordCtx;
use crate::error::{RenderError, VkCall};
use crate::frame::{FrameData, MeshId};
use crate::mesh::{Coloring, GpuMesh, GpuVertex};
use crate::pipelines::{ComputePipelines, Descriptors, GraphicsPipelines, Pipeline, PipelineLayout, binding};
use crate::plan::{Comp, FramePlan, Gfx, PaletteBuffer, PlanItem, Res, VertexSource};
use crate::resources::{Buffer, StagedBuffer, buffer_barrier, copy_buffer, image_barrier};
use crate::timing::{FrameStats, GpuTimer};
use anim_core::{Mesh, MorphTargets};
use ash::vk;
use gpu_allocator::MemoryLocation;
use std::sync::Arc;

pub use crate::types::FRAMES_IN_FLIGHT;

/// Timed passes a frame at most: upload, compute, cull, palette, skin, draw.
const MAX_MARKS: u32 = 8;

/// The images a frame renders into.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Target {
    pub color: vk::Image,
    pub color_view: vk::ImageView,
    pub depth: vk::Image,
    pub depth_view: vk::ImageView,
    pub extent: vk::Extent2D,
}

/// What one frame in flight owns.
struct FrameSlot {
    fence: vk::Fence,
    cmd: vk::CommandBuffer,
    bone_view: Option<(vk::Buffer, vk::BufferView)>,
    compute_out: Vec<Buffer>,
    /// Per instance of the slot's frame: its compute output slot and vertex count, when it
    /// was skinned by the compute path (for [`Renderer::compute_skinned`]).
    compute_of: Vec<Option<(u32, u32)>>,
    camera: StagedBuffer,
    matrices: StagedBuffer,
    dual_quats: StagedBuffer,
    dq_scales: StagedBuffer,
    cpu_vertices: StagedBuffer,
    /// The plan's active morph-target lists.
    morph_active: StagedBuffer,
    lines: StagedBuffer,
}

impl FrameSlot {
    fn new(ctx: &Arc<Context>, cmd: vk::CommandBuffer) -> Result<Self, RenderError> {
        let storage = vk::BufferUsageFlags::STORAGE_BUFFER;
        let camera = StagedBuffer::new(ctx, 256, vk::BufferUsageFlags::UNIFORM_BUFFER, "camera")?;
        let matrices =
            StagedBuffer::new(ctx, 64 * 256, storage | vk::BufferUsageFlags::UNIFORM_TEXEL_BUFFER, "palette matrices")?;
        let dual_quats = StagedBuffer::new(ctx, 32 * 256, storage, "palette dual quaternions")?;
        let dq_scales = StagedBuffer::new(ctx, 48 * 256, storage, "palette DQ scales")?;
        let cpu_vertices =
            StagedBuffer::new(ctx, 32 * 1024, vk::BufferUsageFlags::VERTEX_BUFFER, "CPU-skinned vertices")?;
        let lines = StagedBuffer::new(ctx, 28 * 1024, vk::BufferUsageFlags::VERTEX_BUFFER, "lines")?;
        let morph_active = StagedBuffer::new(ctx, 4096, storage, "active morph targets")?;
        // SAFETY: a valid device; the fence is destroyed in `Renderer::drop` (or below on
        // error, never having been used).
        let fence = unsafe {
            ctx.device().create_fence(&vk::FenceCreateInfo::default().flags(vk::FenceCreateFlags::SIGNALED), None)
        }
        .vk("vkCreateFence")?;
        Ok(Self {
            fence,
            cmd,
            bone_view: None,
            compute_out: Vec::new(),
            compute_of: Vec::new(),
            camera,
            matrices,
            dual_quats,
            dq_scales,
            cpu_vertices,
            morph_active,
            lines,
        })
    }

    /// The buffer of a palette range.
    fn palette(&self, b: PaletteBuffer) -> vk::Buffer {
        match b {
            PaletteBuffer::Matrices => self.matrices.buffer().raw(),
            PaletteBuffer::DualQuats => self.dual_quats.buffer().raw(),
        }
    }

    /// Destroys the fence and bone view. The GPU must be done with the slot.
    fn destroy(&mut self, d: &ash::Device) {
        // SAFETY: the caller waited for the device to be idle, so no submission uses the
        // view or the fence; both were created from `d`.
        unsafe {
            if let Some((_, v)) = self.bone_view.take() {
                d.destroy_buffer_view(v, None);
            }
            d.destroy_fence(self.fence, None);
        }
    }
}

/// Owns pipelines, registered meshes and the resources of the frames in flight, and
/// records frames.
pub struct Renderer {
    pool: vk::CommandPool,
    slots: Vec<FrameSlot>,
    current: usize,
    /// The slot of the most recently submitted frame.
    pub(crate) last_submitted: Option<usize>,
    /// One timer per frame slot (kept apart from the slots so recording can borrow it
    /// mutably).
    timers: Vec<GpuTimer>,
    /// Per slot: the submission number of its last frame and that frame's instance count.
    submitted: Vec<(u64, u32)>,
    /// Submissions so far.
    submissions: u64,
    /// Stats of the most recently completed frame, and its submission number.
    stats: Option<(u64, FrameStats)>,
    plan: FramePlan,
    crowd_plan: Vec<CrowdItem>,
    pub(crate) meshes: Vec<GpuMesh>,
    pub(crate) crowds: Vec<GpuCrowd>,
    graphics: GraphicsPipelines,
    compute: ComputePipelines,
    crowd_pipelines: CrowdPipelines,
    layout: PipelineLayout,
    color_format: vk::Format,
    pub(crate) ctx: Arc<Context>,
}

impl std::fmt::Debug for Renderer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Renderer").field("meshes", &self.meshes.len()).field("format", &self.color_format).finish()
    }
}

impl Renderer {
    /// Creates pipelines for `color_format` and the resources of the frames in flight.
    ///
    /// # Errors
    /// A failing Vulkan call.
    pub fn new(ctx: &Arc<Context>, color_format: vk::Format) -> Result<Self, RenderError> {
        let layout = PipelineLayout::new(ctx)?;
        let compute = ComputePipelines::new(ctx, &layout)?;
        let graphics = GraphicsPipelines::new(ctx, &layout, color_format)?;
        let crowd_pipelines = CrowdPipelines::new(ctx, color_format)?;
        let d = ctx.device();
        let pool_info = vk::CommandPoolCreateInfo::default()
            .queue_family_index(ctx.queue_family())
            .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER);
        // SAFETY: a valid device and create info; the pool is destroyed in Drop (or below).
        let pool = unsafe { d.create_command_pool(&pool_info, None) }.vk("vkCreateCommandPool")?;
        let mut r = Self {
            pool,
            slots: Vec::with_capacity(FRAMES_IN_FLIGHT),
            current: 0,
            last_submitted: None,
            timers: Vec::with_capacity(FRAMES_IN_FLIGHT),
            submitted: vec![(0, 0); FRAMES_IN_FLIGHT],
            submissions: 0,
            stats: None,
            plan: FramePlan::default(),
            crowd_plan: Vec::new(),
            meshes: Vec::new(),
            crowds: Vec::new(),
            graphics,
            compute,
            crowd_pipelines,
            layout,
            color_format,
            ctx: ctx.clone(),
        };
        // From here on, `Drop` releases what was created (slots and pool).
        let alloc = vk::CommandBufferAllocateInfo::default()
            .command_pool(pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(FRAMES_IN_FLIGHT as u32);
        // SAFETY: `pool` is a valid pool of this device; its buffers are freed with it.
        let cmds = unsafe { d.allocate_command_buffers(&alloc) }.vk("vkAllocateCommandBuffers")?;
        for cmd in cmds {
            r.slots.push(FrameSlot::new(ctx, cmd)?);
            r.timers.push(GpuTimer::new(ctx, MAX_MARKS)?);
        }
        Ok(r)
    }

    /// The context.
    #[inline]
    pub fn context(&self) -> &Arc<Context> {
        &self.ctx
    }

    /// The colour format the pipelines were built for.
    #[inline]
    pub fn color_format(&self) -> vk::Format {
        self.color_format
    }

    /// Uploads a mesh and returns its handle.
    ///
    /// # Errors
    /// Invalid mesh data or a failing upload.
    pub fn add_mesh(&mut self, mesh: &Mesh, coloring: &Coloring) -> Result<MeshId, RenderError> {
        self.meshes.push(GpuMesh::new(&self.ctx, mesh, coloring)?);
        Ok(MeshId(self.meshes.len() - 1))
    }

    /// Uploads the morph targets of a registered mesh into a storage buffer, once (replacing
    /// earlier ones; waits for the frames in flight). Instances drawn with
    /// [`FrameData::add_skinned_morphed`] on the vertex-shader or compute path then apply
    /// the targets with a non-zero weight before skinning, at most
    /// [`crate::MAX_ACTIVE_MORPH_TARGETS`] a draw; the mesh may have any number.
    /// [`crate::SkinPath::BoneTexture`] does not morph.
    ///
    /// # Errors
    /// Unknown mesh, targets for another vertex count, or a failing upload.
    pub fn add_morph_targets(&mut self, id: MeshId, targets: &MorphTargets) -> Result<(), RenderError> {
        if id.0 >= self.meshes.len() {
            return Err(RenderError::Input(format!("unknown mesh {}", id.0)));
        }
        self.wait_idle()?;
        let ctx = self.ctx.clone();
        self.meshes[id.0].set_morph_targets(&ctx, targets)
    }

    /// Reads back the vertices (model space, before the model matrix) that the compute
    /// skinning pass of the most recently submitted frame wrote for instance `instance` (its
    /// index in [`FrameData::instances`]), morph targets applied; waits for that frame. For
    /// tests and debugging: it allocates a readback buffer and waits on the GPU.
    ///
    /// # Errors
    /// No frame was submitted yet, the instance was not drawn by [`crate::SkinPath::Compute`]
    /// in it ([`RenderError::Input`]), or a failing Vulkan call.
    pub fn compute_skinned(&self, instance: usize, out: &mut Vec<GpuVertex>) -> Result<(), RenderError> {
        let slot = self.last_submitted.ok_or_else(|| RenderError::Input("no frame submitted yet".into()))?;
        self.wait_slot(slot)?;
        let s = &self.slots[slot];
        let (k, n) = s.compute_of.get(instance).copied().flatten().ok_or_else(|| {
            RenderError::Input(format!("instance {instance} was not skinned by the compute path in the last frame"))
        })?;
        let src = &s.compute_out[k as usize];
        let bytes = u64::from(n) * std::mem::size_of::<GpuVertex>() as u64;
        out.clear();
        if bytes == 0 {
            return Ok(());
        }
        let readback = Buffer::new(
            &self.ctx,
            bytes,
            vk::BufferUsageFlags::TRANSFER_DST,
            MemoryLocation::GpuToCpu,
            "compute skinning readback",
        )?;
        let d = self.ctx.device();
        use vk::AccessFlags2 as A;
        use vk::PipelineStageFlags2 as S;
        self.ctx.run_once(|cmd| {
            buffer_barrier(
                d,
                cmd,
                src.raw(),
                (S::COMPUTE_SHADER, A::SHADER_STORAGE_WRITE),
                (S::COPY, A::TRANSFER_READ),
            );
            copy_buffer(d, cmd, src, &readback, bytes);
            buffer_barrier(d, cmd, readback.raw(), (S::COPY, A::TRANSFER_WRITE), (S::HOST, A::HOST_READ));
        })?;
        out.extend_from_slice(bytemuck::cast_slice(&readback.mapped()?[..bytes as usize]));
        Ok(())
    }

    /// Replaces the vertex colours of a registered mesh (waits for the frame in flight).
    ///
    /// # Errors
    /// Unknown mesh, a debug colouring of a mesh without influences, or a failing upload.
    pub fn recolor(&mut self, id: MeshId, coloring: &Coloring) -> Result<(), RenderError> {
        self.wait_idle()?;
        let ctx = self.ctx.clone();
        self.meshes
            .get_mut(id.0)
            .ok_or_else(|| RenderError::Input(format!("unknown mesh {}", id.0)))?
            .recolor(&ctx, coloring)
    }

    /// A registered mesh.
    pub fn mesh(&self, id: MeshId) -> Option<&GpuMesh> {
        self.meshes.get(id.0)
    }

    /// Waits until the GPU has finished every submitted frame.
    ///
    /// # Errors
    /// The wait failed (device lost).
    pub fn wait_idle(&self) -> Result<(), RenderError> {
        let mut fences = [vk::Fence::null(); FRAMES_IN_FLIGHT];
        for (f, s) in fences.iter_mut().zip(&self.slots) {
            *f = s.fence;
        }
        // SAFETY: the fences belong to this device and are either signalled or pending
        // from a submission (every reset is followed by a submit in `submit`).
        unsafe { self.ctx.device().wait_for_fences(&fences[..self.slots.len()], true, u64::MAX) }.vk("vkWaitForFences")
    }

    /// Resolves `frame` into the plan, checking it against the registered meshes.
    pub(crate) fn check(&mut self, frame: &FrameData) -> Result<(), RenderError> {
        let limits = self.ctx.limits();
        self.plan.build(
            frame,
            &self.meshes,
            limits.max_texel_buffer_elements,
            limits.min_storage_buffer_offset_alignment,
        )?;
        crate::crowd::plan::plan(&frame.crowds, &self.crowds, &self.meshes, &self.ctx, &mut self.crowd_plan)
    }

    /// GPU timings and counts of the most recently completed frame whose stats were
    /// collected: after [`crate::Offscreen::render`] that very frame; in a windowed loop the
    /// frame that last used the slot being prepared (read after its fence). `None` before
    /// the first such frame.
    pub fn frame_stats(&self) -> Option<&FrameStats> {
        self.stats.as_ref().map(|(_, s)| s)
    }

    /// Reads the timings and visible counts of slot `slot`'s last frame into the stats, when
    /// it is newer than the stats. The slot's fence must have been waited for.
    pub(crate) fn collect_stats(&mut self, slot: usize) -> Result<(), RenderError> {
        let (number, instances) = self.submitted[slot];
        if number == 0 || self.stats.as_ref().is_some_and(|(n, _)| *n >= number) {
            return Ok(());
        }
        // The previous stats' pass list is refilled in place: no allocation per frame.
        let mut stats = self.stats.take().map(|(_, s)| s).unwrap_or_default();
        let read = self.timers[slot].read_into(self.ctx.device(), &mut stats.passes);
        stats.instances = instances;
        stats.visible = crate::crowd::cull::visible_in_slot(&self.crowds, slot);
        self.stats = Some((number, stats));
        read.map(drop)
    }

    /// Waits until the GPU is done with frame slot `slot`.
    pub(crate) fn wait_slot(&self, slot: usize) -> Result<(), RenderError> {
        // SAFETY: the fence belongs to this device and is signalled or pending (see
        // `wait_idle`).
        unsafe { self.ctx.device().wait_for_fences(&[self.slots[slot].fence], true, u64::MAX) }.vk("vkWaitForFences")
    }

    /// The index of the frame slot that the next [`Renderer::prepare`] fills.
    #[inline]
    #[cfg_attr(not(feature = "window"), allow(dead_code))]
    pub(crate) fn slot(&self) -> usize {
        self.current
    }

    /// Plans `frame`, waits until the GPU is done with the current slot (the frame two
    /// submissions ago), and stages the frame's data into the slot. Nothing is recorded yet:
    /// a caller may still give up (a swapchain that is out of date) and prepare again.
    ///
    /// # Errors
    /// Invalid frame data (nothing is waited for then) or a failing Vulkan call.
    pub(crate) fn prepare(&mut self, frame: &FrameData, aspect: f32) -> Result<(), RenderError> {
        self.check(frame)?;
        let ctx = self.ctx.clone();
        let slot = &mut self.slots[self.current];
        // SAFETY: the fence belongs to this device and is signalled or pending (see
        // `wait_idle`).
        unsafe { ctx.device().wait_for_fences(&[slot.fence], true, u64::MAX) }.vk("vkWaitForFences")?;
        self.collect_stats(self.current)?;
        let slot = &mut self.slots[self.current];
        // The slot's previous frame has completed: its buffers may be rewritten or replaced.
        slot.camera.stage(&ctx, &[bytemuck::bytes_of(&frame.camera.uniform(aspect))])?;
        slot.matrices.stage(&ctx, &[bytemuck::cast_slice(&frame.matrices)])?;
        slot.dual_quats.stage(&ctx, &[bytemuck::cast_slice(&frame.dual_quats)])?;
        slot.dq_scales.stage(&ctx, &[bytemuck::cast_slice(&frame.dq_scales)])?;
        slot.cpu_vertices.stage(&ctx, &[bytemuck::cast_slice(&frame.cpu_vertices)])?;
        slot.morph_active.stage(&ctx, &[bytemuck::cast_slice(&self.plan.morph_list)])?;
        slot.lines.stage(&ctx, &[bytemuck::cast_slice(&frame.lines), bytemuck::cast_slice(&frame.overlay_lines)])?;
        // Compute outputs: one buffer per compute slot of the plan, grown when needed.
        for (k, &bytes) in self.plan.compute_bytes.iter().enumerate() {
            if k < slot.compute_out.len() && slot.compute_out[k].size() >= bytes {
                continue;
            }
            let b = Buffer::new(
                &ctx,
                bytes,
                vk::BufferUsageFlags::STORAGE_BUFFER
                    | vk::BufferUsageFlags::VERTEX_BUFFER
                    | vk::BufferUsageFlags::TRANSFER_SRC,
                MemoryLocation::GpuOnly,
                "compute skinning output",
            )?;
            if k == slot.compute_out.len() {
                slot.compute_out.push(b);
            } else {
                slot.compute_out[k] = b;
            }
        }
        slot.compute_of.clear();
        slot.compute_of.extend(self.plan.items.iter().map(|i| i.compute.map(|c| (c.slot, i.push.vertex_count))));
        ensure_bone_view(&ctx, slot)?;
        crate::crowd::plan::prepare(
            &ctx,
            &self.crowd_plan,
            &mut self.crowds,
            &mut self.crowd_pipelines,
            &self.meshes,
            self.current,
        )
    }

    fn crowd_ctx<'a>(&'a self, d: &'a ash::Device, cmd: vk::CommandBuffer, slot: &FrameSlot) -> RecordCtx<'a> {
        RecordCtx {
            d,
            cmd,
            slot: self.current,
            camera: slot.camera.buffer().raw(),
            meshes: &self.meshes,
            crowds: &self.crowds,
            pipes: &self.crowd_pipelines,
        }
    }

    /// Begins the current slot's command buffer and records the prepared frame into
    /// `target`: uploads, compute skinning and the pass. The colour image ends in
    /// `COLOR_ATTACHMENT_OPTIMAL`; the caller records what follows and calls
    /// [`Renderer::submit`]. Call after a successful [`Renderer::prepare`].
    pub(crate) fn record(&mut self, target: &Target) -> Result<vk::CommandBuffer, RenderError> {
        let ctx = self.ctx.clone();
        let d = ctx.device();
        let slot = &self.slots[self.current];
        let cmd = slot.cmd;
        // SAFETY: `prepare` waited for the slot's fence, so the previous submission of `cmd`
        // has completed and it may be reset and begun again.
        unsafe {
            d.reset_command_buffer(cmd, vk::CommandBufferResetFlags::empty()).vk("vkResetCommandBuffer")?;
            d.begin_command_buffer(
                cmd,
                &vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT),
            )
            .vk("vkBeginCommandBuffer")?;
        }
        // Earlier frames' reads of the buffers rewritten below finished before the fence;
        // this execution dependency states it for the queue as well.
        let mb = [vk::MemoryBarrier2::default()
            .src_stage_mask(vk::PipelineStageFlags2::ALL_COMMANDS)
            .dst_stage_mask(vk::PipelineStageFlags2::ALL_COMMANDS)];
        // SAFETY: `cmd` was begun above.
        unsafe { d.cmd_pipeline_barrier2(cmd, &vk::DependencyInfo::default().memory_barriers(&mb)) };
        let mut timers = std::mem::take(&mut self.timers);
        let timer = &mut timers[self.current];
        timer.begin(d, cmd);
        self.record_uploads(d, cmd, slot);
        let crowds = self.crowd_ctx(d, cmd, slot);
        let items = &self.crowd_plan;
        crowds.uploads(items);
        timer.mark(d, cmd, "upload");
        if self.record_compute(d, cmd, slot) {
            timer.mark(d, cmd, "compute");
        }
        if crowds.cull(items) {
            timer.mark(d, cmd, "cull");
        }
        if crowds.palettes(items) {
            timer.mark(d, cmd, "palette");
        }
        if crowds.skinning(items) {
            timer.mark(d, cmd, "skin");
        }
        self.record_pass(d, cmd, slot, target);
        timer.mark(d, cmd, "draw");
        self.timers = timers;
        Ok(cmd)
    }

    fn record_uploads(&self, d: &ash::Device, cmd: vk::CommandBuffer, slot: &FrameSlot) {
        use vk::AccessFlags2 as A;
        use vk::PipelineStageFlags2 as S;
        // The crowd list pass reads the camera in a compute shader.
        let camera_readers = S::VERTEX_SHADER | S::FRAGMENT_SHADER | S::COMPUTE_SHADER;
        slot.camera.record_upload(d, cmd, (camera_readers, A::UNIFORM_READ));
        let palette_readers = (S::VERTEX_SHADER | S::COMPUTE_SHADER, A::SHADER_READ | A::UNIFORM_READ);
        slot.matrices.record_upload(d, cmd, palette_readers);
        slot.dual_quats.record_upload(d, cmd, palette_readers);
        slot.dq_scales.record_upload(d, cmd, palette_readers);
        slot.morph_active.record_upload(d, cmd, (S::VERTEX_SHADER | S::COMPUTE_SHADER, A::SHADER_STORAGE_READ));
        let vertex_input = (S::VERTEX_ATTRIBUTE_INPUT, A::VERTEX_ATTRIBUTE_READ);
        slot.cpu_vertices.record_upload(d, cmd, vertex_input);
        slot.lines.record_upload(d, cmd, vertex_input);
    }

    /// The descriptors `bindings` of `item`, resolved to the slot's and the mesh's buffers.
    fn descriptors(&self, slot: &FrameSlot, item: &PlanItem, bindings: &[(u32, Res)], set: &mut Descriptors) {
        let mesh = &self.meshes[item.mesh];
        let skin = |b: &Option<Buffer>| b.as_ref().expect("planned: skinned meshes have influences").raw();
        for &(at, res) in bindings {
            match res {
                Res::BindVertices => set.buffer(at, mesh.vertices.raw()),
                Res::Joints => set.buffer(at, skin(&mesh.joints)),
                Res::Weights => set.buffer(at, skin(&mesh.weights)),
                Res::Palette => set.buffer(at, slot.palette(item.palette.expect("planned with a palette").buffer)),
                Res::ComputeOut => {
                    let k = item.compute.expect("planned with compute work").slot as usize;
                    set.buffer(at, slot.compute_out[k].raw())
                }
                Res::BoneTexels => set.texel(at, slot.bone_view.expect("created in prepare").1),
                Res::DqScales => set.buffer(at, slot.dq_scales.buffer().raw()),
                Res::MorphDeltas => {
                    set.buffer(at, mesh.morph.as_ref().expect("planned: morphed meshes have deltas").0.raw())
                }
                Res::MorphActive => {
                    let (offset, range) = item.morph.expect("planned with an active list");
                    set.buffer_range(at, slot.morph_active.buffer().raw(), offset, range)
                }
            };
        }
    }

    /// Records the compute skinning of the plan's items; true when there was any.
    fn record_compute(&self, d: &ash::Device, cmd: vk::CommandBuffer, slot: &FrameSlot) -> bool {
        let mut any = false;
        for (item, work) in self.plan.compute_items() {
            let pipeline = match work.pipeline {
                Comp::Lbs => &self.compute.lbs,
                Comp::Dq => &self.compute.dq,
                Comp::LbsMorph => &self.compute.lbs_morph,
                Comp::DqMorph => &self.compute.dq_morph,
            };
            let mut set = Descriptors::default();
            self.descriptors(slot, item, work.bindings, &mut set);
            crate::skinning::record_dispatch(d, &self.layout, cmd, pipeline, &set, &item.push);
            any = true;
        }
        if any {
            let mb = [vk::MemoryBarrier2::default()
                .src_stage_mask(vk::PipelineStageFlags2::COMPUTE_SHADER)
                .src_access_mask(vk::AccessFlags2::SHADER_STORAGE_WRITE)
                .dst_stage_mask(vk::PipelineStageFlags2::VERTEX_ATTRIBUTE_INPUT)
                .dst_access_mask(vk::AccessFlags2::VERTEX_ATTRIBUTE_READ)];
            // SAFETY: `cmd` is recording (begun in `record`) and outside a render pass.
            unsafe { d.cmd_pipeline_barrier2(cmd, &vk::DependencyInfo::default().memory_barriers(&mb)) };
        }
        any
    }

    fn graphics_pipeline(&self, g: Gfx) -> &Pipeline {
        match g {
            Gfx::Mesh => &self.graphics.mesh,
            Gfx::SkinLbs => &self.graphics.skin_lbs,
            Gfx::SkinDq => &self.graphics.skin_dq,
            Gfx::SkinLbsMorph => &self.graphics.skin_lbs_morph,
            Gfx::SkinDqMorph => &self.graphics.skin_dq_morph,
            Gfx::BoneTexture => &self.graphics.bone_texture,
        }
    }

    fn record_pass(&self, d: &ash::Device, cmd: vk::CommandBuffer, slot: &FrameSlot, target: &Target) {
        use vk::AccessFlags2 as A;
        use vk::PipelineStageFlags2 as S;
        let plan = &self.plan;
        let color_stage = S::COLOR_ATTACHMENT_OUTPUT;
        image_barrier(
            d,
            cmd,
            target.color,
            vk::ImageAspectFlags::COLOR,
            (vk::ImageLayout::UNDEFINED, vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL),
            (color_stage, A::NONE),
            (color_stage, A::COLOR_ATTACHMENT_WRITE),
        );
        let tests = S::EARLY_FRAGMENT_TESTS | S::LATE_FRAGMENT_TESTS;
        image_barrier(
            d,
            cmd,
            target.depth,
            vk::ImageAspectFlags::DEPTH,
            (vk::ImageLayout::UNDEFINED, vk::ImageLayout::DEPTH_ATTACHMENT_OPTIMAL),
            (tests, A::DEPTH_STENCIL_ATTACHMENT_WRITE),
            (tests, A::DEPTH_STENCIL_ATTACHMENT_READ | A::DEPTH_STENCIL_ATTACHMENT_WRITE),
        );
        let color = [vk::RenderingAttachmentInfo::default()
            .image_view(target.color_view)
            .image_layout(vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL)
            .load_op(vk::AttachmentLoadOp::CLEAR)
            .store_op(vk::AttachmentStoreOp::STORE)
            .clear_value(vk::ClearValue { color: vk::ClearColorValue { float32: plan.clear_color } })];
        let depth = vk::RenderingAttachmentInfo::default()
            .image_view(target.depth_view)
            .image_layout(vk::ImageLayout::DEPTH_ATTACHMENT_OPTIMAL)
            .load_op(vk::AttachmentLoadOp::CLEAR)
            .store_op(vk::AttachmentStoreOp::DONT_CARE)
            .clear_value(vk::ClearValue { depth_stencil: vk::ClearDepthStencilValue { depth: 1.0, stencil: 0 } });
        let area = vk::Rect2D { offset: vk::Offset2D { x: 0, y: 0 }, extent: target.extent };
        let info = vk::RenderingInfo::default()
            .render_area(area)
            .layer_count(1)
            .color_attachments(&color)
            .depth_attachment(&depth);
        let viewport = vk::Viewport {
            x: 0.0,
            y: 0.0,
            width: target.extent.width as f32,
            height: target.extent.height as f32,
            min_depth: 0.0,
            max_depth: 1.0,
        };
        let gfx = vk::PipelineBindPoint::GRAPHICS;
        let camera = slot.camera.buffer().raw();
        let lines = slot.lines.buffer().raw();
        // SAFETY: `cmd` is recording (begun in `record`); both attachments were moved to
        // their attachment layouts by the barriers above and match the pipelines' formats.
        unsafe {
            d.cmd_begin_rendering(cmd, &info);
            d.cmd_set_viewport(cmd, 0, &[viewport]);
            d.cmd_set_scissor(cmd, 0, &[area]);
        }
        let mut set = Descriptors::default();
        set.buffer(binding::CAMERA, camera);
        if plan.line_vertices > 0 {
            self.bind(d, cmd, &self.graphics.lines);
            self.layout.push_descriptors(cmd, gfx, &set);
            // SAFETY: inside the pass begun above, with a line pipeline bound; the line
            // buffer of the slot holds `line_vertices + overlay_vertices` staged vertices.
            unsafe {
                d.cmd_bind_vertex_buffers(cmd, 0, &[lines], &[0]);
                d.cmd_draw(cmd, plan.line_vertices, 1, 0, 0);
            }
        }
        for item in &plan.items {
            let mesh = &self.meshes[item.mesh];
            let mut set = Descriptors::default();
            set.buffer(binding::CAMERA, camera);
            self.descriptors(slot, item, item.bindings, &mut set);
            self.bind(d, cmd, self.graphics_pipeline(item.pipeline));
            self.layout.push_descriptors(cmd, gfx, &set);
            self.layout.push(cmd, &item.push);
            let colors = mesh.colors.raw();
            let vertices = match item.vertices {
                VertexSource::Mesh => Some((mesh.vertices.raw(), 0)),
                VertexSource::CpuVertices(offset) => Some((slot.cpu_vertices.buffer().raw(), offset)),
                VertexSource::ComputeOut => {
                    let k = item.compute.expect("planned with compute work").slot as usize;
                    Some((slot.compute_out[k].raw(), 0))
                }
                VertexSource::Pulled => None,
            };
            // SAFETY: inside the pass, with the item's pipeline bound and its descriptors
            // and push constants recorded; the plan checked that the vertex source holds
            // `vertex_count` vertices and the palette covers every joint the mesh names, and
            // the mesh's index buffer only names its own vertices (checked in `GpuMesh::new`).
            unsafe {
                match vertices {
                    Some((b, offset)) => d.cmd_bind_vertex_buffers(cmd, 0, &[b, colors], &[offset, 0]),
                    None => d.cmd_bind_vertex_buffers(cmd, 1, &[colors], &[0]),
                }
                d.cmd_bind_index_buffer(cmd, mesh.indices.raw(), 0, vk::IndexType::UINT32);
                d.cmd_draw_indexed(cmd, mesh.index_count(), 1, 0, 0, 0);
            }
        }
        self.crowd_ctx(d, cmd, slot).draws(&self.crowd_plan);
        if plan.overlay_vertices > 0 {
            self.bind(d, cmd, &self.graphics.overlay);
            self.layout.push_descriptors(cmd, gfx, &set);
            // SAFETY: as for the depth-tested lines; the overlay vertices follow them.
            unsafe {
                d.cmd_bind_vertex_buffers(cmd, 0, &[lines], &[0]);
                d.cmd_draw(cmd, plan.overlay_vertices, 1, plan.line_vertices, 0);
            }
        }
        // SAFETY: ends the pass begun above.
        unsafe { d.cmd_end_rendering(cmd) };
    }

    fn bind(&self, d: &ash::Device, cmd: vk::CommandBuffer, p: &Pipeline) {
        // SAFETY: `cmd` is recording inside the pass and every graphics pipeline was built
        // for this renderer's layout and colour format.
        unsafe { d.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::GRAPHICS, p.raw) };
    }

    /// Ends `cmd` and submits it, waiting on `wait` (at colour output) and signalling
    /// `signal`; the slot's fence is signalled when it completes. Moves on to the next slot.
    pub(crate) fn submit(
        &mut self,
        cmd: vk::CommandBuffer,
        wait: Option<vk::Semaphore>,
        signal: Option<vk::Semaphore>,
    ) -> Result<(), RenderError> {
        let d = self.ctx.device();
        let fence = self.slots[self.current].fence;
        // SAFETY: `cmd` is the slot's command buffer, begun in `record`; the fence is
        // signalled (waited in `prepare`) and not used by a pending submission.
        unsafe {
            d.end_command_buffer(cmd).vk("vkEndCommandBuffer")?;
            d.reset_fences(&[fence]).vk("vkResetFences")?;
        }
        let cmds = [vk::CommandBufferSubmitInfo::default().command_buffer(cmd)];
        let waits = [vk::SemaphoreSubmitInfo::default()
            .semaphore(wait.unwrap_or_default())
            .stage_mask(vk::PipelineStageFlags2::COLOR_ATTACHMENT_OUTPUT)];
        let signals = [vk::SemaphoreSubmitInfo::default()
            .semaphore(signal.unwrap_or_default())
            .stage_mask(vk::PipelineStageFlags2::ALL_COMMANDS)];
        let waits = &waits[..usize::from(wait.is_some())];
        let signals = &signals[..usize::from(signal.is_some())];
        let submit = vk::SubmitInfo2::default()
            .command_buffer_infos(&cmds)
            .wait_semaphore_infos(waits)
            .signal_semaphore_infos(signals);
        let result = self.ctx.submit(&[submit], fence);
        if result.is_ok() {
            // Stats and crowd readbacks come from this slot once its fence has signalled.
            self.submissions += 1;
            let crowds: u32 = self.crowd_plan.iter().map(|c| c.instances()).sum();
            self.submitted[self.current] = (self.submissions, self.plan.items.len() as u32 + crowds);
            self.last_submitted = Some(self.current);
        } else {
            // The frame never ran: nothing may be read back from the slot.
            self.submitted[self.current] = (0, 0);
            if self.last_submitted == Some(self.current) {
                self.last_submitted = None;
            }
            // Nothing was submitted and the fence is reset: an empty submission signals it
            // again, so that waiting for this slot cannot hang.
            let _ = self.ctx.submit(&[vk::SubmitInfo2::default()], fence);
        }
        self.current = (self.current + 1) % self.slots.len();
        result
    }
}

/// Keeps the slot's RGBA32F view of its matrix buffer current (the buffer is replaced when
/// it grows).
fn ensure_bone_view(ctx: &Context, slot: &mut FrameSlot) -> Result<(), RenderError> {
    let buf = slot.matrices.buffer();
    if slot.bone_view.is_some_and(|(b, _)| b == buf.raw()) {
        return Ok(());
    }
    let d = ctx.device();
    if let Some((_, v)) = slot.bone_view.take() {
        // SAFETY: the slot's previous frame has completed (fence waited in `prepare`), so no
        // submission uses the view.
        unsafe { d.destroy_buffer_view(v, None) };
    }
    let max = u64::from(ctx.limits().max_texel_buffer_elements) * 16;
    let range = buf.size().min(max) / 16 * 16;
    let info = vk::BufferViewCreateInfo::default()
        .buffer(buf.raw())
        .format(vk::Format::R32G32B32A32_SFLOAT)
        .offset(0)
        .range(range);
    // SAFETY: the buffer was created with UNIFORM_TEXEL_BUFFER usage and the range is a
    // multiple of the texel size within the buffer and the device's texel limit.
    let view = unsafe { d.create_buffer_view(&info, None) }.vk("vkCreateBufferView")?;
    slot.bone_view = Some((buf.raw(), view));
    Ok(())
}

impl Drop for Renderer {
    fn drop(&mut self) {
        let d = self.ctx.device();
        // SAFETY: after the wait no submission of this renderer is pending, so its slots'
        // fences and views and the pool (with its command buffers) can be destroyed; the
        // fields (buffers, meshes, pipelines, layout) drop afterwards in declaration order.
        unsafe {
            let _ = d.device_wait_idle();
        }
        for s in &mut self.slots {
            s.destroy(d);
        }
        // SAFETY: the device is idle (waited above), so none of the pool's command buffers is
        // pending; the pool was created from `d` and is destroyed once.
        unsafe { d.destroy_command_pool(self.pool, None) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::ContextDesc;
    use crate::frame::SkinPath;
    use crate::offscreen::{OFFSCREEN_FORMAT, Offscreen};
    use anim_core::{Influences, Palette};
    use anim_math::{Mat4, Vec3};

    /// A submission failing with `VK_ERROR_DEVICE_LOST` (injected: lavapipe cannot lose its
    /// device) is a typed error from `Offscreen::render` and from an upload; the renderer is
    /// left consistent (the slot's fence signalled again, nothing read back from the frame
    /// that never ran), and renderer, target and context drop without a panic or a
    /// validation message, teardown included.
    #[test]
    fn a_lost_device_at_submit_is_typed_and_everything_stays_droppable() {
        use crate::context::FAIL_NEXT_SUBMIT;
        let ctx = Context::new(&ContextDesc::headless(true)).unwrap();
        let log = ctx.validation_log();
        let mut r = Renderer::new(&ctx, OFFSCREEN_FORMAT).unwrap();
        let mut target = Offscreen::new(&ctx, 16, 16).unwrap();
        let mut frame = FrameData::default();
        crate::lines::grid(&mut frame, 2, 1.0, 0.0);
        target.render(&mut r, &frame).unwrap();
        FAIL_NEXT_SUBMIT.with(|f| f.set(Some(vk::Result::ERROR_DEVICE_LOST)));
        let e = target.render(&mut r, &frame).unwrap_err();
        assert!(matches!(e, RenderError::DeviceLost { call: "vkQueueSubmit2" }), "{e:?}");
        assert!(e.is_device_lost());
        // The slot that failed is waitable (its fence was signalled by an empty submission).
        r.wait_idle().unwrap();
        // (The injected loss left the device working: the renderer's state is consistent
        // enough to render again, with the frame stats of a frame that ran.)
        target.render(&mut r, &frame).unwrap();
        assert!(r.frame_stats().is_some_and(|s| s.instances == 0));
        // Uploads go through the same submission.
        FAIL_NEXT_SUBMIT.with(|f| f.set(Some(vk::Result::ERROR_DEVICE_LOST)));
        let e = r.add_mesh(
            &Mesh { positions: vec![Vec3::zeros(); 3], indices: vec![0, 1, 2], ..Mesh::default() },
            &Coloring::Uniform([1.0; 3]),
        );
        assert!(matches!(e, Err(RenderError::DeviceLost { .. })), "{e:?}");
        // Out of device memory at submit is typed too.
        FAIL_NEXT_SUBMIT.with(|f| f.set(Some(vk::Result::ERROR_OUT_OF_DEVICE_MEMORY)));
        let e = target.render(&mut r, &frame).unwrap_err();
        assert!(matches!(&e, RenderError::OutOfDeviceMemory { what } if what == "vkQueueSubmit2"), "{e:?}");
        drop(target);
        drop(r);
        drop(ctx);
        assert_eq!(log.count(), 0, "{}", log.messages().join("\n"));
    }

    /// A steady frame loop rebuilds the plan in place (no reallocation) and alternates the
    /// frame slots, with every deformation kind in the frame and validation clean.
    #[test]
    fn steady_frames_reuse_the_plan_and_alternate_slots() {
        let ctx = Context::new(&ContextDesc::headless(true)).unwrap();
        let mut r = Renderer::new(&ctx, OFFSCREEN_FORMAT).unwrap();
        let mut target = Offscreen::new(&ctx, 32, 32).unwrap();
        let mesh = Mesh {
            positions: vec![Vec3::zeros(), Vec3::x(), Vec3::y()],
            influences: Some(Influences::new(1, vec![0; 3], vec![1.0; 3], 1).unwrap()),
            indices: vec![0, 1, 2],
            ..Mesh::default()
        };
        let id = r.add_mesh(&mesh, &Coloring::Uniform([1.0; 3])).unwrap();
        let targets = anim_core::MorphTargets::new(3, 3).with_positions(vec![vec![Vec3::x(); 3]; 3]).unwrap();
        r.add_morph_targets(id, &targets).unwrap();
        let lbs = Palette::Matrices(vec![Mat4::identity()]);
        let dq = Palette::from_matrices(anim_core::SkinMethod::Dq, &[Mat4::new_scaling(2.0)]);
        // A crowd of a one-joint atlas (a clip without tracks: the rest pose), culled and not.
        let skeleton =
            anim_core::Skeleton::new(vec![anim_core::JointDesc::new("root", None, anim_math::Transform::IDENTITY)])
                .unwrap();
        let clip = anim_core::Clip::new("rest", vec![], vec![]).unwrap();
        let settings = anim_core::BakeSettings {
            rate: 10.0,
            layout: anim_core::TextureLayout::ModelTrs,
            format: anim_core::TexelFormat::F32,
        };
        let atlas = anim_core::AnimAtlas::bake(
            &skeleton,
            &anim_core::Skin::from_skeleton(&skeleton),
            &[&mesh],
            &[anim_core::AtlasSource { clip: &clip, looping: true }],
            &settings,
        )
        .unwrap();
        let crowd = r.add_crowd(id, &atlas, 4).unwrap();
        let one = anim_core::CrowdInstance {
            position_scale: [0.0, 0.0, 0.0, 1.0],
            rotation: [0.0, 0.0, 0.0, 1.0],
            ..Default::default()
        };
        r.set_crowd_instances(crowd, &[one; 3]).unwrap();
        let mut frame = FrameData::default();
        let fill = |f: &mut FrameData| {
            f.clear();
            f.add_static(id, Mat4::identity(), [1.0; 3]);
            for path in [SkinPath::VertexShader, SkinPath::Compute, SkinPath::BoneTexture] {
                f.add_skinned(id, Mat4::identity(), path, &lbs).unwrap();
            }
            for path in [SkinPath::VertexShader, SkinPath::Compute] {
                f.add_skinned(id, Mat4::identity(), path, &dq).unwrap();
                f.add_skinned_morphed(id, Mat4::identity(), path, &lbs, &[0.5, 0.0, -1.0]).unwrap();
                f.add_skinned_morphed(id, Mat4::identity(), path, &dq, &[0.0, 0.25, 0.0]).unwrap();
            }
            f.add_cpu(id, Mat4::identity(), &mesh.positions, &[Vec3::z(); 3]).unwrap();
            f.line(Vec3::zeros(), Vec3::x(), [1.0; 4]);
            f.overlay_line(Vec3::zeros(), Vec3::y(), [1.0; 4]);
            let path = crate::crowd::CrowdPath::PaletteCompute;
            f.add_crowd(crate::crowd::CrowdDraw { path, cull: true, ..crate::crowd::CrowdDraw::new(crowd) });
        };
        fill(&mut frame);
        target.render(&mut r, &frame).unwrap();
        let items = (r.plan.items.as_ptr(), r.plan.items.capacity());
        let compute = r.plan.compute_bytes.as_ptr();
        let morph = (r.plan.morph_list.as_ptr(), r.plan.morph_list.capacity());
        let crowds = (r.crowd_plan.as_ptr(), r.crowd_plan.capacity());
        let first = r.slot();
        for k in 1..6 {
            fill(&mut frame);
            target.render(&mut r, &frame).unwrap();
            assert_eq!((r.plan.items.as_ptr(), r.plan.items.capacity()), items);
            assert_eq!(r.plan.compute_bytes.as_ptr(), compute);
            assert_eq!((r.plan.morph_list.as_ptr(), r.plan.morph_list.capacity()), morph);
            assert_eq!((r.crowd_plan.as_ptr(), r.crowd_plan.capacity()), crowds);
            assert_eq!(r.crowd_visible(crowd), Some(3));
            assert_eq!(r.slot(), (first + k) % FRAMES_IN_FLIGHT);
        }
        assert_eq!(r.plan.items.len(), 11);
        assert_eq!(r.plan.compute_slots, 4);
        assert!(r.slots.iter().all(|s| s.compute_out.len() == 4));
        // Four morphed items, each list at its own aligned offset: two or one active targets.
        let morphed: Vec<_> = r.plan.items.iter().filter_map(|i| i.morph).collect();
        assert_eq!(morphed.len(), 4);
        let align = ctx.limits().min_storage_buffer_offset_alignment.max(16);
        assert!(morphed.iter().all(|(offset, _)| offset % align == 0));
        assert_eq!(morphed.iter().map(|(_, len)| *len).collect::<Vec<_>>(), [32, 24, 32, 24]);
        assert_eq!(ctx.validation_count(), 0, "{}", ctx.validation_messages().join("\n"));
    }
}
