//! `Clip::sample_cached` (the packed playback path: contiguous keys, precomputed segment
//! reciprocals, a forward cursor) against `Track::sample` on every channel (the reference:
//! binary search, a division per segment). They agree exactly at key times and within a few
//! units of rounding between them, over forward playback, backward jumps and random times.

use anim_core::clip::{Clip, Interpolation, JointTracks, SamplingCache, TimePolicy, Track};

use anim_core::pose::Pose;
use anim_math::{Quat, Vec3};
use nalgebra::Quaternion;

use anim_testkit::rng::Rng;

/// Key times starting at `start` with irregular spacing (some very short).
fn times(rng: &mut Rng, n: usize, start: f32) -> Vec<f32> {
    let mut t = start;
    (0..n)
        .map(|_| {
            let now = t;
            t += if rng.next_f32() < 0.1 { 1e-3 } else { rng.range(0.005, 0.1) };
            now
        })
        .collect()
}

fn vec3(rng: &mut Rng, scale: f32) -> Vec3 {
    Vec3::new(rng.range(-scale, scale), rng.range(-scale, scale), rng.range(-scale, scale))
}

/// A rotation walk: neighbouring keys 0–60° apart, sometimes with the sign flipped (so the
/// shortest-path choice matters), sometimes a wide jump (beyond the series' range).
fn rotations(rng: &mut Rng, n: usize) -> Vec<Quaternion<f32>> {
    let mut q = Quat::from_euler_angles(rng.range(-3.0, 3.0), rng.range(-1.5, 1.5), rng.range(-3.0, 3.0));
    (0..n)
        .map(|_| {
            let axis = nalgebra::Unit::new_normalize(vec3(rng, 1.0) + Vec3::new(0.0, 0.0, 1e-3));
            let angle = if rng.next_f32() < 0.1 { rng.range(1.0, 3.0) } else { rng.range(0.0, 1.0) };
            q *= Quat::from_axis_angle(&axis, angle);
            let raw = q.into_inner();
            if rng.next_f32() < 0.3 { -raw } else { raw }
        })
        .collect()
}

/// A clip with every kind of channel: linear translation, rotation and scale (most), step
/// and cubic ones, single-key and all-equal channels, channels starting late and ending
/// early, channels of several joints on one time line, and joints the clip leaves alone.
fn clip(rng: &mut Rng, joints: usize) -> Clip {
    let mut sets = Vec::new();
    let mut last: Option<Vec<f32>> = None;
    for j in 0..joints {
        if j % 7 == 6 {
            continue;
        }
        let mut jt = JointTracks::new(j);
        // A joint's channels share their key times; every third joint also shares the
        // previous joint's (the packed path then follows one time line for both).
        let ts = match (&last, j % 3) {
            (Some(ts), 1) => ts.clone(),
            _ => {
                let n = 2 + (rng.next_f32() * 40.0) as usize;
                let start = if j % 5 == 4 { rng.range(0.05, 0.3) } else { 0.0 };
                times(rng, n, start)
            }
        };
        last = Some(ts.clone());
        let n = ts.len();
        let interp = match j % 11 {
            3 => Interpolation::Step,
            8 => Interpolation::CubicSpline,
            _ => Interpolation::Linear,
        };
        let per = if interp == Interpolation::CubicSpline { 3 } else { 1 };
        let mut tv: Vec<Vec3> = (0..n * per).map(|_| vec3(rng, 2.0)).collect();
        if j % 9 == 2 {
            tv = vec![tv[0]; n * per];
        }
        jt.translation = Some(Track::new(interp, ts.clone(), tv).unwrap());
        let rv = if per == 3 {
            rotations(rng, n * 3)
        } else if j % 13 == 5 {
            vec![rotations(rng, 1)[0]; n]
        } else {
            rotations(rng, n)
        };
        jt.rotation = Some(Track::new(interp, ts.clone(), rv).unwrap());
        if j % 2 == 0 {
            let m = if j % 4 == 0 { 1 } else { n };
            let sv: Vec<Vec3> = (0..m * per).map(|_| Vec3::repeat(1.0) + vec3(rng, 0.5)).collect();
            let st = if m == 1 { vec![ts[0]] } else { ts.clone() };
            jt.scale = Some(Track::new(interp, st, sv).unwrap());
        }
        sets.push(jt);
    }
    Clip::new("mixed", sets, vec![]).unwrap()
}

/// The reference: every channel through `Track::sample` at the time `sample_cached` used.
fn reference(clip: &Clip, t: f32, pose: &mut Pose) {
    for jt in clip.joint_tracks() {
        let l = &mut pose.locals_mut()[jt.joint];
        if let Some(tr) = &jt.translation {
            l.translation = tr.sample(t);
        }
        if let Some(tr) = &jt.rotation {
            l.rotation = tr.sample(t);
        }
        if let Some(tr) = &jt.scale {
            l.scale = tr.sample(t);
        }
    }
}

/// Largest difference seen, relative to the size of the values compared.
#[derive(Default)]
struct Worst {
    vec: f32,
    rot: f32,
}

fn compare(clip: &Clip, got: &Pose, want: &Pose, t: f32, at_key: bool, worst: &mut Worst) {
    for jt in clip.joint_tracks() {
        let (g, w) = (&got.locals()[jt.joint], &want.locals()[jt.joint]);
        if at_key {
            // At one of its own key times a vector channel returns that key, bit for bit.
            for (tr, got) in [(&jt.translation, g.translation), (&jt.scale, g.scale)] {
                if let Some(tr) = tr
                    && let Some(k) = tr.times().iter().position(|&x| x == t)
                {
                    assert_eq!(got, *tr.key_value(k), "joint {} at its key time {t}", jt.joint);
                }
            }
        }
        for (a, b) in [(g.translation, w.translation), (g.scale, w.scale)] {
            let d = (a - b).amax() / b.amax().max(1.0);
            worst.vec = worst.vec.max(d);
        }
        // Unit quaternions: component difference up to the sign (q and −q are one rotation).
        let (a, b) = (g.rotation.into_inner().coords, w.rotation.into_inner().coords);
        let d = (a - b).amax().min((a + b).amax());
        worst.rot = worst.rot.max(d);
        assert!((g.rotation.into_inner().norm() - 1.0).abs() < 1e-6);
    }
}

#[test]
fn cached_playback_matches_per_track_sampling() {
    let mut rng = Rng(2024);
    let mut worst = Worst::default();
    for round in 0..6 {
        let clip = clip(&mut rng, 40);
        let mut cache = SamplingCache::new(&clip);
        let (mut got, mut want) = (Pose::identity(40), Pose::identity(40));
        let d = clip.duration();
        // Forward playback at 60 Hz and at 240 Hz over three loops (one step may cross
        // several keys, or none).
        for rate in [60.0f32, 240.0, 7.0] {
            let mut time = 0.0f32;
            while time < 3.0 * d {
                let t = clip.sample_cached(&mut cache, time, TimePolicy::Wrap, &mut got).unwrap();
                reference(&clip, t, &mut want);
                compare(&clip, &got, &want, t, false, &mut worst);
                time += 1.0 / rate;
            }
        }
        // Random jumps, backwards included, and every key time exactly (both policies).
        for _ in 0..500 {
            let time = rng.range(-0.5, d + 0.5);
            let t = clip.sample_cached(&mut cache, time, TimePolicy::Clamp, &mut got).unwrap();
            reference(&clip, t, &mut want);
            compare(&clip, &got, &want, t, false, &mut worst);
        }
        let keys = clip.key_times();
        for &k in keys.iter().chain(keys.iter().rev()) {
            let t = clip.sample_cached(&mut cache, k, TimePolicy::Clamp, &mut got).unwrap();
            assert_eq!(t, k, "round {round}");
            reference(&clip, t, &mut want);
            compare(&clip, &got, &want, t, true, &mut worst);
        }
    }
    // The only difference between the paths is `(t − t₀)·(1/Δ)` against `(t − t₀)/Δ`:
    // an ulp or two of the fraction.
    assert!(worst.vec <= 4e-7, "vectors: {}", worst.vec);
    assert!(worst.rot <= 2e-7, "rotations: {}", worst.rot);
}

/// Exactly at a key of a linear channel the packed path returns the key itself, and
/// between two equal keys the value does not wobble.
#[test]
fn keys_exact_and_constant_channels_constant() {
    let times = vec![0.0, 1.0 / 3.0, 0.7, 1.1];
    let vals = vec![Vec3::new(0.1, -0.3, 7.0), Vec3::new(1e-3, 3.3, -2.0), Vec3::new(5.0, 5.0, 5.0), Vec3::zeros()];
    let mut a = JointTracks::new(0);
    a.translation = Some(Track::new(Interpolation::Linear, times.clone(), vals.clone()).unwrap());
    let mut b = JointTracks::new(1);
    let c = Vec3::new(0.1, 0.2, 0.3);
    b.translation = Some(Track::new(Interpolation::Linear, times.clone(), vec![c; 4]).unwrap());
    let clip = Clip::new("k", vec![a, b], vec![]).unwrap();
    let mut cache = SamplingCache::new(&clip);
    let mut pose = Pose::identity(2);
    for (t, v) in times.iter().zip(&vals) {
        clip.sample_cached(&mut cache, *t, TimePolicy::Clamp, &mut pose).unwrap();
        assert_eq!(pose.locals()[0].translation, *v, "at {t}");
    }
    for i in 0..100 {
        clip.sample_cached(&mut cache, i as f32 * 0.011, TimePolicy::Clamp, &mut pose).unwrap();
        assert_eq!(pose.locals()[1].translation, c);
    }
}
