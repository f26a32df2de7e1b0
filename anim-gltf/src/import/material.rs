//! Materials, textures and samplers: the metallic-roughness core with
//! `KHR_texture_transform` on every texture reference and
//! `KHR_materials_emissive_strength`. Factors must be finite and in their ranges
//! (`VALUE_NOT_IN_RANGE` otherwise, as in the Khronos glTF-Validator); a texture reference
//! to a coordinate set other than `TEXCOORD_0`/`TEXCOORD_1` is dropped with a warning.

use super::Importer;
use crate::error::GltfError;
use crate::material::{AlphaMode, Filter, Material, Sampler, Texture, TextureRef, TextureTransform, Wrap};
use gltf::texture::{MagFilter, MinFilter, WrappingMode};
use serde_json::Value;

impl Importer<'_> {
    /// Every material and texture of the document, by index.
    pub(super) fn materials(&mut self) -> Result<(Vec<Material>, Vec<Texture>), GltfError> {
        let textures: Vec<Texture> = self
            .doc
            .textures()
            .map(|t| Texture { image: t.source().index(), sampler: sampler(&t.sampler()) })
            .collect();
        let mut out = Vec::with_capacity(self.doc.materials().len());
        for m in self.doc.materials() {
            let i = m.index().expect("a material of the document has an index");
            let path = format!("materials[{i}]");
            out.push(self.material(&m, &path)?);
        }
        Ok((out, textures))
    }

    fn material(&mut self, m: &gltf::Material<'_>, path: &str) -> Result<Material, GltfError> {
        let pbr = m.pbr_metallic_roughness();
        let ppath = format!("{path}.pbrMetallicRoughness");
        let base_color_factor = pbr.base_color_factor();
        unit(&base_color_factor, &format!("{ppath}.baseColorFactor"))?;
        let metallic_factor = pbr.metallic_factor();
        unit(&[metallic_factor], &format!("{ppath}.metallicFactor"))?;
        let roughness_factor = pbr.roughness_factor();
        unit(&[roughness_factor], &format!("{ppath}.roughnessFactor"))?;
        let emissive_factor = m.emissive_factor();
        unit(&emissive_factor, &format!("{path}.emissiveFactor"))?;
        let base_color_texture = match pbr.base_color_texture() {
            Some(t) => self.texture_ref(&t, t.extension_value(TRANSFORM), &format!("{ppath}.baseColorTexture"))?,
            None => None,
        };
        let metallic_roughness_texture = match pbr.metallic_roughness_texture() {
            Some(t) => {
                self.texture_ref(&t, t.extension_value(TRANSFORM), &format!("{ppath}.metallicRoughnessTexture"))?
            }
            None => None,
        };
        let (mut normal_texture, mut normal_scale) = (None, 1.0);
        if let Some(t) = m.normal_texture() {
            let npath = format!("{path}.normalTexture");
            normal_scale = t.scale();
            finite(normal_scale, &format!("{npath}.scale"))?;
            let info = RefParts { texture: t.texture().index(), tex_coord: t.tex_coord() };
            normal_texture = self.texture_ref(&info, t.extension_value(TRANSFORM), &npath)?;
        }
        let (mut occlusion_texture, mut occlusion_strength) = (None, 1.0);
        if let Some(t) = m.occlusion_texture() {
            let opath = format!("{path}.occlusionTexture");
            occlusion_strength = t.strength();
            unit(&[occlusion_strength], &format!("{opath}.strength"))?;
            let info = RefParts { texture: t.texture().index(), tex_coord: t.tex_coord() };
            occlusion_texture = self.texture_ref(&info, t.extension_value(TRANSFORM), &opath)?;
        }
        let emissive_texture = match m.emissive_texture() {
            Some(t) => self.texture_ref(&t, t.extension_value(TRANSFORM), &format!("{path}.emissiveTexture"))?,
            None => None,
        };
        let mut emissive_strength = 1.0;
        if let Some(ext) = m.extension_value("KHR_materials_emissive_strength") {
            let spath = format!("{path}.extensions.KHR_materials_emissive_strength.emissiveStrength");
            if let Some(v) = ext.get("emissiveStrength") {
                emissive_strength = number(v, &spath)?;
                if emissive_strength < 0.0 {
                    return Err(range(&spath, "must be ≥ 0"));
                }
            }
        }
        let alpha_cutoff = m.alpha_cutoff().unwrap_or(0.5);
        finite(alpha_cutoff, &format!("{path}.alphaCutoff"))?;
        if alpha_cutoff < 0.0 {
            return Err(range(&format!("{path}.alphaCutoff"), "must be ≥ 0"));
        }
        let alpha_mode = match m.alpha_mode() {
            gltf::material::AlphaMode::Opaque => AlphaMode::Opaque,
            gltf::material::AlphaMode::Mask => AlphaMode::Mask,
            gltf::material::AlphaMode::Blend => AlphaMode::Blend,
        };
        Ok(Material {
            name: m.name().unwrap_or("").to_owned(),
            base_color_factor,
            base_color_texture,
            metallic_factor,
            roughness_factor,
            metallic_roughness_texture,
            normal_texture,
            normal_scale,
            occlusion_texture,
            occlusion_strength,
            emissive_factor,
            emissive_texture,
            emissive_strength,
            alpha_mode,
            alpha_cutoff,
            double_sided: m.double_sided(),
        })
    }

    /// A texture reference with its transform; `None` (and a warning) for a coordinate set
    /// beyond `TEXCOORD_1`.
    fn texture_ref(
        &mut self,
        info: &impl TextureInfo,
        transform: Option<&Value>,
        path: &str,
    ) -> Result<Option<TextureRef>, GltfError> {
        let mut tex_coord = info.tex_coord();
        let mut t = TextureTransform::IDENTITY;
        if let Some(ext) = transform {
            let tpath = format!("{path}.extensions.{TRANSFORM}");
            let pair = |key: &str, default: [f32; 2]| -> Result<[f32; 2], GltfError> {
                let Some(v) = ext.get(key) else { return Ok(default) };
                let kpath = format!("{tpath}.{key}");
                match v.as_array().map(Vec::as_slice) {
                    Some([a, b]) => Ok([number(a, &kpath)?, number(b, &kpath)?]),
                    _ => Err(GltfError::Schema { path: kpath, message: "must be an array of two numbers".into() }),
                }
            };
            t.offset = pair("offset", [0.0, 0.0])?;
            t.scale = pair("scale", [1.0, 1.0])?;
            if let Some(r) = ext.get("rotation") {
                t.rotation = number(r, &format!("{tpath}.rotation"))?;
            }
            if let Some(c) = ext.get("texCoord") {
                tex_coord = c.as_u64().and_then(|c| u32::try_from(c).ok()).ok_or_else(|| GltfError::Schema {
                    path: format!("{tpath}.texCoord"),
                    message: "must be a non-negative integer".into(),
                })?;
            }
        }
        if tex_coord > 1 {
            self.warnings
                .push(format!("{path} reads TEXCOORD_{tex_coord}; only sets 0 and 1 are read, so it is ignored"));
            return Ok(None);
        }
        Ok(Some(TextureRef { texture: info.texture_index(), tex_coord, transform: t }))
    }
}

/// The extension whose values every texture reference may carry.
const TRANSFORM: &str = "KHR_texture_transform";

/// What a texture reference of any kind gives.
trait TextureInfo {
    fn texture_index(&self) -> usize;
    fn tex_coord(&self) -> u32;
}

impl TextureInfo for gltf::texture::Info<'_> {
    fn texture_index(&self) -> usize {
        self.texture().index()
    }
    fn tex_coord(&self) -> u32 {
        gltf::texture::Info::tex_coord(self)
    }
}

/// The parts of a normal or occlusion texture reference.
struct RefParts {
    texture: usize,
    tex_coord: u32,
}

impl TextureInfo for RefParts {
    fn texture_index(&self) -> usize {
        self.texture
    }
    fn tex_coord(&self) -> u32 {
        self.tex_coord
    }
}

fn sampler(s: &gltf::texture::Sampler<'_>) -> Sampler {
    let wrap = |w| match w {
        WrappingMode::Repeat => Wrap::Repeat,
        WrappingMode::MirroredRepeat => Wrap::MirroredRepeat,
        WrappingMode::ClampToEdge => Wrap::ClampToEdge,
    };
    let d = Sampler::default();
    let mag_filter = match s.mag_filter() {
        Some(MagFilter::Nearest) => Filter::Nearest,
        Some(MagFilter::Linear) => Filter::Linear,
        None => d.mag_filter,
    };
    let (min_filter, mipmap) = match s.min_filter() {
        None => (d.min_filter, d.mipmap),
        Some(MinFilter::Nearest) => (Filter::Nearest, None),
        Some(MinFilter::Linear) => (Filter::Linear, None),
        Some(MinFilter::NearestMipmapNearest) => (Filter::Nearest, Some(Filter::Nearest)),
        Some(MinFilter::LinearMipmapNearest) => (Filter::Linear, Some(Filter::Nearest)),
        Some(MinFilter::NearestMipmapLinear) => (Filter::Nearest, Some(Filter::Linear)),
        Some(MinFilter::LinearMipmapLinear) => (Filter::Linear, Some(Filter::Linear)),
    };
    Sampler { mag_filter, min_filter, mipmap, wrap_s: wrap(s.wrap_s()), wrap_t: wrap(s.wrap_t()) }
}

fn range(path: &str, what: &str) -> GltfError {
    GltfError::Schema { path: path.into(), message: format!("VALUE_NOT_IN_RANGE: {what}") }
}

fn finite(x: f32, path: &str) -> Result<(), GltfError> {
    if x.is_finite() { Ok(()) } else { Err(GltfError::NonFinite { path: path.into(), what: "value".into() }) }
}

/// Every value finite and in `[0, 1]`.
fn unit(values: &[f32], path: &str) -> Result<(), GltfError> {
    for &x in values {
        finite(x, path)?;
        if !(0.0..=1.0).contains(&x) {
            return Err(range(path, "must be in [0, 1]"));
        }
    }
    Ok(())
}

/// A finite JSON number as `f32`.
fn number(v: &Value, path: &str) -> Result<f32, GltfError> {
    let x =
        v.as_f64().ok_or_else(|| GltfError::Schema { path: path.into(), message: "must be a number".into() })? as f32;
    finite(x, path)?;
    Ok(x)
}
