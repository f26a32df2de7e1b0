//! GPU skinning of glTF mesh instances with the semantics of
//! [`anim_gltf::Model::skin_instance`], for `animtool skin --backend gpu`: skinned
//! instances go through the compute shader ([`anim_render_vk::GpuSkinner`], output read
//! back), unskinned ones are placed by their node on the CPU exactly as the CPU backend
//! does.
//!
//! Both methods agree with the CPU backend: LBS with normals by the inverse transpose, DQ
//! with bind-space scale (anim-core's `SkinMethod::Dq`).

use crate::DemoError;
use anim_core::skin::skinning::NormalMode;
use anim_core::skin::{Palette, SkinMethod};
use anim_gltf::{Model, SkinScratch};
use anim_math::{Mat4, Vec3};
use anim_render_vk::{Context, GpuSkinner};
use std::sync::Arc;

/// Skins glTF mesh instances on the GPU (see the module docs).
#[derive(Debug)]
pub struct GpuInstanceSkinner {
    skinner: GpuSkinner,
    scratch: SkinScratch,
    palette: Palette,
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
        Ok(Self { skinner: GpuSkinner::new(ctx)?, scratch: SkinScratch::new(), palette: Palette::default() })
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
        self.skin_instance_weighted(model, instance, world, None, method, positions, normals)
    }

    /// As [`Model::skin_instance_weighted`]: morph targets with `weights` (`None`: the
    /// defaults) applied on the GPU before skinning.
    ///
    /// # Errors
    /// As [`GpuInstanceSkinner::skin_instance`], or more active morph targets than the GPU
    /// pass takes ([`anim_render_vk::MAX_ACTIVE_MORPH_TARGETS`]).
    #[allow(clippy::too_many_arguments)]
    pub fn skin_instance_weighted(
        &mut self,
        model: &Model,
        instance: usize,
        world: &[Mat4],
        weights: Option<&[f32]>,
        method: SkinMethod,
        positions: &mut [Vec3],
        normals: Option<&mut [Vec3]>,
    ) -> Result<(), DemoError> {
        let inst = model.meshes.get(instance).ok_or_else(|| DemoError::Args(format!("no mesh instance {instance}")))?;
        let (Some(s), Some(influences)) = (inst.skin, &inst.data.influences) else {
            // Nothing to skin: the node's placement, computed as the CPU backend does.
            return Ok(model.skin_instance_weighted(
                instance,
                world,
                weights,
                method,
                &mut self.scratch,
                positions,
                normals,
            )?);
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
        self.palette.set_method(method);
        self.palette.update(world, skin)?;
        let morph = inst.morph.as_ref().map(|m| (m, weights.unwrap_or(m.default_weights())));
        self.skinner.skin_morphed(
            &mesh.positions,
            src_normals,
            morph,
            influences,
            &self.palette,
            NormalMode::InverseTranspose,
            positions,
            normals,
        )?;
        Ok(())
    }
}
