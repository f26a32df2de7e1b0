//! The project's side of the side-by-side comparison with ozz-animation 0.16 (issue 10;
//! BENCHMARKS.md records the sitting): every workload of the comparison in one binary, so
//! a sitting can alternate it with the other program round after round.
//!
//! Benchmark ids are `<case>/<workload>/<path>`, with case `fox` (Fox's trimmed runtime
//! skeleton: 24 skin joints and the root node, clip "Walk") or `fix80` (the 80-joint
//! fixture of `benches::skeleton`), and:
//!
//! - `w1_sampling_60hz`: looping forward playback at 60 Hz, one context kept across
//!   iterations; per joint. Paths: `runtime` (a [`RuntimeClip`] at 1 mm at the skin),
//!   `exact` (`Clip::sample_cached`, glTF semantics), `baked30` (a [`BakedClip`] at 30 Hz).
//! - `w2_local_to_model`: the whole skeleton from a structure-of-arrays pose; per joint.
//! - `w3_sampling_ltm`: W1 then W2; per joint.
//! - `w4_crowd1000`: 1000 instances of the clip, instance i starting at i·duration/1000,
//!   each with its own context and outputs, one thread ([`CrowdJob`] without palettes);
//!   per instance.
//! - `w5_*`: skinning with 4 influences (f32 layout, the default kernel) of one mesh
//!   (`1mesh`: Fox 1728 vertices, the fixture 10,000) or a crowd's worth (`crowd100`: 100
//!   meshes with their own palettes and outputs): `lbs4_pos`, `lbs4_pos_nrm` (normals not
//!   renormalized, as ozz's job), `lbs4_pos_nrm_renorm` (the default), `dq_pos`,
//!   `dq_pos_nrm`; per vertex. The fixture's clip scales its joints uniformly; its one mesh
//!   also runs `dq_pos_squash` and `dq_pos_nrm_squash`, the same palette squashed in bind
//!   space by `diag(1, 1.15, 0.9)` (a non-uniform scale on every joint).
//! - `ik/two_bone_job`, `ik/aim_job`: the corrections alone from model-space joints
//!   (ozz's IKTwoBoneJob and IKAimJob); `ik/two_bone`, `ik/aim`: the whole
//!   `solve_two_bone` and `aim` from local transforms (ozz's job plus model matrices from
//!   locals and the corrections applied; `solve_two_bone` also measures the miss); the
//!   setups of `blend_ik`; per call.
//!
//! Run: `cargo bench -p benches --bench vs_ozz` (add `-- --warm-up-time 0.5
//! --measurement-time 1.5` for the short rounds of a sitting).

use anim_core::clip::SoaSampler;
use anim_core::clip::{BakedClip, Clip, RuntimeClip, SamplingCache, TimePolicy};
use anim_core::offline::JointRadii;
use anim_core::pose::hierarchy::local_to_model;
use anim_core::pose::soa::SoaPose;
use anim_core::pose::{Pose, Skeleton};
use anim_core::skin::palette::skinning_matrices;
use anim_core::skin::skinning::{NormalMode, SkinningInput, SkinningOutput, dual_quaternion, linear_blend};
use anim_core::skin::{DqPalette, Influences, Mesh, Skin};
use anim_crowd::job::{CrowdCharacter, CrowdJob};
use anim_ik::{aim, aim_correction, solve_two_bone, two_bone_corrections};
use anim_math::{Mat4, Vec3};
use benches::{AimSetup, TwoBoneSetup};
use criterion::{BenchmarkGroup, Criterion, Throughput, criterion_group, criterion_main, measurement::WallTime};
use std::hint::black_box;

const STEP: f32 = 1.0 / 60.0;
const CROWD: usize = 1000;
const MESHES: usize = 100;
const TOLERANCE_M: f32 = 0.001;

/// One character: skeleton, skin, its first clip in its three forms, every clip as a
/// runtime clip (name, clip, runtime clip), and a skinned mesh.
struct Case {
    name: &'static str,
    skeleton: Skeleton,
    skin: Skin,
    clip: Clip,
    runtime: RuntimeClip,
    baked: BakedClip,
    clips: Vec<(String, Clip, RuntimeClip)>,
    positions: Vec<Vec3>,
    normals: Vec<Vec3>,
    influences: Influences,
}

fn fox() -> Case {
    let path = benches::shared_asset("Fox/Fox.glb");
    let model = anim_gltf::load(&path).unwrap_or_else(|e| panic!("Fox: {e}"));
    let walk = model.find_clip("Walk").expect("Fox has a Walk clip");
    let rt = model.runtime_skeleton().expect("an imported model is consistent");
    let instance = model.meshes.iter().find(|m| m.skin == Some(0)).expect("Fox has a skinned mesh");
    let radii = JointRadii::from_skin(&rt.skeleton, &rt.skins[0], &[&instance.data]).expect("invertible binds");
    let clip = Clip::clone(&rt.clips[walk]);
    let runtime = RuntimeClip::compile(&clip, &rt.skeleton, &radii, TOLERANCE_M).expect("Walk fits Fox");
    let clips = ["Walk", "Run", "Survey"]
        .map(|name| {
            let c = Clip::clone(&rt.clips[model.find_clip(name).expect("Fox has Walk, Run and Survey")]);
            let r = RuntimeClip::compile(&c, &rt.skeleton, &radii, TOLERANCE_M).expect("Fox's clips fit Fox");
            (name.to_owned(), c, r)
        })
        .into();
    let baked = BakedClip::bake(&clip, rt.skeleton.rest_pose(), 30.0).expect("Walk fits Fox");
    let mesh = &instance.data;
    let normals = if mesh.normals.is_empty() { mesh.smooth_normals() } else { mesh.normals.clone() };
    Case {
        name: "fox",
        skin: rt.skins[0].clone(),
        skeleton: rt.skeleton,
        clip,
        runtime,
        baked,
        clips,
        positions: mesh.positions.clone(),
        normals,
        influences: mesh.influences.clone().expect("a skinned mesh has influences"),
    }
}

fn fixture() -> Case {
    let skeleton = benches::skeleton(80);
    let clip = benches::clip(&skeleton, 4.0, 30.0);
    let skin = Skin::from_skeleton(&skeleton);
    let (positions, normals, influences) = benches::mesh(10_000, 4, 80);
    let mesh = Mesh { positions: positions.clone(), influences: Some(influences.clone()), ..Mesh::default() };
    let radii = JointRadii::from_skin(&skeleton, &skin, &[&mesh]).expect("invertible binds");
    let runtime = RuntimeClip::compile(&clip, &skeleton, &radii, TOLERANCE_M).expect("the clip fits");
    let baked = BakedClip::bake(&clip, skeleton.rest_pose(), 30.0).expect("the clip fits");
    let clips = vec![("bench".to_owned(), clip.clone(), runtime.clone())];
    Case { name: "fix80", skeleton, skin, clip, runtime, baked, clips, positions, normals, influences }
}

/// Advances a looping playhead by one 60 Hz frame.
#[inline]
fn tick(t: &mut f32, duration: f32) -> f32 {
    *t = TimePolicy::Wrap.apply(*t + STEP, duration);
    *t
}

fn sampling(g: &mut BenchmarkGroup<WallTime>, case: &Case) {
    let joints = case.skeleton.len();
    let d = case.clip.duration();
    let mut model = vec![Mat4::identity(); joints];
    g.throughput(Throughput::Elements(joints as u64));

    let mut soa = SoaPose::from_pose(case.skeleton.rest_pose());
    for (name, clip, runtime) in &case.clips {
        // Every clip of the case: `runtime` is the first one's, `runtime_<clip>` each one's.
        let d = clip.duration();
        let ids = [
            format!("{}/w1_sampling_60hz/runtime_{name}", case.name),
            format!("{}/w1_sampling_60hz/runtime", case.name),
        ];
        for id in if name == &case.clips[0].0 { &ids[..] } else { &ids[..1] } {
            let mut ctx = runtime.new_context();
            let mut t = 0.0;
            g.bench_function(id, |b| {
                b.iter(|| {
                    runtime.sample_soa(&mut ctx, black_box(tick(&mut t, d)), TimePolicy::Clamp, &mut soa).expect("fits")
                })
            });
        }
        let mut ctx = runtime.new_context();
        let mut t = 0.0;
        g.bench_function(format!("{}/w3_sampling_ltm/runtime_{name}", case.name), |b| {
            b.iter(|| {
                runtime.sample_soa(&mut ctx, black_box(tick(&mut t, d)), TimePolicy::Clamp, &mut soa).expect("fits");
                local_to_model(&case.skeleton, &soa, black_box(&mut model)).expect("fits");
            })
        });
    }
    let mut ctx = case.runtime.new_context();
    let mut pose = case.skeleton.rest_pose().clone();
    let mut cache = SamplingCache::new(&case.clip);
    let mut t = 0.0;
    g.bench_function(format!("{}/w1_sampling_60hz/exact", case.name), |b| {
        b.iter(|| {
            case.clip.sample_cached(&mut cache, black_box(tick(&mut t, d)), TimePolicy::Wrap, &mut pose).expect("fits")
        })
    });
    let mut t = 0.0;
    g.bench_function(format!("{}/w1_sampling_60hz/baked30", case.name), |b| {
        b.iter(|| case.baked.sample(black_box(tick(&mut t, d)), TimePolicy::Wrap, &mut pose).expect("fits"))
    });

    let mut fixed = case.skeleton.rest_pose().clone();
    case.clip.sample(0.3, TimePolicy::Wrap, &mut fixed).expect("fits");
    let fixed = SoaPose::from_pose(&fixed);
    g.bench_function(format!("{}/w2_local_to_model/soa", case.name), |b| {
        b.iter(|| local_to_model(&case.skeleton, black_box(&fixed), &mut model).expect("fits"))
    });

    let mut t = 0.0;
    g.bench_function(format!("{}/w3_sampling_ltm/runtime", case.name), |b| {
        b.iter(|| {
            case.runtime.sample_soa(&mut ctx, black_box(tick(&mut t, d)), TimePolicy::Clamp, &mut soa).expect("fits");
            local_to_model(&case.skeleton, &soa, black_box(&mut model)).expect("fits");
        })
    });
    let mut t = 0.0;
    g.bench_function(format!("{}/w3_sampling_ltm/exact", case.name), |b| {
        b.iter(|| {
            case.clip.sample_cached(&mut cache, black_box(tick(&mut t, d)), TimePolicy::Wrap, &mut pose).expect("fits");
            pose.local_to_model(&case.skeleton, black_box(&mut model)).expect("fits");
        })
    });
}

fn crowd<S: SoaSampler>(g: &mut BenchmarkGroup<WallTime>, id: String, skeleton: &Skeleton, clips: &[S]) {
    let d = clips[0].duration();
    let mut job = CrowdJob::new(skeleton, clips);
    for i in 0..CROWD {
        let character = CrowdCharacter { clip: 0, time: i as f32 * d / CROWD as f32, speed: 1.0, looping: true };
        job.add(character).expect("clip 0 exists");
    }
    g.bench_function(id, |b| b.iter(|| job.update(black_box(STEP), 1).expect("every character fits")));
}

fn crowds(g: &mut BenchmarkGroup<WallTime>, case: &Case) {
    g.throughput(Throughput::Elements(CROWD as u64));
    crowd(g, format!("{}/w4_crowd1000/runtime", case.name), &case.skeleton, std::slice::from_ref(&case.runtime));
    crowd(g, format!("{}/w4_crowd1000/exact", case.name), &case.skeleton, std::slice::from_ref(&case.clip));
    crowd(g, format!("{}/w4_crowd1000/baked30", case.name), &case.skeleton, std::slice::from_ref(&case.baked));
}

/// Palettes of the clip at `count` times (t = 0.3 s for one).
fn palettes(case: &Case, count: usize) -> Vec<Vec<Mat4>> {
    let mut pose: Pose = case.skeleton.rest_pose().clone();
    let mut model = vec![Mat4::identity(); case.skeleton.len()];
    (0..count)
        .map(|i| {
            let t = if count == 1 { 0.3 } else { i as f32 * case.clip.duration() / count as f32 };
            case.clip.sample(t, TimePolicy::Wrap, &mut pose).expect("fits");
            pose.local_to_model(&case.skeleton, &mut model).expect("fits");
            let mut palette = vec![Mat4::identity(); case.skin.len()];
            skinning_matrices(&model, &case.skin, &mut palette).expect("the skin fits its skeleton");
            palette
        })
        .collect()
}

#[derive(Clone, Copy)]
enum Job {
    Lbs(Option<NormalMode>),
    Dq(bool),
    /// Dual quaternions, with normals or not, from the palette squashed in bind space.
    DqSquash(bool),
}

/// The bind-space squash of the `*_squash` workloads.
const SQUASH: [f32; 3] = [1.0, 1.15, 0.9];

fn skinning(g: &mut BenchmarkGroup<WallTime>, case: &Case) {
    const JOBS: [(&str, Job); 7] = [
        ("lbs4_pos", Job::Lbs(None)),
        ("lbs4_pos_nrm", Job::Lbs(Some(NormalMode::DirectUnnormalized))),
        ("lbs4_pos_nrm_renorm", Job::Lbs(Some(NormalMode::Direct))),
        ("dq_pos", Job::Dq(false)),
        ("dq_pos_nrm", Job::Dq(true)),
        ("dq_pos_squash", Job::DqSquash(false)),
        ("dq_pos_nrm_squash", Job::DqSquash(true)),
    ];
    let n = case.positions.len();
    for (size, count) in [("1mesh", 1), ("crowd100", MESHES)] {
        let palettes = palettes(case, count);
        let dq: Vec<DqPalette> = palettes.iter().map(|p| DqPalette::from_matrices(p)).collect();
        let squash = Mat4::new_nonuniform_scaling(&Vec3::new(SQUASH[0], SQUASH[1], SQUASH[2]));
        let squashed: Vec<DqPalette> = palettes
            .iter()
            .map(|p| DqPalette::from_matrices(&p.iter().map(|m| m * squash).collect::<Vec<_>>()))
            .collect();
        let mut out_p = vec![vec![Vec3::zeros(); n]; count];
        let mut out_n = vec![vec![Vec3::zeros(); n]; count];
        g.throughput(Throughput::Elements((n * count) as u64));
        for (job_name, job) in JOBS {
            if matches!(job, Job::DqSquash(_)) && (case.name != "fix80" || count != 1) {
                continue;
            }
            let normals = matches!(job, Job::Lbs(Some(_)) | Job::Dq(true) | Job::DqSquash(true));
            let input = SkinningInput {
                influences: &case.influences,
                positions: &case.positions,
                normals: normals.then_some(&case.normals[..]),
            };
            g.bench_function(format!("{}/w5_{job_name}/{size}", case.name), |b| {
                b.iter(|| {
                    for i in 0..count {
                        let mut out =
                            SkinningOutput { positions: &mut out_p[i], normals: normals.then_some(&mut out_n[i][..]) };
                        match job {
                            Job::Lbs(mode) => {
                                linear_blend(&input, black_box(&palettes[i]), mode.unwrap_or_default(), &mut out)
                            }
                            Job::Dq(_) => dual_quaternion(&input, black_box(&dq[i]), &mut out),
                            Job::DqSquash(_) => dual_quaternion(&input, black_box(&squashed[i]), &mut out),
                        }
                        .expect("the mesh fits its palette");
                    }
                })
            });
        }
    }
}

fn ik(g: &mut BenchmarkGroup<WallTime>) {
    g.throughput(Throughput::Elements(1));
    let setup = TwoBoneSetup::new();
    let joints = setup.joints();
    let TwoBoneSetup { parent, upper, middle, end, targets, pole } = setup;
    let mut k = 0;
    g.bench_function("ik/two_bone", |b| {
        b.iter(|| {
            k = (k + 1) % targets.len();
            let (mut u, mut m) = (upper, middle);
            let r = solve_two_bone(&parent, &mut u, &mut m, &end, black_box(&targets[k]), Some(&pole));
            black_box((u, m, r))
        })
    });
    g.bench_function("ik/two_bone_job", |b| {
        b.iter(|| {
            k = (k + 1) % targets.len();
            black_box(two_bone_corrections(black_box(&joints), black_box(&targets[k]), Some(&pole)))
        })
    });
    let AimSetup { neck, head, looks, forward, up, world_up } = AimSetup::new();
    let mut k = 0;
    g.bench_function("ik/aim", |b| {
        b.iter(|| {
            k = (k + 1) % looks.len();
            let mut h = head;
            let r = aim(&neck, &mut h, black_box(&looks[k]), &forward, &up, &world_up);
            black_box((h, r))
        })
    });
    let world = neck.combine(&head);
    g.bench_function("ik/aim_job", |b| {
        b.iter(|| {
            k = (k + 1) % looks.len();
            let p = black_box(&world.translation);
            black_box(aim_correction(p, black_box(&world.rotation), black_box(&looks[k]), &forward, &up, &world_up))
        })
    });
}

fn all(c: &mut Criterion) {
    let mut g = c.benchmark_group("vs_ozz");
    // Twenty samples keep a round of every workload near a minute; the heaviest batches
    // (a fixture crowd's worth of skinning is a million vertices) still fit the time.
    g.sample_size(20);
    for case in [fox(), fixture()] {
        sampling(&mut g, &case);
        crowds(&mut g, &case);
        skinning(&mut g, &case);
    }
    ik(&mut g);
    g.finish();
}

criterion_group!(benches, all);
criterion_main!(benches);
