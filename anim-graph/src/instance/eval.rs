//! The last pass of an update, bottom-up: each node with a weight writes its pose into a
//! slot of the pose pool and returns its root-motion step, its contact curves and its
//! coverage. Clips sample (exact clips with their key cache, runtime clips with their
//! context), blends mix with `anim_core::blend`, IK nodes call `anim_ik`, machines mix or
//! inertialize their states and remember what they showed.
//!
//! Node `n` evaluated into slot `s` may use slots `s..s + slots(n)` and leaves its result in
//! `s`. Children with zero weight are skipped, so a graph costs what its active branches
//! cost.
//!
//! **Coverage** is how much of a pose is there: 1 for every node, 0 for an empty state
//! (a state without a tree, as a layer's machine has while it plays nothing). Mixing two
//! poses with weights `w` and coverages `c` uses the factor `w_b·c_b / (w_a·c_a + w_b·c_b)`
//! and gives coverage `w_a·c_a + w_b·c_b`, so fading a layer's state in from an empty state
//! fades the layer in, without the rest pose showing through. A layer applies
//! `weight · coverage` of its layer; an additive node `weight · coverage` of its difference.

use super::error::UpdateError;
use super::prepare::fade_alpha;
use super::state::{Context, Runtime};
use crate::event::{ClipId, GraphEvent, NodeId};
use crate::limits::{MAX_COORD, MAX_CURVES, MAX_LEGS};
use crate::node::{Compiled, NodeData};
use anim_core::blend::additive::add_in_place;
use anim_core::blend::layered::blend_two_into;
use anim_core::blend::mix::blend_masked;
use anim_core::clip::TimePolicy;
use anim_core::clip::events::for_each_crossed;
use anim_core::clip::root_motion::blend_deltas;
use anim_core::pose::{Pose, Skeleton};
use anim_math::{Transform, Vec3};

/// What a node returns besides its pose.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Out {
    pub(crate) motion: Transform,
    pub(crate) curves: [f32; MAX_CURVES],
    pub(crate) coverage: f32,
}

const EMPTY: Out = Out { motion: Transform::IDENTITY, curves: [1.0; MAX_CURVES], coverage: 0.0 };

/// Slots `a < b` of the pool, both mutable.
fn two(pool: &mut [Pose], a: usize, b: usize) -> (&mut Pose, &mut Pose) {
    let (lo, hi) = pool.split_at_mut(b);
    (&mut lo[a], &mut hi[0])
}

/// Evaluates node `n` into slot `slot` (see the [module docs](self)).
///
/// A dispatch only: each kind of node is a function of its own, not inlined here, so that
/// this frame, which every level of a deep tree keeps on the stack, stays small (one frame
/// holding every kind's locals took over a kilobyte a level, and the stack of a deep tree
/// then crowded the clips' data out of the first-level cache).
pub(crate) fn eval(
    c: &Compiled,
    rt: &mut Runtime,
    n: usize,
    slot: usize,
    events: &mut Vec<GraphEvent>,
) -> Result<Out, UpdateError> {
    match &c.nodes[n].data {
        NodeData::Clip { clip, player, .. } => eval_clip(c, rt, n, *clip, *player, slot, events),
        NodeData::Space1d { children, weights_at, .. } | NodeData::Space2d { children, weights_at, .. } => {
            let at = *weights_at;
            mix(c, rt, slot, children.len(), |rt, k| (Some(children[k]), rt.space_weights[at + k]), events)
        }
        NodeData::Blend { a, b, weight } => {
            let t = weight.get(&rt.params).clamp(0.0, 1.0);
            let kids = [(*a, 1.0 - t), (*b, t)];
            mix(c, rt, slot, 2, |_, k| (Some(kids[k].0), kids[k].1), events)
        }
        NodeData::Additive { base, additive, reference, weight } => {
            eval_additive(c, rt, slot, [*base, *additive, *reference], weight.get(&rt.params), events)
        }
        NodeData::Layer { base, layer, mask, weight } => {
            eval_layer(c, rt, slot, [*base, *layer], *mask, weight.get(&rt.params), events)
        }
        NodeData::TwoBone { input, ik, target, pole, weight } => {
            eval_ik(c, rt, slot, *input, target, weight.get(&rt.params), events, |sk, pose, goal| {
                ik.solve(sk, pose, &Transform::IDENTITY, goal, pole.as_ref())?;
                Ok(())
            })
        }
        NodeData::Aim { input, joint, forward, up, world_up, target, weight } => {
            eval_ik(c, rt, slot, *input, target, weight.get(&rt.params), events, |sk, pose, goal| {
                let parent = sk.parent(*joint).and_then(|p| pose.global(sk, p)).unwrap_or(Transform::IDENTITY);
                let mut local = pose.locals()[*joint];
                anim_ik::aim(&parent, &mut local, goal, forward, up, world_up)?;
                pose.locals_mut()[*joint] = local;
                Ok(())
            })
        }
        NodeData::FootIk { input, curves, weight, solver, .. } => {
            eval_foot(c, rt, slot, *input, curves, *solver, weight.get(&rt.params), events)
        }
        NodeData::Machine { machine } => eval_machine(c, rt, *machine, slot, events),
    }
}

/// Clip node `n` (clip `clip`, its player `player`): samples the pose, and returns the
/// root-motion step, the contact curves and the events crossed.
#[inline(never)]
fn eval_clip(
    c: &Compiled,
    rt: &mut Runtime,
    n: usize,
    clip: usize,
    player: usize,
    slot: usize,
    events: &mut Vec<GraphEvent>,
) -> Result<Out, UpdateError> {
    let Runtime { players, pool, .. } = rt;
    let (p, data, pose) = (&mut players[player], &c.clips[clip], &mut pool[slot]);
    let t = p.playback.time();
    match &mut p.context {
        Context::Exact(cache) => {
            // The skeleton's rest pose, shared by every instance (so it stays in the caches
            // across a crowd), not a copy per instance.
            pose.locals_mut().copy_from_slice(c.skeleton.rest_pose().locals());
            data.clip.sample_cached(cache, t, TimePolicy::Clamp, pose)?;
        }
        Context::Runtime(ctx) => {
            let r = data.runtime.as_ref().expect("a runtime context is made for a runtime clip only");
            r.sample_pose(ctx, t, TimePolicy::Clamp, pose)?;
        }
    }
    rt.samples += 1;
    let (step, playback) = (p.step, &p.playback);
    let motion = data.clip.root_motion().map_or(Transform::IDENTITY, |m| m.delta(playback, step.from, step.to));
    let mut curves = [1.0; MAX_CURVES];
    for (o, ci) in curves.iter_mut().zip(&data.curves) {
        if let Some(v) = ci.and_then(|i| data.clip.sample_curve(i, t, TimePolicy::Clamp)) {
            *o = if v.is_finite() { v.clamp(0.0, 1.0) } else { 1.0 };
        }
    }
    let weight = rt.weights[n];
    for_each_crossed(data.clip.events(), playback, step.from, step.to, |f| {
        events.push(GraphEvent::Clip { node: NodeId(n), clip: ClipId(clip), event: f.index, weight });
    });
    Ok(Out { motion, curves, coverage: 1.0 })
}

/// Additive node: `[base, additive, reference]`, weight `weight` (unclamped).
#[inline(never)]
fn eval_additive(
    c: &Compiled,
    rt: &mut Runtime,
    slot: usize,
    [base, additive, reference]: [usize; 3],
    weight: f32,
    events: &mut Vec<GraphEvent>,
) -> Result<Out, UpdateError> {
    let out = eval(c, rt, base, slot, events)?;
    let w = weight.clamp(-10.0, 10.0);
    if w != 0.0 && rt.weights[additive] > 0.0 && !shows_nothing(c, rt, additive) {
        let add = eval(c, rt, additive, slot + 1, events)?;
        let (pose, delta) = two(&mut rt.pool, slot, slot + 1);
        add_in_place(pose, delta, &c.references[reference], w * add.coverage, None, &c.skeleton)?;
    }
    Ok(out)
}

/// Layer node: `[base, layer]`, mask `mask`, weight `weight` (unclamped).
#[inline(never)]
fn eval_layer(
    c: &Compiled,
    rt: &mut Runtime,
    slot: usize,
    [base, layer]: [usize; 2],
    mask: Option<usize>,
    weight: f32,
    events: &mut Vec<GraphEvent>,
) -> Result<Out, UpdateError> {
    let out = eval(c, rt, base, slot, events)?;
    let w = weight.clamp(0.0, 1.0);
    if w > 0.0 && rt.weights[layer] > 0.0 && !shows_nothing(c, rt, layer) {
        let top = eval(c, rt, layer, slot + 1, events)?;
        let w = w * top.coverage;
        if w > 0.0 {
            let sk = &c.skeleton;
            match mask {
                Some(m) => {
                    let (lo, hi) = rt.pool.split_at_mut(slot + 2);
                    blend_masked(&mut hi[0], &lo[slot], &lo[slot + 1], w, &c.masks[m].1, None, sk)?;
                    rt.pool.swap(slot, slot + 2);
                }
                None => {
                    let (pose, top) = two(&mut rt.pool, slot, slot + 1);
                    blend_two_into(pose, top, w, sk)?;
                }
            }
        }
    }
    Ok(out)
}

/// An IK node over `input` (two-bone, aim): evaluates the input and, with weight
/// `weight` (unclamped) above 0, lets `solve` move the pose toward the goal read from the
/// parameters `target`, then mixes the result with the input by the weight.
#[inline(never)]
#[allow(clippy::too_many_arguments)] // the node's fields, passed apart from the node
fn eval_ik(
    c: &Compiled,
    rt: &mut Runtime,
    slot: usize,
    input: usize,
    target: &[usize; 3],
    weight: f32,
    events: &mut Vec<GraphEvent>,
    solve: impl FnOnce(&Skeleton, &mut Pose, &Vec3) -> Result<(), UpdateError>,
) -> Result<Out, UpdateError> {
    let out = eval(c, rt, input, slot, events)?;
    let w = weight.clamp(0.0, 1.0);
    if w > 0.0 {
        let sk = &c.skeleton;
        let goal = target_of(&rt.params, target);
        keep_input(rt, slot, w);
        solve(sk, &mut rt.pool[slot], &goal)?;
        apply_weight(rt, slot, w, sk)?;
    }
    Ok(out)
}

/// Foot-grounding node over `input`: contact curves in slots `curves`, solver `solver`,
/// weight `weight` (unclamped).
#[inline(never)]
#[allow(clippy::too_many_arguments)] // the node's fields, passed apart from the node
fn eval_foot(
    c: &Compiled,
    rt: &mut Runtime,
    slot: usize,
    input: usize,
    curves: &[usize],
    solver: usize,
    weight: f32,
    events: &mut Vec<GraphEvent>,
) -> Result<Out, UpdateError> {
    let out = eval(c, rt, input, slot, events)?;
    let w = weight.clamp(0.0, 1.0);
    if w > 0.0 && rt.ground.is_some() {
        let mut contacts = [1.0f32; MAX_LEGS];
        for (o, &s) in contacts.iter_mut().zip(curves) {
            *o = out.curves[s];
        }
        ground_feet(c, rt, slot, &contacts[..curves.len()], solver, w)?;
    }
    Ok(out)
}

/// The grounding itself, after the input was evaluated. Not inlined into [`eval_foot`],
/// whose frame stays on the stack while the input's subtree evaluates: the solver's
/// locals (most of a kilobyte) then take stack the subtree has finished with.
#[inline(never)]
fn ground_feet(
    c: &Compiled,
    rt: &mut Runtime,
    slot: usize,
    contacts: &[f32],
    solver: usize,
    w: f32,
) -> Result<(), UpdateError> {
    let sk = &c.skeleton;
    keep_input(rt, slot, w);
    let Runtime { feet, pool, ground: Some(ground), placement, .. } = rt else {
        unreachable!("the caller checked the ground")
    };
    let mut placement = *placement;
    let offset = feet[solver].apply(sk, &mut pool[slot], &mut placement, contacts, &**ground)?;
    rt.ground_offset = offset * w;
    apply_weight(rt, slot, w, sk)
}

/// Whether evaluating node `n` would give an empty pose (coverage 0) and change nothing
/// else: a machine in a state without a tree, not crossfading, that keeps no poses for
/// inertialization. A layer or additive node applies such a node with weight 0, so it
/// skips it (a layer's machine waiting in its empty state costs nothing: no rest pose
/// copied into a slot no one reads).
fn shows_nothing(c: &Compiled, rt: &Runtime, n: usize) -> bool {
    match c.nodes[n].data {
        NodeData::Machine { machine } => {
            let m = &rt.machines[machine];
            let spec = &c.machines[machine];
            !spec.inertializes && spec.states[m.current].node.is_none() && fade_alpha(m.blending.as_ref()).is_none()
        }
        _ => false,
    }
}

/// An IK target from its three parameters, each clamped into `±MAX_COORD` (a target a
/// million metres away is as far as any, and keeps the solvers' squares finite).
fn target_of(params: &[f32], target: &[usize; 3]) -> Vec3 {
    let c = |i: usize| params[target[i]].clamp(-MAX_COORD, MAX_COORD);
    Vec3::new(c(0), c(1), c(2))
}

/// Before a node changes slot `slot` in place with weight `w < 1`: keeps the input in
/// `slot + 1`.
fn keep_input(rt: &mut Runtime, slot: usize, w: f32) {
    if w < 1.0 {
        let (pose, copy) = two(&mut rt.pool, slot, slot + 1);
        copy.locals_mut().copy_from_slice(pose.locals());
    }
}

/// After: `slot = mix(input, changed, w)`.
fn apply_weight(rt: &mut Runtime, slot: usize, w: f32, sk: &Skeleton) -> Result<(), UpdateError> {
    if w < 1.0 {
        let (changed, input) = two(&mut rt.pool, slot, slot + 1);
        blend_two_into(input, changed, w, sk)?;
        rt.pool.swap(slot, slot + 1);
    }
    Ok(())
}

/// Evaluates `count` children (`child(rt, k)` gives the node, `None` for an empty state,
/// and its local weight) and mixes them by weight and coverage into `slot`.
#[inline(never)]
fn mix(
    c: &Compiled,
    rt: &mut Runtime,
    slot: usize,
    count: usize,
    child: impl Fn(&Runtime, usize) -> (Option<usize>, f32),
    events: &mut Vec<GraphEvent>,
) -> Result<Out, UpdateError> {
    let start = rt.motions.len();
    let (mut covered, mut total) = (0.0f32, 0.0f32);
    let mut curves = [0.0f32; MAX_CURVES];
    let mut first = true;
    for k in 0..count {
        let (node, w) = child(rt, k);
        if w <= 0.0 {
            continue;
        }
        let target = if first { slot } else { slot + 1 };
        let out = match node {
            Some(n) => eval(c, rt, n, target, events)?,
            None => {
                rt.pool[target].locals_mut().copy_from_slice(c.skeleton.rest_pose().locals());
                EMPTY
            }
        };
        let wc = w * out.coverage;
        if !first && wc > 0.0 {
            let t = if covered > 0.0 { wc / (covered + wc) } else { 1.0 };
            let (pose, other) = two(&mut rt.pool, slot, slot + 1);
            blend_two_into(pose, other, t.clamp(0.0, 1.0), &c.skeleton)?;
        }
        first = false;
        total += w;
        covered += wc;
        for (a, v) in curves.iter_mut().zip(&out.curves) {
            *a += wc * v;
        }
        if wc > 0.0 && rt.motions.len() < rt.motions.capacity() {
            rt.motions.push((out.motion, wc));
        }
    }
    if first {
        // Nothing had weight: the rest pose, not covered.
        rt.pool[slot].locals_mut().copy_from_slice(c.skeleton.rest_pose().locals());
        return Ok(EMPTY);
    }
    let motion = match &rt.motions[start..] {
        [(m, _)] => *m,
        many => blend_deltas(many.iter().map(|(m, w)| (m, *w))),
    };
    rt.motions.truncate(start);
    if covered > 0.0 {
        curves.iter_mut().for_each(|v| *v /= covered);
    } else {
        curves = [1.0; MAX_CURVES];
    }
    Ok(Out { motion, curves, coverage: if total > 0.0 { covered / total } else { 0.0 } })
}

#[inline(never)]
fn eval_machine(
    c: &Compiled,
    rt: &mut Runtime,
    mi: usize,
    slot: usize,
    events: &mut Vec<GraphEvent>,
) -> Result<Out, UpdateError> {
    let machine = &c.machines[mi];
    let states = &machine.states;
    let cur = rt.machines[mi].current;
    let mut out = match (fade_alpha(rt.machines[mi].blending.as_ref()), states[cur].node) {
        (Some((from, alpha)), _) => {
            let kids = [(states[from].node, 1.0 - alpha), (states[cur].node, alpha)];
            mix(c, rt, slot, 2, |_, k| kids[k], events)?
        }
        (None, Some(n)) => eval(c, rt, n, slot, events)?,
        (None, None) => mix(c, rt, slot, 1, |_, _| (None, 1.0), events)?,
    };
    if !machine.inertializes {
        return Ok(out);
    }
    let (dt, update) = (rt.dt, rt.update);
    let Runtime { machines, pool, .. } = rt;
    let m = &mut machines[mi];
    let continuous = m.shown_count >= 1 && m.last_update + 1 == update;
    if let Some(duration) = m.start_inertial.take() {
        if continuous {
            let before = (m.shown_count >= 2).then_some((&m.shown[1], m.shown_dt[0]));
            let source_motion = Some((&m.last_motion, m.shown_dt[0]));
            // The update of the switch shows the blend's first `dt` already: the offset
            // decays over what is left, so it ends with the transition.
            let left = duration - dt;
            m.inertial.start((&m.shown[0], before), source_motion, &mut pool[slot], &mut out.motion, dt, left);
        } else {
            m.inertial.stop();
        }
    } else if m.inertial.is_active() {
        if continuous {
            m.inertial.update(&m.shown[0], &mut pool[slot], &mut out.motion, dt);
        } else {
            m.inertial.stop();
        }
    }
    // Remember what was shown, for the next inertialization.
    m.shown.swap(0, 1);
    m.shown[0].locals_mut().copy_from_slice(pool[slot].locals());
    m.shown_dt = [dt, m.shown_dt[0]];
    m.shown_count = if continuous { (m.shown_count + 1).min(2) } else { 1 };
    m.last_update = update;
    m.last_motion = out.motion;
    Ok(out)
}
