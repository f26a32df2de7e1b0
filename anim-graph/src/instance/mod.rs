//! [`GraphInstance`]: one character playing a [`Graph`]. It holds everything that changes
//! (parameter values, clip playbacks, machine states, blend and inertialization state,
//! and a pool of poses sized when it is made) so [`GraphInstance::update`] allocates
//! nothing.
//!
//! An update runs three passes over the root's tree:
//! 1. **prepare**, top-down: machines take their transitions (below), blend nodes read
//!    their parameters, every node gets its weight in the output pose; a branch of weight
//!    zero is not visited;
//! 2. **advance**: sync groups move their clips together ([`crate::sync`]), every other
//!    clip with a weight moves by `dt · speed`; a clip without weight does not move;
//! 3. **evaluate**, bottom-up: clips sample (exact clips with their key cache, runtime
//!    clips with their context), blends mix with `anim_core::blend`, IK nodes call
//!    `anim_ik`, machines crossfade or inertialize ([`crate::inertial`]) their states; the
//!    root's pose, its root-motion step and the events fired come out.
//!
//! # State machines
//! At the start of an update each machine that takes part (outer machines first) looks at
//! the transitions that may leave its current state: the any-state transitions (except
//! those into the current state) and the current state's own. Of those whose condition
//! holds, the highest priority wins; among equal priorities the first declared, any-state
//! transitions before the state's. Conditions read the parameters as set before the update
//! and the clips as the previous update left them: a clip that reaches its end (or an exit
//! time) in update `n` fires its transition in update `n + 1`. While a transition blends,
//! only an interruptible one lets another fire. At most one transition fires per machine
//! per update. A state's "leading clip" (for exit times and "clip ended") is its clip node
//! with the highest weight in the last update.
//!
//! Firing consumes the triggers the condition tests, reports `Transition`, `Exit` and
//! `Enter` events, restarts the target state's tree (its clips from their start, its
//! machines in their entry states) and starts the blend: a cut (duration 0), a
//! **crossfade** (the old state keeps playing and is mixed out over the duration) or an
//! **inertialization** (only the new state plays; the offset of the pose shown decays). A
//! state entered in update `n` has played `dt` at its end, and the blend's weight is
//! `elapsed / duration`. A crossfade that interrupts a blend in progress inertializes from
//! the pose shown (the old blend's source stops), as Bollo recommends for interruptions.
//! A transition from or to an empty state (a state without a tree, for layers) always
//! crossfades: there is no pose to inertialize from or to, and what fades is the state's
//! coverage.
//!
//! # Coverage
//! How much of a pose is there: 1 for every node, 0 for an empty state. Mixing two poses
//! with weights `w` and coverages `c` uses the factor `w_b·c_b / (w_a·c_a + w_b·c_b)` and
//! gives coverage `w_a·c_a + w_b·c_b`, so fading a layer's state in from an empty state fades
//! the layer in, without the rest pose showing through. A layer applies
//! `weight · coverage` of its layer; an additive node `weight · coverage` of its difference.
//! Contact curves (for foot grounding) and root motion mix with the same weights; a layer,
//! an additive node and the IK nodes pass their base's on.

mod advance;
mod error;
mod eval;
mod machine;
mod prepare;
mod state;

pub use error::UpdateError;
pub use state::SharedGround;

use crate::event::{GraphEvent, NodeId, StateId};
use crate::graph::Graph;
use crate::node::{Compiled, NodeData};
use crate::param::{BoolParam, FloatParam, ParamError, TriggerParam};
use anim_core::pose::Pose;
use anim_math::Transform;
use state::Runtime;
use std::sync::Arc;

/// A transition in progress, as [`GraphInstance::transition`] reports it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TransitionStatus {
    /// The state left.
    pub from: StateId,
    /// The state entered (the machine's current state).
    pub to: StateId,
    /// Seconds since it fired.
    pub elapsed: f32,
    /// Its duration.
    pub duration: f32,
    /// Crossfade (both states evaluated) or inertialization (the target only).
    pub crossfade: bool,
}

/// One character's state in a [`Graph`] (see the [module docs](self)).
pub struct GraphInstance {
    graph: Arc<Graph>,
    rt: Runtime,
}

impl std::fmt::Debug for GraphInstance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GraphInstance")
            .field("nodes", &self.graph.node_count())
            .field("update", &self.rt.update)
            .finish_non_exhaustive()
    }
}

impl GraphInstance {
    /// A fresh instance: parameters at their defaults, machines in their entry states,
    /// clips at their starts. All its memory is allocated here.
    pub fn new(graph: Arc<Graph>) -> Self {
        let rt = Runtime::new(&graph.c);
        Self { graph, rt }
    }

    /// The graph.
    pub fn graph(&self) -> &Arc<Graph> {
        &self.graph
    }

    /// Back to the state of a fresh instance (the ground and placement are kept).
    pub fn reset(&mut self) {
        let (ground, placement) = (self.rt.ground.take(), self.rt.placement);
        self.rt = Runtime::new(&self.graph.c);
        (self.rt.ground, self.rt.placement) = (ground, placement);
    }

    /// Sets a float parameter (clamped into its range).
    ///
    /// # Errors
    /// A handle of another graph, or a non-finite value.
    pub fn set_float(&mut self, p: FloatParam, value: f32) -> Result<(), ParamError> {
        self.graph.c.params.set_float(&mut self.rt.params, p, value)
    }

    /// Sets a bool parameter.
    ///
    /// # Errors
    /// A handle of another graph.
    pub fn set_bool(&mut self, p: BoolParam, value: bool) -> Result<(), ParamError> {
        self.graph.c.params.set_bool(&mut self.rt.params, p, value)
    }

    /// Sets a trigger; it stays set until a transition that tests it fires.
    ///
    /// # Errors
    /// A handle of another graph.
    pub fn set_trigger(&mut self, p: TriggerParam) -> Result<(), ParamError> {
        self.graph.c.params.set_trigger(&mut self.rt.params, p)
    }

    /// A float parameter's value.
    ///
    /// # Errors
    /// A handle of another graph.
    pub fn float(&self, p: FloatParam) -> Result<f32, ParamError> {
        Ok(self.rt.params[self.graph.c.params.float_index(p)?])
    }

    /// A bool parameter's value.
    ///
    /// # Errors
    /// A handle of another graph.
    pub fn bool(&self, p: BoolParam) -> Result<bool, ParamError> {
        Ok(self.rt.params[self.graph.c.params.bool_index(p)?] > 0.5)
    }

    /// Whether a trigger is set (not yet consumed).
    ///
    /// # Errors
    /// A handle of another graph.
    pub fn trigger_is_set(&self, p: TriggerParam) -> Result<bool, ParamError> {
        Ok(self.rt.params[self.graph.c.params.trigger_index(p)?] > 0.5)
    }

    /// The ground the foot-grounding nodes stand on (none: they leave the pose as it is).
    pub fn set_ground(&mut self, ground: Option<SharedGround>) {
        self.rt.ground = ground;
    }

    /// Where the character stands in the world (the ground is in world space); y up.
    pub fn set_placement(&mut self, placement: Transform) {
        self.rt.placement = placement;
    }

    /// The vertical offset the last foot-grounding pass moved the character by (≤ 0 when
    /// it lowered it so the lower foot reaches the ground; 0 without grounding). Add it to
    /// the placement's height, smoothed as the game likes.
    pub fn ground_offset(&self) -> f32 {
        self.rt.ground_offset
    }

    /// Advances the character by `dt` seconds: writes its local pose into `pose`, this
    /// update's root-motion step into `root_motion` (apply it as `world = world ·
    /// root_motion`), and the events fired into `events` (cleared first; it keeps its
    /// capacity, so a buffer that held as many events before allocates nothing). Every
    /// joint of `pose` is written; its buffer may be exchanged with one of the instance's
    /// (of the same length) rather than copied into.
    ///
    /// # Errors
    /// A negative or non-finite `dt`, or a pose that does not fit the graph's skeleton.
    pub fn update(
        &mut self,
        dt: f32,
        pose: &mut Pose,
        root_motion: &mut Transform,
        events: &mut Vec<GraphEvent>,
    ) -> Result<(), UpdateError> {
        if !(dt.is_finite() && dt >= 0.0) {
            return Err(UpdateError::BadTimeStep(dt));
        }
        let c = &self.graph.c;
        pose.check_skeleton(c.skeleton.id(), c.skeleton.len())?;
        events.clear();
        let rt = &mut self.rt;
        // Across a crowd, other instances ran on this thread since this one's last update
        // and pushed its state out of the caches: ask for it all at once. An instance
        // updated again straight after itself (one character) is still in the caches.
        let tick = UPDATES.with(|u| {
            let tick = u.get().wrapping_add(1);
            u.set(tick);
            tick
        });
        if tick != rt.last_tick.wrapping_add(1) {
            prefetch_state(c, rt);
        }
        rt.last_tick = tick;
        rt.dt = dt;
        rt.update += 1;
        rt.weights.iter_mut().for_each(|w| *w = 0.0);
        prepare::visit(c, rt, 0, 1.0, events);
        advance::advance(c, rt);
        let out = eval::eval(c, rt, 0, 0, events)?;
        // The result is in the pool's first slot: hand that buffer to the caller and keep
        // the caller's (same skeleton and length, checked above) as scratch, instead of
        // copying a pose into memory that, across a crowd, is out of the caches.
        std::mem::swap(pose, &mut rt.pool[0]);
        *root_motion = out.motion;
        Ok(())
    }

    /// The number of clip samples taken since the instance was made (each clip node
    /// evaluated counts one).
    pub fn samples(&self) -> u64 {
        self.rt.samples
    }

    /// A node's weight in the last update's output (0 for a branch not evaluated).
    pub fn weight(&self, node: NodeId) -> f32 {
        self.rt.weights.get(node.0).copied().unwrap_or(0.0)
    }

    /// The weights of blend space `node`'s children in the last update, in the order of
    /// [`Graph::blend_points`] (empty for another node).
    pub fn blend_weights(&self, node: NodeId) -> &[f32] {
        match self.graph.c.nodes.get(node.0).map(|n| &n.data) {
            Some(NodeData::Space1d { children, weights_at, .. } | NodeData::Space2d { children, weights_at, .. }) => {
                &self.rt.space_weights[*weights_at..*weights_at + children.len()]
            }
            _ => &[],
        }
    }

    /// The point blend space `node` read in the last update (a 1D space's as `[x, 0]`).
    pub fn blend_input(&self, node: NodeId) -> [f32; 2] {
        self.rt.space_inputs.get(node.0).copied().unwrap_or([0.0; 2])
    }

    /// The clip time of clip node `node` (`None` for another node).
    pub fn clip_time(&self, node: NodeId) -> Option<f32> {
        match self.graph.c.nodes.get(node.0)?.data {
            NodeData::Clip { player, .. } => Some(self.rt.players[player].playback.time()),
            _ => None,
        }
    }

    /// The current state of machine `machine`.
    pub fn current_state(&self, machine: NodeId) -> Option<StateId> {
        self.graph.machine_index(machine).map(|m| StateId(self.rt.machines[m].current))
    }

    /// Seconds machine `machine` has been in its current state.
    pub fn state_time(&self, machine: NodeId) -> Option<f32> {
        self.graph.machine_index(machine).map(|m| self.rt.machines[m].state_time)
    }

    /// The transition machine `machine` is blending, if any.
    pub fn transition(&self, machine: NodeId) -> Option<TransitionStatus> {
        let m = &self.rt.machines[self.graph.machine_index(machine)?];
        m.blending.map(|b| TransitionStatus {
            from: StateId(b.from),
            to: StateId(m.current),
            elapsed: b.elapsed,
            duration: b.duration,
            crossfade: b.crossfade,
        })
    }

    /// Whether machine `machine`'s output carries an inertialization offset now.
    pub fn is_inertializing(&self, machine: NodeId) -> bool {
        self.graph.machine_index(machine).is_some_and(|m| self.rt.machines[m].inertial.is_active())
    }

    /// The inertialization offset of joint `joint` in machine `machine` now: translation,
    /// rotation vector and scale (zeros when none).
    pub fn inertial_offset(&self, machine: NodeId, joint: usize) -> [f32; 9] {
        match self.graph.machine_index(machine) {
            Some(m) if joint < self.graph.c.skeleton.len() => self.rt.machines[m].inertial.offset_at(joint),
            _ => [0.0; 9],
        }
    }

    /// The machines that took part in the last update, with their current states
    /// (outer machines first).
    pub fn active_states(&self) -> impl Iterator<Item = (NodeId, StateId)> + '_ {
        self.graph.c.machines.iter().enumerate().filter_map(|(i, m)| {
            (self.rt.weights[m.node] > 0.0).then_some((NodeId(m.node), StateId(self.rt.machines[i].current)))
        })
    }
}

thread_local! {
    /// Graph updates run on this thread so far (tells an instance whether others ran
    /// since its last update).
    static UPDATES: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Asks the CPU to bring every cache line of `s` into its L2 cache, without waiting
/// (nothing on other targets than x86-64).
#[inline(always)]
fn prefetch<T>(s: &[T]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T1, _mm_prefetch};
        let p = s.as_ptr().cast::<i8>();
        let bytes = std::mem::size_of_val(s);
        let mut off = 0;
        while off < bytes {
            // SAFETY: a prefetch never faults and changes nothing the program can observe;
            // the address is inside `s`.
            unsafe { _mm_prefetch::<_MM_HINT_T1>(p.add(off)) };
            off += 64;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = s;
}

/// Starts loading the instance state an update reads, all at once, rather than one miss
/// after the other as the passes reach each array (across a crowd, an instance's state is
/// out of the caches when its update starts).
fn prefetch_state(c: &Compiled, rt: &Runtime) {
    prefetch(&rt.params);
    prefetch(&rt.weights);
    prefetch(&rt.was_active);
    prefetch(&rt.synced);
    prefetch(&rt.space_weights);
    prefetch(&rt.space_inputs);
    prefetch(&rt.sync);
    prefetch(&rt.machines);
    for (m, spec) in rt.machines.iter().zip(&c.machines) {
        // The pose the machine will overwrite with what it shows (kept only by machines
        // that can inertialize).
        if spec.inertializes {
            prefetch(m.shown[1].locals());
        }
        prefetch(&m.timing);
    }
    for (p, &a) in rt.players.iter().zip(&rt.was_active) {
        if a {
            prefetch(std::slice::from_ref(p));
        }
    }
}
