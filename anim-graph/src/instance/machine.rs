//! State machines at run time: which transition fires, and what firing one does.
//!
//! At the start of an update each active machine (outer machines first) looks at the
//! transitions that may leave its current state: the any-state transitions (except those
//! into the current state) and the current state's own. Every one whose condition holds
//! is a candidate; the highest priority wins, and among equal priorities the first
//! declared, any-state transitions before the state's. Conditions read the parameters as
//! set before the update and the clips as the previous update left them ("the clip ended"
//! is seen by the update after the one that reached the end). While a transition blends,
//! only an interruptible one lets another fire. At most one transition fires per machine
//! per update.
//!
//! Firing consumes the triggers the condition tests, reports `Transition`, `Exit` and
//! `Enter`, restarts the target state's tree (its clips from their start, its machines in
//! their entry states) and starts the blend:
//! - duration 0: a cut;
//! - **crossfade**: the old state keeps playing and is mixed out over the duration;
//! - **inertialize**: only the new state plays; the offset of the pose shown is decayed
//!   ([`crate::inertial`]).
//!
//! A crossfade that interrupts a blend in progress inertializes from the pose shown (the
//! old blend's source stops), as Bollo recommends for interruptions. A transition from or
//! to an empty state (a state without a tree, for layers) always crossfades: there is no
//! pose to inertialize from or to, and what fades is the state's coverage.

use super::state::{Blending, Player, Runtime};
use crate::event::{GraphEvent, NodeId, StateId};
use crate::limits::MAX_SPEED;
use crate::node::{ClipData, Compiled, Cond, NodeData, Transition};

/// Whether `cond` holds, with `timing` the player leading the current state.
fn holds(cond: &Cond, params: &[f32], timing: Option<(&Player, &ClipData)>) -> bool {
    match cond {
        Cond::Always => true,
        Cond::Float { param, op, value } => op.holds(params[*param], *value),
        Cond::Bool { param, value } => (params[*param] > 0.5) == *value,
        Cond::Trigger(p) => params[*p] > 0.5,
        Cond::ClipEnded => timing.is_some_and(|(p, _)| p.ended),
        Cond::ExitTime(x) => timing.is_some_and(|(p, c)| {
            let d = c.duration;
            p.playback.is_finished() || (d > 0.0 && p.playback.time() / d >= *x)
        }),
        Cond::All(cs) => cs.iter().all(|c| holds(c, params, timing)),
        Cond::Any(cs) => cs.iter().any(|c| holds(c, params, timing)),
        Cond::Not(c) => !holds(c, params, timing),
    }
}

/// The transition machine `mi` fires now, if any.
pub(crate) fn choose<'a>(c: &'a Compiled, rt: &Runtime, mi: usize) -> Option<&'a Transition> {
    let m = &c.machines[mi];
    let mrt = &rt.machines[mi];
    if mrt.blending.is_some_and(|b| !b.interruptible) {
        return None;
    }
    let cur = mrt.current;
    let timing = mrt.timing[cur].map(|p| (&rt.players[p], &c.clips[rt.players[p].clip]));
    let mut best: Option<&Transition> = None;
    let candidates = m.any.iter().filter(|t| t.to != cur).chain(&m.states[cur].transitions);
    for t in candidates {
        if best.is_none_or(|b| t.priority > b.priority) && holds(&t.cond, &rt.params, timing) {
            best = Some(t);
        }
    }
    best
}

/// Fires `tr` in machine `mi` (see the [module docs](self)).
pub(crate) fn fire(c: &Compiled, rt: &mut Runtime, mi: usize, tr: &Transition, events: &mut Vec<GraphEvent>) {
    let m = &c.machines[mi];
    let machine = NodeId(m.node);
    let (from, to) = (rt.machines[mi].current, tr.to);
    events.push(GraphEvent::Transition { machine, from: StateId(from), to: StateId(to) });
    events.push(GraphEvent::Exit { machine, state: StateId(from) });
    events.push(GraphEvent::Enter { machine, state: StateId(to) });
    for &p in &tr.triggers {
        rt.params[p] = 0.0;
    }
    if let Some(n) = m.states[to].node {
        reset_subtree(c, rt, n);
    }
    let empty = m.states[from].node.is_none() || m.states[to].node.is_none();
    let mrt = &mut rt.machines[mi];
    let blend =
        |crossfade| Blending { from, crossfade, elapsed: 0.0, duration: tr.duration, interruptible: tr.interruptible };
    mrt.start_inertial = None;
    if tr.duration <= 0.0 {
        mrt.blending = None;
        mrt.inertial.stop();
    } else if empty || (tr.mode == crate::desc::TransitionMode::Crossfade && mrt.blending.is_none()) {
        mrt.blending = Some(blend(true));
    } else {
        mrt.blending = Some(blend(false));
        mrt.start_inertial = Some(tr.duration);
    }
    mrt.current = to;
    mrt.state_time = 0.0;
}

/// Restarts every clip and machine of the subtree under node `n`, as entering a state
/// does: clips at their start (a one-shot played backwards at its end), machines in their
/// entry states with no blend and no history.
pub(crate) fn reset_subtree(c: &Compiled, rt: &mut Runtime, n: usize) {
    let end = n + c.nodes[n].size;
    for k in n..end {
        match &c.nodes[k].data {
            NodeData::Clip { player, speed, .. } => {
                let speed = speed.get(&rt.params).clamp(-MAX_SPEED, MAX_SPEED);
                let p = &mut rt.players[*player];
                let (_, hi) = p.playback.span();
                p.playback.seek(if speed < 0.0 && hi.is_finite() { hi } else { 0.0 });
                p.step = p.playback.last_step();
                p.ended = false;
                rt.was_active[*player] = false;
            }
            NodeData::Machine { machine } => {
                let entry = c.machines[*machine].entry;
                let mrt = &mut rt.machines[*machine];
                mrt.current = entry;
                mrt.blending = None;
                mrt.start_inertial = None;
                mrt.inertial.stop();
                mrt.shown_count = 0;
                mrt.timing.iter_mut().for_each(|t| *t = None);
                mrt.state_time = 0.0;
            }
            _ => {}
        }
    }
}

/// The player leading the subtree under node `n` in this update: the clip node with the
/// highest weight (the first of equals), if any has weight.
pub(crate) fn leading_player(c: &Compiled, rt: &Runtime, n: usize) -> Option<usize> {
    let end = n + c.nodes[n].size;
    let lo = c.players.partition_point(|&p| p < n);
    let hi = c.players.partition_point(|&p| p < end);
    let mut best: Option<(usize, f32)> = None;
    for (i, &node) in c.players[lo..hi].iter().enumerate() {
        let w = rt.weights[node];
        if w > 0.0 && best.is_none_or(|(_, bw)| w > bw) {
            best = Some((lo + i, w));
        }
    }
    best.map(|(p, _)| p)
}
