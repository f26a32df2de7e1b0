//! The numeric-range check of a finished import ([`anim_core::offline::range`]): a model that could
//! leave the range is rejected with the JSON path of the element that takes it there.

use super::Importer;
use crate::error::GltfError;
use crate::model::MeshInstance;
use crate::model::SkinInfo;
use anim_core::clip::Clip;
use anim_core::offline::range::{MAX_DISTANCE, MeshRange, Origin, RangeError, check_model_range};
use anim_core::pose::Skeleton;
use anim_core::skin::MorphTargets;
use anim_math::Vec3;

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
        // A morphed mesh is checked where its targets can take it: one point as far out as
        // the farthest morphed vertex could go.
        let mut reach = Vec::with_capacity(meshes.len());
        for (i, m) in meshes.iter().enumerate() {
            reach.push(match &m.morph {
                Some(targets) => Some([Vec3::new(self.morph_reach(i, m, targets, clips)?, 0.0, 0.0)]),
                None => None,
            });
        }
        let mesh_refs: Vec<_> = meshes
            .iter()
            .zip(&reach)
            .map(|(m, r)| MeshRange {
                positions: r.as_ref().map_or(&m.data.positions[..], |r| &r[..]),
                skin: m.skin,
                joint: m.joint,
            })
            .collect();
        check_model_range(skeleton, clips, &skin_refs, &mesh_refs)
            .map_err(|source| GltfError::OutOfRange { path: self.range_path(skeleton, meshes, &source), source })
    }

    /// The farthest any vertex of `m` (`meshes[index]`) can be from the origin once morphed:
    /// `max over v of |p(v)| + Σᵢ Wᵢ·|Δᵢ(v)|`, where `Wᵢ` bounds the weight of target `i` over
    /// the default weights and every clip's weight keys (a cubic spline's tangents included).
    /// Morphed normals are bounded the same way. Errors when either could pass
    /// [`MAX_DISTANCE`], so that morphing finite input stays finite.
    fn morph_reach(
        &self,
        index: usize,
        m: &MeshInstance,
        targets: &MorphTargets,
        clips: &[Clip],
    ) -> Result<f32, GltfError> {
        let n = targets.target_count();
        let mut w: Vec<f64> = targets.default_weights().iter().map(|x| f64::from(x.abs())).collect();
        w.resize(n, 0.0);
        for track in clips.iter().flat_map(|c| c.weight_tracks()).filter(|t| t.target == m.joint) {
            let values = track.values();
            let keys = track.times().len();
            let span = f64::from(track.end_time() - track.start_time());
            for (i, wi) in w.iter_mut().enumerate() {
                let at = |k: usize, part: usize, parts: usize| {
                    values.get((k * parts + part) * track.count() + i).map_or(0.0, |x| f64::from(x.abs()))
                };
                let bound = match track.interpolation() {
                    // Hermite basis: |h00|, |h01| ≤ 1 and |h10|, |h11| ≤ 4/27, each times Δt ≤ span.
                    anim_core::clip::Interpolation::CubicSpline => {
                        let (mut v, mut t) = (0.0f64, 0.0f64);
                        for k in 0..keys {
                            v = v.max(at(k, 1, 3));
                            t = t.max(at(k, 0, 3)).max(at(k, 2, 3));
                        }
                        2.0 * v + 8.0 / 27.0 * span * t
                    }
                    _ => (0..keys).map(|k| at(k, 0, 1)).fold(0.0, f64::max),
                };
                *wi = wi.max(bound);
            }
        }
        let limit = f64::from(MAX_DISTANCE);
        let len = |v: &Vec3| f64::from(v.x).hypot(f64::from(v.y)).hypot(f64::from(v.z));
        let mut farthest = 0.0f64;
        for (attribute, base, name) in [
            (targets.position_deltas(), &m.data.positions, "POSITION"),
            (targets.normal_deltas(), &m.data.normals, "NORMAL"),
        ] {
            if attribute.is_empty() {
                continue;
            }
            for (v, p) in base.iter().enumerate() {
                let mut r = len(p);
                for (t, wt) in w.iter().enumerate() {
                    if *wt > 0.0 {
                        r += wt * attribute.get(t * base.len() + v).map_or(0.0, len);
                    }
                }
                if r.is_nan() || r > limit {
                    return Err(GltfError::OutOfRange {
                        path: format!("/meshes/{}/primitives/{}/targets", m.mesh, m.primitive),
                        source: RangeError::Mesh {
                            mesh: index,
                            what: if name == "POSITION" { "morphed position" } else { "morphed normal" },
                            bound: r,
                            limit: MAX_DISTANCE,
                        },
                    });
                }
                if name == "POSITION" {
                    farthest = farthest.max(r);
                }
            }
        }
        Ok(farthest as f32)
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
