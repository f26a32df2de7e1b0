//! Runtime clips: analytic cases, the smallest-three bound, STEP and CUBICSPLINE
//! conversion within tolerance, and cursor correctness for any time sequence.

use anim_core::clip::runtime::{RuntimeClip, decode_rotation};

use anim_core::offline::{JointRadii, RuntimeClipError};

use anim_core::clip::SoaSampler;
use anim_core::clip::{BakedClip, Clip, ClipError, Interpolation, JointTracks, SamplingCache, TimePolicy, Track};
use anim_core::offline::compile::encode_rotation;
use anim_core::pose::soa::SoaPose;
use anim_core::pose::{JointDesc, Pose, Skeleton};
use anim_math::{Quat, Transform, Vec3};
use nalgebra::Quaternion;

/// Bound on a decoded smallest-three quaternion's distance from the source (see
/// `decode_rotation`), plus float rounding.
const ROTATION_BOUND: f32 = 3.75e-5 + 1e-6;

struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> f32 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 40) as f32) / (1u64 << 24) as f32
    }
}

/// A chain of `n` joints, each one unit above its parent.
fn chain(n: usize) -> Skeleton {
    let joints = (0..n)
        .map(|i| {
            let rest = if i == 0 { Transform::IDENTITY } else { Transform::from_translation(Vec3::new(0.0, 1.0, 0.0)) };
            JointDesc::new(format!("j{i}"), i.checked_sub(1), rest)
        })
        .collect();
    Skeleton::new(joints).unwrap()
}

fn q(axis: Vec3, angle: f32) -> Quaternion<f32> {
    Quat::from_axis_angle(&nalgebra::Unit::new_normalize(axis), angle).into_inner()
}

/// Rotation angle between two unit quaternions, from the chord (accurate for small angles,
/// where `acos` of the dot product is not).
fn angle_between(a: &Quat, b: &Quat) -> f32 {
    let chord = (a.coords - b.coords).norm().min((a.coords + b.coords).norm());
    4.0 * (chord * 0.5).min(1.0).asin()
}

#[test]
fn two_linear_keys_reproduce_keys_and_midpoint_within_quantization() {
    let skeleton = chain(2);
    let mut jt = JointTracks::new(0);
    let (a, b) = (Vec3::new(0.0, 0.0, 0.0), Vec3::new(1.0, 2.0, -1.0));
    jt.translation = Some(Track::new(Interpolation::Linear, vec![0.0, 1.0], vec![a, b]).unwrap());
    jt.rotation =
        Some(Track::new(Interpolation::Linear, vec![0.0, 1.0], vec![q(Vec3::z(), 0.0), q(Vec3::z(), 0.2)]).unwrap());
    let clip = Clip::new("two", vec![jt], vec![]).unwrap();
    let rc = RuntimeClip::compile(&clip, &skeleton, &JointRadii::from_skeleton(&skeleton), 0.01).unwrap();
    // Two keys a track, two tracks a kind (joint 1 holds its rest pose).
    assert_eq!(rc.key_counts(), [4, 4, 4]);
    let mut ctx = rc.new_context();
    let mut pose = SoaPose::identity(2);
    // 16-bit over the range: at most half a step (extent / 65535 / 2) a component.
    let step = 2.0 / 65535.0 * 0.5 + 1e-7;
    for (t, s) in [(0.0f32, 0.0f32), (0.5, 0.5), (1.0, 1.0)] {
        rc.sample_soa(&mut ctx, t, TimePolicy::Clamp, &mut pose).unwrap();
        let got = pose.get(0).unwrap();
        let want = a * (1.0 - s) + b * s;
        assert!((got.translation - want).amax() <= step, "{t}: {} vs {want}", got.translation);
        // nlerp's midpoint of two keys is slerp's.
        let exact = Quat::from_axis_angle(&Vec3::z_axis(), 0.2 * s);
        assert!(angle_between(&got.rotation, &exact) <= 2.0 * ROTATION_BOUND, "{t}");
        assert_eq!(pose.get(1).unwrap().translation, Vec3::new(0.0, 1.0, 0.0));
    }
}

#[test]
fn smallest_three_round_trip_stays_within_the_derived_bound() {
    let mut rng = Lcg(42);
    let mut worst = 0.0f32;
    for i in 0..200_000 {
        let mut v = [0.0f32; 4].map(|_| rng.next() * 2.0 - 1.0);
        // Also exact axes and the 45° ties between two components.
        if i < 4 {
            v = [0.0; 4];
            v[i] = 1.0;
        } else if i < 8 {
            v = [0.0; 4];
            v[i - 4] = 0.5f32.sqrt();
            v[(i - 3) % 4] = -(0.5f32.sqrt());
        }
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        if n < 1e-3 {
            continue;
        }
        let v = v.map(|x| x / n);
        let (largest, code) = encode_rotation(v);
        let d = decode_rotation(largest, code);
        let minus = (0..4).map(|c| (d[c] - v[c]).powi(2)).sum::<f32>().sqrt();
        let plus = (0..4).map(|c| (d[c] + v[c]).powi(2)).sum::<f32>().sqrt();
        worst = worst.max(minus.min(plus));
        assert!(d[largest as usize] >= 0.0);
    }
    assert!(worst <= ROTATION_BOUND, "worst {worst}");
    // The bound is not loose by orders of magnitude.
    assert!(worst > ROTATION_BOUND / 10.0, "worst {worst}");
}

/// A clip with STEP translation, CUBICSPLINE rotation and LINEAR scale on joint 0 of a
/// 3-joint chain (joint 0's radius is 2: its chain reaches two units).
/// Sixteen joints a group: a 40-joint chain has three. Only group 2's translations, group
/// 0's rotations and one two-key scale in group 1 move, so most groups of each channel have
/// no key after time 0 and are read from the clip, not the context: looping playback,
/// backward jumps and random seeks still give the exact clip's pose within the tolerance,
/// every joint, and a fresh context's pose bit for bit.
#[test]
fn groups_without_later_keys_play_like_the_rest() {
    let n = 40;
    let skeleton = chain(n);
    let mut moving = JointTracks::new(35);
    let times: Vec<f32> = (0..=12).map(|k| k as f32 * 0.1).collect();
    let wave = |k: usize| (k as f32 * 0.9).sin();
    moving.translation = Some(
        Track::new(
            Interpolation::Linear,
            times.clone(),
            (0..times.len()).map(|k| Vec3::new(0.3 * wave(k), 1.0, 0.1 * wave(k + 3))).collect(),
        )
        .unwrap(),
    );
    let mut bending = JointTracks::new(3);
    bending.rotation = Some(
        Track::new(
            Interpolation::Linear,
            times.clone(),
            (0..times.len()).map(|k| q(Vec3::z(), 0.8 * wave(k))).collect(),
        )
        .unwrap(),
    );
    let mut growing = JointTracks::new(20);
    growing.scale = Some(
        Track::new(Interpolation::Linear, vec![0.0, 1.2], vec![Vec3::new(1.0, 1.0, 1.0), Vec3::new(1.5, 1.0, 1.0)])
            .unwrap(),
    );
    let clip = Clip::new("groups", vec![moving, bending, growing], vec![]).unwrap();
    let tol = 0.001;
    let rc = RuntimeClip::compile(&clip, &skeleton, &JointRadii::from_skeleton(&skeleton), tol).unwrap();
    let mut ctx = rc.new_context();
    let (mut exact, mut got) = (skeleton.rest_pose().clone(), Pose::identity(n));
    let (mut a, mut b) = (SoaPose::identity(n), SoaPose::identity(n));
    let mut rng = Lcg(4);
    let mut t = 0.0f32;
    for i in 0..2000 {
        t = match i % 4 {
            0 | 1 => TimePolicy::Wrap.apply(t + 1.0 / 60.0, rc.duration()),
            2 if i % 40 == 2 => rng.next() * 1.2,
            2 => t - rng.next() * 0.05,
            _ => t,
        };
        let t = t.clamp(0.0, 1.2);
        clip.sample(t, TimePolicy::Clamp, &mut exact).unwrap();
        rc.sample_pose(&mut ctx, t, TimePolicy::Clamp, &mut got).unwrap();
        for (j, (e, g)) in exact.locals().iter().zip(got.locals()).enumerate() {
            assert!((e.translation - g.translation).norm() <= tol + 1e-5, "step {i}, t {t}, joint {j}");
            assert!(angle_between(&e.rotation, &g.rotation) <= tol + 1e-4, "step {i}, t {t}, joint {j}");
            assert!((e.scale - g.scale).amax() <= tol + 1e-5, "step {i}, t {t}, joint {j}");
        }
        rc.sample_soa(&mut ctx, t, TimePolicy::Clamp, &mut a).unwrap();
        rc.sample_soa(&mut rc.new_context(), t, TimePolicy::Clamp, &mut b).unwrap();
        assert_eq!(a, b, "step {i}, t = {t}");
    }
}

fn mixed_clip() -> Clip {
    let mut jt = JointTracks::new(0);
    jt.translation = Some(
        Track::new(
            Interpolation::Step,
            vec![0.0, 0.3, 0.7, 1.2],
            vec![Vec3::zeros(), Vec3::new(0.5, 0.0, 0.0), Vec3::new(0.5, 0.25, 0.0), Vec3::new(-0.1, 0.0, 0.3)],
        )
        .unwrap(),
    );
    let v = [q(Vec3::x(), 0.0), q(Vec3::x(), 1.2), q(Vec3::new(1.0, 1.0, 0.0), -0.7)];
    let tan = [q(Vec3::y(), 0.4), q(Vec3::z(), -0.3), q(Vec3::x(), 0.2)];
    let mut cubic = Vec::new();
    for k in 0..3 {
        cubic.extend([tan[k].coords.into(), v[k], tan[(k + 1) % 3]]);
    }
    let cubic: Vec<Quaternion<f32>> =
        cubic.into_iter().map(|x: Quaternion<f32>| Quaternion::from(x.coords * 0.5)).collect();
    // Tangent triples: (in, value, out); values must stay unit-ish.
    let mut rot = Vec::new();
    for k in 0..3 {
        rot.extend([cubic[3 * k], v[k], cubic[3 * k + 2]]);
    }
    jt.rotation = Some(Track::new(Interpolation::CubicSpline, vec![0.1, 0.6, 1.0], rot).unwrap());
    jt.scale = Some(
        Track::new(Interpolation::Linear, vec![0.0, 1.2], vec![Vec3::new(1.0, 1.0, 1.0), Vec3::new(2.0, 1.0, 0.5)])
            .unwrap(),
    );
    let mut j2 = JointTracks::new(2);
    j2.rotation = Some(
        Track::new(
            Interpolation::Linear,
            vec![0.0, 0.4, 0.8, 1.2],
            vec![q(Vec3::z(), 0.0), q(Vec3::z(), 2.5), q(Vec3::z(), 0.5), q(Vec3::z(), 0.0)],
        )
        .unwrap(),
    );
    Clip::new("mixed", vec![jt, j2], vec![]).unwrap()
}

#[test]
fn step_and_cubic_sources_convert_within_tolerance() {
    let skeleton = chain(3);
    let clip = mixed_clip();
    let radii = JointRadii::from_skeleton(&skeleton);
    assert_eq!(radii.radius(0), Some(2.0));
    for tol in [0.0001f32, 0.001, 0.01] {
        let rc = RuntimeClip::compile(&clip, &skeleton, &radii, tol).unwrap();
        let mut ctx = rc.new_context();
        let mut exact = skeleton.rest_pose().clone();
        let mut got = Pose::identity(3);
        let mut times: Vec<f32> = (0..=1200).map(|i| i as f32 * 0.001).collect();
        times.extend(clip.key_times());
        times.sort_by(f32::total_cmp);
        for &t in &times {
            clip.sample(t, TimePolicy::Clamp, &mut exact).unwrap();
            rc.sample_pose(&mut ctx, t, TimePolicy::Clamp, &mut got).unwrap();
            let (e, g) = (&exact.locals()[0], &got.locals()[0]);
            // Two moving joints on the chain (0 and 2): half the tolerance each, split over
            // joint 0's three moving channels.
            let budget = tol / 2.0 / 3.0;
            assert!((e.translation - g.translation).norm() <= budget + 1e-6, "{tol} {t}");
            assert!(
                2.0 * angle_between(&e.rotation, &g.rotation) <= budget * 1.01 + 1e-5,
                "{tol} {t} {}",
                2.0 * angle_between(&e.rotation, &g.rotation) / budget
            );
            let rel = (e.scale - g.scale).component_div(&e.scale).amax();
            assert!(2.0 * rel <= budget + 1e-6, "{tol} {t}");
            // Joint 2: a linear rotation over 143° between keys, radius 0.01 (the floor).
            let (e, g) = (&exact.locals()[2], &got.locals()[2]);
            assert!(
                0.01 * angle_between(&e.rotation, &g.rotation) <= tol * 0.5 * 1.01 + 1e-6,
                "{tol} {t} {} {:?} {:?}",
                angle_between(&e.rotation, &g.rotation),
                e.rotation,
                g.rotation
            );
        }
        // The jump of the step track is kept exactly at its time.
        rc.sample_pose(&mut ctx, 0.3, TimePolicy::Clamp, &mut got).unwrap();
        assert!((got.locals()[0].translation.x - 0.5).abs() < 1e-4);
        rc.sample_pose(&mut ctx, 0.2999, TimePolicy::Clamp, &mut got).unwrap();
        assert!(got.locals()[0].translation.x.abs() < 1e-4);
    }
}

#[test]
fn any_time_sequence_matches_a_fresh_context_bit_for_bit() {
    let skeleton = chain(7);
    let clip = mixed_clip();
    let rc = RuntimeClip::compile(&clip, &skeleton, &JointRadii::from_skeleton(&skeleton), 0.0005).unwrap();
    let mut rng = Lcg(9);
    let mut ctx = rc.new_context();
    let (mut a, mut b) = (SoaPose::identity(7), SoaPose::identity(7));
    let mut t = 0.0f32;
    for i in 0..3000 {
        t = match i % 5 {
            0 => rng.next() * 1.4 - 0.1, // random seek, also outside the range
            1 => t - rng.next() * 0.2,   // backwards
            2 => TimePolicy::Wrap.apply(t + 1.0 / 60.0, rc.duration()), // looping playback
            3 => t + rng.next() * 0.5,   // forward jump
            _ => t,                      // the same time again
        };
        rc.sample_soa(&mut ctx, t, TimePolicy::Clamp, &mut a).unwrap();
        let mut fresh = rc.new_context();
        rc.sample_soa(&mut fresh, t, TimePolicy::Clamp, &mut b).unwrap();
        assert_eq!(a, b, "step {i}, t = {t}");
    }
}

#[test]
fn errors_name_what_is_wrong() {
    let skeleton = chain(2);
    let clip = mixed_clip();
    let radii = JointRadii::from_skeleton(&skeleton);
    assert!(matches!(
        RuntimeClip::compile(&clip, &chain(3), &radii, 0.001),
        Err(RuntimeClipError::RadiiMismatch { .. })
    ));
    assert!(matches!(RuntimeClip::compile(&clip, &skeleton, &radii, 0.001), Err(RuntimeClipError::Clip(_))));
    let skeleton = chain(3);
    let radii = JointRadii::from_skeleton(&skeleton);
    for bad in [0.0, -1.0, f32::NAN, f32::INFINITY] {
        assert!(matches!(RuntimeClip::compile(&clip, &skeleton, &radii, bad), Err(RuntimeClipError::Tolerance(_))));
    }
    let rc = RuntimeClip::compile(&clip, &skeleton, &radii, 0.001).unwrap();
    let mut ctx = rc.new_context();
    assert!(matches!(
        rc.sample_soa(&mut ctx, f32::NAN, TimePolicy::Clamp, &mut SoaPose::identity(3)),
        Err(ClipError::NonFiniteTime(_))
    ));
    assert!(matches!(
        rc.sample_soa(&mut ctx, 0.0, TimePolicy::Clamp, &mut SoaPose::identity(2)),
        Err(ClipError::JointCount { expected: 3, got: 2, .. })
    ));
    let other = RuntimeClip::compile(&mixed_clip(), &chain(7), &JointRadii::from_skeleton(&chain(7)), 0.001).unwrap();
    let mut wrong = other.new_context();
    assert!(matches!(
        rc.sample_soa(&mut wrong, 0.0, TimePolicy::Clamp, &mut SoaPose::identity(3)),
        Err(ClipError::CacheMismatch { .. })
    ));
    assert!(rc.sample_pose(&mut ctx, 0.0, TimePolicy::Clamp, &mut Pose::identity(2)).is_err());
}

#[test]
fn byte_size_counts_keys_and_headers() {
    let skeleton = chain(3);
    let rc = RuntimeClip::compile(&mixed_clip(), &skeleton, &JointRadii::from_skeleton(&skeleton), 0.001).unwrap();
    let keys: usize = rc.key_counts().iter().sum();
    let wide: usize = rc.wide_track_counts().iter().sum();
    // 12 bytes a key, 24 bytes of range a translation and scale track, one flag a track,
    // and the decoded start state of the one lane group: 36 floats for translation and
    // scale (times, inverse spans, two values of 3), 44 for rotation.
    let at_least = keys * 12 + 2 * 3 * 24 + 3 * 3 + (2 * 36 + 44) * 4 + rc.name().len();
    assert!(rc.byte_size() >= at_least, "{} < {at_least}", rc.byte_size());
    assert!(wide > 0 || rc.byte_size() == at_least);
}

/// Components below 2⁻⁴⁰ in the source (exporter noise where a component is zero, as in
/// Fox's Walk and Run) sample as exact zeros on every fast path (runtime clip with float
/// tracks, packed exact sampling, baked clip) at keys and between them, so no subnormal
/// float reaches the arithmetic; every other component keeps its value (at the keys:
/// float tracks and exact sampling return the keys; the rotation, normalized, within 1e-7).
#[test]
fn tiny_components_sample_as_zero() {
    let skeleton = chain(2);
    let q = |x: f32, y: f32| Quaternion::new((1.0 - x * x - y * y).sqrt(), x, y, 0.0);
    let mut tracks = JointTracks::new(1);
    let times = vec![0.0, 0.5, 1.0];
    tracks.rotation = Some(
        Track::new(Interpolation::Linear, times.clone(), vec![q(1e-20, 0.3), q(-3e-14, 0.1), q(2e-30, 0.2)]).unwrap(),
    );
    tracks.translation = Some(
        Track::new(
            Interpolation::Linear,
            times.clone(),
            vec![Vec3::new(1e-19, 1.0, 0.5), Vec3::new(-4e-13, 1.2, 0.5), Vec3::new(0.0, 1.1, 0.6)],
        )
        .unwrap(),
    );
    let clip = Clip::new("tiny", vec![tracks], vec![]).unwrap();
    // A tolerance finer than 16 bits can hold: every track is stored as floats.
    let rc = RuntimeClip::compile(&clip, &skeleton, &JointRadii::from_skeleton(&skeleton), 1e-9).unwrap();
    let wide = rc.wide_track_counts();
    assert!(wide[0] >= 1 && wide[1] >= 1, "float tracks, which keep the source's values: {wide:?}");
    let baked = BakedClip::bake(&clip, skeleton.rest_pose(), 30.0).unwrap();
    let mut ctx = rc.new_context();
    let mut cache = SamplingCache::new(&clip);
    let (mut runtime, mut exact, mut bake) =
        (skeleton.rest_pose().clone(), skeleton.rest_pose().clone(), skeleton.rest_pose().clone());
    for t in [0.0, 0.1, 0.25, 0.5, 0.7, 1.0] {
        rc.sample_pose(&mut ctx, t, TimePolicy::Clamp, &mut runtime).unwrap();
        clip.sample_cached(&mut cache, t, TimePolicy::Clamp, &mut exact).unwrap();
        baked.sample(t, TimePolicy::Clamp, &mut bake).unwrap();
        for (what, pose) in [("runtime", &runtime), ("exact", &exact), ("baked", &bake)] {
            let l = &pose.locals()[1];
            assert_eq!((l.rotation.i, l.rotation.k, l.translation.x), (0.0, 0.0, 0.0), "{what} at {t}");
            assert!(l.rotation.j > 0.09 && l.translation.y > 0.99, "{what} at {t}: the other components stay");
        }
        if [0.0, 0.5, 1.0].contains(&t) {
            let k = (2.0 * t) as usize;
            let want_y = clip.joint_tracks()[0].translation.as_ref().unwrap().values()[k].y;
            let want_j = clip.joint_tracks()[0].rotation.as_ref().unwrap().values()[k].j;
            for (what, pose) in [("runtime", &runtime), ("exact", &exact)] {
                let l = &pose.locals()[1];
                assert_eq!(l.translation.y, want_y, "{what} at key {k}");
                assert!((l.rotation.j - want_j).abs() < 1e-7, "{what} at key {k}");
            }
        }
    }
}
