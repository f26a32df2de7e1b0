//! Animation textures (the book's chapter 15): clips of one skin baked at a fixed rate
//! into one RGBA texture, the *atlas*, that a GPU samples per character.
//!
//! # Layout
//! The atlas is an image `width × height` texels of 4 channels, stored row-major
//! (texel `(x, y)` is element `y · width + x` of [`AnimAtlas::texels`]; [`AnimAtlas::texel`] decodes one):
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

use crate::palette::RIGID_TOLERANCE;
use crate::pose::affine_mul;
use crate::skinning::{self, NormalMode, SkinningInput, SkinningOutput};
use crate::{Clip, Mesh, Palette, Skeleton, Skin, SkinMethod, TimePolicy};
use anim_math::{Mat4, Transform, Vec3, dual};
use std::fmt;
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
        source: crate::ClipError,
    },
    /// The skin does not fit the skeleton, or a pose operation failed.
    #[error(transparent)]
    Pose(#[from] crate::PoseError),
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
        source: crate::SkinningError,
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
        len: u32,
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

    #[allow(dead_code)]
    const fn code(self) -> u32 {
        match self {
            Self::ModelTrs => 0,
            Self::SkinMatrix => 1,
            Self::SkinDualQuat => 2,
        }
    }

    #[allow(dead_code)]
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

    #[allow(dead_code)]
    const fn code(self) -> u32 {
        match self {
            Self::F32 => 0,
            Self::F16 => 1,
        }
    }

    #[allow(dead_code)]
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

/// True when the linear part of `m` is a rotation within [`RIGID_TOLERANCE`] (the test
/// [`DqPalette`](crate::DqPalette) applies): unit columns, orthogonal, positive determinant.
fn is_rigid_matrix(m: &Mat4) -> bool {
    let c = |i: usize| Vec3::new(m[(0, i)], m[(1, i)], m[(2, i)]);
    let (c0, c1, c2) = (c(0), c(1), c(2));
    let t = RIGID_TOLERANCE;
    (c0.norm_squared() - 1.0).abs() <= 2.0 * t
        && (c1.norm_squared() - 1.0).abs() <= 2.0 * t
        && (c2.norm_squared() - 1.0).abs() <= 2.0 * t
        && c0.dot(&c1).abs() <= t
        && c1.dot(&c2).abs() <= t
        && c2.dot(&c0).abs() <= t
        && c0.cross(&c1).dot(&c2) > 0.0
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
        if let Some(inf) = &m.influences {
            if inf.joint_bound() > joints {
                return Err(AtlasError::MeshJoints { mesh: i, needed: inf.joint_bound(), joints });
            }
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
            return Err(crate::PoseError::JointOutOfRange { index, joint, count: skeleton.len() }.into());
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
                    let joint_rigid = is_rigid_matrix(p);
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
                Texels::F16(image.iter().map(|t| t.map(|v| half::f16::from_f32(v).to_bits())).collect())
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
    /// the atlas's joint count. [`SkinMethod::Dq`] needs a matrix scratch and allocates
    /// one each call: use [`AnimAtlas::palette_with_scratch`] in a loop.
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
    /// [`SkinMethod::Dq`] only): allocates nothing once `out` and `scratch` have the
    /// atlas's joint count.
    ///
    /// Each skin joint's skinning matrix is computed as the [module docs](self) say the
    /// shaders do; the palette is then [`Palette::set_from_matrices`] of them (for
    /// [`SkinMethod::Dq`] with [`TextureLayout::SkinDualQuat`], the matrices of the
    /// interpolated dual quaternions, so the palette holds them back up to rounding).
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
                scratch.resize(n, Mat4::identity());
                self.write_matrices(&sample, scratch);
                out.set_method(SkinMethod::Dq);
                out.set_from_matrices(scratch);
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
                    let dq = |p: FramePair| {
                        let f = |x| (self.fetch(x, j, 0), self.fetch(x, j, 1));
                        dq_mix(f(p.frame0), f(p.frame1), p.t)
                    };
                    let mut q = dq(s.a);
                    if let Some((pb, w)) = s.b {
                        q = dq_mix(q, dq(pb), w);
                    }
                    dq_matrix(q.0, q.1)
                }
            };
        }
    }
}
