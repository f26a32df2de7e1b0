//! The UI pass (cargo feature `ui`): egui's output drawn over the frame, as the last pass of
//! the frame, in the window and headless alike (the offscreen image includes the panel).
//!
//! The application runs egui itself (its own [`egui::Context`], with input from
//! `egui-winit` in a window or built by hand headless) and hands the output to
//! [`Renderer::set_ui`](crate::Renderer::set_ui) before rendering the frame: the renderer
//! tessellates the shapes, uploads the textures egui asks for (the font atlas, images) and
//! draws the triangles after the scene, with a second dynamic-rendering pass that loads the
//! colour image and has no depth. The output stays until the next `set_ui` or
//! [`Renderer::clear_ui`](crate::Renderer::clear_ui), so a frame without new UI output draws
//! the last one again. The pass has its own GPU timer mark, `ui`, in
//! [`Renderer::frame_stats`](crate::Renderer::frame_stats).
//!
//! The triangles are drawn by `egui-ash-renderer` (with its own allocations for its
//! vertices, indices and textures); egui is re-exported as [`egui`] so that applications
//! build their UI against the same version.
//!
//! ```no_run
//! use anim_render_vk::{Context, ContextDesc, FrameData, OFFSCREEN_FORMAT, Offscreen, Renderer, ui::egui};
//! let ctx = Context::new(&ContextDesc::headless(true))?;
//! let mut renderer = Renderer::new(&ctx, OFFSCREEN_FORMAT)?;
//! let mut target = Offscreen::new(&ctx, 640, 360)?;
//! let gui = egui::Context::default();
//! let input = egui::RawInput {
//!     screen_rect: Some(egui::Rect::from_min_size(egui::Pos2::ZERO, egui::vec2(640.0, 360.0))),
//!     ..Default::default()
//! };
//! let output = gui.run(input, |ctx| {
//!     egui::Window::new("Hello").show(ctx, |ui| ui.label("a panel over the scene"));
//! });
//! renderer.set_ui(&gui, output)?;
//! target.render(&mut renderer, &FrameData::default())?;
//! assert_eq!(ctx.validation_count(), 0);
//! # Ok::<(), anim_render_vk::RenderError>(())
//! ```

use crate::context::Context;
use crate::error::{RenderError, VkCall};
use crate::types::FRAMES_IN_FLIGHT;
use ash::vk;
use egui_ash_renderer::{DynamicRendering, Options, RendererError};
use std::sync::Arc;

pub use egui;

impl From<RendererError> for RenderError {
    fn from(e: RendererError) -> Self {
        match e {
            RendererError::Vulkan(result) => RenderError::from_vk("UI pass (egui-ash-renderer)", result),
            other => RenderError::Ui(other.to_string()),
        }
    }
}

/// What the renderer keeps of the UI: egui's renderer, the tessellated output of the last
/// [`crate::Renderer::set_ui`], and the textures egui asked to free.
pub(crate) struct UiPass {
    painter: egui_ash_renderer::Renderer,
    /// Pool of the one-shot command buffers that upload egui's textures.
    pool: vk::CommandPool,
    pub(crate) primitives: Vec<egui::ClippedPrimitive>,
    pub(crate) pixels_per_point: f32,
    /// Textures egui no longer uses; freed at the next `set_ui`, after the frames that may
    /// still sample them have completed.
    to_free: Vec<egui::TextureId>,
    ctx: Arc<Context>,
}

impl UiPass {
    /// The pass for colour images of `color_format`.
    pub(crate) fn new(ctx: &Arc<Context>, color_format: vk::Format) -> Result<Self, RenderError> {
        let d = ctx.device();
        let pool_info = vk::CommandPoolCreateInfo::default()
            .queue_family_index(ctx.queue_family())
            .flags(vk::CommandPoolCreateFlags::TRANSIENT);
        // SAFETY: a valid device and create info; the pool is destroyed in Drop (or below).
        let pool = unsafe { d.create_command_pool(&pool_info, None) }.vk("vkCreateCommandPool")?;
        let painter = egui_ash_renderer::Renderer::with_default_allocator(
            ctx.instance(),
            ctx.physical_device(),
            d.clone(),
            DynamicRendering { color_attachment_format: color_format, depth_attachment_format: None },
            Options {
                in_flight_frames: FRAMES_IN_FLIGHT,
                enable_depth_test: false,
                enable_depth_write: false,
                // Both target kinds are UNORM (OFFSCREEN_FORMAT, and the swapchain prefers
                // B8G8R8A8_UNORM): egui's colours are written as they are, sRGB-encoded.
                srgb_framebuffer: is_srgb(color_format),
            },
        );
        let painter = match painter {
            Ok(p) => p,
            Err(e) => {
                // SAFETY: the pool was created above and nothing was allocated from it.
                unsafe { d.destroy_command_pool(pool, None) };
                return Err(e.into());
            }
        };
        Ok(Self { painter, pool, primitives: Vec::new(), pixels_per_point: 1.0, to_free: Vec::new(), ctx: ctx.clone() })
    }

    /// Frees the textures of the previous output (the caller waited for the frames in
    /// flight when there were any), uploads the new ones and tessellates `output`.
    pub(crate) fn set(&mut self, gui: &egui::Context, output: egui::FullOutput) -> Result<(), RenderError> {
        if !self.to_free.is_empty() {
            self.painter.free_textures(&self.to_free)?;
            self.to_free.clear();
        }
        let egui::FullOutput { textures_delta, shapes, pixels_per_point, .. } = output;
        if !textures_delta.set.is_empty() {
            let pool = self.pool;
            let painter = &mut self.painter;
            // egui-ash-renderer submits its uploads and waits for the queue to go idle,
            // which also covers the frames in flight that sample a texture it rewrites.
            self.ctx.with_queue(|queue| painter.set_textures(queue, pool, &textures_delta.set))?;
        }
        self.to_free.extend(textures_delta.free);
        self.primitives = gui.tessellate(shapes, pixels_per_point);
        self.pixels_per_point = pixels_per_point;
        Ok(())
    }

    /// Whether freeing textures at the next [`UiPass::set`] needs the frames in flight to
    /// have completed.
    pub(crate) fn frees_pending(&self) -> bool {
        !self.to_free.is_empty()
    }

    /// Records the pass over `view` (in `COLOR_ATTACHMENT_OPTIMAL`, holding the scene).
    /// Returns whether anything was drawn.
    pub(crate) fn record(
        &mut self,
        d: &ash::Device,
        cmd: vk::CommandBuffer,
        view: vk::ImageView,
        extent: vk::Extent2D,
    ) -> Result<bool, RenderError> {
        if self.primitives.is_empty() {
            return Ok(false);
        }
        use vk::AccessFlags2 as A;
        use vk::PipelineStageFlags2 as S;
        // The scene pass's colour writes come before the UI's blending reads and writes.
        let mb = [vk::MemoryBarrier2::default()
            .src_stage_mask(S::COLOR_ATTACHMENT_OUTPUT)
            .src_access_mask(A::COLOR_ATTACHMENT_WRITE)
            .dst_stage_mask(S::COLOR_ATTACHMENT_OUTPUT)
            .dst_access_mask(A::COLOR_ATTACHMENT_READ | A::COLOR_ATTACHMENT_WRITE)];
        let color = [vk::RenderingAttachmentInfo::default()
            .image_view(view)
            .image_layout(vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL)
            .load_op(vk::AttachmentLoadOp::LOAD)
            .store_op(vk::AttachmentStoreOp::STORE)];
        let area = vk::Rect2D { offset: vk::Offset2D { x: 0, y: 0 }, extent };
        let info = vk::RenderingInfo::default().render_area(area).layer_count(1).color_attachments(&color);
        // SAFETY: `cmd` is recording outside any pass; `view` is the frame's colour image,
        // in COLOR_ATTACHMENT_OPTIMAL after the scene pass, of the format the UI pipeline was
        // built for.
        unsafe {
            d.cmd_pipeline_barrier2(cmd, &vk::DependencyInfo::default().memory_barriers(&mb));
            d.cmd_begin_rendering(cmd, &info);
        }
        let drawn = self.painter.cmd_draw(cmd, extent, self.pixels_per_point, &self.primitives);
        // SAFETY: the pass was begun above; it is ended whether or not the draw succeeded.
        unsafe { d.cmd_end_rendering(cmd) };
        drawn?;
        Ok(true)
    }

    /// Triangles of the current output (for tests and statistics).
    pub(crate) fn triangles(&self) -> usize {
        self.primitives
            .iter()
            .map(|p| match &p.primitive {
                egui::epaint::Primitive::Mesh(m) => m.indices.len() / 3,
                egui::epaint::Primitive::Callback(_) => 0,
            })
            .sum()
    }
}

impl Drop for UiPass {
    fn drop(&mut self) {
        // The owning renderer waited for the device before dropping its fields; egui's
        // renderer frees its own resources when it drops, after this.
        // SAFETY: the pool's one-shot command buffers were freed after their uploads.
        unsafe { self.ctx.device().destroy_command_pool(self.pool, None) };
    }
}

/// Whether `format` stores sRGB-encoded colour (the hardware encodes on write).
fn is_srgb(format: vk::Format) -> bool {
    matches!(
        format,
        vk::Format::B8G8R8A8_SRGB
            | vk::Format::R8G8B8A8_SRGB
            | vk::Format::A8B8G8R8_SRGB_PACK32
            | vk::Format::R8G8B8_SRGB
    )
}
