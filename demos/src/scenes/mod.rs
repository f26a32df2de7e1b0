//! The scenes of the demo binaries (one module each, run by `src/bin/<name>.rs`).

pub mod ch10_cpu_gpu;
pub mod ch10_poses;
pub mod ch12_additive;
pub mod ch12_blend;
pub mod ch12_crossfade;
pub mod ch13_ccd;
pub mod ch13_fabrik;
pub mod ch13_foot_ik;
pub mod ch14_dq_vs_lbs;
pub mod seed_bone_texture;
pub mod seed_rigid_box;
pub mod viewer;

use crate::DemoError;
use crate::character::{Character, Posed};
use anim_core::SkinMethod;
use anim_math::Vec3;
use anim_render_vk::{FrameData, lines};

/// Centre and radius of a posed character's CPU-skinned bounds.
pub(crate) fn framing(ch: &Character, posed: &mut Posed) -> Result<(Vec3, Vec3, f32), DemoError> {
    posed.skin_cpu(ch, SkinMethod::Lbs)?;
    let (lo, hi) = posed.bounds().unwrap_or((Vec3::zeros(), Vec3::new(1.0, 1.0, 1.0)));
    Ok(((lo + hi) * 0.5, lo, ((hi - lo).norm() * 0.5).max(1e-3)))
}

/// A ground grid sized for something of `radius` standing on `floor`.
pub(crate) fn ground(frame: &mut FrameData, radius: f32, floor: f32) {
    let cell = 10f32.powf((radius * 0.25).log10().round());
    lines::grid(frame, (radius * 2.0 / cell).ceil() as i32, cell, floor);
}
