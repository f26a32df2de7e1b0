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
//!
//! Instances are drawn in the plan's order: opaque (and MASK) ones as given, then those with
//! BLEND materials farthest first, each with the cull mode and front face its material and
//! model matrix ask for, and its material's block and textures bound.
//!
//! The renderer's files: this one (the [`Renderer`], its setup and its public methods),
//! `slot.rs` (what one frame in flight owns), `record.rs` (preparing, recording and
//! submitting a frame), `surfaces.rs` (textures, materials and meshes drawn with them) and
//! `tests.rs`; the crowd methods are in `crowd/api.rs`.
//!
//! [`FrameData::add_skinned_morphed`]: crate::FrameData::add_skinned_morphed

mod record;
mod slot;
mod surfaces;
#[cfg(test)]
mod tests;

use crate::context::Context;
use crate::crowd::buffers::GpuCrowd;
use crate::crowd::pipelines::CrowdPipelines;
use crate::crowd::plan::CrowdItem;
use crate::error::{RenderError, VkCall};
use crate::frame::MeshId;
use crate::mesh::{Coloring, GpuMesh, GpuVertex};
use crate::pipelines::{ComputePipelines, GraphicsPipelines, PipelineLayout};
use crate::plan::FramePlan;
use crate::resources::{Buffer, buffer_barrier, copy_buffer};
use crate::texture::{GpuMaterial, GpuTexture, Samplers};
use crate::timing::{FrameStats, GpuTimer};
use anim_core::skin::{Mesh, MorphTargets};
use ash::vk;
use gpu_allocator::MemoryLocation;
use slot::FrameSlot;
use std::sync::Arc;

pub use crate::types::FRAMES_IN_FLIGHT;

/// Timed passes a frame at most: upload, compute, cull, palette, skin, draw, ui.
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
    /// Caps the crowds' skinned-vertex chunks ([`Renderer::set_crowd_chunk_bytes`]).
    pub(crate) crowd_chunk_bytes: Option<u64>,
    pub(crate) meshes: Vec<GpuMesh>,
    pub(crate) crowds: Vec<GpuCrowd>,
    pub(crate) mixed_crowds: Vec<crate::crowd::buffers::MixedCrowd>,
    /// Textures; 0 is a white texel (what an empty material slot binds).
    pub(crate) textures: Vec<GpuTexture>,
    /// Materials; 0 is glTF's default material.
    pub(crate) materials: Vec<GpuMaterial>,
    pub(crate) samplers: Samplers,
    graphics: GraphicsPipelines,
    compute: ComputePipelines,
    crowd_pipelines: CrowdPipelines,
    layout: PipelineLayout,
    color_format: vk::Format,
    /// The UI pass, created by the first [`Renderer::set_ui`].
    #[cfg(feature = "ui")]
    ui: Option<crate::ui::UiPass>,
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
            crowd_chunk_bytes: None,
            meshes: Vec::new(),
            crowds: Vec::new(),
            mixed_crowds: Vec::new(),
            textures: Vec::new(),
            materials: Vec::new(),
            samplers: Samplers::new(ctx),
            graphics,
            compute,
            crowd_pipelines,
            layout,
            color_format,
            #[cfg(feature = "ui")]
            ui: None,
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
        r.add_defaults()?;
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
    ///
    /// [`FrameData::add_skinned_morphed`]: crate::FrameData::add_skinned_morphed
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
    ///
    /// [`FrameData::instances`]: crate::FrameData::instances
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

    /// GPU timings and counts of the most recently completed frame whose stats were
    /// collected: after [`crate::Offscreen::render`] that very frame; in a windowed loop the
    /// frame that last used the slot being prepared (read after its fence). `None` before
    /// the first such frame.
    pub fn frame_stats(&self) -> Option<&FrameStats> {
        self.stats.as_ref().map(|(_, s)| s)
    }

    /// Hands the renderer egui's output for the frames that follow (see [`crate::ui`]): the
    /// shapes are tessellated now and drawn over every following frame until the next call
    /// or [`Renderer::clear_ui`]; the textures egui sets are uploaded now (waiting for the
    /// queue), those it frees are freed at the next call, after the frames in flight.
    /// Hand over every output of `gui`, even of frames not rendered: texture changes (the
    /// font atlas) come once, in the output of the frame that made them.
    ///
    /// # Errors
    /// A failing Vulkan call or texture upload.
    #[cfg(feature = "ui")]
    pub fn set_ui(
        &mut self,
        gui: &crate::ui::egui::Context,
        output: crate::ui::egui::FullOutput,
    ) -> Result<(), RenderError> {
        if self.ui.as_ref().is_some_and(crate::ui::UiPass::frees_pending) {
            self.wait_idle()?;
        }
        if self.ui.is_none() {
            self.ui = Some(crate::ui::UiPass::new(&self.ctx, self.color_format)?);
        }
        self.ui.as_mut().expect("created above").set(gui, output)
    }

    /// Draws no UI from the next frame on (until the next [`Renderer::set_ui`]).
    #[cfg(feature = "ui")]
    pub fn clear_ui(&mut self) {
        if let Some(ui) = &mut self.ui {
            ui.primitives.clear();
        }
    }

    /// Triangles the UI pass draws a frame (0 without UI output).
    #[cfg(feature = "ui")]
    pub fn ui_triangles(&self) -> usize {
        self.ui.as_ref().map_or(0, crate::ui::UiPass::triangles)
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
