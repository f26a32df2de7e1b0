//! Malformed files, written here: each gives a typed error naming the element at fault.

mod common;

use anim_gltf::{GltfError, load_from_bytes};
use common::{Data, doc};
use serde_json::{Value, json};

fn load(v: &Value) -> Result<anim_gltf::Model, GltfError> {
    load_from_bytes(&serde_json::to_vec(v).unwrap(), None)
}

fn err(v: &Value) -> GltfError {
    match load(v) {
        Ok(_) => panic!("expected an error"),
        Err(e) => e,
    }
}

#[test]
fn the_valid_base_document_loads_and_skins() {
    let m = load(&doc(&Data::default())).unwrap();
    assert_eq!(m.skeleton.len(), 3);
    assert_eq!(m.meshes.len(), 1);
    assert_eq!(m.clips[0].duration(), 1.0);
    assert!(m.warnings.is_empty());
}

#[test]
fn missing_and_short_buffers() {
    let mut v = doc(&Data::default());
    v["buffers"][0]["uri"] = json!("missing.bin");
    let e = err(&v);
    assert!(matches!(e, GltfError::Buffer { .. }), "{e}");
    assert_eq!(e.path(), Some("/buffers/0"));
    // With a base folder that lacks the file.
    let e =
        load_from_bytes(&serde_json::to_vec(&v).unwrap(), Some(std::path::Path::new("/nonexistent-dir"))).unwrap_err();
    assert_eq!(e.path(), Some("/buffers/0"), "{e}");
    assert!(e.to_string().contains("missing.bin"), "{e}");

    let mut v = doc(&Data::default());
    v["buffers"][0]["byteLength"] = json!(100_000);
    let e = err(&v);
    assert!(matches!(e, GltfError::Buffer { .. }), "{e}");
    assert_eq!(e.path(), Some("/buffers/0"));

    let mut v = doc(&Data::default());
    v["buffers"][0]["uri"] = json!("data:application/octet-stream;base64,@@@@");
    assert_eq!(err(&v).path(), Some("/buffers/0"));

    // A buffer view beyond the end of its buffer.
    let mut v = doc(&Data::default());
    v["bufferViews"][3]["byteOffset"] = json!(4000);
    let e = err(&v);
    assert_eq!(e.path(), Some("/bufferViews/3"), "{e}");

    // GLB that refers to a BIN chunk it does not have.
    let mut json_doc = doc(&Data::default());
    json_doc["buffers"][0].as_object_mut().unwrap().remove("uri");
    let mut text = serde_json::to_vec(&json_doc).unwrap();
    while !text.len().is_multiple_of(4) {
        text.push(b' ');
    }
    let mut glb = Vec::new();
    glb.extend_from_slice(b"glTF");
    glb.extend_from_slice(&2u32.to_le_bytes());
    glb.extend_from_slice(&((20 + text.len()) as u32).to_le_bytes());
    glb.extend_from_slice(&(text.len() as u32).to_le_bytes());
    glb.extend_from_slice(b"JSON");
    glb.extend_from_slice(&text);
    let e = load_from_bytes(&glb, None).unwrap_err();
    assert_eq!(e.path(), Some("/buffers/0"), "{e}");
}

#[test]
fn accessors_out_of_bounds_wrong_type_or_count() {
    // Out of bounds: more elements than the view holds.
    let mut v = doc(&Data::default());
    v["accessors"][0]["count"] = json!(50);
    let e = err(&v);
    assert!(matches!(e, GltfError::Accessor { .. }), "{e}");
    assert_eq!(e.path(), Some("/accessors/0"));

    // An offset that pushes the last element out.
    let mut v = doc(&Data::default());
    v["accessors"][3]["byteOffset"] = json!(16);
    assert_eq!(err(&v).path(), Some("/accessors/3"));

    // Wrong type: POSITION as VEC2.
    let mut v = doc(&Data::default());
    v["accessors"][0]["type"] = json!("VEC2");
    let e = err(&v);
    assert_eq!(e.path(), Some("/accessors/0"));
    assert!(e.to_string().contains("VEC3"), "{e}");

    // Wrong component type: JOINTS_0 as FLOAT.
    let mut v = doc(&Data::default());
    v["accessors"][1]["componentType"] = json!(5126);
    v["accessors"][1]["count"] = json!(1);
    let e = err(&v);
    assert_eq!(e.path(), Some("/accessors/1"), "{e}");

    // Wrong count: WEIGHTS_0 with fewer elements than POSITION.
    let mut v = doc(&Data::default());
    v["accessors"][2]["count"] = json!(2);
    let e = err(&v);
    assert_eq!(e.path(), Some("/accessors/2"), "{e}");

    // Wrong count: one inverse bind matrix for two joints.
    let mut v = doc(&Data::default());
    v["accessors"][3]["count"] = json!(1);
    let e = err(&v);
    assert_eq!(e.path(), Some("/skins/0/inverseBindMatrices"), "{e}");

    // Wrong count: two keys but one output value.
    let mut v = doc(&Data::default());
    v["accessors"][5]["count"] = json!(1);
    let e = err(&v);
    assert_eq!(e.path(), Some("/animations/0/samplers/0/output"), "{e}");

    // CUBICSPLINE needs three values a key.
    let mut v = doc(&Data::default());
    v["animations"][0]["samplers"][0]["interpolation"] = json!("CUBICSPLINE");
    assert_eq!(err(&v).path(), Some("/animations/0/samplers/0/output"));

    // Index data pointing past the vertices.
    let d = Data { idx: vec![0, 1, 9], ..Data::default() };
    let e = err(&doc(&d));
    assert_eq!(e.path(), Some("/accessors/6"), "{e}");

    // An accessor index that does not exist (schema validation).
    let mut v = doc(&Data::default());
    v["meshes"][0]["primitives"][0]["attributes"]["POSITION"] = json!(42);
    let e = err(&v);
    assert!(matches!(e, GltfError::Schema { .. }), "{e}");
    assert!(e.path().unwrap().contains("POSITION"), "{e}");
}

#[test]
fn joint_indices_out_of_range() {
    // In the skin: a node that does not exist.
    let mut v = doc(&Data::default());
    v["skins"][0]["joints"] = json!([1, 7]);
    let e = err(&v);
    assert_eq!(e.path(), Some("/skins/0/joints/1"), "{e}");

    // In the vertex data: joint 5 of a two-joint skin, with a non-zero weight.
    let mut d = Data::default();
    d.joints[5] = 5;
    let e = err(&doc(&d));
    assert!(matches!(e, GltfError::JointOutOfRange { .. }), "{e}");
    assert_eq!(e.path(), Some("/meshes/0/primitives/0/attributes/JOINTS_0"));
    assert!(e.to_string().contains("vertex 1"), "{e}");

    // A joint listed twice.
    let mut v = doc(&Data::default());
    v["skins"][0]["joints"] = json!([1, 1]);
    assert_eq!(err(&v).path(), Some("/skins/0/joints/1"));
}

#[test]
fn non_finite_numbers() {
    // 1e39 does not fit an f32: it reads as infinity.
    let mut v = doc(&Data::default());
    v["nodes"][2]["translation"] = json!([1e39, 0.0, 0.0]);
    let e = err(&v);
    assert!(matches!(e, GltfError::NonFinite { .. }), "{e}");
    assert_eq!(e.path(), Some("/nodes/2/translation"));

    let mut v = doc(&Data::default());
    v["nodes"][1]["matrix"] = json!([1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, -1e39, 0.0, 1.0]);
    assert_eq!(err(&v).path(), Some("/nodes/1/matrix"));

    let mut d = Data::default();
    d.times[1] = f32::NAN;
    let e = err(&doc(&d));
    assert!(matches!(e, GltfError::NonFinite { .. }), "{e}");
    assert_eq!(e.path(), Some("/animations/0/samplers/0/input"));

    let mut d = Data::default();
    d.rot[6] = f32::INFINITY;
    let e = err(&doc(&d));
    assert!(matches!(e, GltfError::NonFinite { .. }), "{e}");
    assert_eq!(e.path(), Some("/animations/0/samplers/0/output"));

    let mut d = Data::default();
    d.ibm[20] = f32::NAN;
    let e = err(&doc(&d));
    assert!(matches!(e, GltfError::NonFinite { .. }), "{e}");
    assert_eq!(e.path(), Some("/skins/0/inverseBindMatrices"));
    assert!(e.to_string().contains("inverse bind matrix 1"), "{e}");

    let mut d = Data::default();
    d.weights[4] = f32::NAN;
    let e = err(&doc(&d));
    assert_eq!(e.path(), Some("/meshes/0/primitives/0/attributes/WEIGHTS_0"), "{e}");
}

#[test]
fn key_times_not_increasing() {
    let d = Data { times: vec![0.5, 0.2], ..Data::default() };
    let e = err(&doc(&d));
    assert!(matches!(e, GltfError::KeysNotIncreasing { index: 1, .. }), "{e}");
    assert_eq!(e.path(), Some("/animations/0/samplers/0/input"));
    let d = Data { times: vec![0.5, 0.5], ..Data::default() };
    assert!(matches!(err(&doc(&d)), GltfError::KeysNotIncreasing { index: 1, .. }));
}

#[test]
fn node_cycles_and_shared_children() {
    let mut v = doc(&Data::default());
    v["nodes"][2]["children"] = json!([1]);
    v["scenes"][0]["nodes"] = json!([0]);
    let e = err(&v);
    assert!(matches!(e, GltfError::Hierarchy { .. }), "{e}");
    assert!(e.path().unwrap().starts_with("/nodes/"), "{e}");

    let mut v = doc(&Data::default());
    v["nodes"][2]["children"] = json!([2]);
    assert_eq!(err(&v).path(), Some("/nodes/2/children"));

    // An animation channel aimed at a node that does not exist.
    let mut v = doc(&Data::default());
    v["animations"][0]["channels"][0]["target"]["node"] = json!(9);
    assert_eq!(err(&v).path(), Some("/animations/0/channels/0/target/node"));

    // Node 2 listed as a child of both node 0 and node 1.
    let mut v = doc(&Data::default());
    v["nodes"][0]["children"] = json!([2]);
    let e = err(&v);
    assert!(matches!(e, GltfError::Hierarchy { .. }), "{e}");
    assert!(e.to_string().contains("already a child"), "{e}");
}

#[test]
fn beyond_supported_counts() {
    // More nodes than the u16 joint indices can address.
    let mut v = doc(&Data::default());
    let mut nodes = v["nodes"].as_array().unwrap().clone();
    nodes.resize(70_000, json!({}));
    v["nodes"] = json!(nodes);
    let e = err(&v);
    assert!(matches!(e, GltfError::Unsupported { .. }), "{e}");
    assert_eq!(e.path(), Some("/nodes"));

    // 17 influence sets.
    let mut v = doc(&Data::default());
    for set in 0..17 {
        v["meshes"][0]["primitives"][0]["attributes"][format!("JOINTS_{set}")] = json!(1);
        v["meshes"][0]["primitives"][0]["attributes"][format!("WEIGHTS_{set}")] = json!(2);
    }
    let e = err(&v);
    assert!(matches!(e, GltfError::Unsupported { .. }), "{e}");
}

#[test]
fn not_gltf_at_all() {
    assert!(matches!(load_from_bytes(b"hello", None), Err(GltfError::Syntax(_))));
    assert!(matches!(load_from_bytes(b"glTF\x02\x00\x00\x00\x10\x00", None), Err(GltfError::Syntax(_))));
    assert!(matches!(load_from_bytes(b"{\"asset\": {}}", None), Err(GltfError::Syntax(_) | GltfError::Schema { .. })));
    let e = anim_gltf::load("/nonexistent/file.glb").unwrap_err();
    assert!(matches!(e, GltfError::Io { .. }));
}

#[test]
fn two_influence_sets_are_concatenated_and_meshless_weight_channels_rejected() {
    let mut v = doc(&Data::default());
    v["meshes"][0]["primitives"][0]["attributes"]["JOINTS_1"] = json!(1);
    v["meshes"][0]["primitives"][0]["attributes"]["WEIGHTS_1"] = json!(2);
    v["animations"][0]["channels"]
        .as_array_mut()
        .unwrap()
        .push(json!({"sampler": 0, "target": {"node": 0, "path": "weights"}}));
    // Node 0 has no mesh, so it has no morph weights to animate.
    let e = err(&v);
    assert_eq!(e.path(), Some("/animations/0/channels/1/target"), "{e}");
    v["animations"][0]["channels"].as_array_mut().unwrap().pop();
    let m = load(&v).unwrap();
    let inf = m.meshes[0].data.influences.as_ref().unwrap();
    assert_eq!(inf.per_vertex(), 8);
    // Vertex 1: joints (0, 1) weighted 0.5/0.5 in both sets → each slot 0.25 after normalizing.
    assert_eq!(&inf.weights()[8..16], &[0.25, 0.25, 0.0, 0.0, 0.25, 0.25, 0.0, 0.0]);
    assert!(m.warnings.is_empty(), "{:?}", m.warnings);
}
