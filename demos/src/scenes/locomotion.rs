//! The mannequin as a playable character, driven by an animation graph (`anim-graph`):
//! the mannequin's locomotion graph by default (`anim_mannequin::LOCOMOTION_GRAPH`), or
//! any graph file with any character (`--model FILE --graph FILE`).
//!
//! W, A, S, D ask for a velocity in the character's frame (forwards, left, backwards,
//! right), Shift runs; the asked velocity is smoothed and handed to the graph as `move_x`
//! / `move_z`, where a polar 2D blend space of idle, walk and run in four directions picks
//! the clips and the graph's root motion moves the character. Q and E turn it. Space jumps:
//! the graph plays take-off, air and landing (inertialized), and the scene throws the
//! character up when the air state begins and tells the graph (`grounded`) when it is down
//! again. The right mouse button (or P) punches on an upper-body layer while the legs keep
//! going. Foot grounding keeps the planted feet on the uneven ground (I toggles it); the
//! camera follows (F). On screen: each machine's state and the transition in progress, the
//! blend-space point and weights, and a plot of the blend space.
//!
//! Headless, the scene plays [`SCRIPT`] instead of reading keys, so screenshots and tests
//! are deterministic. A graph without some of the parameters the scene drives (`move_x`,
//! `move_z`, `jump`, `punch`, `grounded`, `foot_ik`) simply does not get them.
//!
//! The panel lists the graph's parameters as controls: `move_x` and `move_z` as sliders
//! (moving one makes the panel, not the keys, ask for the velocity, until "keys" is
//! ticked again), triggers as buttons, bools as check boxes, and any other float the
//! graph declares as a slider over its range; the parameters the scene drives (`grounded`
//! from the jump, `foot_ik` from the IK switch) show their value. Below, each machine's
//! active state and transition and the blend space's weights (the text in the view's
//! top-left corner, which the panel covers).

use crate::DemoError;
use crate::app::{CommonArgs, Key, Scene};
use crate::character::Character;
use crate::hud::Screen;
use crate::root_motion::root_motion_clip;
use crate::scenes::ch13_foot_ik::{ground_height, ground_mesh_of, ground_of};
use crate::stage::{BODY_COLOR, STAGE_CONTROLS, Stage};
use anim_graph::clips::ClipSet;
use anim_graph::event::{GraphEvent, NodeId, StateId};
use anim_graph::graph::{Graph, NodeType};
use anim_graph::instance::GraphInstance;
use anim_graph::param::{BoolParam, FloatParam, TriggerParam};
use anim_ik::HeightField;
use anim_math::{Mat4, Quat, Transform, Vec3};
use anim_render_vk::{Coloring, FrameData, MeshId, Renderer};
use std::path::Path;
use std::sync::Arc;

/// Half the size of the ground, metres.
pub const GROUND_HALF: f32 = 12.0;
/// Ground cell size, metres.
pub const GROUND_CELL: f32 = 0.25;
/// Upward speed when the air state begins, m/s (about 0.5 m high, 0.65 s in the air).
pub const JUMP_SPEED: f32 = 3.2;
/// Gravity, m/s².
pub const GRAVITY: f32 = 9.81;
/// Turning rate of Q and E, rad/s.
pub const TURN_RATE: f32 = 1.6;
/// How fast the velocity follows the keys, 1/s.
pub const RESPONSE: f32 = 6.0;
/// Time constant of the body rising back after foot grounding lowered it, seconds.
pub const RISE_TIME: f32 = 0.15;
/// Velocities the keys ask for (m/s): walking forwards, backwards and sideways, then running.
pub const WALK: [f32; 3] = [0.85, 0.83, 0.56];
/// See [`WALK`].
pub const RUN: [f32; 3] = [2.21, 1.69, 1.35];

/// A key the scene reads as held.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hold {
    /// W.
    Forward,
    /// S.
    Back,
    /// A.
    Left,
    /// D.
    Right,
    /// Shift.
    Run,
    /// Q.
    TurnLeft,
    /// E.
    TurnRight,
}

/// One step of the headless script.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Action {
    /// A key goes down.
    Press(Hold),
    /// A key comes up.
    Release(Hold),
    /// Space.
    Jump,
    /// The mouse button.
    Punch,
}

/// What headless runs play: `(seconds, action)`. The screenshot (60 frames of 1/30 s) shows
/// the character running forwards and to its left while punching; the rest walks through a
/// jump, backwards and sideways steps and a turn.
pub const SCRIPT: &[(f32, Action)] = &[
    (0.3, Action::Press(Hold::Forward)),
    (0.8, Action::Press(Hold::Run)),
    (1.2, Action::Press(Hold::Left)),
    (1.55, Action::Punch),
    (2.1, Action::Release(Hold::Run)),
    (2.1, Action::Release(Hold::Left)),
    (2.4, Action::Release(Hold::Forward)),
    (2.7, Action::Jump),
    (4.6, Action::Press(Hold::Back)),
    (5.6, Action::Release(Hold::Back)),
    (5.6, Action::Press(Hold::Right)),
    (6.6, Action::Release(Hold::Right)),
    (6.6, Action::Press(Hold::TurnLeft)),
    (6.6, Action::Press(Hold::Forward)),
    (7.6, Action::Release(Hold::TurnLeft)),
    (8.0, Action::Release(Hold::Forward)),
];

/// Keys held now.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Input {
    /// W, S, A, D, Shift, Q, E.
    pub held: [bool; 7],
}

impl Input {
    fn index(h: Hold) -> usize {
        h as usize
    }

    /// Whether `h` is held.
    pub fn is(&self, h: Hold) -> bool {
        self.held[Self::index(h)]
    }

    /// Sets `h`.
    pub fn set(&mut self, h: Hold, down: bool) {
        self.held[Self::index(h)] = down;
    }

    /// The velocity the keys ask for: `[x, z]` in the character's frame (m/s).
    pub fn velocity(&self) -> [f32; 2] {
        let [fwd, back, side] = if self.is(Hold::Run) { RUN } else { WALK };
        let z = f32::from(u8::from(self.is(Hold::Forward))) * fwd - f32::from(u8::from(self.is(Hold::Back))) * back;
        let x = (f32::from(u8::from(self.is(Hold::Left))) - f32::from(u8::from(self.is(Hold::Right)))) * side;
        [x, z]
    }
}

/// The parameters the scene drives, those the graph has.
#[derive(Clone, Copy, Debug)]
struct Params {
    move_x: Option<FloatParam>,
    move_z: Option<FloatParam>,
    jump: Option<TriggerParam>,
    punch: Option<TriggerParam>,
    grounded: Option<BoolParam>,
    foot_ik: Option<FloatParam>,
}

/// The graph's clips for `character`: the mannequin's root-motion clips (with foot events),
/// or a glTF character's clips with their root motion extracted (in-place walks given the
/// travel their planted feet imply).
///
/// # Errors
/// Extraction failures.
pub fn graph_clips(character: &Character) -> Result<ClipSet, DemoError> {
    if character.name == "mannequin" {
        return Ok(ClipSet::from_clips(anim_mannequin::build().root_motion_clips().into_iter().map(Arc::new)));
    }
    let clips: Result<Vec<_>, DemoError> =
        (0..character.clips.len()).map(|i| root_motion_clip(character, i).map(Arc::new)).collect();
    Ok(ClipSet::from_clips(clips?))
}

/// The playable character without drawing: graph, input, physics, foot grounding.
pub struct Player {
    /// The character and its pose (the graph's output).
    pub stage: Stage,
    /// The graph.
    pub graph: Arc<Graph>,
    /// The character's graph instance.
    pub instance: GraphInstance,
    /// The uneven ground.
    pub ground: Arc<HeightField>,
    /// Keys held.
    pub input: Input,
    /// Where the character stands on the ground plane (`y` unused).
    pub position: Vec3,
    /// Its heading about +y, radians (0 faces +z).
    pub yaw: f32,
    /// The velocity handed to the graph, `[x, z]` in the character's frame.
    pub velocity: [f32; 2],
    /// Height above the ground while jumping.
    pub height: f32,
    vertical: f32,
    /// In the air (thrown up by the air state, until it lands).
    pub airborne: bool,
    /// Smoothed vertical offset of foot grounding (≤ 0).
    pub lift: f32,
    /// Where the character is drawn (placement with the grounding's offset).
    pub placement: Transform,
    /// The last update's root-motion step and events.
    pub root_motion: Transform,
    /// The last update's events.
    pub events: Vec<GraphEvent>,
    /// Seconds played.
    pub time: f32,
    /// Plays [`SCRIPT`] instead of keys.
    pub scripted: bool,
    /// The velocity the panel asks for (`[x, z]`, m/s, the character's frame) instead of
    /// the keys; `None`: the keys (or the script) ask.
    pub manual: Option<[f32; 2]>,
    script_at: usize,
    /// Foot grounding on.
    pub ik: bool,
    params: Params,
    /// The machine with an `air` state, and that state.
    air: Option<(NodeId, StateId)>,
}

impl Player {
    /// `character` playing `graph_file` (default: the mannequin's locomotion graph).
    ///
    /// # Errors
    /// An unreadable or refused graph file, or clip preparation failures.
    pub fn new(character: Character, graph_file: Option<&Path>, scripted: bool) -> Result<Self, DemoError> {
        let clips = graph_clips(&character)?;
        let text = match graph_file {
            Some(p) => std::fs::read(p).map_err(|e| DemoError::Args(format!("{}: {e}", p.display())))?,
            None => anim_mannequin::LOCOMOTION_GRAPH.as_bytes().to_vec(),
        };
        let name = graph_file.map_or_else(|| "the locomotion graph".to_owned(), |p| p.display().to_string());
        let graph = anim_graph::file::load(&text, &character.skeleton, &clips)
            .map_err(|e| DemoError::Args(format!("{name}: {e}")))?;
        for w in graph.warnings() {
            log::warn!("{name}: {w}");
        }
        let graph = Arc::new(graph);
        let params = Params {
            move_x: graph.float_param("move_x").ok(),
            move_z: graph.float_param("move_z").ok(),
            jump: graph.trigger_param("jump").ok(),
            punch: graph.trigger_param("punch").ok(),
            grounded: graph.bool_param("grounded").ok(),
            foot_ik: graph.float_param("foot_ik").ok(),
        };
        let air = graph.machines().find_map(|m| graph.state(m, "air").map(|s| (m, s)));
        let ground = Arc::new(ground_of(GROUND_HALF, GROUND_CELL)?);
        let mut instance = GraphInstance::new(graph.clone());
        instance.set_ground(Some(ground.clone()));
        let mut p = Self {
            stage: Stage::with_character(character)?,
            graph,
            instance,
            ground,
            input: Input::default(),
            position: Vec3::zeros(),
            yaw: 0.0,
            velocity: [0.0; 2],
            height: 0.0,
            vertical: 0.0,
            airborne: false,
            lift: 0.0,
            placement: Transform::IDENTITY,
            root_motion: Transform::IDENTITY,
            events: Vec::with_capacity(32),
            time: 0.0,
            scripted,
            manual: None,
            script_at: 0,
            ik: true,
            params,
            air,
        };
        p.step(0.0)?;
        Ok(p)
    }

    /// Space: jump (the graph takes off when it can; `grounded` goes false).
    pub fn jump(&mut self) {
        if self.airborne {
            return;
        }
        if let Some(j) = self.params.jump {
            self.instance.set_trigger(j).expect("a handle of this graph");
        }
        if let Some(g) = self.params.grounded {
            self.instance.set_bool(g, false).expect("a handle of this graph");
        }
    }

    /// The mouse button: punch.
    pub fn punch(&mut self) {
        if let Some(p) = self.params.punch {
            self.instance.set_trigger(p).expect("a handle of this graph");
        }
    }

    fn play_script(&mut self) {
        while let Some(&(at, action)) = SCRIPT.get(self.script_at) {
            if at > self.time + 1e-4 {
                break;
            }
            self.script_at += 1;
            match action {
                Action::Press(h) => self.input.set(h, true),
                Action::Release(h) => self.input.set(h, false),
                Action::Jump => self.jump(),
                Action::Punch => self.punch(),
            }
        }
    }

    /// Advances by `dt` seconds: input, graph, root motion, jump physics, grounding.
    ///
    /// # Errors
    /// A graph update failure (only for a pose of another skeleton: not here).
    pub fn step(&mut self, dt: f32) -> Result<(), DemoError> {
        self.time += dt;
        if self.scripted {
            self.play_script();
        }
        let turn =
            f32::from(u8::from(self.input.is(Hold::TurnLeft))) - f32::from(u8::from(self.input.is(Hold::TurnRight)));
        self.yaw += turn * TURN_RATE * dt;
        let want = self.manual.unwrap_or_else(|| self.input.velocity());
        let k = 1.0 - (-RESPONSE * dt).exp();
        for (v, w) in self.velocity.iter_mut().zip(want) {
            *v += (w - *v) * k;
        }
        let set = |i: &mut GraphInstance, p: Option<FloatParam>, v: f32| {
            if let Some(p) = p {
                i.set_float(p, v).expect("finite values of this graph's parameters");
            }
        };
        set(&mut self.instance, self.params.move_x, self.velocity[0]);
        set(&mut self.instance, self.params.move_z, self.velocity[1]);
        set(&mut self.instance, self.params.foot_ik, f32::from(u8::from(self.ik)));
        self.lift *= (-dt / RISE_TIME).exp();
        let base = self.ground.height(self.position.x, self.position.z).unwrap_or(0.0);
        let facing = Quat::from_axis_angle(&Vec3::y_axis(), self.yaw);
        let place = Transform::new(
            Vec3::new(self.position.x, base + self.height + self.lift, self.position.z),
            facing,
            Vec3::new(1.0, 1.0, 1.0),
        );
        self.instance.set_placement(place);
        let (ch, posed) = (&self.stage.character, &mut self.stage.posed);
        self.instance
            .update(dt, &mut posed.pose, &mut self.root_motion, &mut self.events)
            .map_err(|e| DemoError::Args(format!("graph update: {e}")))?;
        posed.update(ch)?;
        // Root motion moves the character over the ground plane and turns it.
        let step = facing * self.root_motion.translation;
        self.position += Vec3::new(step.x, 0.0, step.z);
        let turned = self.root_motion.rotation * Vec3::z();
        self.yaw += turned.x.atan2(turned.z);
        let limit = GROUND_HALF - 1.0;
        self.position.x = self.position.x.clamp(-limit, limit);
        self.position.z = self.position.z.clamp(-limit, limit);
        // The air state throws the character up; landing tells the graph.
        let entered_air = self
            .events
            .iter()
            .any(|e| matches!(*e, GraphEvent::Enter { machine, state } if Some((machine, state)) == self.air));
        if entered_air && !self.airborne {
            self.airborne = true;
            self.vertical = JUMP_SPEED;
        }
        if self.airborne {
            // Exact for constant gravity: the height is on the parabola at every update.
            self.height += (self.vertical - 0.5 * GRAVITY * dt) * dt;
            self.vertical -= GRAVITY * dt;
            if self.height <= 0.0 {
                (self.height, self.vertical, self.airborne) = (0.0, 0.0, false);
                if let Some(g) = self.params.grounded {
                    self.instance.set_bool(g, true).expect("a handle of this graph");
                }
            }
        }
        let offset = self.instance.ground_offset();
        self.placement = place;
        self.placement.translation.y += offset;
        self.lift += offset;
        Ok(())
    }

    /// The current state of the machine named `machine`, by name.
    pub fn state(&self, machine: &str) -> Option<&str> {
        let m = self.graph.node(machine)?;
        self.graph.state_name(m, self.instance.current_state(m)?)
    }

    /// One line per machine taking part: `name: state`, with the transition in progress
    /// (see [`crate::graph_view::machine_lines`]).
    pub fn machine_lines(&self) -> Vec<String> {
        crate::graph_view::machine_lines(&self.graph, &self.instance)
    }

    /// The first 2D blend space taking part.
    pub fn blend_space(&self) -> Option<NodeId> {
        self.graph
            .nodes()
            .find(|&n| self.graph.node_type(n) == Some(NodeType::BlendSpace2d) && self.instance.weight(n) > 0.0)
    }
}

/// The scene: the player, the ground, the follow camera and the display.
pub struct Locomotion {
    /// The playable character.
    pub player: Player,
    ground_id: MeshId,
    samples: usize,
    /// The camera follows the character.
    pub follow: bool,
    focus_at: Vec3,
    start_yaw: f32,
    size: (u32, u32),
}

impl std::fmt::Debug for Locomotion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Locomotion").field("time", &self.player.time).finish_non_exhaustive()
    }
}

const TEXT: [f32; 4] = [1.0, 1.0, 0.92, 1.0];
const DIM: [f32; 4] = [0.75, 0.8, 0.85, 1.0];
const ACCENT: [f32; 4] = [1.0, 0.75, 0.25, 1.0];

impl Locomotion {
    /// The display: machine states, velocity and blend weights on the left, the blend
    /// space's plot on the right.
    fn hud(&self, frame: &mut FrameData) {
        let p = &self.player;
        let (w, _) = self.size;
        let s = Screen::new(&frame.camera, self.size.0, self.size.1);
        let size = 16.0;
        let mut y = 10.0;
        for line in p.machine_lines() {
            s.text(frame, 12.0, y, size, &line, TEXT);
            y += size * 1.3;
        }
        s.text(
            frame,
            12.0,
            y,
            size,
            &format!("move x {:+.2} z {:+.2} m/s{}", p.velocity[0], p.velocity[1], if p.ik { "" } else { "  ik off" }),
            DIM,
        );
        y += size * 1.5;
        let Some(space) = p.blend_space() else { return };
        let (points, kids, weights) =
            (p.graph.blend_points(space), p.graph.blend_children(space), p.instance.blend_weights(space));
        for (k, (&child, &wk)) in kids.iter().zip(weights).enumerate() {
            let name = p.graph.node_name(child).unwrap_or("?");
            let row = y + k as f32 * size * 1.1;
            s.text(frame, 12.0, row, size * 0.8, name, if wk > 0.0 { TEXT } else { DIM });
            s.rect(frame, 140.0, row + 2.0, 80.0, size * 0.6, DIM);
            if wk > 0.0 {
                s.bar(frame, 140.0, row + 2.0, 80.0 * wk, size * 0.6, ACCENT);
            }
            s.text(frame, 228.0, row, size * 0.8, &format!("{wk:.2}"), if wk > 0.0 { TEXT } else { DIM });
        }
        // The plot: x (to the left) drawn leftwards, z upwards; the input as a cross.
        let (box_size, margin) = (180.0, 12.0);
        let (x0, y0) = (w as f32 - box_size - margin, margin);
        let extent = points.iter().flat_map(|q| [q[0].abs(), q[1].abs()]).fold(0.5f32, f32::max) * 1.15;
        let at = |q: [f32; 2]| {
            [x0 + box_size * 0.5 - q[0] / extent * box_size * 0.5, y0 + box_size * 0.5 - q[1] / extent * box_size * 0.5]
        };
        s.rect(frame, x0, y0, box_size, box_size, DIM);
        s.line(frame, at([extent, 0.0]), at([-extent, 0.0]), [0.5, 0.55, 0.6, 1.0]);
        s.line(frame, at([0.0, extent]), at([0.0, -extent]), [0.5, 0.55, 0.6, 1.0]);
        for (q, &wk) in points.iter().zip(weights) {
            let c = at(*q);
            s.circle(frame, c[0], c[1], 3.0, DIM);
            if wk > 0.0 {
                s.circle(frame, c[0], c[1], 3.0 + 14.0 * wk, ACCENT);
            }
        }
        let c = at(p.instance.blend_input(space));
        s.line(frame, [c[0] - 7.0, c[1]], [c[0] + 7.0, c[1]], TEXT);
        s.line(frame, [c[0], c[1] - 7.0], [c[0], c[1] + 7.0], TEXT);
        s.text(frame, x0, y0 + box_size + 6.0, size * 0.8, "blend space", DIM);
        s.text(frame, x0, y0 + box_size + 6.0 + size, size * 0.8, "x: left  z: forwards", DIM);
    }
}

impl Scene for Locomotion {
    const NAME: &'static str = "locomotion";
    const ABOUT: &'static str = "The mannequin as a playable character driven by an animation graph: a 2D blend space of \
                                 idle, walk and run, a jump, a punch layer, foot grounding.";
    const CONTROLS: &'static [(&'static str, &'static str)] = &[
        ("w a s d", "move (forwards, left, backwards, right)"),
        ("shift", "run"),
        ("q e", "turn"),
        ("space", "jump"),
        ("right mouse / p", "punch"),
        ("i", "foot IK on / off"),
        ("f", "camera follows the character"),
        STAGE_CONTROLS[0],
        STAGE_CONTROLS[1],
        STAGE_CONTROLS[2],
    ];

    fn new(renderer: &mut Renderer, args: &CommonArgs) -> Result<Self, DemoError> {
        let character = Character::load(args.model.as_deref())?;
        let mut player = Player::new(character, args.graph.as_deref(), args.headless)?;
        player.stage.upload(renderer, &Coloring::Uniform(BODY_COLOR))?;
        (player.stage.method, player.stage.backend) = (args.method, args.backend);
        let (mesh, colors, samples) = ground_mesh_of(GROUND_HALF, GROUND_CELL);
        let ground_id = renderer.add_mesh(&mesh, &Coloring::PerVertex(colors))?;
        let focus_at = player.placement.translation + Vec3::new(0.0, 0.9, 0.0);
        Ok(Self {
            start_yaw: player.yaw,
            player,
            ground_id,
            samples,
            follow: true,
            focus_at,
            size: (args.width, args.height),
        })
    }

    fn focus(&self) -> (Vec3, f32) {
        (self.focus_at, 1.35)
    }

    fn view_angles(&self) -> (f32, f32) {
        // In front of the character, to its left, a little above.
        (0.75, 0.2)
    }

    fn update(&mut self, dt: f32, frame: &mut FrameData) -> Result<(), DemoError> {
        self.player.step(dt)?;
        let p = &mut self.player;
        if self.follow {
            // The orbit keeps its place relative to the character: moved with it and turned
            // with its heading.
            let turn = Quat::from_axis_angle(&Vec3::y_axis(), p.yaw - self.start_yaw);
            let target = p.placement.translation + Vec3::new(0.0, 0.9 - p.height, 0.0);
            let offset = turn * (frame.camera.eye - frame.camera.target);
            frame.camera.target += target - self.focus_at;
            frame.camera.eye = frame.camera.target + offset;
        }
        let view = (frame.camera.eye - frame.camera.target).normalize();
        frame.camera.light_dir = (view + Vec3::new(0.0, 1.3, 0.0) + view.cross(&Vec3::y()) * 0.4).normalize();
        p.stage.draw(frame, &p.placement.to_matrix())?;
        frame.add_static(self.ground_id, Mat4::identity(), [1.0; 3]);
        // Grid lines every metre (every 4 samples), lifted a little.
        let n = self.samples;
        let at = |i: usize, k: usize| {
            let (x, z) = (-GROUND_HALF + i as f32 * GROUND_CELL, -GROUND_HALF + k as f32 * GROUND_CELL);
            Vec3::new(x, ground_height(x, z) + 0.004, z)
        };
        let grid = [0.2, 0.26, 0.18, 1.0];
        for a in (0..n).step_by(4) {
            for b in 0..n - 1 {
                frame.line(at(a, b), at(a, b + 1), grid);
                frame.line(at(b, a), at(b + 1, a), grid);
            }
        }
        self.hud(frame);
        Ok(())
    }

    fn key(&mut self, key: Key) {
        if self.player.stage.key(key) {
            return;
        }
        let input = &mut self.player.input;
        match key {
            Key::Char('w') => input.set(Hold::Forward, true),
            Key::Char('s') => input.set(Hold::Back, true),
            Key::Char('a') => input.set(Hold::Left, true),
            Key::Char('d') => input.set(Hold::Right, true),
            Key::Char('q') => input.set(Hold::TurnLeft, true),
            Key::Char('e') => input.set(Hold::TurnRight, true),
            Key::Shift => input.set(Hold::Run, true),
            Key::Space => self.player.jump(),
            Key::Mouse | Key::Char('p') => self.player.punch(),
            Key::Char('i') => self.player.ik = !self.player.ik,
            Key::Char('f') => self.follow = !self.follow,
            _ => {}
        }
    }

    fn key_released(&mut self, key: Key) {
        let hold = match key {
            Key::Char('w') => Hold::Forward,
            Key::Char('s') => Hold::Back,
            Key::Char('a') => Hold::Left,
            Key::Char('d') => Hold::Right,
            Key::Char('q') => Hold::TurnLeft,
            Key::Char('e') => Hold::TurnRight,
            Key::Shift => Hold::Run,
            _ => return,
        };
        self.player.input.set(hold, false);
    }

    #[cfg(feature = "ui")]
    fn panel(&mut self, ui: &mut anim_render_vk::ui::egui::Ui, _view: &crate::ui::UiView<'_>) {
        use crate::ui::tag;
        use crate::widgets::{check, grid, section, slider};
        use anim_graph::param::ParamKind;
        let p = &mut self.player;
        let graph = p.graph.clone();
        section(ui, "Graph parameters", "loco-params", true, |ui| {
            grid(ui, "loco-params-grid", |ui| {
                for info in graph.params().infos() {
                    let name = info.name.as_str();
                    let (lo, hi) =
                        if info.min.is_finite() && info.max.is_finite() { (info.min, info.max) } else { (-10.0, 10.0) };
                    match (info.kind, name) {
                        (ParamKind::Float, "move_x" | "move_z") => {
                            let k = usize::from(name == "move_z");
                            let mut v = p.manual.map_or(p.velocity[k], |m| m[k]);
                            if slider(ui, name, name, &mut v, lo..=hi, |s| s.step_by(0.01), |v| format!("{v:+.2} m/s"))
                            {
                                let mut m = p.manual.unwrap_or(p.velocity);
                                m[k] = v;
                                p.manual = Some(m);
                            }
                        }
                        (ParamKind::Float, "foot_ik") => {
                            check(ui, name, name, &mut p.ik, "foot grounding (i)");
                        }
                        (ParamKind::Bool, "grounded") => {
                            let on = graph.bool_param(name).ok().and_then(|h| p.instance.bool(h).ok());
                            crate::widgets::value(ui, name, format!("{} (the jump sets it)", on.unwrap_or(true)));
                        }
                        (ParamKind::Trigger, "jump" | "punch") => {
                            ui.label(name);
                            let what = if name == "jump" { "jump (space)" } else { "punch (p)" };
                            if tag(ui.button(what), name).clicked() {
                                if name == "jump" {
                                    p.jump();
                                } else {
                                    p.punch();
                                }
                            }
                            ui.end_row();
                        }
                        _ => {
                            crate::graph_view::param_row(ui, &graph, &mut p.instance, info, "");
                        }
                    }
                }
                let mut keys = p.manual.is_none();
                if check(ui, "velocity", "keys", &mut keys, "from the keys (w a s d, shift)") {
                    p.manual = if keys { None } else { Some(p.velocity) };
                }
            });
        });
        section(ui, "Active states", "loco-states", true, |ui| {
            for line in p.machine_lines() {
                ui.label(line);
            }
            crate::graph_view::blend_space_bars(ui, &graph, &p.instance);
        });
        ui.separator();
        grid(ui, "loco-view-grid", |ui| {
            check(ui, "camera", "follow", &mut self.follow, "follows the character (f)");
        });
        self.player.stage.panel(ui);
    }

    fn status(&self) -> String {
        format!("{} | {}", self.player.machine_lines().join(" | "), self.player.stage.status())
    }
}
