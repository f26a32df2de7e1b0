//! [`Graph`]: one character type's animation graph, built once, shared by every instance
//! (`Arc<Graph>`), never changed. Each character plays it through its own
//! [`GraphInstance`](crate::instance::GraphInstance).

use crate::clips::ClipSet;
use crate::compile::compile;
use crate::desc::GraphDesc;
use crate::error::{BuildError, Warning};
use crate::event::{ClipId, GraphEvent, NodeId, StateId};
use crate::node::{Compiled, NodeData};
use crate::param::{BoolParam, FloatParam, ParamError, ParamTable, TriggerParam};
use anim_core::pose::Skeleton;

/// A checked, compiled animation graph (see the [crate docs](crate)).
#[derive(Clone, Debug)]
pub struct Graph {
    pub(crate) c: Compiled,
}

/// What kind of node a [`NodeId`] is, for displays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeType {
    /// A clip.
    Clip,
    /// A 1D blend space.
    BlendSpace1d,
    /// A 2D blend space.
    BlendSpace2d,
    /// A blend.
    Blend,
    /// An additive node.
    Additive,
    /// A layer.
    Layer,
    /// Two-bone IK.
    TwoBoneIk,
    /// Aim.
    Aim,
    /// Foot grounding.
    FootIk,
    /// A state machine.
    StateMachine,
}

impl Graph {
    /// Checks `desc` completely, then builds the graph for `skeleton`, playing the clips of
    /// `clips` by name. Warnings (unreachable states, unused nodes) are kept in
    /// [`Graph::warnings`].
    ///
    /// # Errors
    /// The first problem found, with the JSON pointer of the value at fault.
    pub fn build(desc: &GraphDesc, skeleton: &Skeleton, clips: &ClipSet) -> Result<Self, BuildError> {
        Ok(Self { c: compile(desc, skeleton, clips)? })
    }

    /// The skeleton.
    pub fn skeleton(&self) -> &Skeleton {
        &self.c.skeleton
    }

    /// The parameters.
    pub fn params(&self) -> &ParamTable {
        &self.c.params
    }

    /// The handle of float parameter `name` (look it up once, set it every frame).
    ///
    /// # Errors
    /// No such parameter, or of another kind.
    pub fn float_param(&self, name: &str) -> Result<FloatParam, ParamError> {
        self.c.params.float(name)
    }

    /// The handle of bool parameter `name`.
    ///
    /// # Errors
    /// No such parameter, or of another kind.
    pub fn bool_param(&self, name: &str) -> Result<BoolParam, ParamError> {
        self.c.params.bool(name)
    }

    /// The handle of trigger parameter `name`.
    ///
    /// # Errors
    /// No such parameter, or of another kind.
    pub fn trigger_param(&self, name: &str) -> Result<TriggerParam, ParamError> {
        self.c.params.trigger(name)
    }

    /// What the build noticed and let pass.
    pub fn warnings(&self) -> &[Warning] {
        &self.c.warnings
    }

    /// Number of nodes in the root's tree.
    pub fn node_count(&self) -> usize {
        self.c.nodes.len()
    }

    /// The node named `name`, when it is part of the root's tree.
    pub fn node(&self, name: &str) -> Option<NodeId> {
        self.c.nodes.iter().position(|n| n.name == name).map(NodeId)
    }

    /// Every node of the root's tree, in pre-order (the root first).
    pub fn nodes(&self) -> impl ExactSizeIterator<Item = NodeId> + '_ {
        (0..self.c.nodes.len()).map(NodeId)
    }

    /// The root node (always `NodeId` 0).
    pub fn root(&self) -> NodeId {
        NodeId(0)
    }

    /// A node's name.
    pub fn node_name(&self, node: NodeId) -> Option<&str> {
        self.c.nodes.get(node.0).map(|n| n.name.as_str())
    }

    /// A node's kind.
    pub fn node_type(&self, node: NodeId) -> Option<NodeType> {
        Some(match self.c.nodes.get(node.0)?.data {
            NodeData::Clip { .. } => NodeType::Clip,
            NodeData::Space1d { .. } => NodeType::BlendSpace1d,
            NodeData::Space2d { .. } => NodeType::BlendSpace2d,
            NodeData::Blend { .. } => NodeType::Blend,
            NodeData::Additive { .. } => NodeType::Additive,
            NodeData::Layer { .. } => NodeType::Layer,
            NodeData::TwoBone { .. } => NodeType::TwoBoneIk,
            NodeData::Aim { .. } => NodeType::Aim,
            NodeData::FootIk { .. } => NodeType::FootIk,
            NodeData::Machine { .. } => NodeType::StateMachine,
        })
    }

    /// The state machines, in pre-order (outer machines first).
    pub fn machines(&self) -> impl ExactSizeIterator<Item = NodeId> + '_ {
        self.c.machines.iter().map(|m| NodeId(m.node))
    }

    pub(crate) fn machine_index(&self, machine: NodeId) -> Option<usize> {
        match self.c.nodes.get(machine.0)?.data {
            NodeData::Machine { machine } => Some(machine),
            _ => None,
        }
    }

    /// The state named `name` of machine `machine`.
    pub fn state(&self, machine: NodeId, name: &str) -> Option<StateId> {
        let m = &self.c.machines[self.machine_index(machine)?];
        m.states.iter().position(|s| s.name == name).map(StateId)
    }

    /// The names of machine `machine`'s states, in order (empty for another node).
    pub fn state_names(&self, machine: NodeId) -> Vec<&str> {
        self.machine_index(machine)
            .map_or_else(Vec::new, |m| self.c.machines[m].states.iter().map(|s| s.name.as_str()).collect())
    }

    /// A state's name.
    pub fn state_name(&self, machine: NodeId, state: StateId) -> Option<&str> {
        let m = &self.c.machines[self.machine_index(machine)?];
        m.states.get(state.0).map(|s| s.name.as_str())
    }

    /// The clip named `name` (among those the graph plays).
    pub fn clip(&self, name: &str) -> Option<ClipId> {
        self.c.clips.iter().position(|c| c.name == name).map(ClipId)
    }

    /// A clip's name.
    pub fn clip_name(&self, clip: ClipId) -> Option<&str> {
        self.c.clips.get(clip.0).map(|c| c.name.as_str())
    }

    /// The points of blend space `node` (1D points as `[x, 0]`), in the order of its
    /// children's weights ([`crate::instance::GraphInstance::blend_weights`]).
    pub fn blend_points(&self, node: NodeId) -> Vec<[f32; 2]> {
        match self.c.nodes.get(node.0).map(|n| &n.data) {
            Some(NodeData::Space1d { positions, .. }) => positions.iter().map(|&p| [p, 0.0]).collect(),
            Some(NodeData::Space2d { bands, .. }) => bands.points().to_vec(),
            _ => Vec::new(),
        }
    }

    /// The child nodes of blend space `node`, in the order of [`Graph::blend_points`].
    pub fn blend_children(&self, node: NodeId) -> Vec<NodeId> {
        match self.c.nodes.get(node.0).map(|n| &n.data) {
            Some(NodeData::Space1d { children, .. } | NodeData::Space2d { children, .. }) => {
                children.iter().map(|&c| NodeId(c)).collect()
            }
            _ => Vec::new(),
        }
    }

    /// The name of what `event` reports: the clip event's name, or the state's.
    pub fn event_name(&self, event: &GraphEvent) -> Option<&str> {
        match *event {
            GraphEvent::Clip { clip, event, .. } => {
                self.c.clips.get(clip.0)?.clip.events().get(event).map(|e| e.name.as_str())
            }
            GraphEvent::Enter { machine, state } | GraphEvent::Exit { machine, state } => {
                self.state_name(machine, state)
            }
            GraphEvent::Transition { machine, to, .. } => self.state_name(machine, to),
        }
    }

    /// Pose buffers an instance holds to evaluate the graph (each one pose of the
    /// skeleton), besides two per state machine for inertialization.
    pub fn pose_slots(&self) -> usize {
        self.c.nodes.first().map_or(1, |n| n.slots)
    }

    /// Names of the sync groups, in declaration order.
    pub fn sync_groups(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        self.c.sync_groups.iter().map(|g| g.name.as_str())
    }

    /// Names of the foot markers sync groups align (`foot_down:<curve>`, …), shared by
    /// every clip.
    pub fn marker_names(&self) -> &[String] {
        &self.c.marker_names
    }

    /// Names of the contact curves the foot-grounding nodes read.
    pub fn curve_names(&self) -> &[String] {
        &self.c.curve_names
    }
}
