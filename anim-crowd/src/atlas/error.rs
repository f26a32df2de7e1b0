//! Why an atlas could not be baked, read or used.

use super::limits::FILE_VERSION;
use thiserror::Error;

/// Why an atlas could not be baked, read or used. Every variant names the element at fault.
#[derive(Debug, Error)]
pub enum AtlasError {
    /// [`AnimAtlas::bake`](super::AnimAtlas::bake) was given no clip.
    #[error("no clip to bake")]
    NoClips,
    /// The bake rate is not positive and finite.
    #[error("bake rate {0} is not a positive finite number of frames a second")]
    BadRate(f32),
    /// The clips need more columns than [`MAX_WIDTH`](super::MAX_WIDTH).
    #[error("the clips need {width} frames (columns), more than the maximum {max}")]
    TooWide {
        /// Columns needed (a lower bound when the count overflowed).
        width: u64,
        /// The limit.
        max: u32,
    },
    /// The skin needs more rows than [`MAX_HEIGHT`](super::MAX_HEIGHT).
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
    /// [`TextureLayout::SkinDualQuat`](super::TextureLayout::SkinDualQuat) asked for a skin whose skinning matrix is not rigid.
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
    /// A value does not fit a half float ([`TexelFormat::F16`](super::TexelFormat::F16) holds magnitudes up to 65504).
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
    /// A [`FramePair`](super::FramePair) names a column the atlas does not have.
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
    /// [`bake_error`](super::bake_error) was given another number of clips than the atlas holds.
    #[error("the atlas holds {atlas} clips but {given} were given")]
    ClipCount {
        /// Clips in the atlas.
        atlas: usize,
        /// Clips given.
        given: usize,
    },
    /// [`bake_error`](super::bake_error) was given meshes with no extent (no vertex, or all in one point).
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
    /// A string field is longer than [`MAX_NAME_BYTES`](super::MAX_NAME_BYTES).
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

/// A name that is no [`TextureLayout`](super::TextureLayout).
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("unknown texture layout {0:?} (expected \"model-trs\", \"matrix\" or \"dq\")")]
pub struct UnknownTextureLayout(pub String);

/// A name that is no [`TexelFormat`](super::TexelFormat).
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("unknown texel format {0:?} (expected \"f32\" or \"f16\")")]
pub struct UnknownTexelFormat(pub String);
