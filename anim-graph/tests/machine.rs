//! State machines on timelines with exact expected updates. The clips hold joint 0 at
//! x = 1 (`a`, 1 s, looping), 2 (`b`, 0.5 s, once) and 3 (`c`, 2 s, looping), so the
//! output pose says which state shows (and, during a crossfade, how much of each). Every
//! update is 0.125 s, exact in binary.
//!
//! The rules these timelines pin down (`anim_graph::instance` docs): transitions are
//! checked at the start of an update, on the parameters as set and the clips as the last
//! update left them; a state entered in update `n` has played `0.125` s at its end; a
//! finished clip is seen by the next update.

mod common;

use anim_graph::builder::GraphBuilder;
use anim_graph::clips::ClipSet;
use anim_graph::desc::{CompareOp, Condition};
use anim_graph::event::GraphEvent;
use anim_graph::graph::Graph;
use common::{Run, chain, hold};
use std::sync::Arc;

const DT: f32 = 0.125;

fn clips() -> ClipSet {
    ClipSet::from_clips([hold("a", 1.0, 1.0, &[("a_mid", 0.5)]), hold("b", 2.0, 0.5, &[]), hold("c", 3.0, 2.0, &[])])
}

/// Parameters `speed`, `go`, `hop`; clip nodes `na`, `nb` (once), `nc`.
fn base() -> GraphBuilder {
    let mut b = GraphBuilder::new();
    b.float("speed", 0.0).trigger("go").trigger("hop");
    b.clip("na", "a");
    b.clip("nb", "b").once();
    b.clip("nc", "c");
    b
}

fn build(b: &GraphBuilder, root: &str) -> Arc<Graph> {
    Arc::new(b.build(root, &chain(1), &clips()).unwrap())
}

fn state(run: &Run, machine: &str) -> String {
    let g = run.instance.graph();
    let m = g.node(machine).unwrap();
    g.state_name(m, run.instance.current_state(m).unwrap()).unwrap().to_owned()
}

/// Runs `n` updates and returns each one's joint-0 x.
fn xs(run: &mut Run, n: usize) -> Vec<f32> {
    (0..n)
        .map(|_| {
            run.step(DT);
            run.x()
        })
        .collect()
}

#[test]
fn a_float_condition_fires_in_the_update_that_sees_it() {
    let mut b = base();
    let mut m = b.machine("m", "A");
    m.state("A", "na").state("B", "nb");
    m.transition("A", "B", Condition::float("speed", CompareOp::Greater, 1.0)).crossfade(0.0);
    let g = build(&b, "m");
    let mut r = Run::new(&g);
    assert_eq!(xs(&mut r, 2), [1.0, 1.0]);
    r.instance.set_float(g.float_param("speed").unwrap(), 1.0).unwrap();
    assert_eq!(xs(&mut r, 1), [1.0], "1 > 1 is false");
    r.instance.set_float(g.float_param("speed").unwrap(), 1.5).unwrap();
    r.step(DT);
    assert_eq!(r.x(), 2.0, "update 4 cuts to B");
    let (m, a, bb) = (
        g.node("m").unwrap(),
        g.state(g.node("m").unwrap(), "A").unwrap(),
        g.state(g.node("m").unwrap(), "B").unwrap(),
    );
    assert_eq!(
        r.events,
        [
            GraphEvent::Transition { machine: m, from: a, to: bb },
            GraphEvent::Exit { machine: m, state: a },
            GraphEvent::Enter { machine: m, state: bb },
        ]
    );
    assert_eq!(g.event_name(&r.events[2]), Some("B"));
}

#[test]
fn exit_time_fires_on_the_update_after_the_clip_passed_it() {
    let mut b = base();
    let mut m = b.machine("m", "A");
    m.state("A", "na").state("B", "nb");
    m.transition("A", "B", Condition::ExitTime(0.5)).crossfade(0.0);
    let g = build(&b, "m");
    let mut r = Run::new(&g);
    // After update 4, A is at 0.5 s = half its cycle: update 5 leaves.
    assert_eq!(xs(&mut r, 6), [1.0, 1.0, 1.0, 1.0, 2.0, 2.0]);
}

#[test]
fn clip_ended_fires_on_the_update_after_a_one_shot_finished() {
    let mut b = base();
    let mut m = b.machine("m", "B");
    m.state("B", "nb").state("C", "nc");
    m.transition("B", "C", Condition::ClipEnded).crossfade(0.0);
    let g = build(&b, "m");
    let mut r = Run::new(&g);
    // B (0.5 s) ends in update 4; the transition is seen in update 5.
    assert_eq!(xs(&mut r, 6), [2.0, 2.0, 2.0, 2.0, 3.0, 3.0]);
    // A looping clip "ends" each time it wraps.
    let mut b = base();
    let mut m = b.machine("m", "A");
    m.state("A", "na").state("C", "nc");
    m.transition("A", "C", Condition::ClipEnded).crossfade(0.0);
    let g = build(&b, "m");
    let mut r = Run::new(&g);
    // A (1 s) wraps in update 8 (0.875 → 1.0); seen in update 9.
    let x = xs(&mut r, 10);
    assert_eq!(x[..8], [1.0; 8]);
    assert_eq!(x[8..], [3.0, 3.0]);
}

#[test]
fn the_highest_priority_wins_then_the_first_declared_any_state_first() {
    // Two always-true transitions out of A: priority decides, whatever the order.
    let mut b = base();
    let mut m = b.machine("m", "A");
    m.state("A", "na").state("B", "nb").state("C", "nc");
    m.transition("A", "B", Condition::Always).crossfade(0.0);
    m.transition("A", "C", Condition::Always).crossfade(0.0).priority(1);
    let g = build(&b, "m");
    let mut r = Run::new(&g);
    assert_eq!(xs(&mut r, 1), [3.0]);
    // Equal priorities: the first declared.
    let mut b = base();
    let mut m = b.machine("m", "A");
    m.state("A", "na").state("B", "nb").state("C", "nc");
    m.transition("A", "B", Condition::Always).crossfade(0.0);
    m.transition("A", "C", Condition::Always).crossfade(0.0);
    let g = build(&b, "m");
    assert_eq!(xs(&mut Run::new(&g), 1), [2.0]);
    // An any-state transition of equal priority comes before the state's own.
    let mut b = base();
    let mut m = b.machine("m", "A");
    m.state("A", "na").state("B", "nb").state("C", "nc");
    m.transition("A", "B", Condition::Always).crossfade(0.0);
    m.any_state("C", Condition::Always).crossfade(0.0);
    let g = build(&b, "m");
    assert_eq!(xs(&mut Run::new(&g), 1), [3.0]);
}

#[test]
fn a_blend_in_progress_is_interrupted_only_when_interruptible() {
    for interruptible in [false, true] {
        let mut b = base();
        let mut m = b.machine("m", "A");
        m.state("A", "na").state("B", "nb").state("C", "nc");
        let t = m.transition("A", "B", Condition::trigger("go")).crossfade(0.5);
        if interruptible {
            t.interruptible();
        }
        m.transition("B", "C", Condition::Always).crossfade(0.0);
        let g = build(&b, "m");
        let mut r = Run::new(&g);
        r.instance.set_trigger(g.trigger_param("go").unwrap()).unwrap();
        let x = xs(&mut r, 6);
        if interruptible {
            // Update 1 starts the crossfade (B at 0.25); update 2 already leaves B (a cut:
            // the blend in progress stops).
            assert_eq!(x[0], 1.25);
            assert_eq!(x[1..], [3.0; 5]);
        } else {
            // mix(A, B, elapsed / 0.5) until B is whole in update 4; update 5 leaves.
            assert_eq!(x, [1.25, 1.5, 1.75, 2.0, 3.0, 3.0]);
        }
    }
}

#[test]
fn a_trigger_fires_one_transition() {
    let mut b = base();
    let mut m = b.machine("m", "A");
    m.state("A", "na").state("B", "nb");
    m.transition("A", "B", Condition::trigger("go")).crossfade(0.0);
    m.transition("B", "A", Condition::trigger("go")).crossfade(0.0);
    let g = build(&b, "m");
    let go = g.trigger_param("go").unwrap();
    let mut r = Run::new(&g);
    r.instance.set_trigger(go).unwrap();
    assert_eq!(xs(&mut r, 3), [2.0, 2.0, 2.0], "consumed by A → B; B → A waits for the next");
    assert!(!r.instance.trigger_is_set(go).unwrap());
    r.instance.set_trigger(go).unwrap();
    assert_eq!(xs(&mut r, 2), [1.0, 1.0]);
    // A trigger no transition tests stays set.
    let hop = g.trigger_param("hop").unwrap();
    r.instance.set_trigger(hop).unwrap();
    xs(&mut r, 3);
    assert!(r.instance.trigger_is_set(hop).unwrap());
}

#[test]
fn any_state_transitions_leave_every_other_state() {
    let mut b = base();
    let mut m = b.machine("m", "A");
    m.state("A", "na").state("B", "nb").state("C", "nc");
    m.transition("A", "B", Condition::trigger("go")).crossfade(0.0);
    m.any_state("C", Condition::trigger("hop")).crossfade(0.0);
    m.transition("C", "A", Condition::trigger("go")).crossfade(0.0);
    let g = build(&b, "m");
    let (go, hop) = (g.trigger_param("go").unwrap(), g.trigger_param("hop").unwrap());
    let mut r = Run::new(&g);
    r.instance.set_trigger(hop).unwrap();
    assert_eq!(xs(&mut r, 1), [3.0], "from A");
    r.instance.set_trigger(hop).unwrap();
    r.step(DT);
    assert!(r.events.is_empty(), "not into the state it is in: {:?}", r.events);
    assert!(r.instance.trigger_is_set(hop).unwrap(), "so the trigger stays");
    r.instance.set_trigger(go).unwrap();
    assert_eq!(xs(&mut r, 1), [1.0], "C → A; then the pending hop fires: A → C");
    assert_eq!(xs(&mut r, 1), [3.0]);
    r.instance.set_trigger(go).unwrap();
    assert_eq!(xs(&mut r, 1), [1.0]);
    r.instance.set_trigger(go).unwrap();
    assert_eq!(xs(&mut r, 1), [2.0], "A → B");
    r.instance.set_trigger(hop).unwrap();
    assert_eq!(xs(&mut r, 1), [3.0], "from B");
}

#[test]
fn nested_machines_run_while_their_state_shows_and_restart_when_it_is_entered() {
    let mut b = base();
    let mut inner = b.machine("inner", "X");
    inner.state("X", "na").state("Y", "nb");
    inner.transition("X", "Y", Condition::ExitTime(0.5)).crossfade(0.0);
    let mut outer = b.machine("outer", "P");
    outer.state("P", "inner").state("Q", "nc");
    outer.transition("P", "Q", Condition::float("speed", CompareOp::Greater, 1.0)).crossfade(0.0);
    outer.transition("Q", "P", Condition::float("speed", CompareOp::Less, 1.0)).crossfade(0.0);
    let g = build(&b, "outer");
    let speed = g.float_param("speed").unwrap();
    let mut r = Run::new(&g);
    assert_eq!(xs(&mut r, 5), [1.0, 1.0, 1.0, 1.0, 2.0], "the inner machine leaves X in update 5");
    assert_eq!((state(&r, "outer"), state(&r, "inner")), ("P".into(), "Y".into()));
    let both: Vec<_> = r.instance.active_states().collect();
    assert_eq!(both.len(), 2);
    r.instance.set_float(speed, 2.0).unwrap();
    assert_eq!(xs(&mut r, 3), [3.0; 3]);
    assert!(!r.instance.active_states().any(|(m, _)| m == g.node("inner").unwrap()), "inner is not evaluated");
    r.instance.set_float(speed, 0.0).unwrap();
    // Entering P restarts the inner machine in X, with its clip at the start.
    assert_eq!(xs(&mut r, 5), [1.0, 1.0, 1.0, 1.0, 2.0]);
}

#[test]
fn a_trigger_is_consumed_by_the_outer_machine_first() {
    let mut b = base();
    let mut inner = b.machine("inner", "X");
    inner.state("X", "na").state("Y", "nb");
    inner.transition("X", "Y", Condition::trigger("go")).crossfade(0.0);
    let mut outer = b.machine("outer", "P");
    outer.state("P", "inner").state("Q", "nc");
    outer.transition("P", "Q", Condition::trigger("go")).crossfade(0.0);
    let g = build(&b, "outer");
    let mut r = Run::new(&g);
    r.instance.set_trigger(g.trigger_param("go").unwrap()).unwrap();
    r.step(DT);
    assert_eq!(r.x(), 3.0);
    assert_eq!(r.events.len(), 3, "the outer transition only: {:?}", r.events);
    assert_eq!(state(&r, "inner"), "X");
}

#[test]
fn clip_events_and_state_events_come_in_order() {
    let mut b = base();
    let mut m = b.machine("m", "A");
    m.state("A", "na").state("B", "nb");
    m.transition("A", "B", Condition::ExitTime(0.5)).crossfade(0.25);
    let g = build(&b, "m");
    let mut r = Run::new(&g);
    let mut names = Vec::new();
    for _ in 0..6 {
        r.step(DT);
        names.push(r.events.iter().map(|e| g.event_name(e).unwrap().to_owned()).collect::<Vec<_>>());
    }
    // a_mid (0.5 s) is crossed by update 4 (0.375 → 0.5); A → B fires in update 5, whose
    // crossfade still plays A from 0.5 (no second a_mid).
    assert_eq!(names[3], ["a_mid"]);
    assert_eq!(names[4], ["B", "A", "B"]);
    assert!(names.iter().enumerate().all(|(i, n)| i == 3 || i == 4 || n.is_empty()), "{names:?}");
    // During the crossfade the clip event carries its node's weight.
    let mut b = base();
    let mut m = b.machine("m", "C");
    m.state("C", "nc").state("A", "na");
    m.transition("C", "A", Condition::Always).crossfade(1.0);
    let g = build(&b, "m");
    let mut r = Run::new(&g);
    let mut fired = None;
    for _ in 0..8 {
        r.step(DT);
        if let Some(GraphEvent::Clip { weight, .. }) = r.events.iter().find(|e| matches!(e, GraphEvent::Clip { .. })) {
            fired = Some(*weight);
        }
    }
    assert_eq!(fired, Some(0.5), "A crosses a_mid in update 4, at weight 0.5 of the fade");
}
