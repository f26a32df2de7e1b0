//! What a glTF file says about how its meshes look: metallic-roughness [`Material`]s, the
//! [`Texture`]s they read (an [`Image`] and a [`Sampler`]), and the texture references with
//! their coordinate set and `KHR_texture_transform`. Plain data, decoded once at import
//! (images as RGBA8, charged to the memory budget); a renderer uploads them.
//!
//! Defaults are the specification's: a primitive without `material` uses
//! [`Material::default`] (white, fully metallic and rough, opaque, single-sided), a
//! texture without `sampler` uses [`Sampler::default`] (repeat, linear filtering with
//! mipmaps).

/// How a material's alpha is used (glTF `alphaMode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AlphaMode {
    /// Alpha ignored: fully opaque.
    #[default]
    Opaque,
    /// Opaque where alpha ≥ [`Material::alpha_cutoff`], not drawn elsewhere.
    Mask,
    /// Alpha-blended over what is behind (drawn after the opaque surfaces).
    Blend,
}

/// `KHR_texture_transform`: texture coordinates are scaled, then rotated (radians), then
/// offset: `uv' = T(offset) · R(rotation) · S(scale) · uv`, with the extension's rotation
/// matrix `R = [[cos, −sin], [sin, cos]]` (its GLSL `mat3(cos, sin, 0, −sin, cos, 0, …)`,
/// column-major).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TextureTransform {
    /// Offset added last.
    pub offset: [f32; 2],
    /// Rotation in radians.
    pub rotation: f32,
    /// Scale applied first.
    pub scale: [f32; 2],
}

impl TextureTransform {
    /// No transform.
    pub const IDENTITY: TextureTransform = TextureTransform { offset: [0.0, 0.0], rotation: 0.0, scale: [1.0, 1.0] };

    /// The transform as the two rows of a 2×3 matrix (`uv' = M · (u, v, 1)`), as the
    /// extension's specification writes it.
    ///
    /// ```
    /// use anim_gltf::TextureTransform;
    /// let t = TextureTransform { offset: [0.5, 0.0], rotation: std::f32::consts::FRAC_PI_2, scale: [2.0, 1.0] };
    /// let m = t.rows();
    /// // (1, 0) scaled to (2, 0), rotated to (0, 2), offset to (0.5, 2).
    /// let uv = [m[0][0] * 1.0 + m[0][2], m[1][0] * 1.0 + m[1][2]];
    /// assert!((uv[0] - 0.5).abs() < 1e-6 && (uv[1] - 2.0).abs() < 1e-6);
    /// ```
    pub fn rows(&self) -> [[f32; 3]; 2] {
        let (s, c) = self.rotation.sin_cos();
        let [sx, sy] = self.scale;
        // T · R · S.
        [[c * sx, -s * sy, self.offset[0]], [s * sx, c * sy, self.offset[1]]]
    }
}

impl Default for TextureTransform {
    fn default() -> Self {
        Self::IDENTITY
    }
}

/// A material's use of a texture.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TextureRef {
    /// Index into [`Model::textures`](crate::Model::textures).
    pub texture: usize,
    /// The `TEXCOORD_n` set it reads (0 or 1 are imported; the transform's `texCoord`
    /// override already applied).
    pub tex_coord: u32,
    /// `KHR_texture_transform`, [`TextureTransform::IDENTITY`] without it.
    pub transform: TextureTransform,
}

/// A metallic-roughness material (glTF 2.0 core, `KHR_materials_emissive_strength`).
#[derive(Clone, Debug, PartialEq)]
pub struct Material {
    /// Name (empty when the file has none).
    pub name: String,
    /// Linear RGBA multiplier of the base colour.
    pub base_color_factor: [f32; 4],
    /// Base colour, sRGB-encoded RGBA.
    pub base_color_texture: Option<TextureRef>,
    /// Metalness multiplier.
    pub metallic_factor: f32,
    /// Perceptual roughness multiplier.
    pub roughness_factor: f32,
    /// Roughness in green, metalness in blue (linear).
    pub metallic_roughness_texture: Option<TextureRef>,
    /// Tangent-space normal map (linear).
    pub normal_texture: Option<TextureRef>,
    /// Scale of the normal map's x and y.
    pub normal_scale: f32,
    /// Ambient occlusion in red (linear).
    pub occlusion_texture: Option<TextureRef>,
    /// How much occlusion applies: `1 + strength · (ao − 1)`.
    pub occlusion_strength: f32,
    /// Linear RGB emission multiplier.
    pub emissive_factor: [f32; 3],
    /// Emission, sRGB-encoded RGB.
    pub emissive_texture: Option<TextureRef>,
    /// `KHR_materials_emissive_strength` (1 without it).
    pub emissive_strength: f32,
    /// How alpha is used.
    pub alpha_mode: AlphaMode,
    /// The threshold of [`AlphaMode::Mask`].
    pub alpha_cutoff: f32,
    /// Both faces drawn (back faces with the normal flipped); otherwise back faces are
    /// culled.
    pub double_sided: bool,
}

impl Default for Material {
    /// The specification's default material: what a primitive without `material` uses.
    fn default() -> Self {
        Material {
            name: String::new(),
            base_color_factor: [1.0; 4],
            base_color_texture: None,
            metallic_factor: 1.0,
            roughness_factor: 1.0,
            metallic_roughness_texture: None,
            normal_texture: None,
            normal_scale: 1.0,
            occlusion_texture: None,
            occlusion_strength: 1.0,
            emissive_factor: [0.0; 3],
            emissive_texture: None,
            emissive_strength: 1.0,
            alpha_mode: AlphaMode::Opaque,
            alpha_cutoff: 0.5,
            double_sided: false,
        }
    }
}

impl Material {
    /// Every texture reference of the material with whether its texels are sRGB-encoded
    /// (base colour and emission) or linear data: base colour, metallic-roughness, normal,
    /// occlusion, emissive, in that order.
    pub fn texture_refs(&self) -> [(Option<TextureRef>, bool); 5] {
        [
            (self.base_color_texture, true),
            (self.metallic_roughness_texture, false),
            (self.normal_texture, false),
            (self.occlusion_texture, false),
            (self.emissive_texture, true),
        ]
    }
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
    /// Repeat, mirrored every other time.
    MirroredRepeat,
    /// Clamp to the edge texel.
    ClampToEdge,
}

/// How a texture is sampled (glTF `samplers`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Sampler {
    /// Magnification filter.
    pub mag_filter: Filter,
    /// Minification filter within a mip level.
    pub min_filter: Filter,
    /// Filtering between mip levels, `None` when the minification filter uses the top
    /// level only (`NEAREST`, `LINEAR`).
    pub mipmap: Option<Filter>,
    /// Wrapping of u.
    pub wrap_s: Wrap,
    /// Wrapping of v.
    pub wrap_t: Wrap,
}

impl Default for Sampler {
    /// What a texture without a sampler (or a sampler without filters) uses: repeat, and
    /// linear filtering with linear mipmaps (the filters are the implementation's choice
    /// when absent).
    fn default() -> Self {
        Sampler {
            mag_filter: Filter::Linear,
            min_filter: Filter::Linear,
            mipmap: Some(Filter::Linear),
            wrap_s: Wrap::Repeat,
            wrap_t: Wrap::Repeat,
        }
    }
}

/// A texture: an image and how it is sampled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Texture {
    /// Index into [`Model::images`](crate::Model::images).
    pub image: usize,
    /// Sampling.
    pub sampler: Sampler,
}

/// A decoded image: RGBA8, rows top to bottom (glTF's texture coordinate (0, 0) is the
/// first texel). Images no texture refers to are not decoded (width and height 0).
#[derive(Clone, PartialEq, Eq)]
pub struct Image {
    /// Name (empty when the file has none).
    pub name: String,
    /// Width in texels.
    pub width: u32,
    /// Height in texels.
    pub height: u32,
    /// `width · height · 4` bytes, as stored (sRGB or linear data: the material's use tells).
    pub pixels: Vec<u8>,
}

impl std::fmt::Debug for Image {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Image")
            .field("name", &self.name)
            .field("width", &self.width)
            .field("height", &self.height)
            .finish()
    }
}

impl Image {
    /// The RGBA8 texel at `(x, y)`, `None` outside the image.
    pub fn texel(&self, x: u32, y: u32) -> Option<[u8; 4]> {
        if x >= self.width || y >= self.height {
            return None;
        }
        let at = (y as usize * self.width as usize + x as usize) * 4;
        self.pixels.get(at..at + 4).map(|p| [p[0], p[1], p[2], p[3]])
    }
}
