//! Everything one playing character keeps between updates, sized when the instance is
//! made: parameter values, the pose pool, one player per clip node, one runtime per state
//! machine, sync groups, foot-grounding solvers. The passes of an update
//! ([`super::prepare`], [`super::advance`], [`super::eval`]) work on it.

use crate::desc::PlayMode;
use crate::inertial::Inertializer;
use crate::node::{Compiled, NodeData};
use anim_core::clip::{LoopMode, Playback, RuntimeClipContext, SamplingCache, SoaSampler, Step};
use anim_core::pose::Pose;
use anim_ik::{FootGrounding, GroundQuery};
use anim_math::Transform;
use std::sync::Arc;

/// A ground the foot-grounding nodes stand on, shareable between threads.
pub type SharedGround = Arc<dyn GroundQuery + Send + Sync>;

/// The sampling state of one clip node.
#[derive(Clone, Debug)]
pub(crate) enum Context {
    Exact(SamplingCache),
    Runtime(RuntimeClipContext),
}

/// One clip node's playback.
#[derive(Clone, Debug)]
pub(crate) struct Player {
    pub(crate) clip: usize,
    pub(crate) playback: Playback,
    pub(crate) context: Context,
    /// This update's step (empty when it did not move).
    pub(crate) step: Step,
    /// The last step reached the end of a cycle, or finished a one-shot.
    pub(crate) ended: bool,
}

/// A transition in progress.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Blending {
    pub(crate) from: usize,
    pub(crate) crossfade: bool,
    pub(crate) elapsed: f32,
    pub(crate) duration: f32,
    pub(crate) interruptible: bool,
}

/// One state machine's state.
#[derive(Clone, Debug)]
pub(crate) struct MachineRt {
    pub(crate) current: usize,
    pub(crate) blending: Option<Blending>,
    /// An inertialized transition started in this update's prepare pass, to be recorded
    /// when the target is evaluated: its duration.
    pub(crate) start_inertial: Option<f32>,
    pub(crate) inertial: Inertializer,
    /// The poses shown by the last two updates (`[last, before]`) and their time steps.
    pub(crate) shown: [Pose; 2],
    pub(crate) shown_dt: [f32; 2],
    /// How many of `shown` are valid (the machine was evaluated in consecutive updates).
    pub(crate) shown_count: u8,
    pub(crate) last_update: u64,
    pub(crate) last_motion: Transform,
    /// Per state: the clip node leading it in its last evaluation (its player).
    pub(crate) timing: Vec<Option<usize>>,
    /// Seconds in the current state.
    pub(crate) state_time: f32,
}

/// A sync group's state.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SyncRt {
    /// The leader of the last update (a player).
    pub(crate) leader: Option<usize>,
}

/// The per-instance state (see the [module docs](self)).
pub(crate) struct Runtime {
    pub(crate) params: Vec<f32>,
    pub(crate) pool: Vec<Pose>,
    pub(crate) players: Vec<Player>,
    /// Per player: weight > 0 in the previous update. Kept apart from the players, as is
    /// `synced`, so that an update reads and writes one small array for every player and
    /// touches only the players that play (across a crowd, the players of the others are
    /// out of the caches).
    pub(crate) was_active: Vec<bool>,
    /// Per player: moved this update by its sync group.
    pub(crate) synced: Vec<bool>,
    /// Per node: its weight in the output this update.
    pub(crate) weights: Vec<f32>,
    /// Blend spaces' child weights (local, summing to 1).
    pub(crate) space_weights: Vec<f32>,
    /// Blend-space inputs of this update, per node (for displays).
    pub(crate) space_inputs: Vec<[f32; 2]>,
    pub(crate) machines: Vec<MachineRt>,
    pub(crate) sync: Vec<SyncRt>,
    pub(crate) feet: Vec<FootGrounding>,
    pub(crate) ground: Option<SharedGround>,
    pub(crate) placement: Transform,
    pub(crate) ground_offset: f32,
    pub(crate) samples: u64,
    pub(crate) update: u64,
    /// Root-motion steps and weights of children being mixed (a stack; capacity fixed).
    pub(crate) motions: Vec<(Transform, f32)>,
    pub(crate) dt: f32,
    /// The thread's update count ([`super::UPDATES`]) at this instance's last update.
    pub(crate) last_tick: u64,
}

impl Runtime {
    /// The state of a fresh instance of `c`: every machine in its entry state, every clip
    /// at its start, parameters at their defaults.
    pub(crate) fn new(c: &Compiled) -> Self {
        let rest = c.skeleton.rest_pose().clone();
        let players: Vec<Player> = c
            .players
            .iter()
            .map(|&node| {
                let NodeData::Clip { clip, mode, .. } = c.nodes[node].data else {
                    unreachable!("players are clip nodes by construction")
                };
                let data = &c.clips[clip];
                let context = match &data.runtime {
                    Some(r) => Context::Runtime(r.new_context()),
                    None => Context::Exact(SamplingCache::new(&data.clip)),
                };
                Player { clip, playback: playback(data.duration, mode), context, step: Step::default(), ended: false }
            })
            .collect();
        // A machine that cannot inertialize keeps no history: no shown poses, no offsets.
        let history = |m: &crate::node::Machine| if m.inertializes { rest.clone() } else { Pose::identity(0) };
        let machines: Vec<MachineRt> = c
            .machines
            .iter()
            .map(|m| MachineRt {
                current: m.entry,
                blending: None,
                start_inertial: None,
                // Allocated last, below: its offsets are read only during a transition.
                inertial: Inertializer::new(0),
                shown: [history(m), history(m)],
                shown_dt: [0.0; 2],
                shown_count: 0,
                last_update: 0,
                last_motion: Transform::IDENTITY,
                timing: vec![None; m.states.len()],
                state_time: 0.0,
            })
            .collect();
        let feet = c
            .foot_nodes
            .iter()
            .map(|&n| match &c.nodes[n].data {
                NodeData::FootIk { legs, settings, .. } => FootGrounding::new(&c.skeleton, legs.clone(), *settings)
                    .expect("the same legs and settings were accepted when the graph was built"),
                _ => unreachable!("foot nodes are foot-grounding nodes by construction"),
            })
            .collect();
        let joints = rest.len();
        let mut rt = Self {
            params: c.params.defaults(),
            was_active: vec![false; players.len()],
            synced: vec![false; players.len()],
            pool: vec![rest; c.nodes.first().map_or(1, |n| n.slots)],
            players,
            weights: vec![0.0; c.nodes.len()],
            space_weights: vec![0.0; c.space_weights],
            space_inputs: vec![[0.0; 2]; c.nodes.len()],
            machines,
            sync: vec![SyncRt::default(); c.sync_groups.len()],
            feet,
            ground: None,
            placement: Transform::IDENTITY,
            ground_offset: 0.0,
            samples: 0,
            update: 0,
            motions: Vec::with_capacity(c.space_weights + 2 * c.nodes.len() + 2),
            dt: 0.0,
            last_tick: u64::MAX,
        };
        // The inertializers' per-joint arrays (kilobytes a machine, and cold
        // outside transitions) after everything an update reads, so that the state an
        // update touches spans fewer pages.
        for (m, spec) in rt.machines.iter_mut().zip(&c.machines) {
            if spec.inertializes {
                m.inertial = Inertializer::new(joints);
            }
        }
        rt
    }
}

/// A playback of a clip node in `mode`.
pub(crate) fn playback(duration: f32, mode: PlayMode) -> Playback {
    match mode {
        PlayMode::Repeat => Playback::new(duration, LoopMode::Repeat),
        PlayMode::PingPong => Playback::new(duration, LoopMode::PingPong),
        PlayMode::Once => Playback::once(duration),
    }
}
