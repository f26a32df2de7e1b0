//! The runtime view of a model: a skeleton trimmed to the nodes that move something.
//!
//! [`crate::model::Model::skeleton`] holds every node of the file, so that anything a skin or a
//! channel names has a world matrix. At run time most of them are dead weight (Fox: 26
//! nodes, 24 of them skin joints). [`crate::model::Model::runtime_skeleton`] keeps, following the
//! glTF 2.0 specification:
//!
//! - every joint of every skin, **and all their ancestors**, whether they are joints or
//!   not and whether they are animated or not: a skinned vertex is
//!   `Σ wᵢ · world(jointᵢ) · IBMᵢ · p`, and `world` goes through every ancestor;
//! - every node drawing a mesh primitive without skinning (rigidly attached meshes; the
//!   default scene's, as [`crate::model::Model::meshes`]), and its ancestors.
//!
//! Everything else is dropped, with its animation channels: in particular the node that
//! carries a skinned mesh (the specification ignores its transform for skinning) unless a
//! rule above keeps it, and nodes that are only the target of morph `weights` channels
//! (sample those from the [`crate::model::Model`]'s clips with [`crate::model::Model::sample_weights`]:
//! clip indices are the same). Clips keep their time line (see
//! [`anim_core::offline::trim::JointMap::clip`]).

use crate::error::GltfError;
use crate::model::Model;
use anim_core::clip::Clip;
use anim_core::offline::trim::JointMap;
use anim_core::pose::Skeleton;
use anim_core::skin::Skin;
use std::sync::Arc;

/// A model's skeleton trimmed to what its skins and rigid meshes need, with its clips and
/// skins carried over (see the [module docs](self) for the rule).
#[derive(Clone, Debug)]
pub struct RuntimeSkeleton {
    /// The trimmed skeleton; its rest pose, bind pose and inverse binds are the full
    /// skeleton's for the kept joints.
    pub skeleton: Skeleton,
    /// Full-skeleton joint ↔ trimmed joint.
    pub map: JointMap,
    /// The model's clips over the trimmed skeleton, by animation index (shared, as
    /// [`Model::clips`] are).
    pub clips: Vec<Arc<Clip>>,
    /// The model's skins over the trimmed skeleton, by skin index.
    pub skins: Vec<Skin>,
    /// Per glTF node, its joint in [`RuntimeSkeleton::skeleton`], or `None` when dropped.
    pub node_joints: Vec<Option<usize>>,
}

impl Model {
    /// The runtime view of this model: the trimmed skeleton and everything remapped to it
    /// (see [`crate::trim`](self) for which nodes are kept). [`Model::skeleton`] is left
    /// as it is.
    ///
    /// # Errors
    /// Only if the model is inconsistent (a skin or clip naming a joint the skeleton does
    /// not have); an imported model never is.
    pub fn runtime_skeleton(&self) -> Result<RuntimeSkeleton, GltfError> {
        let mut keep = vec![false; self.skeleton.len()];
        for s in &self.skins {
            for &j in s.skin.joints() {
                keep[j] = true;
            }
        }
        for m in self.meshes.iter().filter(|m| m.skin.is_none()) {
            keep[m.joint] = true;
        }
        let fail =
            |what: String| move |e: anim_core::offline::trim::TrimError| GltfError::Argument(format!("{what}: {e}"));
        let (skeleton, map) = self.skeleton.extract(&keep).map_err(fail("trimming the skeleton".into()))?;
        let clips = self
            .clips
            .iter()
            .enumerate()
            .map(|(i, c)| map.clip(c).map(Arc::new).map_err(fail(format!("animation {i}"))))
            .collect::<Result<Vec<_>, _>>()?;
        let skins = self
            .skins
            .iter()
            .enumerate()
            .map(|(i, s)| map.skin(&s.skin, &skeleton).map_err(fail(format!("skin {i}"))))
            .collect::<Result<Vec<_>, _>>()?;
        let node_joints = self.nodes.iter().map(|n| map.new_index(n.joint)).collect();
        Ok(RuntimeSkeleton { skeleton, map, clips, skins, node_joints })
    }
}
