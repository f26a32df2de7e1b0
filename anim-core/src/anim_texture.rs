//! Animation textures (the book's chapter 15): clips of one skin baked at a fixed rate
//! into one RGBA texture, the *atlas*, that a GPU samples per character.
//!
//! # Layout
//! The atlas is an image `width × height` texels of 4 channels, stored row-major
//! (texel `(x, y)` is element `y · width + x` of [`AnimAtlas::texels_f32`]):
//! - **x is the frame.** Clip `c` occupies columns `first_frame .. first_frame + frame_count`
//!   ([`AtlasClip`]); its frame `f` is the clip sampled at `min(f / rate, duration)`, so
//!   the last frame is exactly the clip's end.
//! - **y is `joint · texels_per_joint + k`**, `joint` being the *skin* joint (the index
//!   mesh influences use), `k` a texel of the [`TextureLayout`]:
//!   - [`TextureLayout::ModelTrs`] (the book's layout, 3 texels): the joint's model-space
//!     translation `(x, y, z, 0)`, rotation `(i, j, k, w)` and scale `(x, y, z, 0)`. The
//!     shader builds `T·R·S` and multiplies by the joint's inverse bind matrix
//!     ([`AnimAtlas::inverse_bind`]). 4 influences × 2 frames × 3 texels = 24 fetches a
//!     vertex.
//!   - [`TextureLayout::SkinMatrix`] (3 texels): rows 0, 1 and 2 of the skinning matrix
//!     `model · inverse_bind` (the fourth row is `0 0 0 1`).
//!   - [`TextureLayout::SkinDualQuat`] (2 texels): the skinning dual quaternion's real
//!     part `(i, j, k, w)` and dual part `(i, j, k, w)`. Rigid skins only.
//! - Texels are 32-bit floats or half floats ([`TexelFormat`]).
//!
//! Rotations and dual quaternions are sign-aligned with the previous frame of their clip,
//! so interpolating neighbours always takes the short way.
//!
//! # Interpolation (CPU reader and shaders do exactly this)
//! A character samples its clip at a [`FramePair`] `(frame0, frame1, t)`; an optional
//! second clip is blended in with weight `w` (the book's in-shader blend). Per joint:
//! - `ModelTrs`: translation and scale `lerp`, rotation `nlerp` (hemisphere-checked) —
//!   first between the two frames of each clip, then between the clips by `w`; then
//!   `M = T·R·S · inverse_bind`.
//! - `SkinMatrix`: the three rows are `lerp`ed the same way.
//! - `SkinDualQuat`: both parts are blended linearly (the second sign-flipped when the
//!   real parts' dot product is negative) and divided by the real part's length.
//!
//! The resulting palette skins with either [`crate::SkinMethod`]. Dual quaternion
//! skinning needs a rigid atlas ([`AnimAtlas::is_rigid`]).

use crate::{Clip, Mesh, Palette, Skeleton, Skin, SkinMethod};
use anim_math::{Mat4, Vec3};
use thiserror::Error;

/// How a joint's animation is stored in an [`AnimAtlas`] (see the [module docs](self)).
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
        } else {
            t.clamp(0.0, d)
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
        if i >= last {
            let c = self.first_frame + last;
            return FramePair { frame0: c, frame1: c, t: 0.0 };
        }
        FramePair { frame0: self.first_frame + i, frame1: self.first_frame + i + 1, t: (pos - f).clamp(0.0, 1.0) }
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

/// Why an atlas could not be baked, read or used.
#[derive(Debug, Error)]
pub enum AtlasError {
    /// Placeholder until the implementation lands.
    #[error("{0}")]
    Invalid(String),
}

/// Texel storage.
#[derive(Clone, Debug, PartialEq)]
pub enum Texels {
    /// RGBA32F.
    F32(Vec<[f32; 4]>),
    /// RGBA16F, as IEEE half bit patterns.
    F16(Vec<[u16; 4]>),
}

/// Several clips of one skin baked into one animation texture (see the [module docs](self)).
#[derive(Clone, Debug, PartialEq)]
pub struct AnimAtlas {
    layout: TextureLayout,
    format: TexelFormat,
    joint_names: Vec<String>,
    inverse_bind: Vec<Mat4>,
    width: u32,
    rigid: bool,
    clips: Vec<AtlasClip>,
    texels: Texels,
}

#[allow(unused_variables, clippy::missing_errors_doc)]
impl AnimAtlas {
    /// Bakes `clips` of `skeleton`, skinned by `skin`, into one atlas. `meshes` (the parts
    /// skinned by `skin`) give each clip's bounds.
    pub fn bake(
        skeleton: &Skeleton,
        skin: &Skin,
        meshes: &[&Mesh],
        clips: &[AtlasSource<'_>],
        settings: &BakeSettings,
    ) -> Result<Self, AtlasError> {
        todo!()
    }

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
        todo!()
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
    /// Texel bytes in image order, ready for upload.
    pub fn texel_bytes(&self) -> &[u8] {
        todo!()
    }
    /// The texel at column `x`, row `y`, decoded to f32.
    pub fn texel(&self, x: u32, y: u32) -> Option<[f32; 4]> {
        todo!()
    }
    /// Where clip `clip` is at `time` seconds, by its wrap or clamp rule.
    pub fn frame_pair(&self, clip: usize, time: f32) -> Option<FramePair> {
        todo!()
    }
    /// The palette the shaders compute for a character at `a`, blended with `b` by its
    /// weight when given. Dual quaternions need a rigid atlas.
    pub fn palette(
        &self,
        a: FramePair,
        b: Option<(FramePair, f32)>,
        method: SkinMethod,
        out: &mut Palette,
    ) -> Result<(), AtlasError> {
        todo!()
    }
}
