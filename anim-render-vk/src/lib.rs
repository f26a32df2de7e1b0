//! Vulkan renderer for the anim runtime: headless (offscreen images read back to RGBA8 and
//! PNG) and windowed (winit surface and a swapchain that survives resize, minimize and
//! out-of-date), with GPU skinning in vertex and compute shaders (linear blend and dual
//! quaternion), debug lines and a one-shot compute skinner with readback.
//!
//! Modules, one concern each: [`context`] (instance, validation, device, queue, allocator),
//! [`resources`] (buffers and images owning their memory, staged uploads), [`shaders`]
//! (embedded SPIR-V compiled by `build.rs`), [`pipelines`], [`mesh`] (meshes on the GPU and
//! debug colourings), [`frame`] (what a frame draws), [`renderer`] (recording a frame),
//! [`skinning`] (compute skinning and [`GpuSkinner`]), [`lines`], [`offscreen`] and
//! [`swapchain`].
//!
//! ```no_run
//! use anim_render_vk::{Context, ContextDesc, Renderer, Offscreen, FrameData, OFFSCREEN_FORMAT};
//! let ctx = Context::new(&ContextDesc { validation: true, window: None })?;
//! let mut renderer = Renderer::new(&ctx, OFFSCREEN_FORMAT)?;
//! let mut target = Offscreen::new(&ctx, 640, 360)?;
//! let mut frame = FrameData::default();
//! anim_render_vk::lines::grid(&mut frame, 5, 1.0, 0.0);
//! target.render(&mut renderer, &frame)?;
//! target.image()?.save_png(std::path::Path::new("grid.png"))?;
//! assert_eq!(ctx.validation_count(), 0);
//! # Ok::<(), anim_render_vk::RenderError>(())
//! ```

#![warn(missing_docs)]

pub mod context;
mod error;
pub mod frame;
pub mod lines;
pub mod mesh;
pub mod offscreen;
pub mod pipelines;
pub mod renderer;
pub mod resources;
pub mod shaders;
pub mod skinning;
pub mod swapchain;

pub use ash;
pub use context::{Context, ContextDesc, VALIDATION_ENV, ValidationLog, WindowHandles, validation_from_env};
pub use error::RenderError;
pub use frame::{Camera, Deform, FrameData, Instance, LineVertex, MeshId, SkinMethod, SkinPath, dq_words};
pub use mesh::{Coloring, GpuMesh, GpuVertex};
pub use offscreen::{OFFSCREEN_FORMAT, Offscreen, RgbaImage};
pub use renderer::Renderer;
pub use skinning::{GpuPalette, GpuSkinner};
pub use swapchain::Swapchain;
