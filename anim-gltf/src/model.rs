//! What an import gives: the [`Model`] (skeleton, skins, mesh instances, clips) and the
//! per-node, per-skin and per-clip facts read from the document, with the `extras` keys the
//! importer and exporter share.

use crate::error::GltfError;
use anim_core::clip::{Clip, Interpolation, TimePolicy};
use anim_core::pose::{Pose, Skeleton};
use anim_core::skin::{Mesh, MorphTargets, Skin};
use anim_math::Mat4;
use std::sync::Arc;

/// Key of the scalar-curve list in an animation's `extras`:
/// `{"animScalarCurves": [{"name": "foot_contact_l", "interpolation": "STEP", "times": [..], "values": [..]}]}`
/// (`values` holds three numbers a key, in-tangent, value, out-tangent, for `CUBICSPLINE`).
pub const CURVES_KEY: &str = "animScalarCurves";

/// Key of the clip events in an animation's `extras`: an array of
/// `{"name": string, "time": seconds}` objects, read into [`anim_core::clip::Clip::events`] and
/// written by [`export_glb`](crate::export_glb).
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
///
/// ```
/// use anim_gltf::prelude::*;
///
/// // The default character, exactly as if loaded from its exported file.
/// let model = anim_gltf::mannequin_model();
/// let walk = model.clip("walk")?; // shared with the model, not copied
/// let mut pose = model.skeleton.rest_pose().clone();
/// walk.sample(0.25, TimePolicy::Wrap, &mut pose)?;
/// assert_eq!(model.skeleton.len(), 23); // 22 joints and the mesh node
/// assert!(model.clip("Walk").is_err()); // names are exact; the error lists them
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
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
    /// Clips, by animation index, shared ([`Arc`]) so that controllers play them without
    /// copying (`Arc::clone(&model.clips[i])`, or [`Model::clip`] by name).
    pub clips: Vec<Arc<Clip>>,
    /// Per clip, the file's view of it.
    pub clip_info: Vec<ClipInfo>,
    /// Things that were loaded with a compromise (ignored target names, …).
    pub warnings: Vec<String>,
}

impl Model {
    /// The index of the clip named `name` (exactly, first match).
    ///
    /// # Errors
    /// [`GltfError::NoClip`], listing the model's clip names and suggesting one that
    /// differs only in case.
    pub fn clip_index(&self, name: &str) -> Result<usize, GltfError> {
        if let Some(i) = self.clips.iter().position(|c| c.name() == name) {
            return Ok(i);
        }
        let available: Vec<String> = self.clips.iter().map(|c| c.name().to_owned()).collect();
        let hint = available
            .iter()
            .find(|a| a.eq_ignore_ascii_case(name))
            .map_or_else(String::new, |a| format!(", did you mean {a:?}?"));
        Err(GltfError::NoClip { name: name.to_owned(), available, hint })
    }

    /// The clip named `name` (see [`Model::clip_index`]), shared: what
    /// [`CrossFadeController`](anim_core::blend::CrossFadeController) plays, without a copy.
    ///
    /// # Errors
    /// [`GltfError::NoClip`], as [`Model::clip_index`].
    pub fn clip(&self, name: &str) -> Result<Arc<Clip>, GltfError> {
        Ok(Arc::clone(&self.clips[self.clip_index(name)?]))
    }

    /// The clip with this name (first match) or, when `key` is a number, this index:
    /// what command lines take. A program that names its clips wants
    /// [`Model::clip_index`], whose error lists the names.
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
        c.sample(time, policy, pose)?;
        Ok(())
    }

    /// World matrices of every node (indexed by skeleton joint; use
    /// [`NodeInfo::joint`] to find a node's) for `pose`.
    ///
    /// # Errors
    /// `pose` or `out` does not have the skeleton's length.
    pub fn world_matrices(&self, pose: &Pose, out: &mut [Mat4]) -> Result<(), GltfError> {
        Ok(pose.local_to_model(&self.skeleton, out)?)
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
