//! Recording a frame: [`Renderer::prepare`] plans the frame and stages its data into the
//! current slot, [`Renderer::record`] records the uploads, the compute passes (instances,
//! then the crowds' list, palette and skinning passes) and the pass that draws lines,
//! instances, crowds and the overlay, and [`Renderer::submit`] submits the slot's command
//! buffer and moves on to the next slot.

use super::slot::{FrameSlot, ensure_bone_view};
use super::{Renderer, Target};
use crate::crowd::record::RecordCtx;
use crate::error::{RenderError, VkCall};
use crate::frame::FrameData;
use crate::pipelines::{Descriptors, Pipeline, binding};
use crate::plan::{Comp, Gfx, PlanItem, Res, VertexSource};
use crate::resources::{Buffer, image_barrier};
use ash::vk;
use gpu_allocator::MemoryLocation;

impl Renderer {
    /// Resolves `frame` into the plan, checking it against the registered meshes.
    /// `height` is the render target's, in pixels (for the crowds' screen-space LOD choice).
    pub(crate) fn check(&mut self, frame: &FrameData, height: u32) -> Result<(), RenderError> {
        let limits = self.ctx.limits();
        self.plan.build(
            frame,
            &self.meshes,
            &self.materials,
            limits.max_texel_buffer_elements,
            limits.min_storage_buffer_offset_alignment,
        )?;
        crate::crowd::plan::plan(
            &frame.crowds,
            frame.camera.fov_y,
            height,
            self.crowd_chunk_bytes,
            &self.crowds,
            &self.meshes,
            &self.ctx,
            &mut self.crowd_plan,
        )
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

    /// Plans `frame`, waits until the GPU is done with the current slot (the frame two
    /// submissions ago), and stages the frame's data into the slot. Nothing is recorded yet:
    /// a caller may still give up (a swapchain that is out of date) and prepare again.
    ///
    /// # Errors
    /// Invalid frame data (nothing is waited for then) or a failing Vulkan call.
    pub(crate) fn prepare(&mut self, frame: &FrameData, extent: vk::Extent2D) -> Result<(), RenderError> {
        let aspect = extent.width as f32 / extent.height as f32;
        self.check(frame, extent.height)?;
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
            materials: &self.materials,
            textures: &self.textures,
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
        #[cfg(feature = "ui")]
        if let Some(ui) = self.ui.as_mut() {
            match ui.record(d, cmd, target.color_view, target.extent) {
                Ok(true) => timer.mark(d, cmd, "ui"),
                Ok(false) => {}
                Err(e) => {
                    self.timers = timers;
                    return Err(e);
                }
            }
        }
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

    fn graphics_pipeline(&self, g: Gfx, blend: bool) -> &Pipeline {
        let k = usize::from(blend);
        match g {
            Gfx::Mesh => &self.graphics.mesh[k],
            Gfx::SkinLbs => &self.graphics.skin_lbs[k],
            Gfx::SkinDq => &self.graphics.skin_dq[k],
            Gfx::SkinLbsMorph => &self.graphics.skin_lbs_morph[k],
            Gfx::SkinDqMorph => &self.graphics.skin_dq_morph[k],
            Gfx::BoneTexture => &self.graphics.bone_texture,
        }
    }

    /// The material block and textures of `item`.
    fn material_descriptors(&self, item: &PlanItem, set: &mut Descriptors) {
        let m = &self.materials[item.material];
        set.buffer(binding::MATERIAL, m.uniform.raw());
        for (k, &t) in m.textures.iter().enumerate() {
            let t = &self.textures[t];
            set.image(binding::TEXTURES + k as u32, t.image.view(), t.sampler);
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
        for &k in &plan.order {
            let item = &plan.items[k as usize];
            let mesh = &self.meshes[item.mesh];
            let mut set = Descriptors::default();
            set.buffer(binding::CAMERA, camera);
            self.descriptors(slot, item, item.bindings, &mut set);
            self.material_descriptors(item, &mut set);
            self.bind(d, cmd, self.graphics_pipeline(item.pipeline, item.blend));
            self.layout.push_descriptors(cmd, gfx, &set);
            self.layout.push(cmd, &item.push);
            // SAFETY: inside the pass; every mesh pipeline declares cull mode and front face
            // dynamic.
            unsafe {
                d.cmd_set_cull_mode(cmd, item.cull);
                d.cmd_set_front_face(cmd, item.front_face);
            }
            let (colors, uvs) = (mesh.colors.raw(), mesh.uvs.raw());
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
                    Some((b, offset)) => d.cmd_bind_vertex_buffers(cmd, 0, &[b, colors, uvs], &[offset, 0, 0]),
                    None => d.cmd_bind_vertex_buffers(cmd, 1, &[colors, uvs], &[0, 0]),
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
