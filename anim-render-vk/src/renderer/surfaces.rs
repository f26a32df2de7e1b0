//! The material methods of [`Renderer`]: textures, materials, and meshes drawn with them
//! (see [`crate::material`]).

use super::Renderer;
use crate::error::RenderError;
use crate::frame::MeshId;
use crate::material::{MaterialDesc, MaterialId, SamplerDesc, Surface, TextureDesc, TextureId};
use crate::mesh::{Coloring, GpuMesh};
use crate::texture::{upload_material, upload_texture};
use anim_core::skin::Mesh;

impl Renderer {
    /// The white texture (index 0) and the default material (index 0).
    pub(super) fn add_defaults(&mut self) -> Result<(), RenderError> {
        let white =
            TextureDesc { width: 1, height: 1, pixels: &[255; 4], srgb: false, sampler: SamplerDesc::default() };
        self.add_texture(&white)?;
        self.add_material(&MaterialDesc::default())?;
        Ok(())
    }

    /// Uploads a texture (RGBA8; its mipmaps generated on the GPU) and returns its handle.
    ///
    /// # Errors
    /// Texels that do not match the size ([`RenderError::Input`]), a size beyond the
    /// device's limits, or a failing upload.
    pub fn add_texture(&mut self, desc: &TextureDesc<'_>) -> Result<TextureId, RenderError> {
        let sampler = self.samplers.get(&desc.sampler)?;
        self.textures.push(upload_texture(&self.ctx, desc, sampler)?);
        Ok(TextureId(self.textures.len() - 1))
    }

    /// Registers a material and returns its handle.
    ///
    /// # Errors
    /// An unknown texture, a coordinate set other than 0 or 1, or a non-finite factor,
    /// transform or cutoff ([`RenderError::Input`]); a failing upload.
    pub fn add_material(&mut self, desc: &MaterialDesc) -> Result<MaterialId, RenderError> {
        let mut textures = [0usize; 5];
        for (k, slot) in desc.slots().iter().enumerate() {
            let Some(s) = slot else { continue };
            if s.texture.0 >= self.textures.len() {
                return Err(RenderError::Input(format!("material slot {k}: unknown texture {}", s.texture.0)));
            }
            if s.tex_coord > 1 {
                return Err(RenderError::Input(format!("material slot {k}: texture coordinate set {}", s.tex_coord)));
            }
            if !s.transform.as_flattened().iter().all(|x| x.is_finite()) {
                return Err(RenderError::Input(format!("material slot {k}: non-finite texture transform")));
            }
            textures[k] = s.texture.0;
        }
        let cutoff = match desc.alpha_mode {
            crate::material::AlphaMode::Mask(c) => c,
            _ => 0.0,
        };
        let scalars = [desc.metallic, desc.roughness, desc.normal_scale, desc.occlusion_strength, cutoff];
        if !desc.base_color.iter().chain(&desc.emissive).chain(&scalars).all(|x| x.is_finite()) {
            return Err(RenderError::Input("a material factor is not finite".into()));
        }
        self.materials.push(upload_material(&self.ctx, desc, textures)?);
        Ok(MaterialId(self.materials.len() - 1))
    }

    /// Uploads a mesh drawn with a material: `surface` names the material and the
    /// per-vertex attributes it reads besides the mesh's own (tangents, `COLOR_0`, the
    /// second texture coordinate set). Its colouring is [`Coloring::Material`];
    /// [`Renderer::recolor`] switches to a debug colouring and back.
    ///
    /// # Errors
    /// An unknown material, attributes that are neither empty nor one a vertex, or what
    /// [`Renderer::add_mesh`] refuses.
    pub fn add_surface_mesh(&mut self, mesh: &Mesh, surface: &Surface<'_>) -> Result<MeshId, RenderError> {
        if surface.material.0 >= self.materials.len() {
            return Err(RenderError::Input(format!("unknown material {}", surface.material.0)));
        }
        self.meshes.push(GpuMesh::with_surface(&self.ctx, mesh, &Coloring::Material, surface)?);
        Ok(MeshId(self.meshes.len() - 1))
    }
}
