//! Why a graph description was refused ([`BuildError`], with the JSON pointer of the value
//! at fault) and what was accepted with a remark ([`Warning`]). At the bottom of the
//! crate: it names no other module.

use thiserror::Error;

/// A graph description refused by [`crate::graph::Graph::build`]: what is wrong and where.
///
/// `pointer` is the RFC 6901 JSON pointer of the value at fault in the file format
/// (`/nodes/3/states/1/transitions/0/condition/trigger`); a description built in code has
/// the same layout, so the pointer says the same there.
#[derive(Debug, Error, Clone, PartialEq)]
#[error("{pointer}: {kind}")]
pub struct BuildError {
    /// Where.
    pub pointer: String,
    /// What.
    pub kind: BuildErrorKind,
}

impl BuildError {
    /// An error at `pointer`.
    pub fn new(pointer: impl Into<String>, kind: BuildErrorKind) -> Self {
        Self { pointer: pointer.into(), kind }
    }
}

/// The classes of [`BuildError`].
#[derive(Debug, Error, Clone, PartialEq)]
pub enum BuildErrorKind {
    /// The clip set has no clip with this name.
    #[error("unknown clip {name:?}")]
    UnknownClip {
        /// The name.
        name: String,
    },
    /// No parameter has this name.
    #[error("unknown parameter {name:?}")]
    UnknownParameter {
        /// The name.
        name: String,
    },
    /// The skeleton has no joint with this name.
    #[error("unknown joint {name:?}")]
    UnknownJoint {
        /// The name.
        name: String,
    },
    /// No node, mask, sync group or state has this name.
    #[error("unknown {what} {name:?}")]
    Unknown {
        /// "node", "mask", "sync group" or "state".
        what: &'static str,
        /// The name.
        name: String,
    },
    /// A parameter is used where another kind is needed.
    #[error("parameter {name:?} is a {found}, a {expected} is needed here")]
    WrongParameterType {
        /// Its name.
        name: String,
        /// The kind needed.
        expected: &'static str,
        /// Its kind.
        found: &'static str,
    },
    /// Two things of one kind share a name.
    #[error("duplicate {what} name {name:?}")]
    Duplicate {
        /// "parameter", "node", "state", …
        what: &'static str,
        /// The name.
        name: String,
    },
    /// A blend space needs two points at least.
    #[error("a blend space needs at least 2 points, it has {count}")]
    TooFewPoints {
        /// Points given.
        count: usize,
    },
    /// Two points of a blend space are at the same place.
    #[error("points {first} and {second} of the blend space are at the same place")]
    CoincidentPoints {
        /// Index of the first.
        first: usize,
        /// Index of the second.
        second: usize,
    },
    /// A list that needs an entry is empty.
    #[error("{what} needs at least {needs}")]
    Empty {
        /// What is empty.
        what: &'static str,
        /// What it needs.
        needs: &'static str,
    },
    /// Nodes refer to each other in a circle (nested machines included).
    #[error("the nodes refer to each other in a cycle: {path}")]
    Cycle {
        /// The nodes of the cycle, `a → b → a`.
        path: String,
    },
    /// A node is the child of two parents (each node belongs to one tree).
    #[error("node {name:?} is already used at {first}; a node has one parent")]
    NodeReused {
        /// The node.
        name: String,
        /// The pointer of its first use.
        first: String,
    },
    /// A number is NaN or infinite.
    #[error("the value is not a finite number")]
    NotFinite,
    /// A number is outside its range.
    #[error("{value} is outside [{min}, {max}]")]
    OutOfRange {
        /// The value.
        value: f64,
        /// Smallest accepted.
        min: f64,
        /// Largest accepted.
        max: f64,
    },
    /// More entries than the format allows.
    #[error("{count} {what}, at most {max} are allowed")]
    TooMany {
        /// What was counted.
        what: &'static str,
        /// How many.
        count: usize,
        /// The cap.
        max: usize,
    },
    /// Nodes or conditions nest deeper than the format allows.
    #[error("nested deeper than {max} levels")]
    TooDeep {
        /// The cap.
        max: usize,
    },
    /// A name is empty or too long.
    #[error("a name must have 1 to {max} bytes, this one has {len}")]
    BadName {
        /// Its length in bytes.
        len: usize,
        /// The cap.
        max: usize,
    },
    /// The parameter range is empty, or its default lies outside it.
    #[error("parameter range [{min}, {max}] is empty or does not hold the default {default}")]
    BadRange {
        /// Range start.
        min: f32,
        /// Range end.
        max: f32,
        /// Default value.
        default: f32,
    },
    /// A crossfade from a state to itself would need its tree twice.
    #[error("a crossfade from state {state:?} to itself needs its tree twice; use inertialize")]
    CrossfadeToSelf {
        /// The state.
        state: String,
    },
    /// A clip in a sync group must loop forwards.
    #[error("a clip in a sync group must loop (\"repeat\"), not {mode:?}")]
    SyncedClipMode {
        /// Its mode.
        mode: &'static str,
    },
    /// The clip set holds two clips of one name.
    #[error("the clip set has two clips named {name:?}")]
    DuplicateClip {
        /// The name.
        name: String,
    },
    /// A runtime clip was compiled for another skeleton.
    #[error("clip {name:?} is a runtime clip of another skeleton")]
    ClipSkeleton {
        /// The clip.
        name: String,
    },
    /// A clip animates a joint the skeleton lacks.
    #[error("clip {name:?} animates joint {joint}, the skeleton has {count} joints")]
    ClipJoints {
        /// The clip.
        name: String,
        /// The joint.
        joint: usize,
        /// Joint count.
        count: usize,
    },
    /// The joints of an IK node do not form the chain it needs.
    #[error("joints {parent:?} and {child:?} are not parent and child")]
    NotAChain {
        /// The expected parent.
        parent: String,
        /// The expected child.
        child: String,
    },
    /// Two axes that must differ are zero or parallel.
    #[error("the forward and up axes are zero or parallel")]
    BadAxes,
    /// An IK setup refused by `anim-ik`.
    #[error(transparent)]
    Ik(#[from] anim_ik::IkError),
    /// The foot-grounding node names more contact curves than a graph carries.
    #[error("{count} contact curves, a graph carries at most {max}")]
    TooManyCurves {
        /// Distinct curve names.
        count: usize,
        /// The cap.
        max: usize,
    },
}

/// Something a graph was built with that is probably a mistake.
#[derive(Debug, Error, Clone, PartialEq)]
#[error("{pointer}: {kind}")]
pub struct Warning {
    /// Where.
    pub pointer: String,
    /// What.
    pub kind: WarningKind,
}

/// The classes of [`Warning`].
#[derive(Debug, Error, Clone, PartialEq)]
pub enum WarningKind {
    /// No transition path leads from the entry state to this state.
    #[error("state {name:?} cannot be reached from the entry state")]
    UnreachableState {
        /// The state.
        name: String,
    },
    /// The node is not part of the root's tree: it is never evaluated.
    #[error("node {name:?} is not used by the root's tree")]
    UnusedNode {
        /// The node.
        name: String,
    },
}
