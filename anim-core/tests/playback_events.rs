//! Playback times (ping-pong, clamp, loop counts, reverse) and the event query, against
//! hand-computed values.

use anim_core::clip::events::{ClipEvent, FiredEvent, crossed_into};
use anim_core::clip::playback::{LoopMode, Playback};
use anim_core::clip::{Clip, Interpolation, JointTracks, Track};
use anim_math::Vec3;

fn near(a: f32, b: f32) -> bool {
    (a - b).abs() < 1e-5
}

#[test]
fn ping_pong_times() {
    // Duration 2: u = 0.5 → 0.5; u = 2.5 (second cycle, backwards) → 1.5; u = 4.5 → 0.5.
    let mut p = Playback::new(2.0, LoopMode::PingPong);
    let expect = [(0.5, 0.5), (2.0, 1.5), (2.0, 0.5), (1.5, 2.0), (0.25, 1.75)];
    for (dt, t) in expect {
        p.advance(dt);
        assert!(near(p.time(), t), "u {} time {} expected {t}", p.position(), p.time());
    }
    // Reverse playback walks the same triangle back.
    p.speed = -1.0;
    p.advance(6.25); // u = 6.25 - 6.25 = 0
    assert!(near(p.time(), 0.0));
    p.advance(0.5); // u = -0.5: cycle -1 runs backwards → 2 - 1.5
    assert!(near(p.time(), 0.5));
}

#[test]
fn loop_count_and_clamp_when_finished() {
    let mut p = Playback::new(1.0, LoopMode::Repeat).with_repetitions(Some(3));
    let mut finished_steps = 0;
    for _ in 0..40 {
        if p.advance(0.1).finished {
            finished_steps += 1;
        }
    }
    assert_eq!(finished_steps, 1, "finished fires once");
    assert!(p.is_finished());
    assert_eq!(p.position(), 3.0);
    assert_eq!(p.time(), 1.0, "held on the last frame");
    // Exactly at u = 2.5 of a 3-loop playback the time is 0.5.
    let mut q = Playback::new(1.0, LoopMode::Repeat).with_repetitions(Some(3));
    q.advance(2.5);
    assert!(near(q.time(), 0.5) && !q.is_finished());
    // Without clamping, a finished playback shows the start frame.
    let mut r = Playback::once(2.0).with_clamp_when_finished(false);
    assert!(r.advance(5.0).finished);
    assert_eq!(r.time(), 0.0);
    // Ping-pong with an even count ends at the start of the clip.
    let mut pp = Playback::new(2.0, LoopMode::PingPong).with_repetitions(Some(2));
    assert!(pp.advance(10.0).finished);
    assert_eq!(pp.time(), 0.0);
    // Reverse play of a finite playback finishes at u = 0.
    let mut rev = Playback::once(2.0).with_speed(-1.0);
    rev.seek(2.0);
    rev.advance(0.5);
    assert!(near(rev.time(), 1.5));
    assert!(rev.advance(3.0).finished);
    assert_eq!(rev.time(), 0.0);
}

#[test]
fn time_scale() {
    let mut p = Playback::new(4.0, LoopMode::Repeat).with_speed(0.5);
    p.advance(3.0);
    assert!(near(p.time(), 1.5));
    p.speed = 3.0;
    p.advance(1.0);
    assert!(near(p.time(), 0.5)); // 1.5 + 3 = 4.5 → wraps to 0.5
}

fn events() -> Vec<ClipEvent> {
    vec![ClipEvent::new("a", 0.0), ClipEvent::new("b", 0.5), ClipEvent::new("c", 1.0)]
}

fn names(ev: &[ClipEvent], fired: &[FiredEvent]) -> String {
    fired.iter().map(|f| ev[f.index].name.as_str()).collect()
}

#[test]
fn events_forward_wrap_and_multi_loop() {
    let ev = events();
    let p = Playback::new(1.0, LoopMode::Repeat);
    let mut out = Vec::with_capacity(16);
    // (0.25, 0.75]: b only.
    crossed_into(&ev, &p, 0.25, 0.75, &mut out);
    assert_eq!(names(&ev, &out), "b");
    // (0.75, 1.25] crosses the wrap: c at 1.0 of cycle 0 and a at 0.0 of cycle 1 share
    // position 1.0, c first (time order within the position).
    crossed_into(&ev, &p, 0.75, 1.25, &mut out);
    assert_eq!(names(&ev, &out), "ca");
    assert_eq!(out[0].position, 1.0);
    assert_eq!((out[0].cycle, out[1].cycle), (0, 1));
    // Two and a half loops in one step.
    crossed_into(&ev, &p, 0.25, 2.75, &mut out);
    assert_eq!(names(&ev, &out), "bcabcab");
    // Zero step: nothing, even on an event.
    crossed_into(&ev, &p, 0.5, 0.5, &mut out);
    assert!(out.is_empty());
    // Landing on an event fires it; starting on it does not fire it again.
    crossed_into(&ev, &p, 0.25, 0.5, &mut out);
    assert_eq!(names(&ev, &out), "b");
    crossed_into(&ev, &p, 0.5, 0.75, &mut out);
    assert!(out.is_empty());
}

#[test]
fn events_reverse() {
    let ev = events();
    let p = Playback::new(1.0, LoopMode::Repeat);
    let mut out = Vec::new();
    // Backwards from 1.25 to -0.75: positions 1.0 (a of cycle 1, then c of cycle 0), 0.5,
    // 0.0, then cycle -1: c at 0.0 (i.e. -1 + 1), b at -0.5.
    crossed_into(&ev, &p, 1.25, -0.75, &mut out);
    assert_eq!(names(&ev, &out), "acbacb");
    let positions: Vec<f64> = out.iter().map(|f| f.position).collect();
    assert_eq!(positions, [1.0, 1.0, 0.5, 0.0, 0.0, -0.5]);
}

#[test]
fn events_ping_pong_and_finite() {
    let ev = events();
    let p = Playback::new(1.0, LoopMode::PingPong);
    let mut out = Vec::new();
    // Forward over the turn at u = 1: c fires once, then b going back at u = 1.5, then a
    // once at the turn u = 2, then b at 2.5.
    crossed_into(&ev, &p, 0.75, 2.5, &mut out);
    assert_eq!(names(&ev, &out), "cbab");
    // A one-shot playback: 0 → 1 fires b and c, never a again at the end.
    let once = Playback::once(1.0);
    crossed_into(&ev, &once, 0.0, 1.0, &mut out);
    assert_eq!(names(&ev, &out), "bc");
    // Via the playback's own step, starting from a seek to before the first event.
    let mut q = Playback::new(1.0, LoopMode::Repeat).with_repetitions(Some(2));
    q.seek(-1.0); // clamps to 0
    let s = q.advance(10.0);
    crossed_into(&ev, &q, s.from, s.to, &mut out);
    assert_eq!(names(&ev, &out), "bcab".to_owned() + "c");
}

#[test]
fn clip_events_are_sorted_and_checked() {
    let mut jt = JointTracks::new(0);
    jt.translation = Some(Track::new(Interpolation::Linear, vec![0.0, 2.0], vec![Vec3::zeros(); 2]).unwrap());
    let clip = Clip::new("c", vec![jt], vec![]).unwrap();
    let clip = clip.with_events(vec![ClipEvent::new("late", 1.5), ClipEvent::new("early", 0.5)]).unwrap();
    assert_eq!(clip.events()[0].name, "early");
    let bad = clip.clone().with_events(vec![ClipEvent::new("x", 2.5)]);
    assert!(matches!(bad, Err(anim_core::clip::events::EventError::TimeOutOfRange { index: 0, .. })));
    let nan = clip.with_events(vec![ClipEvent::new("x", f32::NAN)]);
    assert!(nan.is_err());
}

#[test]
fn foot_contact_curve_gives_down_and_up_events() {
    // Planted 0..0.4, lifting linearly to 0 at 0.6, down again linearly 0.8..1.0.
    let curve =
        Track::new(Interpolation::Linear, vec![0.0, 0.4, 0.6, 0.8, 1.0], vec![1.0f32, 1.0, 0.0, 0.0, 1.0]).unwrap();
    let ev = anim_core::clip::events::threshold_events(&curve, 0.5, "foot_down", "foot_up");
    assert_eq!(ev.len(), 2);
    assert_eq!(ev[0].name, "foot_up");
    assert!(near(ev[0].time, 0.5));
    assert_eq!(ev[1].name, "foot_down");
    assert!(near(ev[1].time, 0.9));
    let step = Track::new(Interpolation::Step, vec![0.0, 0.3], vec![0.0f32, 1.0]).unwrap();
    let ev = anim_core::clip::events::threshold_events(&step, 0.5, "down", "up");
    assert_eq!((ev[0].name.as_str(), ev[0].time), ("down", 0.3));
}

#[test]
fn crossfade_reports_the_current_clips_events() {
    use anim_core::blend::crossfade::CrossFadeController;
    use anim_core::clip::TimePolicy;
    use anim_core::pose::{JointDesc, Skeleton};
    let s = Skeleton::new(vec![JointDesc::new("root", None, anim_math::Transform::IDENTITY)]).unwrap();
    let mut jt = JointTracks::new(0);
    jt.translation = Some(Track::new(Interpolation::Linear, vec![0.0, 1.0], vec![Vec3::zeros(); 2]).unwrap());
    let clip = std::sync::Arc::new(
        Clip::new("c", vec![jt], vec![])
            .unwrap()
            .with_events(vec![ClipEvent::new("x", 0.3), ClipEvent::new("y", 0.9)])
            .unwrap(),
    );
    let mut f = CrossFadeController::new(&s, 1);
    f.play(clip.clone(), TimePolicy::Wrap).unwrap();
    let mut out = Vec::with_capacity(4);
    let mut seen = String::new();
    for _ in 0..6 {
        f.update(0.25).unwrap(); // ends at 0.25, 0.5, 0.75, 1.0 (wrap), 1.25, 1.5
        f.current_events(&mut out);
        seen.extend(out.iter().map(|e| if clip.events()[e.index].name == "x" { 'x' } else { 'y' }));
        seen.push('|');
    }
    assert_eq!(seen, "|x||y||x|");
}

/// Every crossing `for_each_crossed` reports, against a brute force over a wide range of
/// cycles (no cycle skipped), on steps that start and end on cycle boundaries, on events
/// and between them, forwards and backwards, with a duration that is not exact in binary.
#[test]
fn events_match_a_brute_force_count_on_boundaries() {
    let d = 0.7f32;
    let ev = vec![ClipEvent::new("start", 0.0), ClipEvent::new("mid", 0.35), ClipEvent::new("end", d)];
    let p = Playback::new(d, LoopMode::Repeat);
    let df = f64::from(d);
    let mut points: Vec<f64> = Vec::new();
    for k in -3..6 {
        let base = k as f64 * df;
        for e in &ev {
            points.push(base + f64::from(e.time));
        }
        points.extend([base + 0.1, base + 0.5 * df, base - 1e-12, base + 1e-12]);
    }
    let mut out = Vec::with_capacity(64);
    let mut checked = 0;
    for &from in &points {
        for &to in &points {
            crossed_into(&ev, &p, from, to, &mut out);
            let mut expected: Vec<(usize, i64)> = Vec::new();
            for k in -10..20i64 {
                for (i, e) in ev.iter().enumerate() {
                    let at = k as f64 * df + f64::from(e.time);
                    let hit = if to > from { from < at && at <= to } else { to <= at && at < from };
                    if from != to && hit {
                        expected.push((i, k));
                    }
                }
            }
            let mut got: Vec<(usize, i64)> = out.iter().map(|f| (f.index, f.cycle)).collect();
            expected.sort_unstable();
            got.sort_unstable();
            assert_eq!(got, expected, "step {from} → {to}");
            checked += 1;
        }
    }
    assert_eq!(checked, points.len() * points.len());
}
