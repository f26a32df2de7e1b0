//! Animation textures (the book's chapter 15): clips of one skin baked at a fixed rate
//! into one RGBA texture, the *atlas*, that a GPU samples per character.
//!
//! # Layout
//! The atlas is an image `width × height` texels of 4 channels, stored row-major
//! (texel `(x, y)` is element `y · width + x` of [`AnimAtlas::texels`];
//! [`AnimAtlas::texel`] decodes one):
//! - **x is the frame.** Clip `c` occupies columns `first_frame .. first_frame + frame_count`
//!   ([`AtlasClip`]); its frame `f` is the clip sampled at `min(f / rate, duration)`, so
//!   the last frame is exactly the clip's end. `frame_count = ceil(duration · bake rate) + 1`
//!   (at least 2) and the clip's own `rate = (frame_count − 1) / duration`, a little above
//!   the bake rate so that the frames divide the clip evenly. A clip of zero duration has
//!   2 identical frames and `rate` = the bake rate. Clips follow each other in bake order
//!   from column 0; the width is at most [`MAX_WIDTH`].
//! - **y is `joint · texels_per_joint + k`**, `joint` being the *skin* joint (the index
//!   mesh influences use), `k` a texel of the [`TextureLayout`]:
//!   - [`TextureLayout::ModelTrs`] (the book's layout, 3 texels): the joint's model-space
//!     translation `(x, y, z, 0)`, rotation `(i, j, k, w)` and scale `(x, y, z, 0)` (the
//!     model matrix decomposed by [`Transform::from_matrix`]; shear is dropped). The
//!     shader builds `T·R·S` and multiplies by the joint's inverse bind matrix
//!     ([`AnimAtlas::inverse_bind`]). 4 influences × 2 frames × 3 texels = 24 fetches a
//!     vertex.
//!   - [`TextureLayout::SkinMatrix`] (3 texels): rows 0, 1 and 2 of the skinning matrix
//!     `model · inverse_bind` (the fourth row is `0 0 0 1`).
//!   - [`TextureLayout::SkinDualQuat`] (2 texels): the skinning dual quaternion's real
//!     part `(i, j, k, w)` and dual part `(i, j, k, w)`. Rigid skins only.
//! - Texels are 32-bit floats or half floats ([`TexelFormat`]; converted with
//!   `half::f16::from_f32`, round to nearest; a value beyond ±65504 is an error).
//!
//! Rotations and dual quaternions are sign-aligned with the previous frame of their clip,
//! so interpolating neighbours always takes the short way.
//!
//! # Interpolation (CPU reader and shaders do exactly this)
//! A character samples its clip at a [`FramePair`] `(frame0, frame1, t)`; an optional
//! second clip is blended in with weight `w` (the book's in-shader blend). Below,
//! `mix(a, b, t) = a·(1 − t) + b·t` (GLSL's `mix`) on all four channels, and
//! `nlerp(a, b, t) = normalize(mix(a, ±b, t))` with `b` negated when `dot(a, b) < 0`.
//! Per joint:
//! - `ModelTrs`: translation and scale `mix`, rotation `nlerp` — first between the two
//!   frames of each clip (by `t`), then between the clips (by `w`; the rotation is
//!   normalized after each of the two steps); then `M = T·R·S · inverse_bind`, `R` the
//!   matrix of the unit quaternion.
//! - `SkinMatrix`: the three rows are `mix`ed the same way (frames, then clips).
//! - `SkinDualQuat`: both parts are blended linearly (the second dual quaternion negated
//!   when the real parts' dot product is negative) and divided by the real part's length;
//!   again first between the frames, then between the clips, normalizing after each step.
//!   The matrix is the rotation of the real part `r` with translation
//!   `2 · vec(d · conj(r))`.
//!
//! The resulting palette skins with either [`anim_core::skin::SkinMethod`]. For
//! [`anim_core::skin::SkinMethod::Lbs`] it holds the matrices `M` above. Dual quaternion skinning
//! needs a rigid atlas ([`AnimAtlas::is_rigid`]: every skinning matrix of every frame is
//! orthonormal within [`RIGID_TOLERANCE`](anim_core::skin::palette::RIGID_TOLERANCE)), and its palette is a *rigid*
//! [`anim_core::skin::DqPalette`] (every bind-space scale the identity, as the shaders, which carry
//! no scale for DQ, assume):
//! - `SkinDualQuat`: the interpolated dual quaternion `(r, d)` itself, not renormalized
//!   further.
//! - `ModelTrs` and `SkinMatrix`: the rigid part of `M` as [`dual::from_rigid_matrix`]
//!   reads it: the rotation of `M`'s column-normalized 3×3 basis, and `M`'s translation.
//!   Interpolation between rigid frames shrinks `M` slightly (a lerped rotation is a little
//!   shorter than a rotation); that shrink is dropped, not kept as a scale.
//!
//! [`AnimAtlas::palette`] is this computation on the CPU, and [`bake_error`] measures how
//! far it is from the source clips.
//!
//! # File format
//! [`AnimAtlas::write_to`] and [`AnimAtlas::read_from`] (and [`AnimAtlas::save`] /
//! [`AnimAtlas::load`]) use one little-endian binary layout, no padding. `u32` and `f32`
//! are 4 bytes, `u8` 1, a *string* is a `u32` byte length (at most [`MAX_NAME_BYTES`])
//! followed by that many bytes of UTF-8.
//!
//! | Field | Type | Meaning |
//! |---|---|---|
//! | magic | 8 bytes | `ANIMATLS` ([`FILE_MAGIC`]) |
//! | version | `u32` | `1` ([`FILE_VERSION`]) |
//! | layout | `u32` | `0` model-trs, `1` matrix, `2` dq |
//! | format | `u32` | `0` f32, `1` f16 |
//! | joint count `J` | `u32` | skin joints, at most [`MAX_FILE_JOINTS`]; `J · texels_per_joint` ≤ [`MAX_HEIGHT`] |
//! | width `W` | `u32` | columns, `2 ..= 16384` |
//! | rigid | `u8` | `0` or `1` (must be `1` for the dq layout) |
//! | clip count `C` | `u32` | `1 ..= W / 2` |
//! | `C` clips | | each: name (string), first frame `u32`, frame count `u32` (≥ 2, `first + count ≤ W`), rate `f32` (> 0), duration `f32` (≥ 0), looping `u8` (`0`/`1`), bounds min `x y z`, max `x y z` (6 × `f32`) |
//! | `J` joint names | strings | skin order |
//! | `J` inverse binds | 16 × `f32` each | column-major |
//! | texels | `W · J · texels_per_joint` texels | image order (row `y`, then column `x`), 4 channels each: `f32`, or `f16` bit patterns as `u16` |
//!
//! The file ends after the last texel. Every float must be finite. The reader checks
//! every field as it goes, reads strings and texels in bounded chunks (it never reserves
//! memory for data the stream has not delivered), and reports the first fault as a typed
//! [`AtlasError`] naming the field; it never panics.

use anim_core::clip::{Clip, TimePolicy};
use anim_core::pose::Skeleton;
use anim_core::skin::skinning;
use anim_core::skin::skinning::{NormalMode, SkinningInput, SkinningOutput};
use anim_core::skin::{Mesh, Palette, Skin, SkinMethod};
use anim_math::affine_mul;
use anim_math::nalgebra::{DualQuaternion, Quaternion};
use anim_math::{DualQuat, Mat4, Transform, Vec3, dual};
use std::fmt;
use std::io::{Read, Write};
use std::path::Path;
use std::str::FromStr;
use thiserror::Error;

/// Version of the atlas file format this crate writes and reads.
pub const FILE_VERSION: u32 = 1;

/// Longest string (clip or joint name) an atlas file may hold, in bytes.
pub const MAX_NAME_BYTES: u32 = 64 * 1024;

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

/// The widest atlas [`AnimAtlas::bake`] makes and [`AnimAtlas::read_from`] accepts, in
/// columns (frames of all clips): the texture width every Vulkan 1.x GPU of the project's
/// targets supports.
pub const MAX_WIDTH: u32 = 16384;

/// The tallest atlas (rows: `joint_count · texels_per_joint`), for the same reason as
/// [`MAX_WIDTH`].
pub const MAX_HEIGHT: u32 = 16384;

/// Why an atlas could not be baked, read or used. Every variant names the element at fault.
#[derive(Debug, Error)]
pub enum AtlasError {
    /// [`AnimAtlas::bake`] was given no clip.
    #[error("no clip to bake")]
    NoClips,
    /// The bake rate is not positive and finite.
    #[error("bake rate {0} is not a positive finite number of frames a second")]
    BadRate(f32),
    /// The clips need more columns than [`MAX_WIDTH`].
    #[error("the clips need {width} frames (columns), more than the maximum {max}")]
    TooWide {
        /// Columns needed (a lower bound when the count overflowed).
        width: u64,
        /// The limit.
        max: u32,
    },
    /// The skin needs more rows than [`MAX_HEIGHT`].
    #[error("{joints} skin joints need {height} rows, more than the maximum {max}")]
    TooTall {
        /// Skin joints.
        joints: usize,
        /// Rows needed.
        height: u64,
        /// The limit.
        max: u32,
    },
    /// A clip could not be sampled on the skeleton (for example it animates a joint the
    /// skeleton lacks).
    #[error("clip {index} ({name:?}): {source}")]
    Clip {
        /// Index of the clip in the bake list.
        index: usize,
        /// Its name.
        name: String,
        /// What went wrong.
        source: anim_core::clip::ClipError,
    },
    /// The skin does not fit the skeleton, or a pose operation failed.
    #[error(transparent)]
    Pose(#[from] anim_core::pose::PoseError),
    /// A mesh's influences use skin joints the skin does not have.
    #[error("mesh {mesh} uses skin joints up to {needed}, but the skin has {joints}")]
    MeshJoints {
        /// Index of the mesh.
        mesh: usize,
        /// One more than the largest skin joint it uses.
        needed: usize,
        /// Skin joints.
        joints: usize,
    },
    /// A mesh could not be skinned.
    #[error("mesh {mesh}: {source}")]
    Skinning {
        /// Index of the mesh.
        mesh: usize,
        /// What went wrong.
        source: anim_core::skin::SkinningError,
    },
    /// [`TextureLayout::SkinDualQuat`] asked for a skin whose skinning matrix is not rigid.
    #[error(
        "clip {clip} ({name:?}) frame {frame}: skin joint {joint} ({joint_name:?}) carries scale or shear, \
         which the dual-quaternion layout cannot store"
    )]
    NotRigid {
        /// Index of the clip.
        clip: usize,
        /// Its name.
        name: String,
        /// Frame of the clip.
        frame: u32,
        /// Skin joint.
        joint: usize,
        /// The joint's name.
        joint_name: String,
    },
    /// A value does not fit a half float ([`TexelFormat::F16`] holds magnitudes up to 65504).
    #[error(
        "clip {clip} ({name:?}) frame {frame}: skin joint {joint} texel {texel} holds {value}, too large for a half float"
    )]
    HalfOverflow {
        /// Index of the clip.
        clip: usize,
        /// Its name.
        name: String,
        /// Frame of the clip.
        frame: u32,
        /// Skin joint.
        joint: usize,
        /// Texel of the joint (`0 .. texels_per_joint`).
        texel: u32,
        /// The value.
        value: f32,
    },
    /// Dual-quaternion skinning was asked of an atlas that is not rigid.
    #[error("dual-quaternion skinning needs a rigid atlas; this one has scaled joints")]
    DqNeedsRigid,
    /// A [`FramePair`] names a column the atlas does not have.
    #[error("{which} column {column} is outside the atlas width {width}")]
    ColumnOutOfRange {
        /// "clip A frame0", "clip B frame1", …
        which: &'static str,
        /// The column.
        column: u32,
        /// Atlas width.
        width: u32,
    },
    /// An interpolation factor or blend weight is not finite.
    #[error("{which} is {value}, not a finite number")]
    NonFiniteFactor {
        /// "clip A factor", "clip B factor" or "clip B weight".
        which: &'static str,
        /// The value.
        value: f32,
    },
    /// A clip index is not in the atlas's clip table.
    #[error("no clip {index}: the atlas has {count}")]
    NoSuchClip {
        /// The index.
        index: usize,
        /// Clips in the atlas.
        count: usize,
    },
    /// [`bake_error`] was given another number of clips than the atlas holds.
    #[error("the atlas holds {atlas} clips but {given} were given")]
    ClipCount {
        /// Clips in the atlas.
        atlas: usize,
        /// Clips given.
        given: usize,
    },
    /// [`bake_error`] was given meshes with no extent (no vertex, or all in one point).
    #[error("the meshes have no extent to measure the error against")]
    EmptyMeshes,
    /// The atlas was baked for a skin with another joint count.
    #[error("the atlas was baked for {atlas} skin joints, the model's skin has {model}")]
    JointCount {
        /// Joints in the atlas.
        atlas: usize,
        /// Joints in the model's skin.
        model: usize,
    },
    /// The atlas was baked for a skin with other joint names.
    #[error("skin joint {index} is {atlas:?} in the atlas but {model:?} in the model")]
    JointName {
        /// Skin joint index.
        index: usize,
        /// Its name in the atlas.
        atlas: String,
        /// Its name in the model.
        model: String,
    },
    /// An I/O error other than a short read.
    #[error("atlas I/O: {0}")]
    Io(#[from] std::io::Error),
    /// An atlas file could not be opened or created.
    #[error("{path}: {source}")]
    File {
        /// The file.
        path: std::path::PathBuf,
        /// What went wrong.
        source: Box<AtlasError>,
    },
    /// The stream is not an atlas file.
    #[error("not an animation atlas (bad magic {0:02x?})")]
    BadMagic([u8; 8]),
    /// The file has a version this reader does not know.
    #[error("atlas file version {0} is not supported (expected {FILE_VERSION})")]
    UnsupportedVersion(u32),
    /// The stream ended inside a field.
    #[error("atlas file truncated in {what}")]
    Truncated {
        /// The field being read.
        what: String,
    },
    /// A field has a value no atlas can have.
    #[error("atlas file: {what} is {value}, {why}")]
    BadField {
        /// The field.
        what: String,
        /// Its value.
        value: String,
        /// What it should be.
        why: &'static str,
    },
    /// A string field is longer than [`MAX_NAME_BYTES`].
    #[error("atlas file: {what} declares {len} bytes, more than the maximum {max}")]
    NameTooLong {
        /// The field.
        what: String,
        /// Declared length.
        len: u64,
        /// The limit.
        max: u32,
    },
    /// A string field is not UTF-8.
    #[error("atlas file: {what} is not UTF-8")]
    NotUtf8 {
        /// The field.
        what: String,
    },
    /// A float field is NaN or infinite.
    #[error("atlas file: {what} is not finite ({value})")]
    NonFinite {
        /// The field.
        what: String,
        /// Its value.
        value: f32,
    },
    /// A clip's columns are not inside the atlas.
    #[error("atlas file: clip {clip} ({name:?}) covers columns {first}..{end}, outside the width {width}")]
    ClipRange {
        /// Index of the clip.
        clip: usize,
        /// Its name.
        name: String,
        /// First column.
        first: u32,
        /// One past its last column.
        end: u64,
        /// Atlas width.
        width: u32,
    },
    /// Bytes follow the last texel.
    #[error("atlas file: unexpected bytes after the texels")]
    TrailingBytes,
}

/// A name that is no [`TextureLayout`].
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("unknown texture layout {0:?} (expected \"model-trs\", \"matrix\" or \"dq\")")]
pub struct UnknownTextureLayout(pub String);

/// A name that is no [`TexelFormat`].
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("unknown texel format {0:?} (expected \"f32\" or \"f16\")")]
pub struct UnknownTexelFormat(pub String);

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

    const fn code(self) -> u32 {
        match self {
            Self::ModelTrs => 0,
            Self::SkinMatrix => 1,
            Self::SkinDualQuat => 2,
        }
    }

    fn from_code(c: u32) -> Option<Self> {
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

    const fn code(self) -> u32 {
        match self {
            Self::F32 => 0,
            Self::F16 => 1,
        }
    }

    fn from_code(c: u32) -> Option<Self> {
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

/// Frames of a clip of `duration` seconds baked at `rate`: `ceil(duration · rate) + 1`, at
/// least 2; `None` beyond [`MAX_WIDTH`].
fn frame_count(duration: f32, rate: f32) -> Option<u32> {
    let n = (f64::from(duration) * f64::from(rate)).ceil() + 1.0;
    if !(n.is_finite() && n <= f64::from(MAX_WIDTH)) {
        return None;
    }
    Some((n as u32).max(2))
}

/// Bounds accumulated over skinned positions.
struct Bounds {
    min: Vec3,
    max: Vec3,
    any: bool,
}

impl Bounds {
    fn new() -> Self {
        Self { min: Vec3::repeat(f32::INFINITY), max: Vec3::repeat(f32::NEG_INFINITY), any: false }
    }
    fn add(&mut self, points: &[Vec3]) {
        for p in points {
            self.min = self.min.inf(p);
            self.max = self.max.sup(p);
            self.any = true;
        }
    }
    fn get(&self) -> (Vec3, Vec3) {
        if self.any { (self.min, self.max) } else { (Vec3::zeros(), Vec3::zeros()) }
    }
}

/// Checks that every mesh's influences fit a skin of `joints` joints.
fn check_meshes(meshes: &[&Mesh], joints: usize) -> Result<(), AtlasError> {
    for (i, m) in meshes.iter().enumerate() {
        if let Some(inf) = &m.influences
            && inf.joint_bound() > joints
        {
            return Err(AtlasError::MeshJoints { mesh: i, needed: inf.joint_bound(), joints });
        }
    }
    Ok(())
}

/// Linear-blend skins every mesh with `palette` into `out` (one buffer a mesh, already of
/// the mesh's vertex count). Meshes without influences keep their bind positions.
fn skin_meshes(meshes: &[&Mesh], palette: &[Mat4], out: &mut [Vec<Vec3>]) -> Result<(), AtlasError> {
    for (i, (m, o)) in meshes.iter().zip(out.iter_mut()).enumerate() {
        match &m.influences {
            Some(inf) => {
                let input = SkinningInput { influences: inf, positions: &m.positions, normals: None };
                let mut output = SkinningOutput { positions: o, normals: None };
                skinning::linear_blend(&input, palette, NormalMode::Direct, &mut output)
                    .map_err(|source| AtlasError::Skinning { mesh: i, source })?;
            }
            None => o.copy_from_slice(&m.positions),
        }
    }
    Ok(())
}

/// `a · (1 − t) + b · t`, GLSL's `mix`.
#[inline(always)]
fn mix4(a: [f32; 4], b: [f32; 4], t: f32) -> [f32; 4] {
    let s = 1.0 - t;
    [a[0] * s + b[0] * t, a[1] * s + b[1] * t, a[2] * s + b[2] * t, a[3] * s + b[3] * t]
}

#[inline(always)]
fn dot4(a: [f32; 4], b: [f32; 4]) -> f32 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3]
}

#[inline(always)]
fn neg4(a: [f32; 4]) -> [f32; 4] {
    [-a[0], -a[1], -a[2], -a[3]]
}

#[inline(always)]
fn scale4(a: [f32; 4], s: f32) -> [f32; 4] {
    [a[0] * s, a[1] * s, a[2] * s, a[3] * s]
}

/// `normalize(mix(a, ±b, t))`, `b` negated when `dot(a, b) < 0`. A zero-length result
/// (opposite inputs at exactly the middle) gives `a`.
#[inline(always)]
fn nlerp4(a: [f32; 4], b: [f32; 4], t: f32) -> [f32; 4] {
    let b = if dot4(a, b) < 0.0 { neg4(b) } else { b };
    let v = mix4(a, b, t);
    let n = dot4(v, v).sqrt();
    if n > 0.0 { scale4(v, 1.0 / n) } else { a }
}

/// Blends two dual quaternions `(real, dual)` by `t`, the second sign-flipped when the real
/// parts' dot product is negative, then divides both parts by the real part's length.
#[inline(always)]
fn dq_mix(a: ([f32; 4], [f32; 4]), b: ([f32; 4], [f32; 4]), t: f32) -> ([f32; 4], [f32; 4]) {
    let b = if dot4(a.0, b.0) < 0.0 { (neg4(b.0), neg4(b.1)) } else { b };
    let (r, d) = (mix4(a.0, b.0, t), mix4(a.1, b.1, t));
    let n = dot4(r, r).sqrt();
    if n > 0.0 { (scale4(r, 1.0 / n), scale4(d, 1.0 / n)) } else { a }
}

/// Column-major rotation matrix columns of the unit quaternion `(i, j, k, w)`.
#[inline(always)]
fn quat_columns(q: [f32; 4]) -> [[f32; 3]; 3] {
    let [x, y, z, w] = q;
    [
        [1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y + z * w), 2.0 * (x * z - y * w)],
        [2.0 * (x * y - z * w), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z + x * w)],
        [2.0 * (x * z + y * w), 2.0 * (y * z - x * w), 1.0 - 2.0 * (x * x + y * y)],
    ]
}

/// The matrix `T · R · S`.
#[inline(always)]
fn trs_matrix(t: [f32; 4], q: [f32; 4], s: [f32; 4]) -> Mat4 {
    let c = quat_columns(q);
    Mat4::new(
        c[0][0] * s[0],
        c[1][0] * s[1],
        c[2][0] * s[2],
        t[0],
        c[0][1] * s[0],
        c[1][1] * s[1],
        c[2][1] * s[2],
        t[1],
        c[0][2] * s[0],
        c[1][2] * s[1],
        c[2][2] * s[2],
        t[2],
        0.0,
        0.0,
        0.0,
        1.0,
    )
}

/// The matrix of a unit dual quaternion: rotation of the real part `r`, translation
/// `2 · vec(d · conj(r))`.
#[inline(always)]
fn dq_matrix(r: [f32; 4], d: [f32; 4]) -> Mat4 {
    let c = quat_columns(r);
    let (rv, rw) = (Vec3::new(r[0], r[1], r[2]), r[3]);
    let (dv, dw) = (Vec3::new(d[0], d[1], d[2]), d[3]);
    let t = (dv * rw - rv * dw + rv.cross(&dv)) * 2.0;
    Mat4::new(
        c[0][0], c[1][0], c[2][0], t.x, c[0][1], c[1][1], c[2][1], t.y, c[0][2], c[1][2], c[2][2], t.z, 0.0, 0.0, 0.0,
        1.0,
    )
}

/// Which sample of the atlas a palette reads: a frame pair of clip A, and optionally one
/// of clip B with its weight.
struct Sample {
    a: FramePair,
    b: Option<(FramePair, f32)>,
}

impl AnimAtlas {
    /// Bakes `clips` of `skeleton`, skinned by `skin`, into one atlas. `meshes` (the parts
    /// skinned by `skin`; their influences index skin joints) give each clip's bounds: every
    /// mesh is linear-blend skinned with the exact skinning matrices of every frame (a mesh
    /// without influences counts with its bind positions; no vertex at all gives zero
    /// bounds).
    ///
    /// Clip `c` gets `frame_count = ceil(duration · rate) + 1` columns (at least 2) and its
    /// own rate `(frame_count − 1) / duration`, so its last frame is exactly its end. A
    /// clip of zero duration gets 2 identical frames and the bake rate.
    ///
    /// Every frame starts from the skeleton's rest pose (channels a clip does not animate
    /// keep their rest values) and is sampled with [`TimePolicy::Clamp`].
    ///
    /// # Errors
    /// No clip, a rate that is not positive and finite, the atlas wider than
    /// [`MAX_WIDTH`] or taller than [`MAX_HEIGHT`], a clip animating a joint the skeleton
    /// lacks, a skin joint out of the skeleton, a mesh using joints the skin lacks, or a
    /// non-rigid skinning matrix with [`TextureLayout::SkinDualQuat`].
    pub fn bake(
        skeleton: &Skeleton,
        skin: &Skin,
        meshes: &[&Mesh],
        clips: &[AtlasSource<'_>],
        settings: &BakeSettings,
    ) -> Result<Self, AtlasError> {
        if clips.is_empty() {
            return Err(AtlasError::NoClips);
        }
        let rate = settings.rate;
        if !(rate.is_finite() && rate > 0.0) {
            return Err(AtlasError::BadRate(rate));
        }
        let joints = skin.len();
        if let Some((index, &joint)) = skin.joints().iter().enumerate().find(|(_, j)| **j >= skeleton.len()) {
            return Err(anim_core::pose::PoseError::JointOutOfRange { index, joint, count: skeleton.len() }.into());
        }
        let tpj = settings.layout.texels_per_joint();
        let height = joints as u64 * u64::from(tpj);
        if height > u64::from(MAX_HEIGHT) {
            return Err(AtlasError::TooTall { joints, height, max: MAX_HEIGHT });
        }
        check_meshes(meshes, joints)?;
        // The clip table first: the width must be known before any texel is written.
        let mut table = Vec::with_capacity(clips.len());
        let mut width = 0u64;
        for (index, src) in clips.iter().enumerate() {
            let clip = src.clip;
            clip.check_joints(skeleton.len()).map_err(|source| AtlasError::Clip {
                index,
                name: clip.name().to_owned(),
                source,
            })?;
            let duration = clip.duration();
            let n = frame_count(duration, rate)
                .ok_or(AtlasError::TooWide { width: width + u64::from(MAX_WIDTH) + 1, max: MAX_WIDTH })?;
            let first = width;
            width += u64::from(n);
            if width > u64::from(MAX_WIDTH) {
                return Err(AtlasError::TooWide { width, max: MAX_WIDTH });
            }
            let clip_rate = if duration > 0.0 { (n - 1) as f32 / duration } else { rate };
            table.push(AtlasClip {
                name: clip.name().to_owned(),
                first_frame: first as u32,
                frame_count: n,
                rate: clip_rate,
                duration,
                looping: src.looping,
                bounds: (Vec3::zeros(), Vec3::zeros()),
            });
        }
        let width = width as u32;
        let w = width as usize;
        let tpj = tpj as usize;
        let mut image = vec![[0.0f32; 4]; w * joints * tpj];
        let rest = skeleton.rest_pose();
        let mut pose = rest.clone();
        let mut model = vec![Mat4::identity(); skeleton.len()];
        let mut pal = vec![Mat4::identity(); joints];
        let mut skinned: Vec<Vec<Vec3>> = meshes.iter().map(|m| vec![Vec3::zeros(); m.positions.len()]).collect();
        let (skin_joints, ibm) = (skin.joints(), skin.inverse_bind());
        let mut rigid = true;
        for (ci, (src, entry)) in clips.iter().zip(table.iter_mut()).enumerate() {
            let clip = src.clip;
            let mut bounds = Bounds::new();
            for f in 0..entry.frame_count {
                let time = if f + 1 == entry.frame_count {
                    entry.duration
                } else {
                    (f as f32 / entry.rate).min(entry.duration)
                };
                pose.locals_mut().copy_from_slice(rest.locals());
                clip.sample(time, TimePolicy::Clamp, &mut pose).map_err(|source| AtlasError::Clip {
                    index: ci,
                    name: clip.name().to_owned(),
                    source,
                })?;
                pose.local_to_model(skeleton, &mut model)?;
                let x = (entry.first_frame + f) as usize;
                for (j, ((p, &sj), ib)) in pal.iter_mut().zip(skin_joints).zip(ibm).enumerate() {
                    let m = &model[sj];
                    *p = affine_mul(m, ib);
                    let joint_rigid = anim_core::skin::palette::is_orthonormal(p);
                    rigid &= joint_rigid;
                    let row = j * tpj;
                    let at = |k: usize| (row + k) * w + x;
                    // The same texel of the previous frame of this clip, for sign alignment.
                    let prev = |img: &[[f32; 4]], k: usize| if f > 0 { Some(img[at(k) - 1]) } else { None };
                    match settings.layout {
                        TextureLayout::ModelTrs => {
                            let tr = Transform::from_matrix(m);
                            let mut q: [f32; 4] = tr.rotation.coords.into();
                            if prev(&image, 1).is_some_and(|pq| dot4(pq, q) < 0.0) {
                                q = neg4(q);
                            }
                            let (t, s) = (tr.translation, tr.scale);
                            image[at(0)] = [t.x, t.y, t.z, 0.0];
                            image[at(1)] = q;
                            image[at(2)] = [s.x, s.y, s.z, 0.0];
                        }
                        TextureLayout::SkinMatrix => {
                            for r in 0..3 {
                                image[at(r)] = [p[(r, 0)], p[(r, 1)], p[(r, 2)], p[(r, 3)]];
                            }
                        }
                        TextureLayout::SkinDualQuat => {
                            if !joint_rigid {
                                return Err(AtlasError::NotRigid {
                                    clip: ci,
                                    name: clip.name().to_owned(),
                                    frame: f,
                                    joint: j,
                                    joint_name: skeleton.name(sj).unwrap_or_default().to_owned(),
                                });
                            }
                            let dq = dual::from_rigid_matrix(p);
                            let mut r: [f32; 4] = dq.as_ref().real.coords.into();
                            let mut d: [f32; 4] = dq.as_ref().dual.coords.into();
                            if prev(&image, 0).is_some_and(|pr| dot4(pr, r) < 0.0) {
                                r = neg4(r);
                                d = neg4(d);
                            }
                            image[at(0)] = r;
                            image[at(1)] = d;
                        }
                    }
                }
                skin_meshes(meshes, &pal, &mut skinned)?;
                for s in &skinned {
                    bounds.add(s);
                }
            }
            entry.bounds = bounds.get();
        }
        let texels = match settings.format {
            TexelFormat::F32 => Texels::F32(image),
            TexelFormat::F16 => {
                let half: Vec<[u16; 4]> = image.iter().map(|t| t.map(|v| half::f16::from_f32(v).to_bits())).collect();
                let overflow = half.iter().zip(&image).enumerate().find_map(|(i, (h, f))| {
                    (0..4).find(|&c| !half::f16::from_bits(h[c]).is_finite()).map(|c| (i, f[c]))
                });
                if let Some((i, value)) = overflow {
                    let (x, y) = ((i % w) as u32, i / w);
                    let clip = table.iter().position(|c| x < c.first_frame + c.frame_count).unwrap_or(0);
                    let c = &table[clip];
                    return Err(AtlasError::HalfOverflow {
                        clip,
                        name: c.name.clone(),
                        frame: x - c.first_frame.min(x),
                        joint: y / tpj,
                        texel: (y % tpj) as u32,
                        value,
                    });
                }
                Texels::F16(half)
            }
        };
        let joint_names =
            skin_joints.iter().map(|&j| skeleton.name(j).unwrap_or_default().to_owned()).collect::<Vec<_>>();
        Ok(Self {
            layout: settings.layout,
            format: settings.format,
            joint_names,
            inverse_bind: ibm.to_vec(),
            width,
            rigid,
            clips: table,
            texels,
        })
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

    /// The palette the shaders compute for a character at `a`, blended with `b` by its
    /// weight when given. Dual quaternions need a rigid atlas.
    ///
    /// With [`SkinMethod::Lbs`] this allocates nothing once `out` is a matrix palette of
    /// the atlas's joint count. [`SkinMethod::Dq`] on the [`TextureLayout::ModelTrs`] and
    /// [`TextureLayout::SkinMatrix`] layouts needs a matrix scratch and allocates one each
    /// call: use [`AnimAtlas::palette_with_scratch`] in a loop.
    ///
    /// # Errors
    /// A column outside the atlas, a non-finite factor or weight, or
    /// [`SkinMethod::Dq`] on an atlas that is not rigid.
    pub fn palette(
        &self,
        a: FramePair,
        b: Option<(FramePair, f32)>,
        method: SkinMethod,
        out: &mut Palette,
    ) -> Result<(), AtlasError> {
        let mut scratch = Vec::new();
        self.palette_with_scratch(a, b, method, out, &mut scratch)
    }

    /// [`AnimAtlas::palette`] with a caller-owned matrix scratch (used by
    /// [`SkinMethod::Dq`] on the [`TextureLayout::ModelTrs`] and [`TextureLayout::SkinMatrix`]
    /// layouts only): allocates nothing once `out` and `scratch` have the atlas's joint
    /// count.
    ///
    /// Each skin joint's entry is computed as the [module docs](self) say the shaders do:
    /// for [`SkinMethod::Lbs`] the interpolated skinning matrix; for [`SkinMethod::Dq`] a
    /// rigid [`DqPalette`](anim_core::skin::DqPalette) (identity scales) holding the interpolated dual
    /// quaternion itself with [`TextureLayout::SkinDualQuat`], and the rigid part
    /// [`dual::from_rigid_matrix`] of the interpolated skinning matrix with the other
    /// layouts.
    ///
    /// # Errors
    /// As [`AnimAtlas::palette`].
    pub fn palette_with_scratch(
        &self,
        a: FramePair,
        b: Option<(FramePair, f32)>,
        method: SkinMethod,
        out: &mut Palette,
        scratch: &mut Vec<Mat4>,
    ) -> Result<(), AtlasError> {
        let sample = self.check_sample(a, b)?;
        let n = self.joint_count();
        match method {
            SkinMethod::Lbs => {
                out.set_method(SkinMethod::Lbs);
                if let Palette::Matrices(m) = out {
                    m.resize(n, Mat4::identity());
                    self.write_matrices(&sample, m);
                }
            }
            SkinMethod::Dq => {
                if !self.rigid {
                    return Err(AtlasError::DqNeedsRigid);
                }
                out.set_method(SkinMethod::Dq);
                if let Palette::DualQuats(d) = out {
                    if self.layout == TextureLayout::SkinDualQuat {
                        // The shaders hand the interpolated dual quaternion on as it is.
                        d.set_rigid(n, |j| {
                            let (r, d) = self.joint_dual_quat(&sample, j);
                            let q = |v: [f32; 4]| Quaternion::new(v[3], v[0], v[1], v[2]);
                            DualQuat::new_unchecked(DualQuaternion::from_real_and_dual(q(r), q(d)))
                        });
                    } else {
                        // The rigid part of each interpolated matrix: the shaders' conversion,
                        // which drops the slight shrink of interpolated rotations.
                        scratch.resize(n, Mat4::identity());
                        self.write_matrices(&sample, scratch);
                        d.set_rigid(n, |j| dual::from_rigid_matrix(&scratch[j]));
                    }
                }
            }
        }
        Ok(())
    }

    fn check_sample(&self, a: FramePair, b: Option<(FramePair, f32)>) -> Result<Sample, AtlasError> {
        let width = self.width;
        let col = |which: &'static str, column: u32| {
            if column < width { Ok(()) } else { Err(AtlasError::ColumnOutOfRange { which, column, width }) }
        };
        let finite = |which: &'static str, value: f32| {
            if value.is_finite() { Ok(()) } else { Err(AtlasError::NonFiniteFactor { which, value }) }
        };
        col("clip A frame0", a.frame0)?;
        col("clip A frame1", a.frame1)?;
        finite("clip A factor", a.t)?;
        if let Some((pb, w)) = b {
            col("clip B frame0", pb.frame0)?;
            col("clip B frame1", pb.frame1)?;
            finite("clip B factor", pb.t)?;
            finite("clip B weight", w)?;
        }
        Ok(Sample { a, b })
    }

    /// Texel `k` of joint `j` at column `x` (all in range: checked by `check_sample`).
    #[inline(always)]
    fn fetch(&self, x: u32, j: usize, k: usize) -> [f32; 4] {
        let tpj = self.layout.texels_per_joint() as usize;
        let i = (j * tpj + k) * self.width as usize + x as usize;
        self.texels.get(i).unwrap_or([0.0; 4])
    }

    /// The skinning matrix of every joint for `s`, as the shaders compute it.
    fn write_matrices(&self, s: &Sample, out: &mut [Mat4]) {
        for (j, o) in out.iter_mut().enumerate() {
            *o = match self.layout {
                TextureLayout::ModelTrs => {
                    let trs = |p: FramePair| {
                        let f = |k| (self.fetch(p.frame0, j, k), self.fetch(p.frame1, j, k));
                        let ((t0, t1), (q0, q1), (s0, s1)) = (f(0), f(1), f(2));
                        (mix4(t0, t1, p.t), nlerp4(q0, q1, p.t), mix4(s0, s1, p.t))
                    };
                    let (mut t, mut q, mut sc) = trs(s.a);
                    if let Some((pb, w)) = s.b {
                        let (tb, qb, sb) = trs(pb);
                        t = mix4(t, tb, w);
                        q = nlerp4(q, qb, w);
                        sc = mix4(sc, sb, w);
                    }
                    let ib = self.inverse_bind.get(j).copied().unwrap_or_else(Mat4::identity);
                    affine_mul(&trs_matrix(t, q, sc), &ib)
                }
                TextureLayout::SkinMatrix => {
                    let rows = |p: FramePair| {
                        let r = |k| mix4(self.fetch(p.frame0, j, k), self.fetch(p.frame1, j, k), p.t);
                        [r(0), r(1), r(2)]
                    };
                    let mut r = rows(s.a);
                    if let Some((pb, w)) = s.b {
                        let rb = rows(pb);
                        for k in 0..3 {
                            r[k] = mix4(r[k], rb[k], w);
                        }
                    }
                    Mat4::new(
                        r[0][0], r[0][1], r[0][2], r[0][3], r[1][0], r[1][1], r[1][2], r[1][3], r[2][0], r[2][1],
                        r[2][2], r[2][3], 0.0, 0.0, 0.0, 1.0,
                    )
                }
                TextureLayout::SkinDualQuat => {
                    let (r, d) = self.joint_dual_quat(s, j);
                    dq_matrix(r, d)
                }
            };
        }
    }

    /// The interpolated dual quaternion (real, dual) of joint `j` for `s`, as the shaders
    /// compute it ([`TextureLayout::SkinDualQuat`] only).
    #[inline(always)]
    fn joint_dual_quat(&self, s: &Sample, j: usize) -> ([f32; 4], [f32; 4]) {
        let dq = |p: FramePair| {
            let f = |x| (self.fetch(x, j, 0), self.fetch(x, j, 1));
            dq_mix(f(p.frame0), f(p.frame1), p.t)
        };
        let mut q = dq(s.a);
        if let Some((pb, w)) = s.b {
            q = dq_mix(q, dq(pb), w);
        }
        q
    }
}

/// Magic bytes opening an atlas file.
pub const FILE_MAGIC: [u8; 8] = *b"ANIMATLS";

/// Most skin joints an atlas file may declare.
pub const MAX_FILE_JOINTS: u32 = 65536;

/// Texels converted or read at a time when streaming the image.
const CHUNK_TEXELS: usize = 4096;

/// Little-endian writer helpers.
struct Out<'a, W: Write> {
    w: &'a mut W,
}

impl<W: Write> Out<'_, W> {
    fn bytes(&mut self, b: &[u8]) -> Result<(), AtlasError> {
        Ok(self.w.write_all(b)?)
    }
    fn u32(&mut self, v: u32) -> Result<(), AtlasError> {
        self.bytes(&v.to_le_bytes())
    }
    fn u8(&mut self, v: u8) -> Result<(), AtlasError> {
        self.bytes(&[v])
    }
    fn f32(&mut self, v: f32) -> Result<(), AtlasError> {
        self.bytes(&v.to_le_bytes())
    }
    fn str(&mut self, s: &str) -> Result<(), AtlasError> {
        let len = u32::try_from(s.len()).ok().filter(|l| *l <= MAX_NAME_BYTES).ok_or_else(|| {
            AtlasError::NameTooLong { what: format!("name {s:.32?}…"), len: s.len() as u64, max: MAX_NAME_BYTES }
        })?;
        self.u32(len)?;
        self.bytes(s.as_bytes())
    }
}

/// Little-endian reader helpers: every short read is [`AtlasError::Truncated`] naming the
/// field, every float is checked finite.
struct In<'a, R: Read> {
    r: &'a mut R,
}

impl<R: Read> In<'_, R> {
    fn exact(&mut self, buf: &mut [u8], what: &dyn Fn() -> String) -> Result<(), AtlasError> {
        self.r.read_exact(buf).map_err(|e| {
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                AtlasError::Truncated { what: what() }
            } else {
                AtlasError::Io(e)
            }
        })
    }
    fn array<const N: usize>(&mut self, what: &dyn Fn() -> String) -> Result<[u8; N], AtlasError> {
        let mut b = [0u8; N];
        self.exact(&mut b, what)?;
        Ok(b)
    }
    fn u32(&mut self, what: &dyn Fn() -> String) -> Result<u32, AtlasError> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }
    fn flag(&mut self, what: &dyn Fn() -> String) -> Result<bool, AtlasError> {
        match self.array::<1>(what)?[0] {
            0 => Ok(false),
            1 => Ok(true),
            v => Err(AtlasError::BadField { what: what(), value: v.to_string(), why: "expected 0 or 1" }),
        }
    }
    fn f32(&mut self, what: &dyn Fn() -> String) -> Result<f32, AtlasError> {
        let v = f32::from_le_bytes(self.array(what)?);
        if v.is_finite() { Ok(v) } else { Err(AtlasError::NonFinite { what: what(), value: v }) }
    }
    fn string(&mut self, what: &dyn Fn() -> String) -> Result<String, AtlasError> {
        let len = self.u32(what)?;
        if len > MAX_NAME_BYTES {
            return Err(AtlasError::NameTooLong { what: what(), len: u64::from(len), max: MAX_NAME_BYTES });
        }
        let mut buf = Vec::new();
        // `len` is capped above, and `take` stops at the end of the stream, so this
        // allocates at most what the stream holds (and never more than 64 KiB).
        self.r.by_ref().take(u64::from(len)).read_to_end(&mut buf)?;
        if buf.len() != len as usize {
            return Err(AtlasError::Truncated { what: what() });
        }
        String::from_utf8(buf).map_err(|_| AtlasError::NotUtf8 { what: what() })
    }
    fn vec3(&mut self, what: &dyn Fn() -> String) -> Result<Vec3, AtlasError> {
        Ok(Vec3::new(self.f32(what)?, self.f32(what)?, self.f32(what)?))
    }
    /// True when the stream is at its end.
    fn at_end(&mut self) -> Result<bool, AtlasError> {
        let mut b = [0u8; 1];
        loop {
            match self.r.read(&mut b) {
                Ok(0) => return Ok(true),
                Ok(_) => return Ok(false),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(AtlasError::Io(e)),
            }
        }
    }
}

fn bad(what: &str, value: impl fmt::Display, why: &'static str) -> AtlasError {
    AtlasError::BadField { what: what.to_owned(), value: value.to_string(), why }
}

impl AnimAtlas {
    /// Writes the atlas in the file format of the [module docs](self#file-format).
    ///
    /// # Errors
    /// The writer fails, or a name is longer than [`MAX_NAME_BYTES`].
    pub fn write_to(&self, w: &mut impl Write) -> Result<(), AtlasError> {
        let mut o = Out { w };
        o.bytes(&FILE_MAGIC)?;
        o.u32(FILE_VERSION)?;
        o.u32(self.layout.code())?;
        o.u32(self.format.code())?;
        o.u32(self.joint_names.len() as u32)?;
        o.u32(self.width)?;
        o.u8(u8::from(self.rigid))?;
        o.u32(self.clips.len() as u32)?;
        for c in &self.clips {
            o.str(&c.name)?;
            o.u32(c.first_frame)?;
            o.u32(c.frame_count)?;
            o.f32(c.rate)?;
            o.f32(c.duration)?;
            o.u8(u8::from(c.looping))?;
            for v in c.bounds.0.iter().chain(c.bounds.1.iter()) {
                o.f32(*v)?;
            }
        }
        for n in &self.joint_names {
            o.str(n)?;
        }
        for m in &self.inverse_bind {
            for v in m.as_slice() {
                o.f32(*v)?;
            }
        }
        let mut buf = Vec::with_capacity(CHUNK_TEXELS * self.format.texel_size());
        match &self.texels {
            Texels::F32(t) => {
                for chunk in t.chunks(CHUNK_TEXELS) {
                    buf.clear();
                    chunk.iter().flatten().for_each(|v| buf.extend_from_slice(&v.to_le_bytes()));
                    o.bytes(&buf)?;
                }
            }
            Texels::F16(t) => {
                for chunk in t.chunks(CHUNK_TEXELS) {
                    buf.clear();
                    chunk.iter().flatten().for_each(|v| buf.extend_from_slice(&v.to_le_bytes()));
                    o.bytes(&buf)?;
                }
            }
        }
        Ok(())
    }

    /// Reads an atlas written by [`AnimAtlas::write_to`], validating every field: safe on
    /// hostile input (it never allocates more than the bytes the stream actually holds
    /// justify, and never panics). The stream must end after the texels.
    ///
    /// # Errors
    /// [`AtlasError::BadMagic`], [`AtlasError::UnsupportedVersion`],
    /// [`AtlasError::Truncated`], [`AtlasError::BadField`], [`AtlasError::NameTooLong`],
    /// [`AtlasError::NotUtf8`], [`AtlasError::NonFinite`], [`AtlasError::ClipRange`],
    /// [`AtlasError::TrailingBytes`], or [`AtlasError::Io`].
    pub fn read_from(r: &mut impl Read) -> Result<Self, AtlasError> {
        let mut i = In { r };
        let s = |w: &'static str| move || w.to_owned();
        let magic: [u8; 8] = i.array(&s("magic"))?;
        if magic != FILE_MAGIC {
            return Err(AtlasError::BadMagic(magic));
        }
        let version = i.u32(&s("version"))?;
        if version != FILE_VERSION {
            return Err(AtlasError::UnsupportedVersion(version));
        }
        let code = i.u32(&s("layout"))?;
        let layout = TextureLayout::from_code(code).ok_or_else(|| bad("layout", code, "expected 0, 1 or 2"))?;
        let code = i.u32(&s("format"))?;
        let format = TexelFormat::from_code(code).ok_or_else(|| bad("format", code, "expected 0 or 1"))?;
        let joints = i.u32(&s("joint count"))?;
        if joints > MAX_FILE_JOINTS {
            return Err(bad("joint count", joints, "more than 65536"));
        }
        let height = u64::from(joints) * u64::from(layout.texels_per_joint());
        if height > u64::from(MAX_HEIGHT) {
            return Err(bad("joint count", joints, "too many rows for the layout (more than 16384)"));
        }
        let width = i.u32(&s("width"))?;
        if !(2..=MAX_WIDTH).contains(&width) {
            return Err(bad("width", width, "expected 2 to 16384 columns"));
        }
        let rigid = i.flag(&s("rigid flag"))?;
        if layout == TextureLayout::SkinDualQuat && !rigid {
            return Err(bad("rigid flag", 0, "the dual-quaternion layout is always rigid"));
        }
        let clip_count = i.u32(&s("clip count"))?;
        if clip_count == 0 || clip_count > width / 2 {
            return Err(bad("clip count", clip_count, "expected 1 to width / 2 clips (each has 2 frames or more)"));
        }
        let mut clips = Vec::new();
        for c in 0..clip_count as usize {
            let name = i.string(&|| format!("clip {c} name"))?;
            let f = |field: &'static str| {
                let name = name.clone();
                move || format!("clip {c} ({name:?}) {field}")
            };
            let first_frame = i.u32(&f("first frame"))?;
            let frame_count = i.u32(&f("frame count"))?;
            if frame_count < 2 {
                return Err(bad(&f("frame count")(), frame_count, "expected at least 2"));
            }
            let end = u64::from(first_frame) + u64::from(frame_count);
            if end > u64::from(width) {
                return Err(AtlasError::ClipRange { clip: c, name, first: first_frame, end, width });
            }
            let rate = i.f32(&f("rate"))?;
            if rate <= 0.0 {
                return Err(bad(&f("rate")(), rate, "expected a positive rate"));
            }
            let duration = i.f32(&f("duration"))?;
            if duration < 0.0 {
                return Err(bad(&f("duration")(), duration, "expected a duration of 0 or more"));
            }
            let looping = i.flag(&f("looping flag"))?;
            let lo = i.vec3(&f("bounds"))?;
            let hi = i.vec3(&f("bounds"))?;
            clips.push(AtlasClip { name, first_frame, frame_count, rate, duration, looping, bounds: (lo, hi) });
        }
        let mut joint_names = Vec::new();
        for j in 0..joints {
            joint_names.push(i.string(&|| format!("joint {j} name"))?);
        }
        let mut inverse_bind = Vec::new();
        for j in 0..joints {
            let mut m = [0.0f32; 16];
            for (k, v) in m.iter_mut().enumerate() {
                *v = i.f32(&|| format!("inverse bind matrix {j} element {k}"))?;
            }
            inverse_bind.push(Mat4::from_column_slice(&m));
        }
        // At most 16384 × 16384 texels (checked above); read in chunks so that the image
        // grows only as fast as the stream delivers it.
        let count = width as usize * height as usize;
        let texel_at = |n: usize| {
            let w = width as usize;
            move || format!("texel ({}, {})", n % w, n / w)
        };
        let texels = match format {
            TexelFormat::F32 => {
                let mut v: Vec<[f32; 4]> = Vec::with_capacity(count.min(CHUNK_TEXELS));
                let mut buf = vec![0u8; CHUNK_TEXELS * 16];
                while v.len() < count {
                    let n = (count - v.len()).min(CHUNK_TEXELS);
                    i.exact(&mut buf[..n * 16], &texel_at(v.len()))?;
                    for t in buf[..n * 16].chunks_exact(16) {
                        let mut x = [0.0f32; 4];
                        for (c, b) in x.iter_mut().zip(t.chunks_exact(4)) {
                            *c = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                        }
                        if let Some(bad) = x.iter().find(|c| !c.is_finite()) {
                            return Err(AtlasError::NonFinite { what: texel_at(v.len())(), value: *bad });
                        }
                        v.push(x);
                    }
                }
                Texels::F32(v)
            }
            TexelFormat::F16 => {
                let mut v: Vec<[u16; 4]> = Vec::with_capacity(count.min(CHUNK_TEXELS));
                let mut buf = vec![0u8; CHUNK_TEXELS * 8];
                while v.len() < count {
                    let n = (count - v.len()).min(CHUNK_TEXELS);
                    i.exact(&mut buf[..n * 8], &texel_at(v.len()))?;
                    for t in buf[..n * 8].chunks_exact(8) {
                        let mut x = [0u16; 4];
                        for (c, b) in x.iter_mut().zip(t.chunks_exact(2)) {
                            *c = u16::from_le_bytes([b[0], b[1]]);
                        }
                        if let Some(bad) = x.iter().map(|h| half::f16::from_bits(*h)).find(|h| !h.is_finite()) {
                            return Err(AtlasError::NonFinite { what: texel_at(v.len())(), value: bad.to_f32() });
                        }
                        v.push(x);
                    }
                }
                Texels::F16(v)
            }
        };
        if !i.at_end()? {
            return Err(AtlasError::TrailingBytes);
        }
        Ok(Self { layout, format, joint_names, inverse_bind, width, rigid, clips, texels })
    }

    /// Writes the atlas to a file ([`AnimAtlas::write_to`], buffered).
    ///
    /// # Errors
    /// [`AtlasError::File`] naming the path, around the cause.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), AtlasError> {
        let path = path.as_ref();
        let wrap = |e: AtlasError| AtlasError::File { path: path.to_owned(), source: Box::new(e) };
        let file = std::fs::File::create(path).map_err(|e| wrap(e.into()))?;
        let mut w = std::io::BufWriter::new(file);
        self.write_to(&mut w).map_err(wrap)?;
        w.flush().map_err(|e| wrap(e.into()))
    }

    /// Reads an atlas file ([`AnimAtlas::read_from`], buffered).
    ///
    /// # Errors
    /// [`AtlasError::File`] naming the path, around the cause.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, AtlasError> {
        let path = path.as_ref();
        let wrap = |e: AtlasError| AtlasError::File { path: path.to_owned(), source: Box::new(e) };
        let file = std::fs::File::open(path).map_err(|e| wrap(e.into()))?;
        Self::read_from(&mut std::io::BufReader::new(file)).map_err(wrap)
    }
}

/// The resampling error of one clip of an atlas (see [`bake_error`]).
#[derive(Clone, Debug, PartialEq)]
pub struct ClipBakeError {
    /// Clip name.
    pub name: String,
    /// Largest vertex distance, in model units.
    pub max_distance: f32,
    /// `max_distance` as a fraction of the bind-pose bounding-box diagonal.
    pub max_fraction: f32,
    /// Time (seconds) at which the largest distance was found.
    pub at_time: f32,
}

/// What [`bake_error`] measured.
#[derive(Clone, Debug, PartialEq)]
pub struct BakeErrorReport {
    /// Diagonal of the meshes' bind-pose bounding box, in model units.
    pub diagonal: f32,
    /// Per clip, in atlas order.
    pub clips: Vec<ClipBakeError>,
    /// Largest distance of any clip, in model units.
    pub max_distance: f32,
    /// Largest fraction of any clip.
    pub max_fraction: f32,
}

/// How far an atlas's playback is from the clips it was baked from: the largest distance
/// between a vertex linear-blend skinned with the exact palette (the clip sampled at `t`
/// from the rest pose, [`TimePolicy::Clamp`]) and with the atlas reader's palette
/// ([`AnimAtlas::palette`], [`SkinMethod::Lbs`], at [`AnimAtlas::frame_pair`]`(clip, t)`),
/// over `samples_per_frame` times evenly spaced inside every frame interval of every clip
/// (`t = (f + (s + ½) / samples_per_frame) / rate`, the middles of equal sub-intervals),
/// reported in model units and as a fraction of the meshes' bind-pose bounding-box diagonal.
///
/// `clips[i]` must be the clip baked as atlas clip `i`; `skeleton`, `skin` and `meshes` the
/// ones given to [`AnimAtlas::bake`].
///
/// # Errors
/// Another clip count than the atlas's, another skin joint count, meshes using joints the
/// skin lacks, meshes without extent, or any sampling error.
pub fn bake_error(
    atlas: &AnimAtlas,
    skeleton: &Skeleton,
    skin: &Skin,
    meshes: &[&Mesh],
    clips: &[&Clip],
    samples_per_frame: usize,
) -> Result<BakeErrorReport, AtlasError> {
    if clips.len() != atlas.clips().len() {
        return Err(AtlasError::ClipCount { atlas: atlas.clips().len(), given: clips.len() });
    }
    if skin.len() != atlas.joint_count() {
        return Err(AtlasError::JointCount { atlas: atlas.joint_count(), model: skin.len() });
    }
    check_meshes(meshes, skin.len())?;
    let mut bind = Bounds::new();
    for m in meshes {
        bind.add(&m.positions);
    }
    let (lo, hi) = bind.get();
    let diagonal = (hi - lo).norm();
    if !(diagonal > 0.0 && diagonal.is_finite()) {
        return Err(AtlasError::EmptyMeshes);
    }
    let spf = samples_per_frame.max(1);
    let rest = skeleton.rest_pose();
    let mut pose = rest.clone();
    let mut model = vec![Mat4::identity(); skeleton.len()];
    let mut exact = vec![Mat4::identity(); skin.len()];
    let mut read = Palette::new(SkinMethod::Lbs);
    let mut scratch = Vec::new();
    let alloc = || meshes.iter().map(|m| vec![Vec3::zeros(); m.positions.len()]).collect::<Vec<_>>();
    let (mut pe, mut pa) = (alloc(), alloc());
    let mut report = BakeErrorReport { diagonal, clips: Vec::new(), max_distance: 0.0, max_fraction: 0.0 };
    for (ci, (clip, entry)) in clips.iter().zip(atlas.clips()).enumerate() {
        let mut worst = ClipBakeError { name: entry.name.clone(), max_distance: 0.0, max_fraction: 0.0, at_time: 0.0 };
        for f in 0..entry.frame_count.saturating_sub(1) {
            for s in 0..spf {
                let time = ((f as f32 + (s as f32 + 0.5) / spf as f32) / entry.rate).min(entry.duration);
                pose.locals_mut().copy_from_slice(rest.locals());
                clip.sample(time, TimePolicy::Clamp, &mut pose).map_err(|source| AtlasError::Clip {
                    index: ci,
                    name: clip.name().to_owned(),
                    source,
                })?;
                pose.local_to_model(skeleton, &mut model)?;
                anim_core::skin::palette::skinning_matrices(&model, skin, &mut exact)?;
                let fp = entry.frame_pair(time);
                atlas.palette_with_scratch(fp, None, SkinMethod::Lbs, &mut read, &mut scratch)?;
                skin_meshes(meshes, &exact, &mut pe)?;
                skin_meshes(meshes, read.matrices().unwrap_or(&[]), &mut pa)?;
                for (a, b) in pe.iter().flatten().zip(pa.iter().flatten()) {
                    let d = (a - b).norm();
                    if d > worst.max_distance {
                        worst.max_distance = d;
                        worst.at_time = time;
                    }
                }
            }
        }
        worst.max_fraction = worst.max_distance / diagonal;
        report.max_distance = report.max_distance.max(worst.max_distance);
        report.max_fraction = report.max_fraction.max(worst.max_fraction);
        report.clips.push(worst);
    }
    Ok(report)
}
