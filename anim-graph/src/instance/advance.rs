//! The second pass of an update: clip time moves. Sync groups first (leader by weight,
//! group rate, followers placed: [`crate::sync`]), then every other clip with a weight
//! advances by `dt · speed`. A clip without weight does not move.

use super::state::{Player, Runtime};
use crate::desc::SyncMode;
use crate::limits::MAX_SPEED;
use crate::node::{Compiled, NodeData, ScalarIn};
use crate::sync::{cyclic_step, wrap};
use anim_core::clip::Step;

/// Advances `p` by `dt` at its speed, recording the step and whether it reached the end
/// of a cycle (its cycle index changed) or finished a one-shot.
fn step_by(p: &mut Player, dt: f32) {
    let cycle = p.playback.cycle_local().0;
    p.step = p.playback.advance(dt);
    p.ended = p.step.finished || p.playback.cycle_local().0 != cycle;
}

fn speed_of(c: &Compiled, params: &[f32], node: usize) -> f32 {
    match c.nodes[node].data {
        NodeData::Clip { speed, .. } => match speed {
            ScalarIn::Const(s) => s,
            ScalarIn::Param(_) => speed.get(params).clamp(-MAX_SPEED, MAX_SPEED),
        },
        _ => 0.0,
    }
}

/// Moves player `p` by `delta` seconds of clip time (whatever its speed), recording the step.
fn move_by(p: &mut Player, delta: f32) {
    let speed = p.playback.speed;
    p.playback.speed = 1.0;
    step_by(p, delta);
    p.playback.speed = speed;
}

/// Puts player `p` at clip time `t` in its current cycle without a step (no events, no
/// root motion).
fn place(p: &mut Player, t: f32) {
    let u = p.playback.position() - f64::from(p.playback.time()) + f64::from(t);
    p.playback.seek(u);
    p.step = p.playback.last_step();
    p.ended = false;
}

/// Where follower `f` should be when leader `l` is where it is now.
fn target_time(c: &Compiled, rt: &Runtime, mode: SyncMode, l: usize, f: usize) -> f32 {
    let (lp, fp) = (&rt.players[l], &rt.players[f]);
    let (lc, fc) = (&c.clips[lp.clip], &c.clips[fp.clip]);
    let tl = lp.playback.time();
    if mode == SyncMode::Markers
        && let Some((a, b, frac)) = lc.markers.locate(tl)
        && let Some(t) = fc.markers.place(a, b, frac, fp.playback.time())
    {
        return t;
    }
    if lc.duration > 0.0 { wrap(tl / lc.duration, 1.0) * fc.duration } else { 0.0 }
}

/// Advances every clip with a weight (see the [module docs](self)). Not inlined into the
/// update, whose frame then stays small while the evaluation runs below it.
#[inline(never)]
pub(crate) fn advance(c: &Compiled, rt: &mut Runtime) {
    let dt = rt.dt;
    if !c.sync_groups.is_empty() {
        rt.synced.fill(false);
        for g in 0..c.sync_groups.len() {
            sync_group(c, rt, g, dt);
        }
    }
    let Runtime { players, weights, synced, was_active, params, .. } = rt;
    // The per-player arrays walked together (one length, by construction).
    let each = c.players.iter().zip(players.iter_mut()).zip(was_active.iter_mut()).zip(synced.iter());
    for (((&node, p), was_active), &synced) in each {
        let active = weights[node] > 0.0;
        if active && !synced {
            p.playback.speed = speed_of(c, params, node);
            step_by(p, dt);
        } else if !active && *was_active {
            // Stopped: an empty step where it is. A player that was already stopped keeps
            // the one it has (it did not move since), so it is not touched.
            p.ended = false;
            let u = p.playback.position();
            p.step = Step { from: u, to: u, finished: false };
        }
        *was_active = active;
    }
}

fn player_of(c: &Compiled, node: usize) -> usize {
    match c.nodes[node].data {
        NodeData::Clip { player, .. } => player,
        _ => unreachable!("sync group members are clip nodes by construction"),
    }
}

fn sync_group(c: &Compiled, rt: &mut Runtime, g: usize, dt: f32) {
    let group = &c.sync_groups[g];
    let (mut leader, mut best) = (None, 0.0f32);
    let (mut total, mut rate) = (0.0f32, 0.0f32);
    for &node in &group.members {
        let w = rt.weights[node];
        if w <= 0.0 {
            continue;
        }
        let p = player_of(c, node);
        let d = c.clips[rt.players[p].clip].duration;
        if d > 0.0 {
            total += w;
            rate += w * speed_of(c, &rt.params, node) / d;
        }
        if w > best {
            (leader, best) = (Some(p), w);
        }
    }
    let Some(l) = leader else {
        rt.sync[g].leader = None;
        return;
    };
    let rate = if total > 0.0 { rate / total } else { 0.0 };
    // A new leader that was not playing takes its place from the last one.
    if let Some(prev) = rt.sync[g].leader
        && prev != l
        && rt.was_active[prev]
        && !rt.was_active[l]
    {
        let t = target_time(c, rt, group.mode, prev, l);
        place(&mut rt.players[l], t);
    }
    let d = c.clips[rt.players[l].clip].duration;
    move_by(&mut rt.players[l], rate * d * dt);
    rt.synced[l] = true;
    for &node in &group.members {
        let f = player_of(c, node);
        if f == l || rt.weights[node] <= 0.0 {
            continue;
        }
        let t = target_time(c, rt, group.mode, l, f);
        let fc = &c.clips[rt.players[f].clip];
        let was_active = rt.was_active[f];
        let p = &mut rt.players[f];
        if was_active {
            // The follower moves about rate·d·dt; take the cyclic difference nearest to it.
            let expected = rate * fc.duration * dt;
            let d = fc.duration;
            let raw = cyclic_step(p.playback.time(), t, d, true);
            let off = wrap(raw - expected, d.max(f32::MIN_POSITIVE));
            let off = if off > 0.5 * d { off - d } else { off };
            move_by(p, expected + off);
        } else {
            place(p, t);
        }
        rt.synced[f] = true;
    }
    rt.sync[g].leader = Some(l);
}
