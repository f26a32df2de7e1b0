//! Runtime clips (issue 10, workloads W1, W3 and W4 of the side-by-side comparison with
//! ozz-animation), each next to exact cached sampling and baked sampling:
//!
//! - `w1_sampling/*`: looping forward playback at 60 Hz, one context kept across
//!   iterations; ns/joint.
//! - `w3_sampling_ltm/*`: the same, then local-to-model of the whole skeleton (the runtime
//!   clip through `anim_core::pose::hierarchy::local_to_model`); ns/joint.
//! - `w4_crowd_1000/*`: 1000 instances, instance i starting at i·duration/1000, each with
//!   its own context and buffers, all advanced by 1/60 s and sampled + local-to-model;
//!   ns/instance.
//!
//! On Fox's "Walk" (`../shared/assets/Fox/Fox.glb`) over its trimmed runtime skeleton
//! (`anim_gltf::Model::runtime_skeleton`: skin joints and their ancestors, 25 joints), and
//! on the 80-joint fixture. Runtime clips are compiled at 1 mm at the skin, with joint radii
//! from the skinned mesh.
//!
//! Run: `cargo bench -p benches --bench runtime_clip`.

use anim_core::clip::SoaSampler;

use anim_core::pose::hierarchy::local_to_model;

use anim_core::clip::{BakedClip, Clip, RuntimeClip, RuntimeClipContext, SamplingCache, TimePolicy};
use anim_core::offline::JointRadii;
use anim_core::pose::soa::SoaPose;
use anim_core::pose::{Pose, Skeleton};
use anim_core::skin::{Mesh, Skin};
use anim_math::Mat4;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::Duration;

const TOLERANCE_M: f32 = 0.001;
const STEP: f32 = 1.0 / 60.0;
const CROWD: usize = 1000;

struct Case {
    name: &'static str,
    skeleton: Skeleton,
    clip: Clip,
    runtime: RuntimeClip,
    baked: BakedClip,
}

fn fox() -> Case {
    let m = anim_gltf::load(benches::shared_asset("Fox/Fox.glb")).expect("Fox.glb loads");
    // The runtime skeleton: skin joints and their ancestors (Fox: 25 of 26 nodes), with the
    // clips and skins remapped to it; mesh influences index the skin, so they are unchanged.
    let rt = m.runtime_skeleton().expect("an imported model is consistent");
    let walk = m.clips.iter().position(|c| c.name() == "Walk").expect("Fox has a Walk clip");
    let clip = Clip::clone(&rt.clips[walk]);
    let meshes: Vec<&Mesh> = m.meshes.iter().filter(|i| i.skin == Some(0)).map(|i| &i.data).collect();
    let radii = JointRadii::from_skin(&rt.skeleton, &rt.skins[0], &meshes).expect("invertible binds");
    let runtime = RuntimeClip::compile(&clip, &rt.skeleton, &radii, TOLERANCE_M).expect("Walk fits Fox");
    let baked = BakedClip::bake(&clip, rt.skeleton.rest_pose(), 30.0).expect("Walk fits Fox");
    Case { name: "fox_walk", skeleton: rt.skeleton, clip, runtime, baked }
}

fn fixture() -> Case {
    let skeleton = benches::skeleton(80);
    let clip = benches::clip(&skeleton, 4.0, 30.0);
    let (positions, _, influences) = benches::mesh(10_000, 4, 80);
    let mesh = Mesh { positions, influences: Some(influences), ..Mesh::default() };
    let skin = Skin::from_skeleton(&skeleton);
    let radii = JointRadii::from_skin(&skeleton, &skin, &[&mesh]).expect("invertible binds");
    let runtime = RuntimeClip::compile(&clip, &skeleton, &radii, TOLERANCE_M).expect("clip fits the skeleton");
    let baked = BakedClip::bake(&clip, skeleton.rest_pose(), 30.0).expect("clip fits the skeleton");
    Case { name: "fixture80", skeleton, clip, runtime, baked }
}

/// Advances a looping playhead by one 60 Hz frame.
#[inline]
fn tick(t: &mut f32, duration: f32) -> f32 {
    *t = TimePolicy::Wrap.apply(*t + STEP, duration);
    *t
}

fn w1(c: &mut Criterion, case: &Case) {
    let joints = case.skeleton.len();
    let d = case.clip.duration();
    let mut g = c.benchmark_group("w1_sampling");
    g.throughput(Throughput::Elements(joints as u64));
    let mut ctx = case.runtime.new_context();
    let mut soa = SoaPose::identity(joints);
    let mut t = 0.0;
    g.bench_function(format!("{}/runtime", case.name), |b| {
        b.iter(|| {
            case.runtime.sample_soa(&mut ctx, black_box(tick(&mut t, d)), TimePolicy::Clamp, &mut soa).expect("fits")
        })
    });
    let mut pose = case.skeleton.rest_pose().clone();
    let mut cache = SamplingCache::new(&case.clip);
    let mut t = 0.0;
    g.bench_function(format!("{}/exact_cached", case.name), |b| {
        b.iter(|| {
            case.clip.sample_cached(&mut cache, black_box(tick(&mut t, d)), TimePolicy::Wrap, &mut pose).expect("fits")
        })
    });
    let mut t = 0.0;
    g.bench_function(format!("{}/baked30", case.name), |b| {
        b.iter(|| case.baked.sample(black_box(tick(&mut t, d)), TimePolicy::Wrap, &mut pose).expect("fits"))
    });
    g.finish();
}

fn w3(c: &mut Criterion, case: &Case) {
    let joints = case.skeleton.len();
    let d = case.clip.duration();
    let mut model = vec![Mat4::identity(); joints];
    let mut g = c.benchmark_group("w3_sampling_ltm");
    g.throughput(Throughput::Elements(joints as u64));
    let mut ctx = case.runtime.new_context();
    let mut soa = SoaPose::identity(joints);
    let mut t = 0.0;
    g.bench_function(format!("{}/runtime", case.name), |b| {
        b.iter(|| {
            case.runtime.sample_soa(&mut ctx, black_box(tick(&mut t, d)), TimePolicy::Clamp, &mut soa).expect("fits");
            local_to_model(&case.skeleton, &soa, black_box(&mut model)).expect("fits");
        })
    });
    let mut pose = case.skeleton.rest_pose().clone();
    let mut cache = SamplingCache::new(&case.clip);
    let mut t = 0.0;
    g.bench_function(format!("{}/exact_cached", case.name), |b| {
        b.iter(|| {
            case.clip.sample_cached(&mut cache, black_box(tick(&mut t, d)), TimePolicy::Wrap, &mut pose).expect("fits");
            pose.local_to_model(&case.skeleton, black_box(&mut model)).expect("fits");
        })
    });
    let mut t = 0.0;
    g.bench_function(format!("{}/baked30", case.name), |b| {
        b.iter(|| {
            case.baked.sample(black_box(tick(&mut t, d)), TimePolicy::Wrap, &mut pose).expect("fits");
            pose.local_to_model(&case.skeleton, black_box(&mut model)).expect("fits");
        })
    });
    g.finish();
}

fn w4(c: &mut Criterion, case: &Case) {
    let joints = case.skeleton.len();
    let d = case.clip.duration();
    let starts: Vec<f32> = (0..CROWD).map(|i| i as f32 * d / CROWD as f32).collect();
    let mut models: Vec<Vec<Mat4>> = vec![vec![Mat4::identity(); joints]; CROWD];
    let mut g = c.benchmark_group("w4_crowd_1000");
    g.throughput(Throughput::Elements(CROWD as u64));
    g.measurement_time(Duration::from_secs(8));
    let mut contexts: Vec<RuntimeClipContext> = (0..CROWD).map(|_| case.runtime.new_context()).collect();
    let mut soas = vec![SoaPose::identity(joints); CROWD];
    let mut times = starts.clone();
    g.bench_function(format!("{}/runtime", case.name), |b| {
        b.iter(|| {
            for (((ctx, soa), model), t) in contexts.iter_mut().zip(&mut soas).zip(&mut models).zip(&mut times) {
                case.runtime.sample_soa(ctx, tick(t, d), TimePolicy::Clamp, soa).expect("fits");
                local_to_model(&case.skeleton, soa, model).expect("fits");
            }
            black_box(&mut models);
        })
    });
    let mut caches: Vec<SamplingCache> = (0..CROWD).map(|_| SamplingCache::new(&case.clip)).collect();
    let mut poses: Vec<Pose> = vec![case.skeleton.rest_pose().clone(); CROWD];
    let mut times = starts.clone();
    g.bench_function(format!("{}/exact_cached", case.name), |b| {
        b.iter(|| {
            for (((cache, pose), model), t) in caches.iter_mut().zip(&mut poses).zip(&mut models).zip(&mut times) {
                case.clip.sample_cached(cache, tick(t, d), TimePolicy::Wrap, pose).expect("fits");
                pose.local_to_model(&case.skeleton, model).expect("fits");
            }
            black_box(&mut models);
        })
    });
    let mut times = starts;
    g.bench_function(format!("{}/baked30", case.name), |b| {
        b.iter(|| {
            for ((pose, model), t) in poses.iter_mut().zip(&mut models).zip(&mut times) {
                case.baked.sample(tick(t, d), TimePolicy::Wrap, pose).expect("fits");
                pose.local_to_model(&case.skeleton, model).expect("fits");
            }
            black_box(&mut models);
        })
    });
    g.finish();
}

fn all(c: &mut Criterion) {
    for case in [fox(), fixture()] {
        w1(c, &case);
        w3(c, &case);
        w4(c, &case);
    }
}

criterion_group!(benches, all);
criterion_main!(benches);
