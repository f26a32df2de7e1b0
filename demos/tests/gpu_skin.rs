//! `GpuInstanceSkinner` (the GPU backend of `animtool skin`) against the CPU backend
//! (`Model::skin_instance`) on the shared assets, LBS and scale-aware DQ. Positions to 1e-5
//! of the bounding-box diagonal, normals to 1e-4.

use anim_core::clip::TimePolicy;
use anim_core::pose::Pose;
use anim_core::skin::SkinMethod;
use anim_gltf::SkinScratch;
use anim_math::{Mat4, Vec3};
use demos::GpuInstanceSkinner;

fn check(rel: &str, methods: &[SkinMethod]) {
    let path = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/assets")).join(rel);
    let model = anim_gltf::load(&path).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let ctx = anim_render_vk::Context::new(&anim_render_vk::ContextDesc { validation: true, window: None }).unwrap();
    let mut gpu = GpuInstanceSkinner::with_context(&ctx).unwrap();
    let mut scratch = SkinScratch::new();
    let mut pose = Pose::identity(model.skeleton.len());
    let mut world = vec![Mat4::identity(); model.skeleton.len()];
    // Every clip (dq.gltf's third, TwistingWithScale, is the one whose palettes carry scale).
    let times = (0..model.clips.len())
        .flat_map(|c| [0.0, 0.45, 1.0].map(|f| (c, f * model.clips[c].duration())))
        .collect::<Vec<_>>();
    for (clip, t) in times {
        model.sample_pose(clip, t, TimePolicy::Clamp, &mut pose).unwrap();
        model.world_matrices(&pose, &mut world).unwrap();
        for (i, inst) in model.meshes.iter().enumerate() {
            let n = inst.data.vertex_count();
            for &method in methods {
                let (mut cp, mut cn, mut gp, mut gn) =
                    (vec![Vec3::zeros(); n], vec![Vec3::zeros(); n], vec![Vec3::zeros(); n], vec![Vec3::zeros(); n]);
                model.skin_instance(i, &world, method, &mut scratch, &mut cp, Some(&mut cn)).unwrap();
                gpu.skin_instance(&model, i, &world, method, &mut gp, Some(&mut gn)).unwrap();
                let (lo, hi) = cp.iter().fold((cp[0], cp[0]), |(lo, hi), p| (lo.inf(p), hi.sup(p)));
                let tol = 1e-5 * (hi - lo).norm();
                let dp = cp.iter().zip(&gp).map(|(a, b)| (a - b).norm()).fold(0.0f32, f32::max);
                let dn = cn.iter().zip(&gn).map(|(a, b)| (a - b).norm()).fold(0.0f32, f32::max);
                assert!(dp <= tol, "{rel} clip {clip} instance {i} t={t} {method:?}: position error {dp} > {tol}");
                assert!(dn < 1e-4, "{rel} clip {clip} instance {i} t={t} {method:?}: normal error {dn}");
            }
        }
    }
    assert_eq!(ctx.validation_count(), 0, "{}", ctx.validation_messages().join("\n"));
}

#[test]
fn cesium_man_lbs_and_dq() {
    check("CesiumMan/CesiumMan.glb", &[SkinMethod::Lbs, SkinMethod::Dq]);
}

#[test]
fn fox_lbs_and_dq() {
    check("Fox/Fox.glb", &[SkinMethod::Lbs, SkinMethod::Dq]);
}

#[test]
fn rigged_simple_lbs_and_dq() {
    check("RiggedSimple/RiggedSimple.glb", &[SkinMethod::Lbs, SkinMethod::Dq]);
}

#[test]
fn woman_lbs_and_dq() {
    check("Woman/Woman.gltf", &[SkinMethod::Lbs, SkinMethod::Dq]);
}

#[test]
fn dq_with_scale_lbs_and_dq() {
    check("DQ/dq.gltf", &[SkinMethod::Lbs, SkinMethod::Dq]);
}

/// The mannequin's idle animates its morph weights: the GPU backend (morph and skin in one
/// compute pass) equals the CPU backend (morph, then skin) with those weights, normals too.
#[test]
fn mannequin_morphs_lbs_and_dq() {
    let model = anim_gltf::mannequin_model();
    let idle = model.find_clip("idle").unwrap();
    let ctx = anim_render_vk::Context::new(&anim_render_vk::ContextDesc { validation: true, window: None }).unwrap();
    let mut gpu = GpuInstanceSkinner::with_context(&ctx).unwrap();
    let mut scratch = SkinScratch::new();
    let mut pose = Pose::identity(model.skeleton.len());
    let mut world = vec![Mat4::identity(); model.skeleton.len()];
    let n = model.meshes[0].data.vertex_count();
    let mut w = vec![0.0; 2];
    for t in [0.6f32, 1.0, 1.3] {
        model.sample_pose(idle, t, TimePolicy::Clamp, &mut pose).unwrap();
        model.world_matrices(&pose, &mut world).unwrap();
        model.sample_weights(idle, 0, t, TimePolicy::Clamp, &mut w).unwrap();
        assert!(w[0] > 0.5, "t={t}: the breath is on ({w:?})");
        for method in [SkinMethod::Lbs, SkinMethod::Dq] {
            let (mut cp, mut cn, mut gp, mut gn) =
                (vec![Vec3::zeros(); n], vec![Vec3::zeros(); n], vec![Vec3::zeros(); n], vec![Vec3::zeros(); n]);
            model.skin_instance_weighted(0, &world, Some(&w), method, &mut scratch, &mut cp, Some(&mut cn)).unwrap();
            gpu.skin_instance_weighted(&model, 0, &world, Some(&w), method, &mut gp, Some(&mut gn)).unwrap();
            let (lo, hi) = cp.iter().fold((cp[0], cp[0]), |(lo, hi), p| (lo.inf(p), hi.sup(p)));
            let tol = 1e-5 * (hi - lo).norm();
            let dp = cp.iter().zip(&gp).map(|(a, b)| (a - b).norm()).fold(0.0f32, f32::max);
            let dn = cn.iter().zip(&gn).map(|(a, b)| (a - b).norm()).fold(0.0f32, f32::max);
            assert!(dp <= tol, "t={t} {method:?}: position error {dp} > {tol}");
            assert!(dn < 1e-4, "t={t} {method:?}: normal error {dn}");
        }
    }
    assert_eq!(ctx.validation_count(), 0, "{}", ctx.validation_messages().join("\n"));
}
