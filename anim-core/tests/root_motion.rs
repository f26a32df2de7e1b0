//! Root-motion extraction and per-step deltas: loops, reverse play, yaw, crossfades.

use anim_core::blend::crossfade::CrossFadeController;
use anim_core::clip::playback::{LoopMode, Playback};
use anim_core::clip::{Clip, Interpolation, JointTracks, TimePolicy, Track};
use anim_core::offline::root_motion::{RootMotionSettings, extract};
use anim_core::pose::{JointDesc, Skeleton};
use anim_math::{Quat, Transform, Vec3};
use std::sync::Arc;

fn skeleton() -> Skeleton {
    Skeleton::new(vec![
        JointDesc::new("hips", None, Transform::IDENTITY),
        JointDesc::new("leg", Some(0), Transform::from_translation(Vec3::new(0.0, -1.0, 0.0))),
    ])
    .unwrap()
}

/// The hips travel `travel` over `length` seconds, at height 1 with a 0.1 bob midway.
fn walk(travel: Vec3, length: f32) -> Clip {
    let mut hips = JointTracks::new(0);
    hips.translation = Some(
        Track::new(
            Interpolation::Linear,
            vec![0.0, length / 2.0, length],
            vec![Vec3::new(0.0, 1.0, 0.0), travel / 2.0 + Vec3::new(0.0, 1.1, 0.0), travel + Vec3::new(0.0, 1.0, 0.0)],
        )
        .unwrap(),
    );
    Clip::new("walk", vec![hips], vec![]).unwrap()
}

fn near(a: Vec3, b: Vec3, tol: f32) -> bool {
    (a - b).norm() < tol
}

#[test]
fn pose_is_in_place_and_reconstructs_the_original() {
    let s = skeleton();
    let original = walk(Vec3::new(3.0, 0.0, 1.0), 1.0);
    let in_place = extract(&original, &s, &RootMotionSettings::new(0)).unwrap();
    let motion = in_place.root_motion().unwrap();
    let (mut a, mut b) = (s.rest_pose().clone(), s.rest_pose().clone());
    for i in 0..=10 {
        let t = i as f32 * 0.1;
        original.sample(t, TimePolicy::Clamp, &mut a).unwrap();
        in_place.sample(t, TimePolicy::Clamp, &mut b).unwrap();
        let hips = b.locals()[0];
        // Ground-plane travel removed, the height bob kept.
        assert!(hips.translation.x.abs() < 1e-5 && hips.translation.z.abs() < 1e-5, "t {t}");
        assert!((hips.translation.y - a.locals()[0].translation.y).abs() < 1e-5);
        // Motion frame · in-place root = original root.
        let rebuilt = motion.frame_at(t).combine(&hips);
        assert!(near(rebuilt.translation, a.locals()[0].translation, 1e-5), "t {t}");
    }
}

#[test]
fn n_loops_travel_n_times_the_clip() {
    let s = skeleton();
    let clip = extract(&walk(Vec3::new(0.0, 0.0, 1.5), 0.8), &s, &RootMotionSettings::new(0)).unwrap();
    let motion = clip.root_motion().unwrap();
    for (dt, loops) in [(1.0f64 / 60.0, 5.0f32), (0.37, 7.0), (2.1, 10.5)] {
        let mut p = Playback::new(clip.duration(), LoopMode::Repeat);
        let mut world = Transform::IDENTITY;
        let target = f64::from(loops * 0.8);
        while p.position() < target - 1e-9 {
            let step_dt = dt.min(target - p.position()) as f32;
            let s = p.advance(step_dt);
            world = world.combine(&motion.delta(&p, s.from, s.to));
        }
        assert!(near(world.translation, Vec3::new(0.0, 0.0, 1.5 * loops), 1e-3), "dt {dt}: {:?}", world.translation);
        // Reverse playback over the same span returns to the start.
        p.speed = -1.0;
        while p.position() > 1e-9 {
            let step_dt = dt.min(p.position()) as f32;
            let s = p.advance(step_dt);
            world = world.combine(&motion.delta(&p, s.from, s.to));
        }
        assert!(near(world.translation, Vec3::zeros(), 1e-3), "dt {dt}: {:?}", world.translation);
    }
}

#[test]
fn yaw_turns_the_path_into_a_polygon() {
    // Each cycle walks 1 m along the local x axis and turns 90° about y: four loops close a square.
    let s = skeleton();
    let mut hips = JointTracks::new(0);
    hips.translation =
        Some(Track::new(Interpolation::Linear, vec![0.0, 1.0], vec![Vec3::zeros(), Vec3::new(1.0, 0.0, 0.0)]).unwrap());
    let q0 = Quat::identity().into_inner();
    let q1 = Quat::from_axis_angle(&Vec3::y_axis(), std::f32::consts::FRAC_PI_2).into_inner();
    hips.rotation = Some(Track::new(Interpolation::Linear, vec![0.0, 1.0], vec![q0, q1]).unwrap());
    let clip = extract(&Clip::new("turn", vec![hips], vec![]).unwrap(), &s, &RootMotionSettings::new(0)).unwrap();
    let motion = clip.root_motion().unwrap();
    let mut p = Playback::new(1.0, LoopMode::Repeat);
    let mut world = Transform::IDENTITY;
    let s1 = p.advance(1.0);
    world = world.combine(&motion.delta(&p, s1.from, s1.to));
    assert!(near(world.translation, Vec3::new(1.0, 0.0, 0.0), 1e-5));
    // Three more loops in one large step: back at the start, facing forwards.
    let s3 = p.advance(3.0);
    world = world.combine(&motion.delta(&p, s3.from, s3.to));
    assert!(near(world.translation, Vec3::zeros(), 1e-4), "{:?}", world.translation);
    assert!(world.rotation.angle() < 1e-4);
}

#[test]
fn crossfade_delta_is_the_weighted_blend() {
    let s = skeleton();
    let slow = Arc::new(extract(&walk(Vec3::new(0.0, 0.0, 1.0), 1.0), &s, &RootMotionSettings::new(0)).unwrap());
    let fast = Arc::new(extract(&walk(Vec3::new(2.0, 0.0, 4.0), 1.0), &s, &RootMotionSettings::new(0)).unwrap());
    let mut f = CrossFadeController::new(&s, 2);
    f.play(slow.clone(), TimePolicy::Wrap).unwrap();
    f.update(0.1).unwrap();
    assert!(near(f.root_motion_delta().translation, Vec3::new(0.0, 0.0, 0.1), 1e-5));
    f.fade_to(fast, 0.4, TimePolicy::Wrap).unwrap();
    f.update(0.1).unwrap(); // weight 0.25: 0.75·(0, 0, 0.1) + 0.25·(0.2, 0, 0.4)
    assert!(near(f.root_motion_delta().translation, Vec3::new(0.05, 0.0, 0.175), 1e-5));
    f.update(0.1).unwrap(); // weight 0.5
    assert!(near(f.root_motion_delta().translation, Vec3::new(0.1, 0.0, 0.25), 1e-5));
    // The wrap of the slow clip (at 1.0) inside a fade still gives its steady speed.
    for _ in 0..10 {
        f.update(0.1).unwrap();
    }
    assert!(near(f.root_motion_delta().translation, Vec3::new(0.2, 0.0, 0.4), 1e-5));
}

#[test]
fn errors() {
    let s = skeleton();
    let clip = walk(Vec3::x(), 1.0);
    let bad = RootMotionSettings { joint: 5, ..RootMotionSettings::new(0) };
    assert!(matches!(
        extract(&clip, &s, &bad),
        Err(anim_core::offline::root_motion::RootMotionError::JointOutOfRange { joint: 5, count: 2 })
    ));
    let up = RootMotionSettings { up: Vec3::zeros(), ..RootMotionSettings::new(0) };
    assert!(extract(&clip, &s, &up).is_err());
}
