//! Morph targets as glTF 2.0 defines them: expected values are computed here from the raw
//! accessor bytes and the specification's formulas (`p = base + Σ wᵢ·Δᵢ`, weights
//! interpolated per weight), not from the implementation.

mod common;

use anim_core::clip::{Interpolation, TimePolicy};

use anim_core::skin::SkinMethod;
use anim_gltf::{GltfError, Model, SkinScratch, load_from_bytes};
use anim_math::{Mat4, Vec3, Vec4};
use common::{Data, base64, doc};
use serde_json::{Value, json};

fn simple_morph_json() -> Value {
    let path = format!("{}/../../shared/assets/SimpleMorph/SimpleMorph.gltf", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn load(v: &Value) -> Result<Model, GltfError> {
    load_from_bytes(&serde_json::to_vec(v).unwrap(), None)
}

/// Standard base64 decoding of a `data:` URI's payload.
fn unbase64(s: &str) -> Vec<u8> {
    let val = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("not base64: {c}"),
    };
    let bytes: Vec<u8> = s.bytes().filter(|&c| c != b'=').collect();
    let mut out = Vec::new();
    for chunk in bytes.chunks(4) {
        let mut n = 0u32;
        for (k, &c) in chunk.iter().enumerate() {
            n |= u32::from(val(c)) << (18 - 6 * k);
        }
        for k in 0..chunk.len() - 1 {
            out.push((n >> (16 - 8 * k)) as u8);
        }
    }
    out
}

/// The floats of a (dense, FLOAT, tightly packed or strided VEC3/SCALAR) accessor, read
/// straight from the JSON and its data-URI buffers.
fn raw_floats(v: &Value, accessor: usize) -> Vec<f32> {
    let acc = &v["accessors"][accessor];
    let view = &v["bufferViews"][acc["bufferView"].as_u64().unwrap() as usize];
    let buffer = &v["buffers"][view["buffer"].as_u64().unwrap() as usize];
    let uri = buffer["uri"].as_str().unwrap();
    let data = unbase64(&uri[uri.find(',').unwrap() + 1..]);
    let comps = match acc["type"].as_str().unwrap() {
        "SCALAR" => 1,
        "VEC3" => 3,
        other => panic!("{other}"),
    };
    let stride = view["byteStride"].as_u64().map_or(4 * comps, |s| s as usize);
    let start = view["byteOffset"].as_u64().unwrap_or(0) as usize + acc["byteOffset"].as_u64().unwrap_or(0) as usize;
    let mut out = Vec::new();
    for i in 0..acc["count"].as_u64().unwrap() as usize {
        for c in 0..comps {
            let o = start + i * stride + 4 * c;
            out.push(f32::from_le_bytes(data[o..o + 4].try_into().unwrap()));
        }
    }
    out
}

fn vec3s(f: &[f32]) -> Vec<Vec3> {
    f.chunks_exact(3).map(|c| Vec3::new(c[0], c[1], c[2])).collect()
}

/// Positions of instance 0 at `time` of clip 0, and the weights used.
fn posed(m: &Model, time: f32) -> (Vec<Vec3>, Vec<f32>) {
    let n = m.meshes[0].data.vertex_count();
    let targets = m.meshes[0].morph.as_ref().map_or(0, |t| t.target_count());
    let mut w = vec![0.0; targets];
    m.sample_weights(0, 0, time, TimePolicy::Clamp, &mut w).unwrap();
    let mut pose = m.skeleton.rest_pose().clone();
    m.sample_pose(0, time, TimePolicy::Clamp, &mut pose).unwrap();
    let mut out = vec![Vec3::zeros(); n];
    let mut scratch = SkinScratch::new();
    let mut world = vec![Mat4::identity(); m.skeleton.len()];
    m.world_matrices(&pose, &mut world).unwrap();
    m.skin_instance_weighted(0, &world, Some(&w), SkinMethod::Lbs, &mut scratch, &mut out, None).unwrap();
    (out, w)
}

#[test]
fn simple_morph_matches_the_spec_formula_at_and_between_keys() {
    let v = simple_morph_json();
    let m = load(&v).unwrap();
    assert!(m.warnings.is_empty(), "{:?}", m.warnings);
    // Raw data: POSITION accessor 1, targets 2 and 3, keys accessor 4, weights accessor 5.
    let base = vec3s(&raw_floats(&v, 1));
    let d = [vec3s(&raw_floats(&v, 2)), vec3s(&raw_floats(&v, 3))];
    let times = raw_floats(&v, 4);
    let keys = raw_floats(&v, 5);
    assert_eq!(keys.len(), 2 * times.len());
    let morph = m.meshes[0].morph.as_ref().unwrap();
    assert_eq!(morph.target_count(), 2);
    assert_eq!(morph.default_weights(), &[0.5, 0.5]);
    assert_eq!(m.clip_info[0].channels[0].property, "weights");
    for &t in &[0.0f32, 0.25, 1.0, 1.5, 2.0, 2.75, 3.0, 3.5, 4.0, 5.0] {
        // LINEAR per weight between the keys around t (held outside).
        let k = times.iter().rposition(|&x| x <= t).unwrap();
        let expected_w: Vec<f32> = (0..2)
            .map(|j| {
                if k + 1 >= times.len() {
                    keys[2 * k + j]
                } else {
                    let s = (t - times[k]) / (times[k + 1] - times[k]);
                    keys[2 * k + j] * (1.0 - s) + keys[2 * (k + 1) + j] * s
                }
            })
            .collect();
        let (got, w) = posed(&m, t);
        for j in 0..2 {
            assert!((w[j] - expected_w[j]).abs() < 1e-6, "t={t} weight {j}: {} vs {}", w[j], expected_w[j]);
        }
        for (i, g) in got.iter().enumerate() {
            let e = base[i] + d[0][i] * expected_w[0] + d[1][i] * expected_w[1];
            assert!((g - e).norm() < 1e-6, "t={t} vertex {i}: {g:?} vs {e:?}");
        }
    }
    // Without a clip the defaults (mesh.weights = [0.5, 0.5]) apply.
    let mut out = vec![Vec3::zeros(); 3];
    let world = vec![Mat4::identity(); m.skeleton.len()];
    m.skin_instance(0, &world, SkinMethod::Lbs, &mut SkinScratch::new(), &mut out, None).unwrap();
    for i in 0..3 {
        assert!((out[i] - (base[i] + (d[0][i] + d[1][i]) * 0.5)).norm() < 1e-6);
    }
}

#[test]
fn node_weights_override_mesh_weights_and_names_come_from_extras() {
    let mut v = simple_morph_json();
    v["nodes"][0]["weights"] = json!([1.0, -0.25]);
    v["meshes"][0]["extras"] = json!({"targetNames": ["up", "right"]});
    let m = load(&v).unwrap();
    let morph = m.meshes[0].morph.as_ref().unwrap();
    assert_eq!(morph.default_weights(), &[1.0, -0.25]);
    assert_eq!(morph.names(), &["up".to_owned(), "right".to_owned()]);
    // Neither node nor mesh weights: zeros.
    v["nodes"][0].as_object_mut().unwrap().remove("weights");
    v["meshes"][0].as_object_mut().unwrap().remove("weights");
    v["meshes"][0]["extras"] = json!({"targetNames": ["only one"]});
    let m = load(&v).unwrap();
    assert_eq!(m.meshes[0].morph.as_ref().unwrap().default_weights(), &[0.0, 0.0]);
    assert!(m.meshes[0].morph.as_ref().unwrap().names().is_empty());
    assert!(m.warnings.iter().any(|w| w.contains("targetNames")), "{:?}", m.warnings);
}

/// Appends a buffer holding `bytes` as a data URI and a view over all of it; returns the
/// view's index.
fn add_view(v: &mut Value, bytes: &[u8]) -> usize {
    let buffers = v["buffers"].as_array_mut().unwrap();
    buffers.push(
        json!({"byteLength": bytes.len(), "uri": format!("data:application/octet-stream;base64,{}", base64(bytes))}),
    );
    let b = buffers.len() - 1;
    let views = v["bufferViews"].as_array_mut().unwrap();
    views.push(json!({"buffer": b, "byteLength": bytes.len()}));
    views.len() - 1
}

fn add_accessor(v: &mut Value, acc: Value) -> usize {
    let a = v["accessors"].as_array_mut().unwrap();
    a.push(acc);
    a.len() - 1
}

fn f32_bytes(f: &[f32]) -> Vec<u8> {
    f.iter().flat_map(|x| x.to_le_bytes()).collect()
}

#[test]
fn sparse_target_accessors() {
    let mut v = simple_morph_json();
    let iv = add_view(&mut v, &[2, 0, 0, 0]);
    let vv = add_view(&mut v, &f32_bytes(&[0.25, -0.5, 0.0]));
    // Target 1 becomes all zeros except vertex 2 (no bufferView: zeros, then sparse).
    let acc = add_accessor(
        &mut v,
        json!({"componentType": 5126, "count": 3, "type": "VEC3", "min": [0.0, -0.5, 0.0], "max": [0.25, 0.0, 0.0],
               "sparse": {"count": 1, "indices": {"bufferView": iv, "componentType": 5123},
                          "values": {"bufferView": vv}}}),
    );
    v["meshes"][0]["primitives"][0]["targets"][1]["POSITION"] = json!(acc);
    let base = vec3s(&raw_floats(&v, 1));
    let d0 = vec3s(&raw_floats(&v, 2));
    let m = load(&v).unwrap();
    let (got, w) = posed(&m, 2.0);
    assert_eq!(w, vec![1.0, 1.0]);
    let sparse = [Vec3::zeros(), Vec3::zeros(), Vec3::new(0.25, -0.5, 0.0)];
    for i in 0..3 {
        assert!((got[i] - (base[i] + d0[i] + sparse[i])).norm() < 1e-6, "{i}");
    }
}

#[test]
fn step_and_cubic_weight_channels() {
    let mut v = simple_morph_json();
    v["animations"][0]["samplers"][0]["interpolation"] = json!("STEP");
    let m = load(&v).unwrap();
    // STEP holds key 1 = (0, 1) over [1, 2).
    assert_eq!(posed(&m, 1.99).1, vec![0.0, 1.0]);
    assert_eq!(posed(&m, 2.0).1, vec![1.0, 1.0]);
    assert_eq!(m.clips[0].weight_tracks()[0].interpolation(), Interpolation::Step);

    // CUBICSPLINE: keys at 0 and 2; weight 0 goes 0 → 1 with out-tangent 1 at key 0 and
    // in-tangent 0 at key 1; weight 1 stays 3 (outside [0, 1]: not clamped).
    let tv = add_view(&mut v, &f32_bytes(&[0.0, 2.0]));
    let ov = add_view(&mut v, &f32_bytes(&[9.0, 9.0, 0.0, 3.0, 1.0, 0.0, 0.0, 0.0, 1.0, 3.0, 9.0, 9.0]));
    let ta = add_accessor(
        &mut v,
        json!({"bufferView": tv, "componentType": 5126, "count": 2, "type": "SCALAR", "min": [0.0], "max": [2.0]}),
    );
    let oa = add_accessor(&mut v, json!({"bufferView": ov, "componentType": 5126, "count": 12, "type": "SCALAR"}));
    v["animations"][0]["samplers"][0] = json!({"input": ta, "output": oa, "interpolation": "CUBICSPLINE"});
    let m = load(&v).unwrap();
    for t in [0.0f32, 0.5, 1.0, 1.5, 2.0] {
        let s = t / 2.0;
        let h10 = (s * s * s - 2.0 * s * s + s) * 2.0;
        let h01 = -2.0 * s * s * s + 3.0 * s * s;
        let w = posed(&m, t).1;
        assert!((w[0] - (h10 * 1.0 + h01 * 1.0)).abs() < 1e-6, "t={t}: {w:?}");
        assert!((w[1] - 3.0).abs() < 1e-6);
    }
    // A wrong output count names the sampler's output.
    v["accessors"][oa]["count"] = json!(6);
    let e = load(&v).unwrap_err();
    assert_eq!(e.path(), Some("/animations/0/samplers/0/output"), "{e}");
}

#[test]
fn validation_names_the_json_path() {
    let check = |f: &dyn Fn(&mut Value), path: &str| {
        let mut v = simple_morph_json();
        f(&mut v);
        let e = load(&v).unwrap_err();
        assert_eq!(e.path(), Some(path), "{e}");
    };
    check(&|v| v["meshes"][0]["weights"] = json!([0.5]), "/meshes/0/weights");
    check(&|v| v["nodes"][0]["weights"] = json!([0.5, 0.5, 0.5]), "/nodes/0/weights");
    check(
        &|v| {
            v["accessors"][2].as_object_mut().unwrap().remove("min");
        },
        "/meshes/0/primitives/0/targets/0/POSITION",
    );
    check(
        &|v| {
            let p = v["meshes"][0]["primitives"][0].clone();
            let mut q = p.clone();
            q["targets"].as_array_mut().unwrap().pop();
            v["meshes"][0]["primitives"] = json!([p, q]);
        },
        "/meshes/0/primitives/1/targets",
    );
    check(
        &|v| {
            // A delta accessor with 2 elements for 3 vertices.
            v["accessors"][3]["count"] = json!(2);
        },
        "/meshes/0/primitives/0/targets/1/POSITION",
    );
    // A wrong type is reported on the accessor (as for every attribute), naming its use.
    let mut v = simple_morph_json();
    v["accessors"][3]["type"] = json!("VEC2");
    let e = load(&v).unwrap_err();
    assert_eq!(e.path(), Some("/accessors/3"), "{e}");
    assert!(e.to_string().contains("/meshes/0/primitives/0/targets/1/POSITION"), "{e}");
}

#[test]
fn morph_then_skin_equals_hand_computed_skinning_of_morphed_bind_positions() {
    // The skinned triangle of `common`, with one target moving every vertex and a weights
    // channel on the skinned node (0 → 1 over the clip's second).
    let d = Data::default();
    let mut v = doc(&d);
    let delta = [0.5f32, 0.0, 0.25, -0.25, 0.5, 0.0, 0.0, -1.0, 1.0];
    let dv = add_view(&mut v, &f32_bytes(&delta));
    let da = add_accessor(
        &mut v,
        json!({"bufferView": dv, "componentType": 5126, "count": 3, "type": "VEC3", "min": [-0.25, -1.0, 0.0], "max": [0.5, 0.5, 1.0]}),
    );
    v["meshes"][0]["primitives"][0]["targets"] = json!([{"POSITION": da}]);
    let wv = add_view(&mut v, &f32_bytes(&[0.0, 1.0]));
    let wa = add_accessor(&mut v, json!({"bufferView": wv, "componentType": 5126, "count": 2, "type": "SCALAR"}));
    let samplers = v["animations"][0]["samplers"].as_array_mut().unwrap();
    samplers.push(json!({"input": 4, "output": wa, "interpolation": "LINEAR"}));
    v["animations"][0]["channels"]
        .as_array_mut()
        .unwrap()
        .push(json!({"sampler": 1, "target": {"node": 0, "path": "weights"}}));
    let m = load(&v).unwrap();
    let t = 0.5f32;
    let (got, w) = posed(&m, t);
    assert!((w[0] - 0.5).abs() < 1e-6);
    // Independent: joint 1 (node 2) rotates about z by the slerp of identity → 90° at 0.5
    // (45°), at y = 1 under node 1 (identity); IBM of joint 1 moves y by −1; joint 0 is
    // node 1 (identity, IBM identity).
    let angle = std::f32::consts::FRAC_PI_4;
    let (c, s) = (angle.cos(), angle.sin());
    let j1 = Mat4::new(c, -s, 0.0, 0.0, s, c, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0);
    let ibm1 = Mat4::new_translation(&Vec3::new(0.0, -1.0, 0.0));
    let mats = [Mat4::identity(), j1 * ibm1];
    for i in 0..3 {
        let p = Vec3::new(d.pos[3 * i], d.pos[3 * i + 1], d.pos[3 * i + 2])
            + Vec3::new(delta[3 * i], delta[3 * i + 1], delta[3 * i + 2]) * 0.5;
        let mut e = Vec3::zeros();
        for k in 0..4 {
            let wt = d.weights[4 * i + k];
            if wt > 0.0 {
                let q: Vec4 = mats[d.joints[4 * i + k] as usize] * p.push(1.0);
                e += q.xyz() * wt;
            }
        }
        assert!((got[i] - e).norm() < 1e-5, "vertex {i}: {:?} vs {e:?}", got[i]);
    }
}

#[test]
fn the_mannequin_exports_its_morphs_and_idle_weights_and_they_come_back() {
    let source = anim_mannequin::build();
    let m = anim_gltf::mannequin_model();
    let inst = &m.meshes[0];
    let morph = inst.morph.as_ref().unwrap();
    assert_eq!(morph.names(), &["breathe".to_owned(), "brow_raise".to_owned()]);
    assert_eq!(morph.default_weights(), &[0.0, 0.0]);
    // Deltas survive the file exactly (f32 written and read back).
    assert_eq!(morph.position_deltas(), source.morph.position_deltas());
    let idle = m.find_clip("idle").unwrap();
    assert_eq!(m.clips[idle].weight_tracks()[0].target, inst.joint);
    let mut w = [0.0f32; 2];
    for (t, e) in [(0.0f32, [0.0f32, 0.0]), (0.25, [0.25, 0.0]), (1.0, [1.0, 1.0]), (1.25, [0.75, 0.5])] {
        m.sample_weights(idle, 0, t, TimePolicy::Clamp, &mut w).unwrap();
        assert!((w[0] - e[0]).abs() < 1e-6 && (w[1] - e[1]).abs() < 1e-6, "t={t}: {w:?}");
    }
    // Morph + skin at t = 1 equals morphing the bind positions by hand, then the matrix
    // palette path of anim-core.
    let t = 1.0;
    m.sample_weights(idle, 0, t, TimePolicy::Clamp, &mut w).unwrap();
    let n = inst.data.vertex_count();
    let mut pose = m.skeleton.rest_pose().clone();
    m.sample_pose(idle, t, TimePolicy::Clamp, &mut pose).unwrap();
    let mut world = vec![Mat4::identity(); m.skeleton.len()];
    m.world_matrices(&pose, &mut world).unwrap();
    let mut got = vec![Vec3::zeros(); n];
    m.skin_instance_weighted(0, &world, Some(&w), SkinMethod::Lbs, &mut SkinScratch::new(), &mut got, None).unwrap();
    let d = source.morph.position_deltas();
    let morphed: Vec<Vec3> = (0..n).map(|v| source.mesh.positions[v] + d[v] * w[0] + d[n + v] * w[1]).collect();
    let skin = &m.skins[0].skin;
    let palette: Vec<Mat4> = skin.joints().iter().zip(skin.inverse_bind()).map(|(&j, ibm)| world[j] * ibm).collect();
    let inf = source.mesh.influences.as_ref().unwrap();
    let per = inf.per_vertex();
    let mut moved = 0.0f32;
    for v in 0..n {
        let mut e = Vec3::zeros();
        let mut rest = Vec3::zeros();
        for k in 0..per {
            let wt = inf.weights()[v * per + k];
            let pm = palette[usize::from(inf.joints()[v * per + k])];
            e += (pm * morphed[v].push(1.0)).xyz() * wt;
            rest += (pm * source.mesh.positions[v].push(1.0)).xyz() * wt;
        }
        assert!((got[v] - e).norm() < 1e-4, "vertex {v}: {:?} vs {e:?}", got[v]);
        moved = moved.max((e - rest).norm());
    }
    // The breath is visible: some vertex moves by more than 2 cm.
    assert!(moved > 0.02, "{moved}");
}
