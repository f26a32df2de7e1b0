//! The first pass of an update, top-down from the root: machines take their transitions
//! and advance their blends ([`super::machine`]), blend nodes read their parameters, and
//! every node gets its weight in the output pose. A child whose weight is zero is not
//! visited: it keeps weight 0, and the later passes neither advance nor sample it.

use super::machine::{choose, fire, leading_player};
use super::state::Runtime;
use crate::blend_space::weights_1d;
use crate::event::GraphEvent;
use crate::limits::MAX_COORD;
use crate::node::{Compiled, NodeData};

/// Visits node `n` with weight `w` (see the [module docs](self)).
pub(crate) fn visit(c: &Compiled, rt: &mut Runtime, n: usize, w: f32, events: &mut Vec<GraphEvent>) {
    rt.weights[n] = w;
    match &c.nodes[n].data {
        NodeData::Clip { .. } => {}
        NodeData::Space1d { param, children, positions, weights_at } => {
            let x = rt.params[*param].clamp(-MAX_COORD, MAX_COORD);
            rt.space_inputs[n] = [x, 0.0];
            let range = *weights_at..*weights_at + children.len();
            weights_1d(positions, x, &mut rt.space_weights[range.clone()]);
            for (k, &child) in children.iter().enumerate() {
                let wk = rt.space_weights[range.start + k];
                if wk > 0.0 {
                    visit_child(c, rt, child, w * wk, events);
                }
            }
        }
        NodeData::Space2d { x, y, children, bands, weights_at } => {
            // Points lie within ±MAX_COORD; inputs beyond weigh like inputs at the edge.
            let p = [rt.params[*x].clamp(-MAX_COORD, MAX_COORD), rt.params[*y].clamp(-MAX_COORD, MAX_COORD)];
            rt.space_inputs[n] = p;
            let range = *weights_at..*weights_at + children.len();
            bands.weights(p, &mut rt.space_weights[range.clone()]);
            for (k, &child) in children.iter().enumerate() {
                let wk = rt.space_weights[range.start + k];
                if wk > 0.0 {
                    visit_child(c, rt, child, w * wk, events);
                }
            }
        }
        NodeData::Blend { a, b, weight } => {
            let t = weight.get(&rt.params).clamp(0.0, 1.0);
            if t < 1.0 {
                visit(c, rt, *a, w * (1.0 - t), events);
            }
            if t > 0.0 {
                visit(c, rt, *b, w * t, events);
            }
        }
        NodeData::Additive { base, additive, weight, .. } => {
            visit(c, rt, *base, w, events);
            let a = weight.get(&rt.params).abs().min(1.0);
            if a > 0.0 {
                visit(c, rt, *additive, w * a, events);
            }
        }
        NodeData::Layer { base, layer, weight, .. } => {
            visit(c, rt, *base, w, events);
            let l = weight.get(&rt.params).clamp(0.0, 1.0);
            if l > 0.0 {
                visit(c, rt, *layer, w * l, events);
            }
        }
        NodeData::TwoBone { input, .. } | NodeData::Aim { input, .. } | NodeData::FootIk { input, .. } => {
            visit(c, rt, *input, w, events);
        }
        NodeData::Machine { machine } => visit_machine(c, rt, *machine, w, events),
    }
}

/// [`visit`] for a blend's child: a clip (a leaf, the usual child of a blend space) gets
/// its weight here, without a call.
#[inline(always)]
fn visit_child(c: &Compiled, rt: &mut Runtime, n: usize, w: f32, events: &mut Vec<GraphEvent>) {
    if let NodeData::Clip { .. } = c.nodes[n].data {
        rt.weights[n] = w;
    } else {
        visit(c, rt, n, w, events);
    }
}

/// Crossfade weight of the target state (1 without a crossfade).
pub(crate) fn fade_alpha(b: Option<&super::state::Blending>) -> Option<(usize, f32)> {
    match b {
        Some(b) if b.crossfade && b.elapsed < b.duration => Some((b.from, (b.elapsed / b.duration).clamp(0.0, 1.0))),
        _ => None,
    }
}

fn visit_machine(c: &Compiled, rt: &mut Runtime, mi: usize, w: f32, events: &mut Vec<GraphEvent>) {
    if let Some(tr) = choose(c, rt, mi) {
        fire(c, rt, mi, tr, events);
    }
    let dt = rt.dt;
    let mrt = &mut rt.machines[mi];
    mrt.state_time += dt;
    if let Some(b) = &mut mrt.blending {
        b.elapsed += dt;
        if b.elapsed >= b.duration {
            mrt.blending = None;
        }
    }
    let cur = mrt.current;
    let fade = fade_alpha(mrt.blending.as_ref());
    let states = &c.machines[mi].states;
    match fade {
        Some((from, alpha)) => {
            if let Some(n) = states[from].node {
                visit(c, rt, n, w * (1.0 - alpha), events);
                if states[from].timed {
                    rt.machines[mi].timing[from] = leading_player(c, rt, n);
                }
            }
            if let Some(n) = states[cur].node
                && alpha > 0.0
            {
                visit(c, rt, n, w * alpha, events);
            }
        }
        None => {
            if let Some(n) = states[cur].node {
                visit(c, rt, n, w, events);
            }
        }
    }
    if let Some(n) = states[cur].node
        && states[cur].timed
    {
        rt.machines[mi].timing[cur] = leading_player(c, rt, n);
    }
}
