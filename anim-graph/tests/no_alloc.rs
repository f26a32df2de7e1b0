//! Steady updates allocate nothing: a counting global allocator watches
//! `GraphInstance::update` of the mannequin's locomotion graph (2D blend space in a marker
//! sync group, the jump machine with inertialized transitions, the punch layer crossfaded
//! from an empty state, foot grounding on a height field), with exact clips and with
//! runtime clips, through a scripted input sequence that visits every state.
//!
//! Only allocations of the thread running the case are counted (a thread-local switch),
//! and both cases run in one `#[test]`. The script is played once to warm up (the event
//! buffer reaches its working size), then again with the counter on.

mod common;

use anim_graph::clips::ClipSet;
use anim_ik::HeightField;
use anim_testkit::alloc::{Counting, counted};
use common::{Run, locomotion, mannequin, mannequin_runtime};
use std::sync::Arc;

#[global_allocator]
static GLOBAL: Counting = Counting;

const DT: f32 = 1.0 / 60.0;

/// Six seconds of input: walk, run, strafe, punch, jump (off the ground for half a
/// second), back up, stop. Returns the states visited (machine, state) as names.
fn play(r: &mut Run, states: &mut Vec<(usize, usize)>) {
    let g = r.instance.graph().clone();
    let (mx, mz) = (g.float_param("move_x").unwrap(), g.float_param("move_z").unwrap());
    let (jump, punch, grounded) =
        (g.trigger_param("jump").unwrap(), g.trigger_param("punch").unwrap(), g.bool_param("grounded").unwrap());
    for k in 0..360 {
        let t = k as f32 * DT;
        let (x, z) = match t {
            t if t < 1.0 => (0.0, t * 0.85),
            t if t < 2.0 => (0.0, 2.2),
            t if t < 3.0 => (1.3, 0.5),
            t if t < 4.5 => (-0.5, -1.2),
            _ => (0.0, 0.0),
        };
        r.instance.set_float(mx, x).unwrap();
        r.instance.set_float(mz, z).unwrap();
        if k == 100 || k == 130 {
            r.instance.set_trigger(punch).unwrap();
        }
        if k == 200 {
            r.instance.set_trigger(jump).unwrap();
            r.instance.set_bool(grounded, false).unwrap();
        }
        if k == 260 {
            r.instance.set_bool(grounded, true).unwrap();
        }
        r.step(DT);
        for (m, s) in r.instance.active_states() {
            if !states.contains(&(m.index(), s.index())) {
                states.push((m.index(), s.index()));
            }
        }
    }
}

fn case(name: &str, clips: &ClipSet, skeleton: &anim_core::pose::Skeleton, failures: &mut Vec<String>) {
    let graph = locomotion(skeleton, clips);
    let ground =
        Arc::new(HeightField::from_fn(-20.0, -20.0, 0.25, 161, 161, |x, z| 0.1 * (0.5 * x).sin() * z.cos()).unwrap());
    let mut r = Run::new(&graph);
    r.instance.set_ground(Some(ground));
    let mut states = Vec::with_capacity(16);
    // The first pass warms up (and resets the instance after it, uncounted); the second
    // is counted.
    let (n, bytes) = counted(1, 1, |pass| {
        play(&mut r, &mut states);
        if pass == 0 {
            r.instance.reset();
        }
    });
    // Every state of both machines was visited: locomotion, take-off, air, landing; none, punch.
    assert_eq!(states.len(), 6, "{name}: states visited {states:?}");
    if n != 0 {
        failures.push(format!("{name}: {n} allocations, {bytes} bytes in 360 updates"));
    }
}

#[test]
fn graph_updates_allocate_nothing() {
    let mut failures = Vec::new();
    let (sk, exact) = mannequin();
    case("locomotion graph, exact clips", &exact, &sk, &mut failures);
    let (sk, runtime) = mannequin_runtime();
    case("locomotion graph, runtime clips", &runtime, &sk, &mut failures);
    assert!(failures.is_empty(), "{failures:#?}");
}
