//! GPU skinning of glTF mesh instances with the semantics of
//! [`anim_gltf::Model::skin_instance`], for `animtool skin --backend gpu`: skinned
//! instances go through the compute shader ([`anim_render_vk::GpuSkinner`], output read
//! back), unskinned ones are placed by their node on the CPU exactly as the CPU backend
//! does.
//!
//! Differences from the CPU backend, by design: dual-quaternion skinning on the GPU drops
//! any scale in the palette (the CPU path blends bind-space scales first), so DQ results
//! agree only for palettes without scale; LBS agrees everywhere (normals by the inverse
//! transpose, as on the CPU).

use crate::DemoError;
use anim_core::SkinMethod;
use anim_core::palette;
use anim_core::skinning::NormalMode;
use anim_gltf::{Model, SkinScratch};
use anim_math::{DualQuat, Mat4, Vec3};
use anim_render_vk::{Context, GpuPalette, GpuSkinner};
use std::sync::Arc;

/// Skins glTF mesh instances on the GPU (see the module docs).
#[derive(Debug)]
pub struct GpuInstanceSkinner {
    skinner: GpuSkinner,
    scratch: SkinScratch,
    matrices: Vec<Mat4>,
    dual_quats: Vec<DualQuat>,
    dropped_scale: bool,
}

impl GpuInstanceSkinner {
    /// A headless context (validation from `ANIM_VK_VALIDATION`) and the compute pipelines.
    ///
    /// # Errors
    /// No Vulkan device.
    pub fn new() -> Result<Self, DemoError> {
        Self::with_context(&Context::headless()?)
    }

    /// The compute pipelines on an existing context.
    ///
    /// # Errors
    /// Pipeline creation failed.
    pub fn with_context(ctx: &Arc<Context>) -> Result<Self, DemoError> {
        Ok(Self {
            skinner: GpuSkinner::new(ctx)?,
            scratch: SkinScratch::new(),
            matrices: Vec::new(),
            dual_quats: Vec::new(),
            dropped_scale: false,
        })
    }

    /// True once a DQ skin had scale in its palette, which GPU dual-quaternion skinning
    /// drops (the CPU backend, [`Model::skin_instance`], keeps it): the two backends then
    /// disagree for that model.
    pub fn dropped_scale(&self) -> bool {
        self.dropped_scale
    }

    /// The Vulkan context (for its validation count).
    pub fn context(&self) -> &Arc<Context> {
        self.skinner.context()
    }

    /// As [`Model::skin_instance`]: one position (and normal, when the primitive has normals
    /// and `normals` is given) per vertex, in glTF scene space.
    ///
    /// # Errors
    /// Unknown instance, buffers of the wrong length, or a Vulkan failure.
    pub fn skin_instance(
        &mut self,
        model: &Model,
        instance: usize,
        world: &[Mat4],
        method: SkinMethod,
        positions: &mut [Vec3],
        normals: Option<&mut [Vec3]>,
    ) -> Result<(), DemoError> {
        let inst = model.meshes.get(instance).ok_or_else(|| DemoError::Args(format!("no mesh instance {instance}")))?;
        let (Some(s), Some(influences)) = (inst.skin, &inst.data.influences) else {
            // Nothing to skin: the node's placement, computed as the CPU backend does.
            return Ok(model.skin_instance(instance, world, method, &mut self.scratch, positions, normals)?);
        };
        let mesh = &inst.data;
        let n = mesh.vertex_count();
        if world.len() != model.skeleton.len() {
            return Err(DemoError::Args(format!(
                "world has {} matrices, the model has {} nodes",
                world.len(),
                model.skeleton.len()
            )));
        }
        if positions.len() != n || normals.as_ref().is_some_and(|s| s.len() != n) {
            return Err(DemoError::Args(format!("output buffers must hold {n} vertices")));
        }
        let normals = if mesh.normals.is_empty() { None } else { normals };
        let src_normals = normals.as_ref().map(|_| mesh.normals.as_slice());
        let skin = &model.skins[s].skin;
        let gpu_palette = match method {
            SkinMethod::Lbs => {
                self.matrices.resize(skin.len(), Mat4::identity());
                palette::skinning_matrices(world, skin, &mut self.matrices)?;
                GpuPalette::Lbs(&self.matrices)
            }
            SkinMethod::Dq => {
                self.matrices.resize(skin.len(), Mat4::identity());
                palette::skinning_matrices(world, skin, &mut self.matrices)?;
                let scaled = self
                    .matrices
                    .iter()
                    .any(|m| (0..3).any(|c| (m.fixed_view::<3, 1>(0, c).norm() - 1.0).abs() > 1e-4));
                self.dropped_scale |= scaled;
                self.dual_quats.resize(skin.len(), DualQuat::identity());
                palette::skinning_dual_quats(world, skin, &mut self.dual_quats)?;
                GpuPalette::Dq(&self.dual_quats)
            }
        };
        self.skinner.skin(
            &mesh.positions,
            src_normals,
            influences,
            gpu_palette,
            NormalMode::InverseTranspose,
            positions,
            normals,
        )?;
        Ok(())
    }
}
