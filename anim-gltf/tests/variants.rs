//! Valid but less common inputs: sparse accessors, quantized influences, absent IBMs,
//! several skins, `matrix` nodes, scene selection, external buffers.

mod common;

use anim_core::clip::TimePolicy;
use anim_core::skin::SkinMethod;
use anim_gltf::{Model, SkinScratch, load_from_bytes};
use anim_math::{Mat4, Vec3};
use common::{Data, base64, doc};
use serde_json::{Value, json};

fn load(v: &Value) -> Model {
    load_from_bytes(&serde_json::to_vec(v).unwrap(), None).unwrap_or_else(|e| panic!("{e}"))
}

/// Positions of every instance at clip 0's time `t` (or the rest pose for `None`).
fn skinned(m: &Model, t: Option<f32>) -> Vec<Vec<Vec3>> {
    let mut pose = m.skeleton.rest_pose().clone();
    if let Some(t) = t {
        m.sample_pose(0, t, TimePolicy::Clamp, &mut pose).unwrap();
    }
    let mut world = vec![Mat4::identity(); m.skeleton.len()];
    m.world_matrices(&pose, &mut world).unwrap();
    let mut scratch = SkinScratch::new();
    (0..m.meshes.len())
        .map(|i| {
            let mut out = vec![Vec3::zeros(); m.meshes[i].data.vertex_count()];
            m.skin_instance(i, &world, SkinMethod::Lbs, &mut scratch, &mut out, None).unwrap();
            out
        })
        .collect()
}

fn close(a: Vec3, b: Vec3) -> bool {
    (a - b).norm() < 1e-5
}

/// Adds a second embedded buffer holding `bytes` and a view over `range` of it for each
/// entry of `views`; returns the new view indices.
fn add_buffer(v: &mut Value, bytes: &[u8], views: &[(usize, usize)]) -> Vec<usize> {
    let b = v["buffers"].as_array().unwrap().len();
    v["buffers"].as_array_mut().unwrap().push(
        json!({"byteLength": bytes.len(), "uri": format!("data:application/gltf-buffer;base64,{}", base64(bytes))}),
    );
    views
        .iter()
        .map(|&(off, len)| {
            let list = v["bufferViews"].as_array_mut().unwrap();
            list.push(json!({"buffer": b, "byteOffset": off, "byteLength": len}));
            list.len() - 1
        })
        .collect()
}

#[test]
fn base_triangle_hand_computed() {
    let m = load(&doc(&Data::default()));
    // At t = 1 joint 1 (node 2, at y = 1) has turned 90° about Z. Vertex 2 = (0, 2, 0) follows
    // it only: T(0,1,0)·Rz(90°)·T(0,-1,0)·(0,2,0) = (-1, 1, 0). Vertex 1 = (1, 0, 0) is half
    // joint 0 (identity): 0.5·(1,0,0) + 0.5·(1, 2, 0) = (1, 1, 0).
    let out = skinned(&m, Some(1.0));
    assert!(close(out[0][2], Vec3::new(-1.0, 1.0, 0.0)), "{:?}", out[0][2]);
    assert!(close(out[0][1], Vec3::new(1.0, 1.0, 0.0)), "{:?}", out[0][1]);
}

#[test]
fn sparse_positions() {
    let mut v = doc(&Data::default());
    // Sparse override of vertex 2: (0, 3, 0); indices as UNSIGNED_BYTE.
    let mut bytes = vec![2u8, 0, 0, 0];
    for f in [0.0f32, 3.0, 0.0] {
        bytes.extend_from_slice(&f.to_le_bytes());
    }
    let views = add_buffer(&mut v, &bytes, &[(0, 1), (4, 12)]);
    v["accessors"][0]["sparse"] = json!({
        "count": 1,
        "indices": {"bufferView": views[0], "componentType": 5121},
        "values": {"bufferView": views[1]}
    });
    v["accessors"][0]["max"] = json!([1.0, 3.0, 0.0]);
    let m = load(&v);
    assert_eq!(m.meshes[0].data.positions[2], Vec3::new(0.0, 3.0, 0.0));
    assert_eq!(m.meshes[0].data.positions[1], Vec3::new(1.0, 0.0, 0.0));

    // A sparse index beyond the count is an error naming the sparse indices.
    let mut bad = v.clone();
    let mut bytes = vec![7u8, 0, 0, 0];
    for f in [0.0f32, 3.0, 0.0] {
        bytes.extend_from_slice(&f.to_le_bytes());
    }
    let views = add_buffer(&mut bad, &bytes, &[(0, 1), (4, 12)]);
    bad["accessors"][0]["sparse"]["indices"]["bufferView"] = json!(views[0]);
    let e = load_from_bytes(&serde_json::to_vec(&bad).unwrap(), None).unwrap_err();
    assert_eq!(e.path(), Some("/accessors/0/sparse/indices"), "{e}");
}

#[test]
fn byte_joints_and_normalized_byte_weights() {
    let mut v = doc(&Data::default());
    let joints: [u8; 12] = [0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0];
    let weights: [u8; 12] = [255, 0, 0, 0, 128, 127, 0, 0, 255, 0, 0, 0];
    let mut bytes = joints.to_vec();
    bytes.extend_from_slice(&weights);
    let views = add_buffer(&mut v, &bytes, &[(0, 12), (12, 12)]);
    let accessors = v["accessors"].as_array_mut().unwrap();
    accessors.push(json!({"bufferView": views[0], "componentType": 5121, "count": 3, "type": "VEC4"}));
    accessors
        .push(json!({"bufferView": views[1], "componentType": 5121, "normalized": true, "count": 3, "type": "VEC4"}));
    let n = accessors.len();
    v["meshes"][0]["primitives"][0]["attributes"]["JOINTS_0"] = json!(n - 2);
    v["meshes"][0]["primitives"][0]["attributes"]["WEIGHTS_0"] = json!(n - 1);
    let m = load(&v);
    // Vertex 1: 128/255 on joint 0, 127/255 on joint 1 → (1, 2·127/255, 0) at t = 1.
    let out = skinned(&m, Some(1.0));
    assert!(close(out[0][1], Vec3::new(1.0, 2.0 * 127.0 / 255.0, 0.0)), "{:?}", out[0][1]);
    // Not normalized UNSIGNED_BYTE weights are not allowed.
    v["accessors"][n - 1]["normalized"] = json!(false);
    let e = load_from_bytes(&serde_json::to_vec(&v).unwrap(), None).unwrap_err();
    assert_eq!(e.path(), Some(format!("/accessors/{}", n - 1).as_str()), "{e}");
}

#[test]
fn second_skin_without_ibms_uses_skin_relative_indices() {
    let mut v = doc(&Data::default());
    v["skins"].as_array_mut().unwrap().push(json!({"joints": [2, 1]}));
    v["nodes"].as_array_mut().unwrap().push(json!({"mesh": 0, "skin": 1}));
    v["scenes"][0]["nodes"] = json!([0, 1, 3]);
    let m = load(&v);
    assert_eq!(m.meshes.len(), 2);
    assert_eq!((m.meshes[1].node, m.meshes[1].skin), (3, Some(1)));
    // Skin 1: index 0 is node 2 (world translate(0,1,0)), identity IBM. Vertex 0 = (0,0,0)
    // uses index 0 → (0, 1, 0) at rest; vertex 2 = (0,2,0) uses index 1 = node 1 → (0, 2, 0).
    let out = skinned(&m, None);
    assert!(close(out[1][0], Vec3::new(0.0, 1.0, 0.0)), "{:?}", out[1][0]);
    assert!(close(out[1][2], Vec3::new(0.0, 2.0, 0.0)));
    // The rebuilt bind pose of skin 1 puts node 2 at the origin (inverse of an identity IBM).
    let bind = &m.skins[1].bind_pose;
    let mut world = vec![Mat4::identity(); m.skeleton.len()];
    m.world_matrices(bind, &mut world).unwrap();
    assert!((world[m.nodes[2].joint] - Mat4::identity()).abs().max() < 1e-6);
}

#[test]
fn matrix_nodes_scene_selection_and_skins_outside_the_scene() {
    // Node 1 (the joint root) given as a matrix translating by (2, 0, 0).
    let mut v = doc(&Data::default());
    v["nodes"][1]["matrix"] = json!([1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 2.0, 0.0, 0.0, 1.0]);
    let out = skinned(&load(&v), None);
    assert!(close(out[0][0], Vec3::new(2.0, 0.0, 0.0)), "{:?}", out[0][0]);

    let base = skinned(&load(&doc(&Data::default())), Some(0.5));
    // The joints' root is not in the scene: the skin still works.
    let mut v = doc(&Data::default());
    v["scenes"][0]["nodes"] = json!([0]);
    let m = load(&v);
    assert_eq!(m.scene_nodes, vec![0]);
    assert_eq!(skinned(&m, Some(0.5)), base);
    // No `scene`: scene 0 is used.
    let mut v = doc(&Data::default());
    v.as_object_mut().unwrap().remove("scene");
    v["scenes"].as_array_mut().unwrap().push(json!({"nodes": [1]}));
    let m = load(&v);
    assert_eq!(m.scene, None);
    assert_eq!(m.meshes.len(), 1);
    // No scenes at all: every node is drawn.
    let mut v = doc(&Data::default());
    v.as_object_mut().unwrap().remove("scene");
    v.as_object_mut().unwrap().remove("scenes");
    let m = load(&v);
    assert_eq!(m.scene_nodes, vec![0, 1, 2]);
    assert_eq!(skinned(&m, Some(0.5)), base);
    // A mesh node outside the default scene is not drawn.
    let mut v = doc(&Data::default());
    v["scenes"][0]["nodes"] = json!([1]);
    assert!(load(&v).meshes.is_empty());
}

#[test]
fn unskinned_mesh_uses_the_node_world_matrix() {
    let mut v = doc(&Data::default());
    // Node 0 without a skin, under node 2 (world translate(0,1,0)), with its own scale 2.
    v["nodes"][0] = json!({"mesh": 0, "scale": [2.0, 2.0, 2.0]});
    v["nodes"][2]["children"] = json!([0]);
    v["scenes"][0]["nodes"] = json!([1]);
    let m = load(&v);
    assert_eq!(m.meshes[0].skin, None);
    assert_eq!(m.warnings.len(), 1, "JOINTS without a skin is reported: {:?}", m.warnings);
    // At t = 1 node 2 has turned 90° about Z: world(node 0) = T(0,1,0)·Rz(90°)·S(2).
    let out = skinned(&m, Some(1.0));
    assert!(close(out[0][1], Vec3::new(0.0, 3.0, 0.0)), "{:?}", out[0][1]);
}

#[test]
fn external_buffer_next_to_the_file() {
    let d = Data::default();
    let mut v = doc(&d);
    let uri = v["buffers"][0]["uri"].as_str().unwrap().to_owned();
    let bytes = decode(uri.split_once(',').unwrap().1);
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("anim-gltf-external");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("tri data.bin"), &bytes).unwrap();
    v["buffers"][0]["uri"] = json!("tri%20data.bin");
    std::fs::write(dir.join("tri.gltf"), serde_json::to_vec(&v).unwrap()).unwrap();
    let m = anim_gltf::load(dir.join("tri.gltf")).unwrap();
    assert_eq!(skinned(&m, Some(1.0)), skinned(&load(&doc(&d)), Some(1.0)));
}

/// Plain base64 decoding for the test (independent of the crate's decoder).
fn decode(s: &str) -> Vec<u8> {
    let val = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        _ => 63,
    };
    let clean: Vec<u8> = s.bytes().filter(|&c| c != b'=').collect();
    let mut out = Vec::new();
    for chunk in clean.chunks(4) {
        let mut n = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            n |= u32::from(val(c)) << (18 - 6 * i);
        }
        for i in 0..chunk.len() - 1 {
            out.push((n >> (16 - 8 * i)) as u8);
        }
    }
    out
}

#[test]
fn mesh_quantization_and_required_extensions() {
    let d = Data::default();
    let base = skinned(&load(&doc(&d)), Some(1.0));
    let mut v = doc(&d);
    v["extensionsUsed"] = json!(["KHR_mesh_quantization", "KHR_texture_transform"]);
    v["extensionsRequired"] = json!(["KHR_mesh_quantization", "KHR_texture_transform"]);
    // Positions as UNSIGNED_SHORT (not normalized), with a stride of 8 bytes; normals as
    // normalized BYTE (0, 127, 0) padded to 4 bytes; texture coordinates as normalized
    // UNSIGNED_BYTE.
    let mut bytes = Vec::new();
    for p in [[0u16, 0, 0], [1, 0, 0], [0, 2, 0]] {
        for c in p {
            bytes.extend_from_slice(&c.to_le_bytes());
        }
        bytes.extend_from_slice(&[0, 0]);
    }
    for _ in 0..3 {
        bytes.extend_from_slice(&[0, 127, 0, 0]);
    }
    bytes.extend_from_slice(&[255, 0, 0, 255, 51, 102, 0, 0]);
    let views = add_buffer(&mut v, &bytes, &[(0, 24), (24, 12), (36, 6)]);
    v["bufferViews"][views[0]]["byteStride"] = json!(8);
    v["bufferViews"][views[1]]["byteStride"] = json!(4);
    let accessors = v["accessors"].as_array_mut().unwrap();
    accessors.push(json!({"bufferView": views[0], "componentType": 5123, "count": 3, "type": "VEC3",
        "min": [0, 0, 0], "max": [1, 2, 0]}));
    accessors
        .push(json!({"bufferView": views[1], "componentType": 5120, "normalized": true, "count": 3, "type": "VEC3"}));
    accessors
        .push(json!({"bufferView": views[2], "componentType": 5121, "normalized": true, "count": 3, "type": "VEC2"}));
    let n = accessors.len();
    let attrs = &mut v["meshes"][0]["primitives"][0]["attributes"];
    attrs["POSITION"] = json!(n - 3);
    attrs["NORMAL"] = json!(n - 2);
    attrs["TEXCOORD_0"] = json!(n - 1);
    let m = load(&v);
    assert_eq!(m.warnings.len(), 1, "{:?}", m.warnings); // KHR_texture_transform: not needed here
    assert!(m.warnings[0].contains("KHR_texture_transform"));
    assert_eq!(m.meshes[0].data.normals, vec![Vec3::y(); 3]);
    assert_eq!(m.meshes[0].data.uvs[2], [0.2, 0.4]);
    assert_eq!(skinned(&m, Some(1.0)), base);

    // Compressed geometry is refused with a clear error.
    let mut v = doc(&d);
    v["extensionsUsed"] = json!(["KHR_draco_mesh_compression"]);
    v["extensionsRequired"] = json!(["KHR_draco_mesh_compression"]);
    let e = load_from_bytes(&serde_json::to_vec(&v).unwrap(), None).unwrap_err();
    assert!(e.to_string().contains("KHR_draco_mesh_compression"), "{e}");
}
