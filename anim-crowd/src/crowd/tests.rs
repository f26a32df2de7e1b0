//! Unit tests of the crowd's column arithmetic and update loops.

use super::lanes::*;
use super::*;

use anim_testkit::rng::Rng;

fn clip(first_frame: u32, frame_count: u32, rate: f32, duration: f32, looping: bool) -> AtlasClip {
    AtlasClip {
        name: String::new(),
        first_frame,
        frame_count,
        rate,
        duration,
        looping,
        bounds: (Vec3::zeros(), Vec3::zeros()),
    }
}

/// Clips of every kind the fast paths treat apart, odd durations and rates included.
fn clips() -> Vec<AtlasClip> {
    vec![
        clip(0, 31, 30.0, 1.0, true),
        clip(31, 31, 30.0, 1.0, false),
        clip(62, 16, 20.0, 0.75, true),
        clip(78, 7, 9.1, 0.659_341_1, true),
        clip(85, 1, 30.0, 0.0, false),
        clip(86, 1, 30.0, 0.0, true),
        clip(87, 200, 123.456, 1.6119, false),
        clip(5, 3, f32::INFINITY, 0.1, true),
    ]
}

#[test]
fn fast_wrap_and_columns_equal_advance_and_frame_pair() {
    let clips = clips();
    let mut rng = Rng(31);
    for c in &clips {
        let p = ClipParams::new(c);
        let d = c.duration;
        // The times a playback shows: `[0, d]`.
        let mut times = vec![0.0, -0.0, d, d * 0.5, 0.0f32.next_up(), d.next_down(), d.next_down().next_down()];
        times.extend((0..20_000).map(|_| rng.range(0.0, 1.0) * d));
        times.retain(|&t| (0.0..=d).contains(&t));
        for &t in &times {
            let want = c.advance(t, 0.0);
            let (got, slow) = wrap_shown(t, p.duration, p.span);
            if !slow {
                assert_eq!(got, want, "{c:?} at {t}");
                let a = c.frame_pair(got);
                assert_eq!(
                    frames(got, p.rate, p.first, c.frame_count.saturating_sub(1)),
                    (a.frame0, a.frame1, a.t),
                    "{c:?} at {t}"
                );
                assert_eq!(frames_fast(got, p.rate, p.first, p.cap), (a.frame0, a.frame1, a.t), "{c:?} at {t}");
            }
            let a = c.frame_pair(want);
            assert_eq!(
                frames(want, p.rate, p.first, c.frame_count.saturating_sub(1)),
                (a.frame0, a.frame1, a.t),
                "{c:?} at {t}"
            );
        }
    }
}

fn mixed(n: usize) -> Crowd {
    let clips = clips();
    let mut rng = Rng(5);
    let mut crowd = Crowd::new(&clips);
    for i in 0..n {
        let c = rng.next_u32() % clips.len() as u32;
        let desc = CharacterDesc {
            position: Vec3::new(i as f32, 0.0, 0.0),
            rotation: Quat::identity(),
            scale: 1.0,
            clip: c,
            time: rng.range(-2.0, 2.0),
            speed: rng.range(-30.0, 30.0),
        };
        crowd.add(desc).unwrap();
        // Every playback kind: ping-pong, loop counts (0 included), rewinding ends,
        // finished ones, starts across several cycles.
        if rng.next_u32().is_multiple_of(2) {
            let mode = if rng.next_u32().is_multiple_of(2) { LoopMode::PingPong } else { LoopMode::Repeat };
            let reps = [None, Some(0), Some(1), Some(3)][rng.next_u32() as usize % 4];
            let mut p = Playback::new(clips[c as usize].duration, mode)
                .with_repetitions(reps)
                .with_speed(rng.range(-30.0, 30.0))
                .with_clamp_when_finished(rng.next_u32().is_multiple_of(2));
            p.seek(f64::from(rng.range(-3.0, 6.0)));
            if rng.next_u32().is_multiple_of(8) {
                p.advance(100.0);
            }
            crowd.set_playback(i, &p).unwrap();
        }
        match rng.next_u32() % 4 {
            0 => crowd.set_blend(i, rng.next_u32() % 8, rng.range(0.0, 1.0), rng.range(0.0, 1.0)).unwrap(),
            1 => drop(crowd.set_clip(i, (c + 1) % 8, rng.range(0.01, 0.5)).unwrap()),
            _ => {}
        }
    }
    crowd
}

/// The special list follows `set_playback` (plain ↔ special), removals (swap-remove
/// fixups) and finishing (held records): every character's playback and record equal
/// a `Playback` model's after each update.
#[test]
fn special_list_follows_edits_and_matches_playback() {
    let clips = clips();
    let mut crowd = Crowd::new(&clips);
    let mut model: Vec<(u32, Playback)> = Vec::new();
    let mut rng = Rng(77);
    let playback_of = |rng: &mut Rng, d: f32| {
        let mode = if rng.next_u32().is_multiple_of(2) { LoopMode::Repeat } else { LoopMode::PingPong };
        let reps = [None, Some(0), Some(1), Some(3)][rng.next_u32() as usize % 4];
        let mut p = Playback::new(d, mode).with_speed(rng.range(-2.0, 2.0)).with_repetitions(reps);
        p.clamp_when_finished = !rng.next_u32().is_multiple_of(3);
        p.seek(f64::from(rng.range(-1.0, 3.0)));
        p
    };
    for i in 0..400u32 {
        let c = i % 4;
        let desc = CharacterDesc {
            position: Vec3::zeros(),
            rotation: Quat::identity(),
            scale: 1.0,
            clip: c,
            time: rng.range(0.0, 1.0),
            speed: rng.range(-1.0, 2.0),
        };
        let d = crowd.params[c as usize].duration;
        if i % 3 == 0 {
            let p = playback_of(&mut rng, d);
            crowd.add_with_playback(desc, &p).unwrap();
            model.push((c, p));
        } else {
            crowd.add(desc).unwrap();
            model.push((c, crowd.playback(i as usize).unwrap()));
        }
    }
    for step in 0..40 {
        for _ in 0..5 {
            let i = rng.next_u32() as usize % crowd.len();
            let d = crowd.params[model[i].0 as usize].duration;
            let p = if rng.next_u32().is_multiple_of(2) {
                playback_of(&mut rng, d)
            } else {
                Playback::new(d, LoopMode::Repeat).with_speed(rng.range(-1.0, 2.0))
            };
            crowd.set_playback(i, &p).unwrap();
            model[i].1 = p;
        }
        for _ in 0..3 {
            let i = rng.next_u32() as usize % crowd.len();
            crowd.remove(i).unwrap();
            model.swap_remove(i);
        }
        let dt = [1.0 / 60.0, 0.3, -0.2, 1.7][step % 4];
        crowd.update(dt);
        for (i, (c, p)) in model.iter_mut().enumerate() {
            p.advance(dt);
            let got = crowd.playback(i).unwrap();
            assert_eq!(got.cycle_local(), p.cycle_local(), "character {i} step {step}");
            assert_eq!(got.is_finished(), p.is_finished(), "character {i} step {step}");
            assert_eq!(got.mode, p.mode);
            assert_eq!(got.clamp_when_finished, p.clamp_when_finished);
            let a = clips[*c as usize].frame_pair(p.time());
            let r = crowd.instances[i];
            assert_eq!([r.frames[0], r.frames[1]], [a.frame0, a.frame1], "character {i} step {step}");
            assert_eq!(r.factors[0], a.t, "character {i} step {step}");
        }
        for (slot, s) in crowd.specials.iter().enumerate() {
            assert_eq!(crowd.special_of[s.character as usize], slot as u32);
        }
    }
    assert!(crowd.specials.len() > 50 && crowd.specials.len() < crowd.len() - 50);
    assert!(crowd.specials.iter().any(|s| s.held.is_some()));
}

#[test]
fn avx2_loop_equals_baseline_loop_bit_for_bit() {
    if !anim_testkit::kernels::require("avx2") {
        return;
    }
    let mut a = mixed(3000);
    let mut b = a.clone();
    for step in 0..30 {
        let dt = [1.0 / 60.0, 0.3, -0.02, 2.5][step % 4];
        let (lanes, clips, params) = a.lanes();
        let ended_a = lanes.run(clips, params, dt);
        a.drop_ended(ended_a);
        let (lanes, clips, params) = b.lanes();
        // SAFETY: `require` checked that this CPU has AVX2 and FMA.
        #[cfg(target_arch = "x86_64")]
        let ended_b = unsafe { run_avx2(lanes, clips, params, dt) };
        #[cfg(not(target_arch = "x86_64"))]
        let ended_b = run(lanes, clips, params, dt);
        b.drop_ended(ended_b);
        assert_eq!(ended_a, ended_b);
        let bytes = |c: &Crowd| bytemuck::cast_slice::<CrowdInstance, u8>(&c.instances).to_vec();
        assert_eq!(bytes(&a), bytes(&b), "step {step}");
        let bits = |c: &Crowd| c.local.iter().map(|t| t.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&a), bits(&b));
        assert_eq!(a.cycle, b.cycle);
        let sp = |c: &Crowd| {
            c.specials.iter().map(|s| (s.character, s.cycle, s.local.to_bits(), s.cycles, s.flags)).collect::<Vec<_>>()
        };
        assert_eq!(sp(&a), sp(&b));
    }
}
