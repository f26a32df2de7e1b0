//! The description of a graph: plain data, laid out exactly as the JSON file format
//! (`docs/graph-format.md`), so that every value has one JSON pointer whether it came from
//! a file ([`crate::file`]) or from code ([`crate::builder`]). Names refer to parameters,
//! clips, joints, masks, sync groups, nodes and states; [`crate::graph::Graph::build`]
//! resolves and checks them all before it builds anything.

use crate::param::ParamKind;

/// A whole graph: what it reads, its nodes, and which node is the output.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GraphDesc {
    /// Parameters (`/parameters`).
    pub parameters: Vec<ParamDesc>,
    /// Joint masks for layers (`/masks`).
    pub masks: Vec<MaskDesc>,
    /// Sync groups (`/sync_groups`).
    pub sync_groups: Vec<SyncGroupDesc>,
    /// Nodes (`/nodes`), referred to by name.
    pub nodes: Vec<NodeDesc>,
    /// The output node (`/root`).
    pub root: String,
}

/// A parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamDesc {
    /// Name.
    pub name: String,
    /// Kind.
    pub kind: ParamKind,
    /// Value at start (a bool or trigger: 0 or 1).
    pub default: f32,
    /// `[min, max]` a float is clamped into.
    pub range: Option<(f32, f32)>,
}

/// A per-joint weight mask, built from joints and, optionally, everything below them.
#[derive(Clone, Debug, PartialEq)]
pub struct MaskDesc {
    /// Name.
    pub name: String,
    /// Entries, applied in order (a later entry overwrites an earlier one's joints).
    pub joints: Vec<MaskJoint>,
}

/// One entry of a mask.
#[derive(Clone, Debug, PartialEq)]
pub struct MaskJoint {
    /// Joint name.
    pub joint: String,
    /// The joint and its whole subtree (otherwise the joint alone).
    pub subtree: bool,
    /// Weight in `[0, 1]`.
    pub weight: f32,
}

/// How the members of a sync group are kept together.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncMode {
    /// Every member at the leader's normalized phase.
    Phase,
    /// Every member at the leader's fraction between the same two foot markers; members
    /// without those markers follow the phase.
    Markers,
}

impl SyncMode {
    /// The name in the file format.
    pub fn name(self) -> &'static str {
        match self {
            SyncMode::Phase => "phase",
            SyncMode::Markers => "markers",
        }
    }
}

/// A sync group.
#[derive(Clone, Debug, PartialEq)]
pub struct SyncGroupDesc {
    /// Name.
    pub name: String,
    /// Mode.
    pub mode: SyncMode,
}

/// A number, or the current value of a float parameter.
#[derive(Clone, Debug, PartialEq)]
pub enum Scalar {
    /// A constant.
    Const(f32),
    /// A float parameter, by name.
    Param(String),
}

impl From<f32> for Scalar {
    fn from(v: f32) -> Self {
        Scalar::Const(v)
    }
}

impl From<&str> for Scalar {
    fn from(name: &str) -> Self {
        Scalar::Param(name.to_owned())
    }
}

/// A named node.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeDesc {
    /// Name (unique among the nodes).
    pub name: String,
    /// What it is.
    pub kind: NodeKind,
}

/// The node kinds.
#[derive(Clone, Debug, PartialEq)]
pub enum NodeKind {
    /// Plays a clip.
    Clip(ClipNodeDesc),
    /// Blends its children by their places on one parameter axis.
    BlendSpace1d(BlendSpace1dDesc),
    /// Blends its children by their places in a plane (gradient band interpolation).
    BlendSpace2d(BlendSpace2dDesc),
    /// Mixes two children by a weight.
    Blend(BlendDesc),
    /// Adds a child's difference from a reference pose on top of a base.
    Additive(AdditiveDesc),
    /// Overlays a child on a base through a per-joint mask.
    Layer(LayerDesc),
    /// Bends a two-bone limb to a target.
    TwoBoneIk(TwoBoneIkDesc),
    /// Turns a joint to look at a target.
    Aim(AimDesc),
    /// Keeps planted feet on the ground.
    FootIk(FootIkDesc),
    /// A state machine.
    StateMachine(MachineDesc),
}

impl NodeKind {
    /// The `type` string of the file format.
    pub fn type_name(&self) -> &'static str {
        match self {
            NodeKind::Clip(_) => "clip",
            NodeKind::BlendSpace1d(_) => "blend_space_1d",
            NodeKind::BlendSpace2d(_) => "blend_space_2d",
            NodeKind::Blend(_) => "blend",
            NodeKind::Additive(_) => "additive",
            NodeKind::Layer(_) => "layer",
            NodeKind::TwoBoneIk(_) => "two_bone_ik",
            NodeKind::Aim(_) => "aim",
            NodeKind::FootIk(_) => "foot_ik",
            NodeKind::StateMachine(_) => "state_machine",
        }
    }
}

/// How a clip node plays its clip.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlayMode {
    /// Loops forever.
    Repeat,
    /// Loops forever, every other cycle backwards.
    PingPong,
    /// Plays once and holds its last frame.
    Once,
}

impl PlayMode {
    /// The name in the file format.
    pub fn name(self) -> &'static str {
        match self {
            PlayMode::Repeat => "repeat",
            PlayMode::PingPong => "ping_pong",
            PlayMode::Once => "once",
        }
    }
}

/// A clip node.
#[derive(Clone, Debug, PartialEq)]
pub struct ClipNodeDesc {
    /// Clip name (in the clip set the graph is built with).
    pub clip: String,
    /// Playback speed (negative plays backwards).
    pub speed: Scalar,
    /// Loop mode.
    pub mode: PlayMode,
    /// Sync group, by name.
    pub sync: Option<String>,
}

/// One child of a 1D blend space.
#[derive(Clone, Debug, PartialEq)]
pub struct BlendPoint1d {
    /// Child node.
    pub node: String,
    /// Its place on the axis.
    pub at: f32,
}

/// A 1D blend space.
#[derive(Clone, Debug, PartialEq)]
pub struct BlendSpace1dDesc {
    /// The float parameter read as the position on the axis.
    pub param: String,
    /// Children with their places (at least two, all different).
    pub points: Vec<BlendPoint1d>,
}

/// How a 2D blend space measures the plane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpaceForm {
    /// Euclidean distances.
    Cartesian,
    /// Directions by angle and speeds by relative magnitude (velocities).
    Polar,
}

impl SpaceForm {
    /// The name in the file format.
    pub fn name(self) -> &'static str {
        match self {
            SpaceForm::Cartesian => "cartesian",
            SpaceForm::Polar => "polar",
        }
    }
}

/// One child of a 2D blend space.
#[derive(Clone, Debug, PartialEq)]
pub struct BlendPoint2d {
    /// Child node.
    pub node: String,
    /// Its place in the plane.
    pub at: [f32; 2],
}

/// A 2D blend space.
#[derive(Clone, Debug, PartialEq)]
pub struct BlendSpace2dDesc {
    /// The float parameter read as x.
    pub x: String,
    /// The float parameter read as y.
    pub y: String,
    /// Cartesian or polar.
    pub form: SpaceForm,
    /// Children with their places (at least two, all different).
    pub points: Vec<BlendPoint2d>,
}

/// `mix(a, b, weight)`.
#[derive(Clone, Debug, PartialEq)]
pub struct BlendDesc {
    /// Child at weight 0.
    pub a: String,
    /// Child at weight 1.
    pub b: String,
    /// Weight, clamped into `[0, 1]`.
    pub weight: Scalar,
}

/// The pose an additive child is measured from: a clip at a time.
#[derive(Clone, Debug, PartialEq)]
pub struct ReferenceDesc {
    /// Clip name.
    pub clip: String,
    /// Time in the clip, seconds.
    pub time: f32,
}

/// `base + weight · (additive − reference)`.
#[derive(Clone, Debug, PartialEq)]
pub struct AdditiveDesc {
    /// The pose added onto.
    pub base: String,
    /// The additive child.
    pub additive: String,
    /// The reference pose of the additive child.
    pub reference: ReferenceDesc,
    /// Weight of the difference (finite; 1 adds it whole).
    pub weight: Scalar,
}

/// `mix(base, layer, weight · mask[joint])`.
#[derive(Clone, Debug, PartialEq)]
pub struct LayerDesc {
    /// The pose below.
    pub base: String,
    /// The pose on top.
    pub layer: String,
    /// Per-joint weights, by mask name (every joint at 1 without one).
    pub mask: Option<String>,
    /// Layer weight, clamped into `[0, 1]`.
    pub weight: Scalar,
}

/// Two-bone IK: `joints` = upper, middle, end (parent, child, grandchild).
#[derive(Clone, Debug, PartialEq)]
pub struct TwoBoneIkDesc {
    /// The pose to change.
    pub input: String,
    /// Upper, middle and end joint names.
    pub joints: [String; 3],
    /// Float parameters giving the target's model-space x, y, z.
    pub target: [String; 3],
    /// Model-space direction the middle joint bends towards (the animation's when absent).
    pub pole: Option<[f32; 3]>,
    /// How much of the solution is applied, clamped into `[0, 1]`.
    pub weight: Scalar,
}

/// Aim / look-at of one joint.
#[derive(Clone, Debug, PartialEq)]
pub struct AimDesc {
    /// The pose to change.
    pub input: String,
    /// The joint turned.
    pub joint: String,
    /// Its local axis that points at the target.
    pub forward: [f32; 3],
    /// Its local axis that leans towards `world_up`.
    pub up: [f32; 3],
    /// Model-space up direction.
    pub world_up: [f32; 3],
    /// Float parameters giving the target's model-space x, y, z.
    pub target: [String; 3],
    /// How much of the turn is applied, clamped into `[0, 1]`.
    pub weight: Scalar,
}

/// One leg of a foot-grounding node.
#[derive(Clone, Debug, PartialEq)]
pub struct LegDesc {
    /// Hip joint.
    pub hip: String,
    /// Knee joint.
    pub knee: String,
    /// Ankle joint.
    pub ankle: String,
    /// Toe joint.
    pub toe: String,
    /// Name of the clips' contact curve (1 = planted).
    pub contact: String,
}

/// Foot grounding (`anim_ik::FootGrounding`) over the ground the instance is given.
#[derive(Clone, Debug, PartialEq)]
pub struct FootIkDesc {
    /// The pose to change.
    pub input: String,
    /// Legs.
    pub legs: Vec<LegDesc>,
    /// Ankle height above flat ground.
    pub ankle_height: f32,
    /// Toe height above flat ground.
    pub toe_height: f32,
    /// How far below the sole the rays look.
    pub search_below: f32,
    /// Lower the character so the lower foot reaches.
    pub adjust_root: bool,
    /// Turn the feet along the ground.
    pub align_toes: bool,
    /// How much of the grounding is applied, clamped into `[0, 1]`.
    pub weight: Scalar,
}

/// A state machine.
#[derive(Clone, Debug, PartialEq)]
pub struct MachineDesc {
    /// The state it starts in (and enters again when it is reset).
    pub entry: String,
    /// States.
    pub states: Vec<StateDesc>,
    /// Transitions that can leave any state.
    pub any_state: Vec<TransitionDesc>,
}

/// A state: a node tree (or none: an empty state that contributes no pose, for layers).
#[derive(Clone, Debug, PartialEq)]
pub struct StateDesc {
    /// Name (unique in its machine).
    pub name: String,
    /// Root node of the state's tree; `None` is an empty state.
    pub node: Option<String>,
    /// Transitions out of this state.
    pub transitions: Vec<TransitionDesc>,
}

/// How a transition blends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransitionMode {
    /// Both states evaluated and mixed over the duration.
    Crossfade,
    /// Only the target evaluated; the old pose's offset decays (Bollo 2018).
    Inertialize,
}

impl TransitionMode {
    /// The name in the file format.
    pub fn name(self) -> &'static str {
        match self {
            TransitionMode::Crossfade => "crossfade",
            TransitionMode::Inertialize => "inertialize",
        }
    }
}

/// A transition.
#[derive(Clone, Debug, PartialEq)]
pub struct TransitionDesc {
    /// Target state.
    pub to: String,
    /// When it fires.
    pub condition: Condition,
    /// Blend duration, seconds (0 cuts).
    pub duration: f32,
    /// Crossfade or inertialize.
    pub mode: TransitionMode,
    /// Among transitions that can fire in the same update, the highest priority wins.
    pub priority: i32,
    /// Whether transitions out of the target state may fire while this one blends.
    pub interruptible: bool,
}

/// A comparison of a float parameter with a constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompareOp {
    /// `<`
    Less,
    /// `<=`
    LessEqual,
    /// `>`
    Greater,
    /// `>=`
    GreaterEqual,
    /// `==`
    Equal,
    /// `!=`
    NotEqual,
}

impl CompareOp {
    /// The operator as written in the file format.
    pub fn symbol(self) -> &'static str {
        match self {
            CompareOp::Less => "<",
            CompareOp::LessEqual => "<=",
            CompareOp::Greater => ">",
            CompareOp::GreaterEqual => ">=",
            CompareOp::Equal => "==",
            CompareOp::NotEqual => "!=",
        }
    }

    /// The operator written `symbol`.
    pub fn from_symbol(symbol: &str) -> Option<Self> {
        [
            CompareOp::Less,
            CompareOp::LessEqual,
            CompareOp::Greater,
            CompareOp::GreaterEqual,
            CompareOp::Equal,
            CompareOp::NotEqual,
        ]
        .into_iter()
        .find(|o| o.symbol() == symbol)
    }

    /// `a op b`.
    #[inline]
    pub fn holds(self, a: f32, b: f32) -> bool {
        match self {
            CompareOp::Less => a < b,
            CompareOp::LessEqual => a <= b,
            CompareOp::Greater => a > b,
            CompareOp::GreaterEqual => a >= b,
            CompareOp::Equal => a == b,
            CompareOp::NotEqual => a != b,
        }
    }
}

/// When a transition fires.
#[derive(Clone, Debug, PartialEq)]
pub enum Condition {
    /// Always (with nothing else: the first update in the state).
    Always,
    /// `param op value` on a float parameter.
    Float {
        /// Parameter name.
        param: String,
        /// Comparison.
        op: CompareOp,
        /// Constant.
        value: f32,
    },
    /// A bool parameter equals `value`.
    Bool {
        /// Parameter name.
        param: String,
        /// Expected value.
        value: bool,
    },
    /// A trigger is set (and is consumed when the transition fires).
    Trigger(String),
    /// The state's leading clip reached the end of a cycle (or of a one-shot) in the last
    /// update.
    ClipEnded,
    /// The state's leading clip is at or past this fraction of its cycle (a finished
    /// one-shot counts as 1).
    ExitTime(f32),
    /// Every condition holds.
    All(Vec<Condition>),
    /// At least one condition holds.
    Any(Vec<Condition>),
    /// The condition does not hold.
    Not(Box<Condition>),
}
