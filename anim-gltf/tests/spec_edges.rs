//! Valid but unusual glTF that the specification allows, and counts that must not turn a
//! tiny file into a huge allocation.

mod common;

use anim_core::clip::TimePolicy;
use anim_gltf::{GltfError, load_from_bytes};
use common::{Data, doc};
use serde_json::json;

fn load(v: &serde_json::Value) -> Result<anim_gltf::Model, GltfError> {
    load_from_bytes(&serde_json::to_vec(v).unwrap(), None)
}

#[test]
fn accessor_without_buffer_view_reads_as_zeros() {
    // A translation channel whose output accessor has no bufferView: every key is (0, 0, 0)
    // (glTF 2.0 §3.6.2.1), so node 2 (rest translation (0, 1, 0)) is moved to the origin.
    let mut v = doc(&Data::default());
    v["accessors"].as_array_mut().unwrap().push(json!({"componentType": 5126, "count": 2, "type": "VEC3"}));
    v["animations"][0]["samplers"].as_array_mut().unwrap().push(json!({"input": 4, "output": 7}));
    v["animations"][0]["channels"]
        .as_array_mut()
        .unwrap()
        .push(json!({"sampler": 1, "target": {"node": 2, "path": "translation"}}));
    let m = load(&v).unwrap();
    let joint = m.nodes[2].joint;
    assert_eq!(m.skeleton.rest_pose().locals()[joint].translation.y, 1.0);
    let mut pose = m.skeleton.rest_pose().clone();
    m.sample_pose(0, 0.5, TimePolicy::Clamp, &mut pose).unwrap();
    assert_eq!(pose.locals()[joint].translation, anim_math::Vec3::zeros());
}

#[test]
fn more_inverse_bind_matrices_than_joints_is_valid() {
    // The spec requires at least one matrix per joint; extra ones are unused.
    let d = Data {
        joints: vec![0; 12],
        weights: vec![1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0],
        ..Data::default()
    };
    let mut v = doc(&d);
    v["skins"][0]["joints"] = json!([1]);
    let m = load(&v).unwrap();
    assert_eq!(m.skins[0].skin.len(), 1);
    assert_eq!(m.skins[0].skin.inverse_bind()[0], anim_math::Mat4::identity());
    // Fewer matrices than joints is still an error naming the skin.
    let mut v = doc(&Data::default());
    v["accessors"][3]["count"] = json!(1);
    let e = load(&v).unwrap_err();
    assert_eq!(e.path(), Some("/skins/0/inverseBindMatrices"), "{e}");
}

#[test]
fn a_huge_count_without_data_is_an_error_not_an_allocation() {
    // Nothing in the file bounds the count of an accessor without a bufferView; a few
    // hundred bytes must not ask for gigabytes.
    let mut v = doc(&Data::default());
    v["accessors"]
        .as_array_mut()
        .unwrap()
        .push(json!({"componentType": 5126, "count": 4_000_000_000u64, "type": "VEC3"}));
    v["animations"][0]["samplers"].as_array_mut().unwrap().push(json!({"input": 4, "output": 7}));
    v["animations"][0]["channels"]
        .as_array_mut()
        .unwrap()
        .push(json!({"sampler": 1, "target": {"node": 2, "path": "translation"}}));
    let e = load(&v).unwrap_err();
    assert!(matches!(e, GltfError::Unsupported { .. }), "{e}");
    assert_eq!(e.path(), Some("/accessors/7"), "{e}");
    assert!(e.to_string().contains("/animations/0/samplers/1/output"), "{e}");
}
