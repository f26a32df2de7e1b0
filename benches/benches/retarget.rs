//! Retargeting per frame (issue 21): `RetargetJob::run`, the mannequin's walk onto the
//! book's Woman (22 → 43 joints), per character, next to what playing the source clip
//! costs on its own: sampling it (`Clip::sample_cached`) and its local-to-model
//! (`Pose::local_to_model`). The aim is a job cheaper than sampling plus local-to-model.
//!
//! Cases (`Throughput::Elements(1)`: one character a call):
//! - `sample`: the walk sampled at a clock advancing 1/60 s a call;
//! - `sample+local_to_model`: the same, then the mannequin's model matrices;
//! - `job_no_contacts`: the job on a sampled pose, contact weights 0 (rotations, hips,
//!   toes above the floor);
//! - `job_feet_planted`: the job with both feet placed by the two-bone IK (weight 1), the
//!   most a frame does;
//! - `target_sample+local_to_model`: for scale, the Woman's own `Walking` sampled and its
//!   local-to-model (43 joints): what playing a clip made for the target costs.
//!
//! Run: `cargo bench -p benches --bench retarget`. Figures in BENCHMARKS.md.
//!
//! On a machine whose neighbours make criterion's medians swing (seen here: ±40% from one
//! run to the next), `RETARGET_MIN=1` runs the aim and the two job cases alternately, 300
//! rounds of 2,000 calls each, and prints each one's fastest round per call and the ratio
//! of the job to the aim: the least-disturbed time of each, taken side by side.
//!
//! For instruction counts (a busy machine), `RETARGET_IR=CASE RETARGET_IR_N=N` runs one
//! case N times and exits instead (CASE: `sample`, `sample+local_to_model`,
//! `job_no_contacts`, `job_feet_planted`, `target_sample+local_to_model`); under `valgrind --tool=callgrind`, two runs with
//! different N give the instructions a call.

use anim_core::clip::{SamplingCache, TimePolicy};
use anim_math::Mat4;
use anim_retarget::{HumanoidRig, Reference, RetargetJob, RetargetSettings, Retargeter, auto_map};
use criterion::{Criterion, Throughput, criterion_group};
use std::hint::black_box;

struct Setup {
    mannequin: anim_gltf::Model,
    woman: anim_gltf::Model,
    retargeter: Retargeter,
}

fn setup() -> Setup {
    let mannequin = anim_gltf::mannequin_model();
    let assets = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/assets");
    let woman = anim_gltf::load(format!("{assets}/Woman/Woman.gltf")).expect("the Woman loads");
    let rig = |m: &anim_gltf::Model| {
        HumanoidRig::new(&m.skeleton, auto_map(&m.skeleton).map, Reference::Bind(&m.skins[0].skin)).expect("rigs")
    };
    let retargeter = Retargeter::new(&rig(&mannequin), &rig(&woman), RetargetSettings::default()).expect("retargeter");
    Setup { mannequin, woman, retargeter }
}

/// The workloads, each a closure run once per call.
fn run_case(s: &Setup, case: &str, calls: usize) {
    let skeleton = &s.mannequin.skeleton;
    let walk = s.mannequin.clip("walk").expect("the mannequin walks");
    let mut cache = SamplingCache::new(&walk);
    let mut pose = skeleton.rest_pose().clone();
    let mut model = vec![Mat4::identity(); skeleton.len()];
    let mut job = RetargetJob::new(&s.retargeter);
    let mut out = s.woman.skeleton.rest_pose().clone();
    walk.sample(0.3, TimePolicy::Wrap, &mut pose).expect("the walk fits");
    let contacts = if case == "job_feet_planted" { [1.0, 1.0, 0.0, 0.0] } else { [0.0; 4] };
    let own = s.woman.clip("Walking").expect("the Woman walks");
    let mut own_cache = SamplingCache::new(&own);
    let mut own_model = vec![Mat4::identity(); s.woman.skeleton.len()];
    for i in 0..calls {
        let t = i as f32 / 60.0;
        match case {
            "sample" => {
                walk.sample_cached(&mut cache, black_box(t), TimePolicy::Wrap, &mut pose).expect("fits");
            }
            "sample+local_to_model" => {
                walk.sample_cached(&mut cache, black_box(t), TimePolicy::Wrap, &mut pose).expect("fits");
                pose.local_to_model(skeleton, &mut model).expect("fits");
            }
            "target_sample+local_to_model" => {
                own.sample_cached(&mut own_cache, black_box(t), TimePolicy::Wrap, &mut out).expect("fits");
                out.local_to_model(&s.woman.skeleton, &mut own_model).expect("fits");
            }
            _ => {
                job.run(&s.retargeter, black_box(&pose), &contacts, &mut out).expect("the job runs");
            }
        }
        black_box(&out);
        black_box(&model);
    }
}

fn retarget(c: &mut Criterion) {
    let s = setup();
    let skeleton = &s.mannequin.skeleton;
    let walk = s.mannequin.clip("walk").expect("the mannequin walks");
    let mut g = c.benchmark_group("retarget/mannequin_to_woman");
    g.throughput(Throughput::Elements(1));
    let mut cache = SamplingCache::new(&walk);
    let mut pose = skeleton.rest_pose().clone();
    let mut t = 0.0f32;
    g.bench_function("sample", |b| {
        b.iter(|| {
            t += 1.0 / 60.0;
            walk.sample_cached(&mut cache, black_box(t), TimePolicy::Wrap, &mut pose).expect("fits")
        })
    });
    let mut model = vec![Mat4::identity(); skeleton.len()];
    g.bench_function("sample+local_to_model", |b| {
        b.iter(|| {
            t += 1.0 / 60.0;
            walk.sample_cached(&mut cache, black_box(t), TimePolicy::Wrap, &mut pose).expect("fits");
            pose.local_to_model(skeleton, black_box(&mut model)).expect("fits")
        })
    });
    walk.sample(0.3, TimePolicy::Wrap, &mut pose).expect("the walk fits");
    let mut job = RetargetJob::new(&s.retargeter);
    let mut out = s.woman.skeleton.rest_pose().clone();
    for (name, contacts) in [("job_no_contacts", [0.0; 4]), ("job_feet_planted", [1.0, 1.0, 0.0, 0.0])] {
        g.bench_function(name, |b| {
            b.iter(|| {
                job.run(&s.retargeter, black_box(&pose), &contacts, black_box(&mut out)).expect("the job runs");
            })
        });
    }
    let own = s.woman.clip("Walking").expect("the Woman walks");
    let mut own_cache = SamplingCache::new(&own);
    let mut own_model = vec![Mat4::identity(); s.woman.skeleton.len()];
    g.bench_function("target_sample+local_to_model", |b| {
        b.iter(|| {
            t += 1.0 / 60.0;
            own.sample_cached(&mut own_cache, black_box(t), TimePolicy::Wrap, &mut out).expect("fits");
            out.local_to_model(&s.woman.skeleton, black_box(&mut own_model)).expect("fits")
        })
    });
    g.finish();
}

criterion_group!(benches, retarget);

/// `RETARGET_MIN=1` (module docs).
fn min_times() {
    let s = setup();
    let cases = ["sample+local_to_model", "job_no_contacts", "job_feet_planted"];
    let mut best = [f64::MAX; 3];
    for _ in 0..300 {
        for (i, c) in cases.iter().enumerate() {
            let t = std::time::Instant::now();
            run_case(&s, c, 2000);
            best[i] = best[i].min(t.elapsed().as_secs_f64() / 2000.0 * 1e9);
        }
    }
    println!("min ns/call: l2m {:.1} job {:.1} feet {:.1} ratio {:.3}", best[0], best[1], best[2], best[1] / best[0]);
}

fn main() {
    if std::env::var("RETARGET_MIN").is_ok() {
        min_times();
        return;
    }
    if let Ok(case) = std::env::var("RETARGET_IR") {
        let calls = std::env::var("RETARGET_IR_N").ok().and_then(|n| n.parse().ok()).unwrap_or(1000);
        run_case(&setup(), &case, calls);
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
