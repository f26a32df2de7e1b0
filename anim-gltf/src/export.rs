//! Skeleton, meshes and clips → binary glTF.

use crate::error::GltfError;
use crate::model::CURVES_KEY;
use anim_core::clip::{Clip, Interpolation, Track};
use anim_core::pose::Skeleton;
use anim_core::skin::{Mesh, MorphTargets, Skin};
use serde_json::{Value, json};
use std::collections::HashMap;

/// One mesh to export: it becomes a node (a scene root with the identity transform, as
/// glTF wants skinned mesh nodes) with one triangle primitive.
#[derive(Clone, Copy, Debug)]
pub struct ExportMesh<'a> {
    /// Node and mesh name.
    pub name: &'a str,
    /// The mesh. Its influences (if any) index `skin`'s joints.
    pub mesh: &'a Mesh,
    /// The skin binding the mesh, `None` for a static mesh.
    pub skin: Option<&'a Skin>,
}

const ARRAY_BUFFER: u32 = 34962;
const ELEMENT_ARRAY_BUFFER: u32 = 34963;
const FLOAT: u32 = 5126;
const UNSIGNED_SHORT: u32 = 5123;
const UNSIGNED_INT: u32 = 5125;

#[derive(Default)]
struct Builder {
    bin: Vec<u8>,
    views: Vec<Value>,
    accessors: Vec<Value>,
}

impl Builder {
    fn view(&mut self, bytes: &[u8], target: Option<u32>) -> usize {
        while !self.bin.len().is_multiple_of(4) {
            self.bin.push(0);
        }
        let mut v = json!({"buffer": 0, "byteOffset": self.bin.len(), "byteLength": bytes.len()});
        if let Some(t) = target {
            v["target"] = json!(t);
        }
        self.bin.extend_from_slice(bytes);
        self.views.push(v);
        self.views.len() - 1
    }

    /// A float accessor of `comps`-component elements (`ty` "SCALAR", "VEC3", …).
    fn floats(&mut self, data: &[f32], comps: usize, ty: &str, target: Option<u32>, bounds: bool) -> usize {
        let bytes: Vec<u8> = data.iter().flat_map(|f| f.to_le_bytes()).collect();
        let view = self.view(&bytes, target);
        let mut a = json!({"bufferView": view, "componentType": FLOAT, "count": data.len() / comps, "type": ty});
        if bounds {
            let mut lo = vec![f32::INFINITY; comps];
            let mut hi = vec![f32::NEG_INFINITY; comps];
            for e in data.chunks_exact(comps) {
                for c in 0..comps {
                    lo[c] = lo[c].min(e[c]);
                    hi[c] = hi[c].max(e[c]);
                }
            }
            a["min"] = json!(lo);
            a["max"] = json!(hi);
        }
        self.accessors.push(a);
        self.accessors.len() - 1
    }

    fn u16s(&mut self, data: &[u16], ty: &str, count: usize, target: Option<u32>) -> usize {
        let bytes: Vec<u8> = data.iter().flat_map(|f| f.to_le_bytes()).collect();
        let view = self.view(&bytes, target);
        self.accessors.push(json!({"bufferView": view, "componentType": UNSIGNED_SHORT, "count": count, "type": ty}));
        self.accessors.len() - 1
    }

    fn u32s(&mut self, data: &[u32], target: Option<u32>) -> usize {
        let bytes: Vec<u8> = data.iter().flat_map(|f| f.to_le_bytes()).collect();
        let view = self.view(&bytes, target);
        self.accessors
            .push(json!({"bufferView": view, "componentType": UNSIGNED_INT, "count": data.len(), "type": "SCALAR"}));
        self.accessors.len() - 1
    }
}

/// Writes `morph`'s targets, default weights and names into the mesh `gl_mesh` (one
/// primitive) of `n` vertices.
fn export_morph(b: &mut Builder, morph: &MorphTargets, n: usize, gl_mesh: &mut Value) -> Result<(), String> {
    if morph.vertex_count() != n {
        return Err(format!("morph targets for {} vertices, the mesh has {n}", morph.vertex_count()));
    }
    let flat = |d: &[anim_math::Vec3], t: usize| -> Vec<f32> {
        d[t * n..(t + 1) * n].iter().flat_map(|v| [v.x, v.y, v.z]).collect()
    };
    let mut targets = Vec::new();
    for t in 0..morph.target_count() {
        let mut target = serde_json::Map::new();
        // Every target needs an attribute; POSITION (with the min/max it requires) always.
        let pos = if morph.position_deltas().is_empty() { vec![0.0; 3 * n] } else { flat(morph.position_deltas(), t) };
        target.insert("POSITION".into(), json!(b.floats(&pos, 3, "VEC3", Some(ARRAY_BUFFER), true)));
        if !morph.normal_deltas().is_empty() {
            let d = flat(morph.normal_deltas(), t);
            target.insert("NORMAL".into(), json!(b.floats(&d, 3, "VEC3", Some(ARRAY_BUFFER), false)));
        }
        if !morph.tangent_deltas().is_empty() {
            let d = flat(morph.tangent_deltas(), t);
            target.insert("TANGENT".into(), json!(b.floats(&d, 3, "VEC3", Some(ARRAY_BUFFER), false)));
        }
        targets.push(Value::Object(target));
    }
    gl_mesh["primitives"][0]["targets"] = json!(targets);
    gl_mesh["weights"] = json!(morph.default_weights());
    if !morph.names().is_empty() {
        gl_mesh["extras"] = json!({ "targetNames": morph.names() });
    }
    Ok(())
}

fn interp_name(i: Interpolation) -> &'static str {
    match i {
        Interpolation::Step => "STEP",
        Interpolation::Linear => "LINEAR",
        Interpolation::CubicSpline => "CUBICSPLINE",
    }
}

/// Writes `skeleton` (one node per joint, in skeleton order, with the rest pose as TRS),
/// `meshes` (one root node each, skinned ones with a glTF skin over their [`Skin`]'s
/// joints and inverse bind matrices) and `clips` (one animation each; named scalar curves
/// in the animation's `extras` under [`CURVES_KEY`]) as a binary glTF (`.glb`).
///
/// Influence counts that are not a multiple of four are padded with zero weights into
/// `JOINTS_n`/`WEIGHTS_n` sets.
///
/// # Errors
/// A mesh whose influences, normals or UVs do not match its vertex count, a skin joint
/// outside the skeleton, a clip animating a joint the skeleton does not have or having no
/// joint channel, or more than 65 535 vertices referenced by 16-bit joints.
pub fn export_glb(skeleton: &Skeleton, meshes: &[ExportMesh], clips: &[Clip]) -> Result<Vec<u8>, GltfError> {
    export_glb_with_morphs(skeleton, meshes, &[], clips)
}

/// [`export_glb`] with morph targets: `morphs[i]` (when present and `Some`) becomes the
/// `targets` of mesh `i` (POSITION with min/max, NORMAL and TANGENT deltas where the
/// targets have them), its default weights `mesh.weights` and its names
/// `mesh.extras.targetNames`. A clip's [`anim_core::clip::WeightTrack`] whose target is
/// `skeleton.len() + i` (the node mesh `i` gets in the file) becomes a `weights` channel
/// of that node.
///
/// # Errors
/// As [`export_glb`]; morph targets for another vertex count, or a weight track for a
/// node that is no mesh with that many targets.
pub fn export_glb_with_morphs(
    skeleton: &Skeleton,
    meshes: &[ExportMesh],
    morphs: &[Option<&MorphTargets>],
    clips: &[Clip],
) -> Result<Vec<u8>, GltfError> {
    let mut b = Builder::default();
    let nj = skeleton.len();
    let mut nodes: Vec<Value> = Vec::with_capacity(nj + meshes.len());
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); nj];
    for (i, p) in skeleton.parents().iter().enumerate() {
        if let Some(p) = p {
            children[*p].push(i);
        }
    }
    for (i, t) in skeleton.rest_pose().locals().iter().enumerate() {
        let q = t.rotation.coords;
        let mut n = json!({
            "name": skeleton.name(i).unwrap_or(""),
            "translation": [t.translation.x, t.translation.y, t.translation.z],
            "rotation": [q[0], q[1], q[2], q[3]],
            "scale": [t.scale.x, t.scale.y, t.scale.z],
        });
        if !children[i].is_empty() {
            n["children"] = json!(children[i]);
        }
        nodes.push(n);
    }
    let mut scene_nodes: Vec<usize> = (0..nj).filter(|&i| skeleton.parent(i).is_none()).collect();
    let mut gl_meshes = Vec::new();
    let mut skins = Vec::new();
    for (mi, em) in meshes.iter().enumerate() {
        let m = em.mesh;
        let n = m.vertex_count();
        let bad = |what: &str| GltfError::Export(format!("mesh {mi} ({:?}): {what}", em.name));
        if n == 0 {
            return Err(bad("no vertices"));
        }
        if (!m.normals.is_empty() && m.normals.len() != n) || (!m.uvs.is_empty() && m.uvs.len() != n) {
            return Err(bad("normals or uvs do not match the vertex count"));
        }
        if let Some(k) = m.indices.iter().position(|&i| i as usize >= n) {
            return Err(bad(&format!("index {k} is out of range")));
        }
        let pos: Vec<f32> = m.positions.iter().flat_map(|p| [p.x, p.y, p.z]).collect();
        if pos.iter().any(|v| !v.is_finite()) {
            return Err(bad("non-finite position"));
        }
        let mut attrs = serde_json::Map::new();
        attrs.insert("POSITION".into(), json!(b.floats(&pos, 3, "VEC3", Some(ARRAY_BUFFER), true)));
        if !m.normals.is_empty() {
            let nrm: Vec<f32> = m
                .normals
                .iter()
                .flat_map(|v| {
                    let l = v.norm();
                    let u = if l > 1e-12 { v / l } else { anim_math::Vec3::y() };
                    [u.x, u.y, u.z]
                })
                .collect();
            attrs.insert("NORMAL".into(), json!(b.floats(&nrm, 3, "VEC3", Some(ARRAY_BUFFER), false)));
        }
        if !m.uvs.is_empty() {
            let uv: Vec<f32> = m.uvs.iter().flat_map(|u| [u[0], u[1]]).collect();
            attrs.insert("TEXCOORD_0".into(), json!(b.floats(&uv, 2, "VEC2", Some(ARRAY_BUFFER), false)));
        }
        let mut node = json!({"name": em.name, "mesh": gl_meshes.len()});
        if let (Some(inf), Some(skin)) = (&m.influences, em.skin) {
            if inf.vertex_count() != n {
                return Err(bad("influences do not match the vertex count"));
            }
            if let Some(&j) = skin.joints().iter().find(|&&j| j >= nj) {
                return Err(bad(&format!("skin joint {j} is outside the skeleton")));
            }
            if inf.joint_bound() > skin.len() {
                return Err(bad("influences use joints the skin does not have"));
            }
            let per = inf.per_vertex();
            let sets = per.div_ceil(4);
            for set in 0..sets {
                let mut js = vec![0u16; 4 * n];
                let mut ws = vec![0f32; 4 * n];
                for v in 0..n {
                    for k in 0..4 {
                        let slot = set * 4 + k;
                        if slot < per {
                            js[4 * v + k] = inf.joints()[v * per + slot];
                            ws[4 * v + k] = inf.weights()[v * per + slot];
                        }
                    }
                }
                attrs.insert(format!("JOINTS_{set}"), json!(b.u16s(&js, "VEC4", n, Some(ARRAY_BUFFER))));
                attrs.insert(format!("WEIGHTS_{set}"), json!(b.floats(&ws, 4, "VEC4", Some(ARRAY_BUFFER), false)));
            }
            let ibm: Vec<f32> = skin.inverse_bind().iter().flat_map(|m| m.as_slice().to_vec()).collect();
            let ibm_acc = b.floats(&ibm, 16, "MAT4", None, false);
            node["skin"] = json!(skins.len());
            skins.push(json!({"joints": skin.joints(), "inverseBindMatrices": ibm_acc}));
        }
        let mut prim = json!({"attributes": Value::Object(attrs), "mode": 4});
        if !m.indices.is_empty() {
            prim["indices"] = json!(b.u32s(&m.indices, Some(ELEMENT_ARRAY_BUFFER)));
        }
        let mut gl_mesh = json!({"name": em.name, "primitives": [prim]});
        if let Some(Some(morph)) = morphs.get(mi) {
            export_morph(&mut b, morph, n, &mut gl_mesh).map_err(|e| bad(&e))?;
        }
        gl_meshes.push(gl_mesh);
        scene_nodes.push(nodes.len());
        nodes.push(node);
    }
    let mut animations = Vec::new();
    let mut time_cache: HashMap<Vec<u32>, usize> = HashMap::new();
    for clip in clips {
        clip.check_joints(nj).map_err(|e| GltfError::Export(e.to_string()))?;
        let mut samplers = Vec::new();
        let mut channels = Vec::new();
        let mut input = |b: &mut Builder, times: &[f32]| -> usize {
            let key: Vec<u32> = times.iter().map(|t| t.to_bits()).collect();
            *time_cache.entry(key).or_insert_with(|| b.floats(times, 1, "SCALAR", None, true))
        };
        for jt in clip.joint_tracks() {
            let mut add = |b: &mut Builder, path: &str, times: &[f32], values: Vec<f32>, comps, ty, interp| {
                let i = input(b, times);
                let o = b.floats(&values, comps, ty, None, false);
                samplers.push(json!({"input": i, "output": o, "interpolation": interp_name(interp)}));
                channels.push(json!({"sampler": samplers.len() - 1, "target": {"node": jt.joint, "path": path}}));
            };
            let vec3 = |t: &Track<anim_math::Vec3>| t.values().iter().flat_map(|v| [v.x, v.y, v.z]).collect::<Vec<_>>();
            if let Some(t) = &jt.translation {
                add(&mut b, "translation", t.times(), vec3(t), 3, "VEC3", t.interpolation());
            }
            if let Some(t) = &jt.rotation {
                let cubic = t.interpolation() == Interpolation::CubicSpline;
                let v: Vec<f32> = t
                    .values()
                    .iter()
                    .enumerate()
                    .flat_map(|(k, q)| {
                        // Key values must be unit quaternions; spline tangents are kept as is.
                        let c = if !cubic || k % 3 == 1 { q.coords / q.coords.norm().max(1e-30) } else { q.coords };
                        [c[0], c[1], c[2], c[3]]
                    })
                    .collect();
                add(&mut b, "rotation", t.times(), v, 4, "VEC4", t.interpolation());
            }
            if let Some(t) = &jt.scale {
                add(&mut b, "scale", t.times(), vec3(t), 3, "VEC3", t.interpolation());
            }
        }
        for wt in clip.weight_tracks() {
            let count =
                wt.target.checked_sub(nj).and_then(|i| morphs.get(i).copied().flatten()).map(|m| m.target_count());
            if count != Some(wt.count()) {
                return Err(GltfError::Export(format!(
                    "clip {:?}: weight track for node {} with {} weights, but that node is no mesh with as many morph targets",
                    clip.name(),
                    wt.target,
                    wt.count()
                )));
            }
            let i = input(&mut b, wt.times());
            let o = b.floats(wt.values(), 1, "SCALAR", None, false);
            samplers.push(json!({"input": i, "output": o, "interpolation": interp_name(wt.interpolation())}));
            channels.push(json!({"sampler": samplers.len() - 1, "target": {"node": wt.target, "path": "weights"}}));
        }
        if channels.is_empty() {
            return Err(GltfError::Export(format!("clip {:?} animates no joint; glTF needs a channel", clip.name())));
        }
        let mut anim = json!({"name": clip.name(), "samplers": samplers, "channels": channels});
        if !clip.curves().is_empty() {
            let curves: Vec<Value> = clip
                .curves()
                .iter()
                .map(|c| {
                    json!({
                        "name": c.name,
                        "interpolation": interp_name(c.track.interpolation()),
                        "times": c.track.times(),
                        "values": c.track.values(),
                    })
                })
                .collect();
            anim["extras"] = json!({ CURVES_KEY: curves });
        }
        if !clip.events().is_empty() {
            let events: Vec<Value> = clip.events().iter().map(|e| json!({"name": e.name, "time": e.time})).collect();
            anim["extras"][crate::model::EVENTS_KEY] = json!(events);
        }
        animations.push(anim);
    }
    while !b.bin.len().is_multiple_of(4) {
        b.bin.push(0);
    }
    let mut doc = json!({
        "asset": {"version": "2.0", "generator": "anim-gltf"},
        "scene": 0,
        "scenes": [{"nodes": scene_nodes}],
        "nodes": nodes,
        "buffers": [{"byteLength": b.bin.len()}],
        "bufferViews": b.views,
        "accessors": b.accessors,
    });
    if !gl_meshes.is_empty() {
        doc["meshes"] = json!(gl_meshes);
    }
    if !skins.is_empty() {
        doc["skins"] = json!(skins);
    }
    if !animations.is_empty() {
        doc["animations"] = json!(animations);
    }
    if b.bin.is_empty() {
        doc.as_object_mut().expect("document is an object").remove("buffers");
    }
    let mut text = serde_json::to_vec(&doc).map_err(|e| GltfError::Export(e.to_string()))?;
    while !text.len().is_multiple_of(4) {
        text.push(b' ');
    }
    let bin_chunk = if b.bin.is_empty() { 0 } else { 8 + b.bin.len() };
    let total = 12 + 8 + text.len() + bin_chunk;
    let total = u32::try_from(total).map_err(|_| GltfError::Export("file larger than 4 GiB".into()))?;
    let mut out = Vec::with_capacity(total as usize);
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&total.to_le_bytes());
    out.extend_from_slice(&(text.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&text);
    if !b.bin.is_empty() {
        out.extend_from_slice(&(b.bin.len() as u32).to_le_bytes());
        out.extend_from_slice(b"BIN\0");
        out.extend_from_slice(&b.bin);
    }
    Ok(out)
}
