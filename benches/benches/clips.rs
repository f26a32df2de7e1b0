//! Clip features of issue 12: the N-layer masked blend (ns per joint) and the event query.
//!
//! Run: `cargo bench -p benches --bench clips`.

use anim_core::blend::layered::{AdditiveLayer, Layer, blend_layers};
use anim_core::clip::TimePolicy;
use anim_core::clip::events::{ClipEvent, crossed_into};
use anim_core::clip::playback::{LoopMode, Playback};
use anim_core::pose::{Pose, Skeleton};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::Duration;

const JOINTS: usize = 64;

fn sampled(skeleton: &Skeleton, clip: &anim_core::clip::Clip, t: f32) -> Pose {
    let mut p = skeleton.rest_pose().clone();
    clip.sample(t, TimePolicy::Wrap, &mut p).expect("pose fits the clip");
    p
}

fn layered(c: &mut Criterion) {
    let skeleton = benches::skeleton(JOINTS);
    let clip = benches::clip(&skeleton, 4.0, 30.0);
    let poses: Vec<Pose> = [0.3, 1.1, 2.1, 3.3].iter().map(|&t| sampled(&skeleton, &clip, t)).collect();
    let base = sampled(&skeleton, &clip, 0.0);
    // Masks: full body, lower half, upper half, a ramp.
    let masks: Vec<Vec<f32>> = vec![
        vec![1.0; JOINTS],
        (0..JOINTS).map(|j| if j < JOINTS / 2 { 1.0 } else { 0.0 }).collect(),
        (0..JOINTS).map(|j| if j < JOINTS / 2 { 0.0 } else { 1.0 }).collect(),
        (0..JOINTS).map(|j| j as f32 / JOINTS as f32).collect(),
    ];
    let weights = [1.0, 0.5, 0.8, 0.3];
    let mut out = skeleton.rest_pose().clone();
    let mut g = c.benchmark_group("layered");
    g.throughput(Throughput::Elements(JOINTS as u64));
    g.bench_function("4_masked_layers_64_joints", |b| {
        let layers: Vec<Layer<'_>> = (0..4).map(|i| Layer::new(&poses[i], weights[i]).with_mask(&masks[i])).collect();
        b.iter(|| blend_layers(black_box(&mut out), &skeleton, black_box(&layers), &[], 0.1).expect("sizes match"))
    });
    g.bench_function("4_masked_layers_plus_additive_64_joints", |b| {
        let layers: Vec<Layer<'_>> = (0..4).map(|i| Layer::new(&poses[i], weights[i]).with_mask(&masks[i])).collect();
        let add = [AdditiveLayer::new(&poses[1], &base, 0.5).with_mask(&masks[2])];
        b.iter(|| blend_layers(black_box(&mut out), &skeleton, black_box(&layers), &add, 0.1).expect("sizes match"))
    });
    g.finish();
}

fn events(c: &mut Criterion) {
    // 16 events in a 1-second clip; a 60 Hz step, and a step over three loops.
    let list: Vec<ClipEvent> = (0..16).map(|i| ClipEvent::new(format!("e{i}"), i as f32 / 16.0)).collect();
    let p = Playback::new(1.0, LoopMode::Repeat);
    let pp = Playback::new(1.0, LoopMode::PingPong);
    let mut out = Vec::with_capacity(128);
    let mut g = c.benchmark_group("events");
    g.bench_function("query_60hz_step", |b| {
        b.iter(|| {
            crossed_into(&list, &p, black_box(12.49), black_box(12.49 + 1.0 / 60.0), &mut out);
            out.len()
        })
    });
    g.bench_function("query_3_loops_ping_pong", |b| {
        b.iter(|| {
            crossed_into(&list, &pp, black_box(0.3), black_box(3.3), &mut out);
            out.len()
        })
    });
    g.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .measurement_time(Duration::from_secs(2))
        .warm_up_time(Duration::from_millis(500))
        .sample_size(20)
}

criterion_group! {
    name = benches;
    config = config();
    targets = layered, events
}
criterion_main!(benches);
