//! CPU skinning, workload W5 of issue 10 (see BENCHMARKS.md): linear blend skinning with
//! 4 influences on the Fox mesh (1728 vertices, `JOINTS_0`/`WEIGHTS_0` as in the file,
//! smooth normals since Fox has none), palette = model matrices of "Walk" × inverse bind
//! matrices; one mesh at a time (Walk at t = 0.3 s) and a crowd's worth (100 meshes, each
//! with its own palette, Walk at 100 different times, and its own outputs: 172,800
//! vertices an iteration); plus the 80-joint fixture's 10,000-vertex mesh. Each influence
//! layout (f32, u16 + unorm16, u8 + unorm16) and each job:
//!
//! - `lbs_pos`: positions only;
//! - `lbs_pos_nrm_raw`: positions + normals, not renormalized (ozz-animation's job);
//! - `lbs_pos_nrm`: positions + renormalized normals (the default);
//! - `dq_pos`, `dq_pos_nrm`: dual-quaternion positions, and positions + normals.
//!
//! `skinning_signs`: DQ positions of the fixture's mesh from a rigid palette of turns within
//! ±0.5 rad about each axis (`coherent`: no pivot pair flips), and the same transforms with
//! every other joint's dual quaternion negated (`negated`: pairs flip, as when quaternions
//! are read from matrices with their own sign rule), which the SIMD loops undo with a
//! negated copy of the palette instead of testing each influence.
//!
//! Throughput is vertices. Run: `cargo bench -p benches --bench skinning`.

use anim_core::clip::TimePolicy;
use anim_core::skin::mesh::InfluenceLayout;
use anim_core::skin::palette::skinning_matrices;
use anim_core::skin::skinning::{
    Kernel, NormalMode, SkinningInput, SkinningOutput, dual_quaternion, dual_quaternion_with, linear_blend_with,
};
use anim_core::skin::{DqPalette, Influences, Skin};
use anim_math::{DualQuat, Mat4, Quat, Vec3, dual};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

/// Meshes in the crowd workload.
const CROWD: usize = 100;

/// One skinning job of the list in the crate docs.
#[derive(Clone, Copy)]
enum Job {
    Lbs(Option<NormalMode>),
    Dq(bool),
}

const JOBS: [(&str, Job); 5] = [
    ("lbs_pos", Job::Lbs(None)),
    ("lbs_pos_nrm_raw", Job::Lbs(Some(NormalMode::DirectUnnormalized))),
    ("lbs_pos_nrm", Job::Lbs(Some(NormalMode::Direct))),
    ("dq_pos", Job::Dq(false)),
    ("dq_pos_nrm", Job::Dq(true)),
];

const LAYOUTS: [(&str, InfluenceLayout); 3] = [
    ("f32", InfluenceLayout::F32),
    ("u16_unorm16", InfluenceLayout::U16Unorm16),
    ("u8_unorm16", InfluenceLayout::U8Unorm16),
];

/// A skinned mesh and its palettes, one per instance.
struct Setup {
    positions: Vec<Vec3>,
    normals: Vec<Vec3>,
    influences: Influences,
    palettes: Vec<Vec<Mat4>>,
    dq_palettes: Vec<DqPalette>,
}

/// Fox's skinned mesh, with `instances` palettes of Walk: at t = 0.3 s for one instance,
/// at `i · duration / instances` for several.
fn fox(instances: usize) -> Setup {
    let path = benches::shared_asset("Fox/Fox.glb");
    let model = anim_gltf::load(&path).expect("the shared Fox model loads");
    let clip = &model.clips[model.find_clip("Walk").expect("Fox has a Walk clip")];
    let mesh = model.meshes.iter().find(|m| m.skin.is_some()).expect("Fox has a skinned mesh");
    let skin = &model.skins[mesh.skin.expect("found skinned")].skin;
    let influences = mesh.data.influences.clone().expect("a skinned mesh has influences");
    let normals = if mesh.data.normals.is_empty() { mesh.data.smooth_normals() } else { mesh.data.normals.clone() };
    let times: Vec<f32> = if instances == 1 {
        vec![0.3]
    } else {
        (0..instances).map(|i| i as f32 * clip.duration() / instances as f32).collect()
    };
    let mut pose = model.skeleton.rest_pose().clone();
    let mut model_m = vec![Mat4::identity(); model.skeleton.len()];
    let mut palettes = Vec::new();
    for t in times {
        clip.sample(t, TimePolicy::Wrap, &mut pose).expect("Walk fits Fox's skeleton");
        pose.local_to_model(&model.skeleton, &mut model_m).expect("lengths match");
        let mut pal = vec![Mat4::identity(); skin.len()];
        skinning_matrices(&model_m, skin, &mut pal).expect("the skin fits its skeleton");
        palettes.push(pal);
    }
    finish(mesh.data.positions.clone(), normals, influences, palettes)
}

/// The 80-joint fixture's 10,000-vertex, 4-influence mesh, posed by the fixture clip.
fn fixture() -> Setup {
    let skeleton = benches::skeleton(80);
    let clip = benches::clip(&skeleton, 4.0, 30.0);
    let mut pose = skeleton.rest_pose().clone();
    clip.sample(0.3, TimePolicy::Clamp, &mut pose).expect("pose fits the clip");
    let skin = Skin::from_skeleton(&skeleton);
    let mut model = vec![Mat4::identity(); skeleton.len()];
    pose.local_to_model(&skeleton, &mut model).expect("lengths match");
    let mut pal = vec![Mat4::identity(); skin.len()];
    skinning_matrices(&model, &skin, &mut pal).expect("skin fits");
    let (positions, normals, influences) = benches::mesh(10_000, 4, 80);
    finish(positions, normals, influences, vec![pal])
}

fn finish(positions: Vec<Vec3>, normals: Vec<Vec3>, influences: Influences, palettes: Vec<Vec<Mat4>>) -> Setup {
    let dq_palettes = palettes.iter().map(|p| DqPalette::from_matrices(p)).collect();
    Setup { positions, normals, influences, palettes, dq_palettes }
}

/// Benches every job and layout of `setup` (all its instances an iteration) in `group`.
fn run(c: &mut Criterion, group: &str, setup: &Setup) {
    let n = setup.positions.len();
    let instances = setup.palettes.len();
    let mut out_p = vec![vec![Vec3::zeros(); n]; instances];
    let mut out_n = vec![vec![Vec3::zeros(); n]; instances];
    let mut g = c.benchmark_group(group);
    g.throughput(Throughput::Elements((n * instances) as u64));
    for (layout_name, layout) in LAYOUTS {
        let influences = setup.influences.clone().with_layout(layout).expect("the mesh has at most 256 joints");
        for (job_name, job) in JOBS {
            let normals = match job {
                Job::Lbs(mode) => mode.is_some(),
                Job::Dq(normals) => normals,
            };
            let input = SkinningInput {
                influences: &influences,
                positions: &setup.positions,
                normals: normals.then_some(&setup.normals[..]),
            };
            g.bench_function(BenchmarkId::new(job_name, layout_name), |b| {
                b.iter(|| {
                    for i in 0..instances {
                        let mut out =
                            SkinningOutput { positions: &mut out_p[i], normals: normals.then_some(&mut out_n[i][..]) };
                        match job {
                            Job::Lbs(mode) => linear_blend_with(
                                &input,
                                black_box(&setup.palettes[i]),
                                mode.unwrap_or_default(),
                                Kernel::best(),
                                &mut out,
                            ),
                            Job::Dq(_) => dual_quaternion(&input, black_box(&setup.dq_palettes[i]), &mut out),
                        }
                        .expect("valid input");
                    }
                })
            });
        }
    }
    if instances == 1 {
        // The portable loops, for comparison with the kernel chosen at run time.
        let input = SkinningInput { influences: &setup.influences, positions: &setup.positions, normals: None };
        g.bench_function("lbs_pos_scalar/f32", |b| {
            b.iter(|| {
                let mut out = SkinningOutput { positions: &mut out_p[0], normals: None };
                linear_blend_with(&input, black_box(&setup.palettes[0]), NormalMode::Direct, Kernel::Scalar, &mut out)
                    .expect("valid input");
            })
        });
        g.bench_function("dq_pos_scalar/f32", |b| {
            b.iter(|| {
                let mut out = SkinningOutput { positions: &mut out_p[0], normals: None };
                dual_quaternion_with(&input, black_box(&setup.dq_palettes[0]), Kernel::Scalar, &mut out)
                    .expect("valid input");
            })
        });
    }
    g.finish();
}

/// The `skinning_signs` group (see the crate docs).
fn signs(c: &mut Criterion) {
    let (positions, _, influences) = benches::mesh(10_000, 4, 80);
    let mut state = 12_345u32;
    let mut next = move || {
        state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        (state >> 8) as f32 / (1u32 << 24) as f32 - 0.5
    };
    let turns: Vec<DualQuat> = (0..80)
        .map(|_| {
            let q = Quat::from_euler_angles(next(), next(), next());
            dual::from_parts(&Vec3::new(next(), next(), next()), &q)
        })
        .collect();
    let negated: Vec<DualQuat> = turns
        .iter()
        .enumerate()
        .map(|(j, q)| if j % 2 == 1 { DualQuat::new_unchecked(-q.into_inner()) } else { *q })
        .collect();
    let input = SkinningInput { influences: &influences, positions: &positions, normals: None };
    let mut out_p = vec![Vec3::zeros(); positions.len()];
    let mut g = c.benchmark_group("skinning_signs");
    g.throughput(Throughput::Elements(positions.len() as u64));
    for (name, dqs) in [("coherent", &turns), ("negated", &negated)] {
        let palette = DqPalette::from_rigid(dqs);
        g.bench_function(format!("dq_pos/{name}"), |b| {
            b.iter(|| {
                let mut out = SkinningOutput { positions: &mut out_p, normals: None };
                dual_quaternion(&input, black_box(&palette), &mut out).expect("valid input");
            })
        });
    }
    g.finish();
}

fn skinning(c: &mut Criterion) {
    run(c, "skinning_fox", &fox(1));
    run(c, "skinning_fox_crowd", &fox(CROWD));
    run(c, "skinning_fixture", &fixture());
    signs(c);
}

criterion_group!(benches, skinning);
criterion_main!(benches);
