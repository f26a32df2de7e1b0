//! Crowd update throughput (chapter 15): advancing every character's clip times and
//! packing its 64-byte GPU record, serially at 1k to 1M characters and on every core at
//! 100k and 1M. Throughput is in characters.
//!
//! The crowd mixes what a game has: three clips (two looping, one clamped), speeds from
//! −1 to 2, a quarter of the characters blending a second clip, an eighth crossfading.
//!
//! Run: `cargo bench -p benches --bench crowd`.

use anim_crowd::atlas::AtlasClip;

use anim_crowd::crowd::{CharacterDesc, Crowd};
use anim_math::{Quat, Vec3};
use benches::Rng;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

fn clips() -> Vec<AtlasClip> {
    let clip = |name: &str, first_frame, frame_count, duration: f32, looping| AtlasClip {
        name: name.into(),
        first_frame,
        frame_count,
        rate: (frame_count - 1) as f32 / duration,
        duration,
        looping,
        bounds: (Vec3::new(-0.5, 0.0, -0.5), Vec3::new(0.5, 1.8, 0.5)),
    };
    vec![clip("walk", 0, 31, 1.0, true), clip("run", 31, 21, 0.66, true), clip("die", 52, 61, 2.0, false)]
}

/// `n` characters; with `mixed`, a quarter blend a second clip and an eighth crossfade,
/// otherwise every character plays one clip (the demo's crowd between fades).
fn crowd_of(n: usize, mixed: bool) -> Crowd {
    let mut rng = Rng(2024);
    let mut crowd = Crowd::with_capacity(&clips(), n);
    let side = (n as f32).sqrt().ceil() as usize;
    for i in 0..n {
        let clip = rng.range(0.0, 3.0) as u32;
        let desc = CharacterDesc {
            position: Vec3::new((i % side) as f32, 0.0, (i / side) as f32),
            rotation: Quat::from_euler_angles(0.0, rng.range(-3.0, 3.0), 0.0),
            scale: rng.range(0.9, 1.1),
            clip,
            time: rng.range(0.0, 2.0),
            speed: rng.range(-1.0, 2.0),
        };
        let index = crowd.add(desc).expect("valid character");
        if !mixed {
            continue;
        }
        match i % 8 {
            0 | 4 => crowd.set_blend(index, (clip + 1) % 3, rng.range(0.0, 1.0), rng.next_f32()),
            // Fades of a minute: still under way after any measurement.
            2 => crowd.set_clip(index, (clip + 2) % 3, 60.0).map(drop),
            _ => Ok(()),
        }
        .expect("valid clip");
    }
    crowd
}

fn crowd(n: usize) -> Crowd {
    crowd_of(n, true)
}

fn update(c: &mut Criterion) {
    let mut g = c.benchmark_group("crowd_update");
    for n in [1_000, 10_000, 100_000, 1_000_000] {
        let mut crowd = crowd(n);
        g.throughput(Throughput::Elements(n as u64));
        g.bench_function(BenchmarkId::new("serial", n), |b| b.iter(|| crowd.update(black_box(1.0 / 60.0))));
    }
    for n in [10_000, 100_000] {
        let mut crowd = crowd_of(n, false);
        g.throughput(Throughput::Elements(n as u64));
        g.bench_function(BenchmarkId::new("serial_one_clip_each", n), |b| {
            b.iter(|| crowd.update(black_box(1.0 / 60.0)))
        });
    }
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    for n in [100_000, 1_000_000] {
        let mut crowd = crowd(n);
        g.throughput(Throughput::Elements(n as u64));
        g.bench_function(BenchmarkId::new(format!("parallel_{threads}_threads"), n), |b| {
            b.iter(|| crowd.update_parallel(black_box(1.0 / 60.0), threads))
        });
    }
    g.finish();
}

criterion_group!(benches, update);
criterion_main!(benches);
