//! The frame: uploads of the frame's data, compute skinning, then one dynamic-rendering pass
//! that draws grid lines, instances and the overlay. Windowed and headless targets share
//! all of it; they differ only in where the colour image comes from and what happens to it
//! afterwards (see `offscreen.rs` and `swapchain.rs`).
//!
//! One frame is in flight: a frame waits for the previous frame's fence before it touches
//! any buffer, so staging buffers and per-frame device buffers can be reused and grown.

use crate::context::Context;
use crate::error::{RenderError, VkCall};
use crate::frame::{Deform, FrameData, MeshId, SkinMethod, SkinPath};
use crate::mesh::{Coloring, GpuMesh, GpuVertex};
use crate::pipelines::{ComputePipelines, GraphicsPipelines, Pipeline, PipelineLayout, Push, binding};
use crate::resources::{Buffer, StagedBuffer, image_barrier};
use crate::skinning::{Dispatch, record_dispatch};
use anim_core::Mesh;
use ash::vk;
use gpu_allocator::MemoryLocation;
use std::sync::Arc;

/// The images a frame renders into.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Target {
    pub color: vk::Image,
    pub color_view: vk::ImageView,
    pub depth: vk::Image,
    pub depth_view: vk::ImageView,
    pub extent: vk::Extent2D,
}

/// Owns pipelines, registered meshes and per-frame buffers, and records frames.
pub struct Renderer {
    fence: vk::Fence,
    pool: vk::CommandPool,
    cmd: vk::CommandBuffer,
    bone_view: Option<(vk::Buffer, vk::BufferView)>,
    compute_out: Vec<Buffer>,
    camera: StagedBuffer,
    matrices: StagedBuffer,
    dual_quats: StagedBuffer,
    cpu_vertices: StagedBuffer,
    lines: StagedBuffer,
    meshes: Vec<GpuMesh>,
    graphics: GraphicsPipelines,
    compute: ComputePipelines,
    layout: PipelineLayout,
    color_format: vk::Format,
    ctx: Arc<Context>,
}

impl std::fmt::Debug for Renderer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Renderer").field("meshes", &self.meshes.len()).field("format", &self.color_format).finish()
    }
}

impl Renderer {
    /// Creates pipelines for `color_format` and the per-frame buffers.
    ///
    /// # Errors
    /// A failing Vulkan call.
    pub fn new(ctx: &Arc<Context>, color_format: vk::Format) -> Result<Self, RenderError> {
        let layout = PipelineLayout::new(ctx)?;
        let compute = ComputePipelines::new(ctx, &layout)?;
        let graphics = GraphicsPipelines::new(ctx, &layout, color_format)?;
        let storage = vk::BufferUsageFlags::STORAGE_BUFFER;
        let camera = StagedBuffer::new(ctx, 256, vk::BufferUsageFlags::UNIFORM_BUFFER, "camera")?;
        let matrices =
            StagedBuffer::new(ctx, 64 * 256, storage | vk::BufferUsageFlags::UNIFORM_TEXEL_BUFFER, "palette matrices")?;
        let dual_quats = StagedBuffer::new(ctx, 32 * 256, storage, "palette dual quaternions")?;
        let cpu_vertices =
            StagedBuffer::new(ctx, 32 * 1024, vk::BufferUsageFlags::VERTEX_BUFFER, "CPU-skinned vertices")?;
        let lines = StagedBuffer::new(ctx, 28 * 1024, vk::BufferUsageFlags::VERTEX_BUFFER, "lines")?;
        let d = ctx.device();
        let pool_info = vk::CommandPoolCreateInfo::default()
            .queue_family_index(ctx.queue_family())
            .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER);
        // SAFETY: valid device; objects are destroyed in Drop.
        let pool = unsafe { d.create_command_pool(&pool_info, None) }.vk("vkCreateCommandPool")?;
        let alloc = vk::CommandBufferAllocateInfo::default()
            .command_pool(pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(1);
        // SAFETY: valid pool.
        let cmd = match unsafe { d.allocate_command_buffers(&alloc) } {
            Ok(c) => c[0],
            Err(result) => {
                // SAFETY: unused pool.
                unsafe { d.destroy_command_pool(pool, None) };
                return Err(RenderError::Vulkan { call: "vkAllocateCommandBuffers", result });
            }
        };
        // SAFETY: valid device.
        let fence = match unsafe {
            d.create_fence(&vk::FenceCreateInfo::default().flags(vk::FenceCreateFlags::SIGNALED), None)
        } {
            Ok(f) => f,
            Err(result) => {
                // SAFETY: unused pool.
                unsafe { d.destroy_command_pool(pool, None) };
                return Err(RenderError::Vulkan { call: "vkCreateFence", result });
            }
        };
        Ok(Self {
            fence,
            pool,
            cmd,
            bone_view: None,
            compute_out: Vec::new(),
            camera,
            matrices,
            dual_quats,
            cpu_vertices,
            lines,
            meshes: Vec::new(),
            graphics,
            compute,
            layout,
            color_format,
            ctx: ctx.clone(),
        })
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

    /// Waits until the GPU has finished the last submitted frame.
    ///
    /// # Errors
    /// The wait failed (device lost).
    pub fn wait_idle(&self) -> Result<(), RenderError> {
        // SAFETY: the fence belongs to this device.
        unsafe { self.ctx.device().wait_for_fences(&[self.fence], true, u64::MAX) }.vk("vkWaitForFences")
    }

    /// Checks that every instance fits the registered meshes and the frame's palettes.
    pub(crate) fn check(&self, frame: &FrameData) -> Result<(), RenderError> {
        for (i, inst) in frame.instances.iter().enumerate() {
            let mesh = self
                .meshes
                .get(inst.mesh.0)
                .ok_or_else(|| RenderError::Input(format!("instance {i}: unknown mesh {}", inst.mesh.0)))?;
            let skinned = |what: &str| {
                if mesh.is_skinned() {
                    Ok(())
                } else {
                    Err(RenderError::Input(format!("instance {i}: {what} of a mesh without influences")))
                }
            };
            let range = |offset: u32, need: usize, len: usize, what: &str| {
                if offset as usize + need > len {
                    Err(RenderError::Input(format!(
                        "instance {i}: {what} at {offset} needs {need} entries, the frame has {len}"
                    )))
                } else {
                    Ok(())
                }
            };
            match inst.deform {
                Deform::Static => {}
                Deform::Gpu { method, palette_offset, .. } => {
                    skinned("GPU skinning")?;
                    let len = match method {
                        SkinMethod::Lbs => frame.matrices.len(),
                        SkinMethod::Dq => frame.dual_quats.len(),
                    };
                    range(palette_offset, mesh.joint_bound(), len, "palette")?;
                }
                Deform::BoneTexture { palette_offset } => {
                    skinned("bone-texture skinning")?;
                    range(palette_offset, mesh.joint_bound(), frame.matrices.len(), "palette")?;
                    let texels = (palette_offset as usize + mesh.joint_bound()) * 4;
                    if texels > self.ctx.limits().max_texel_buffer_elements as usize {
                        return Err(RenderError::Input(format!("instance {i}: bone texture beyond the texel limit")));
                    }
                }
                Deform::Cpu { vertex_offset } => {
                    range(vertex_offset, mesh.vertex_count() as usize, frame.cpu_vertices.len(), "CPU vertices")?;
                }
            }
        }
        Ok(())
    }

    /// Waits for the previous frame, stages this frame's data, and begins recording: uploads,
    /// compute skinning and the drawing pass into `target`. The colour image ends in
    /// `COLOR_ATTACHMENT_OPTIMAL`; the caller records what follows and calls
    /// [`Renderer::submit`].
    pub(crate) fn record(&mut self, frame: &FrameData, target: &Target) -> Result<vk::CommandBuffer, RenderError> {
        self.check(frame)?;
        self.wait_idle()?;
        let ctx = self.ctx.clone();
        let aspect = target.extent.width.max(1) as f32 / target.extent.height.max(1) as f32;
        self.camera.stage(&ctx, &[bytemuck::bytes_of(&frame.camera.uniform(aspect))])?;
        self.matrices.stage(&ctx, &[bytemuck::cast_slice(&frame.matrices)])?;
        self.dual_quats.stage(&ctx, &[bytemuck::cast_slice(&frame.dual_quats)])?;
        self.cpu_vertices.stage(&ctx, &[bytemuck::cast_slice(&frame.cpu_vertices)])?;
        self.lines.stage(&ctx, &[bytemuck::cast_slice(&frame.lines), bytemuck::cast_slice(&frame.overlay_lines)])?;
        self.ensure_bone_view()?;
        // Compute outputs: one buffer per compute instance, grown when needed.
        let mut k = 0;
        for inst in &frame.instances {
            if let Deform::Gpu { path: SkinPath::Compute, .. } = inst.deform {
                let bytes = u64::from(self.meshes[inst.mesh.0].vertex_count()) * 32;
                if k == self.compute_out.len() || self.compute_out[k].size() < bytes {
                    let b = Buffer::new(
                        &ctx,
                        bytes,
                        vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::VERTEX_BUFFER,
                        MemoryLocation::GpuOnly,
                        "compute skinning output",
                    )?;
                    if k == self.compute_out.len() {
                        self.compute_out.push(b);
                    } else {
                        self.compute_out[k] = b;
                    }
                }
                k += 1;
            }
        }
        let d = ctx.device();
        let cmd = self.cmd;
        // SAFETY: the previous submission of `cmd` has completed (fence waited).
        unsafe {
            d.reset_command_buffer(cmd, vk::CommandBufferResetFlags::empty()).vk("vkResetCommandBuffer")?;
            d.begin_command_buffer(
                cmd,
                &vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT),
            )
            .vk("vkBeginCommandBuffer")?;
            // Earlier frames' reads of the buffers rewritten below finished before the fence;
            // this execution dependency states it for the queue as well.
            let mb = [vk::MemoryBarrier2::default()
                .src_stage_mask(vk::PipelineStageFlags2::ALL_COMMANDS)
                .dst_stage_mask(vk::PipelineStageFlags2::ALL_COMMANDS)];
            d.cmd_pipeline_barrier2(cmd, &vk::DependencyInfo::default().memory_barriers(&mb));
        }
        self.record_uploads(d, cmd);
        self.record_compute(d, cmd, frame);
        self.record_pass(d, cmd, frame, target);
        Ok(cmd)
    }

    fn ensure_bone_view(&mut self) -> Result<(), RenderError> {
        let buf = self.matrices.buffer();
        if self.bone_view.is_some_and(|(b, _)| b == buf.raw()) {
            return Ok(());
        }
        let d = self.ctx.device();
        if let Some((_, v)) = self.bone_view.take() {
            // SAFETY: the previous frame has completed (fence waited in `record`).
            unsafe { d.destroy_buffer_view(v, None) };
        }
        let max = u64::from(self.ctx.limits().max_texel_buffer_elements) * 16;
        let range = buf.size().min(max) / 16 * 16;
        let info = vk::BufferViewCreateInfo::default()
            .buffer(buf.raw())
            .format(vk::Format::R32G32B32A32_SFLOAT)
            .offset(0)
            .range(range);
        // SAFETY: the buffer was created with UNIFORM_TEXEL_BUFFER usage.
        let view = unsafe { d.create_buffer_view(&info, None) }.vk("vkCreateBufferView")?;
        self.bone_view = Some((buf.raw(), view));
        Ok(())
    }

    fn record_uploads(&self, d: &ash::Device, cmd: vk::CommandBuffer) {
        use vk::AccessFlags2 as A;
        use vk::PipelineStageFlags2 as S;
        self.camera.record_upload(d, cmd, (S::VERTEX_SHADER | S::FRAGMENT_SHADER, A::UNIFORM_READ));
        let palette_readers = (S::VERTEX_SHADER | S::COMPUTE_SHADER, A::SHADER_READ | A::UNIFORM_READ);
        self.matrices.record_upload(d, cmd, palette_readers);
        self.dual_quats.record_upload(d, cmd, palette_readers);
        let vertex_input = (S::VERTEX_ATTRIBUTE_INPUT, A::VERTEX_ATTRIBUTE_READ);
        self.cpu_vertices.record_upload(d, cmd, vertex_input);
        self.lines.record_upload(d, cmd, vertex_input);
    }

    fn record_compute(&self, d: &ash::Device, cmd: vk::CommandBuffer, frame: &FrameData) {
        let mut k = 0;
        for inst in &frame.instances {
            let Deform::Gpu { method, path: SkinPath::Compute, palette_offset } = inst.deform else {
                continue;
            };
            let mesh = &self.meshes[inst.mesh.0];
            let (pipeline, palette) = match method {
                SkinMethod::Lbs => (&self.compute.lbs, self.matrices.buffer().raw()),
                SkinMethod::Dq => (&self.compute.dq, self.dual_quats.buffer().raw()),
            };
            let x = Dispatch {
                bind_vertices: mesh.vertices.raw(),
                joints: mesh.joints.as_ref().expect("checked: GPU-skinned meshes have influences").raw(),
                weights: mesh.weights.as_ref().expect("checked: GPU-skinned meshes have influences").raw(),
                palette,
                out: self.compute_out[k].raw(),
                push: Push {
                    model: inst.model.data.0,
                    tint: [1.0; 4],
                    palette_offset,
                    influences: mesh.influences_per_vertex(),
                    vertex_count: mesh.vertex_count(),
                    out_offset: 0,
                    flags: 0,
                },
                pipeline,
            };
            record_dispatch(d, &self.layout, cmd, &x);
            k += 1;
        }
        if k > 0 {
            let mb = [vk::MemoryBarrier2::default()
                .src_stage_mask(vk::PipelineStageFlags2::COMPUTE_SHADER)
                .src_access_mask(vk::AccessFlags2::SHADER_STORAGE_WRITE)
                .dst_stage_mask(vk::PipelineStageFlags2::VERTEX_ATTRIBUTE_INPUT)
                .dst_access_mask(vk::AccessFlags2::VERTEX_ATTRIBUTE_READ)];
            // SAFETY: recording.
            unsafe { d.cmd_pipeline_barrier2(cmd, &vk::DependencyInfo::default().memory_barriers(&mb)) };
        }
    }

    fn record_pass(&self, d: &ash::Device, cmd: vk::CommandBuffer, frame: &FrameData, target: &Target) {
        use vk::AccessFlags2 as A;
        use vk::PipelineStageFlags2 as S;
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
            .clear_value(vk::ClearValue { color: vk::ClearColorValue { float32: frame.clear_color } })];
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
        let camera_info =
            [vk::DescriptorBufferInfo { buffer: self.camera.buffer().raw(), offset: 0, range: vk::WHOLE_SIZE }];
        let camera_write = vk::WriteDescriptorSet::default()
            .dst_binding(binding::CAMERA)
            .descriptor_type(vk::DescriptorType::UNIFORM_BUFFER)
            .buffer_info(&camera_info);
        let gfx = vk::PipelineBindPoint::GRAPHICS;
        // SAFETY: recording; every buffer bound below outlives the submission (owned by self
        // or its meshes, which are only replaced after the fence).
        unsafe {
            d.cmd_begin_rendering(cmd, &info);
            d.cmd_set_viewport(cmd, 0, &[viewport]);
            d.cmd_set_scissor(cmd, 0, &[area]);
            let line_count = frame.lines.len() as u32;
            if line_count > 0 {
                self.bind(d, cmd, &self.graphics.lines);
                self.layout.push_descriptors(cmd, gfx, &[camera_write]);
                d.cmd_bind_vertex_buffers(cmd, 0, &[self.lines.buffer().raw()], &[0]);
                d.cmd_draw(cmd, line_count, 1, 0, 0);
            }
            let mut k = 0;
            for inst in &frame.instances {
                let mesh = &self.meshes[inst.mesh.0];
                let mut push = Push {
                    model: inst.model.data.0,
                    tint: [inst.tint[0], inst.tint[1], inst.tint[2], if inst.lit { 1.0 } else { 0.0 }],
                    palette_offset: 0,
                    influences: mesh.influences_per_vertex(),
                    vertex_count: mesh.vertex_count(),
                    out_offset: 0,
                    flags: 0,
                };
                let colors = mesh.colors.raw();
                match inst.deform {
                    Deform::Static => {
                        self.bind(d, cmd, &self.graphics.mesh);
                        self.layout.push_descriptors(cmd, gfx, &[camera_write]);
                        d.cmd_bind_vertex_buffers(cmd, 0, &[mesh.vertices.raw(), colors], &[0, 0]);
                    }
                    Deform::Cpu { vertex_offset } => {
                        self.bind(d, cmd, &self.graphics.mesh);
                        self.layout.push_descriptors(cmd, gfx, &[camera_write]);
                        let off = u64::from(vertex_offset) * std::mem::size_of::<GpuVertex>() as u64;
                        d.cmd_bind_vertex_buffers(cmd, 0, &[self.cpu_vertices.buffer().raw(), colors], &[off, 0]);
                    }
                    Deform::Gpu { path: SkinPath::Compute, .. } => {
                        self.bind(d, cmd, &self.graphics.mesh);
                        self.layout.push_descriptors(cmd, gfx, &[camera_write]);
                        d.cmd_bind_vertex_buffers(cmd, 0, &[self.compute_out[k].raw(), colors], &[0, 0]);
                        k += 1;
                    }
                    Deform::Gpu { method, path: SkinPath::VertexShader, palette_offset } => {
                        let (pipeline, palette) = match method {
                            SkinMethod::Lbs => (&self.graphics.skin_lbs, self.matrices.buffer().raw()),
                            SkinMethod::Dq => (&self.graphics.skin_dq, self.dual_quats.buffer().raw()),
                        };
                        push.palette_offset = palette_offset;
                        self.bind(d, cmd, pipeline);
                        let whole =
                            |b: vk::Buffer| [vk::DescriptorBufferInfo { buffer: b, offset: 0, range: vk::WHOLE_SIZE }];
                        let infos = [
                            whole(mesh.vertices.raw()),
                            whole(mesh.joints.as_ref().expect("checked: skinned").raw()),
                            whole(mesh.weights.as_ref().expect("checked: skinned").raw()),
                            whole(palette),
                        ];
                        let slots = [binding::BIND_VERTICES, binding::JOINTS, binding::WEIGHTS, binding::PALETTE];
                        let w: [vk::WriteDescriptorSet<'_>; 4] = std::array::from_fn(|i| {
                            vk::WriteDescriptorSet::default()
                                .dst_binding(slots[i])
                                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                                .buffer_info(&infos[i])
                        });
                        self.layout.push_descriptors(cmd, gfx, &[camera_write, w[0], w[1], w[2], w[3]]);
                        d.cmd_bind_vertex_buffers(cmd, 1, &[colors], &[0]);
                    }
                    Deform::BoneTexture { palette_offset } => {
                        push.palette_offset = palette_offset;
                        self.bind(d, cmd, &self.graphics.bone_texture);
                        let whole =
                            |b: vk::Buffer| [vk::DescriptorBufferInfo { buffer: b, offset: 0, range: vk::WHOLE_SIZE }];
                        let ji = whole(mesh.joints.as_ref().expect("checked: skinned").raw());
                        let wi = whole(mesh.weights.as_ref().expect("checked: skinned").raw());
                        let views = [self.bone_view.expect("created in record").1];
                        let writes = [
                            camera_write,
                            vk::WriteDescriptorSet::default()
                                .dst_binding(binding::JOINTS)
                                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                                .buffer_info(&ji),
                            vk::WriteDescriptorSet::default()
                                .dst_binding(binding::WEIGHTS)
                                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                                .buffer_info(&wi),
                            vk::WriteDescriptorSet::default()
                                .dst_binding(binding::BONES)
                                .descriptor_type(vk::DescriptorType::UNIFORM_TEXEL_BUFFER)
                                .texel_buffer_view(&views),
                        ];
                        self.layout.push_descriptors(cmd, gfx, &writes);
                        d.cmd_bind_vertex_buffers(cmd, 0, &[mesh.vertices.raw(), colors], &[0, 0]);
                    }
                }
                self.layout.push(cmd, &push);
                d.cmd_bind_index_buffer(cmd, mesh.indices.raw(), 0, vk::IndexType::UINT32);
                d.cmd_draw_indexed(cmd, mesh.index_count(), 1, 0, 0, 0);
            }
            let overlay_count = frame.overlay_lines.len() as u32;
            if overlay_count > 0 {
                self.bind(d, cmd, &self.graphics.overlay);
                self.layout.push_descriptors(cmd, gfx, &[camera_write]);
                d.cmd_bind_vertex_buffers(cmd, 0, &[self.lines.buffer().raw()], &[0]);
                d.cmd_draw(cmd, overlay_count, 1, line_count, 0);
            }
            d.cmd_end_rendering(cmd);
        }
    }

    fn bind(&self, d: &ash::Device, cmd: vk::CommandBuffer, p: &Pipeline) {
        // SAFETY: recording.
        unsafe { d.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::GRAPHICS, p.raw) };
    }

    /// Ends `cmd` and submits it, waiting on `wait` (at colour output) and signalling
    /// `signal`; the frame fence is signalled when it completes.
    pub(crate) fn submit(
        &self,
        cmd: vk::CommandBuffer,
        wait: Option<vk::Semaphore>,
        signal: Option<vk::Semaphore>,
    ) -> Result<(), RenderError> {
        let d = self.ctx.device();
        // SAFETY: `cmd` is recording; the fence is not in use (waited in `record`).
        unsafe {
            d.end_command_buffer(cmd).vk("vkEndCommandBuffer")?;
            d.reset_fences(&[self.fence]).vk("vkResetFences")?;
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
        self.ctx.submit(&[submit], self.fence)
    }
}

impl Drop for Renderer {
    fn drop(&mut self) {
        // SAFETY: wait for the GPU, then destroy what this struct created directly; the
        // fields (buffers, meshes, pipelines, layout) drop afterwards in declaration order.
        unsafe {
            let d = self.ctx.device();
            let _ = d.device_wait_idle();
            if let Some((_, v)) = self.bone_view.take() {
                d.destroy_buffer_view(v, None);
            }
            d.destroy_command_pool(self.pool, None);
            d.destroy_fence(self.fence, None);
        }
    }
}
