//! Runtime-core throughput: clip sampling, local-to-model, skinning palettes, and CPU
//! skinning (LBS and DQ; 1, 2, 4, 8 influences; positions only and with normals).
//!
//! Run: `cargo bench -p benches --bench core`. Figures are recorded in BENCHMARKS.md.

use anim_core::clip::{BakedClip, SamplingCache, TimePolicy};
use anim_core::skin::palette::skinning_matrices;
use anim_core::skin::skinning::{NormalMode, SkinningInput, SkinningOutput, dual_quaternion, linear_blend};
use anim_core::skin::{DqPalette, Skin};
use anim_math::{Mat4, Transform, Vec3};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::Duration;

const JOINTS: usize = 80;
const VERTICES: usize = 10_000;

fn sampling(c: &mut Criterion) {
    let skeleton = benches::skeleton(JOINTS);
    let clip = benches::clip(&skeleton, 4.0, 30.0);
    let mut pose = skeleton.rest_pose().clone();
    let mut g = c.benchmark_group("sampling");
    g.throughput(Throughput::Elements(JOINTS as u64));
    // 60 Hz forward playback, keys remembered per channel (the runtime's normal case).
    let mut cache = SamplingCache::new(&clip);
    let mut t = 0.0f32;
    g.bench_function("playback_60hz_cached", |b| {
        b.iter(|| {
            t = TimePolicy::Wrap.apply(t + 1.0 / 60.0, clip.duration());
            clip.sample_cached(&mut cache, black_box(t), TimePolicy::Wrap, &mut pose).expect("pose fits the clip");
        })
    });
    // The same clip baked at 30 frames a second: no key search, no trigonometry.
    let baked = BakedClip::bake(&clip, skeleton.rest_pose(), 30.0).expect("pose fits the clip");
    let mut t = 0.0f32;
    g.bench_function("playback_60hz_baked", |b| {
        b.iter(|| {
            t += 1.0 / 60.0;
            baked.sample(black_box(t), TimePolicy::Wrap, &mut pose).expect("pose fits the bake");
        })
    });
    let mut t = 0.0f32;
    g.bench_function("playback_60hz_search", |b| {
        b.iter(|| {
            t += 1.0 / 60.0;
            clip.sample(black_box(t), TimePolicy::Wrap, &mut pose).expect("pose fits the clip");
        })
    });
    g.finish();
    fox_sampling(c);
}

/// W1 on Fox (issue 10): clip "Walk" played forward at 60 Hz, wrapping at its duration,
/// with exact glTF sampling and a per-instance key cache. Reported per animated joint (the
/// 24 skin joints, as ozz-animation's Fox skeleton has).
fn fox_sampling(c: &mut Criterion) {
    let path = benches::shared_asset("Fox/Fox.glb");
    let model = anim_gltf::load(&path).expect("the shared Fox model loads");
    let walk = model.find_clip("Walk").expect("Fox has a Walk clip");
    let clip = &model.clips[walk];
    let joints = clip.joint_tracks().len();
    let mut pose = model.skeleton.rest_pose().clone();
    let mut cache = SamplingCache::new(clip);
    let mut g = c.benchmark_group("sampling_fox");
    g.throughput(Throughput::Elements(joints as u64));
    let mut t = 0.0f32;
    g.bench_function("walk_playback_60hz_exact", |b| {
        b.iter(|| {
            t = TimePolicy::Wrap.apply(t + 1.0 / 60.0, clip.duration());
            clip.sample_cached(&mut cache, black_box(t), TimePolicy::Wrap, &mut pose).expect("pose fits the clip");
        })
    });
    g.finish();
}

fn hierarchy(c: &mut Criterion) {
    let skeleton = benches::skeleton(JOINTS);
    let clip = benches::clip(&skeleton, 4.0, 30.0);
    let mut pose = skeleton.rest_pose().clone();
    clip.sample(1.3, TimePolicy::Clamp, &mut pose).expect("pose fits the clip");
    let skin = Skin::from_skeleton(&skeleton);
    let mut model = vec![Mat4::identity(); JOINTS];
    let mut globals = vec![Transform::IDENTITY; JOINTS];
    let mut pal = vec![Mat4::identity(); JOINTS];
    let mut dq_palette = DqPalette::new();
    let mut g = c.benchmark_group("pose");
    g.throughput(Throughput::Elements(JOINTS as u64));
    g.bench_function("local_to_model_matrices", |b| {
        b.iter(|| pose.local_to_model(&skeleton, black_box(&mut model)).expect("lengths match"))
    });
    g.bench_function("globals_transforms", |b| {
        b.iter(|| pose.globals(&skeleton, black_box(&mut globals)).expect("lengths match"))
    });
    g.bench_function("pose_to_matrix_palette", |b| {
        b.iter(|| {
            pose.local_to_model(&skeleton, &mut model).expect("lengths match");
            skinning_matrices(&model, &skin, black_box(&mut pal)).expect("skin fits");
        })
    });
    // The bench clip scales its joints: the DQ palette computes bind-space scales.
    g.bench_function("pose_to_dual_quat_palette", |b| {
        b.iter(|| {
            pose.local_to_model(&skeleton, &mut model).expect("lengths match");
            black_box(&mut dq_palette).update(&model, &skin).expect("skin fits");
        })
    });
    // The same pose stretched along each joint's own axes, differently at each joint: the
    // scales compose into shears down the chain, and each joint's matrix takes the polar
    // decomposition.
    let mut stretched = pose.clone();
    for (j, l) in stretched.locals_mut().iter_mut().enumerate() {
        l.scale = Vec3::new(1.0, 1.0 + 0.01 * (j % 7) as f32, 1.0 - 0.01 * (j % 5) as f32);
    }
    stretched.local_to_model(&skeleton, &mut model).expect("lengths match");
    dq_palette.update(&model, &skin).expect("skin fits");
    assert!(!dq_palette.is_uniform(), "a stretched pose gives a palette with non-uniform scale");
    g.bench_function("pose_to_dual_quat_palette_stretched", |b| {
        b.iter(|| {
            stretched.local_to_model(&skeleton, &mut model).expect("lengths match");
            black_box(&mut dq_palette).update(&model, &skin).expect("skin fits");
        })
    });
    // The same pose without scale: a rigid palette, dual quaternions only.
    let mut rigid_pose = pose.clone();
    rigid_pose.locals_mut().iter_mut().for_each(|l| l.scale = Vec3::new(1.0, 1.0, 1.0));
    rigid_pose.local_to_model(&skeleton, &mut model).expect("lengths match");
    dq_palette.update(&model, &skin).expect("skin fits");
    assert!(dq_palette.is_rigid(), "a pose without scale gives a rigid palette");
    g.bench_function("pose_to_dual_quat_palette_rigid", |b| {
        b.iter(|| {
            rigid_pose.local_to_model(&skeleton, &mut model).expect("lengths match");
            black_box(&mut dq_palette).update(&model, &skin).expect("skin fits");
        })
    });
    g.finish();
}

fn skinning(c: &mut Criterion) {
    let skeleton = benches::skeleton(JOINTS);
    let clip = benches::clip(&skeleton, 4.0, 30.0);
    let mut pose = skeleton.rest_pose().clone();
    clip.sample(2.1, TimePolicy::Clamp, &mut pose).expect("pose fits the clip");
    let skin = Skin::from_skeleton(&skeleton);
    let mut model = vec![Mat4::identity(); JOINTS];
    pose.local_to_model(&skeleton, &mut model).expect("lengths match");
    let mut pal = vec![Mat4::identity(); JOINTS];
    skinning_matrices(&model, &skin, &mut pal).expect("skin fits");
    // The clip animates scale, so this palette carries it: `dq_scaled` runs the scale-aware
    // loop. `dq` runs the rigid loop on the same joints' rigid parts (what a rig without
    // scale gets).
    let dqs_scaled = DqPalette::from_matrices(&pal);
    assert!(!dqs_scaled.is_rigid(), "the bench clip scales its joints");
    let dqs = DqPalette::from_rigid(dqs_scaled.dual_quats());

    let mut out_p = vec![Vec3::zeros(); VERTICES];
    let mut out_n = vec![Vec3::zeros(); VERTICES];
    let mut g = c.benchmark_group("skinning");
    g.throughput(Throughput::Elements(VERTICES as u64));
    for per in [1usize, 2, 4, 8] {
        let (pos, nrm, inf) = benches::mesh(VERTICES, per, JOINTS);
        // Positions only; with renormalized normals (the default); with normals left
        // unnormalized (as ozz-animation's skinning job leaves them).
        let variants = [
            ("pos", None),
            ("pos_nrm", Some(NormalMode::Direct)),
            ("pos_nrm_raw", Some(NormalMode::DirectUnnormalized)),
        ];
        for (tag, mode) in variants {
            let normals = mode.is_some();
            let input = SkinningInput { influences: &inf, positions: &pos, normals: normals.then_some(&nrm[..]) };
            g.bench_with_input(BenchmarkId::new(format!("lbs_{tag}"), per), &per, |b, _| {
                b.iter(|| {
                    let mut out = SkinningOutput { positions: &mut out_p, normals: normals.then_some(&mut out_n[..]) };
                    linear_blend(&input, black_box(&pal), mode.unwrap_or_default(), &mut out).expect("valid input");
                })
            });
            if mode == Some(NormalMode::DirectUnnormalized) {
                continue;
            }
            for (name, palette) in [("dq", &dqs), ("dq_scaled", &dqs_scaled)] {
                g.bench_with_input(BenchmarkId::new(format!("{name}_{tag}"), per), &per, |b, _| {
                    b.iter(|| {
                        let mut out =
                            SkinningOutput { positions: &mut out_p, normals: normals.then_some(&mut out_n[..]) };
                        dual_quaternion(&input, black_box(palette), &mut out).expect("valid input");
                    })
                });
            }
        }
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(30);
    targets = sampling, hierarchy, skinning
}
criterion_main!(benches);
