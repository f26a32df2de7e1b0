//! Files whose finite values could take the model out of the runtime's numeric range
//! (`anim_core::range`) are rejected at import, naming the element that does it.

mod common;

use anim_core::range::{Origin, Quantity, RangeError};
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
