//! A graph as it runs: names resolved to indices, nodes in pre-order from the root (a
//! node's subtree is the contiguous range after it), every constant precomputed. Built by
//! [`crate::compile`] from a checked description; read by [`crate::graph::Graph`] and the
//! instances.

use crate::blend_space::GradientBands;
use crate::desc::{CompareOp, PlayMode, SyncMode, TransitionMode};
use crate::error::Warning;
use crate::limits::MAX_CURVES;
use crate::param::ParamTable;
use crate::sync::MarkerTrack;
use anim_core::clip::{Clip, RuntimeClip};
use anim_core::pose::{Pose, Skeleton};
use anim_ik::{FootSettings, Leg, TwoBoneIk};
use anim_math::Vec3;
use std::sync::Arc;

/// A constant or a float parameter (by index).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum ScalarIn {
    Const(f32),
    Param(usize),
}

impl ScalarIn {
    /// The value now.
    #[inline]
    pub(crate) fn get(self, params: &[f32]) -> f32 {
        match self {
            ScalarIn::Const(v) => v,
            ScalarIn::Param(i) => params[i],
        }
    }
}

/// A clip as the graph plays it.
#[derive(Clone, Debug)]
pub(crate) struct ClipData {
    pub(crate) name: String,
    pub(crate) clip: Arc<Clip>,
    pub(crate) runtime: Option<Arc<RuntimeClip>>,
    pub(crate) duration: f32,
    pub(crate) markers: MarkerTrack,
    /// Per contact-curve slot, the clip's curve index (a clip without the curve counts as
    /// planted: 1).
    pub(crate) curves: [Option<usize>; MAX_CURVES],
}

/// What a node does, with its children as node indices.
#[derive(Clone, Debug)]
pub(crate) enum NodeData {
    Clip {
        clip: usize,
        speed: ScalarIn,
        mode: PlayMode,
        sync: Option<usize>,
        /// Index of this clip node among the clip nodes (its playback state).
        player: usize,
    },
    Space1d {
        param: usize,
        /// Children sorted by position.
        children: Vec<usize>,
        positions: Vec<f32>,
        /// Where its weights live in the instance's weight buffer.
        weights_at: usize,
    },
    Space2d {
        x: usize,
        y: usize,
        children: Vec<usize>,
        bands: GradientBands,
        weights_at: usize,
    },
    Blend {
        a: usize,
        b: usize,
        weight: ScalarIn,
    },
    Additive {
        base: usize,
        additive: usize,
        reference: usize,
        weight: ScalarIn,
    },
    Layer {
        base: usize,
        layer: usize,
        mask: Option<usize>,
        weight: ScalarIn,
    },
    TwoBone {
        input: usize,
        ik: TwoBoneIk,
        target: [usize; 3],
        pole: Option<Vec3>,
        weight: ScalarIn,
    },
    Aim {
        input: usize,
        joint: usize,
        forward: Vec3,
        up: Vec3,
        world_up: Vec3,
        target: [usize; 3],
        weight: ScalarIn,
    },
    FootIk {
        input: usize,
        legs: Vec<Leg>,
        settings: FootSettings,
        /// Contact-curve slot of each leg.
        curves: Vec<usize>,
        weight: ScalarIn,
        /// Index among the foot-grounding nodes (its solver state).
        solver: usize,
    },
    Machine {
        machine: usize,
    },
}

/// A node.
#[derive(Clone, Debug)]
pub(crate) struct Node {
    pub(crate) name: String,
    /// Number of nodes in its subtree, itself included (its subtree is `i..i + size`).
    pub(crate) size: usize,
    /// Pose slots it needs to evaluate, its result included.
    pub(crate) slots: usize,
    pub(crate) data: NodeData,
}

/// A compiled condition.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Cond {
    Always,
    Float { param: usize, op: CompareOp, value: f32 },
    Bool { param: usize, value: bool },
    Trigger(usize),
    ClipEnded,
    ExitTime(f32),
    All(Vec<Cond>),
    Any(Vec<Cond>),
    Not(Box<Cond>),
}

impl Cond {
    /// Whether it reads the state's leading clip.
    pub(crate) fn is_timed(&self) -> bool {
        match self {
            Cond::ClipEnded | Cond::ExitTime(_) => true,
            Cond::All(cs) | Cond::Any(cs) => cs.iter().any(Cond::is_timed),
            Cond::Not(c) => c.is_timed(),
            Cond::Always | Cond::Float { .. } | Cond::Bool { .. } | Cond::Trigger(_) => false,
        }
    }
}

/// A compiled transition.
#[derive(Clone, Debug)]
pub(crate) struct Transition {
    pub(crate) to: usize,
    pub(crate) cond: Cond,
    /// Triggers the condition tests: consumed when it fires.
    pub(crate) triggers: Vec<usize>,
    pub(crate) duration: f32,
    pub(crate) mode: TransitionMode,
    pub(crate) priority: i32,
    pub(crate) interruptible: bool,
}

/// A state.
#[derive(Clone, Debug)]
pub(crate) struct State {
    pub(crate) name: String,
    pub(crate) node: Option<usize>,
    pub(crate) transitions: Vec<Transition>,
    /// Whether a transition that can leave it (its own, or an any-state one to another
    /// state) tests the leading clip ("clip ended", exit time): only then is the leading
    /// clip looked up each update.
    pub(crate) timed: bool,
}

/// A state machine.
#[derive(Clone, Debug)]
pub(crate) struct Machine {
    /// Its node.
    pub(crate) node: usize,
    pub(crate) entry: usize,
    pub(crate) states: Vec<State>,
    pub(crate) any: Vec<Transition>,
    /// Whether any transition can inertialize (an inertialized one between two states with
    /// trees, or an interruptible crossfade, which inertializes when interrupted): only
    /// then does the machine keep the poses it showed.
    pub(crate) inertializes: bool,
}

/// A sync group.
#[derive(Clone, Debug)]
pub(crate) struct SyncGroup {
    pub(crate) name: String,
    pub(crate) mode: SyncMode,
    /// Its clip nodes.
    pub(crate) members: Vec<usize>,
}

/// Everything a graph is, compiled.
#[derive(Clone, Debug)]
pub(crate) struct Compiled {
    pub(crate) skeleton: Skeleton,
    pub(crate) params: ParamTable,
    pub(crate) clips: Vec<ClipData>,
    pub(crate) nodes: Vec<Node>,
    pub(crate) machines: Vec<Machine>,
    pub(crate) masks: Vec<(String, Vec<f32>)>,
    pub(crate) references: Vec<Pose>,
    pub(crate) sync_groups: Vec<SyncGroup>,
    pub(crate) curve_names: Vec<String>,
    pub(crate) marker_names: Vec<String>,
    /// Clip nodes, in node order (index = player).
    pub(crate) players: Vec<usize>,
    /// Length of the blend-space weight buffer.
    pub(crate) space_weights: usize,
    /// Foot-grounding nodes, in node order (index = solver).
    pub(crate) foot_nodes: Vec<usize>,
    pub(crate) warnings: Vec<Warning>,
}
