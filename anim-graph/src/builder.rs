//! Building a graph in code. [`GraphBuilder`] fills a [`GraphDesc`], the same
//! description a file loads into, so a graph built here and one loaded from its JSON
//! ([`crate::file::to_json`]) are the same graph, checked the same way, with the same
//! JSON pointers in their errors.
//!
//! ```
//! use anim_graph::builder::GraphBuilder;
//! use anim_graph::desc::{Condition, SpaceForm, TransitionMode};
//!
//! let mut b = GraphBuilder::new();
//! b.float("vx", 0.0).float("vz", 0.0).trigger("jump");
//! b.clip("idle", "idle");
//! b.clip("walk", "walk");
//! b.clip("jump_clip", "jump").once();
//! b.blend_space_2d("move", "vx", "vz", SpaceForm::Polar, &[("idle", [0.0, 0.0]), ("walk", [0.0, 1.0])]);
//! let mut m = b.machine("main", "locomotion");
//! m.state("locomotion", "move").state("jump", "jump_clip");
//! m.transition("locomotion", "jump", Condition::trigger("jump")).inertialize(0.15);
//! m.transition("jump", "locomotion", Condition::ClipEnded).crossfade(0.25);
//! assert_eq!(b.desc().nodes.len(), 5);
//! ```

use crate::clips::ClipSet;
use crate::desc::{
    AdditiveDesc, AimDesc, BlendDesc, BlendPoint1d, BlendPoint2d, BlendSpace1dDesc, BlendSpace2dDesc, ClipNodeDesc,
    CompareOp, Condition, FootIkDesc, GraphDesc, LayerDesc, LegDesc, MachineDesc, MaskDesc, MaskJoint, NodeDesc,
    NodeKind, ParamDesc, PlayMode, ReferenceDesc, Scalar, SpaceForm, StateDesc, SyncGroupDesc, SyncMode,
    TransitionDesc, TransitionMode, TwoBoneIkDesc,
};
use crate::error::BuildError;
use crate::graph::Graph;
use crate::param::ParamKind;
use anim_core::pose::Skeleton;

impl Condition {
    /// `param op value` on a float parameter.
    pub fn float(param: &str, op: CompareOp, value: f32) -> Self {
        Condition::Float { param: param.to_owned(), op, value }
    }

    /// A bool parameter equals `value`.
    pub fn bool(param: &str, value: bool) -> Self {
        Condition::Bool { param: param.to_owned(), value }
    }

    /// A trigger is set.
    pub fn trigger(param: &str) -> Self {
        Condition::Trigger(param.to_owned())
    }
}

impl TransitionDesc {
    /// A transition to `to` when `condition` holds: a 0.2 s crossfade, priority 0, not
    /// interruptible (the file format's defaults).
    pub fn new(to: &str, condition: Condition) -> Self {
        Self {
            to: to.to_owned(),
            condition,
            duration: 0.2,
            mode: TransitionMode::Crossfade,
            priority: 0,
            interruptible: false,
        }
    }

    /// Crossfades over `duration` seconds.
    pub fn crossfade(&mut self, duration: f32) -> &mut Self {
        (self.mode, self.duration) = (TransitionMode::Crossfade, duration);
        self
    }

    /// Inertializes over `duration` seconds.
    pub fn inertialize(&mut self, duration: f32) -> &mut Self {
        (self.mode, self.duration) = (TransitionMode::Inertialize, duration);
        self
    }

    /// Sets the priority.
    pub fn priority(&mut self, priority: i32) -> &mut Self {
        self.priority = priority;
        self
    }

    /// Lets transitions out of the target fire while this one blends.
    pub fn interruptible(&mut self) -> &mut Self {
        self.interruptible = true;
        self
    }
}

impl ClipNodeDesc {
    /// Plays once and holds the last frame.
    pub fn once(&mut self) -> &mut Self {
        self.mode = PlayMode::Once;
        self
    }

    /// Loops back and forth.
    pub fn ping_pong(&mut self) -> &mut Self {
        self.mode = PlayMode::PingPong;
        self
    }

    /// Plays at `speed` (a number or a float parameter's name).
    pub fn speed(&mut self, speed: impl Into<Scalar>) -> &mut Self {
        self.speed = speed.into();
        self
    }

    /// Joins sync group `group`.
    pub fn sync(&mut self, group: &str) -> &mut Self {
        self.sync = Some(group.to_owned());
        self
    }
}

/// Fills a [`GraphDesc`] (see the [module docs](self)). Every method adds one entry;
/// nothing is checked until [`GraphBuilder::build`].
#[derive(Clone, Debug, Default)]
pub struct GraphBuilder {
    desc: GraphDesc,
}

impl GraphBuilder {
    /// An empty description.
    pub fn new() -> Self {
        Self::default()
    }

    /// The description so far.
    pub fn desc(&self) -> &GraphDesc {
        &self.desc
    }

    /// The description, with `root` as the output node.
    pub fn into_desc(mut self, root: &str) -> GraphDesc {
        self.desc.root = root.to_owned();
        self.desc
    }

    /// Checks the description and builds the graph with `root` as the output node.
    ///
    /// # Errors
    /// As [`Graph::build`].
    pub fn build(&self, root: &str, skeleton: &Skeleton, clips: &ClipSet) -> Result<Graph, BuildError> {
        let mut desc = self.desc.clone();
        desc.root = root.to_owned();
        Graph::build(&desc, skeleton, clips)
    }

    fn param(&mut self, name: &str, kind: ParamKind, default: f32, range: Option<(f32, f32)>) -> &mut Self {
        self.desc.parameters.push(ParamDesc { name: name.to_owned(), kind, default, range });
        self
    }

    /// A float parameter.
    pub fn float(&mut self, name: &str, default: f32) -> &mut Self {
        self.param(name, ParamKind::Float, default, None)
    }

    /// A float parameter clamped into `[min, max]`.
    pub fn float_range(&mut self, name: &str, default: f32, min: f32, max: f32) -> &mut Self {
        self.param(name, ParamKind::Float, default, Some((min, max)))
    }

    /// A bool parameter.
    pub fn bool(&mut self, name: &str, default: bool) -> &mut Self {
        self.param(name, ParamKind::Bool, f32::from(u8::from(default)), None)
    }

    /// A trigger.
    pub fn trigger(&mut self, name: &str) -> &mut Self {
        self.param(name, ParamKind::Trigger, 0.0, None)
    }

    /// A mask: `(joint, whole subtree, weight)` entries, later entries overwriting earlier.
    pub fn mask(&mut self, name: &str, entries: &[(&str, bool, f32)]) -> &mut Self {
        let joints = entries
            .iter()
            .map(|&(joint, subtree, weight)| MaskJoint { joint: joint.to_owned(), subtree, weight })
            .collect();
        self.desc.masks.push(MaskDesc { name: name.to_owned(), joints });
        self
    }

    /// A sync group.
    pub fn sync_group(&mut self, name: &str, mode: SyncMode) -> &mut Self {
        self.desc.sync_groups.push(SyncGroupDesc { name: name.to_owned(), mode });
        self
    }

    /// Adds a node as described.
    pub fn node(&mut self, name: &str, kind: NodeKind) -> &mut NodeKind {
        self.desc.nodes.push(NodeDesc { name: name.to_owned(), kind });
        &mut self.desc.nodes.last_mut().expect("just pushed").kind
    }

    /// A clip node playing clip `clip`, looping at speed 1; adjust it through the result.
    pub fn clip(&mut self, name: &str, clip: &str) -> &mut ClipNodeDesc {
        let kind = NodeKind::Clip(ClipNodeDesc {
            clip: clip.to_owned(),
            speed: Scalar::Const(1.0),
            mode: PlayMode::Repeat,
            sync: None,
        });
        match self.node(name, kind) {
            NodeKind::Clip(c) => c,
            _ => unreachable!("a clip node was just added"),
        }
    }

    /// A 1D blend space over float parameter `param`: `(node, position)` points.
    pub fn blend_space_1d(&mut self, name: &str, param: &str, points: &[(&str, f32)]) -> &mut Self {
        let points = points.iter().map(|&(node, at)| BlendPoint1d { node: node.to_owned(), at }).collect();
        self.node(name, NodeKind::BlendSpace1d(BlendSpace1dDesc { param: param.to_owned(), points }));
        self
    }

    /// A 2D blend space over float parameters `x`, `y`: `(node, [x, y])` points.
    pub fn blend_space_2d(
        &mut self,
        name: &str,
        x: &str,
        y: &str,
        form: SpaceForm,
        points: &[(&str, [f32; 2])],
    ) -> &mut Self {
        let points = points.iter().map(|&(node, at)| BlendPoint2d { node: node.to_owned(), at }).collect();
        self.node(name, NodeKind::BlendSpace2d(BlendSpace2dDesc { x: x.to_owned(), y: y.to_owned(), form, points }));
        self
    }

    /// `mix(a, b, weight)`.
    pub fn blend(&mut self, name: &str, a: &str, b: &str, weight: impl Into<Scalar>) -> &mut Self {
        let kind = NodeKind::Blend(BlendDesc { a: a.to_owned(), b: b.to_owned(), weight: weight.into() });
        self.node(name, kind);
        self
    }

    /// `base + weight · (additive − reference)`, the reference being clip
    /// `reference_clip` at `reference_time`.
    pub fn additive(
        &mut self,
        name: &str,
        base: &str,
        additive: &str,
        reference_clip: &str,
        reference_time: f32,
        weight: impl Into<Scalar>,
    ) -> &mut Self {
        self.node(
            name,
            NodeKind::Additive(AdditiveDesc {
                base: base.to_owned(),
                additive: additive.to_owned(),
                reference: ReferenceDesc { clip: reference_clip.to_owned(), time: reference_time },
                weight: weight.into(),
            }),
        );
        self
    }

    /// `mix(base, layer, weight · mask[joint])`.
    pub fn layer(
        &mut self,
        name: &str,
        base: &str,
        layer: &str,
        mask: Option<&str>,
        weight: impl Into<Scalar>,
    ) -> &mut Self {
        self.node(
            name,
            NodeKind::Layer(LayerDesc {
                base: base.to_owned(),
                layer: layer.to_owned(),
                mask: mask.map(str::to_owned),
                weight: weight.into(),
            }),
        );
        self
    }

    /// Two-bone IK of `joints` (upper, middle, end) towards the model-space point the
    /// float parameters `target` hold, at full weight; adjust it through the result.
    pub fn two_bone_ik(&mut self, name: &str, input: &str, joints: [&str; 3], target: [&str; 3]) -> &mut TwoBoneIkDesc {
        let kind = NodeKind::TwoBoneIk(TwoBoneIkDesc {
            input: input.to_owned(),
            joints: joints.map(str::to_owned),
            target: target.map(str::to_owned),
            pole: None,
            weight: Scalar::Const(1.0),
        });
        match self.node(name, kind) {
            NodeKind::TwoBoneIk(k) => k,
            _ => unreachable!("an IK node was just added"),
        }
    }

    /// Aim of `joint` (local `forward` towards the target, local `up` leaning to +y),
    /// at full weight; adjust it through the result.
    pub fn aim(
        &mut self,
        name: &str,
        input: &str,
        joint: &str,
        forward: [f32; 3],
        up: [f32; 3],
        target: [&str; 3],
    ) -> &mut AimDesc {
        let kind = NodeKind::Aim(AimDesc {
            input: input.to_owned(),
            joint: joint.to_owned(),
            forward,
            up,
            world_up: [0.0, 1.0, 0.0],
            target: target.map(str::to_owned),
            weight: Scalar::Const(1.0),
        });
        match self.node(name, kind) {
            NodeKind::Aim(k) => k,
            _ => unreachable!("an aim node was just added"),
        }
    }

    /// Foot grounding of `legs` with `anim_ik::FootSettings`' defaults; adjust it through
    /// the result.
    pub fn foot_ik(&mut self, name: &str, input: &str, legs: Vec<LegDesc>) -> &mut FootIkDesc {
        let d = anim_ik::FootSettings::default();
        let kind = NodeKind::FootIk(FootIkDesc {
            input: input.to_owned(),
            legs,
            ankle_height: d.ankle_height,
            toe_height: d.toe_height,
            search_below: d.search_below,
            adjust_root: d.adjust_root,
            align_toes: d.align_toes,
            weight: Scalar::Const(1.0),
        });
        match self.node(name, kind) {
            NodeKind::FootIk(k) => k,
            _ => unreachable!("a foot node was just added"),
        }
    }

    /// A state machine starting in state `entry`; add its states and transitions through
    /// the result.
    pub fn machine(&mut self, name: &str, entry: &str) -> MachineBuilder<'_> {
        let kind =
            NodeKind::StateMachine(MachineDesc { entry: entry.to_owned(), states: Vec::new(), any_state: Vec::new() });
        match self.node(name, kind) {
            NodeKind::StateMachine(m) => MachineBuilder { m },
            _ => unreachable!("a machine was just added"),
        }
    }
}

/// Adds states and transitions to a machine of a [`GraphBuilder`].
#[derive(Debug)]
pub struct MachineBuilder<'a> {
    m: &'a mut MachineDesc,
}

impl MachineBuilder<'_> {
    /// A state playing node `node`.
    pub fn state(&mut self, name: &str, node: &str) -> &mut Self {
        self.m.states.push(StateDesc { name: name.to_owned(), node: Some(node.to_owned()), transitions: Vec::new() });
        self
    }

    /// An empty state (no pose: for a layer's machine that plays nothing at times).
    pub fn empty_state(&mut self, name: &str) -> &mut Self {
        self.m.states.push(StateDesc { name: name.to_owned(), node: None, transitions: Vec::new() });
        self
    }

    /// A transition from state `from` to `to`; adjust it through the result. A state
    /// `from` not added yet is added, playing the node of the same name.
    pub fn transition(&mut self, from: &str, to: &str, condition: Condition) -> &mut TransitionDesc {
        let i = match self.m.states.iter().position(|s| s.name == from) {
            Some(i) => i,
            None => {
                self.state(from, from);
                self.m.states.len() - 1
            }
        };
        let s = &mut self.m.states[i];
        s.transitions.push(TransitionDesc::new(to, condition));
        s.transitions.last_mut().expect("just pushed")
    }

    /// A transition from any state to `to`; adjust it through the result.
    pub fn any_state(&mut self, to: &str, condition: Condition) -> &mut TransitionDesc {
        self.m.any_state.push(TransitionDesc::new(to, condition));
        self.m.any_state.last_mut().expect("just pushed")
    }
}
