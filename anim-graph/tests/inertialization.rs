//! Inertialized transitions on the mannequin (run → idle, a large change of pose and of
//! root velocity): every joint's model-space position and velocity continue through the
//! switch, within bounds derived from the frame time and the motion itself; the offset is
//! gone when the duration ends (the pose is the target's alone); and only the target
//! state is evaluated (one clip sample an update, where a crossfade takes two).

mod common;

use anim_core::clip::TimePolicy;
use anim_graph::builder::GraphBuilder;
use anim_graph::clips::ClipSet;
use anim_graph::desc::Condition;
use anim_graph::graph::Graph;
use anim_math::{Transform, Vec3};
use common::{Run, mannequin};
use std::sync::Arc;

const DURATION: f32 = 0.3;

/// run → idle on the trigger `go`, inertialized (or a crossfade, or a cut).
fn graph(clips: &ClipSet, skeleton: &anim_core::pose::Skeleton, mode: &str) -> Arc<Graph> {
    let mut b = GraphBuilder::new();
    b.trigger("go");
    b.clip("run", "run");
    b.clip("idle", "idle");
    let mut m = b.machine("m", "A");
    m.state("A", "run").state("B", "idle");
    let t = m.transition("A", "B", Condition::trigger("go"));
    match mode {
        "inertialize" => t.inertialize(DURATION),
        "crossfade" => t.crossfade(DURATION),
        _ => t.crossfade(0.0),
    };
    Arc::new(b.build("m", skeleton, clips).unwrap())
}

struct Trace {
    /// Model-space joint positions per update.
    positions: Vec<Vec<Vec3>>,
    /// Root-motion translation per update.
    motion: Vec<Vec3>,
    samples: Vec<u64>,
    switch: usize,
}

/// Runs `seconds` at `dt`, firing the transition at `at` seconds.
fn trace(mode: &str, dt: f32, at: f32, seconds: f32) -> Trace {
    let (sk, clips) = mannequin();
    let g = graph(&clips, &sk, mode);
    let go = g.trigger_param("go").unwrap();
    let mut r = Run::new(&g);
    let switch = (at / dt).round() as usize;
    let mut globals = vec![Transform::IDENTITY; sk.len()];
    let mut t = Trace { positions: Vec::new(), motion: Vec::new(), samples: Vec::new(), switch };
    for k in 0..(seconds / dt).round() as usize {
        if k == switch {
            r.instance.set_trigger(go).unwrap();
        }
        let before = r.instance.samples();
        r.step(dt);
        t.samples.push(r.instance.samples() - before);
        r.pose.globals(&sk, &mut globals).unwrap();
        t.positions.push(globals.iter().map(|g| g.translation).collect());
        t.motion.push(r.motion.translation);
    }
    t
}

/// Largest per-update position change and second difference (over all joints) of `t`,
/// over the updates `range`.
fn extremes(t: &Trace, range: impl Iterator<Item = usize>) -> (f32, f32) {
    let (mut step, mut accel) = (0.0f32, 0.0f32);
    for k in range {
        for j in 0..t.positions[k].len() {
            let (p0, p1, p2) = (t.positions[k - 2][j], t.positions[k - 1][j], t.positions[k][j]);
            step = step.max((p2 - p1).norm());
            accel = accel.max((p2 - p1 * 2.0 + p0).norm());
        }
    }
    (step, accel)
}

/// The largest change at the switch: of position from the update before, and of the
/// per-update step across the switch and the two updates after it.
fn at_switch(t: &Trace) -> (f32, f32) {
    let s = t.switch;
    let mut jump = 0.0f32;
    for j in 0..t.positions[s].len() {
        jump = jump.max((t.positions[s][j] - t.positions[s - 1][j]).norm());
    }
    (jump, extremes(t, s..s + 3).1)
}

#[test]
fn position_and_velocity_continue_through_the_switch() {
    let dt = 1.0 / 60.0;
    let t = trace("inertialize", dt, 0.5, 1.2);
    let s = t.switch;
    // The motion's own bounds, everywhere but the three updates around the switch: the
    // fastest joint moves `v·dt` an update, and its step changes by at most `a·dt²`.
    let (v_dt, a_dt2) = extremes(&t, (2..s).chain(s + 3..t.positions.len()));
    let (jump, accel) = at_switch(&t);
    println!(
        "dt {dt:.4}: at the switch a joint moved {:.2} mm (motion's largest step {:.2} mm), its step changed by {:.3} mm \
         (motion's largest change {:.3} mm)",
        jump * 1e3,
        v_dt * 1e3,
        accel * 1e3,
        a_dt2 * 1e3
    );
    assert!(jump <= v_dt, "position: {jump} > {v_dt}");
    assert!(accel <= 1.5 * a_dt2, "velocity: {accel} > 1.5 × {a_dt2}");
    // A cut jumps by far more than a step of the motion.
    let cut = trace("cut", dt, 0.5, 1.2);
    let (cut_jump, _) = at_switch(&cut);
    assert!(cut_jump > 5.0 * v_dt, "the cut jumps {cut_jump}");
    // Continuity, not a small jump: at half the time step the changes at the switch halve
    // (position) and quarter (velocity), as they do for a smooth motion.
    let half = trace("inertialize", dt / 2.0, 0.5, 1.2);
    let (jump2, accel2) = at_switch(&half);
    println!("dt {:.4}: {:.2} mm, {:.4} mm", dt / 2.0, jump2 * 1e3, accel2 * 1e3);
    assert!(jump2 < 0.6 * jump, "{jump2} vs {jump}");
    assert!(accel2 < 0.35 * accel, "{accel2} vs {accel}");
}

#[test]
fn the_offset_is_gone_at_the_end_and_the_pose_is_the_targets() {
    let (sk, clips) = mannequin();
    let g = graph(&clips, &sk, "inertialize");
    let mut r = Run::new(&g);
    let dt = 1.0 / 60.0;
    let m = g.node("m").unwrap();
    for _ in 0..30 {
        r.step(dt);
    }
    r.instance.set_trigger(g.trigger_param("go").unwrap()).unwrap();
    let idle = clips.clips()[clips.find("idle").unwrap()].clip().clone();
    let mut alone = sk.rest_pose().clone();
    let mut offset_seen = 0.0f32;
    for k in 1..=30 {
        r.step(dt);
        let time = k as f32 * dt;
        idle.sample(time, TimePolicy::Clamp, &mut alone).unwrap();
        let diff = r
            .pose
            .locals()
            .iter()
            .zip(alone.locals())
            .map(|(a, b)| (a.translation - b.translation).norm() + a.rotation.angle_to(&b.rotation))
            .fold(0.0f32, f32::max);
        let off = (0..sk.len())
            .map(|j| r.instance.inertial_offset(m, j).iter().map(|x| x.abs()).fold(0.0, f32::max))
            .fold(0.0, f32::max);
        offset_seen = offset_seen.max(off);
        if time < DURATION - 1e-4 {
            assert!(r.instance.is_inertializing(m), "update {k}");
        } else {
            // From the end of the duration on: no offset, the target alone.
            assert!(!r.instance.is_inertializing(m), "update {k}");
            assert_eq!(off, 0.0);
            assert!(diff < 1e-5, "update {k}: {diff}");
        }
    }
    assert!(offset_seen > 0.3, "a real offset was decayed ({offset_seen})");
}

#[test]
fn an_inertialized_transition_evaluates_one_state_a_crossfade_two() {
    let dt = 1.0 / 60.0;
    for (mode, during) in [("inertialize", 1), ("crossfade", 2)] {
        let t = trace(mode, dt, 0.5, 1.2);
        let s = t.switch;
        let frames = (DURATION / dt).round() as usize;
        assert!(t.samples[..s].iter().all(|&n| n == 1), "{mode}: before");
        // The last update of the blend reaches the duration and shows the target alone.
        assert!(t.samples[s..s + frames - 1].iter().all(|&n| n == during), "{mode}: {:?}", &t.samples[s..s + frames]);
        assert!(t.samples[s + frames..].iter().all(|&n| n == 1), "{mode}: after");
    }
}

#[test]
fn root_motion_continues_through_the_switch_and_decays() {
    let dt = 1.0 / 60.0;
    let t = trace("inertialize", dt, 0.5, 1.2);
    let s = t.switch;
    let step_before = t.motion[s - 1].norm();
    assert!(step_before > 2.0 * dt, "the run travels about 2.2 m/s: {step_before}");
    // The update of the switch still moves as the run did; the next ones slow down.
    assert!((t.motion[s] - t.motion[s - 1]).norm() < 1e-3 * step_before, "{:?} {:?}", t.motion[s], t.motion[s - 1]);
    let largest_change = (s + 1..t.motion.len()).map(|k| (t.motion[k] - t.motion[k - 1]).norm()).fold(0.0f32, f32::max);
    assert!(largest_change < 0.15 * step_before, "speed changes smoothly: {largest_change}");
    let end = s + (DURATION / dt).round() as usize;
    assert!(t.motion[end..].iter().all(|m| m.norm() < 1e-6), "idle does not travel");
    // With a cut the speed drops at once.
    let cut = trace("cut", dt, 0.5, 1.2);
    assert!(cut.motion[s].norm() < 1e-6);
}
