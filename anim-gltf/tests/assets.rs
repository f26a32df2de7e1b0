//! The shared test models: counts against `MODELS.md`/`facts.json`, and hand-computed values.

use anim_core::clip::TimePolicy;
use anim_core::pose::Pose;
use anim_core::skin::SkinMethod;
use anim_gltf::{Model, SkinScratch};
use anim_math::{Mat4, Quat, Vec3};
use anim_testkit::assets::path_str as asset;
use nalgebra::Quaternion;

fn load(rel: &str) -> Model {
    anim_gltf::load(asset(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

const FILES: [&str; 10] = [
    "BoxAnimated/BoxAnimated.glb",
    "CesiumMan/CesiumMan.glb",
    "DQ/dq.gltf",
    "Fox/Fox.glb",
    "InterpolationTest/InterpolationTest.glb",
    "RiggedFigure/RiggedFigure.glb",
    "RiggedSimple/RiggedSimple.glb",
    "SimpleSkin/SimpleSkin.gltf",
    "SimpleSkin/embedded/SimpleSkin.gltf",
    "Woman/Woman.gltf",
];

/// Skins every instance of `m` for `pose`; returns positions per instance.
fn skin_all(m: &Model, pose: &Pose, method: SkinMethod) -> Vec<Vec<Vec3>> {
    let mut world = vec![Mat4::identity(); m.skeleton.len()];
    m.world_matrices(pose, &mut world).unwrap();
    let mut scratch = SkinScratch::new();
    (0..m.meshes.len())
        .map(|i| {
            let mut out = vec![Vec3::zeros(); m.meshes[i].data.vertex_count()];
            m.skin_instance(i, &world, method, &mut scratch, &mut out, None).unwrap();
            out
        })
        .collect()
}

fn diag(points: &[Vec3]) -> f32 {
    let (mut lo, mut hi) = (points[0], points[0]);
    for p in points {
        lo = lo.inf(p);
        hi = hi.sup(p);
    }
    (hi - lo).norm()
}

#[test]
fn every_asset_loads_with_the_documented_counts() {
    let facts: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(asset("facts.json")).unwrap()).unwrap();
    let facts = facts.as_array().unwrap();
    for rel in FILES {
        let m = load(rel);
        let file = rel.rsplit('/').next().unwrap();
        let f = facts.iter().find(|f| f["file"] == file).unwrap_or_else(|| panic!("no facts for {file}"));
        assert_eq!(m.nodes.len() as u64, f["nodes"].as_u64().unwrap(), "{rel}: nodes");
        assert_eq!(m.skeleton.len(), m.nodes.len(), "{rel}: one joint per node");
        let skins = f["skins"].as_array().unwrap();
        assert_eq!(m.skins.len(), skins.len(), "{rel}: skins");
        for (s, fs) in m.skins.iter().zip(skins) {
            assert_eq!(s.skin.len() as u64, fs["joints"].as_u64().unwrap(), "{rel}: joints per skin");
        }
        let skinned: Vec<_> = m.meshes.iter().filter(|i| i.skin.is_some()).collect();
        let total: usize = skinned.iter().map(|i| i.data.vertex_count()).sum();
        assert_eq!(total as u64, f["totalSkinnedVertices"].as_u64().unwrap(), "{rel}: skinned vertices");
        for node in f["skinnedMeshNodes"].as_array().unwrap() {
            let n = node["node"].as_u64().unwrap() as usize;
            for p in node["primitives"].as_array().unwrap() {
                let inst = m
                    .meshes
                    .iter()
                    .find(|i| i.node == n && i.primitive as u64 == p["primitive"].as_u64().unwrap())
                    .unwrap_or_else(|| panic!("{rel}: no instance for node {n}"));
                assert_eq!(inst.data.vertex_count() as u64, p["vertices"].as_u64().unwrap());
                assert_eq!(!inst.data.normals.is_empty(), p["hasNormals"].as_bool().unwrap(), "{rel}: normals");
                let hist = inst.data.influences.as_ref().unwrap().histogram();
                let max_infl = hist.iter().rposition(|&c| c > 0).unwrap();
                assert_eq!(max_infl as u64, p["maxNonZeroInfluences"].as_u64().unwrap(), "{rel}: max influences");
                assert_eq!(hist[0], 0, "{rel}: no unweighted vertex");
            }
        }
        let anims = f["animations"].as_array().unwrap();
        assert_eq!(m.clips.len(), anims.len(), "{rel}: clips");
        for ((c, info), fa) in m.clips.iter().zip(&m.clip_info).zip(anims) {
            assert_eq!(info.channels.len() as u64, fa["channels"].as_u64().unwrap(), "{rel}: channels");
            assert!((c.duration() - fa["duration"].as_f64().unwrap() as f32).abs() < 1e-4, "{rel}: duration");
            assert!((c.start_time() - fa["firstKey"].as_f64().unwrap() as f32).abs() < 1e-4, "{rel}: first key");
            assert_eq!(info.name.as_deref(), fa["name"].as_str(), "{rel}: clip name");
        }
        assert!(m.warnings.is_empty(), "{rel}: {:?}", m.warnings);
    }
    // A few facts spelled out in MODELS.md.
    let woman = load("Woman/Woman.gltf");
    assert_eq!(woman.skins[0].skin.len(), 41);
    assert_eq!(woman.meshes[0].data.vertex_count(), 5718);
    let names: Vec<&str> = woman.clips.iter().map(|c| c.name()).collect();
    assert_eq!(
        names,
        ["Running", "Jump2", "PickUp", "SitIdle", "Idle", "Punch", "Sitting", "Walking", "Jump", "Lean_Left"]
    );
    // dq.gltf: joints = [1, 0], not node order.
    assert_eq!(load("DQ/dq.gltf").skins[0].nodes, vec![1, 0]);
}

#[test]
fn simple_skin_top_vertex_at_one_second() {
    for rel in ["SimpleSkin/SimpleSkin.gltf", "SimpleSkin/embedded/SimpleSkin.gltf"] {
        let m = load(rel);
        let mut pose = m.skeleton.rest_pose().clone();
        m.sample_pose(0, 1.0, TimePolicy::Clamp, &mut pose).unwrap();
        let out = skin_all(&m, &pose, SkinMethod::Lbs);
        // At t = 1 s the key is exactly (0, 0, 0.707, 0.707) (|q| = 0.99985, normalized):
        // 90° about +Z. Vertex 8 = (-0.5, 2, 0) follows joint 1 only (at y = 1, IBM =
        // translate(0, -1, 0)): R(90°)·(-0.5, 1, 0) + (0, 1, 0) = (-1, -0.5, 0) + (0, 1, 0).
        let expected = Vec3::new(-1.0, 0.5, 0.0);
        assert!((out[0][8] - expected).norm() < 1e-5, "{rel}: {:?} vs {expected:?}", out[0][8]);
        // Vertex 4 = (-0.5, 1, 0) is half joint 0, half joint 1: 0.5·p + 0.5·(R(90°)·(-0.5, 0, 0) + (0, 1, 0))
        // = 0.5·(-0.5, 1, 0) + 0.5·(0, 0.5, 0) = (-0.25, 0.75, 0).
        assert!((out[0][4] - Vec3::new(-0.25, 0.75, 0.0)).norm() < 1e-5, "{:?}", out[0][4]);
        // Halfway between the keys of 0.5 s (22.5°·2 = 45°) and 1 s (90°), slerp gives 67.5°.
        m.sample_pose(0, 0.75, TimePolicy::Clamp, &mut pose).unwrap();
        let mid = skin_all(&m, &pose, SkinMethod::Lbs);
        let a = 2.0 * 0.383f32.atan2(0.924);
        let a = a + 0.5 * (std::f32::consts::FRAC_PI_2 - a);
        let (s, c) = a.sin_cos();
        let e = Vec3::new(-0.5 * c - s, -0.5 * s + c + 1.0, 0.0);
        assert!((mid[0][8] - e).norm() < 1e-4, "{:?} vs {e:?}", mid[0][8]);
        // The bottom vertex follows joint 0 only and does not move.
        assert!((out[0][0] - Vec3::new(-0.5, 0.0, 0.0)).norm() < 1e-6);
    }
}

#[test]
fn fox_at_rest_gives_back_position() {
    let m = load("Fox/Fox.glb");
    let out = skin_all(&m, m.skeleton.rest_pose(), SkinMethod::Lbs);
    let src = &m.meshes[0].data.positions;
    let tol = 1e-5 * diag(src);
    let worst = out[0].iter().zip(src).map(|(a, b)| (a - b).norm()).fold(0.0, f32::max);
    assert!(worst < tol, "worst {worst} vs {tol}");
    let mut via_pose = vec![Vec3::zeros(); src.len()];
    m.skin_pose(0, m.skeleton.rest_pose(), SkinMethod::Lbs, &mut SkinScratch::new(), &mut via_pose, None).unwrap();
    assert_eq!(via_pose, out[0]);
    let dq = skin_all(&m, m.skeleton.rest_pose(), SkinMethod::Dq);
    let worst = dq[0].iter().zip(src).map(|(a, b)| (a - b).norm()).fold(0.0, f32::max);
    assert!(worst < tol, "dq worst {worst}");
}

#[test]
fn woman_rebuilt_bind_pose_gives_back_position() {
    let m = load("Woman/Woman.gltf");
    let src = m.meshes[0].data.positions.clone();
    let tol = 1e-5 * diag(&src);
    let out = skin_all(&m, &m.skins[0].bind_pose, SkinMethod::Lbs);
    let worst = out[0].iter().zip(&src).map(|(a, b)| (a - b).norm()).fold(0.0, f32::max);
    assert!(worst < tol, "bind pose: worst {worst} vs {tol}");
    // The skeleton's bind pose is that skin's.
    assert_eq!(m.skeleton.bind_pose(), &m.skins[0].bind_pose);
    // The authored rest pose is not the bind pose: skinning with it moves vertices a lot.
    let rest = skin_all(&m, m.skeleton.rest_pose(), SkinMethod::Lbs);
    let moved = rest[0].iter().zip(&src).map(|(a, b)| (a - b).norm()).fold(0.0, f32::max);
    assert!(moved > 100.0 * tol, "rest pose should differ from the bind pose ({moved})");
}

fn local(m: &Model, clip: &str, node: usize, t: f32) -> anim_math::Transform {
    let c = m.find_clip(clip).unwrap_or_else(|| panic!("no clip {clip}"));
    let mut pose = m.skeleton.rest_pose().clone();
    m.sample_pose(c, t, TimePolicy::Clamp, &mut pose).unwrap();
    pose.locals()[m.nodes[node].joint]
}

fn quat(x: f32, y: f32, z: f32, w: f32) -> Quat {
    Quat::from_quaternion(Quaternion::new(w, x, y, z))
}

#[test]
fn interpolation_test_hand_computed_values() {
    let m = load("InterpolationTest/InterpolationTest.glb");
    let (k0, k1) = (1.0f32 / 24.0, 10.0f32 / 24.0);
    // STEP scale (node 0): keys 1/24: 1, 10/24: 0.5, 0.875: 1.
    assert_eq!(local(&m, "Step Scale", 0, 0.0).scale, Vec3::repeat(1.0), "before the first key: first value");
    assert!((local(&m, "Step Scale", 0, 0.5).scale.x - 0.5).abs() < 1e-6);
    assert!((local(&m, "Step Scale", 0, 0.874).scale.x - 0.5).abs() < 1e-6);
    assert!((local(&m, "Step Scale", 0, 0.875).scale.x - 1.0).abs() < 1e-6);
    // LINEAR scale (node 3): halfway between 1 and 0.5.
    assert!((local(&m, "Linear Scale", 3, 0.5 * (k0 + k1)).scale.x - 0.75).abs() < 1e-5);
    // CUBICSPLINE scale (node 4), zero tangents: s = 0.25 → h00 = 0.84375, h01 = 0.15625.
    let t = k0 + 0.25 * (k1 - k0);
    assert!((local(&m, "CubicSpline Scale", 4, t).scale.y - (0.84375 + 0.15625 * 0.5)).abs() < 1e-5);
    // STEP rotation (node 5): at 1.0 s the key of 0.875 s holds: −90° about Z.
    let r = local(&m, "Step Rotation", 5, 1.0).rotation;
    assert!(r.angle_to(&quat(0.0, 0.0, -std::f32::consts::FRAC_1_SQRT_2, std::f32::consts::FRAC_1_SQRT_2)) < 1e-4);
    // LINEAR rotation (node 7): slerp halfway from identity to −45° about Z is −22.5°.
    let r = local(&m, "Linear Rotation", 7, 0.5 * k1).rotation;
    let expect = Quat::from_axis_angle(&Vec3::z_axis(), -std::f32::consts::PI / 8.0);
    assert!(r.angle_to(&expect) < 1e-4, "{r:?}");
    // CUBICSPLINE rotation (node 6): between key 0 (v = id, out = (0,0,0,1)) and key 1
    // (in = (0,0,-0.04789,0.99885), v = (0,0,-0.38268,0.92388)), Δ = 10/24, s = 0.5:
    // p = 0.5·v0 + 0.125·Δ·out0 + 0.5·v1 − 0.125·Δ·in1, normalized.
    let d = k1;
    let z = 0.5 * -0.38268 - 0.125 * d * -0.04789;
    let w = 0.5 + 0.125 * d * 1.0 + 0.5 * 0.92388 - 0.125 * d * 0.99885;
    let r = local(&m, "CubicSpline Rotation", 6, 0.5 * k1).rotation;
    assert!(r.angle_to(&quat(0.0, 0.0, z, w)) < 2e-4, "{r:?}");
    // STEP translation (node 8): y = 10 from 0.45833 s.
    assert!((local(&m, "Step Translation", 8, 0.5).translation.y - 10.0).abs() < 1e-5);
    // CUBICSPLINE translation (node 9), zero tangents, s = 0.5: y = (6.64012 + 10)/2.
    let tr = local(&m, "CubicSpline Translation", 9, 0.5 * k1).translation;
    assert!((tr.y - 0.5 * (6.64012 + 10.0)).abs() < 1e-4 && (tr.x - 3.30518).abs() < 1e-4);
    // LINEAR translation (node 10): y = (6.62101 + 10)/2.
    let tr = local(&m, "Linear Translation", 10, 0.5 * k1).translation;
    assert!((tr.y - 0.5 * (6.62101 + 10.0)).abs() < 1e-4);
    // Clamp after the end holds the last value.
    assert!((local(&m, "Linear Translation", 10, 99.0).translation.y - 6.0).abs() < 1e-5);
}

#[test]
fn box_animated_shorter_channel_holds_its_last_value() {
    let m = load("BoxAnimated/BoxAnimated.glb");
    let c = &m.clips[0];
    assert!((c.duration() - 3.70833).abs() < 1e-4);
    // The rotation channel (node 2) has keys 1.25 s and 2.5 s only.
    let late = local(&m, "", 2, 3.5);
    assert!(late.rotation.angle_to(&quat(1.0, 0.0, 0.0, 0.0)) < 1e-5, "holds the last key, does not loop");
    let early = local(&m, "", 2, 0.5);
    assert!(early.rotation.angle() < 1e-5, "before its first key: first value (identity)");
    // The translation channel (node 0) is still moving: 3.5 s is between 2.5 (2.52) and 3.70833 (0).
    let y = local(&m, "", 0, 3.5).translation.y;
    let s = (3.5 - 2.5) / (3.70833 - 2.5);
    assert!((y - 2.52 * (1.0 - s)).abs() < 1e-4, "{y}");
}

#[test]
fn dq_cubic_clips_match_hermite_at_mid_key() {
    let m = load("DQ/dq.gltf");
    // All tangents are zero, so at s = 0.5 the spline is the mean of the two keys:
    // Twisting at 2.5 s: 0.5·(0, 0.91169, 0, 0.41088) + 0.5·(0, −0.41088, 0, 0.91169), normalized.
    let expect = quat(0.0, 0.5 * (0.91169 - 0.41088), 0.0, 0.5 * (0.41088 + 0.91169));
    for (clip, t) in [("Twisting", 2.5), ("Twisting", 7.5), ("TwistingWithScale", 2.5)] {
        let r = local(&m, clip, 0, t).rotation;
        assert!(r.angle_to(&expect) < 1e-4, "{clip} at {t}: {r:?}");
    }
    // At s = 0.25: h00 = 0.84375, h01 = 0.15625.
    let y = 0.84375 * 0.91169 + 0.15625 * -0.41088;
    let w = 0.84375 * 0.41088 + 0.15625 * 0.91169;
    assert!(local(&m, "Twisting", 0, 1.25).rotation.angle_to(&quat(0.0, y, 0.0, w)) < 1e-4);
    // Bending at 2.5 s: the mean of (0, 0.91169, 0, 0.41088) and (0.30465, 0.61173, −0.67599, 0.27569).
    let b = quat(0.5 * 0.30465, 0.5 * (0.91169 + 0.61173), 0.5 * -0.67599, 0.5 * (0.41088 + 0.27569));
    assert!(local(&m, "Bending", 0, 2.5).rotation.angle_to(&b) < 1e-4);
    // Uniform scale 1 → 2 → 1: 1.5 at 2.5 s, 1.15625 at 1.25 s.
    assert!((local(&m, "TwistingWithScale", 0, 2.5).scale - Vec3::repeat(1.5)).norm() < 1e-5);
    assert!((local(&m, "TwistingWithScale", 0, 1.25).scale - Vec3::repeat(1.15625)).norm() < 1e-5);
}

#[test]
fn dq_skinning_agrees_with_lbs_for_rigid_vertices_and_keeps_volume() {
    // The twisted bar: at the rest pose (the bind pose) both methods give POSITION.
    let m = load("DQ/dq.gltf");
    let src = m.meshes[0].data.positions.clone();
    let tol = 1e-5 * diag(&src);
    for method in [SkinMethod::Lbs, SkinMethod::Dq] {
        let out = skin_all(&m, m.skeleton.rest_pose(), method);
        let worst = out[0].iter().zip(&src).map(|(a, b)| (a - b).norm()).fold(0.0, f32::max);
        assert!(worst < tol, "{method:?}: {worst}");
    }
    // Mid-twist: vertices bound to one joint agree between methods; blended ones differ
    // (LBS collapses towards the axis, DQ does not).
    let c = m.find_clip("Twisting").unwrap();
    let mut pose = m.skeleton.rest_pose().clone();
    m.sample_pose(c, 2.5, TimePolicy::Clamp, &mut pose).unwrap();
    let lbs = skin_all(&m, &pose, SkinMethod::Lbs);
    let dq = skin_all(&m, &pose, SkinMethod::Dq);
    let inf = m.meshes[0].data.influences.as_ref().unwrap();
    let mut differ = 0;
    for (v, ws) in inf.weights().chunks_exact(inf.per_vertex()).enumerate() {
        let d = (lbs[0][v] - dq[0][v]).norm();
        if ws.iter().filter(|w| **w > 0.0).count() == 1 {
            assert!(d < tol, "single-joint vertex {v} differs by {d}");
        } else if d > 1e-3 * diag(&src) {
            differ += 1;
        }
    }
    assert!(differ > 100, "{differ}");

    // With scale (TwistingWithScale at 5 s: the child joint is scaled by 2), dual-quaternion
    // skinning keeps the scale: single-joint vertices still agree with LBS exactly.
    let c = m.find_clip("TwistingWithScale").unwrap();
    m.sample_pose(c, 5.0, TimePolicy::Clamp, &mut pose).unwrap();
    let lbs = skin_all(&m, &pose, SkinMethod::Lbs);
    let dq = skin_all(&m, &pose, SkinMethod::Dq);
    let mut checked = 0;
    for (v, ws) in inf.weights().chunks_exact(inf.per_vertex()).enumerate() {
        if ws.iter().filter(|w| **w > 0.0).count() == 1 {
            assert!((lbs[0][v] - dq[0][v]).norm() < 2.0 * tol, "vertex {v}");
            checked += 1;
        }
    }
    assert!(checked > 1000, "{checked}");
}
