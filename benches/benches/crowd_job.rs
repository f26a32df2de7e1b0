//! The crowd job (issue 10, workload W4): 1000 instances of one clip, instance `i`
//! starting at `i · duration / 1000`, each with its own sampling context and output
//! buffers; every iteration advances all by 1/60 s (looping) and, for each, samples the
//! clip into its SoA pose and builds its model matrices (`sample_ltm`), then also its
//! matrix skinning palette (`sample_ltm_palette`).
//!
//! Two characters: Fox's Walk (`../shared/assets/Fox/Fox.glb`, read from
//! `../shared/assets` next to the repository) and the 80-joint fixture
//! (`benches::skeleton(80)`, `benches::clip(&skeleton, 4.0, 30.0)`). Clips: the exact
//! glTF/`Clip` path and the same clip baked at 30 Hz. Thread counts: 1, 2 and every core
//! ([`std::thread::available_parallelism`]; duplicates dropped), so the scaling shows.
//!
//! Throughput is `Elements(1000)`: characters. ns/instance is the reported time per
//! iteration divided by 1000 (the one-thread rows are the ozz comparison's).
//!
//! Run: `cargo bench -p benches --bench crowd_job` (filter e.g. `fox_walk/exact_sample_ltm/1`).

use anim_core::clip::SoaSampler;
use anim_core::clip::{BakedClip, Clip, RuntimeClip};
use anim_core::offline::JointRadii;
use anim_core::pose::Skeleton;
use anim_core::skin::{Mesh, Skin};
use anim_crowd::job::{CrowdCharacter, CrowdJob, PaletteOutput};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

/// Characters in the crowd.
const INSTANCES: usize = 1000;
/// Time step of one iteration (60 Hz playback).
const DT: f32 = 1.0 / 60.0;
/// Rate the baked variant is sampled at.
const BAKE_RATE: f32 = 30.0;

/// Fox's trimmed runtime skeleton, skin and Walk clip, and the runtime clip at 1 mm.
fn fox() -> (Skeleton, Skin, Clip, RuntimeClip) {
    let path = benches::shared_asset("Fox/Fox.glb");
    let model = anim_gltf::load(&path).unwrap_or_else(|e| panic!("Fox: {e}"));
    let walk = model.find_clip("Walk").expect("Fox has a Walk clip");
    let rt = model.runtime_skeleton().expect("an imported model is consistent");
    let meshes: Vec<&Mesh> = model.meshes.iter().filter(|i| i.skin == Some(0)).map(|i| &i.data).collect();
    let radii = JointRadii::from_skin(&rt.skeleton, &rt.skins[0], &meshes).expect("invertible binds");
    let clip = Clip::clone(&rt.clips[walk]);
    let runtime = RuntimeClip::compile(&clip, &rt.skeleton, &radii, 0.001).expect("Walk fits Fox");
    (rt.skeleton, rt.skins[0].clone(), clip, runtime)
}

/// The 80-joint fixture with a skin over every joint.
fn fixture() -> (Skeleton, Skin, Clip, RuntimeClip) {
    let skeleton = benches::skeleton(80);
    let clip = benches::clip(&skeleton, 4.0, 30.0);
    let skin = Skin::from_skeleton(&skeleton);
    let (positions, _, influences) = benches::mesh(10_000, 4, 80);
    let mesh = Mesh { positions, influences: Some(influences), ..Mesh::default() };
    let radii = JointRadii::from_skin(&skeleton, &skin, &[&mesh]).expect("invertible binds");
    let runtime = RuntimeClip::compile(&clip, &skeleton, &radii, 0.001).expect("clip fits");
    (skeleton, skin, clip, runtime)
}

/// Thread counts to measure: 1, 2 and every core, without repeats.
fn thread_counts() -> Vec<usize> {
    let all = anim_crowd::job::cores();
    let mut counts = vec![1, 2, all];
    counts.sort_unstable();
    counts.dedup();
    counts
}

/// W4 on one clip kind: both variants at every thread count.
fn crowd<S: SoaSampler>(
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    kind: &str,
    skeleton: &Skeleton,
    skin: &Skin,
    clips: &[S],
) {
    let duration = clips[0].duration();
    for (variant, output) in [("sample_ltm", PaletteOutput::None), ("sample_ltm_palette", PaletteOutput::Matrices)] {
        let mut job = CrowdJob::new(skeleton, clips).with_palettes(skin, output).expect("the skin fits its skeleton");
        job.reserve(INSTANCES);
        for i in 0..INSTANCES {
            let time = i as f32 * duration / INSTANCES as f32;
            job.add(CrowdCharacter { clip: 0, time, speed: 1.0, looping: true }).expect("valid character");
        }
        for threads in thread_counts() {
            g.bench_function(BenchmarkId::new(format!("{kind}_{variant}"), threads), |b| {
                b.iter(|| job.update(black_box(DT), threads).expect("the clip fits the skeleton"))
            });
        }
        black_box(job.models());
    }
}

fn bench_character(
    c: &mut Criterion,
    name: &str,
    (skeleton, skin, clip, runtime): (Skeleton, Skin, Clip, RuntimeClip),
) {
    let mut g = c.benchmark_group(name);
    g.throughput(Throughput::Elements(INSTANCES as u64));
    let baked = [BakedClip::bake(&clip, skeleton.rest_pose(), BAKE_RATE).expect("the clip fits its skeleton")];
    crowd(&mut g, "runtime", &skeleton, &skin, &[runtime]);
    crowd(&mut g, "exact", &skeleton, &skin, &[clip]);
    crowd(&mut g, "baked", &skeleton, &skin, &baked);
    g.finish();
}

fn crowd_job(c: &mut Criterion) {
    bench_character(c, "crowd_job_fox_walk", fox());
    bench_character(c, "crowd_job_fixture80", fixture());
}

criterion_group!(benches, crowd_job);
criterion_main!(benches);
