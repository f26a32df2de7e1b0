//! glTF 2.0 import and export for the anim runtime: skeletons, skins, skinned meshes and
//! clips.
//!
//! # Import
//! [`load`] / [`load_from_bytes`] read `.gltf` (external `.bin` files or base64 `data:` URIs)
//! and `.glb` into a [`Model`]:
//!
//! - **Skeleton.** *Every* node of the document becomes a joint of [`Model::skeleton`], with
//!   the node's index as its source index ([`anim_core::Skeleton::from_source_index`]) and
//!   the node's authored TRS (a `matrix` is decomposed) as its rest transform. So skin
//!   joints, their non-joint ancestors (which may be animated), animated non-joint nodes
//!   and mesh nodes all get a world matrix from one [`anim_core::Pose::local_to_model`]
//!   pass, and a skin or a channel that refers to a node outside the default scene still
//!   works (that node is a root of its own tree). `nodes[]` may list children before
//!   parents; a node with two parents or a cycle is an error.
//! - **Skins.** Joint lists are remapped to skeleton indices; absent inverse bind matrices
//!   are the identity. The bind pose is rebuilt as chapter 10 describes: the rest pose's
//!   world transforms, with each skin joint's replaced by `inverse(IBM)`, converted back to
//!   parent-local ([`SkinInfo::bind_pose`]). The skeleton's own bind pose is the first
//!   skin's.
//! - **Meshes.** One [`MeshInstance`] per primitive of every node with a mesh in the
//!   default scene (scene 0 when `scene` is absent, every node when there are no scenes),
//!   ordered by node index then primitive index. Joint indices stay skin-relative; the
//!   `JOINTS_n`/`WEIGHTS_n` sets are concatenated into one [`anim_core::Influences`] with
//!   `4·sets` influences a vertex (weights divided by their sum).
//! - **Clips.** Translation, rotation and scale channels with STEP, LINEAR and CUBICSPLINE;
//!   times are kept raw (a clip whose first key is at 1/24 s is not shifted); the duration
//!   is the latest key of any channel; a channel holds its first/last value outside its
//!   keys. `weights` channels become the clip's [`anim_core::WeightTrack`]s.
//! - **Morph targets.** Each primitive's `targets` (POSITION, NORMAL and TANGENT deltas,
//!   sparse accessors too) become [`MeshInstance::morph`], with the node's default weights
//!   (`node.weights`, else `mesh.weights`, else zeros) and the names in
//!   `mesh.extras.targetNames`; counts are validated as the specification requires.
//!   [`Model::sample_weights`] gives an instance's weights at a clip time and
//!   [`Model::skin_instance_weighted`] morphs before it skins.
//!
//! - **Accessors** are read with the `gltf` crate's readers (joints as u8/u16, weights as
//!   f32 or normalized u8/u16, rotations as f32 or normalized integers, sparse accessors),
//!   after checking type, count and bounds so that bad input is an error, not a panic.
//!   Integer positions, normals and texture coordinates (`KHR_mesh_quantization`) are
//!   decoded with glTF's normalization rules. Files requiring Draco or meshopt compression
//!   are refused. Unknown required extensions that do not touch geometry become warnings
//!   (no material or image is read here); every other schema problem is an error, in
//!   materials, textures, images, samplers and cameras too (an unresolved `material` or
//!   `camera` index included), as in the Khronos glTF-Validator: all material problems are
//!   the same class.
//! - **Validation.** Errors carry the Khronos glTF-Validator's issue code in the message
//!   (`GLB_LENGTH_MISMATCH`, `UNKNOWN_ASSET_MAJOR_VERSION`, `UNDEFINED_PROPERTY`,
//!   `ACCESSOR_NORMALIZED_INVALID`, `NODE_MATRIX_TRS`, `NODE_MATRIX_NON_TRS`,
//!   `MESH_PRIMITIVE_INDEXED_SEMANTIC_CONTINUITY`, `VALUE_NOT_IN_LIST`,
//!   `UNRESOLVED_REFERENCE`, …) and the JSON path of the element at fault. Two things the
//!   validator calls errors load on purpose, as real exporters write them and other viewers
//!   accept them: skin weights whose sum is not one are divided by their sum
//!   (`ACCESSOR_WEIGHTS_NON_NORMALIZED`), and the values of accessor `min`/`max` are never
//!   read (`POSITION` must declare them), so bounds disagreeing with the data
//!   (`ACCESSOR_MIN_MISMATCH`, `ACCESSOR_MAX_MISMATCH`) change nothing. Not every check of the validator is repeated here (rotations that are
//!   not unit are normalized, for one): a file that loads is not thereby valid glTF.
//!
//! # Untrusted files
//! [`load`] and [`load_from_bytes`] are safe defaults for hostile input; [`load_with`] and
//! [`load_from_bytes_with`] take [`LoadOptions`]:
//!
//! - **What is read.** The document itself, and external buffers named by relative URIs:
//!   percent-decoded, resolved (`..` and symbolic links included) only inside the
//!   document's folder or an [`LoadOptions::allowed_roots`] folder; absolute paths and URI
//!   schemes other than `data:` are refused. Only regular files are opened (no devices,
//!   FIFOs or sockets), and at most `byteLength` bytes are read; a shorter file is an
//!   error. Images are never read.
//! - **Memory.** Buffers and decoded accessor data are charged to
//!   [`LoadOptions::memory_budget`] ([`DEFAULT_MEMORY_BUDGET`], 1 GiB) before they are
//!   allocated, so a small file declaring huge accessors fails with [`GltfError::Budget`]
//!   naming the element. Every pass is linear in the input and none recurses over the
//!   node hierarchy (a 65,000-deep chain loads); JSON nesting is limited by the parser.
//! - **Messages.** Errors name JSON paths, as JSON pointers (`/nodes/2/matrix`), and never quote buffer contents.
//!
//! # Skinning
//! [`Model::skin_instance`] is the one place where a mesh instance is posed on the CPU:
//! skinned vertices are `Σ wᵢ · world(jointᵢ) · IBMᵢ · p` (the mesh node's own transform is
//! ignored, as glTF requires), unskinned ones `world(node) · p`.
//!
//! # Morph targets
//! Data flows file → [`MeshInstance::morph`] ([`anim_core::MorphTargets`]) → weights
//! sampled into a caller-owned `&mut [f32]` ([`Model::sample_weights`]: the clip's
//! `weights` channel, else the defaults) → morphed, then skinned, into caller-owned buffers
//! ([`Model::skin_instance_weighted`]: `p = base + Σ wᵢ·Δᵢ` first, skinning second, as
//! glTF requires). Weights are not clamped; only targets with a non-zero weight cost
//! anything, and steady calls allocate nothing. On the GPU,
//! `anim_render_vk::GpuSkinner::skin_morphed` does both in one compute pass (at most
//! `anim_render_vk::MAX_ACTIVE_MORPH_TARGETS` = 64 active targets a draw, any number a
//! mesh); the renderer's vertex-shader path and the crowd paths do not morph.
//!
//! ```
//! use anim_core::{SkinMethod, TimePolicy};
//! use anim_gltf::SkinScratch;
//! use anim_math::{Mat4, Vec3};
//!
//! // The default character breathes in its idle: targets "breathe" and "brow_raise".
//! let model = anim_gltf::mannequin_model();
//! let idle = model.find_clip("idle").unwrap();
//! let targets = model.meshes[0].morph.as_ref().unwrap();
//! assert_eq!(targets.names()[0], "breathe");
//!
//! let mut weights = vec![0.0; targets.target_count()];
//! model.sample_weights(idle, 0, 1.0, TimePolicy::Wrap, &mut weights).unwrap();
//! assert_eq!(weights, [1.0, 1.0]); // top of the breath
//!
//! let mut pose = model.skeleton.rest_pose().clone();
//! model.sample_pose(idle, 1.0, TimePolicy::Wrap, &mut pose).unwrap();
//! let mut world = vec![Mat4::identity(); model.skeleton.len()];
//! model.world_matrices(&pose, &mut world).unwrap();
//! let n = model.meshes[0].data.vertex_count();
//! let (mut breathing, mut still) = (vec![Vec3::zeros(); n], vec![Vec3::zeros(); n]);
//! let mut scratch = SkinScratch::new();
//! model.skin_instance_weighted(0, &world, Some(&weights), SkinMethod::Lbs, &mut scratch, &mut breathing, None).unwrap();
//! model.skin_instance_weighted(0, &world, Some(&[0.0, 0.0]), SkinMethod::Lbs, &mut scratch, &mut still, None).unwrap();
//! let widest = breathing.iter().zip(&still).map(|(a, b)| (a - b).norm()).fold(0.0, f32::max);
//! assert!(widest > 0.02); // the chest moved by more than 2 cm
//! ```
//!
//! # Export
//! [`export_glb`] writes a skeleton, skinned meshes and clips to a `.glb`; named scalar
//! curves travel in each animation's `extras` (see [`CURVES_KEY`]).

#![warn(missing_docs)]

mod error;
mod export;
mod import;
mod skinning;
pub mod trim;

pub use error::GltfError;
pub use export::{ExportMesh, export_glb, export_glb_with_morphs};
pub use import::MAX_INFLUENCE_SETS;
pub use skinning::SkinScratch;
pub use trim::RuntimeSkeleton;

use anim_core::{Clip, Interpolation, Mesh, MorphTargets, Pose, Skeleton, Skin, TimePolicy};
use anim_math::Mat4;
use std::path::{Path, PathBuf};

/// Key of the scalar-curve list in an animation's `extras`:
/// `{"animScalarCurves": [{"name": "foot_contact_l", "interpolation": "STEP", "times": [..], "values": [..]}]}`
/// (`values` holds three numbers a key, in-tangent, value, out-tangent, for `CUBICSPLINE`).
pub const CURVES_KEY: &str = "animScalarCurves";

/// Key of the clip events in an animation's `extras`: an array of
/// `{"name": string, "time": seconds}` objects, read into [`anim_core::Clip::events`] and
/// written by [`export_glb`].
pub const EVENTS_KEY: &str = "animEvents";

/// One glTF node as the model sees it.
#[derive(Clone, Debug)]
pub struct NodeInfo {
    /// Node name (empty when the file has none).
    pub name: String,
    /// Parent node index.
    pub parent: Option<usize>,
    /// Mesh index, if the node has a mesh.
    pub mesh: Option<usize>,
    /// Skin index, if the node has a skin.
    pub skin: Option<usize>,
    /// The node's joint in [`Model::skeleton`].
    pub joint: usize,
    /// True when some skin lists this node as a joint.
    pub is_skin_joint: bool,
}

/// One glTF skin.
#[derive(Clone, Debug)]
pub struct SkinInfo {
    /// Skin name (empty when the file has none).
    pub name: String,
    /// Joints (skeleton indices, in `skin.joints` order) and inverse bind matrices.
    pub skin: Skin,
    /// Node index of each skin joint, in `skin.joints` order.
    pub nodes: Vec<usize>,
    /// The bind pose rebuilt from this skin's inverse bind matrices (chapter 10): local
    /// transforms for every skeleton joint, such that `world(joint) · IBM = I` for this
    /// skin's joints.
    pub bind_pose: Pose,
}

/// One primitive of a node with a mesh, in the default scene.
#[derive(Clone, Debug)]
pub struct MeshInstance {
    /// Node index.
    pub node: usize,
    /// The node's joint in [`Model::skeleton`].
    pub joint: usize,
    /// glTF mesh index.
    pub mesh: usize,
    /// Primitive index in the mesh.
    pub primitive: usize,
    /// Skin index when the primitive is skinned (the node has a skin and the primitive has
    /// `JOINTS_0`/`WEIGHTS_0`).
    pub skin: Option<usize>,
    /// Vertex data: positions in `POSITION` order, normals (unit, or empty), UVs, skin-relative
    /// influences, triangle-list indices.
    pub data: Mesh,
    /// The primitive's morph targets, with this node's default weights, or `None`.
    pub morph: Option<MorphTargets>,
}

/// What one channel of an animation looked like in the file (for `animtool inspect`).
#[derive(Clone, Debug)]
pub struct ChannelInfo {
    /// Target node.
    pub node: usize,
    /// "translation", "rotation" or "scale".
    pub property: &'static str,
    /// Interpolation.
    pub interpolation: Interpolation,
    /// Number of keys.
    pub keys: usize,
    /// First key time.
    pub start: f32,
    /// Last key time.
    pub end: f32,
}

/// File-level facts about one animation.
#[derive(Clone, Debug)]
pub struct ClipInfo {
    /// The glTF name, `None` when absent.
    pub name: Option<String>,
    /// Imported channels.
    pub channels: Vec<ChannelInfo>,
}

/// A loaded glTF document.
#[derive(Clone, Debug)]
pub struct Model {
    /// One joint per node (see the crate docs).
    pub skeleton: Skeleton,
    /// Per node, by node index.
    pub nodes: Vec<NodeInfo>,
    /// The `scene` property, if present.
    pub scene: Option<usize>,
    /// Node indices of the scene that is drawn, ascending.
    pub scene_nodes: Vec<usize>,
    /// Skins, by skin index.
    pub skins: Vec<SkinInfo>,
    /// Mesh instances of the scene, ordered by node then primitive.
    pub meshes: Vec<MeshInstance>,
    /// Clips, by animation index.
    pub clips: Vec<Clip>,
    /// Per clip, the file's view of it.
    pub clip_info: Vec<ClipInfo>,
    /// Things that were loaded with a compromise (ignored target names, …).
    pub warnings: Vec<String>,
}

/// Loads a `.gltf` or `.glb` file with the safe defaults of [`LoadOptions::default`]:
/// external buffers are read only from the file's own folder (and its subfolders), and
/// decoded data is limited to [`DEFAULT_MEMORY_BUDGET`].
///
/// # Errors
/// The file cannot be read, or any [`GltfError`] of [`load_from_bytes`].
pub fn load(path: impl AsRef<Path>) -> Result<Model, GltfError> {
    load_with(path, &LoadOptions::default())
}

/// Loads a `.gltf` or `.glb` file with explicit [`LoadOptions`] (more folders to read
/// buffers from, another memory budget). The file itself must be a regular file no larger
/// than the budget.
///
/// # Errors
/// The file cannot be read, or any [`GltfError`] of [`load_from_bytes`].
pub fn load_with(path: impl AsRef<Path>, options: &LoadOptions) -> Result<Model, GltfError> {
    let path = path.as_ref();
    let bytes = import::read_document(path, options.memory_budget)?;
    let base = path.parent().map(|p| if p.as_os_str().is_empty() { Path::new(".") } else { p });
    load_from_bytes_with(&bytes, base, options)
}

/// Loads a glTF JSON document or a GLB container from memory, with the safe defaults of
/// [`LoadOptions::default`]. `base_dir` is the folder relative buffer URIs are resolved in
/// (they may not leave it); without it only `data:` URIs and the GLB chunk can be used.
///
/// # Errors
/// Malformed input of any kind, with the element at fault named (see [`GltfError`]).
pub fn load_from_bytes(bytes: &[u8], base_dir: Option<&Path>) -> Result<Model, GltfError> {
    load_from_bytes_with(bytes, base_dir, &LoadOptions::default())
}

/// [`load_from_bytes`] with explicit [`LoadOptions`].
///
/// # Errors
/// Malformed input of any kind, with the element at fault named (see [`GltfError`]).
pub fn load_from_bytes_with(bytes: &[u8], base_dir: Option<&Path>, options: &LoadOptions) -> Result<Model, GltfError> {
    import::load_bytes(bytes, base_dir, options)
}

/// The default of [`LoadOptions::memory_budget`]: 1 GiB.
pub const DEFAULT_MEMORY_BUDGET: usize = 1 << 30;

/// How [`load_with`] and [`load_from_bytes_with`] treat untrusted input.
///
/// The defaults ([`load`], [`load_from_bytes`]) are safe for hostile files: buffer URIs are
/// resolved only inside the document's folder, only regular files are read (at most their
/// declared `byteLength`), and decoded data is limited to [`DEFAULT_MEMORY_BUDGET`].
#[derive(Clone, Debug)]
pub struct LoadOptions {
    /// Folders, besides the document's own, that external buffer URIs may resolve into
    /// (after percent-decoding, `..` and symbolic links are resolved). Relative URIs are
    /// still resolved against the document's folder; a trusted caller lists here the shared
    /// folders such a URI may lead to (`../shared/anim.bin`). Empty by default.
    pub allowed_roots: Vec<PathBuf>,
    /// The most bytes the import may allocate for buffers and decoded accessor data,
    /// summed over the document; checked before anything is allocated, so a small file
    /// that declares huge accessors is refused with [`GltfError::Budget`].
    pub memory_budget: usize,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions { allowed_roots: Vec::new(), memory_budget: DEFAULT_MEMORY_BUDGET }
    }
}

impl Model {
    /// The clip with this name (first match) or, when `key` is a number, this index.
    pub fn find_clip(&self, key: &str) -> Option<usize> {
        if let Some(i) = self.clips.iter().position(|c| c.name() == key) {
            return Some(i);
        }
        key.parse::<usize>().ok().filter(|&i| i < self.clips.len())
    }

    /// The pose of clip `clip` at raw time `time` under `policy`, starting from the rest
    /// pose (the nodes' authored TRS) for channels the clip does not animate.
    ///
    /// # Errors
    /// An unknown clip or a non-finite time.
    pub fn sample_pose(&self, clip: usize, time: f32, policy: TimePolicy, pose: &mut Pose) -> Result<(), GltfError> {
        let c = self.clips.get(clip).ok_or_else(|| GltfError::Argument(format!("no clip {clip}")))?;
        pose.clone_from(self.skeleton.rest_pose());
        c.sample(time, policy, pose).map_err(|e| GltfError::Argument(e.to_string()))?;
        Ok(())
    }

    /// World matrices of every node (indexed by skeleton joint; use
    /// [`NodeInfo::joint`] to find a node's) for `pose`.
    ///
    /// # Errors
    /// `pose` or `out` does not have the skeleton's length.
    pub fn world_matrices(&self, pose: &Pose, out: &mut [Mat4]) -> Result<(), GltfError> {
        pose.local_to_model(&self.skeleton, out).map_err(|e| GltfError::Argument(e.to_string()))
    }

    /// `world(joint) · IBM` would need the world of every skin joint: this gives, for skin
    /// `skin`, the world matrix of each joint in `skin.joints` order.
    ///
    /// # Errors
    /// Unknown skin, or `world`/`out` of the wrong length.
    pub fn skin_joint_worlds(&self, skin: usize, world: &[Mat4], out: &mut [Mat4]) -> Result<(), GltfError> {
        let s = self.skins.get(skin).ok_or_else(|| GltfError::Argument(format!("no skin {skin}")))?;
        if world.len() != self.skeleton.len() || out.len() != s.skin.len() {
            return Err(GltfError::Argument(format!(
                "world has {} entries (expected {}), out has {} (expected {})",
                world.len(),
                self.skeleton.len(),
                out.len(),
                s.skin.len()
            )));
        }
        for (o, &j) in out.iter_mut().zip(s.skin.joints()) {
            *o = world[j];
        }
        Ok(())
    }
}

/// The default character ([`anim_mannequin`]) as a binary glTF: its skeleton (nodes
/// 0..22 in skeleton order), its skinned mesh (node 22, skin 0 over every joint) with its
/// morph targets, and its clips with their foot-contact curves (the idle also animates the
/// morph weights). What `animtool export-default` writes.
pub fn mannequin_glb() -> Vec<u8> {
    let m = anim_mannequin::build();
    let skin = Skin::from_skeleton(&m.skeleton);
    let mesh = ExportMesh { name: "mannequin", mesh: &m.mesh, skin: Some(&skin) };
    export_glb_with_morphs(&m.skeleton, &[mesh], &[Some(&m.morph)], &m.clips)
        .expect("the generated mannequin is consistent, so it always exports")
}

/// The default character as a [`Model`], exactly as if [`mannequin_glb`] had been loaded
/// from a file: demos that take `--model FILE` can use this when none is given and run one
/// code path.
pub fn mannequin_model() -> Model {
    load_from_bytes(&mannequin_glb(), None).expect("the exported mannequin loads back")
}
