//! Presenting to a window: a swapchain that is recreated on resize and when the surface
//! reports out-of-date or suboptimal, and that skips frames while the window is minimized
//! (zero extent). FIFO present mode (always available).
//!
//! Two frames are in flight (see [`crate::renderer::FRAMES_IN_FLIGHT`]): each renderer frame
//! slot has its own acquire semaphore, each swapchain image its own "rendered" semaphore;
//! the depth image is shared, its reuse ordered by the pass's layout barrier.

use crate::context::Context;
use crate::error::{RenderError, VkCall};
use crate::frame::FrameData;
use crate::pipelines::DEPTH_FORMAT;
use crate::renderer::{FRAMES_IN_FLIGHT, Renderer, Target};
use crate::resources::{Image, image_barrier};
use ash::vk;
use std::sync::Arc;

/// Picks the colour format for a window: B8G8R8A8 or R8G8B8A8 UNORM (so window and headless
/// images show the same bytes), otherwise the first one offered.
///
/// # Errors
/// The surface reports no formats (e.g. an X server at 16-bit depth).
pub fn surface_format(ctx: &Context) -> Result<vk::SurfaceFormatKHR, RenderError> {
    let sf = ctx.surface_fn.as_ref().ok_or_else(|| RenderError::Surface("headless context".into()))?;
    // SAFETY: the surface was created from this context's instance and the physical device
    // enumerated from it; the query has no other preconditions.
    let formats = unsafe { sf.get_physical_device_surface_formats(ctx.physical_device(), ctx.surface) }
        .vk("vkGetPhysicalDeviceSurfaceFormatsKHR")?;
    let preferred = [vk::Format::B8G8R8A8_UNORM, vk::Format::R8G8B8A8_UNORM];
    preferred
        .iter()
        .find_map(|p| formats.iter().find(|f| f.format == *p))
        .or(formats.first())
        .copied()
        .ok_or_else(|| RenderError::Surface("the surface offers no formats (is the X screen 24-bit?)".into()))
}

/// The swapchain, its views, a depth image, and the semaphores of presentation.
pub struct Swapchain {
    ctx: Arc<Context>,
    raw: vk::SwapchainKHR,
    images: Vec<vk::Image>,
    views: Vec<vk::ImageView>,
    depth: Option<Image>,
    acquired: [vk::Semaphore; FRAMES_IN_FLIGHT],
    rendered: Vec<vk::Semaphore>,
    format: vk::SurfaceFormatKHR,
    extent: vk::Extent2D,
    dirty: bool,
    created: u32,
}

impl std::fmt::Debug for Swapchain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Swapchain").field("extent", &self.extent).field("images", &self.images.len()).finish()
    }
}

impl Swapchain {
    /// Creates a swapchain for the context's surface at `width × height` (the surface's
    /// current extent wins when it reports one).
    ///
    /// # Errors
    /// Headless context, a context that already has a swapchain, no surface format, or a
    /// failing call.
    pub fn new(ctx: &Arc<Context>, width: u32, height: u32) -> Result<Self, RenderError> {
        let format = surface_format(ctx)?;
        if ctx.swapchain_taken.swap(true, std::sync::atomic::Ordering::SeqCst) {
            return Err(RenderError::Surface("the context's surface already has a swapchain".into()));
        }
        // From here on `Drop` releases what exists (null handles are skipped).
        let mut s = Self {
            ctx: ctx.clone(),
            raw: vk::SwapchainKHR::null(),
            images: Vec::new(),
            views: Vec::new(),
            depth: None,
            acquired: [vk::Semaphore::null(); FRAMES_IN_FLIGHT],
            rendered: Vec::new(),
            format,
            extent: vk::Extent2D { width, height },
            dirty: true,
            created: 0,
        };
        for a in &mut s.acquired {
            // SAFETY: a valid device; the semaphore is destroyed in Drop.
            *a = unsafe { ctx.device().create_semaphore(&vk::SemaphoreCreateInfo::default(), None) }
                .vk("vkCreateSemaphore")?;
        }
        s.recreate(width, height)?;
        Ok(s)
    }

    /// The colour format.
    #[inline]
    pub fn format(&self) -> vk::Format {
        self.format.format
    }

    /// The current extent (zero while minimized).
    #[inline]
    pub fn extent(&self) -> vk::Extent2D {
        self.extent
    }

    /// Asks for recreation at the next frame (call on window resize).
    pub fn resized(&mut self, width: u32, height: u32) {
        self.extent = vk::Extent2D { width, height };
        self.dirty = true;
    }

    fn destroy_views(&mut self) {
        let d = self.ctx.device();
        // SAFETY: callers waited for the device to be idle, so no submission or presentation
        // uses the views or semaphores.
        unsafe {
            for v in self.views.drain(..) {
                d.destroy_image_view(v, None);
            }
            for s in self.rendered.drain(..) {
                d.destroy_semaphore(s, None);
            }
        }
        self.depth = None;
    }

    /// Recreates the swapchain for `width × height`; a zero extent (minimized) leaves it
    /// marked dirty and draws nothing until a real size comes.
    ///
    /// # Errors
    /// A failing call.
    pub fn recreate(&mut self, width: u32, height: u32) -> Result<(), RenderError> {
        let ctx = self.ctx.clone();
        let d = ctx.device();
        let sf = ctx.surface_fn.as_ref().ok_or_else(|| RenderError::Surface("headless context".into()))?;
        let swf = ctx.swapchain_fn.as_ref().ok_or_else(|| RenderError::Surface("headless context".into()))?;
        // SAFETY: the surface and physical device belong to this context's instance.
        let caps = unsafe { sf.get_physical_device_surface_capabilities(ctx.physical_device(), ctx.surface) }
            .vk("vkGetPhysicalDeviceSurfaceCapabilitiesKHR")?;
        let extent = if caps.current_extent.width != u32::MAX {
            caps.current_extent
        } else {
            vk::Extent2D {
                width: width.clamp(caps.min_image_extent.width, caps.max_image_extent.width),
                height: height.clamp(caps.min_image_extent.height, caps.max_image_extent.height),
            }
        };
        self.extent = extent;
        if extent.width == 0 || extent.height == 0 {
            self.dirty = true;
            return Ok(());
        }
        // SAFETY: a valid device; afterwards nothing uses the old swapchain's images.
        unsafe { d.device_wait_idle() }.vk("vkDeviceWaitIdle")?;
        self.destroy_views();
        let mut count = caps.min_image_count + 1;
        if caps.max_image_count > 0 {
            count = count.min(caps.max_image_count);
        }
        let old = self.raw;
        let info = vk::SwapchainCreateInfoKHR::default()
            .surface(ctx.surface)
            .min_image_count(count)
            .image_format(self.format.format)
            .image_color_space(self.format.color_space)
            .image_extent(extent)
            .image_array_layers(1)
            .image_usage(vk::ImageUsageFlags::COLOR_ATTACHMENT)
            .image_sharing_mode(vk::SharingMode::EXCLUSIVE)
            .pre_transform(caps.current_transform)
            .composite_alpha(vk::CompositeAlphaFlagsKHR::OPAQUE)
            .present_mode(vk::PresentModeKHR::FIFO)
            .clipped(true)
            .old_swapchain(old);
        // SAFETY: the surface belongs to this context and is used by no other swapchain
        // (`swapchain_taken`); `old` is this swapchain's previous one (retired below).
        let raw = unsafe { swf.create_swapchain(&info, None) }.vk("vkCreateSwapchainKHR")?;
        if old != vk::SwapchainKHR::null() {
            // SAFETY: device idle; the old swapchain is no longer used.
            unsafe { swf.destroy_swapchain(old, None) };
        }
        self.raw = raw;
        // SAFETY: `raw` was just created from `swf`.
        self.images = unsafe { swf.get_swapchain_images(raw) }.vk("vkGetSwapchainImagesKHR")?;
        for &image in &self.images {
            let vi = vk::ImageViewCreateInfo::default()
                .image(image)
                .view_type(vk::ImageViewType::TYPE_2D)
                .format(self.format.format)
                .subresource_range(vk::ImageSubresourceRange {
                    aspect_mask: vk::ImageAspectFlags::COLOR,
                    base_mip_level: 0,
                    level_count: 1,
                    base_array_layer: 0,
                    layer_count: 1,
                });
            // SAFETY: `image` belongs to the new swapchain and the view matches its format.
            self.views.push(unsafe { d.create_image_view(&vi, None) }.vk("vkCreateImageView")?);
            // SAFETY: a valid device; destroyed in `destroy_views`.
            self.rendered.push(
                unsafe { d.create_semaphore(&vk::SemaphoreCreateInfo::default(), None) }.vk("vkCreateSemaphore")?,
            );
        }
        self.depth = Some(Image::new(
            &ctx,
            extent,
            DEPTH_FORMAT,
            vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT,
            vk::ImageAspectFlags::DEPTH,
            "swapchain depth",
        )?);
        self.dirty = false;
        self.created += 1;
        Ok(())
    }

    /// How many times a swapchain was created (1 + recreations after resize/out-of-date).
    #[inline]
    pub fn creations(&self) -> u32 {
        self.created
    }

    /// Draws `frame` into the next swapchain image and presents it. Returns `false` when the
    /// frame was skipped (minimized, or the swapchain had to be recreated first).
    ///
    /// # Errors
    /// Invalid frame data or a failing call (other than out-of-date and suboptimal, which
    /// recreate the swapchain). A lost surface is [`RenderError::SurfaceLost`]: the surface
    /// belongs to the context, so drop the swapchain, renderer and context and create a new
    /// context for the window; a lost device is [`RenderError::DeviceLost`], likewise.
    ///
    /// The renderer must come from this swapchain's context and be built for its
    /// [`Swapchain::format`]; otherwise this is an error.
    pub fn draw(&mut self, renderer: &mut Renderer, frame: &FrameData) -> Result<bool, RenderError> {
        if !Arc::ptr_eq(renderer.context(), &self.ctx) {
            return Err(RenderError::Input("renderer and swapchain belong to different contexts".into()));
        }
        if renderer.color_format() != self.format.format {
            return Err(RenderError::Input(format!(
                "renderer built for {:?}, the swapchain is {:?}",
                renderer.color_format(),
                self.format.format
            )));
        }
        if self.dirty {
            let e = self.extent;
            self.recreate(e.width, e.height)?;
            if self.dirty {
                return Ok(false);
            }
        }
        // Plan, check and stage before acquiring (an acquired image must be submitted, or
        // its semaphore would stay signalled); this waits for the frame that last used the
        // renderer's current slot, and with it for the last wait on that slot's semaphore.
        renderer.prepare(frame, self.extent)?;
        let acquire = self.acquired[renderer.slot() % FRAMES_IN_FLIGHT];
        let ctx = self.ctx.clone();
        let swf = ctx.swapchain_fn.as_ref().ok_or_else(|| RenderError::Surface("headless context".into()))?;
        // SAFETY: a live swapchain; `acquire` is unsignalled: the submission that last waited
        // on it used the same renderer slot, whose fence `prepare` waited for.
        let acquired = unsafe { swf.acquire_next_image(self.raw, u64::MAX, acquire, vk::Fence::null()) };
        let index = match acquired {
            Ok((i, suboptimal)) => {
                if suboptimal {
                    self.dirty = true;
                }
                i as usize
            }
            Err(vk::Result::ERROR_OUT_OF_DATE_KHR) => {
                self.dirty = true;
                return Ok(false);
            }
            Err(result) => return Err(RenderError::from_vk("vkAcquireNextImageKHR", result)),
        };
        let depth = self.depth.as_ref().expect("created with the swapchain");
        let target = Target {
            color: self.images[index],
            color_view: self.views[index],
            depth: depth.raw(),
            depth_view: depth.view(),
            extent: self.extent,
        };
        let cmd = match renderer.record(&target) {
            Ok(cmd) => cmd,
            Err(e) => {
                self.abandon_acquired(acquire);
                return Err(e);
            }
        };
        image_barrier(
            ctx.device(),
            cmd,
            self.images[index],
            vk::ImageAspectFlags::COLOR,
            (vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL, vk::ImageLayout::PRESENT_SRC_KHR),
            (vk::PipelineStageFlags2::COLOR_ATTACHMENT_OUTPUT, vk::AccessFlags2::COLOR_ATTACHMENT_WRITE),
            (vk::PipelineStageFlags2::NONE, vk::AccessFlags2::NONE),
        );
        if let Err(e) = renderer.submit(cmd, Some(acquire), Some(self.rendered[index])) {
            self.abandon_acquired(acquire);
            return Err(e);
        }
        let swapchains = [self.raw];
        let indices = [index as u32];
        let waits = [self.rendered[index]];
        let info =
            vk::PresentInfoKHR::default().wait_semaphores(&waits).swapchains(&swapchains).image_indices(&indices);
        match ctx.present(&info) {
            Ok(false) => {}
            Ok(true) | Err(vk::Result::ERROR_OUT_OF_DATE_KHR) => self.dirty = true,
            Err(result) => {
                // The image may not have been presented nor its semaphore waited on:
                // recreating (after the device is idle) replaces both.
                self.dirty = true;
                return Err(RenderError::from_vk("vkQueuePresentKHR", result));
            }
        }
        Ok(true)
    }
}

impl Swapchain {
    /// After a failure between acquire and submit: an empty submission waits on the acquire
    /// semaphore (so that the slot's next acquire finds it unsignalled), and the swapchain
    /// is recreated before the next frame (its acquired image is never presented). Errors
    /// here are dropped: the caller already returns the first one, and on a lost device
    /// nothing is pending anyway.
    fn abandon_acquired(&mut self, acquire: vk::Semaphore) {
        let waits =
            [vk::SemaphoreSubmitInfo::default().semaphore(acquire).stage_mask(vk::PipelineStageFlags2::ALL_COMMANDS)];
        let _ = self.ctx.submit(&[vk::SubmitInfo2::default().wait_semaphore_infos(&waits)], vk::Fence::null());
        self.dirty = true;
    }
}

impl Drop for Swapchain {
    fn drop(&mut self) {
        // SAFETY: a valid device; after the wait nothing uses the swapchain's objects.
        unsafe {
            let _ = self.ctx.device().device_wait_idle();
        }
        self.destroy_views();
        // SAFETY: the device is idle (above); semaphores, then the swapchain, all created
        // here from this device (null handles are skipped).
        unsafe {
            for a in self.acquired {
                if a != vk::Semaphore::null() {
                    self.ctx.device().destroy_semaphore(a, None);
                }
            }
            if let Some(swf) = &self.ctx.swapchain_fn
                && self.raw != vk::SwapchainKHR::null()
            {
                swf.destroy_swapchain(self.raw, None);
            }
        }
        self.ctx.swapchain_taken.store(false, std::sync::atomic::Ordering::SeqCst);
    }
}

#[cfg(all(test, target_os = "linux"))] // the test drives an X11 window
mod tests {
    use super::*;
    use crate::context::{ContextDesc, FAIL_NEXT_PRESENT, FAIL_NEXT_SUBMIT};
    use winit::platform::pump_events::EventLoopExtPumpEvents;
    use winit::platform::x11::EventLoopBuilderExtX11;

    const NAME: &str = "swapchain::tests::lost_device_and_surface_are_typed_and_the_swapchain_recovers";
    const UNDER_XVFB: &str = "ANIM_VK_SWAPCHAIN_TEST_UNDER_XVFB";

    /// Creates the window once the event loop resumes.
    #[derive(Default)]
    struct App(Option<Arc<winit::window::Window>>);

    impl winit::application::ApplicationHandler for App {
        fn resumed(&mut self, el: &winit::event_loop::ActiveEventLoop) {
            if self.0.is_none() {
                let size = winit::dpi::PhysicalSize::new(96u32, 64u32);
                let attrs = winit::window::Window::default_attributes().with_inner_size(size);
                self.0 = Some(Arc::new(el.create_window(attrs).expect("an X11 window")));
            }
        }

        fn window_event(
            &mut self,
            _: &winit::event_loop::ActiveEventLoop,
            _: winit::window::WindowId,
            _: winit::event::WindowEvent,
        ) {
        }
    }

    /// A submission failing with `VK_ERROR_DEVICE_LOST` and a present failing with
    /// `VK_ERROR_SURFACE_LOST_KHR` (both injected: neither can be provoked on lavapipe) come
    /// out of `Swapchain::draw` typed; the acquire semaphore is consumed and the swapchain
    /// recreated, so the frames after them present again, and everything drops with zero
    /// validation messages, teardown included. Re-runs itself under `xvfb-run -a` without
    /// `DISPLAY`; skipped (saying so) only when `xvfb-run` is missing.
    #[test]
    fn lost_device_and_surface_are_typed_and_the_swapchain_recovers() {
        if std::env::var_os("DISPLAY").is_none_or(|d| d.is_empty()) {
            assert!(std::env::var_os(UNDER_XVFB).is_none(), "xvfb-run started the test without a DISPLAY");
            let path = std::env::var_os("PATH").unwrap_or_default();
            let Some(xvfb) = std::env::split_paths(&path).map(|d| d.join("xvfb-run")).find(|p| p.is_file()) else {
                eprintln!("{NAME}: skipped: DISPLAY is unset and xvfb-run is not installed");
                return;
            };
            let out = std::process::Command::new(xvfb)
                .args(["-a", "-s", "-screen 0 640x480x24"])
                .arg(std::env::current_exe().expect("the test binary"))
                .args(["--exact", NAME, "--test-threads=1"])
                .env(UNDER_XVFB, "1")
                .output()
                .expect("xvfb-run starts");
            let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
            assert!(out.status.success() && text.contains("1 passed"), "under xvfb-run:\n{text}");
            return;
        }
        let mut el = winit::event_loop::EventLoop::builder().with_x11().with_any_thread(true).build().unwrap();
        let mut app = App::default();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while app.0.is_none() && std::time::Instant::now() < deadline {
            let _ = el.pump_app_events(Some(std::time::Duration::from_millis(5)), &mut app);
        }
        let window = app.0.clone().expect("the window");
        let ctx = Context::new(&ContextDesc { validation: true, window: Some(window.clone()) }).unwrap();
        let log = ctx.validation_log();
        let mut sc = Swapchain::new(&ctx, 96, 64).unwrap();
        let mut r = Renderer::new(&ctx, sc.format()).unwrap();
        let mut frame = FrameData::default();
        crate::lines::grid(&mut frame, 2, 1.0, 0.0);
        let draw = |sc: &mut Swapchain, r: &mut Renderer| (0..3).any(|_| sc.draw(r, &frame).unwrap());
        assert!(draw(&mut sc, &mut r));
        let created = sc.creations();

        FAIL_NEXT_SUBMIT.with(|f| f.set(Some(vk::Result::ERROR_DEVICE_LOST)));
        let e = sc.draw(&mut r, &frame).unwrap_err();
        assert!(matches!(e, RenderError::DeviceLost { call: "vkQueueSubmit2" }), "{e:?}");
        for _ in 0..4 {
            assert!(draw(&mut sc, &mut r), "a frame after the failed submission");
        }
        assert!(sc.creations() > created, "the swapchain was recreated");
        assert_eq!(ctx.validation_count(), 0, "{}", ctx.validation_messages().join("\n"));

        let created = sc.creations();
        FAIL_NEXT_PRESENT.with(|f| f.set(Some(vk::Result::ERROR_SURFACE_LOST_KHR)));
        let e = sc.draw(&mut r, &frame).unwrap_err();
        assert!(matches!(e, RenderError::SurfaceLost { call: "vkQueuePresentKHR" }), "{e:?}");
        for _ in 0..4 {
            assert!(draw(&mut sc, &mut r), "a frame after the failed present");
        }
        assert!(sc.creations() > created, "the swapchain was recreated");
        r.wait_idle().unwrap();
        drop(r);
        drop(sc);
        drop(ctx);
        drop(window);
        assert_eq!(log.count(), 0, "{}", log.messages().join("\n"));
    }
}
