//! The renderer types a program that draws characters touches, in one import:
//! `use anim_render_vk::prelude::*;`.

pub use crate::context::{Context, ContextDesc};
pub use crate::crowd::{CrowdId, CrowdPath};
pub use crate::error::RenderError;
pub use crate::frame::{Camera, FrameData, MeshId, SkinPath};
pub use crate::offscreen::{Offscreen, RgbaImage};
pub use crate::renderer::Renderer;
pub use crate::skinning::GpuSkinner;
