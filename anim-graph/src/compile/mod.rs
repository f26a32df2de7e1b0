//! From a description to a runnable graph: every name resolved, every number checked,
//! every error with the JSON pointer of its value (see [`crate::error::BuildError`]),
//! before anything is built.
//!
//! The order of the checks: parameters, masks and sync groups; node names; the children
//! each node names (unknown names); cycles; a node used twice; the depth of the root's
//! tree; then each node's own fields (clips, joints, parameters, numbers, blend-space
//! points, machines and their conditions). Nodes the root's tree does not reach are
//! checked too, and reported as warnings.

mod check;
mod machine;

use crate::blend_space::{BlendSpaceError, GradientBands, check_1d};
use crate::clips::{ClipSet, foot_markers};
use crate::desc::{GraphDesc, NodeKind, PlayMode};
use crate::error::{BuildError, BuildErrorKind, Warning, WarningKind};
use crate::limits::{MAX_COORD, MAX_CURVES, MAX_DEPTH, MAX_LEGS, MAX_NODES, MAX_POINTS, MAX_SPEED};
use crate::node::{ClipData, Compiled, Node, NodeData, SyncGroup};
use crate::param::{ParamKind, ParamTable};
use crate::sync::{Marker, MarkerTrack};
use anim_core::blend::additive::make_additive_base_at;
use anim_core::clip::SoaSampler;
use anim_core::pose::{Pose, Skeleton};
use anim_ik::{FootGrounding, FootSettings, Leg, LegSolver, TwoBoneIk};
use check::{Result, Tables, at, count, err, mask_weights, name, number, vector};
use std::collections::HashMap;

/// The children a node names, with the pointer of each name.
fn children(ptr: &str, kind: &NodeKind) -> Vec<(String, String)> {
    let one = |field: &str, n: &str| (n.to_owned(), at(ptr, field));
    match kind {
        NodeKind::Clip(_) => Vec::new(),
        NodeKind::BlendSpace1d(s) => {
            s.points.iter().enumerate().map(|(i, p)| (p.node.clone(), at(&at(&at(ptr, "points"), i), "node"))).collect()
        }
        NodeKind::BlendSpace2d(s) => {
            s.points.iter().enumerate().map(|(i, p)| (p.node.clone(), at(&at(&at(ptr, "points"), i), "node"))).collect()
        }
        NodeKind::Blend(b) => vec![one("a", &b.a), one("b", &b.b)],
        NodeKind::Additive(a) => vec![one("base", &a.base), one("additive", &a.additive)],
        NodeKind::Layer(l) => vec![one("base", &l.base), one("layer", &l.layer)],
        NodeKind::TwoBoneIk(k) => vec![one("input", &k.input)],
        NodeKind::Aim(k) => vec![one("input", &k.input)],
        NodeKind::FootIk(k) => vec![one("input", &k.input)],
        NodeKind::StateMachine(m) => m
            .states
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.node.as_ref().map(|n| (n.clone(), at(&at(&at(ptr, "states"), i), "node"))))
            .collect(),
    }
}

/// The first cycle among `edges` (node → children), as `a → b → a`.
fn find_cycle(edges: &[Vec<usize>], names: &[&str]) -> Option<String> {
    let n = edges.len();
    // 0 = unvisited, 1 = on the stack, 2 = done.
    let mut color = vec![0u8; n];
    let mut parent = vec![usize::MAX; n];
    for start in 0..n {
        if color[start] != 0 {
            continue;
        }
        let mut stack = vec![(start, 0usize)];
        color[start] = 1;
        while let Some(&(v, next)) = stack.last() {
            if let Some(&c) = edges[v].get(next) {
                if let Some(top) = stack.last_mut() {
                    top.1 += 1;
                }
                match color[c] {
                    0 => {
                        color[c] = 1;
                        parent[c] = v;
                        stack.push((c, 0));
                    }
                    1 => {
                        let mut path = vec![names[c]];
                        let mut u = v;
                        while u != c && u != usize::MAX {
                            path.push(names[u]);
                            u = parent[u];
                        }
                        path.push(names[c]);
                        let last = path.len() - 1;
                        path[1..last].reverse();
                        return Some(path.join(" → "));
                    }
                    _ => {}
                }
            } else {
                color[v] = 2;
                stack.pop();
            }
        }
    }
    None
}

/// Builds the runnable form of `desc` for `skeleton`, playing clips of `set`.
pub(crate) fn compile(desc: &GraphDesc, skeleton: &Skeleton, set: &ClipSet) -> Result<Compiled> {
    for (i, c) in set.clips().iter().enumerate() {
        if set.clips()[..i].iter().any(|d| d.name() == c.name()) {
            return err("", BuildErrorKind::DuplicateClip { name: c.name().to_owned() });
        }
    }
    let (t, infos) = Tables::new(desc, skeleton)?;
    let masks = desc
        .masks
        .iter()
        .enumerate()
        .map(|(i, m)| Ok((m.name.clone(), mask_weights(&at("/masks", i), m, &t)?)))
        .collect::<Result<Vec<_>>>()?;
    count("/nodes", "nodes", desc.nodes.len(), MAX_NODES)?;
    let mut index: HashMap<&str, usize> = HashMap::new();
    for (i, n) in desc.nodes.iter().enumerate() {
        let ptr = at(&at("/nodes", i), "name");
        name(&ptr, &n.name)?;
        if index.insert(&n.name, i).is_some() {
            return err(ptr, BuildErrorKind::Duplicate { what: "node", name: n.name.clone() });
        }
    }
    let node_of = |ptr: &str, n: &str| {
        index.get(n).copied().map_or_else(|| err(ptr, BuildErrorKind::Unknown { what: "node", name: n.to_owned() }), Ok)
    };
    let root = node_of("/root", &desc.root)?;
    let mut edges = Vec::with_capacity(desc.nodes.len());
    let mut uses: Vec<Option<String>> = vec![None; desc.nodes.len()];
    let mut named = Vec::with_capacity(desc.nodes.len());
    for (i, n) in desc.nodes.iter().enumerate() {
        let list = children(&at("/nodes", i), &n.kind);
        let mut out = Vec::with_capacity(list.len());
        for (child, ptr) in &list {
            out.push(node_of(ptr, child)?);
        }
        named.push(list);
        edges.push(out);
    }
    let names: Vec<&str> = desc.nodes.iter().map(|n| n.name.as_str()).collect();
    if let Some(path) = find_cycle(&edges, &names) {
        let first = path.split(" → ").next().and_then(|n| index.get(n)).copied().unwrap_or(root);
        return err(at("/nodes", first), BuildErrorKind::Cycle { path });
    }
    for (list, targets) in named.iter().zip(&edges) {
        for ((_, ptr), &c) in list.iter().zip(targets) {
            if let Some(first) = &uses[c] {
                return err(ptr, BuildErrorKind::NodeReused { name: names[c].to_owned(), first: first.clone() });
            }
            uses[c] = Some(ptr.clone());
        }
    }
    // Pre-order from the root, depth-checked.
    let mut order = Vec::new();
    let mut stack = vec![(root, 1usize)];
    while let Some((v, depth)) = stack.pop() {
        if depth > MAX_DEPTH {
            return err(at("/nodes", v), BuildErrorKind::TooDeep { max: MAX_DEPTH });
        }
        order.push(v);
        stack.extend(edges[v].iter().rev().map(|&c| (c, depth + 1)));
    }
    let mut pos = vec![usize::MAX; desc.nodes.len()];
    for (k, &v) in order.iter().enumerate() {
        pos[v] = k;
    }
    let mut warnings = Vec::new();
    for (i, n) in desc.nodes.iter().enumerate() {
        if pos[i] == usize::MAX {
            warnings.push(Warning { pointer: at("/nodes", i), kind: WarningKind::UnusedNode { name: n.name.clone() } });
        }
    }
    let mut b =
        Builder { t: &t, set, clips: Vec::new(), clip_of: HashMap::new(), references: Vec::new(), curves: Vec::new() };
    let mut data = Vec::with_capacity(desc.nodes.len());
    let mut machines = Vec::new();
    for (i, n) in desc.nodes.iter().enumerate() {
        let ptr = at("/nodes", i);
        let d = match &n.kind {
            NodeKind::StateMachine(m) => {
                let mut m = machine::machine(&ptr, m, &t, &mut |p, s| node_of(p, s), &mut warnings)?;
                m.node = i;
                machines.push(m);
                NodeData::Machine { machine: machines.len() - 1 }
            }
            kind => b.node(&ptr, kind, &edges[i])?,
        };
        data.push(d);
    }
    // Keep the root's tree, renumbered in pre-order.
    let remap = |v: usize| pos[v];
    let mut nodes: Vec<Node> = Vec::with_capacity(order.len());
    let (mut players, mut foot_nodes, mut space_weights) = (Vec::new(), Vec::new(), 0usize);
    let mut kept_machines = Vec::new();
    for (k, &v) in order.iter().enumerate() {
        let mut d = data[v].clone();
        match &mut d {
            NodeData::Clip { player, .. } => {
                *player = players.len();
                players.push(k);
            }
            NodeData::Space1d { children, weights_at, .. } | NodeData::Space2d { children, weights_at, .. } => {
                children.iter_mut().for_each(|c| *c = remap(*c));
                *weights_at = space_weights;
                space_weights += children.len();
            }
            NodeData::Blend { a, b, .. } => (*a, *b) = (remap(*a), remap(*b)),
            NodeData::Additive { base, additive, .. } => (*base, *additive) = (remap(*base), remap(*additive)),
            NodeData::Layer { base, layer, .. } => (*base, *layer) = (remap(*base), remap(*layer)),
            NodeData::TwoBone { input, .. } | NodeData::Aim { input, .. } => *input = remap(*input),
            NodeData::FootIk { input, solver, .. } => {
                *input = remap(*input);
                *solver = foot_nodes.len();
                foot_nodes.push(k);
            }
            NodeData::Machine { machine } => {
                let mut m = machines[*machine].clone();
                m.node = k;
                m.states.iter_mut().for_each(|s| s.node = s.node.map(remap));
                *machine = kept_machines.len();
                kept_machines.push(m);
            }
        }
        nodes.push(Node { name: desc.nodes[v].name.clone(), size: 1, slots: 1, data: d });
    }
    // Subtree sizes and pose slots, children before parents.
    for k in (0..nodes.len()).rev() {
        let kids: Vec<usize> = edges[order[k]].iter().map(|&c| remap(c)).collect();
        nodes[k].size = 1 + kids.iter().map(|&c| nodes[c].size).sum::<usize>();
        let need = |c: usize| nodes[c].slots;
        nodes[k].slots = match &nodes[k].data {
            NodeData::Clip { .. } => 1,
            NodeData::Space1d { .. } | NodeData::Space2d { .. } | NodeData::Machine { .. } => {
                1 + kids.iter().map(|&c| need(c)).max().unwrap_or(0)
            }
            NodeData::Blend { a, b, .. } => need(*a).max(1 + need(*b)),
            NodeData::Additive { base, additive, .. } => need(*base).max(1 + need(*additive)),
            NodeData::Layer { base, layer, .. } => need(*base).max(1 + need(*layer)).max(3),
            NodeData::TwoBone { input, .. } | NodeData::Aim { input, .. } | NodeData::FootIk { input, .. } => {
                need(*input).max(2)
            }
        };
    }
    let sync_groups = desc
        .sync_groups
        .iter()
        .enumerate()
        .map(|(g, d)| SyncGroup {
            name: d.name.clone(),
            mode: d.mode,
            members: players
                .iter()
                .copied()
                .filter(|&k| matches!(nodes[k].data, NodeData::Clip { sync: Some(s), .. } if s == g))
                .collect(),
        })
        .collect();
    // Markers, with names shared by every clip.
    let contact: Vec<&str> = b.curves.iter().map(String::as_str).collect();
    let mut marker_names: Vec<String> = Vec::new();
    let mut clips = b.clips;
    for c in &mut clips {
        let mut ms = Vec::new();
        for (time, n) in foot_markers(&c.clip, &contact) {
            let id = marker_names.iter().position(|m| *m == n).unwrap_or_else(|| {
                marker_names.push(n.clone());
                marker_names.len() - 1
            });
            // At most a few markers per clip; ids stay far below u16::MAX with the caps.
            ms.push(Marker { time, name: id.min(usize::from(u16::MAX)) as u16, down: n.starts_with("foot_down:") });
        }
        c.markers = MarkerTrack::new(c.duration, ms);
        for (slot, curve) in b.curves.iter().enumerate() {
            c.curves[slot] = c.clip.curve_index(curve);
        }
    }
    Ok(Compiled {
        skeleton: skeleton.clone(),
        params: ParamTable::new(infos),
        clips,
        nodes,
        machines: kept_machines,
        masks,
        references: b.references,
        sync_groups,
        curve_names: b.curves,
        marker_names,
        players,
        space_weights,
        foot_nodes,
        warnings,
    })
}

/// What compiling the nodes collects.
struct Builder<'a> {
    t: &'a Tables<'a>,
    set: &'a ClipSet,
    clips: Vec<ClipData>,
    clip_of: HashMap<usize, usize>,
    references: Vec<Pose>,
    curves: Vec<String>,
}

impl Builder<'_> {
    /// The compiled index of clip `n` (at `ptr`), checked against the skeleton.
    fn clip(&mut self, ptr: &str, n: &str) -> Result<usize> {
        let Some(i) = self.set.find(n) else {
            return err(ptr, BuildErrorKind::UnknownClip { name: n.to_owned() });
        };
        if let Some(&c) = self.clip_of.get(&i) {
            return Ok(c);
        }
        let g = &self.set.clips()[i];
        let skeleton = self.t.skeleton;
        if let Err(anim_core::clip::ClipError::JointOutOfRange { joint, count, .. }) =
            g.clip().check_joints(skeleton.len())
        {
            return err(ptr, BuildErrorKind::ClipJoints { name: n.to_owned(), joint, count });
        }
        if let Some(r) = g.runtime_clip()
            && r.skeleton_id() != skeleton.id()
        {
            return err(ptr, BuildErrorKind::ClipSkeleton { name: n.to_owned() });
        }
        let duration = g.runtime_clip().map_or_else(|| g.clip().duration(), |r| SoaSampler::duration(&**r));
        self.clips.push(ClipData {
            name: n.to_owned(),
            clip: g.clip().clone(),
            runtime: g.runtime_clip().cloned(),
            duration,
            markers: MarkerTrack::default(),
            curves: [None; MAX_CURVES],
        });
        self.clip_of.insert(i, self.clips.len() - 1);
        Ok(self.clips.len() - 1)
    }

    fn node(&mut self, ptr: &str, kind: &NodeKind, kids: &[usize]) -> Result<NodeData> {
        let t = self.t;
        let float = |field: &str, p: &str| t.param(&at(ptr, field), p, ParamKind::Float);
        let unit = |field: &str, s: &crate::desc::Scalar| t.scalar(&at(ptr, field), s, 0.0, 1.0);
        Ok(match kind {
            NodeKind::Clip(c) => {
                let clip = self.clip(&at(ptr, "clip"), &c.clip)?;
                let sync = c.sync.as_ref().map(|g| t.sync_group(&at(ptr, "sync"), g)).transpose()?;
                if sync.is_some() && c.mode != PlayMode::Repeat {
                    return err(at(ptr, "loop"), BuildErrorKind::SyncedClipMode { mode: c.mode.name() });
                }
                let speed = t.scalar(&at(ptr, "speed"), &c.speed, -MAX_SPEED, MAX_SPEED)?;
                NodeData::Clip { clip, speed, mode: c.mode, sync, player: 0 }
            }
            NodeKind::BlendSpace1d(s) => {
                let pts = at(ptr, "points");
                count(&pts, "points", s.points.len(), MAX_POINTS)?;
                let mut at_ = Vec::with_capacity(s.points.len());
                for (i, p) in s.points.iter().enumerate() {
                    at_.push(number(&at(&at(&pts, i), "at"), p.at, -MAX_COORD, MAX_COORD)?);
                }
                check_1d(&at_).map_err(|e| space_error(&pts, e))?;
                let mut order: Vec<usize> = (0..at_.len()).collect();
                order.sort_by(|&a, &b| at_[a].total_cmp(&at_[b]));
                NodeData::Space1d {
                    param: float("param", &s.param)?,
                    children: order.iter().map(|&i| kids[i]).collect(),
                    positions: order.iter().map(|&i| at_[i]).collect(),
                    weights_at: 0,
                }
            }
            NodeKind::BlendSpace2d(s) => {
                let pts = at(ptr, "points");
                count(&pts, "points", s.points.len(), MAX_POINTS)?;
                for (i, p) in s.points.iter().enumerate() {
                    let pp = at(&at(&pts, i), "at");
                    for (c, v) in p.at.iter().enumerate() {
                        number(&at(&pp, c), *v, -MAX_COORD, MAX_COORD)?;
                    }
                }
                let points: Vec<[f32; 2]> = s.points.iter().map(|p| p.at).collect();
                let bands = GradientBands::new(s.form, &points).map_err(|e| space_error(&pts, e))?;
                NodeData::Space2d {
                    x: float("x", &s.x)?,
                    y: float("y", &s.y)?,
                    children: kids.to_vec(),
                    bands,
                    weights_at: 0,
                }
            }
            NodeKind::Blend(d) => NodeData::Blend { a: kids[0], b: kids[1], weight: unit("weight", &d.weight)? },
            NodeKind::Additive(d) => {
                let rp = at(ptr, "reference");
                let c = self.clip(&at(&rp, "clip"), &d.reference.clip)?;
                let clip = self.clips[c].clip.clone();
                let time = number(&at(&rp, "time"), d.reference.time, 0.0, clip.duration())?;
                let pose = make_additive_base_at(t.skeleton, &clip, time)
                    .map_err(|_| BuildError::new(at(&rp, "clip"), BuildErrorKind::NotFinite))?;
                self.references.push(pose);
                NodeData::Additive {
                    base: kids[0],
                    additive: kids[1],
                    reference: self.references.len() - 1,
                    weight: t.scalar(&at(ptr, "weight"), &d.weight, -10.0, 10.0)?,
                }
            }
            NodeKind::Layer(d) => NodeData::Layer {
                base: kids[0],
                layer: kids[1],
                mask: d.mask.as_ref().map(|m| t.mask(&at(ptr, "mask"), m)).transpose()?,
                weight: unit("weight", &d.weight)?,
            },
            NodeKind::TwoBoneIk(d) => {
                let jp = at(ptr, "joints");
                let j: Vec<usize> =
                    d.joints.iter().enumerate().map(|(i, n)| t.joint(&at(&jp, i), n)).collect::<Result<_>>()?;
                self.chain(&jp, &d.joints, &j)?;
                NodeData::TwoBone {
                    input: kids[0],
                    ik: TwoBoneIk::new(t.skeleton, j[0], j[1], j[2])
                        .map_err(|e| BuildError::new(jp.clone(), BuildErrorKind::Ik(e)))?,
                    target: self.target(ptr, &d.target)?,
                    pole: d.pole.as_ref().map(|p| vector(&at(ptr, "pole"), p, MAX_COORD)).transpose()?,
                    weight: unit("weight", &d.weight)?,
                }
            }
            NodeKind::Aim(d) => {
                let forward = vector(&at(ptr, "forward"), &d.forward, MAX_COORD)?;
                let up = vector(&at(ptr, "up"), &d.up, MAX_COORD)?;
                let f2 = forward.norm_squared();
                if f2 <= 0.0 || forward.cross(&up).norm_squared() <= 1e-12 * f2 * up.norm_squared().max(1e-30) {
                    return err(at(ptr, "up"), BuildErrorKind::BadAxes);
                }
                NodeData::Aim {
                    input: kids[0],
                    joint: t.joint(&at(ptr, "joint"), &d.joint)?,
                    forward,
                    up,
                    world_up: vector(&at(ptr, "world_up"), &d.world_up, MAX_COORD)?,
                    target: self.target(ptr, &d.target)?,
                    weight: unit("weight", &d.weight)?,
                }
            }
            NodeKind::FootIk(d) => self.foot(ptr, d, kids[0])?,
            NodeKind::StateMachine(_) => unreachable!("machines are compiled by the caller"),
        })
    }

    /// Checks that `joints` (named `names`, at `ptr/i`) are each the parent of the next.
    fn chain(&self, ptr: &str, names: &[String], joints: &[usize]) -> Result<()> {
        for k in 1..joints.len() {
            if self.t.skeleton.parent(joints[k]) != Some(joints[k - 1]) {
                return err(
                    at(ptr, k),
                    BuildErrorKind::NotAChain { parent: names[k - 1].clone(), child: names[k].clone() },
                );
            }
        }
        Ok(())
    }

    fn target(&self, ptr: &str, names: &[String; 3]) -> Result<[usize; 3]> {
        let tp = at(ptr, "target");
        let mut out = [0; 3];
        for (i, n) in names.iter().enumerate() {
            out[i] = self.t.param(&at(&tp, i), n, ParamKind::Float)?;
        }
        Ok(out)
    }

    fn foot(&mut self, ptr: &str, d: &crate::desc::FootIkDesc, input: usize) -> Result<NodeData> {
        let t = self.t;
        let lp = at(ptr, "legs");
        count(&lp, "legs", d.legs.len(), MAX_LEGS)?;
        if d.legs.is_empty() {
            return err(&lp, BuildErrorKind::Empty { what: "a foot-grounding node", needs: "a leg" });
        }
        let mut legs = Vec::with_capacity(d.legs.len());
        let mut curves = Vec::with_capacity(d.legs.len());
        for (i, l) in d.legs.iter().enumerate() {
            let p = at(&lp, i);
            let names = [l.hip.clone(), l.knee.clone(), l.ankle.clone(), l.toe.clone()];
            let fields = ["hip", "knee", "ankle", "toe"];
            let mut j = [0; 4];
            for k in 0..4 {
                j[k] = t.joint(&at(&p, fields[k]), &names[k])?;
                if k > 0 && t.skeleton.parent(j[k]) != Some(j[k - 1]) {
                    return err(
                        at(&p, fields[k]),
                        BuildErrorKind::NotAChain { parent: names[k - 1].clone(), child: names[k].clone() },
                    );
                }
            }
            name(&at(&p, "contact"), &l.contact)?;
            let slot = self.curves.iter().position(|c| *c == l.contact).unwrap_or_else(|| {
                self.curves.push(l.contact.clone());
                self.curves.len() - 1
            });
            if self.curves.len() > MAX_CURVES {
                return err(
                    at(&p, "contact"),
                    BuildErrorKind::TooManyCurves { count: self.curves.len(), max: MAX_CURVES },
                );
            }
            curves.push(slot);
            legs.push(Leg { hip: j[0], knee: j[1], ankle: j[2], toe: j[3], contact_curve: l.contact.clone() });
        }
        let settings = FootSettings {
            ankle_height: number(&at(ptr, "ankle_height"), d.ankle_height, 0.0, MAX_COORD)?,
            toe_height: number(&at(ptr, "toe_height"), d.toe_height, 0.0, MAX_COORD)?,
            search_below: number(&at(ptr, "search_below"), d.search_below, 0.0, MAX_COORD)?,
            adjust_root: d.adjust_root,
            align_toes: d.align_toes,
            solver: LegSolver::TwoBone,
        };
        FootGrounding::new(t.skeleton, legs.clone(), settings).map_err(|e| BuildError::new(lp.clone(), e.into()))?;
        Ok(NodeData::FootIk {
            input,
            legs,
            settings,
            curves,
            weight: t.scalar(&at(ptr, "weight"), &d.weight, 0.0, 1.0)?,
            solver: 0,
        })
    }
}

/// A blend-space error at the point it names (`points/i/at`).
fn space_error(pts: &str, e: BlendSpaceError) -> BuildError {
    match e {
        BlendSpaceError::TooFewPoints(n) => BuildError::new(pts, BuildErrorKind::TooFewPoints { count: n }),
        BlendSpaceError::Coincident(a, b) => {
            BuildError::new(at(&at(pts, b), "at"), BuildErrorKind::CoincidentPoints { first: a, second: b })
        }
        BlendSpaceError::NotFinite(i) => BuildError::new(at(&at(pts, i), "at"), BuildErrorKind::NotFinite),
    }
}
