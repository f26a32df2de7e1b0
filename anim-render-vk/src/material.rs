//! Materials: what a surface is made of, in glTF's metallic-roughness model, as the
//! renderer draws it. A [`TextureDesc`] (RGBA8 texels, sRGB or linear, and a
//! [`SamplerDesc`]) is uploaded once with [`Renderer::add_texture`] (mipmaps generated on
//! the GPU); a [`MaterialDesc`] (factors, up to five [`TextureSlot`]s, alpha mode,
//! double-sided) with [`Renderer::add_material`]; a mesh drawn with a material is
//! registered with [`Renderer::add_surface_mesh`] (tangents, `COLOR_0`, the second
//! texture coordinate set) and shaded by it while its colouring is [`Coloring::Material`]
//! (the debug colourings stay available through [`Renderer::recolor`]).
//!
//! Shading (`shaders/material.glsl`): base colour = factor × texture × vertex colour (×
//! the instance tint); GGX specular (height-correlated Smith visibility, Schlick Fresnel
//! with F0 = mix(0.04, base, metallic)) and Lambert diffuse under one white directional
//! light of radiance [`LIGHT_RADIANCE`] from [`Camera::light_dir`], a constant white
//! ambient term [`AMBIENT`] · base · occlusion, plus emission; tangent-space normal maps
//! with the vertex tangents (or, for vertices that have none, a frame from screen-space
//! derivatives). [`AlphaMode::Mask`] discards below its cutoff; [`AlphaMode::Blend`] draws
//! after every opaque instance, farthest first, blended over what is behind. Single-sided
//! materials cull back faces (a model matrix with a negative determinant flips the winding,
//! as glTF says); double-sided ones shade back faces with the flipped normal. The result is
//! written sRGB-encoded (the renderer's targets are UNORM).
//!
//! [`Renderer::add_texture`]: crate::Renderer::add_texture
//! [`Renderer::add_material`]: crate::Renderer::add_material
//! [`Renderer::add_surface_mesh`]: crate::Renderer::add_surface_mesh
//! [`Renderer::recolor`]: crate::Renderer::recolor
//! [`Coloring::Material`]: crate::Coloring::Material
//! [`Camera::light_dir`]: crate::Camera::light_dir

use bytemuck::{Pod, Zeroable};

/// Radiance of the directional light (`LIGHT_RADIANCE` in `shaders/material.glsl`).
pub const LIGHT_RADIANCE: f32 = 3.0;
/// The constant ambient light (`AMBIENT` in `shaders/material.glsl`).
pub const AMBIENT: f32 = 0.3;

/// Handle of a texture registered with [`crate::Renderer::add_texture`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TextureId(pub(crate) usize);

/// Handle of a material registered with [`crate::Renderer::add_material`].
/// [`MaterialId::DEFAULT`] is glTF's default material (white, fully metallic and rough).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MaterialId(pub(crate) usize);

impl MaterialId {
    /// The default material every renderer has: glTF's (base colour 1, metallic 1,
    /// roughness 1, opaque, single-sided).
    pub const DEFAULT: MaterialId = MaterialId(0);
}

/// Texture filtering.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Filter {
    /// Nearest texel.
    Nearest,
    /// Linear interpolation.
    #[default]
    Linear,
}

/// Texture coordinate wrapping.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Wrap {
    /// Repeat.
    #[default]
    Repeat,
    /// Repeat mirrored every other time.
    MirroredRepeat,
    /// Clamp to the edge texel.
    ClampToEdge,
}

/// How a texture is sampled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SamplerDesc {
    /// Magnification filter.
    pub mag_filter: Filter,
    /// Minification filter within a level.
    pub min_filter: Filter,
    /// Filtering between mip levels; `None` samples the top level only.
    pub mipmap: Option<Filter>,
    /// Wrapping of u.
    pub wrap_u: Wrap,
    /// Wrapping of v.
    pub wrap_v: Wrap,
}

impl Default for SamplerDesc {
    /// Repeat, trilinear.
    fn default() -> Self {
        SamplerDesc {
            mag_filter: Filter::Linear,
            min_filter: Filter::Linear,
            mipmap: Some(Filter::Linear),
            wrap_u: Wrap::Repeat,
            wrap_v: Wrap::Repeat,
        }
    }
}

/// Texels to upload: `width · height` RGBA8 texels, rows top to bottom (texture coordinate
/// (0, 0) is the first texel).
#[derive(Clone, Copy, Debug)]
pub struct TextureDesc<'a> {
    /// Width in texels.
    pub width: u32,
    /// Height in texels.
    pub height: u32,
    /// `width · height · 4` bytes.
    pub pixels: &'a [u8],
    /// sRGB-encoded colour (base colour, emission: decoded to linear when sampled) or
    /// linear data (normals, metallic-roughness, occlusion).
    pub srgb: bool,
    /// Sampling.
    pub sampler: SamplerDesc,
}

/// A material's use of a texture.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TextureSlot {
    /// The texture.
    pub texture: TextureId,
    /// Texture coordinate set: 0 ([`anim_core::skin::Mesh::uvs`]) or 1 ([`Surface::uvs1`]).
    pub tex_coord: u32,
    /// The two rows of the 2×3 transform applied to the coordinates (`KHR_texture_transform`),
    /// [`TextureSlot::IDENTITY`] for none.
    pub transform: [[f32; 3]; 2],
}

impl TextureSlot {
    /// The identity transform.
    pub const IDENTITY: [[f32; 3]; 2] = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];

    /// `texture` at coordinate set 0, untransformed.
    pub fn new(texture: TextureId) -> Self {
        TextureSlot { texture, tex_coord: 0, transform: Self::IDENTITY }
    }
}

/// How alpha is used.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum AlphaMode {
    /// Opaque.
    #[default]
    Opaque,
    /// Fragments with alpha below the cutoff are not drawn.
    Mask(f32),
    /// Blended over what is behind, drawn after the opaque instances, farthest first.
    Blend,
}

/// A metallic-roughness material.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MaterialDesc {
    /// Linear RGBA factor of the base colour.
    pub base_color: [f32; 4],
    /// Base colour texture (sRGB).
    pub base_color_texture: Option<TextureSlot>,
    /// Metalness.
    pub metallic: f32,
    /// Perceptual roughness.
    pub roughness: f32,
    /// Roughness in green, metalness in blue, multiplying the factors.
    pub metallic_roughness_texture: Option<TextureSlot>,
    /// Tangent-space normal map.
    pub normal_texture: Option<TextureSlot>,
    /// Scale of the normal map's x and y.
    pub normal_scale: f32,
    /// Ambient occlusion in red.
    pub occlusion_texture: Option<TextureSlot>,
    /// `1 + strength · (ao − 1)`.
    pub occlusion_strength: f32,
    /// Linear RGB emission (factor × strength).
    pub emissive: [f32; 3],
    /// Emission texture (sRGB), multiplying [`MaterialDesc::emissive`].
    pub emissive_texture: Option<TextureSlot>,
    /// Alpha mode.
    pub alpha_mode: AlphaMode,
    /// Draw both faces.
    pub double_sided: bool,
}

impl Default for MaterialDesc {
    /// glTF's default material.
    fn default() -> Self {
        MaterialDesc {
            base_color: [1.0; 4],
            base_color_texture: None,
            metallic: 1.0,
            roughness: 1.0,
            metallic_roughness_texture: None,
            normal_texture: None,
            normal_scale: 1.0,
            occlusion_texture: None,
            occlusion_strength: 1.0,
            emissive: [0.0; 3],
            emissive_texture: None,
            alpha_mode: AlphaMode::Opaque,
            double_sided: false,
        }
    }
}

impl MaterialDesc {
    /// The texture slots in binding order: base colour, metallic-roughness, normal,
    /// occlusion, emissive.
    pub fn slots(&self) -> [Option<TextureSlot>; 5] {
        [
            self.base_color_texture,
            self.metallic_roughness_texture,
            self.normal_texture,
            self.occlusion_texture,
            self.emissive_texture,
        ]
    }
}

/// The per-vertex surface attributes of a mesh drawn with a material, besides its
/// [`anim_core::skin::Mesh`] (positions, normals, first texture coordinate set): each
/// empty, or one entry a vertex.
#[derive(Clone, Copy, Debug)]
pub struct Surface<'a> {
    /// The material.
    pub material: MaterialId,
    /// Unit tangents with the bitangent sign in w (glTF `TANGENT`); without them normal maps
    /// use a frame from screen-space derivatives.
    pub tangents: &'a [[f32; 4]],
    /// Vertex colours (glTF `COLOR_0`, linear), multiplying the base colour; white without.
    pub colors: &'a [[f32; 4]],
    /// The second texture coordinate set (glTF `TEXCOORD_1`).
    pub uvs1: &'a [[f32; 2]],
}

impl Surface<'_> {
    /// `material` and no further attributes.
    pub fn of(material: MaterialId) -> Surface<'static> {
        Surface { material, tangents: &[], colors: &[], uvs1: &[] }
    }
}

/// The material block of the shaders (`MaterialBlock` in `shaders/material.glsl`, std140).
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub(crate) struct MaterialUniform {
    pub base_color: [f32; 4],
    pub emissive: [f32; 4],
    pub params: [f32; 4],
    pub alpha: [f32; 4],
    pub slots: [[f32; 4]; 10],
}

const _: () = assert!(std::mem::size_of::<MaterialUniform>() == 224, "MaterialUniform must match material.glsl");

impl MaterialUniform {
    pub(crate) fn new(m: &MaterialDesc) -> Self {
        let (cutoff, mode) = match m.alpha_mode {
            AlphaMode::Opaque => (0.0, 0.0),
            AlphaMode::Mask(c) => (c, 1.0),
            AlphaMode::Blend => (0.0, 2.0),
        };
        let mut slots = [[0.0; 4]; 10];
        for (i, s) in m.slots().iter().enumerate() {
            if let Some(s) = s {
                let [r0, r1] = s.transform;
                slots[2 * i] = [r0[0], r0[1], r0[2], s.tex_coord as f32];
                slots[2 * i + 1] = [r1[0], r1[1], r1[2], 1.0];
            }
        }
        MaterialUniform {
            base_color: m.base_color,
            emissive: [m.emissive[0], m.emissive[1], m.emissive[2], 0.0],
            params: [m.metallic, m.roughness, m.normal_scale, m.occlusion_strength],
            alpha: [cutoff, mode, 0.0, 0.0],
            slots,
        }
    }
}
