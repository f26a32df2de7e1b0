//! Blending, crossfades, additive layers and IK: blend ns/joint, crossfade update, CCD and
//! FABRIK on a 3-joint leg and a 10-joint tail, two-bone IK per call, foot grounding per
//! character.
//!
//! Run: `cargo bench -p benches --bench blend_ik`. Figures are recorded in BENCHMARKS.md.

use anim_core::blend::additive::add_in_place;
use anim_core::blend::crossfade::CrossFadeController;
use anim_core::blend::mix::{blend, blend_into};
use anim_core::clip::TimePolicy;
use anim_core::pose::{JointDesc, Pose, Skeleton};
use anim_ik::{
    CcdSolver, FabrikSolver, FootGrounding, FootSettings, HeightField, IkChain, Leg, LegSolver, aim, aim_correction,
    solve_two_bone, two_bone_corrections,
};
use anim_math::{Quat, Transform, Vec3};
use benches::{AimSetup, Rng, TwoBoneSetup};
use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

const JOINTS: usize = 64;

fn sampled(skeleton: &Skeleton, clip: &anim_core::clip::Clip, t: f32) -> Pose {
    let mut p = skeleton.rest_pose().clone();
    clip.sample(t, TimePolicy::Wrap, &mut p).expect("pose fits the clip");
    p
}

fn blending(c: &mut Criterion) {
    let skeleton = benches::skeleton(JOINTS);
    let clip = benches::clip(&skeleton, 4.0, 30.0);
    let a = sampled(&skeleton, &clip, 0.3);
    let b = sampled(&skeleton, &clip, 2.1);
    let base = sampled(&skeleton, &clip, 0.0);
    let mut out = a.clone();
    let mut g = c.benchmark_group("blend");
    g.throughput(Throughput::Elements(JOINTS as u64));
    g.bench_function("blend_64_joints", |bch| {
        bch.iter(|| blend(black_box(&mut out), &a, &b, black_box(0.37), None, &skeleton).expect("sizes match"))
    });
    g.bench_function("blend_into_64_joints", |bch| {
        bch.iter(|| blend_into(black_box(&mut out), &b, black_box(0.37), None, &skeleton).expect("sizes match"))
    });
    g.bench_function("additive_in_place_64_joints", |bch| {
        bch.iter(|| add_in_place(black_box(&mut out), &b, &base, black_box(0.5), None, &skeleton).expect("sizes match"))
    });
    g.finish();

    // Crossfade: the current clip plus one target always fading in (a long fade), 60 Hz.
    let clip_a = Arc::new(clip);
    let clip_b = Arc::new(benches::clip(&skeleton, 3.0, 30.0));
    let mut fader = CrossFadeController::new(&skeleton, 4);
    fader.play(clip_a.clone(), TimePolicy::Wrap).expect("clip fits");
    fader.fade_to(clip_b, 1.0e9, TimePolicy::Wrap).expect("clip fits");
    let mut solo = CrossFadeController::new(&skeleton, 4);
    solo.play(clip_a, TimePolicy::Wrap).expect("clip fits");
    let mut g = c.benchmark_group("crossfade");
    g.throughput(Throughput::Elements(JOINTS as u64));
    g.bench_function("update_one_clip_64_joints", |bch| {
        bch.iter(|| solo.update(black_box(1.0 / 60.0)).expect("finite"))
    });
    g.bench_function("update_fading_two_clips_64_joints", |bch| {
        bch.iter(|| fader.update(black_box(1.0 / 60.0)).expect("finite"))
    });
    g.finish();
}

/// A chain of `n` joints, 0.3 apart along +y with a slight bend, and reachable goals.
fn chain_and_goals(n: usize) -> (IkChain, Vec<Vec3>) {
    let mut locals = vec![Transform::IDENTITY];
    for _ in 1..n {
        locals.push(Transform::new(
            Vec3::new(0.0, 0.3, 0.0),
            Quat::from_euler_angles(0.1, 0.0, 0.1),
            Vec3::repeat(1.0),
        ));
    }
    let chain = IkChain::from_transforms(Transform::IDENTITY, locals).expect("finite, non-empty");
    let reach = 0.3 * (n - 1) as f32;
    let mut rng = Rng(9);
    let goals = (0..64)
        .map(|_| {
            let d = Vec3::new(rng.range(-1.0, 1.0), rng.range(-1.0, 1.0), rng.range(-1.0, 1.0)).normalize();
            d * reach * rng.range(0.3, 0.8)
        })
        .collect();
    (chain, goals)
}

fn ik(c: &mut Criterion) {
    let mut g = c.benchmark_group("ik");
    for (name, n) in [("leg_3_joints", 3), ("tail_10_joints", 10)] {
        let (chain, goals) = chain_and_goals(n);
        let ccd = CcdSolver::new(15, 1e-3);
        let mut k = 0;
        g.bench_function(format!("ccd_{name}"), |b| {
            b.iter_batched_ref(
                || chain.clone(),
                |ch| {
                    k = (k + 1) % goals.len();
                    ccd.solve(ch, &goals[k]).expect("finite goal")
                },
                BatchSize::SmallInput,
            )
        });
        let mut fabrik = FabrikSolver::new(15, 1e-3);
        let mut k = 0;
        g.bench_function(format!("fabrik_{name}"), |b| {
            b.iter_batched_ref(
                || chain.clone(),
                |ch| {
                    k = (k + 1) % goals.len();
                    fabrik.solve(ch, &goals[k]).expect("finite goal")
                },
                BatchSize::SmallInput,
            )
        });
    }

    // Two-bone (W6). `two_bone_per_call` is the whole `solve_two_bone`: it builds the three
    // joints' world transforms from the parent's world transform and the locals, solves,
    // writes both local rotations (renormalized) and rebuilds the chain to report the miss:
    // ozz-animation's "from locals" variant (model matrices from locals + IKTwoBoneJob +
    // corrections applied) plus the miss. `two_bone_job` is `two_bone_corrections` alone,
    // from the joints' model-space positions and rotations to the two local corrections:
    // ozz's IKTwoBoneJob alone (from model matrices).
    let setup = TwoBoneSetup::new();
    let joints = setup.joints();
    let TwoBoneSetup { parent, upper, middle, end, targets, pole } = setup;
    let mut k = 0;
    g.throughput(Throughput::Elements(1));
    g.bench_function("two_bone_per_call", |b| {
        b.iter(|| {
            k = (k + 1) % targets.len();
            let (mut u, mut m) = (upper, middle);
            let r = solve_two_bone(&parent, &mut u, &mut m, &end, black_box(&targets[k]), Some(&pole));
            black_box((u, m, r))
        })
    });

    let mut k = 0;
    g.bench_function("two_bone_job", |b| {
        b.iter(|| {
            k = (k + 1) % targets.len();
            black_box(two_bone_corrections(black_box(&joints), black_box(&targets[k]), Some(&pole)))
        })
    });

    // Aim: a head joint under a turned neck looks at targets around it, forward +z, up +y,
    // world up +y (ozz-animation's IKAimJob with a pole vector does the same work).
    let AimSetup { neck, head, looks, forward, up, world_up } = AimSetup::new();
    // `aim_per_call` is the whole `aim`: the joint's world position from the parent's world
    // transform and its local translation, the aim, and the new local rotation written
    // (renormalized): ozz's "from locals" variant less the model matrices of joints it does
    // not need. `aim_job` is `aim_correction` alone, from the joint's model-space position
    // and rotation to the local correction: ozz's IKAimJob alone (from a model matrix).
    let mut k = 0;
    g.bench_function("aim_per_call", |b| {
        b.iter(|| {
            k = (k + 1) % looks.len();
            let mut h = head;
            let r = aim(&neck, &mut h, black_box(&looks[k]), &forward, &up, &world_up);
            black_box((h, r))
        })
    });
    let world = neck.combine(&head);
    let mut k = 0;
    g.bench_function("aim_job", |b| {
        b.iter(|| {
            k = (k + 1) % looks.len();
            black_box(aim_correction(
                black_box(&world.translation),
                black_box(&world.rotation),
                black_box(&looks[k]),
                &forward,
                &up,
                &world_up,
            ))
        })
    });
    g.finish();
}

fn two_leg_skeleton() -> Skeleton {
    let t = |x: f32, y: f32, z: f32| Transform::from_translation(Vec3::new(x, y, z));
    let mut j = vec![JointDesc::new("pelvis", None, t(0.0, 1.0, 0.0))];
    for (side, x) in [("l", -0.1), ("r", 0.1)] {
        let base = j.len();
        j.push(JointDesc::new(format!("hip_{side}"), Some(0), t(x, 0.0, 0.0)));
        j.push(JointDesc::new(format!("knee_{side}"), Some(base), t(0.0, -0.45, 0.02)));
        j.push(JointDesc::new(format!("ankle_{side}"), Some(base + 1), t(0.0, -0.47, -0.02)));
        j.push(JointDesc::new(format!("toe_{side}"), Some(base + 2), t(0.0, -0.05, 0.14)));
    }
    Skeleton::new(j).expect("parents precede children")
}

fn grounding(c: &mut Criterion) {
    let s = two_leg_skeleton();
    let leg = |side: &str| Leg {
        hip: s.find(&format!("hip_{side}")).expect("joint exists"),
        knee: s.find(&format!("knee_{side}")).expect("joint exists"),
        ankle: s.find(&format!("ankle_{side}")).expect("joint exists"),
        toe: s.find(&format!("toe_{side}")).expect("joint exists"),
        contact_curve: format!("foot_contact_{side}"),
    };
    let ground = HeightField::from_fn(-8.0, -8.0, 0.25, 65, 65, |x, z| 0.2 * (0.7 * x).sin() + 0.1 * (1.3 * z).cos())
        .expect("finite heights");
    let mut g = c.benchmark_group("foot_grounding");
    g.throughput(Throughput::Elements(1));
    for (name, solver) in [("two_bone", LegSolver::TwoBone), ("ccd_15", LegSolver::Ccd(CcdSolver::new(15, 1e-3)))] {
        let settings = FootSettings { solver, ..FootSettings::default() };
        let mut feet = FootGrounding::new(&s, vec![leg("l"), leg("r")], settings).expect("valid legs");
        let rest = s.rest_pose().clone();
        let mut pose = rest.clone();
        let mut x = 0.0f32;
        g.bench_function(format!("per_character_{name}"), |b| {
            b.iter(|| {
                x = if x > 5.0 { -5.0 } else { x + 0.013 };
                pose.locals_mut().copy_from_slice(rest.locals());
                let mut placement = Transform::from_translation(Vec3::new(x, 0.0, 0.3 * x));
                feet.apply(&s, &mut pose, &mut placement, black_box(&[1.0, 0.4]), &ground).expect("finite input")
            })
        });
    }
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
    targets = blending, ik, grounding
}
criterion_main!(benches);
