//! The two things the Khronos glTF-Validator calls errors that this importer loads on
//! purpose (README, "What the glTF importer accepts"), pinned as documented: real exporters
//! write them and other viewers accept them.
//!
//! - Skin weights whose sum is not one (`ACCESSOR_WEIGHTS_NON_NORMALIZED`) are divided by
//!   their sum: the vertex skins as if the file had normalized them. A vertex whose
//!   weights are all zero stays where it was bound.
//! - Accessor `min`/`max` that disagree with the data (`ACCESSOR_MIN_MISMATCH`,
//!   `ACCESSOR_MAX_MISMATCH`, `ACCESSOR_ELEMENT_OUT_OF_MIN_BOUND`, `…_MAX_BOUND`): their
//!   values are never read; bounds, durations and the numeric-range check come from the
//!   data.
//!
//! These are the validator's errors, and its only ones, for the documents built here
//! (checked with `scripts/validate-gltf.sh`, gltf-validator 2.0.0-dev.3.10).

mod common;

use anim_core::clip::TimePolicy;

use anim_core::skin::SkinMethod;
use anim_gltf::{GltfError, Model, SkinScratch, load_from_bytes};
use anim_math::{Mat4, Vec3};
use common::{Data, doc};
use serde_json::json;

fn load(v: &serde_json::Value) -> Result<Model, GltfError> {
    load_from_bytes(&serde_json::to_vec(v).unwrap(), None)
}

/// The triangle of `common` skinned at `time` of its clip (LBS).
fn skinned(m: &Model, time: f32) -> Vec<Vec3> {
    let mut pose = m.skeleton.rest_pose().clone();
    m.sample_pose(0, time, TimePolicy::Clamp, &mut pose).unwrap();
    let mut world = vec![Mat4::identity(); m.skeleton.len()];
    m.world_matrices(&pose, &mut world).unwrap();
    let mut p = vec![Vec3::zeros(); m.meshes[0].data.vertex_count()];
    m.skin_instance(0, &world, SkinMethod::Lbs, &mut SkinScratch::new(), &mut p, None).unwrap();
    p
}

/// Every vertex's weights scaled to sum to 0.9: the file loads, its weights are the
/// normalized ones, and at t = 1 s (joint 1 turned 90° about z around (0, 1, 0)) the
/// vertices are where normalized weights put them. Vertex 1, (1, 0, 0) half on each joint,
/// goes to the mean of (1, 0, 0) and (1, 2, 0); vertex 2, (0, 2, 0) all on joint 1, to
/// (−1, 1, 0). Weights used as stored would leave them at 0.9 times that, 0.14 away. And
/// a vertex whose weights are all zero stays where it was bound.
#[test]
fn weights_summing_to_0_9_load_and_skin_as_if_normalized() {
    let d = Data::default();
    let scaled = Data { weights: d.weights.iter().map(|w| w * 0.9).collect(), ..Data::default() };
    let m = load(&doc(&scaled)).expect("non-normalized weights load");
    let inf = m.meshes[0].data.influences.as_ref().unwrap();
    for (got, want) in inf.weights().iter().zip(&d.weights) {
        assert!((got - want).abs() < 1e-6, "weights {:?}, want {:?}", inf.weights(), d.weights);
    }
    let p = skinned(&m, 1.0);
    let want = [Vec3::zeros(), Vec3::new(1.0, 1.0, 0.0), Vec3::new(-1.0, 1.0, 0.0)];
    for (v, (got, want)) in p.iter().zip(want).enumerate() {
        assert!((got - want).norm() < 1e-6, "vertex {v}: {got}, want {want}");
    }
    // The same as the file with normalized weights.
    assert_eq!(p, skinned(&load(&doc(&d)).unwrap(), 1.0));
    // A vertex whose weights are all zero (a sum of zero) stays where it was bound.
    let mut w = d.weights.clone();
    w[8] = 0.0;
    let m = load(&doc(&Data { weights: w, ..Data::default() })).expect("a vertex without weights loads");
    assert_eq!(skinned(&m, 1.0)[2], Vec3::new(0.0, 2.0, 0.0));
}

/// POSITION's declared bounds disagree with its data ((0, 0, 0)..(1, 2, 0)): one too small,
/// one beyond the runtime's numeric range. The file loads, the mesh's bounds are the
/// data's, and the range check, which refuses positions past 1e18, looked at the data.
/// The clip's input accessor declares 0.25..0.5 for keys at 0 and 1 s: the clip lasts 1 s.
#[test]
fn accessor_bounds_that_disagree_with_the_data_are_not_used() {
    let mut v = doc(&Data::default());
    v["accessors"][0]["min"] = json!([0.25, 0.5, -3e30]);
    v["accessors"][0]["max"] = json!([0.5, 1.0, 3e30]);
    v["accessors"][4]["min"] = json!([0.25]);
    v["accessors"][4]["max"] = json!([0.5]);
    let m = load(&v).expect("mismatched min/max load");
    assert_eq!(m.meshes[0].data.bounds(), Some((Vec3::zeros(), Vec3::new(1.0, 2.0, 0.0))));
    assert_eq!(m.clips[0].duration(), 1.0);
    let plain = load(&doc(&Data::default())).unwrap();
    assert_eq!(m.meshes[0].data.positions, plain.meshes[0].data.positions);
    assert_eq!(skinned(&m, 0.5), skinned(&plain, 0.5));
}
