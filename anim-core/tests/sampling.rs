//! Track and clip sampling against analytic values.

use anim_core::clip::{Clip, Interpolation, JointTracks, SamplingCache, TimePolicy, Track};

use anim_core::pose::Pose;
use anim_math::{Quat, Vec3};
use nalgebra::Quaternion;

#[test]
fn cubic_spline_passes_through_keys_and_reproduces_a_cubic() {
    // x(t) = t³ − 2t + 1 has derivative 3t² − 2: a Hermite spline with those tangents
    // reproduces it exactly between any keys, whatever their spacing.
    let f = |t: f32| t * t * t - 2.0 * t + 1.0;
    let df = |t: f32| 3.0 * t * t - 2.0;
    let times = vec![0.0f32, 0.3, 1.0, 1.2, 2.5];
    let mut values = Vec::new();
    for &t in &times {
        values.extend([df(t), f(t), df(t)]);
    }
    let track = Track::new(Interpolation::CubicSpline, times.clone(), values).unwrap();
    for &t in &times {
        assert_eq!(track.sample(t), f(t));
    }
    let mut t = 0.0;
    while t <= 2.5 {
        assert!((track.sample(t) - f(t)).abs() < 1e-4, "t = {t}: {} vs {}", track.sample(t), f(t));
        t += 0.01;
    }
}

#[test]
fn cubic_rotation_is_renormalized_and_hits_keys() {
    let q0 = Quat::from_axis_angle(&Vec3::y_axis(), 0.0).into_inner();
    let q1 = Quat::from_axis_angle(&Vec3::y_axis(), 1.2).into_inner();
    let zero = Quaternion::new(0.0, 0.0, 0.0, 0.0);
    let track = Track::new(Interpolation::CubicSpline, vec![0.0, 1.0], vec![zero, q0, zero, zero, q1, zero]).unwrap();
    assert!(track.sample(1.0).angle_to(&Quat::new_normalize(q1)) < 1e-6);
    let mid = track.sample(0.5);
    // Zero tangents: p(½) = (q0 + q1)/2, normalized, is the half-way rotation.
    assert!((mid.angle() - 0.6).abs() < 1e-5);
    assert!((mid.into_inner().norm() - 1.0).abs() < 1e-6);
}

#[test]
fn step_holds_until_the_next_key() {
    let track = Track::new(Interpolation::Step, vec![0.5, 1.0], vec![Vec3::x(), Vec3::y()]).unwrap();
    assert_eq!(track.sample(0.0), Vec3::x());
    assert_eq!(track.sample(0.999), Vec3::x());
    assert_eq!(track.sample(1.0), Vec3::y());
}

#[test]
fn forward_playback_with_cache_equals_search_over_many_loops() {
    let times: Vec<f32> = (0..40).map(|i| i as f32 / 30.0).collect();
    let values: Vec<Vec3> = times.iter().map(|t| Vec3::new(t.sin(), t.cos(), *t)).collect();
    let mut jt = JointTracks::new(0);
    jt.translation = Some(Track::new(Interpolation::Linear, times, values).unwrap());
    let clip = Clip::new("loop", vec![jt], vec![]).unwrap();
    let mut cache = SamplingCache::new(&clip);
    let (mut a, mut b) = (Pose::identity(1), Pose::identity(1));
    for frame in 0..1000 {
        let t = frame as f32 / 60.0;
        let ta = clip.sample(t, TimePolicy::Wrap, &mut a).unwrap();
        let tb = clip.sample_cached(&mut cache, t, TimePolicy::Wrap, &mut b).unwrap();
        assert_eq!(ta, tb);
        // The cached path multiplies by a precomputed 1/Δ where the search divides by Δ:
        // equal up to rounding of the fraction (exact at keys, see tests/exact_sampling.rs).
        let d = (a.locals()[0].translation - b.locals()[0].translation).amax();
        assert!(d <= 4e-7 * a.locals()[0].translation.amax().max(1.0), "frame {frame}: {d}");
    }
}
