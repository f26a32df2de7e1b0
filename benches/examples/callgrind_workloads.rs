//! Instruction counts instead of wall-clock time, for a shared machine: runs one workload
//! of `vs_ozz` (Fox's data, the same setups) a given number of times, so that
//! `valgrind --tool=callgrind` counts it. Run it twice, with N and 2N iterations: the
//! difference of the two totals over N is the instructions a call, setup excluded.
//!
//! ```sh
//! cargo build --release -p benches --example callgrind_workloads
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!   target/release/examples/callgrind_workloads two_bone 1000
//! ```
//!
//! `ci/downstream-bench` builds the same file, so a workload can be counted in the
//! workspace's build and in a default downstream release build. Valgrind reports a CPU
//! without AVX-512, so the kernels chosen at run time are the AVX2 ones there.
//!
//! Workloads: `lbs_pos`, `lbs_nrm` (normals not renormalized), `lbs_renorm`, `dq_pos`,
//! `dq_nrm` (one Fox mesh, Walk at 0.3 s), `two_bone`, `two_bone_job`, `aim`, `aim_job`
//! (the setups of `benches::{TwoBoneSetup, AimSetup}`), `runtime_walk`, `runtime_run`
//! (runtime-clip sampling at 60 Hz), `exact_walk` (`Clip::sample_cached` at 60 Hz), `ltm`
//! (local-to-model, SoA); `fix80_<skinning workload>`: the skinning workloads on the
//! 80-joint fixture of `vs_ozz` (10,000 vertices, a palette with scale).

use anim_core::clip::{RuntimeClip, SamplingCache, SoaSampler, TimePolicy};
use anim_core::offline::JointRadii;
use anim_core::pose::hierarchy::local_to_model;
use anim_core::pose::soa::SoaPose;
use anim_core::skin::DqPalette;
use anim_core::skin::palette::skinning_matrices;
use anim_core::skin::skinning::{NormalMode, SkinningInput, SkinningOutput, dual_quaternion, linear_blend};
use anim_ik::{aim, aim_correction, solve_two_bone, two_bone_corrections};
use anim_math::{Mat4, Vec3};
use benches::{AimSetup, TwoBoneSetup};
use std::hint::black_box;

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(name), Some(n)) = (args.next(), args.next().and_then(|n| n.parse::<usize>().ok())) else {
        eprintln!("usage: callgrind_workloads WORKLOAD ITERATIONS");
        std::process::exit(2);
    };
    match name.as_str() {
        "two_bone" | "two_bone_job" => {
            let setup = TwoBoneSetup::new();
            let joints = setup.joints();
            let TwoBoneSetup { parent, upper, middle, end, targets, pole } = setup;
            for i in 0..n {
                let target = black_box(&targets[i % targets.len()]);
                if name == "two_bone" {
                    let (mut u, mut m) = (upper, middle);
                    let r = solve_two_bone(&parent, &mut u, &mut m, &end, target, Some(&pole));
                    black_box((u, m, r.ok()));
                } else {
                    black_box(two_bone_corrections(black_box(&joints), target, Some(&pole)).ok());
                }
            }
        }
        "aim" | "aim_job" => {
            let AimSetup { neck, head, looks, forward, up, world_up } = AimSetup::new();
            let world = neck.combine(&head);
            for i in 0..n {
                let look = black_box(&looks[i % looks.len()]);
                if name == "aim" {
                    let mut h = head;
                    let r = aim(&neck, &mut h, look, &forward, &up, &world_up);
                    black_box((h, r.ok()));
                } else {
                    let p = black_box(&world.translation);
                    black_box(aim_correction(p, black_box(&world.rotation), look, &forward, &up, &world_up).ok());
                }
            }
        }
        w if w.starts_with("fix80_") => fix80(&w["fix80_".len()..], n),
        _ => fox(&name, n),
    }
}

fn fox(name: &str, n: usize) {
    let model = anim_gltf::load(benches::shared_asset("Fox/Fox.glb")).expect("the shared Fox model loads");
    let rt = model.runtime_skeleton().expect("an imported model is consistent");
    let instance = model.meshes.iter().find(|m| m.skin == Some(0)).expect("Fox has a skinned mesh");
    let mesh = &instance.data;
    let skin = &rt.skins[0];
    let influences = mesh.influences.as_ref().expect("a skinned mesh has influences");
    let normals = if mesh.normals.is_empty() { mesh.smooth_normals() } else { mesh.normals.clone() };
    let clip = |c: &str| &rt.clips[model.find_clip(c).expect("Fox has Walk and Run")];
    match name {
        "exact_walk" => {
            let c = clip("Walk");
            let mut cache = SamplingCache::new(c);
            let mut pose = rt.skeleton.rest_pose().clone();
            let mut t = 0.0;
            for _ in 0..n {
                t = TimePolicy::Wrap.apply(t + 1.0 / 60.0, c.duration());
                c.sample_cached(&mut cache, black_box(t), TimePolicy::Wrap, &mut pose).expect("fits");
            }
            black_box(&pose);
        }
        "runtime_walk" | "runtime_run" | "ltm" => {
            let radii = JointRadii::from_skin(&rt.skeleton, skin, &[mesh]).expect("invertible binds");
            let c = clip(if name == "runtime_run" { "Run" } else { "Walk" });
            let runtime = RuntimeClip::compile(c, &rt.skeleton, &radii, 0.001).expect("the clip fits");
            let mut ctx = runtime.new_context();
            let mut soa = SoaPose::from_pose(rt.skeleton.rest_pose());
            let mut model_m = vec![Mat4::identity(); rt.skeleton.len()];
            let mut t = 0.0;
            if name == "ltm" {
                runtime.sample_soa(&mut ctx, 0.3, TimePolicy::Clamp, &mut soa).expect("fits");
            }
            for _ in 0..n {
                if name == "ltm" {
                    local_to_model(&rt.skeleton, black_box(&soa), black_box(&mut model_m)).expect("fits");
                } else {
                    t = TimePolicy::Wrap.apply(t + 1.0 / 60.0, c.duration());
                    runtime.sample_soa(&mut ctx, black_box(t), TimePolicy::Clamp, &mut soa).expect("fits");
                }
            }
            black_box((&soa, &model_m));
        }
        _ => {
            let mut pose = rt.skeleton.rest_pose().clone();
            let mut model_m = vec![Mat4::identity(); rt.skeleton.len()];
            let mut palette = vec![Mat4::identity(); skin.len()];
            clip("Walk").sample(0.3, TimePolicy::Wrap, &mut pose).expect("Walk fits Fox");
            pose.local_to_model(&rt.skeleton, &mut model_m).expect("lengths match");
            skinning_matrices(&model_m, skin, &mut palette).expect("the skin fits its skeleton");
            skin_loop(name, n, influences, &mesh.positions, &normals, &palette);
        }
    }
}

/// The skinning workloads on `vs_ozz`'s fixture: its palette at t = 0.3 s carries scale.
fn fix80(name: &str, n: usize) {
    use anim_core::skin::Skin;
    let skeleton = benches::skeleton(80);
    let clip = benches::clip(&skeleton, 4.0, 30.0);
    let skin = Skin::from_skeleton(&skeleton);
    let (positions, normals, influences) = benches::mesh(10_000, 4, 80);
    let mut pose = skeleton.rest_pose().clone();
    let mut model_m = vec![Mat4::identity(); skeleton.len()];
    let mut palette = vec![Mat4::identity(); skin.len()];
    clip.sample(0.3, TimePolicy::Wrap, &mut pose).expect("the clip fits");
    pose.local_to_model(&skeleton, &mut model_m).expect("lengths match");
    skinning_matrices(&model_m, &skin, &mut palette).expect("the skin fits its skeleton");
    skin_loop(name, n, &influences, &positions, &normals, &palette);
}

/// `n` calls of skinning workload `name` on one mesh.
fn skin_loop(
    name: &str,
    n: usize,
    influences: &anim_core::skin::Influences,
    positions: &[Vec3],
    normals: &[Vec3],
    palette: &[Mat4],
) {
    let dq = DqPalette::from_matrices(palette);
    let with_normals = name != "lbs_pos" && name != "dq_pos";
    let input = SkinningInput { influences, positions, normals: with_normals.then_some(normals) };
    let mut out_p = vec![Vec3::zeros(); positions.len()];
    let mut out_n = vec![Vec3::zeros(); positions.len()];
    for _ in 0..n {
        let mut out = SkinningOutput { positions: &mut out_p, normals: with_normals.then_some(&mut out_n[..]) };
        match name {
            "lbs_pos" => linear_blend(&input, black_box(palette), NormalMode::default(), &mut out),
            "lbs_nrm" => linear_blend(&input, black_box(palette), NormalMode::DirectUnnormalized, &mut out),
            "lbs_renorm" => linear_blend(&input, black_box(palette), NormalMode::Direct, &mut out),
            "dq_pos" | "dq_nrm" => dual_quaternion(&input, black_box(&dq), &mut out),
            _ => panic!("unknown workload {name}"),
        }
        .expect("the mesh fits its palette");
    }
    black_box((&out_p, &out_n));
}
