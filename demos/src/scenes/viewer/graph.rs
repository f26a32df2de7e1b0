//! An animation graph the viewer plays in place of a clip: `--graph FILE`, or a `.json`
//! graph file opened from the panel's field or dropped onto the window (see
//! `docs/graph-format.md`).
//!
//! The graph plays the character's clips as the locomotion demo and `animtool graph` give
//! them to it ([`crate::scenes::locomotion::graph_clips`]: the mannequin's root-motion
//! clips, a glTF character's clips with their root motion extracted), so what the viewer
//! shows at a graph time is what `animtool graph` writes for the same parameter changes.
//! Root motion accumulates as `animtool graph` accumulates it; the character walks away
//! with it only when the viewer's root motion is on. Foot-grounding nodes stand on the
//! viewer's floor (a plane at the floor's height) unless [`GraphPlay::on_floor`] is off,
//! when they leave the pose as it is, as in `animtool graph`.

use crate::DemoError;
use crate::character::{Character, Posed};
use crate::scenes::locomotion::graph_clips;
use anim_graph::event::GraphEvent;
use anim_graph::graph::Graph;
use anim_graph::instance::{GraphInstance, SharedGround};
use anim_graph::param::ParamKind;
use anim_ik::HeightField;
use anim_math::Transform;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// How many recent events the timeline keeps.
pub const RECENT_EVENTS: usize = 64;

/// Seconds of history the timeline shows while a graph plays.
pub const HISTORY_SECONDS: f32 = 4.0;

/// A graph playing on the viewer's character.
pub struct GraphPlay {
    /// The file it was loaded from.
    pub file: PathBuf,
    /// The graph, built for the character's skeleton and clips.
    pub graph: Arc<Graph>,
    /// Its instance: parameter values, states, transitions.
    pub instance: GraphInstance,
    /// Root motion accumulated since the graph started (`world = world · step`).
    pub world: Transform,
    /// The last update's root-motion step.
    pub step: Transform,
    /// The last update's events.
    pub events: Vec<GraphEvent>,
    /// The last [`RECENT_EVENTS`] events with the graph time they fired at, oldest first.
    pub recent: VecDeque<(f32, GraphEvent)>,
    /// Seconds the graph has played.
    pub time: f32,
    /// Foot-grounding nodes stand on the floor (off: they leave the pose as it is).
    pub on_floor: bool,
    floor: SharedGround,
    /// An update ran since the load or restart (the first shows time 0).
    started: bool,
}

impl std::fmt::Debug for GraphPlay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GraphPlay").field("file", &self.file).field("time", &self.time).finish_non_exhaustive()
    }
}

impl GraphPlay {
    /// Loads the graph file `path` for `character`, whose floor is at height `floor` and
    /// whose size is about `radius`.
    ///
    /// # Errors
    /// An unreadable file, or a graph the loader refuses (its message names the JSON pointer
    /// at fault), or clips whose root motion cannot be extracted.
    pub fn load(path: &Path, character: &Character, floor: f32, radius: f32) -> Result<Self, DemoError> {
        let text = std::fs::read(path).map_err(|e| DemoError::Args(format!("{}: {e}", path.display())))?;
        let clips = graph_clips(character)?;
        let graph = anim_graph::file::load(&text, &character.skeleton, &clips)
            .map_err(|e| DemoError::Args(format!("{}: {e}", path.display())))?;
        for w in graph.warnings() {
            log::warn!("{}: {w}", path.display());
        }
        // A plane as a height field of 2×2 samples, wide enough for any walk.
        let half = (radius * 1000.0).max(100.0);
        let plane = HeightField::new(-half, -half, 2.0 * half, 2, 2, vec![floor; 4])
            .map_err(|e| DemoError::Args(format!("the floor at {floor}: {e}")))?;
        let graph = Arc::new(graph);
        let mut play = Self {
            file: path.to_path_buf(),
            instance: GraphInstance::new(graph.clone()),
            graph,
            world: Transform::IDENTITY,
            step: Transform::IDENTITY,
            events: Vec::with_capacity(32),
            recent: VecDeque::with_capacity(RECENT_EVENTS),
            time: 0.0,
            on_floor: true,
            floor: Arc::new(plane),
            started: false,
        };
        play.instance.set_ground(Some(play.floor.clone()));
        Ok(play)
    }

    /// Starts again: parameters at their defaults, entry states, root motion at the origin.
    pub fn restart(&mut self) {
        self.instance.reset();
        self.world = Transform::IDENTITY;
        self.step = Transform::IDENTITY;
        self.events.clear();
        self.recent.clear();
        self.time = 0.0;
        self.started = false;
    }

    /// Advances the graph by `dt` seconds (0 evaluates it without moving on; the first
    /// update after the load or a restart is of 0 s, so it shows the graph's time 0, as
    /// `animtool graph`'s first frame does), writing the pose and the morph weights'
    /// defaults into `posed`; the character stands at
    /// `placement` (for foot grounding). Allocates nothing once the event buffers have
    /// grown to their size.
    ///
    /// # Errors
    /// A graph update or pose evaluation failure.
    pub fn advance(
        &mut self,
        dt: f32,
        placement: Transform,
        posed: &mut Posed,
        character: &Character,
    ) -> Result<(), DemoError> {
        let dt = if self.started { dt } else { 0.0 };
        self.started = true;
        self.instance.set_ground(self.on_floor.then(|| self.floor.clone()));
        self.instance.set_placement(placement);
        self.instance
            .update(dt, &mut posed.pose, &mut self.step, &mut self.events)
            .map_err(|e| DemoError::Args(format!("graph update at {:.3} s: {e}", self.time)))?;
        self.time += dt;
        self.world = self.world.combine(&self.step);
        for e in &self.events {
            if self.recent.len() == RECENT_EVENTS {
                self.recent.pop_front();
            }
            self.recent.push_back((self.time, *e));
        }
        posed.sample_weights(character, None, 0.0)?;
        posed.update(character)
    }

    /// Sets a parameter from its text form: `NAME=VALUE` (a number for a float, `true` or
    /// `false` for a bool) or `NAME` for a trigger, which fires.
    ///
    /// # Errors
    /// An unknown parameter, a value of the wrong kind, or a float out of the parameter's
    /// range or not finite.
    pub fn set_text(&mut self, spec: &str) -> Result<(), DemoError> {
        let bad = |what: String| DemoError::Args(format!("--param {spec}: {what}"));
        let (name, value) = match spec.split_once('=') {
            Some((n, v)) => (n.trim(), Some(v.trim())),
            None => (spec.trim(), None),
        };
        let info = self
            .graph
            .params()
            .infos()
            .iter()
            .find(|i| i.name == name)
            .ok_or_else(|| bad(format!("the graph {} has no parameter {name:?}", self.name())))?;
        let g = &self.graph;
        let set = match (info.kind, value) {
            (ParamKind::Trigger, None) => {
                self.instance.set_trigger(g.trigger_param(name).map_err(|e| bad(e.to_string()))?)
            }
            (ParamKind::Bool, Some(v)) => {
                let b = v.parse::<bool>().map_err(|_| bad(format!("{v:?} is not true or false")))?;
                self.instance.set_bool(g.bool_param(name).map_err(|e| bad(e.to_string()))?, b)
            }
            (ParamKind::Float, Some(v)) => {
                let x = v
                    .parse::<f32>()
                    .ok()
                    .filter(|x| x.is_finite())
                    .ok_or_else(|| bad(format!("{v:?} is not a number")))?;
                if x < info.min || x > info.max {
                    return Err(bad(format!("{x} is outside the parameter's range [{}, {}]", info.min, info.max)));
                }
                self.instance.set_float(g.float_param(name).map_err(|e| bad(e.to_string()))?, x)
            }
            (ParamKind::Trigger, Some(_)) => return Err(bad(format!("{name} is a trigger: give its name alone"))),
            (kind, None) => return Err(bad(format!("{name} is a {} parameter: give NAME=VALUE", kind.name()))),
        };
        set.map_err(|e| bad(e.to_string()))
    }

    /// One line per machine taking part (see [`crate::graph_view::machine_lines`]).
    pub fn machine_lines(&self) -> Vec<String> {
        crate::graph_view::machine_lines(&self.graph, &self.instance)
    }

    /// The file's name for display.
    pub fn name(&self) -> String {
        self.file.file_name().map_or_else(|| self.file.display().to_string(), |f| f.to_string_lossy().into_owned())
    }
}
