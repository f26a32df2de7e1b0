//! Files whose finite values could take the model out of the runtime's numeric range
//! (`anim_core::offline::range`) are rejected at import, naming the element that does it.

mod common;

use anim_core::offline::range::{Origin, Quantity, RangeError};
use anim_gltf::{GltfError, load_from_bytes};
use common::{Data, doc};
use serde_json::{Value, json};

fn err(v: &Value) -> GltfError {
    match load_from_bytes(&serde_json::to_vec(v).unwrap(), None) {
        Ok(_) => panic!("expected an error"),
        Err(e) => e,
    }
}

#[test]
fn node_translation_and_scale_out_of_range() {
    let mut v = doc(&Data::default());
    v["nodes"][2]["translation"] = json!([3e38, 0.0, 0.0]);
    let e = err(&v);
    assert_eq!(e.path(), Some("/nodes/2/translation"), "{e}");
    assert!(
        matches!(
            &e,
            GltfError::OutOfRange {
                source: RangeError::Joint { quantity: Quantity::Translation, origin: Origin::Rest, .. },
                ..
            }
        ),
        "{e}"
    );

    let mut v = doc(&Data::default());
    v["nodes"][2]["scale"] = json!([1e20, 1e20, 1e20]);
    let e = err(&v);
    assert_eq!(e.path(), Some("/nodes/2/scale"), "{e}");

    // Each within the range, but together (parent 1 → child 2) beyond it.
    let mut v = doc(&Data::default());
    v["nodes"][1]["translation"] = json!([6e17, 0.0, 0.0]);
    v["nodes"][2]["translation"] = json!([6e17, 0.0, 0.0]);
    assert_eq!(err(&v).path(), Some("/nodes/2/translation"));
    // Either alone is fine.
    v["nodes"][1]["translation"] = json!([0.0, 0.0, 0.0]);
    assert!(load_from_bytes(&serde_json::to_vec(&v).unwrap(), None).is_ok());

    let mut v = doc(&Data::default());
    v["nodes"][1]["matrix"] = json!([1e20, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0]);
    let e = err(&v);
    assert_eq!(e.path(), Some("/nodes/1/matrix"), "{e}");
}

#[test]
fn animation_keys_out_of_range_name_the_channel() {
    // The rotation channel becomes a translation channel with keys 0 and ±3e38.
    let d = Data { rot: vec![0.0, 0.0, 0.0, 3e38, -3e38, 0.0], ..Data::default() };
    let mut v = doc(&d);
    v["accessors"][5]["type"] = json!("VEC3");
    v["accessors"][5]["count"] = json!(2);
    v["animations"][0]["channels"][0]["target"]["path"] = json!("translation");
    let e = err(&v);
    assert_eq!(e.path(), Some("/animations/0/channels/0"), "{e}");
    assert!(
        matches!(&e, GltfError::OutOfRange { source: RangeError::Joint { origin: Origin::Clip { clip: 0 }, .. }, .. }),
        "{e}"
    );
}

#[test]
fn inverse_binds_and_positions_out_of_range() {
    let mut d = Data::default();
    d.ibm[16 + 12] = 2e18; // joint 1's inverse bind translates x by 2e18
    assert_eq!(err(&doc(&d)).path(), Some("/skins/0/inverseBindMatrices"));

    let mut d = Data::default();
    d.pos[3] = 2e18;
    let mut v = doc(&d);
    v["accessors"][0]["max"] = json!([2e18, 2.0, 0.0]);
    let e = err(&v);
    assert_eq!(e.path(), Some("/meshes/0/primitives/0/attributes/POSITION"), "{e}");
}

/// SimpleMorph with its default weights replaced, loaded from its folder.
fn simple_morph(weights: Value) -> Result<anim_gltf::Model, GltfError> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/assets/SimpleMorph");
    let mut v: Value = serde_json::from_slice(&std::fs::read(dir.join("SimpleMorph.gltf")).unwrap()).unwrap();
    v["meshes"][0]["weights"] = weights;
    // No animation, so that only the default weights matter.
    v.as_object_mut().unwrap().remove("animations");
    load_from_bytes(&serde_json::to_vec(&v).unwrap(), Some(&dir))
}

#[test]
fn morph_weights_that_could_leave_the_range() {
    // Deltas of length about 1 with a weight of 1e30 would put vertices 1e30 away.
    let e = simple_morph(json!([1e30, 0.0])).unwrap_err();
    assert_eq!(e.path(), Some("/meshes/0/primitives/0/targets"), "{e}");
    assert!(
        matches!(&e, GltfError::OutOfRange { source: RangeError::Mesh { what: "morphed position", .. }, .. }),
        "{e}"
    );
    // Large but within the range: loads, and morphing gives finite positions.
    let m = simple_morph(json!([1e6, -1e6])).unwrap();
    let inst = &m.meshes[0];
    let targets = inst.morph.as_ref().unwrap();
    let mut out = vec![anim_math::Vec3::zeros(); inst.data.positions.len()];
    targets.apply(targets.default_weights(), &inst.data.positions, &mut out, None).unwrap();
    assert!(out.iter().all(|p| p.iter().all(|c| c.is_finite())));
}
