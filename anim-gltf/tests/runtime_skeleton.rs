//! The trimmed runtime skeleton ([`anim_gltf::Model::runtime_skeleton`]) against the full
//! one: skinned positions through the trimmed skeleton, its remapped clips and skins and
//! the SIMD hierarchy pass equal those of the importer's full-skeleton path
//! (`Model::sample_pose` → `world_matrices` → `skin_instance`), on every clip.

mod common;

use anim_core::clip::TimePolicy;
use anim_core::pose::hierarchy;
use anim_core::pose::soa::SoaPose;
use anim_core::skin::SkinMethod;
use anim_gltf::{Model, RuntimeSkeleton, SkinScratch};
use anim_math::{Mat4, Point3, Vec3};
use anim_testkit::assets::load as asset;
use serde_json::json;

/// Skinned positions of mesh instance `inst` at `time` through the runtime skeleton:
/// trimmed clip → SoA pose → hierarchy pass → palette → LBS, written here by hand.
fn runtime_positions(m: &Model, rs: &RuntimeSkeleton, clip: usize, time: f32, inst: usize) -> Vec<Vec3> {
    let mut pose = rs.skeleton.rest_pose().clone();
    rs.clips[clip].sample(time, TimePolicy::Clamp, &mut pose).unwrap();
    let mut world = vec![Mat4::zeros(); rs.skeleton.len()];
    hierarchy::local_to_model(&rs.skeleton, &SoaPose::from_pose(&pose), &mut world).unwrap();
    let mi = &m.meshes[inst];
    let Some(skin) = mi.skin else {
        let w = world[rs.node_joints[mi.node].expect("rigid mesh nodes are kept")];
        return mi.data.positions.iter().map(|p| w.transform_point(&Point3::from(*p)).coords).collect();
    };
    let skin = &rs.skins[skin];
    let palette: Vec<Mat4> = skin.joints().iter().zip(skin.inverse_bind()).map(|(&j, ibm)| world[j] * ibm).collect();
    let inf = mi.data.influences.as_ref().unwrap();
    let per = inf.per_vertex();
    mi.data
        .positions
        .iter()
        .enumerate()
        .map(|(v, p)| {
            let mut acc = Vec3::zeros();
            for k in v * per..(v + 1) * per {
                let w = inf.weights()[k];
                if w != 0.0 {
                    acc += w * palette[inf.joints()[k] as usize].transform_point(&Point3::from(*p)).coords;
                }
            }
            acc
        })
        .collect()
}

/// Largest deviation, over every instance, clip and a few times, between the runtime path
/// and the full one, as a fraction of the mesh's bounding-box diagonal.
fn worst_relative_deviation(m: &Model) -> f32 {
    let rs = m.runtime_skeleton().unwrap();
    let mut worst = 0.0f32;
    let mut scratch = SkinScratch::new();
    for clip in 0..m.clips.len() {
        let c = &m.clips[clip];
        for f in [0.0, 0.37, 0.81, 1.0] {
            let time = c.start_time() + f * (c.duration() - c.start_time());
            let mut pose = m.skeleton.rest_pose().clone();
            m.sample_pose(clip, time, TimePolicy::Clamp, &mut pose).unwrap();
            let mut world = vec![Mat4::zeros(); m.skeleton.len()];
            m.world_matrices(&pose, &mut world).unwrap();
            for inst in 0..m.meshes.len() {
                let mut expected = vec![Vec3::zeros(); m.meshes[inst].data.vertex_count()];
                m.skin_instance(inst, &world, SkinMethod::Lbs, &mut scratch, &mut expected, None).unwrap();
                let got = runtime_positions(m, &rs, clip, time, inst);
                let (lo, hi) = m.meshes[inst].data.bounds().unwrap();
                let diag = (hi - lo).norm().max(1e-3);
                for (g, e) in got.iter().zip(&expected) {
                    worst = worst.max((g - e).norm() / diag);
                }
            }
        }
    }
    worst
}

#[test]
fn fox_keeps_its_24_joints_and_skins_the_same() {
    let m = asset("Fox/Fox.glb");
    let rs = m.runtime_skeleton().unwrap();
    assert_eq!(m.skeleton.len(), 26);
    // The 24 skin joints and the non-joint node above them (the file's root node); the
    // mesh node is dropped.
    let joints = m.skins[0].skin.len();
    assert_eq!(joints, 24);
    assert_eq!(rs.skeleton.len(), 25);
    let ancestors_outside_skin = rs.skeleton.len() - joints;
    let mesh_node = m.meshes[0].node;
    assert_eq!(rs.node_joints[mesh_node], None, "the skinned mesh node is not needed");
    // Independently of the trimming code: walk up from every skin joint by node index.
    let mut needed = vec![false; m.nodes.len()];
    for &node in &m.skins[0].nodes {
        let mut cur = Some(node);
        while let Some(c) = cur {
            needed[c] = true;
            cur = m.nodes[c].parent;
        }
    }
    for (node, info) in m.nodes.iter().enumerate() {
        assert_eq!(rs.node_joints[node].is_some(), needed[node], "node {node} ({:?})", info.name);
    }
    eprintln!("Fox: {} joints at run time ({ancestors_outside_skin} non-joint ancestors)", rs.skeleton.len());
    let d = worst_relative_deviation(&m);
    assert!(d < 1e-5, "Fox: {d}");
}

#[test]
fn mannequin_skins_the_same_and_keeps_every_joint() {
    let m = anim_gltf::mannequin_model();
    let rs = m.runtime_skeleton().unwrap();
    // 22 skin joints; the mesh node (node 22) carries the morph weights but is not needed.
    assert_eq!(rs.skeleton.len(), m.skins[0].skin.len());
    assert_eq!(rs.node_joints[m.meshes[0].node], None);
    // The idle's morph weight track belonged to the dropped mesh node.
    let idle = m.find_clip("idle").unwrap();
    assert!(!m.clips[idle].weight_tracks().is_empty());
    assert!(rs.clips[idle].weight_tracks().is_empty());
    assert_eq!(rs.clips[idle].duration(), m.clips[idle].duration());
    let d = worst_relative_deviation(&m);
    assert!(d < 1e-5, "mannequin: {d}");
}

#[test]
fn other_shared_models_skin_the_same() {
    for rel in [
        "CesiumMan/CesiumMan.glb",
        "RiggedSimple/RiggedSimple.glb",
        "RiggedFigure/RiggedFigure.glb",
        "BoxAnimated/BoxAnimated.glb",
    ] {
        let m = asset(rel);
        let d = worst_relative_deviation(&m);
        assert!(d < 1e-5, "{rel}: {d}");
    }
}

/// The shared test triangle (skin joints: nodes 1 and 2, mesh node 0), under a new animated
/// non-joint root (node 3, rest translation (5, 0, 0), animated to the origin), beside an
/// animated prop (node 4) that nothing needs.
fn with_animated_non_joint_root() -> Model {
    let mut v = common::doc(&common::Data::default());
    let nodes = v["nodes"].as_array_mut().unwrap();
    nodes.push(json!({"name": "mover", "children": [1], "translation": [5.0, 0.0, 0.0]}));
    nodes.push(json!({"name": "prop"}));
    v["scenes"][0]["nodes"] = json!([0, 3, 4]);
    // A VEC3 output accessor without a bufferView reads as zeros (glTF 2.0 §3.6.2.1).
    v["accessors"].as_array_mut().unwrap().push(json!({"componentType": 5126, "count": 2, "type": "VEC3"}));
    let samplers = v["animations"][0]["samplers"].as_array_mut().unwrap();
    samplers.push(json!({"input": 4, "output": 7}));
    let channels = v["animations"][0]["channels"].as_array_mut().unwrap();
    channels.push(json!({"sampler": 1, "target": {"node": 3, "path": "translation"}}));
    channels.push(json!({"sampler": 0, "target": {"node": 4, "path": "rotation"}}));
    anim_gltf::load_from_bytes(&serde_json::to_vec(&v).unwrap(), None).unwrap()
}

#[test]
fn an_animated_non_joint_ancestor_is_kept_and_moves_the_skin() {
    let m = with_animated_non_joint_root();
    let rs = m.runtime_skeleton().unwrap();
    assert_eq!(m.skeleton.len(), 5);
    let names: Vec<&str> = rs.skeleton.names().iter().map(String::as_str).collect();
    assert_eq!(rs.skeleton.len(), 3, "{names:?}");
    let mover = rs.node_joints[3].expect("the animated ancestor of the skin joints is kept");
    assert_eq!(rs.skeleton.name(mover), Some("mover"));
    assert_eq!(rs.node_joints[0], None, "skinned mesh node");
    assert_eq!(rs.node_joints[4], None, "animated prop");
    // The clip keeps the mover's channel and node 2's rotation, drops the prop's.
    assert_eq!(rs.clips[0].joint_tracks().len(), 2);
    assert!(rs.clips[0].joint_tracks().iter().any(|t| t.joint == mover && t.translation.is_some()));
    assert!(worst_relative_deviation(&m) < 1e-6);
    // The mover's channel takes it from (5, 0, 0) to the origin; the skin follows: vertex
    // 0 (bound to node 1 only, at the origin) is at x = 5 in the rest pose and at 0 under
    // the clip.
    let animated = runtime_positions(&m, &rs, 0, 0.0, 0);
    assert!(animated[0].norm() < 1e-6, "{:?}", animated[0]);
    let rest = m.skeleton.rest_pose().clone();
    let mut world = vec![Mat4::zeros(); m.skeleton.len()];
    m.world_matrices(&rest, &mut world).unwrap();
    let mut at_rest = vec![Vec3::zeros(); 3];
    m.skin_instance(0, &world, SkinMethod::Lbs, &mut SkinScratch::new(), &mut at_rest, None).unwrap();
    assert!((at_rest[0] - Vec3::new(5.0, 0.0, 0.0)).norm() < 1e-6, "{:?}", at_rest[0]);
}
