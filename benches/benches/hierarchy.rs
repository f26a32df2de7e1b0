//! W2 of issue 10 (local-to-model), side by side with ozz-animation's job: the whole
//! skeleton from local transforms to model-space matrices, one thread, ns/joint
//! (`Throughput::Elements(joints)`).
//!
//! - Fox: the trimmed runtime skeleton (`Model::runtime_skeleton`: the 24 skin joints and
//!   their root, 25 joints), locals = "Walk" sampled at t = 0.3 s.
//! - The 80-joint fixture (`benches::skeleton(80)`), locals = `benches::clip` at t = 0.3 s.
//!
//! Cases: `soa` (the SIMD pass over a `SoaPose`, what a runtime-clip pipeline feeds),
//! `pose` (`Pose::local_to_model`, the AoS entry point), `reference` (the scalar loop, for
//! comparison only) and `partial_leg` (`local_to_model_from` on one leg's subtree, as an IK
//! pass does; Throughput is the subtree's joint count).

use anim_core::clip::{Clip, TimePolicy};
use anim_core::pose::soa::SoaPose;
use anim_core::pose::{Pose, Skeleton, hierarchy};
use anim_math::Mat4;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

/// Locals of `clip` at t = 0.3 s over the rest pose.
fn locals(skeleton: &Skeleton, clip: &Clip) -> Pose {
    let mut pose = skeleton.rest_pose().clone();
    clip.sample(0.3, TimePolicy::Clamp, &mut pose).expect("clip fits the skeleton");
    pose
}

fn bench_case(c: &mut Criterion, name: &str, skeleton: &Skeleton, pose: &Pose, leg: usize) {
    let soa = SoaPose::from_pose(pose);
    let n = skeleton.len();
    let mut model = vec![Mat4::identity(); n];
    let mut g = c.benchmark_group(format!("hierarchy/{name}"));
    g.throughput(Throughput::Elements(n as u64));
    g.bench_function("soa", |b| {
        b.iter(|| hierarchy::local_to_model(skeleton, black_box(&soa), black_box(&mut model)).expect("lengths match"))
    });
    g.bench_function("pose", |b| {
        b.iter(|| black_box(pose).local_to_model(skeleton, black_box(&mut model)).expect("lengths match"))
    });
    g.bench_function("reference", |b| {
        b.iter(|| {
            hierarchy::local_to_model_reference(skeleton, black_box(&soa), black_box(&mut model))
                .expect("lengths match")
        })
    });
    let sub = skeleton.subtree(leg).len();
    g.throughput(Throughput::Elements(sub as u64));
    hierarchy::local_to_model(skeleton, &soa, &mut model).expect("lengths match");
    g.bench_function(format!("partial_leg_{sub}_joints"), |b| {
        b.iter(|| {
            hierarchy::local_to_model_from(skeleton, black_box(&soa), leg, black_box(&mut model)).expect("leg exists")
        })
    });
    g.finish();
}

fn fox(c: &mut Criterion) {
    let path = benches::shared_asset("Fox/Fox.glb");
    let model = anim_gltf::load(&path).expect("the shared Fox loads");
    let rs = model.runtime_skeleton().expect("Fox trims");
    let walk = model.find_clip("Walk").expect("Fox has Walk");
    let pose = locals(&rs.skeleton, &rs.clips[walk]);
    // The left thigh: the first joint named like a leg whose subtree is a chain of a few.
    let leg = (0..rs.skeleton.len())
        .find(|&j| rs.skeleton.name(j).is_some_and(|n| n.contains("Leg")) && rs.skeleton.subtree(j).len() > 2)
        .expect("Fox has legs");
    bench_case(c, "fox", &rs.skeleton, &pose, leg);
}

fn fixture(c: &mut Criterion) {
    let skeleton = benches::skeleton(80);
    let clip = benches::clip(&skeleton, 4.0, 30.0);
    let pose = locals(&skeleton, &clip);
    // Joint 1 is a child of the root (parent (i − 1) / 3): one of three "limbs".
    bench_case(c, "fixture80", &skeleton, &pose, 1);
}

criterion_group!(benches, fox, fixture);
criterion_main!(benches);
