//! The numeric-range check of a finished import ([`anim_core::range`]): a model that could
//! leave the range is rejected with the JSON path of the element that takes it there.

use super::Importer;
use crate::{GltfError, MeshInstance, SkinInfo};
use anim_core::range::{MeshRange, Origin, RangeError, check_model_range};
use anim_core::{Clip, Skeleton};

impl Importer<'_> {
    /// Runs [`check_model_range`] on the imported parts and maps its error to
    /// [`GltfError::OutOfRange`] with the path of the node property, animation channel,
    /// skin or mesh primitive at fault.
    pub(super) fn check_range(
        &self,
        skeleton: &Skeleton,
        clips: &[Clip],
        skins: &[SkinInfo],
        meshes: &[MeshInstance],
    ) -> Result<(), GltfError> {
        let skin_refs: Vec<_> = skins.iter().map(|s| &s.skin).collect();
        let mesh_refs: Vec<_> =
            meshes.iter().map(|m| MeshRange { positions: &m.data.positions, skin: m.skin, joint: m.joint }).collect();
        check_model_range(skeleton, clips, &skin_refs, &mesh_refs)
            .map_err(|source| GltfError::OutOfRange { path: self.range_path(skeleton, meshes, &source), source })
    }

    /// The JSON path of the element a [`RangeError`] is about.
    fn range_path(&self, skeleton: &Skeleton, meshes: &[MeshInstance], e: &RangeError) -> String {
        match e {
            RangeError::Joint { joint, quantity, origin, .. } => {
                let node = skeleton.source_index(*joint).unwrap_or(*joint);
                match origin {
                    Origin::Rest => match self.doc.nodes().nth(node).map(|n| n.transform()) {
                        Some(gltf::scene::Transform::Matrix { .. }) => format!("/nodes/{node}/matrix"),
                        _ => format!("/nodes/{node}/{}", quantity.name()),
                    },
                    // The skeleton's bind pose is the first skin's.
                    Origin::Bind => "/skins/0/inverseBindMatrices".to_owned(),
                    Origin::Clip { clip } => {
                        let channel = self.doc.animations().nth(*clip).and_then(|a| {
                            a.channels().find(|ch| {
                                ch.target().node().index() == node
                                    && matches!(
                                        (ch.target().property(), quantity.name()),
                                        (gltf::animation::Property::Translation, "translation")
                                            | (gltf::animation::Property::Scale, "scale")
                                    )
                            })
                        });
                        match channel {
                            Some(ch) => format!("/animations/{clip}/channels/{}", ch.index()),
                            None => format!("/animations/{clip}"),
                        }
                    }
                }
            }
            RangeError::InverseBind { skin, index, what, .. } => {
                if *what == "palette matrix" {
                    format!("/skins/{skin}/joints/{index}")
                } else {
                    format!("/skins/{skin}/inverseBindMatrices")
                }
            }
            RangeError::Mesh { mesh, .. } => match meshes.get(*mesh) {
                Some(m) => format!("/meshes/{}/primitives/{}/attributes/POSITION", m.mesh, m.primitive),
                None => "/meshes".to_owned(),
            },
        }
    }
}
