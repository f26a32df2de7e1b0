//! Instanced GPU crowds (the book's chapter 15): many characters of one skinned mesh, each
//! playing clips of one animation atlas ([`AnimAtlas`]), drawn with one instanced draw.
//! A crowd is drawn with its mesh's material when the mesh was registered with one
//! ([`crate::Renderer::add_surface_mesh`]): one material set per character type, the
//! textures sampled with each character's tint varying its colour slightly, both faces drawn,
//! BLEND materials drawn opaque, and normal maps with a frame from screen-space derivatives
//! (the crowd paths skin no tangents). Crowds do not apply morph targets: characters are drawn from their bind-pose mesh (use
//! [`crate::GpuSkinner::skin_morphed`] or the CPU path for morphed characters).
//!
//! A crowd is registered once with [`Renderer::add_crowd`] (atlas image, inverse binds and
//! clip bounds uploaded; per-frame-slot instance buffers for `capacity` characters), fed
//! [`CrowdInstance`] records with [`Renderer::set_crowd_instances`] (staged into the frame
//! slot when the frame is prepared), and drawn by adding a [`CrowdDraw`] to the
//! [`FrameData`](crate::FrameData). Three paths draw the same images:
//! - [`CrowdPath::Book`]: the vertex shader evaluates every influence's transform from the
//!   atlas (two frames of clip A, and of clip B when blended) for every vertex.
//! - [`CrowdPath::PaletteVertex`]: a compute pass evaluates each character's palette once
//!   per joint into a palette buffer; the vertex shader skins from it.
//! - [`CrowdPath::PaletteCompute`]: the same palette pass, then a compute pass skins every
//!   vertex of every character into a world-space vertex buffer (16 bytes a vertex:
//!   position and an octahedral normal in two snorm16) that one instanced draw pulls from.
//!   That buffer is bound in chunks of whole characters, each within one storage-buffer
//!   range (an array of up to 15 buffers), so the path is not held to one range (about
//!   155,000 Fox-size characters where the range is 4 GiB) but to 15 of them, and to the
//!   device's memory: a failing allocation is a typed error.
//!   [`Renderer::set_crowd_chunk_bytes`](crate::Renderer::set_crowd_chunk_bytes) makes the
//!   chunks smaller (tests use it to chunk small crowds).
//!
//! Every path also keeps each buffer within one storage-buffer range: the instance records
//! (64 bytes a character) and, on the palette paths, the palettes (48 bytes a joint a
//! character: 3.7 million 24-joint characters in 4 GiB). The palette and skinning passes
//! fold their workgroups into rows of at most 65,535 (the x and y limit every device
//! supports); the list pass runs one row of `capacity / 64` workgroups, so a crowd holds
//! at most `64 · maxComputeWorkGroupCount[0]` characters (4.19 million on a device at the
//! minimum). [`Renderer::add_crowd`] and the frame plan refuse larger crowds with
//! [`CrowdError::DeviceLimit`].
//!
//! With [`CrowdDraw::cull`] a list pass tests each character's clip bounds against the view
//! frustum, appends the visible ones to a visible list and writes the indirect draw and
//! dispatch arguments; with [`CrowdDraw::lod_distance`] characters farther than it from the
//! eye skin with their largest-weight influence only (the book's "fewer influences").
//!
//! Mesh levels of detail: [`Renderer::set_crowd_lods`] gives a crowd the simplified index
//! lists of its mesh ([`anim_crowd::lod::MeshLods`], each with its object-space error).
//! With [`CrowdDraw::lod_pixels`] the list pass projects each visible character's error to
//! the screen (its scale, its distance from the eye, the render target's height and the
//! field of view) and appends it to the list of the coarsest level whose error covers at
//! most that many pixels ([`anim_crowd::lod::select_level`]); the crowd is then drawn with
//! one indirect indexed draw per level. [`Renderer::crowd_level_counts`] reads back how
//! many characters each level drew.
//!
//! A crowd may be drawn once per frame.
//!
//! Mixed crowds ([`Renderer::add_mixed_crowd`]): several character types, each its own
//! mesh, material, atlas and levels of detail, played by one [`Crowd`] whose clip list is
//! every type's clips in turn (a clip index names the type). The frame gets one
//! [`CrowdDraw`] per type ([`Renderer::mixed_crowd_draws`]); their list passes are recorded
//! together in one compute pass (one dispatch per type, no barrier between them) and each
//! type draws with one indirect draw per level.
//!
//! The files, one concern each, from the bottom of the import graph up: `error` (why a
//! crowd cannot be created, fed or drawn), this file (the types a user touches),
//! `pipelines` (the crowd shaders' interface, descriptor layout and pipelines), `buffers`
//! (a registered crowd's GPU resources), `plan` (a frame's crowd draws resolved and
//! prepared), `record` (recording the passes and draws), `cull` (the list pass), `api`
//! (the crowd methods of [`Renderer`]) and `mixed` (mixed crowds' methods).
//!
//! [`Renderer`]: crate::Renderer
//! [`Renderer::add_crowd`]: crate::Renderer::add_crowd
//! [`Renderer::set_crowd_instances`]: crate::Renderer::set_crowd_instances
//! [`Renderer::set_crowd_lods`]: crate::Renderer::set_crowd_lods
//! [`Renderer::add_mixed_crowd`]: crate::Renderer::add_mixed_crowd
//! [`Renderer::mixed_crowd_draws`]: crate::Renderer::mixed_crowd_draws
//! [`Crowd`]: anim_crowd::crowd::Crowd
//! [`Renderer::crowd_level_counts`]: crate::Renderer::crowd_level_counts

mod api;
pub(crate) mod buffers;
pub(crate) mod cull;
pub(crate) mod error;
mod mixed;
pub(crate) mod pipelines;
pub(crate) mod plan;
pub(crate) mod record;

use crate::types::MeshId;
use anim_core::skin::SkinMethod;
use anim_crowd::atlas::AnimAtlas;
#[cfg(doc)]
use anim_crowd::crowd::CrowdInstance;
use std::fmt;
use std::str::FromStr;

pub use error::CrowdError;

/// One character type of a mixed crowd ([`crate::Renderer::add_mixed_crowd`]).
#[derive(Clone, Copy, Debug)]
pub struct CrowdType<'a> {
    /// The type's skinned mesh (with its material when registered with one).
    pub mesh: MeshId,
    /// The clips it plays.
    pub atlas: &'a AnimAtlas,
    /// The most characters of this type the crowd holds.
    pub capacity: u32,
}

/// Handle of a mixed crowd registered with [`Renderer::add_mixed_crowd`].
///
/// [`Renderer::add_mixed_crowd`]: crate::Renderer::add_mixed_crowd
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MixedCrowdId(pub(crate) usize);

/// Handle of a crowd registered with [`Renderer::add_crowd`].
///
/// [`Renderer::add_crowd`]: crate::Renderer::add_crowd
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CrowdId(pub(crate) usize);

/// How a crowd is skinned and drawn (see the [module docs](self)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CrowdPath {
    /// The book's path: the vertex shader reads the atlas for every influence of every vertex.
    #[default]
    Book,
    /// A palette compute pass, then vertex-shader skinning from the palette buffer.
    PaletteVertex,
    /// A palette compute pass, a skinning compute pass into a vertex buffer, then a draw.
    PaletteCompute,
}

impl CrowdPath {
    /// Every path, in declaration order.
    pub const ALL: [CrowdPath; 3] = [CrowdPath::Book, CrowdPath::PaletteVertex, CrowdPath::PaletteCompute];

    /// The path's name: `book`, `palette-vertex` or `palette-compute`.
    pub fn name(self) -> &'static str {
        match self {
            CrowdPath::Book => "book",
            CrowdPath::PaletteVertex => "palette-vertex",
            CrowdPath::PaletteCompute => "palette-compute",
        }
    }

    /// Whether the path runs the palette compute pass.
    pub fn has_palette(self) -> bool {
        self != CrowdPath::Book
    }
}

impl fmt::Display for CrowdPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A crowd path name that is none of `book`, `palette-vertex`, `palette-compute` (or its
/// alias `compute`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown crowd path {0:?} (expected book, palette-vertex or palette-compute)")]
pub struct UnknownCrowdPath(pub String);

impl FromStr for CrowdPath {
    type Err = UnknownCrowdPath;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "book" => Ok(CrowdPath::Book),
            "palette-vertex" => Ok(CrowdPath::PaletteVertex),
            "palette-compute" | "compute" => Ok(CrowdPath::PaletteCompute),
            _ => Err(UnknownCrowdPath(s.to_string())),
        }
    }
}

/// One crowd drawn in a frame ([`crate::FrameData::add_crowd`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CrowdDraw {
    /// The crowd.
    pub crowd: CrowdId,
    /// How it is skinned and drawn.
    pub path: CrowdPath,
    /// LBS, or DQ (rigid atlases only).
    pub method: SkinMethod,
    /// Frustum-cull the characters on the GPU (indirect draw of the visible ones).
    pub cull: bool,
    /// Characters farther than this from the eye skin with their largest-weight influence
    /// only (positive; runs the list pass even without culling).
    pub lod_distance: Option<f32>,
    /// Multiplies the vertex colours (varied slightly per character).
    pub tint: [f32; 3],
    /// With the crowd's mesh levels of detail ([`crate::Renderer::set_crowd_lods`]): the
    /// screen-space error, in pixels, a character's level may show; the list pass picks the
    /// coarsest level whose projected error is at most this (runs the list pass even
    /// without culling).
    pub lod_pixels: Option<f32>,
}

impl CrowdDraw {
    /// The book path, LBS, no culling, white tint.
    pub fn new(crowd: CrowdId) -> Self {
        Self {
            crowd,
            path: CrowdPath::Book,
            method: SkinMethod::Lbs,
            cull: false,
            lod_distance: None,
            tint: [1.0; 3],
            lod_pixels: None,
        }
    }
}
