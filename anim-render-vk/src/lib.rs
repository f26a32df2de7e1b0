//! Vulkan renderer for the anim runtime: headless (offscreen images read back to RGBA8 and
//! PNG) and windowed (a window surface and a swapchain that survives resize, minimize and
//! out-of-date; cargo feature `window`, on by default), with GPU skinning in vertex and
//! compute shaders (linear blend and dual quaternion) of morphed vertices (morph targets
//! applied before skinning: [`Renderer::add_morph_targets`],
//! [`FrameData::add_skinned_morphed`]), instanced crowds animated from an
//! animation atlas (chapter 15), per-pass GPU timings, debug lines and a one-shot compute
//! skinner with readback.
//!
//! Public modules, one concern each: [`context`] (instance, validation, device, queue,
//! allocator), [`mesh`] (meshes on the GPU and debug colourings), [`material`] (textures
//! and metallic-roughness materials), [`frame`] (what a frame
//! draws), [`renderer`] (planning and recording a frame), [`crowd`] (instanced crowds),
//! [`timing`] ([`FrameStats`], copy bandwidth), [`skinning`] ([`GpuSkinner`]), [`lines`],
//! [`offscreen`], `swapchain` (with `window`) and `ui` (with `ui`: an egui pass over the
//! frame).
//!
//! Everything public is safe to call in any order: raw Vulkan objects, pipelines, shaders,
//! command recording and submission stay inside the crate (modules `resources`,
//! `pipelines`, `shaders`, `plan`), so safe code cannot record invalid Vulkan work. A
//! renderer, target or swapchain from another context is rejected with an error.
//!
//! ```no_run
//! use anim_render_vk::{Context, ContextDesc, Renderer, Offscreen, FrameData, OFFSCREEN_FORMAT};
//! let ctx = Context::new(&ContextDesc::headless(true))?;
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
pub mod crowd;
mod error;
pub mod frame;
pub mod lines;
pub mod material;
pub mod mesh;
pub mod offscreen;
mod pipelines;
mod plan;
pub mod prelude;
pub mod renderer;
mod resources;
mod shaders;
pub mod skinning;
#[cfg(feature = "window")]
pub mod swapchain;
mod texture;
pub mod timing;
mod types;
#[cfg(feature = "ui")]
pub mod ui;

pub use ash;
#[cfg(feature = "window")]
pub use context::WindowTarget;
pub use context::{Context, ContextDesc, VALIDATION_ENV, ValidationLog, validation_from_env};
pub use crowd::{CrowdDraw, CrowdError, CrowdId, CrowdPath, CrowdType, MixedCrowdId, UnknownCrowdPath};
pub use error::RenderError;
pub use frame::{Camera, Deform, FrameData, Instance, LineVertex, MeshId, SkinPath, dq_words, scale_words};
pub use material::{
    AlphaMode, Filter, MaterialDesc, MaterialId, SamplerDesc, Surface, TextureDesc, TextureId, TextureSlot, Wrap,
};
pub use mesh::{Coloring, GpuMesh, GpuVertex};
pub use offscreen::{OFFSCREEN_FORMAT, Offscreen, RgbaImage};
pub use renderer::Renderer;
pub use skinning::{GpuSkinner, MAX_ACTIVE_MORPH_TARGETS};
#[cfg(feature = "window")]
pub use swapchain::Swapchain;
pub use timing::{FrameStats, PassTime, measure_compute_copy_bandwidth, measure_copy_bandwidth};

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
