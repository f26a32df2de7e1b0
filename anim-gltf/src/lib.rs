//! glTF 2.0 import and export for the anim runtime: skeletons, skins, skinned meshes and
//! clips.
//!
//! # Import
//! [`load`] / [`load_from_bytes`] read `.gltf` (external `.bin` files or base64 `data:` URIs)
//! and `.glb` into a [`Model`]:
//!
//! - **Skeleton.** *Every* node of the document becomes a joint of [`Model::skeleton`], with
//!   the node's index as its source index ([`anim_core::pose::Skeleton::from_source_index`]) and
//!   the node's authored TRS (a `matrix` is decomposed) as its rest transform. So skin
//!   joints, their non-joint ancestors (which may be animated), animated non-joint nodes
//!   and mesh nodes all get a world matrix from one [`anim_core::pose::Pose::local_to_model`]
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
//!   `JOINTS_n`/`WEIGHTS_n` sets are concatenated into one [`anim_core::skin::Influences`] with
//!   `4·sets` influences a vertex (weights divided by their sum).
//! - **Clips.** Translation, rotation and scale channels with STEP, LINEAR and CUBICSPLINE;
//!   times are kept raw (a clip whose first key is at 1/24 s is not shifted); the duration
//!   is the latest key of any channel; a channel holds its first/last value outside its
//!   keys. `weights` channels become the clip's [`anim_core::clip::WeightTrack`]s.
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
//! Data flows file → [`MeshInstance::morph`] ([`anim_core::skin::MorphTargets`]) → weights
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
//! use anim_core::clip::TimePolicy;
//! use anim_core::skin::SkinMethod;
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
mod model;
mod options;
pub mod prelude;
mod skinning;
pub mod trim;

pub use anim_core;
pub use anim_math;
pub use error::GltfError;
pub use export::{ExportMesh, export_glb, export_glb_with_morphs};
pub use import::MAX_INFLUENCE_SETS;
pub use model::{CURVES_KEY, ChannelInfo, ClipInfo, EVENTS_KEY, MeshInstance, Model, NodeInfo, SkinInfo};
pub use options::{DEFAULT_MEMORY_BUDGET, LoadOptions};
pub use skinning::SkinScratch;
pub use trim::RuntimeSkeleton;

use anim_core::skin::Skin;
use std::path::Path;

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

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
