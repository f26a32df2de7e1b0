//! A glTF model's looks handed to the renderer: its images uploaded as textures (sRGB for
//! base colour and emission, linear for data), its materials as the renderer's, and each
//! primitive's surface attributes (tangents, `COLOR_0`, `TEXCOORD_1`).

use crate::DemoError;
use anim_gltf::{AlphaMode, Filter, Material, Model, TextureRef, Wrap};
use anim_render_vk::{MaterialDesc, MaterialId, Renderer, SamplerDesc, TextureDesc, TextureId, TextureSlot};
use std::collections::HashMap;

/// What a glTF file says about how its meshes look (shared by every upload of a character).
#[derive(Clone, Debug, Default)]
pub struct Looks {
    /// Materials, by glTF index.
    pub materials: Vec<Material>,
    /// Textures, by glTF index.
    pub textures: Vec<anim_gltf::Texture>,
    /// Decoded images, by glTF index.
    pub images: Vec<anim_gltf::Image>,
}

impl Looks {
    /// The looks of `model` (materials, textures and images are moved out of it).
    pub fn take(model: &mut Model) -> Self {
        Looks {
            materials: std::mem::take(&mut model.materials),
            textures: std::mem::take(&mut model.textures),
            images: std::mem::take(&mut model.images),
        }
    }

    /// Uploads every texture a material uses (once per sRGB/linear use) and every material;
    /// returns the renderer's material of each glTF material, and of the default one last.
    ///
    /// # Errors
    /// A failing upload.
    pub fn upload(&self, renderer: &mut Renderer) -> Result<Vec<MaterialId>, DemoError> {
        let mut uploaded: HashMap<(usize, bool), TextureId> = HashMap::new();
        let mut ids = Vec::with_capacity(self.materials.len() + 1);
        for m in self.materials.iter().chain(std::iter::once(&Material::default())) {
            let mut slots = [None; 5];
            for (k, (r, srgb)) in m.texture_refs().into_iter().enumerate() {
                let Some(r) = r else { continue };
                let id = match uploaded.get(&(r.texture, srgb)) {
                    Some(id) => *id,
                    None => {
                        let t = &self.textures[r.texture];
                        let image = &self.images[t.image];
                        let desc = TextureDesc {
                            width: image.width,
                            height: image.height,
                            pixels: &image.pixels,
                            srgb,
                            sampler: sampler(&t.sampler),
                        };
                        let id = renderer.add_texture(&desc)?;
                        uploaded.insert((r.texture, srgb), id);
                        id
                    }
                };
                slots[k] = Some(slot(&r, id));
            }
            let s = m.emissive_strength;
            ids.push(renderer.add_material(&MaterialDesc {
                base_color: m.base_color_factor,
                base_color_texture: slots[0],
                metallic: m.metallic_factor,
                roughness: m.roughness_factor,
                metallic_roughness_texture: slots[1],
                normal_texture: slots[2],
                normal_scale: m.normal_scale,
                occlusion_texture: slots[3],
                occlusion_strength: m.occlusion_strength,
                emissive: m.emissive_factor.map(|c| c * s),
                emissive_texture: slots[4],
                alpha_mode: match m.alpha_mode {
                    AlphaMode::Opaque => anim_render_vk::AlphaMode::Opaque,
                    AlphaMode::Mask => anim_render_vk::AlphaMode::Mask(m.alpha_cutoff),
                    AlphaMode::Blend => anim_render_vk::AlphaMode::Blend,
                },
                double_sided: m.double_sided,
            })?);
        }
        Ok(ids)
    }
}

fn slot(r: &TextureRef, texture: TextureId) -> TextureSlot {
    TextureSlot { texture, tex_coord: r.tex_coord, transform: r.transform.rows() }
}

fn sampler(s: &anim_gltf::Sampler) -> SamplerDesc {
    let filter = |f| match f {
        Filter::Nearest => anim_render_vk::Filter::Nearest,
        Filter::Linear => anim_render_vk::Filter::Linear,
    };
    let wrap = |w| match w {
        Wrap::Repeat => anim_render_vk::Wrap::Repeat,
        Wrap::MirroredRepeat => anim_render_vk::Wrap::MirroredRepeat,
        Wrap::ClampToEdge => anim_render_vk::Wrap::ClampToEdge,
    };
    SamplerDesc {
        mag_filter: filter(s.mag_filter),
        min_filter: filter(s.min_filter),
        mipmap: s.mipmap.map(filter),
        wrap_u: wrap(s.wrap_s),
        wrap_v: wrap(s.wrap_t),
    }
}

/// The surface attributes of one primitive.
#[derive(Clone, Debug, Default)]
pub struct PartSurface {
    /// Its glTF material, `None` for the default one.
    pub material: Option<usize>,
    /// Tangents (xyz, sign), or empty.
    pub tangents: Vec<[f32; 4]>,
    /// `COLOR_0`, or empty.
    pub colors: Vec<[f32; 4]>,
    /// `TEXCOORD_1`, or empty.
    pub uvs1: Vec<[f32; 2]>,
}

impl PartSurface {
    /// The renderer's surface of this part, given the materials [`Looks::upload`] returned.
    pub fn surface<'a>(&'a self, materials: &[MaterialId]) -> anim_render_vk::Surface<'a> {
        let default = *materials.last().expect("Looks::upload returns the default material last");
        anim_render_vk::Surface {
            material: self.material.and_then(|m| materials.get(m).copied()).unwrap_or(default),
            tangents: &self.tangents,
            colors: &self.colors,
            uvs1: &self.uvs1,
        }
    }
}
