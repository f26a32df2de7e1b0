//! Crowd playback against the one playback state type (`Playback`, with
//! `AtlasClip::frame_pair` of the time it shows), parallel against serial updates,
//! editing, fades and blends.

use anim_core::clip::playback::{LoopMode, Playback};
use anim_crowd::atlas::AtlasClip;
use anim_crowd::crowd::{CharacterDesc, Crowd, CrowdInstance};
use anim_crowd::crowd::{CrowdError, default_playback};
use anim_math::{Quat, Vec3};

use anim_testkit::rng::Rng;

fn clip(name: &str, first_frame: u32, frame_count: u32, rate: f32, duration: f32, looping: bool) -> AtlasClip {
    AtlasClip {
        name: name.into(),
        first_frame,
        frame_count,
        rate,
        duration,
        looping,
        bounds: (Vec3::new(-1.0, 0.0, -1.0), Vec3::new(1.0, 2.0, 1.0)),
    }
}

/// Looping 1 s at 30 fps (columns 0..31), clamped 1 s at 30 fps (31..62), looping 0.75 s
/// at 20 fps (62..78).
fn clips() -> Vec<AtlasClip> {
    vec![
        clip("walk", 0, 31, 30.0, 1.0, true),
        clip("die", 31, 31, 30.0, 1.0, false),
        clip("run", 62, 16, 20.0, 0.75, true),
    ]
}

fn desc(clip: u32, time: f32, speed: f32) -> CharacterDesc {
    CharacterDesc {
        position: Vec3::new(time, 2.0 * speed, clip as f32),
        rotation: Quat::from_euler_angles(0.1, time, speed),
        scale: 1.0 + time,
        clip,
        time,
        speed,
    }
}

/// The record a character at these states must have.
fn expected(clips: &[AtlasClip], clip_a: u32, time_a: f32, b: Option<(u32, f32, f32)>) -> ([u32; 4], [f32; 3]) {
    let a = clips[clip_a as usize].frame_pair(time_a);
    match b {
        None => ([a.frame0, a.frame1, a.frame0, a.frame1], [a.t, a.t, 0.0]),
        Some((clip_b, time_b, w)) => {
            let b = clips[clip_b as usize].frame_pair(time_b);
            ([a.frame0, a.frame1, b.frame0, b.frame1], [a.t, b.t, w])
        }
    }
}

/// The playback a character added with `desc(c, t, s)` has: its clip's rule, seeked to `t`.
fn playing(clips: &[AtlasClip], c: u32, t: f32, s: f32) -> Playback {
    let mut p = default_playback(&clips[c as usize]).with_speed(s);
    p.seek(f64::from(t));
    p
}

fn check_record(crowd: &Crowd, i: usize, frames: [u32; 4], factors: [f32; 3]) {
    let r = crowd.instances()[i];
    assert_eq!(r.frames, frames, "character {i}");
    assert_eq!(r.factors[..3], factors, "character {i}");
    assert_eq!(r.factors[3], crowd.clip(i).unwrap() as f32, "character {i}");
}

#[test]
fn update_matches_frame_pair_for_every_speed_and_clip() {
    let clips = clips();
    let mut crowd = Crowd::new(&clips);
    let speeds = [-2.5, -1.0, -0.3, -0.0, 0.0, 0.5, 1.0, 1.7, 3.1];
    let mut rng = Rng(7);
    let mut times = Vec::new();
    for c in 0..3u32 {
        for &s in &speeds {
            for _ in 0..12 {
                let t = rng.range(-0.5, 1.5);
                let i = crowd.add(desc(c, t, s)).unwrap();
                let p = playing(&clips, c, t, s);
                assert_eq!(crowd.time(i), Some(p.time()));
                assert_eq!(crowd.playback(i), Some(p));
                times.push((c, p, s));
            }
        }
    }
    // Records are packed from the start.
    for (i, &(c, ref p, _)) in times.iter().enumerate() {
        let (f, k) = expected(&clips, c, p.time(), None);
        check_record(&crowd, i, f, k);
    }
    let steps = [1.0 / 60.0, 1.0 / 30.0, 0.1, 0.37, 2.7, 0.0, -0.05];
    for step in 0..300 {
        let dt = steps[step % steps.len()];
        crowd.update(dt);
        for (i, (c, p, _)) in times.iter_mut().enumerate() {
            p.advance(dt);
            assert_eq!(crowd.time(i), Some(p.time()), "character {i} step {step}");
            assert_eq!(crowd.is_finished(i), p.is_finished(), "character {i} step {step}");
            let (f, k) = expected(&clips, *c, p.time(), None);
            check_record(&crowd, i, f, k);
        }
    }
    // Clamped clips stop at their ends: forward at the last column, backward at the first.
    for (i, &(c, ref p, s)) in times.iter().enumerate() {
        let t = p.time();
        if c == 1 && s > 0.0 {
            assert_eq!(t, 1.0);
            assert_eq!(crowd.instances()[i].frames, [61, 61, 61, 61]);
            assert_eq!(crowd.instances()[i].factors[0], 0.0);
        } else if c == 1 && s < 0.0 {
            assert_eq!(t, 0.0);
            assert_eq!(crowd.instances()[i].frames, [31, 32, 31, 32]);
        }
        if c != 1 {
            assert!((0.0..clips[c as usize].duration).contains(&t));
        }
    }
    // Transforms go into the records untouched.
    for (i, &(c, _, s)) in times.iter().enumerate() {
        let r = crowd.instances()[i];
        let (p, q, scale) = crowd.transform(i).unwrap();
        assert_eq!(r.position_scale, [p.x, p.y, p.z, scale]);
        assert_eq!(r.rotation, [q.i, q.j, q.k, q.w]);
        assert_eq!(p.z, c as f32);
        assert_eq!(p.y, 2.0 * s);
    }
}

#[test]
fn random_times_and_steps_match_frame_pair() {
    let clips = clips();
    let mut rng = Rng(12345);
    let mut crowd = Crowd::with_capacity(&clips, 2000);
    let mut model = Vec::new();
    for _ in 0..2000 {
        let c = rng.next_u32() % 3;
        let t = rng.range(-3.0, 3.0);
        let s = rng.range(-4.0, 4.0);
        crowd.add(desc(c, t, s)).unwrap();
        model.push((c, playing(&clips, c, t, s)));
    }
    for _ in 0..50 {
        let dt = rng.range(-0.2, 0.6);
        crowd.update(dt);
        for (i, (c, p)) in model.iter_mut().enumerate() {
            p.advance(dt);
            let (f, k) = expected(&clips, *c, p.time(), None);
            check_record(&crowd, i, f, k);
        }
    }
}

/// A crowd of `n` characters in every state: clips, speeds, blends, fades under way.
fn mixed_crowd(n: usize) -> Crowd {
    let clips = clips();
    let mut rng = Rng(99);
    let mut crowd = Crowd::with_capacity(&clips, n);
    for i in 0..n {
        let c = rng.next_u32() % 3;
        crowd.add(desc(c, rng.range(0.0, 2.0), rng.range(-2.0, 3.0))).unwrap();
        match rng.next_u32() % 4 {
            0 => {
                crowd.set_blend(i, rng.next_u32() % 3, rng.range(0.0, 1.0), rng.next_f32()).unwrap();
            }
            1 => {
                crowd.set_clip(i, (c + 1) % 3, rng.range(0.05, 1.0)).unwrap();
            }
            _ => {}
        }
    }
    crowd
}

fn bytes(crowd: &Crowd) -> &[u8] {
    bytemuck::cast_slice(crowd.instances())
}

#[test]
fn update_parallel_equals_update_bit_for_bit() {
    for threads in [2, 3] {
        let mut serial = mixed_crowd(10_000);
        let mut parallel = serial.clone();
        let mut fading = 0;
        for step in 0..40 {
            let dt = [1.0 / 60.0, 0.2, 0.013, -0.07][step % 4];
            serial.update(dt);
            parallel.update_parallel(dt, threads);
            assert_eq!(bytes(&serial), bytes(&parallel), "{threads} threads, step {step}");
            for i in 0..serial.len() {
                assert_eq!(serial.time(i).map(f32::to_bits), parallel.time(i).map(f32::to_bits));
                assert_eq!(
                    serial.blend(i).map(|(c, t, w)| (c, t.to_bits(), w.to_bits())),
                    parallel.blend(i).map(|(c, t, w)| (c, t.to_bits(), w.to_bits()))
                );
            }
            fading += (0..serial.len()).filter(|&i| serial.is_fading(i)).count();
        }
        // The fades did run (and end) during the test.
        assert!(fading > 0);
        assert!((0..serial.len()).all(|i| !serial.is_fading(i)));
    }
    // Fewer characters than the threshold, or one thread: the serial path.
    let mut a = mixed_crowd(500);
    let mut b = a.clone();
    a.update(0.1);
    b.update_parallel(0.1, 8);
    assert_eq!(bytes(&a), bytes(&b));
    let mut a = mixed_crowd(5000);
    let mut b = a.clone();
    a.update(0.1);
    b.update_parallel(0.1, 0);
    assert_eq!(bytes(&a), bytes(&b));
}

#[test]
fn remove_swaps_the_last_character_in() {
    let clips = clips();
    let mut crowd = Crowd::new(&clips);
    for i in 0..5 {
        crowd.add(desc(i % 3, 0.1 * i as f32, 0.5 + i as f32)).unwrap();
    }
    crowd.set_blend(4, 1, 0.25, 0.75).unwrap();
    crowd.update(0.1);
    let before: Vec<CrowdInstance> = crowd.instances().to_vec();
    let state = |c: &Crowd, i: usize| (c.clip(i), c.time(i), c.speed(i), c.transform(i), c.blend(i));
    let moved = state(&crowd, 4);
    let kept = [state(&crowd, 0), state(&crowd, 2), state(&crowd, 3)];

    assert_eq!(crowd.remove(1), Ok(Some(4)));
    assert_eq!(crowd.len(), 4);
    assert_eq!(crowd.instances().len(), 4);
    assert_eq!(state(&crowd, 1), moved);
    let mut b = playing(&clips, 1, 0.25, 4.5);
    b.advance(0.1);
    assert_eq!(crowd.blend(1), Some((1, b.time(), 0.75)));
    assert_eq!(crowd.blend_playback(1).map(|p| (p.position(), p.time())), Some((b.position(), b.time())));
    let mut a = crowd.playback(1).unwrap();
    assert_eq!(crowd.instances()[1], before[4]);
    assert_eq!([state(&crowd, 0), state(&crowd, 2), state(&crowd, 3)], kept);
    assert_eq!([crowd.instances()[0], crowd.instances()[2], crowd.instances()[3]], [before[0], before[2], before[3]]);

    // The moved character keeps playing where it was.
    crowd.update(0.1);
    a.advance(0.1);
    assert_eq!(crowd.time(1), Some(a.time()));

    // Removing the last character moves nothing.
    assert_eq!(crowd.remove(3), Ok(None));
    assert_eq!(crowd.len(), 3);
    assert_eq!(crowd.remove(3), Err(CrowdError::NoCharacter { character: 3, len: 3 }));
    while !crowd.is_empty() {
        crowd.remove(0).unwrap();
    }
    assert!(crowd.instances().is_empty());
    crowd.update(0.1);
}

#[test]
fn bad_input_is_refused_and_changes_nothing() {
    let mut crowd = Crowd::new(&clips());
    crowd.add(desc(0, 0.0, 1.0)).unwrap();
    let err = crowd.add(desc(3, 0.0, 1.0)).unwrap_err();
    assert_eq!(err, CrowdError::NoClip { character: 1, clip: 3, clips: 3 });
    assert!(err.to_string().contains("clip 3"));
    let nan_time = CharacterDesc { time: f32::NAN, ..desc(0, 0.0, 1.0) };
    assert_eq!(crowd.add(nan_time), Err(CrowdError::NonFinite { character: 1, what: "time" }));
    let inf_speed = CharacterDesc { speed: f32::INFINITY, ..desc(0, 0.0, 1.0) };
    assert_eq!(crowd.add(inf_speed), Err(CrowdError::NonFinite { character: 1, what: "speed" }));
    let nan_pos = CharacterDesc { position: Vec3::new(0.0, f32::NAN, 0.0), ..desc(0, 0.0, 1.0) };
    assert_eq!(crowd.add(nan_pos), Err(CrowdError::NonFinite { character: 1, what: "position" }));
    let nan_scale = CharacterDesc { scale: f32::NAN, ..desc(0, 0.0, 1.0) };
    assert!(crowd.add(nan_scale).is_err());
    assert_eq!(crowd.len(), 1);
    assert_eq!(crowd.instances().len(), 1);

    assert_eq!(crowd.set_clip(0, 5, 0.1), Err(CrowdError::NoClip { character: 0, clip: 5, clips: 3 }));
    assert_eq!(crowd.set_clip(1, 1, 0.1), Err(CrowdError::NoCharacter { character: 1, len: 1 }));
    assert!(matches!(crowd.set_clip(0, 1, -1.0), Err(CrowdError::BadFade { character: 0, .. })));
    assert!(matches!(crowd.set_clip(0, 1, f32::NAN), Err(CrowdError::BadFade { .. })));
    assert!(matches!(crowd.set_blend(0, 1, 0.0, 1.5), Err(CrowdError::BadWeight { character: 0, .. })));
    assert!(matches!(crowd.set_blend(0, 1, 0.0, f32::NAN), Err(CrowdError::BadWeight { .. })));
    assert!(crowd.set_blend(0, 1, f32::INFINITY, 0.5).is_err());
    assert!(crowd.set_blend(0, 7, 0.0, 0.5).is_err());
    assert!(crowd.set_speed(0, f32::NAN).is_err());
    assert!(crowd.set_speed(2, 1.0).is_err());
    assert!(crowd.set_time(0, f32::NEG_INFINITY).is_err());
    assert!(crowd.set_transform(0, Vec3::zeros(), Quat::identity(), f32::INFINITY).is_err());
    assert_eq!(crowd.clip(0), Some(0));
    assert_eq!(crowd.speed(0), Some(1.0));
    assert_eq!(crowd.blend(0), None);
    assert_eq!(crowd.clip(1), None);
    assert_eq!(crowd.time(1), None);
    // A non-finite dt counts as 0.
    let before = crowd.instances().to_vec();
    crowd.update(f32::NAN);
    assert_eq!(crowd.instances(), &before[..]);
}

#[test]
fn crossfade_weight_falls_linearly_then_b_clears() {
    let clips = clips();
    let mut crowd = Crowd::new(&clips);
    crowd.add(desc(1, 0.0, 1.0)).unwrap();
    crowd.add(desc(0, 0.2, 1.0)).unwrap();
    // Already playing: nothing changes.
    assert_eq!(crowd.set_clip(1, 0, 0.5), Ok(false));
    assert_eq!(crowd.blend(1), None);

    assert_eq!(crowd.set_clip(1, 2, 0.5), Ok(true));
    assert_eq!(crowd.clip(1), Some(2));
    assert_eq!(crowd.time(1), Some(0.0));
    assert_eq!(crowd.blend(1), Some((0, 0.2, 1.0)));
    assert!(crowd.is_fading(1));
    let (f, k) = expected(&clips, 2, 0.0, Some((0, 0.2, 1.0)));
    check_record(&crowd, 1, f, k);

    let dt = 0.1;
    let (mut pa, mut pb) = (playing(&clips, 2, 0.0, 1.0), playing(&clips, 0, 0.2, 1.0));
    let (mut ta, mut tb);
    for step in 1..=4 {
        crowd.update(dt);
        pa.advance(dt);
        pb.advance(dt);
        (ta, tb) = (pa.time(), pb.time());
        let (c, t, w) = crowd.blend(1).expect("still fading");
        assert_eq!((c, t), (0, tb));
        assert!((w - (1.0 - step as f32 * 0.2)).abs() < 1e-5, "step {step}: weight {w}");
        let (f, k) = expected(&clips, 2, ta, Some((0, tb, w)));
        check_record(&crowd, 1, f, k);
        // The other character is untouched by the fade.
        assert_eq!(crowd.blend(0), None);
    }
    // The fifth step reaches 0: B is gone and the record shows A twice.
    crowd.update(dt);
    pa.advance(dt);
    ta = pa.time();
    assert_eq!(crowd.blend(1), None);
    assert!(!crowd.is_fading(1));
    let r = crowd.instances()[1];
    assert_eq!(r.frames[2..], r.frames[..2]);
    assert_eq!(r.factors[1], r.factors[0]);
    assert_eq!(r.factors[2], 0.0);
    let (f, k) = expected(&clips, 2, ta, None);
    check_record(&crowd, 1, f, k);
    crowd.update(dt);
    assert_eq!(crowd.blend(1), None);

    // A fade of 0 switches at once and leaves no B.
    crowd.set_blend(0, 2, 0.3, 0.5).unwrap();
    assert_eq!(crowd.set_clip(0, 0, 0.0), Ok(true));
    assert_eq!(crowd.blend(0), None);
    assert_eq!((crowd.clip(0), crowd.time(0)), (Some(0), Some(0.0)));
    let (f, k) = expected(&clips, 0, 0.0, None);
    check_record(&crowd, 0, f, k);
}

#[test]
fn steady_blend_keeps_its_weight() {
    let clips = clips();
    let mut crowd = Crowd::new(&clips);
    crowd.add(desc(0, 0.5, 0.8)).unwrap();
    crowd.set_blend(0, 1, 0.3, 0.4).unwrap();
    assert!(!crowd.is_fading(0));
    let (mut pa, mut pb) = (playing(&clips, 0, 0.5, 0.8), playing(&clips, 1, 0.3, 0.8));
    let mut tb = 0.0;
    for _ in 0..40 {
        crowd.update(0.05);
        pa.advance(0.05);
        pb.advance(0.05);
        let ta = pa.time();
        tb = pb.time();
        assert_eq!(crowd.blend(0), Some((1, tb, 0.4)));
        let (f, k) = expected(&clips, 0, ta, Some((1, tb, 0.4)));
        check_record(&crowd, 0, f, k);
    }
    // The clamped B has stopped at its end; the looping A goes on.
    assert_eq!(tb, 1.0);
    assert_eq!(crowd.instances()[0].frames[2..], [61, 61]);
    // set_speed drives both slots; the once-played B has finished and stays at its end.
    assert!(crowd.blend_playback(0).unwrap().is_finished());
    crowd.set_speed(0, -1.0).unwrap();
    crowd.update(0.1);
    assert_eq!(crowd.blend(0).map(|b| b.1), Some(1.0));
    assert_eq!(crowd.playback(0).unwrap().speed, -1.0);
    crowd.clear_blend(0).unwrap();
    assert_eq!(crowd.blend(0), None);
    assert_eq!(crowd.instances()[0].factors[2], 0.0);
}

#[test]
fn records_are_64_bytes_each_and_follow_edits() {
    let clips = clips();
    let mut crowd = Crowd::new(&clips);
    assert!(crowd.is_empty());
    assert_eq!(crowd.clips(), &clips[..]);
    for i in 0..37 {
        crowd.add(desc(i % 3, 0.0, 1.0)).unwrap();
    }
    crowd.update(1.0 / 60.0);
    assert_eq!(std::mem::size_of::<CrowdInstance>(), 64);
    assert_eq!(crowd.instances().len(), 37);
    assert_eq!(bytes(&crowd).len(), 64 * 37);

    let q = Quat::from_euler_angles(0.0, 1.0, 0.0);
    crowd.set_transform(5, Vec3::new(1.0, 2.0, 3.0), q, 2.5).unwrap();
    let r = crowd.instances()[5];
    assert_eq!(r.position_scale, [1.0, 2.0, 3.0, 2.5]);
    assert_eq!(r.rotation, [q.i, q.j, q.k, q.w]);
    crowd.set_time(5, 1.25).unwrap();
    let p = playing(&clips, 2, 1.25, 1.0);
    assert_eq!(crowd.time(5), Some(p.time()));
    assert!((p.time() - 0.5).abs() < 1e-6);
    let (f, k) = expected(&clips, 2, crowd.time(5).unwrap(), None);
    check_record(&crowd, 5, f, k);
}

#[test]
fn a_new_fade_replaces_the_one_under_way() {
    let clips = clips();
    let mut crowd = Crowd::new(&clips);
    crowd.add(desc(0, 0.1, 1.0)).unwrap();
    crowd.set_clip(0, 1, 1.0).unwrap();
    crowd.update(0.25);
    let mut pa = playing(&clips, 1, 0.0, 1.0);
    pa.advance(0.25);
    assert_eq!(crowd.time(0), Some(pa.time()));
    let (_, _, w) = crowd.blend(0).unwrap();
    assert!((w - 0.75).abs() < 1e-6);
    // Running time backwards runs the fade backwards too, up to weight 1.
    crowd.update(-0.5);
    assert_eq!(crowd.blend(0).map(|b| b.2), Some(1.0));
    crowd.update(0.25);
    // Clip 1 plays once: running back past its start finished it there.
    pa.advance(-0.5);
    pa.advance(0.25);
    let a_time = pa.time();
    assert_eq!(a_time, 0.0);
    assert!(crowd.is_finished(0));
    assert_eq!(crowd.time(0), Some(a_time));
    // Fading to a third clip: the playing clip (1) becomes B at full weight; clip 0 is gone.
    assert_eq!(crowd.set_clip(0, 2, 0.5), Ok(true));
    assert_eq!(crowd.blend(0), Some((1, a_time, 1.0)));
    assert_eq!(crowd.clip(0), Some(2));
    let (f, k) = expected(&clips, 2, 0.0, Some((1, a_time, 1.0)));
    check_record(&crowd, 0, f, k);
    // Fading back to the clip in B is a fade like any other.
    assert_eq!(crowd.set_clip(0, 1, 0.5), Ok(true));
    assert_eq!(crowd.blend(0), Some((2, 0.0, 1.0)));
}

#[test]
fn update_parallel_splits_any_length() {
    for (n, threads) in [(4096, 3), (4097, 3), (5003, 4), (10_000, 7), (20_001, 64)] {
        let mut serial = mixed_crowd(n);
        let mut parallel = serial.clone();
        for step in 0..5 {
            let dt = 0.05 * (step as f32 + 1.0);
            serial.update(dt);
            parallel.update_parallel(dt, threads);
            assert_eq!(bytes(&serial), bytes(&parallel), "{n} characters, {threads} threads");
        }
    }
}

#[test]
fn steps_landing_on_clip_ends_and_far_beyond_match_playback() {
    // Steps that land exactly on 0, ±d and 2d, one ulp either side, and many durations
    // away (the exact fallback), for looping and clamped clips.
    let clips = clips();
    let mut crowd = Crowd::new(&clips);
    let mut model = Vec::new();
    for (c, clip) in clips.iter().enumerate() {
        let d = clip.duration;
        for target in [0.0f32, d, -d, 2.0 * d, -2.0 * d, 7.3 * d, -9.1 * d, 1e30, -1e30] {
            for t in [target, target.next_up(), target.next_down()] {
                // Start at 0.5·d and step by (t − 0.5·d) with dt = 1: speed carries the step.
                let start = 0.5 * d;
                let speed = t - start;
                let i = crowd.add(desc(c as u32, start, speed)).unwrap();
                model.push((c as u32, playing(&clips, c as u32, start, speed), i));
            }
        }
    }
    for step in 0..4 {
        let dt = [1.0, 1.0, -0.5, 0.25][step];
        crowd.update(dt);
        for (c, p, i) in model.iter_mut() {
            p.advance(dt);
            assert_eq!(crowd.time(*i), Some(p.time()), "character {i} step {step}");
            let (f, k) = expected(&clips, *c, p.time(), None);
            check_record(&crowd, *i, f, k);
        }
    }
}

#[test]
fn removals_and_late_blends_keep_serial_and_parallel_equal() {
    let mut serial = mixed_crowd(12_000);
    let mut rng = Rng(4242);
    for step in 0..12 {
        // Remove some characters (moving others and their blends), blend and fade some
        // of low indices (after those of high ones), then update both ways.
        for _ in 0..50 {
            let i = rng.next_u32() as usize % serial.len();
            serial.remove(i).unwrap();
        }
        for _ in 0..50 {
            let i = rng.next_u32() as usize % serial.len();
            match rng.next_u32() % 3 {
                0 => serial.set_blend(i, rng.next_u32() % 3, rng.next_f32(), rng.next_f32()).unwrap(),
                1 => drop(serial.set_clip(i, rng.next_u32() % 3, rng.range(0.05, 0.3)).unwrap()),
                _ => serial.clear_blend(i).unwrap(),
            }
        }
        let mut parallel = serial.clone();
        let dt = [0.1, 1.0 / 60.0, 0.07][step % 3];
        serial.update(dt);
        parallel.update_parallel(dt, 3);
        assert_eq!(bytes(&serial), bytes(&parallel), "step {step}");
        for i in 0..serial.len() {
            assert_eq!(serial.blend(i).map(|b| b.0), parallel.blend(i).map(|b| b.0));
            assert_eq!(serial.is_fading(i), parallel.is_fading(i));
            // Every record shows its character's state.
            let b = serial.blend(i);
            let r = serial.instances()[i];
            assert_eq!(r.factors[3], serial.clip(i).unwrap() as f32);
            match b {
                None => assert_eq!(([r.frames[2], r.frames[3]], r.factors[2]), ([r.frames[0], r.frames[1]], 0.0)),
                Some((c, t, w)) => {
                    let p = serial.clips()[c as usize].frame_pair(t);
                    assert_eq!((r.frames[2], r.frames[3], r.factors[1], r.factors[2]), (p.frame0, p.frame1, p.t, w));
                }
            }
        }
    }
}

/// Hand-built clips with a negative or NaN duration, or columns near `u32::MAX`, give times
/// and columns, never a panic.
#[test]
fn hand_built_nonsense_clips_do_not_panic() {
    use anim_crowd::atlas::AtlasClip;
    use anim_math::Vec3;
    let clip = |duration: f32, looping: bool, first_frame: u32| AtlasClip {
        name: "odd".into(),
        first_frame,
        frame_count: 4,
        rate: 3.0,
        duration,
        looping,
        bounds: (Vec3::zeros(), Vec3::zeros()),
    };
    for c in [clip(-1.0, false, 0), clip(f32::NAN, false, 0), clip(-1.0, true, 0), clip(1.0, false, u32::MAX - 1)] {
        assert!(c.advance(0.5, 0.25).is_finite());
        let _ = c.frame_pair(0.7);
        let mut crowd = anim_crowd::crowd::Crowd::new(std::slice::from_ref(&c));
        let i = crowd
            .add(anim_crowd::crowd::CharacterDesc {
                position: Vec3::zeros(),
                rotation: anim_math::Quat::identity(),
                scale: 1.0,
                clip: 0,
                time: 0.3,
                speed: 1.0,
            })
            .unwrap();
        crowd.update(0.1);
        assert!(crowd.time(i).unwrap().is_finite());
    }
    assert_eq!(clip(-1.0, false, 0).advance(0.5, 0.0), 0.0);
}

/// Every playback setting reaches the crowd: ping-pong, loop counts, clamping or
/// rewinding when finished, negative speeds, finished playbacks; for clip A (set at add
/// or later) and for B (a fade carries A's playback into B). Each character's columns and
/// factors are `frame_pair` of what the same `Playback` shows, step after step.
#[test]
fn every_playback_setting_matches_playback_and_frame_pair() {
    let clips = clips();
    let mut rng = Rng(2718);
    let mut crowd = Crowd::new(&clips);
    // Per character: clip A and its playback, clip B and its playback.
    type Slots = (u32, Playback, Option<(u32, Playback)>);
    let mut model: Vec<Slots> = Vec::new();
    for i in 0..600 {
        let c = rng.next_u32() % 3;
        let mode = if i % 2 == 0 { LoopMode::PingPong } else { LoopMode::Repeat };
        let reps = [None, Some(0), Some(1), Some(2), Some(5)][(i / 2) % 5];
        let mut p = Playback::new(clips[c as usize].duration, mode)
            .with_repetitions(reps)
            .with_speed(rng.range(-3.0, 3.0))
            .with_clamp_when_finished(i % 3 != 0);
        p.seek(f64::from(rng.range(-2.0, 4.0)));
        if i % 4 == 0 {
            crowd.add_with_playback(desc(c, 0.0, 1.0), &p).unwrap();
        } else {
            crowd.add(desc(c, 0.3, 0.2)).unwrap();
            crowd.set_playback(i, &p).unwrap();
        }
        assert_eq!(crowd.playback(i), Some(p));
        model.push((c, p, None));
    }
    let mut pending_fades = vec![];
    for step in 0..120 {
        let dt = [1.0 / 60.0, 0.21, -0.13, 0.9, 0.0, 2.6][step % 6];
        crowd.update(dt);
        for (i, (c, p, b)) in model.iter_mut().enumerate() {
            p.advance(dt);
            let b = b.as_mut().map(|(cb, pb)| {
                pb.advance(dt);
                (*cb, pb.time())
            });
            assert_eq!(crowd.is_finished(i), p.is_finished(), "character {i} step {step}");
            assert_eq!(crowd.time(i), Some(p.time()), "character {i} step {step}");
            let r = crowd.instances()[i];
            let a = clips[*c as usize].frame_pair(p.time());
            assert_eq!(
                (r.frames[0], r.frames[1], r.factors[0]),
                (a.frame0, a.frame1, a.t),
                "character {i} step {step}"
            );
            if let Some((cb, tb)) = b {
                let fb = clips[cb as usize].frame_pair(tb);
                assert_eq!(
                    (r.frames[2], r.frames[3], r.factors[1]),
                    (fb.frame0, fb.frame1, fb.t),
                    "B of {i} step {step}"
                );
            }
        }
        if step == 30 {
            // Fade a third of them to another clip over a long time: their playback moves to B.
            for i in (1..model.len()).step_by(3) {
                let (c, p, _) = model[i];
                let next = (c + 1) % 3;
                assert_eq!(crowd.set_clip(i, next, 1000.0), Ok(true));
                let b = crowd.blend_playback(i).unwrap();
                assert_eq!(
                    (b.position(), b.is_finished(), b.speed, b.mode),
                    (p.position(), p.is_finished(), p.speed, p.mode)
                );
                assert_eq!(
                    (b.repetitions, b.clamp_when_finished, b.time()),
                    (p.repetitions, p.clamp_when_finished, p.time())
                );
                let np = default_playback(&clips[next as usize]).with_speed(p.speed);
                model[i] = (next, np, Some((c, p)));
                pending_fades.push(i);
            }
        }
    }
    // Some finished, some not, and the finished non-clamping ones show their start.
    let finished = model.iter().filter(|m| m.1.is_finished()).count();
    assert!(finished > 50 && finished < model.len() - 50, "{finished} finished");
    assert!(model.iter().any(|m| m.1.is_finished() && !m.1.clamp_when_finished && m.1.time() == 0.0));
}

/// The crowd's worker pool is reused across calls with more, fewer and again more
/// threads (workers without a run this call stay parked), by clones (which start their
/// own) and after removals shrink the crowd below the threshold and it grows back.
#[test]
fn worker_pool_reuse_keeps_parallel_equal_to_serial() {
    let mut serial = mixed_crowd(9000);
    let mut parallel = serial.clone();
    for (step, threads) in [4, 2, 8, 3, 1, 5].into_iter().enumerate() {
        let dt = 0.03 * (step as f32 + 1.0);
        serial.update(dt);
        parallel.update_parallel(dt, threads);
        assert_eq!(bytes(&serial), bytes(&parallel), "step {step}, {threads} threads");
        if step == 2 {
            let mut copy = parallel.clone();
            let mut copy_serial = serial.clone();
            copy.update_parallel(0.1, 3);
            copy_serial.update(0.1);
            assert_eq!(bytes(&copy), bytes(&copy_serial));
        }
    }
    for _ in 0..6000 {
        serial.remove(0).unwrap();
        parallel.remove(0).unwrap();
    }
    serial.update(0.1);
    parallel.update_parallel(0.1, 4);
    assert_eq!(bytes(&serial), bytes(&parallel));
}
#[test]
fn crowd_columns_come_from_a_playback() {
    let mut p = Playback::new(2.0, LoopMode::PingPong).with_speed(-0.5);
    p.seek(2.5); // second cycle, backwards: time 2 - 0.5
    let d = anim_crowd::crowd::CharacterDesc {
        position: Vec3::zeros(),
        rotation: anim_math::Quat::identity(),
        scale: 1.0,
        clip: 0,
        time: 0.0,
        speed: 1.0,
    }
    .with_playback(&p);
    assert!((d.time - 1.5).abs() < 1e-5);
    assert_eq!(d.speed, -0.5);
}
