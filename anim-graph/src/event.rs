//! What an update reports: the ids that name nodes, states and clips, and the
//! [`GraphEvent`]s an update fires. At the bottom of the crate: it names no other module.

/// A node of a graph (its index in the graph's pre-order; see
/// [`crate::graph::Graph::node`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub(crate) usize);

impl NodeId {
    /// The index (0 is the root).
    pub fn index(self) -> usize {
        self.0
    }
}

/// A state of a state machine (its index in the machine's `states`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StateId(pub(crate) usize);

impl StateId {
    /// The index.
    pub fn index(self) -> usize {
        self.0
    }
}

/// A clip of a graph (see [`crate::graph::Graph::clip_name`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClipId(pub(crate) usize);

/// Something that happened during an update, in the order it happened: state changes
/// (while the machines update, top-down) first, then the clip events (while the nodes are
/// evaluated). Copyable and free of strings, so a buffer of them allocates nothing per
/// frame; [`crate::graph::Graph::event_name`] gives the names.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum GraphEvent {
    /// A transition started (it fired).
    Transition {
        /// The machine.
        machine: NodeId,
        /// The state it leaves.
        from: StateId,
        /// The state it enters.
        to: StateId,
    },
    /// A state was left.
    Exit {
        /// The machine.
        machine: NodeId,
        /// The state.
        state: StateId,
    },
    /// A state was entered.
    Enter {
        /// The machine.
        machine: NodeId,
        /// The state.
        state: StateId,
    },
    /// A clip's playback crossed one of its events.
    Clip {
        /// The clip node.
        node: NodeId,
        /// The clip.
        clip: ClipId,
        /// Index into the clip's events.
        event: usize,
        /// The node's weight in the output pose, `(0, 1]`.
        weight: f32,
    },
}
