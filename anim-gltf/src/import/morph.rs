//! Morph targets: each primitive's `targets` (POSITION, NORMAL and TANGENT deltas, sparse
//! accessors included) become an [`anim_core::skin::MorphTargets`] with the default weights of
//! its node (`node.weights`, else `mesh.weights`, else zeros) and the target names of
//! `mesh.extras.targetNames`; `weights` channels become [`WeightTrack`]s.
//!
//! Validated as the glTF 2.0 specification requires (3.7.2.2 "Morph Targets"): every
//! primitive of a mesh has the same number of targets, `mesh.weights` and `node.weights`
//! hold one weight a target, every delta accessor has the primitive's vertex count, and a
//! POSITION delta accessor has `min` and `max`. Errors name the JSON path
//! (`/meshes/0/primitives/1/targets/2/POSITION`).

use super::Importer;
use super::buffers::{F32, Want, check_accessor, check_finite, quantized};
use crate::error::GltfError;
use anim_core::clip::{Interpolation, WeightTrack};
use anim_core::pose::Skeleton;
use anim_core::skin::MorphTargets;
use anim_math::Vec3;
use gltf::accessor::{DataType, Dimensions};

/// Delta accessors: float, or (normalized) signed integers with `KHR_mesh_quantization`.
const DELTAS: Want = Want {
    dims: &[Dimensions::Vec3],
    types: &[F32, (DataType::I8, false), (DataType::I16, false), (DataType::I8, true), (DataType::I16, true)],
    what: "VEC3 FLOAT (or (normalized) BYTE/SHORT with KHR_mesh_quantization)",
};

/// Weight outputs: float or normalized integers (glTF 2.0, 3.11 "Animations").
const WEIGHTS: Want = Want {
    dims: &[Dimensions::Scalar],
    types: &[F32, (DataType::I8, true), (DataType::U8, true), (DataType::I16, true), (DataType::U16, true)],
    what: "SCALAR FLOAT or normalized integers",
};

impl Importer<'_> {
    /// Checks the morph-target counts of every mesh and node, before any is read: returns
    /// the target count of each mesh.
    pub(super) fn morph_target_counts(&self) -> Result<Vec<usize>, GltfError> {
        let mut counts = Vec::new();
        for mesh in self.doc.meshes() {
            let m = mesh.index();
            let mut count = None;
            for prim in mesh.primitives() {
                let n = prim.morph_targets().len();
                match count {
                    None => count = Some(n),
                    Some(c) if c != n => {
                        return Err(GltfError::Schema {
                            path: format!("/meshes/{m}/primitives/{}/targets", prim.index()),
                            message: format!(
                                "has {n} morph targets, primitive 0 has {c}; all primitives of a mesh must have the same number"
                            ),
                        });
                    }
                    Some(_) => {}
                }
            }
            let count = count.unwrap_or(0);
            if let Some(w) = mesh.weights()
                && w.len() != count
            {
                return Err(GltfError::Schema {
                    path: format!("/meshes/{m}/weights"),
                    message: format!("has {} weights, the mesh has {count} morph targets", w.len()),
                });
            }
            if let Some(w) = mesh.weights()
                && let Some(i) = w.iter().position(|x| !x.is_finite())
            {
                return Err(GltfError::NonFinite { path: format!("/meshes/{m}/weights"), what: format!("weight {i}") });
            }
            counts.push(count);
        }
        for node in self.doc.nodes() {
            let Some(w) = node.weights() else { continue };
            let path = format!("/nodes/{}/weights", node.index());
            let Some(mesh) = node.mesh() else {
                return Err(GltfError::Schema { path, message: "weights on a node without a mesh".into() });
            };
            if w.len() != counts[mesh.index()] {
                return Err(GltfError::Schema {
                    path,
                    message: format!(
                        "has {} weights, meshes[{}] has {} morph targets",
                        w.len(),
                        mesh.index(),
                        counts[mesh.index()]
                    ),
                });
            }
            if let Some(i) = w.iter().position(|x| !x.is_finite()) {
                return Err(GltfError::NonFinite { path, what: format!("weight {i}") });
            }
        }
        Ok(counts)
    }

    /// The morph targets of one primitive of `mesh` drawn by `node`, with `vertex_count`
    /// vertices; `None` when it has none.
    pub(super) fn primitive_morph(
        &mut self,
        node: &gltf::Node,
        mesh: &gltf::Mesh,
        prim: &gltf::Primitive,
        vertex_count: usize,
    ) -> Result<Option<MorphTargets>, GltfError> {
        let count = prim.morph_targets().len();
        if count == 0 {
            return Ok(None);
        }
        let base = format!("/meshes/{}/primitives/{}/targets", mesh.index(), prim.index());
        let mut sets: [Vec<Vec<Vec3>>; 3] = Default::default();
        let mut present = [false; 3];
        for (t, target) in prim.morph_targets().enumerate() {
            for (a, (name, acc)) in
                [("POSITION", target.positions()), ("NORMAL", target.normals()), ("TANGENT", target.tangents())]
                    .into_iter()
                    .enumerate()
            {
                let Some(acc) = acc else {
                    sets[a].push(vec![Vec3::zeros(); vertex_count]);
                    continue;
                };
                let path = format!("{base}/{t}/{name}");
                check_accessor(&acc, self.buffers, &DELTAS, &path)?;
                if acc.count() != vertex_count {
                    return Err(GltfError::accessor(
                        path,
                        format!(
                            "accessors[{}] has {} deltas, the primitive has {vertex_count} vertices",
                            acc.index(),
                            acc.count()
                        ),
                    ));
                }
                if a == 0 && (acc.min().is_none() || acc.max().is_none()) {
                    return Err(GltfError::accessor(
                        path,
                        format!("accessors[{}] is a POSITION delta accessor and must define min and max", acc.index()),
                    ));
                }
                let raw = quantized::<3>(&acc, self.buffers);
                check_finite(&raw, &path, "delta")?;
                present[a] = true;
                sets[a].push(raw.into_iter().map(Vec3::from).collect());
            }
        }
        let wrap = |e: anim_core::skin::MorphError| GltfError::Schema { path: base.clone(), message: e.to_string() };
        let [positions, normals, tangents] = sets;
        let mut m = MorphTargets::new(vertex_count, count);
        if present[0] {
            m = m.with_positions(positions).map_err(wrap)?;
        }
        if present[1] {
            m = m.with_normals(normals).map_err(wrap)?;
        }
        if present[2] {
            m = m.with_tangents(tangents).map_err(wrap)?;
        }
        if let Some(w) = node.weights().or_else(|| mesh.weights()) {
            m = m.with_default_weights(w.to_vec()).map_err(wrap)?;
        }
        if let Some(names) = self.target_names(mesh, count) {
            m = m.with_names(names).map_err(wrap)?;
        }
        Ok(Some(m))
    }

    /// `mesh.extras.targetNames` when it is a list of one string a target (a convention of
    /// exporters, not part of the specification: anything else is a warning).
    fn target_names(&mut self, mesh: &gltf::Mesh, count: usize) -> Option<Vec<String>> {
        let raw = mesh.extras().as_ref()?;
        let value: serde_json::Value = serde_json::from_str(raw.get()).ok()?;
        let list = value.get("targetNames")?;
        let names: Option<Vec<String>> =
            list.as_array().map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect());
        match names {
            Some(n) if n.len() == count && list.as_array().is_some_and(|a| a.len() == count) => Some(n),
            _ => {
                self.warnings.push(format!(
                    "/meshes/{}/extras/targetNames is not a list of {count} strings; target names ignored",
                    mesh.index()
                ));
                None
            }
        }
    }

    /// A `weights` channel of animation `a` as a [`WeightTrack`] for the node's joint, and
    /// what the channel looked like.
    pub(super) fn weight_channel(
        &self,
        skeleton: &Skeleton,
        ch: &gltf::animation::Channel,
        a: usize,
    ) -> Result<(WeightTrack, crate::model::ChannelInfo), GltfError> {
        let cpath = format!("/animations/{a}/channels/{}", ch.index());
        let node = ch.target().node();
        let sampler = ch.sampler();
        let spath = format!("/animations/{a}/samplers/{}", sampler.index());
        let interp = match sampler.interpolation() {
            gltf::animation::Interpolation::Step => Interpolation::Step,
            gltf::animation::Interpolation::Linear => Interpolation::Linear,
            gltf::animation::Interpolation::CubicSpline => Interpolation::CubicSpline,
        };
        let input = sampler.input();
        let ipath = format!("{spath}/input");
        check_accessor(
            &input,
            self.buffers,
            &Want { dims: &[Dimensions::Scalar], types: &[F32], what: "SCALAR FLOAT" },
            &ipath,
        )?;
        let times: Vec<f32> = quantized::<1>(&input, self.buffers).into_iter().map(|[t]| t).collect();
        for (k, &t) in times.iter().enumerate() {
            if !t.is_finite() {
                return Err(GltfError::NonFinite { path: ipath, what: format!("key time {k}") });
            }
            if k > 0 && t <= times[k - 1] {
                return Err(GltfError::KeysNotIncreasing { path: ipath, index: k, time: t });
            }
        }
        let info = crate::model::ChannelInfo {
            node: node.index(),
            property: "weights",
            interpolation: interp,
            keys: times.len(),
            start: times[0],
            end: *times.last().expect("count checked ≥ 1"),
        };
        let opath = format!("{spath}/output");
        let output = sampler.output();
        let Some(mesh) = node.mesh() else {
            return Err(GltfError::Schema {
                path: format!("{cpath}/target"),
                message: format!("animates the weights of nodes[{}], which has no mesh", node.index()),
            });
        };
        let count = mesh.primitives().next().map_or(0, |p| p.morph_targets().len());
        if count == 0 {
            return Err(GltfError::Schema {
                path: format!("{cpath}/target"),
                message: format!("animates the weights of meshes[{}], which has no morph targets", mesh.index()),
            });
        }
        check_accessor(&output, self.buffers, &WEIGHTS, &opath)?;
        let per_key = if interp == Interpolation::CubicSpline { 3 * count } else { count };
        if output.count() != times.len() * per_key {
            return Err(GltfError::accessor(
                opath,
                format!(
                    "accessors[{}] has {} values for {} keys of {count} weights ({} expected with {interp:?})",
                    output.index(),
                    output.count(),
                    times.len(),
                    times.len() * per_key
                ),
            ));
        }
        let values: Vec<f32> = quantized::<1>(&output, self.buffers).into_iter().map(|[x]| x).collect();
        if let Some(i) = values.iter().position(|x| !x.is_finite()) {
            return Err(GltfError::NonFinite { path: opath, what: format!("weight {i}") });
        }
        let joint = skeleton.from_source_index(node.index()).expect("every node is a joint of the model's skeleton");
        let track = WeightTrack::new(joint, count, interp, times, values)
            .map_err(|e| GltfError::accessor(opath.clone(), e.to_string()))?;
        Ok((track, info))
    }
}
