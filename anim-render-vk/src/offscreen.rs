//! Headless rendering: colour (RGBA8) and depth images, the frame drawn into them, the
//! colour copied into a host-readable buffer, and PNG output.

use crate::context::Context;
use crate::error::RenderError;
use crate::frame::FrameData;
use crate::pipelines::DEPTH_FORMAT;
use crate::renderer::{Renderer, Target};
use crate::resources::{Buffer, Image, buffer_barrier, image_barrier};
use ash::vk;
use gpu_allocator::MemoryLocation;
use std::path::Path;
use std::sync::Arc;

/// Colour format of headless targets (bytes come back as RGBA, linear).
pub const OFFSCREEN_FORMAT: vk::Format = vk::Format::R8G8B8A8_UNORM;

/// An RGBA8 image read back from the GPU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RgbaImage {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Rows top to bottom, 4 bytes a pixel.
    pub pixels: Vec<u8>,
}

impl RgbaImage {
    /// The pixel at (x, y).
    #[inline]
    pub fn pixel(&self, x: u32, y: u32) -> [u8; 4] {
        let i = ((y * self.width + x) * 4) as usize;
        [self.pixels[i], self.pixels[i + 1], self.pixels[i + 2], self.pixels[i + 3]]
    }

    /// Writes the image as an 8-bit RGBA PNG.
    ///
    /// # Errors
    /// The file cannot be created or encoded.
    pub fn save_png(&self, path: &Path) -> Result<(), RenderError> {
        let err = |message: String| RenderError::Image { path: path.display().to_string(), message };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| err(e.to_string()))?;
        }
        let file = std::fs::File::create(path).map_err(|e| err(e.to_string()))?;
        let mut enc = png::Encoder::new(std::io::BufWriter::new(file), self.width, self.height);
        enc.set_color(png::ColorType::Rgba);
        enc.set_depth(png::BitDepth::Eight);
        let mut w = enc.write_header().map_err(|e| err(e.to_string()))?;
        w.write_image_data(&self.pixels).map_err(|e| err(e.to_string()))?;
        w.finish().map_err(|e| err(e.to_string()))
    }
}

/// A headless render target.
pub struct Offscreen {
    ctx: Arc<Context>,
    readback: Buffer,
    depth: Image,
    color: Image,
    extent: vk::Extent2D,
}

impl std::fmt::Debug for Offscreen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Offscreen").field("extent", &self.extent).finish()
    }
}

impl Offscreen {
    /// Creates `width × height` colour and depth images and the readback buffer.
    ///
    /// # Errors
    /// [`RenderError::Input`] for a zero size, [`RenderError::DeviceLimit`] for a side above
    /// `maxImageDimension2D`, [`RenderError::OutOfDeviceMemory`] when the images or the
    /// readback buffer do not fit, or a failing call.
    pub fn new(ctx: &Arc<Context>, width: u32, height: u32) -> Result<Self, RenderError> {
        if width == 0 || height == 0 {
            return Err(RenderError::Input(format!("offscreen target of {width}x{height} pixels")));
        }
        let extent = vk::Extent2D { width, height };
        let color = Image::new(
            ctx,
            extent,
            OFFSCREEN_FORMAT,
            vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_SRC,
            vk::ImageAspectFlags::COLOR,
            "offscreen colour",
        )?;
        let depth = Image::new(
            ctx,
            extent,
            DEPTH_FORMAT,
            vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT,
            vk::ImageAspectFlags::DEPTH,
            "offscreen depth",
        )?;
        let readback = Buffer::new(
            ctx,
            u64::from(width) * u64::from(height) * 4,
            vk::BufferUsageFlags::TRANSFER_DST,
            MemoryLocation::GpuToCpu,
            "offscreen readback",
        )?;
        Ok(Self { ctx: ctx.clone(), readback, depth, color, extent })
    }

    /// Width and height.
    #[inline]
    pub fn size(&self) -> (u32, u32) {
        (self.extent.width, self.extent.height)
    }

    /// Draws `frame` and copies the colour image into the readback buffer; waits for the GPU.
    ///
    /// # Errors
    /// Invalid frame data or a failing Vulkan call.
    pub fn render(&mut self, renderer: &mut Renderer, frame: &FrameData) -> Result<(), RenderError> {
        if !Arc::ptr_eq(renderer.context(), &self.ctx) {
            return Err(RenderError::Input("renderer and offscreen target belong to different contexts".into()));
        }
        if renderer.color_format() != OFFSCREEN_FORMAT {
            return Err(RenderError::Input(format!(
                "renderer built for {:?}, offscreen targets are {OFFSCREEN_FORMAT:?}",
                renderer.color_format()
            )));
        }
        let target = Target {
            color: self.color.raw(),
            color_view: self.color.view(),
            depth: self.depth.raw(),
            depth_view: self.depth.view(),
            extent: self.extent,
        };
        let (w, h) = self.size();
        renderer.prepare(frame, vk::Extent2D { width: w, height: h })?;
        let cmd = renderer.record(&target)?;
        let d = renderer.context().device();
        use vk::AccessFlags2 as A;
        use vk::PipelineStageFlags2 as S;
        image_barrier(
            d,
            cmd,
            self.color.raw(),
            vk::ImageAspectFlags::COLOR,
            (vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL, vk::ImageLayout::TRANSFER_SRC_OPTIMAL),
            (S::COLOR_ATTACHMENT_OUTPUT, A::COLOR_ATTACHMENT_WRITE),
            (S::COPY, A::TRANSFER_READ),
        );
        let region = [vk::BufferImageCopy::default()
            .buffer_offset(0)
            .image_subresource(vk::ImageSubresourceLayers {
                aspect_mask: vk::ImageAspectFlags::COLOR,
                mip_level: 0,
                base_array_layer: 0,
                layer_count: 1,
            })
            .image_extent(vk::Extent3D { width: self.extent.width, height: self.extent.height, depth: 1 })];
        // SAFETY: `cmd` is recording (returned by `record`, not yet submitted) outside the
        // pass; the barrier above moved the image to TRANSFER_SRC_OPTIMAL, and the readback
        // buffer holds width × height × 4 bytes, the whole RGBA8 image.
        unsafe {
            d.cmd_copy_image_to_buffer(
                cmd,
                self.color.raw(),
                vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
                self.readback.raw(),
                &region,
            )
        };
        buffer_barrier(d, cmd, self.readback.raw(), (S::COPY, A::TRANSFER_WRITE), (S::HOST, A::HOST_READ));
        renderer.submit(cmd, None, None)?;
        // The readback is read on the host next, and the images are reused by the next frame.
        renderer.wait_idle()?;
        // The frame has completed: its timings and counts are the renderer's frame stats.
        let slot = renderer.last_submitted.expect("submitted above");
        renderer.collect_stats(slot)
    }

    /// The colour image of the last [`Offscreen::render`].
    ///
    /// # Errors
    /// The readback buffer is not mapped (cannot happen with gpu-allocator's GpuToCpu).
    pub fn image(&self) -> Result<RgbaImage, RenderError> {
        // At most maxImageDimension2D² × 4 bytes (checked at creation): no overflow in u64.
        let n = (u64::from(self.extent.width) * u64::from(self.extent.height) * 4) as usize;
        Ok(RgbaImage {
            width: self.extent.width,
            height: self.extent.height,
            pixels: self.readback.mapped()?[..n].to_vec(),
        })
    }
}
