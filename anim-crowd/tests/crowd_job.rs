//! The crowd job against independent paths: every thread count gives the bits of the
//! one-thread run, each character equals the steps done by hand (sample, regroup,
//! local-to-model, palettes), an analytic pose comes out where geometry puts it, and
//! bad input is refused with the character named.

use anim_core::clip::SoaSampler;
use anim_core::clip::{BakedClip, Clip, ClipError, Interpolation, JointTracks, SamplingCache, TimePolicy, Track};
use anim_core::pose::hierarchy::local_to_model;
use anim_core::pose::soa::SoaPose;
use anim_core::pose::{JointDesc, Pose, Skeleton};
use anim_core::skin::{DqPalette, Skin, palette};
use anim_crowd::job::{CrowdCharacter, CrowdJob, CrowdJobError, PaletteOutput};
use anim_math::{Mat4, Quat, Transform, Vec3};

use anim_testkit::rng::Rng;

/// A tree of `n` joints (parent `(i − 1) / 3`) with random rest transforms, some scaled.
fn skeleton(n: usize) -> Skeleton {
    let mut rng = Rng(11);
    let joints = (0..n)
        .map(|i| {
            let s = if i % 5 == 3 { 1.2 } else { 1.0 };
            let rest = Transform::new(
                Vec3::new(rng.range(-0.2, 0.2), rng.range(0.1, 0.3), rng.range(-0.2, 0.2)),
                Quat::from_euler_angles(rng.range(-0.5, 0.5), rng.range(-0.5, 0.5), rng.range(-0.5, 0.5)),
                Vec3::new(s, s, s),
            );
            JointDesc::new(format!("j{i}"), if i == 0 { None } else { Some((i - 1) / 3) }, rest)
        })
        .collect();
    Skeleton::new(joints).unwrap()
}

/// A clip of `seconds` with linear keys at 30 Hz on the channels `every`-th joints get.
fn clip(name: &str, joints: usize, seconds: f32, every: usize, seed: u32) -> Clip {
    let mut rng = Rng(seed);
    let times: Vec<f32> = (0..=(seconds * 30.0).round() as usize).map(|k| k as f32 / 30.0).collect();
    let tracks = (0..joints)
        .step_by(every)
        .map(|j| {
            let (a, w, p) = (rng.range(0.2, 1.0), rng.range(1.0, 6.0), rng.range(0.0, 6.0));
            let mut jt = JointTracks::new(j);
            let rot = times.iter().map(|t| Quat::from_euler_angles(a * (w * t + p).sin(), 0.3 * a, 0.1).into_inner());
            jt.rotation = Some(Track::new(Interpolation::Linear, times.clone(), rot.collect()).unwrap());
            if j % 2 == 0 {
                let tr = times.iter().map(|t| Vec3::new(0.1 * (w * t).cos(), 0.2, a * 0.05));
                jt.translation = Some(Track::new(Interpolation::Linear, times.clone(), tr.collect()).unwrap());
            }
            if j % 3 == 0 {
                let sc = times.iter().map(|t| Vec3::new(1.0 + 0.1 * (w * t).sin(), 1.0, 0.9));
                jt.scale = Some(Track::new(Interpolation::Linear, times.clone(), sc.collect()).unwrap());
            }
            jt
        })
        .collect();
    Clip::new(name, tracks, vec![]).unwrap()
}

fn characters(n: usize, clips: usize) -> Vec<CrowdCharacter> {
    let mut rng = Rng(5);
    (0..n)
        .map(|i| CrowdCharacter {
            clip: i % clips,
            time: rng.range(-1.0, 3.0),
            speed: rng.range(-1.0, 2.0),
            looping: i % 4 != 1,
        })
        .collect()
}

fn bits(m: &[Mat4]) -> Vec<u32> {
    m.iter().flat_map(|m| m.iter().map(|x| x.to_bits())).collect()
}

fn pose_bits(p: &SoaPose) -> Vec<u32> {
    p.groups()
        .iter()
        .flat_map(|g| g.translation.iter().chain(&g.rotation).chain(&g.scale).flatten().map(|x| x.to_bits()))
        .collect()
}

fn dq_bits(p: &DqPalette) -> Vec<u32> {
    let q = p
        .dual_quats()
        .iter()
        .flat_map(|q| q.real.coords.iter().chain(q.dual.coords.iter()).map(|x| x.to_bits()).collect::<Vec<_>>());
    q.chain(p.scales().iter().flat_map(|s| s.iter().map(|x| x.to_bits()).collect::<Vec<_>>())).collect()
}

/// Runs `frames` updates of a job over `chars` on `threads` threads; returns every output's bits.
fn run_job<S: SoaSampler>(
    skeleton: &Skeleton,
    clips: &[S],
    skin: &Skin,
    chars: &[CrowdCharacter],
    threads: usize,
    frames: usize,
) -> Vec<Vec<u32>> {
    let mut job = CrowdJob::new(skeleton, clips).with_palettes(skin, PaletteOutput::Both).unwrap();
    for c in chars {
        job.add(*c).unwrap();
    }
    let mut out = Vec::new();
    for f in 0..frames {
        job.update(1.0 / 60.0 + f as f32 * 1e-3, threads).unwrap();
    }
    out.push(bits(job.models()));
    out.push(bits(job.palettes()));
    for i in 0..job.len() {
        out.push(pose_bits(job.pose(i)));
        out.push(dq_bits(job.dual_quat_palette(i).unwrap()));
        out.push(job.characters()[i].time.to_bits().to_le_bytes().map(u32::from).to_vec());
    }
    out
}

#[test]
fn every_thread_count_gives_the_one_thread_bits() {
    let sk = skeleton(37);
    let clips = [clip("a", 37, 1.0, 1, 1), clip("b", 37, 0.7, 2, 2), clip("c", 37, 2.3, 3, 3)];
    // A skin over part of the skeleton, in another order, with its own inverse binds.
    let joints: Vec<usize> = (0..37).rev().step_by(2).collect();
    let ibm = joints.iter().map(|&j| sk.inverse_bind()[j] * Mat4::new_scaling(1.1)).collect();
    let skin = Skin::new(joints, ibm, &sk).unwrap();
    let chars = characters(103, clips.len());
    let one = run_job(&sk, &clips, &skin, &chars, 1, 5);
    for threads in [2, 3, 4, 7, 200] {
        assert!(one == run_job(&sk, &clips, &skin, &chars, threads, 5), "{threads} threads differ");
    }
    // The same for baked clips.
    let baked: Vec<BakedClip> = clips.iter().map(|c| BakedClip::bake(c, sk.rest_pose(), 30.0).unwrap()).collect();
    let one = run_job(&sk, &baked, &skin, &chars, 1, 4);
    assert!(one == run_job(&sk, &baked, &skin, &chars, 3, 4));
    // Parallel runs of one job, frame after frame, stay in step with a one-thread job.
    let (mut a, mut b) = (CrowdJob::new(&sk, &clips[..]), CrowdJob::new(&sk, &clips[..]));
    for c in &chars {
        a.add(*c).unwrap();
        b.add(*c).unwrap();
    }
    for _ in 0..20 {
        a.update(0.021, 1).unwrap();
        b.update_parallel(0.021).unwrap();
        assert_eq!(bits(a.models()), bits(b.models()));
    }
}

#[test]
fn each_character_equals_the_steps_done_by_hand() {
    let sk = skeleton(23);
    let clips = [clip("a", 23, 1.0, 1, 7), clip("b", 23, 0.55, 2, 8)];
    let skin = Skin::from_skeleton(&sk);
    let chars = characters(40, 2);
    let mut job = CrowdJob::new(&sk, &clips).with_palettes(&skin, PaletteOutput::Both).unwrap();
    for c in &chars {
        job.add(*c).unwrap();
    }
    let dts = [0.016, 0.033, 0.5, 0.016];
    for dt in dts {
        job.update(dt, 3).unwrap();
    }
    for (i, c) in chars.iter().enumerate().step_by(7) {
        let clip = &clips[c.clip];
        let d = clip.duration();
        let policy = if c.looping { TimePolicy::Wrap } else { TimePolicy::Clamp };
        let mut t = policy.apply(c.time, d);
        for dt in dts {
            t = policy.apply(t + c.speed * dt, d);
        }
        assert_eq!(job.characters()[i].time.to_bits(), t.to_bits(), "character {i}'s time");
        // Cached sampling from the rest pose with a fresh cache (the job's has walked
        // forward frame by frame), regrouped.
        let mut pose = sk.rest_pose().clone();
        clip.sample_cached(&mut SamplingCache::new(clip), t, TimePolicy::Clamp, &mut pose).unwrap();
        let soa = SoaPose::from_pose(&pose);
        assert_eq!(pose_bits(&soa), pose_bits(job.pose(i)), "character {i}'s pose");
        // Plain sampling (a separate key search) agrees to rounding.
        let mut plain = sk.rest_pose().clone();
        clip.sample(t, TimePolicy::Clamp, &mut plain).unwrap();
        for (a, b) in plain.locals().iter().zip(pose.locals()) {
            assert!((a.to_matrix() - b.to_matrix()).abs().max() < 1e-5, "character {i} at {t}");
        }
        let mut model = vec![Mat4::zeros(); sk.len()];
        local_to_model(&sk, &soa, &mut model).unwrap();
        assert_eq!(bits(&model), bits(job.model(i)), "character {i}'s model matrices");
        // And close to the Pose path, an independent implementation of the hierarchy.
        let mut by_pose = vec![Mat4::zeros(); sk.len()];
        pose.local_to_model(&sk, &mut by_pose).unwrap();
        for (a, b) in by_pose.iter().zip(job.model(i)) {
            assert!((a - b).abs().max() < 1e-4, "{a} vs {b}");
        }
        let mut pal = vec![Mat4::zeros(); skin.len()];
        palette::skinning_matrices(&model, &skin, &mut pal).unwrap();
        assert_eq!(bits(&pal), bits(job.palette(i)), "character {i}'s palette");
        let mut dq = DqPalette::new();
        dq.update(&model, &skin).unwrap();
        assert_eq!(dq_bits(&dq), dq_bits(job.dual_quat_palette(i).unwrap()), "character {i}'s dual quaternions");
    }
    // Baked clips: the job equals BakedClip::sample, regrouped.
    let baked = [BakedClip::bake(&clips[0], sk.rest_pose(), 24.0).unwrap()];
    let mut job = CrowdJob::new(&sk, &baked);
    job.add(CrowdCharacter { clip: 0, time: 0.1, speed: 1.5, looping: true }).unwrap();
    job.update(0.37, 1).unwrap();
    let mut pose = Pose::identity(sk.len());
    baked[0].sample(0.1 + 1.5 * 0.37, TimePolicy::Wrap, &mut pose).unwrap();
    assert_eq!(pose_bits(&SoaPose::from_pose(&pose)), pose_bits(job.pose(0)));
    // At frame times, between them, and at the end (the last frame pair).
    let d = baked[0].duration();
    for t in [0.0, 0.013, 1.0 / 24.0, 0.5, d - 1e-4, d] {
        job.set(0, CrowdCharacter { clip: 0, time: t, speed: 0.0, looping: false }).unwrap();
        job.run(1).unwrap();
        baked[0].sample(t, TimePolicy::Clamp, &mut pose).unwrap();
        assert_eq!(pose_bits(&SoaPose::from_pose(&pose)), pose_bits(job.pose(0)), "t = {t}");
    }
    assert!(job.palettes().is_empty() && job.dual_quat_palette(0).is_none());
}

#[test]
fn a_spinning_root_puts_the_tip_on_the_circle() {
    // Root spins about z by `t` radians; the tip sits one unit up the root's y axis.
    let sk = Skeleton::new(vec![
        JointDesc::new("root", None, Transform::IDENTITY),
        JointDesc::new("tip", Some(0), Transform::from_translation(Vec3::new(0.0, 1.0, 0.0))),
    ])
    .unwrap();
    let times: Vec<f32> = (0..=40).map(|k| k as f32 * 0.05).collect();
    let rot = times.iter().map(|&t| Quat::from_axis_angle(&Vec3::z_axis(), t).into_inner()).collect();
    let mut jt = JointTracks::new(0);
    jt.rotation = Some(Track::new(Interpolation::Linear, times, rot).unwrap());
    let clips = [Clip::new("spin", vec![jt], vec![]).unwrap()];
    let skin = Skin::from_skeleton(&sk);
    let mut job = CrowdJob::new(&sk, &clips).with_palettes(&skin, PaletteOutput::Matrices).unwrap();
    for k in 0..5 {
        job.add(CrowdCharacter { clip: 0, time: 0.4 * k as f32, speed: 1.0, looping: false }).unwrap();
    }
    job.update(0.05, 2).unwrap();
    for k in 0..5 {
        let t = (0.4 * k as f32 + 0.05).min(2.0);
        let tip = job.model(k)[1];
        assert!((tip[(0, 3)] + t.sin()).abs() < 2e-3 && (tip[(1, 3)] - t.cos()).abs() < 2e-3, "k = {k}: {tip}");
        // Rest is bind here: the tip's palette entry is the root's rotation.
        let p = job.palette(k)[1];
        assert!((p[(0, 0)] - t.cos()).abs() < 2e-3 && (p[(1, 0)] - t.sin()).abs() < 2e-3);
    }
    // A clamped character holds at the end.
    job.update(10.0, 1).unwrap();
    assert_eq!(job.characters()[4].time, 2.0);
}

#[test]
fn bad_input_is_refused_with_the_character_named() {
    let sk = skeleton(8);
    let clips = [clip("a", 8, 1.0, 1, 1)];
    let mut job = CrowdJob::new(&sk, &clips);
    let ok = CrowdCharacter { clip: 0, time: 0.0, speed: 1.0, looping: true };
    job.add(ok).unwrap();
    assert_eq!(
        job.add(CrowdCharacter { clip: 1, ..ok }),
        Err(CrowdJobError::NoClip { character: 1, clip: 1, clips: 1 })
    );
    assert!(matches!(job.add(CrowdCharacter { speed: f32::NAN, ..ok }), Err(CrowdJobError::NotFinite { .. })));
    assert_eq!(job.set(3, ok), Err(CrowdJobError::NoCharacter { character: 3, count: 1 }));
    assert_eq!(job.update(f32::INFINITY, 1), Err(CrowdJobError::NonFiniteStep(f32::INFINITY)));
    assert_eq!(job.characters()[0].time, 0.0, "a refused step changes nothing");
    // A skin of a bigger skeleton.
    let big = skeleton(12);
    let skin = Skin::from_skeleton(&big);
    assert!(matches!(
        CrowdJob::new(&sk, &clips).with_palettes(&skin, PaletteOutput::Matrices),
        Err(CrowdJobError::Skin(_))
    ));
    // A clip that animates joints the skeleton lacks fails for its characters only;
    // the lowest one is named and the others are still written.
    let clips = [clip("fits", 8, 1.0, 1, 1), clip("too big", 12, 1.0, 1, 2)];
    let mut job = CrowdJob::new(&sk, &clips);
    for i in 0..40 {
        job.add(CrowdCharacter { clip: usize::from(i == 23 || i == 31), ..ok }).unwrap();
    }
    for threads in [1, 4] {
        match job.update(0.1, threads) {
            Err(CrowdJobError::Sample { character: 23, source: ClipError::JointOutOfRange { joint: 11, .. } }) => {}
            other => panic!("{other:?}"),
        }
        assert_ne!(job.model(39)[1], Mat4::identity());
    }
    // Switching the character's clip clears the error.
    job.set(23, ok).unwrap();
    job.set(31, ok).unwrap();
    job.update(0.1, 4).unwrap();
}

/// A sampler that writes its time into joint 0's x translation and panics in `(0.5, 0.6)`.
struct Fuse;

impl SoaSampler for Fuse {
    type Context = u32;

    fn new_context(&self) -> u32 {
        0
    }

    fn duration(&self) -> f32 {
        1.0
    }

    fn sample_soa(&self, calls: &mut u32, time: f32, policy: TimePolicy, out: &mut SoaPose) -> Result<f32, ClipError> {
        let time = policy.apply(time, 1.0);
        assert!(!(0.5..0.6).contains(&time), "the fuse burns at {time}");
        *calls += 1;
        out.set(0, &Transform::from_translation(Vec3::new(time, 0.0, 0.0)));
        Ok(time)
    }
}

#[test]
fn a_panicking_sampler_reaches_the_caller_and_the_job_keeps_working() {
    let sk = skeleton(3);
    let clips = [Fuse];
    let mut job = CrowdJob::new(&sk, &clips);
    for i in 0..40 {
        job.add(CrowdCharacter { clip: 0, time: 0.1, speed: 0.0, looping: false }).unwrap();
        assert_eq!(job.characters()[i].time, 0.1);
    }
    // One burning character in the caller's run (0), then one in a worker's (37).
    for burning in [0, 37] {
        job.set(burning, CrowdCharacter { clip: 0, time: 0.55, speed: 0.0, looping: false }).unwrap();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| job.run(4)));
        assert!(r.is_err(), "character {burning}'s panic reaches the caller");
        job.set(burning, CrowdCharacter { clip: 0, time: 0.25, speed: 0.0, looping: false }).unwrap();
        job.run(4).unwrap();
        assert_eq!(job.pose(burning).get(0).unwrap().translation.x, 0.25);
        assert_eq!(job.model(39)[0][(0, 3)], 0.1);
    }
}
