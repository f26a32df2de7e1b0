//! The atlas and its parts: layouts and texel formats, the clip table, the texels, and the
//! settings a bake takes.

use super::error::{AtlasError, UnknownTexelFormat, UnknownTextureLayout};
use anim_core::clip::Clip;
use anim_math::{Mat4, Vec3};
use std::fmt;
use std::str::FromStr;

/// How a joint's animation is stored in an [`AnimAtlas`] (see the [module docs](super)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TextureLayout {
    /// Model-space translation, rotation, scale: 3 texels a joint (the book's layout).
    #[default]
    ModelTrs,
    /// The skinning matrix's top three rows: 3 texels a joint.
    SkinMatrix,
    /// The skinning dual quaternion: 2 texels a joint; rigid skins only.
    SkinDualQuat,
}

/// Precision of an atlas's texels.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TexelFormat {
    /// 32-bit floats (RGBA32F).
    #[default]
    F32,
    /// IEEE half floats (RGBA16F).
    F16,
}

/// One clip's place in an atlas.
#[derive(Clone, Debug, PartialEq)]
pub struct AtlasClip {
    /// Name of the source clip.
    pub name: String,
    /// First column of the clip.
    pub first_frame: u32,
    /// Number of columns (at least 2).
    pub frame_count: u32,
    /// Frames a second: `(frame_count − 1) / duration`.
    pub rate: f32,
    /// Duration in seconds (the source clip's).
    pub duration: f32,
    /// Whether playback wraps (otherwise it clamps at the ends).
    pub looping: bool,
    /// Model-space bounds `(min, max)` of the skinned meshes over every frame of the clip.
    pub bounds: (Vec3, Vec3),
}

impl AtlasClip {
    /// The playback time after `time` advanced by `dt` (negative runs backwards):
    /// wrapped into `[0, duration)` when looping, clamped to `[0, duration]` otherwise.
    /// A non-finite result (from non-finite input) becomes `0`.
    #[inline]
    pub fn advance(&self, time: f32, dt: f32) -> f32 {
        let t = time + dt;
        let d = self.duration;
        let r = if self.looping {
            if (0.0..d).contains(&t) {
                t
            } else {
                // One subtraction covers the usual step over the end; rem_euclid the rest.
                let w = t.rem_euclid(d);
                if w >= d { 0.0 } else { w }
            }
        } else if d >= 0.0 {
            t.clamp(0.0, d)
        } else {
            // A negative or NaN duration (a hand-built clip): no time line to clamp to.
            0.0
        };
        if r.is_finite() { r } else { 0.0 }
    }

    /// The columns and factor at `time` (wrapped or clamped first, as in [`Self::advance`]).
    /// Frame `f` of the clip holds time `f / rate`; past the last frame (a clamped end)
    /// both columns are the last one.
    #[inline]
    pub fn frame_pair(&self, time: f32) -> FramePair {
        let t = self.advance(time, 0.0);
        let last = self.frame_count.saturating_sub(1);
        let pos = (t * self.rate).max(0.0);
        let f = pos.floor();
        let i = (f as u32).min(last);
        // Wrapping adds, as `Crowd::update` does: a hand-built clip near u32::MAX gives
        // columns the renderer then refuses, never a panic.
        if i >= last {
            let c = self.first_frame.wrapping_add(last);
            return FramePair { frame0: c, frame1: c, t: 0.0 };
        }
        let frame0 = self.first_frame.wrapping_add(i);
        FramePair { frame0, frame1: frame0.wrapping_add(1), t: (pos - f).clamp(0.0, 1.0) }
    }
}

/// Where a character samples a clip: two neighbouring columns and the factor between
/// them (`0` = `frame0`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FramePair {
    /// Atlas column of the earlier frame.
    pub frame0: u32,
    /// Atlas column of the later frame (equal to `frame0` at a clamped end).
    pub frame1: u32,
    /// Interpolation factor in `[0, 1)`.
    pub t: f32,
}

/// A clip to bake and its playback rule.
#[derive(Clone, Copy, Debug)]
pub struct AtlasSource<'a> {
    /// The clip, animating joints of the skeleton passed to [`AnimAtlas::bake`].
    pub clip: &'a Clip,
    /// Whether playback wraps.
    pub looping: bool,
}

/// How to bake.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BakeSettings {
    /// Frames a second (positive, finite).
    pub rate: f32,
    /// Texel layout.
    pub layout: TextureLayout,
    /// Texel precision.
    pub format: TexelFormat,
}

impl TextureLayout {
    /// Every layout, in menu order.
    pub const ALL: [TextureLayout; 3] =
        [TextureLayout::ModelTrs, TextureLayout::SkinMatrix, TextureLayout::SkinDualQuat];

    /// Texels a joint a frame: 3, 3 or 2.
    #[must_use]
    pub const fn texels_per_joint(self) -> u32 {
        match self {
            Self::ModelTrs | Self::SkinMatrix => 3,
            Self::SkinDualQuat => 2,
        }
    }

    /// Name as parsed by [`FromStr`]: `"model-trs"`, `"matrix"` or `"dq"` (`"book"` is
    /// also accepted for `model-trs`).
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::ModelTrs => "model-trs",
            Self::SkinMatrix => "matrix",
            Self::SkinDualQuat => "dq",
        }
    }

    pub(super) const fn code(self) -> u32 {
        match self {
            Self::ModelTrs => 0,
            Self::SkinMatrix => 1,
            Self::SkinDualQuat => 2,
        }
    }

    pub(super) fn from_code(c: u32) -> Option<Self> {
        Self::ALL.into_iter().find(|l| l.code() == c)
    }
}

impl fmt::Display for TextureLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for TextureLayout {
    type Err = UnknownTextureLayout;

    /// Parses a [`TextureLayout::name`] or `"book"`, ignoring ASCII case.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.eq_ignore_ascii_case("book") {
            return Ok(Self::ModelTrs);
        }
        Self::ALL
            .into_iter()
            .find(|l| l.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| UnknownTextureLayout(s.to_owned()))
    }
}

impl TexelFormat {
    /// Both formats.
    pub const ALL: [TexelFormat; 2] = [TexelFormat::F32, TexelFormat::F16];

    /// Name as parsed by [`FromStr`]: `"f32"` or `"f16"`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::F32 => "f32",
            Self::F16 => "f16",
        }
    }

    /// Bytes a texel (4 channels).
    #[must_use]
    pub const fn texel_size(self) -> usize {
        match self {
            Self::F32 => 16,
            Self::F16 => 8,
        }
    }

    pub(super) const fn code(self) -> u32 {
        match self {
            Self::F32 => 0,
            Self::F16 => 1,
        }
    }

    pub(super) fn from_code(c: u32) -> Option<Self> {
        Self::ALL.into_iter().find(|l| l.code() == c)
    }
}

impl fmt::Display for TexelFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for TexelFormat {
    type Err = UnknownTexelFormat;

    /// Parses `"f32"` or `"f16"`, ignoring ASCII case.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL.into_iter().find(|l| l.name().eq_ignore_ascii_case(s)).ok_or_else(|| UnknownTexelFormat(s.to_owned()))
    }
}

/// Texel storage.
#[derive(Clone, Debug, PartialEq)]
pub enum Texels {
    /// RGBA32F.
    F32(Vec<[f32; 4]>),
    /// RGBA16F, as IEEE half bit patterns.
    F16(Vec<[u16; 4]>),
}

impl Texels {
    /// Number of texels.
    #[must_use]
    pub fn len(&self) -> usize {
        match self {
            Self::F32(v) => v.len(),
            Self::F16(v) => v.len(),
        }
    }

    /// True when there is no texel.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Texel `i` decoded to f32.
    #[inline]
    #[must_use]
    pub fn get(&self, i: usize) -> Option<[f32; 4]> {
        match self {
            Self::F32(v) => v.get(i).copied(),
            Self::F16(v) => v.get(i).map(|h| h.map(|b| half::f16::from_bits(b).to_f32())),
        }
    }
}

/// Several clips of one skin baked into one animation texture (see the [module docs](super)).
#[derive(Clone, Debug, PartialEq)]
pub struct AnimAtlas {
    pub(super) layout: TextureLayout,
    pub(super) format: TexelFormat,
    pub(super) joint_names: Vec<String>,
    pub(super) inverse_bind: Vec<Mat4>,
    pub(super) width: u32,
    pub(super) rigid: bool,
    pub(super) clips: Vec<AtlasClip>,
    pub(super) texels: Texels,
}

impl AnimAtlas {
    /// Texel layout.
    pub fn layout(&self) -> TextureLayout {
        self.layout
    }
    /// Texel precision.
    pub fn format(&self) -> TexelFormat {
        self.format
    }
    /// Number of skin joints.
    pub fn joint_count(&self) -> usize {
        self.joint_names.len()
    }
    /// Names of the skin joints, in skin order (checked against a model on load).
    pub fn joint_names(&self) -> &[String] {
        &self.joint_names
    }
    /// The skin's inverse bind matrices (the `ModelTrs` shader needs them).
    pub fn inverse_bind(&self) -> &[Mat4] {
        &self.inverse_bind
    }
    /// Image width: total frames of all clips.
    pub fn width(&self) -> u32 {
        self.width
    }
    /// Image height: `joint_count · texels_per_joint`.
    pub fn height(&self) -> u32 {
        self.joint_names.len() as u32 * self.layout.texels_per_joint()
    }
    /// Whether every skinning matrix of every frame is rigid (DQ skinning allowed).
    pub fn is_rigid(&self) -> bool {
        self.rigid
    }
    /// The clip table.
    pub fn clips(&self) -> &[AtlasClip] {
        &self.clips
    }
    /// Texel storage.
    pub fn texels(&self) -> &Texels {
        &self.texels
    }
    /// Texel bytes in image order, ready for upload (native byte order: little-endian on
    /// every target the renderer runs on).
    pub fn texel_bytes(&self) -> &[u8] {
        match &self.texels {
            Texels::F32(v) => bytemuck::cast_slice(v),
            Texels::F16(v) => bytemuck::cast_slice(v),
        }
    }
    /// The texel at column `x`, row `y`, decoded to f32.
    pub fn texel(&self, x: u32, y: u32) -> Option<[f32; 4]> {
        if x >= self.width || y >= self.height() {
            return None;
        }
        self.texels.get(y as usize * self.width as usize + x as usize)
    }
    /// Where clip `clip` is at `time` seconds, by its wrap or clamp rule.
    pub fn frame_pair(&self, clip: usize, time: f32) -> Option<FramePair> {
        self.clips.get(clip).map(|c| c.frame_pair(time))
    }

    /// Checks that this atlas was baked for a skin with these joint names, in this order.
    ///
    /// # Errors
    /// [`AtlasError::JointCount`] or [`AtlasError::JointName`] (the first that differs).
    pub fn check_joints(&self, names: &[String]) -> Result<(), AtlasError> {
        if names.len() != self.joint_names.len() {
            return Err(AtlasError::JointCount { atlas: self.joint_names.len(), model: names.len() });
        }
        if let Some((index, (a, m))) = self.joint_names.iter().zip(names).enumerate().find(|(_, (a, m))| a != m) {
            return Err(AtlasError::JointName { index, atlas: a.clone(), model: m.clone() });
        }
        Ok(())
    }
}
