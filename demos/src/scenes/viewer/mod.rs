//! The viewer: plays the clips of the default character (or `--model`, or a glTF file
//! dropped onto the window or opened from the panel), with LBS/DQ, CPU/GPU-vertex/GPU-compute
//! skinning, a skeleton overlay and an orbit camera.
//!
//! With the `ui` feature it is a tool (see `panels.rs`): the panel opens files (a failed
//! import shows the loader's message, JSON pointer included, and keeps the model shown),
//! picks the clip, the skinning method and backend, the debug colourings and the overlays
//! (skeleton, normals, bounds) and holds the morph-target sliders; a timeline plays,
//! pauses, steps, scrubs, sets speed (negative too) and loop mode, and marks the clip's
//! events and foot contacts; the "Model" window lists skins, joints, meshes, morph
//! targets, materials and clips; the "Joints" window is the joint tree, where a selected
//! joint is highlighted with its weights on the mesh and its local and model transforms
//! shown; the "Timings" window plots CPU time per stage and GPU time per pass.
//!
//! An animation graph (`--graph FILE`, or a `.json` graph file opened or dropped like a
//! model) plays in place of the clip ([`GraphPlay`]): the panel then shows the graph's
//! parameters as controls (floats as sliders, bools as check boxes, triggers as buttons)
//! and its machines' active states and transitions and its blend spaces' weights, and the
//! timeline plays, pauses and steps the graph and shows its recent events.
//!
//! The state all that drives is public, so tests (and keys) reach it without the panel:
//! [`Viewer::select_clip`], [`Viewer::seek`], [`Viewer::step_frames`],
//! [`Viewer::set_looping`], [`Viewer::select_joint`], [`Viewer::set_morph`],
//! [`Viewer::open`], [`Viewer::open_graph`].

mod graph;
mod info;
mod overlays;
#[cfg(feature = "ui")]
mod panels;
mod timeline;

pub use graph::{GraphPlay, HISTORY_SECONDS, RECENT_EVENTS};
pub use info::{ClipFacts, MeshFacts, ModelInfo};
pub use overlays::{BOUNDS_COLOR, MAX_NORMALS, NORMALS_COLOR, SELECTED_COLOR};
pub use timeline::{CONTACT_THRESHOLD, ContactSpans, FRAME_STEP, Looping, Marks};

use crate::app::{CommonArgs, Key, Scene};
use crate::stage::{BODY_COLOR, Stage};
use crate::{Backend, Character, DemoError};
use anim_core::clip::playback::Playback;
use anim_core::clip::{Clip, TimePolicy};
use anim_math::{Mat4, Transform, Vec3};
use anim_render_vk::{Coloring, FrameData, MeshId, Renderer};
use std::path::{Path, PathBuf};

/// What the `j` key cycles through: the shaded look and seed 003's debug colourings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ColorView {
    /// Skin colour, shaded (or the weight heat map of `w`).
    #[default]
    Shaded,
    /// Each vertex in the colour of its strongest joint ([`Coloring::ByJoint`]).
    ByJoint,
    /// Bind-pose normals as colours ([`Coloring::Normals`]).
    Normals,
    /// The first four joint indices as colours ([`Coloring::JointIndices`]).
    JointIndices,
}

impl ColorView {
    /// Every view, in the order `j` cycles them.
    pub const ALL: [ColorView; 4] = [Self::Shaded, Self::ByJoint, Self::Normals, Self::JointIndices];

    /// The next view.
    pub fn next(self) -> Self {
        let i = Self::ALL.iter().position(|v| *v == self).unwrap_or(0);
        Self::ALL[(i + 1) % Self::ALL.len()]
    }

    /// Short name.
    pub fn label(self) -> &'static str {
        match self {
            Self::Shaded => "shaded",
            Self::ByJoint => "by joint",
            Self::Normals => "normals",
            Self::JointIndices => "joint indices",
        }
    }
}

/// Root-motion playback of one clip (the `o` key): the in-place clip and where the
/// character stands. It plays at the viewer's [`Viewer::playback`].
#[derive(Debug)]
pub struct RootMotionState {
    /// Index of the character's clip this was made from.
    pub source: usize,
    /// The clip with its root motion extracted ([`crate::root_motion::root_motion_clip`]).
    pub clip: Clip,
    /// The character's world transform, moved by every step's root-motion delta.
    pub world: Transform,
}

/// The viewer scene.
#[derive(Debug)]
pub struct Viewer {
    /// The character, its pose, method, backend and framing; its meshes have the shaded
    /// look.
    pub stage: Stage,
    /// Meshes coloured by joint, normals and joint indices (seed 003's debug views), in
    /// [`ColorView::ALL`] order after the shaded look.
    pub debug_meshes: [Vec<MeshId>; 3],
    /// Clip playing (`None`: rest pose). Writing it starts the new clip at [`Viewer::time`]
    /// on the next update (as [`Viewer::select_clip`] does at 0).
    pub clip: Option<usize>,
    /// Time in the clip shown, seconds (the playback's [`Playback::time`]). Writing it moves
    /// the playback there on the next update (as [`Viewer::seek`] does at once).
    pub time: f32,
    /// Draw the ground grid.
    pub show_grid: bool,
    /// The colouring shown.
    pub view: ColorView,
    /// Joint whose weights are shown as a heat map on the shaded meshes (`None`: plain), as
    /// an index into the first skin's joints.
    pub weight_joint: Option<u16>,
    recolor: bool,
    /// Time stands still.
    pub paused: bool,
    /// Root motion on (`o`): the character walks across the floor, the camera follows.
    pub root_motion: Option<RootMotionState>,
    want_root_motion: bool,
    /// The clip's playback: position, speed (negative plays backwards) and loop mode, as
    /// [`Viewer::looping`] made it.
    pub playback: Playback,
    /// How the clip loops (see [`Viewer::set_looping`]).
    pub looping: Looping,
    /// The clip [`Viewer::playback`] and [`Viewer::marks`] were made for; `None` forces
    /// them to be made again.
    playing: Option<Option<usize>>,
    /// [`Viewer::time`] as the last update left it (another value was written from outside).
    shown: f32,
    /// Events and foot contacts of the clip playing, for the timeline.
    pub marks: Marks,
    /// Facts about the model shown.
    pub info: ModelInfo,
    /// Joint selected in the joint tree (skeleton index): highlighted in the view.
    pub selected_joint: Option<usize>,
    /// Per part, per morph target: the weight its slider holds, overriding the clip's;
    /// `None` follows the clip (see [`Viewer::set_morph`]).
    pub morph_override: Vec<Vec<Option<f32>>>,
    /// Draw the skinned normals.
    pub show_normals: bool,
    /// Draw the skinned bounds.
    pub show_bounds: bool,
    /// The path in the panel's file field.
    pub file_field: String,
    /// Why the last file failed to open: the path and the loader's message (a glTF
    /// error names the element at fault as a JSON pointer). `None` after a success.
    pub load_error: Option<String>,
    /// The file the model shown came from (`None`: the mannequin).
    pub source: Option<PathBuf>,
    pending_open: Option<PathBuf>,
    refocus: bool,
    /// The timeline's bar is held: time stands where it points.
    scrubbing: bool,
    /// The animation graph playing in place of the clip (see [`Viewer::open_graph`]).
    pub graph: Option<GraphPlay>,
    /// Why the last graph file failed to open (or to load for a new model): the path and
    /// the loader's message with its JSON pointer. `None` after a success.
    pub graph_error: Option<String>,
    /// Graph time still to play while paused (the frame steps).
    graph_pending: f32,
}

/// The debug-colouring meshes of `ch` ([`Viewer::debug_meshes`]).
fn upload_debug(renderer: &mut Renderer, ch: &Character) -> Result<[Vec<MeshId>; 3], DemoError> {
    Ok([
        ch.upload(renderer, &Coloring::ByJoint)?,
        ch.upload(renderer, &Coloring::Normals)?,
        ch.upload(renderer, &Coloring::JointIndices)?,
    ])
}

impl Viewer {
    /// Turns root motion on or off for the current clip (off without a clip).
    ///
    /// # Errors
    /// Root motion could not be extracted from the clip.
    pub fn set_root_motion(&mut self, on: bool) -> Result<(), DemoError> {
        self.want_root_motion = on;
        self.root_motion = match (on, self.clip) {
            (true, Some(c)) => {
                let clip = crate::root_motion::root_motion_clip(&self.stage.character, c)?;
                Some(RootMotionState { source: c, clip, world: Transform::IDENTITY })
            }
            _ => None,
        };
        Ok(())
    }

    /// Whether root motion is asked for (it is extracted on the next update).
    pub fn wants_root_motion(&self) -> bool {
        self.want_root_motion
    }

    /// Plays `clip` (`None`: the rest pose) from its start, in place of the graph if one
    /// played.
    pub fn select_clip(&mut self, clip: Option<usize>) {
        self.close_graph();
        self.clip = clip.filter(|c| *c < self.stage.character.clips.len());
        self.time = 0.0;
        self.sync_playback();
    }

    /// Moves the playback to `time` seconds of the clip (its span clamps it: a playback
    /// that plays once stays inside the clip) and shows it on the next update.
    pub fn seek(&mut self, time: f32) {
        self.sync_playback();
        self.playback.seek(f64::from(time));
        self.time = self.playback.time();
        self.shown = self.time;
    }

    /// Pauses and moves `frames` frames of [`FRAME_STEP`] forwards (backwards when
    /// negative), looping as the playback does. A graph only steps forwards.
    pub fn step_frames(&mut self, frames: i32) {
        if self.graph.is_some() {
            self.paused = true;
            self.graph_pending += frames.max(0) as f32 * FRAME_STEP;
            return;
        }
        self.sync_playback();
        self.paused = true;
        self.playback.seek(self.playback.position() + f64::from(frames) * f64::from(FRAME_STEP));
        self.time = self.playback.time();
        self.shown = self.time;
    }

    /// Plays or pauses; a playback that played once to its end starts again.
    pub fn toggle_play(&mut self) {
        self.paused = !self.paused;
        if !self.paused && self.playback.is_finished() {
            let (lo, hi) = self.playback.span();
            self.playback.seek(if self.playback.speed < 0.0 { hi } else { lo });
            self.time = self.playback.time();
            self.shown = self.time;
        }
    }

    /// Sets the loop mode, keeping the time shown.
    pub fn set_looping(&mut self, looping: Looping) {
        self.sync_playback();
        self.looping = looping;
        let time = self.time;
        self.playback = looping.playback(self.playback.duration(), self.playback.speed);
        self.playback.seek(f64::from(time));
    }

    /// Sets morph target `target` of part `part` to `weight` over the clip's (`None`: back
    /// to the clip). Unknown parts or targets are ignored.
    pub fn set_morph(&mut self, part: usize, target: usize, weight: Option<f32>) {
        if let Some(w) = self.morph_override.get_mut(part).and_then(|p| p.get_mut(target)) {
            *w = weight.filter(|w| w.is_finite());
        }
    }

    /// Every morph target back to the clip's weights.
    pub fn reset_morphs(&mut self) {
        self.morph_override.iter_mut().flatten().for_each(|w| *w = None);
    }

    /// Selects skeleton joint `joint` (`None`: none): it is highlighted in the view, and its
    /// weights are shown on the mesh when it is a joint of the first skin.
    pub fn select_joint(&mut self, joint: Option<usize>) {
        let joint = joint.filter(|j| *j < self.stage.character.skeleton.len());
        self.selected_joint = joint;
        let in_skin = joint.and_then(|j| {
            let skin = self.stage.character.skins.first()?;
            skin.joints().iter().position(|s| *s == j).and_then(|i| u16::try_from(i).ok())
        });
        if in_skin != self.weight_joint {
            self.weight_joint = in_skin;
            self.view = ColorView::Shaded;
            self.recolor = true;
        }
    }

    /// Shows or hides the selected joint's weights as a heat map on the mesh.
    pub fn show_selected_weights(&mut self, on: bool) {
        let joint = self.selected_joint;
        if on {
            self.select_joint(joint);
        } else if self.weight_joint.is_some() {
            self.weight_joint = None;
            self.recolor = true;
        }
    }

    /// Plays the animation graph file `path` on the character in place of the clip, from
    /// its entry states. A file that fails to load leaves whatever played before and says
    /// why in [`Viewer::graph_error`].
    pub fn open_graph(&mut self, path: impl Into<PathBuf>) {
        let path = path.into();
        match GraphPlay::load(&path, &self.stage.character, self.stage.floor, self.stage.radius) {
            Ok(g) => {
                self.graph = Some(g);
                self.graph_error = None;
                self.graph_pending = 0.0;
            }
            Err(e) => self.graph_error = Some(located(&path, &e)),
        }
    }

    /// Stops the graph: the clip plays again.
    pub fn close_graph(&mut self) {
        self.graph = None;
        self.graph_pending = 0.0;
    }

    /// Opens `path` as a model, or as a graph when its extension is `.json` (what dropping
    /// it onto the window and the panel's Open button do).
    pub fn open_any(&mut self, path: impl Into<PathBuf>) {
        let path = path.into();
        if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("json")) {
            self.open_graph(path);
        } else {
            self.open(path);
        }
    }

    /// Opens the glTF file `path` before the next frame (what dropping it onto the window
    /// and the panel's Open button do): it replaces the model, or, when it fails to import,
    /// [`Viewer::load_error`] says why and the model shown stays.
    pub fn open(&mut self, path: impl Into<PathBuf>) {
        self.pending_open = Some(path.into());
    }

    /// Opens `path` now (see [`Viewer::open`]): loads and uploads it, then replaces the
    /// model, starts its walk (or first clip), frames it and asks the camera to frame it
    /// again. On failure nothing changes.
    ///
    /// # Errors
    /// The file could not be loaded or uploaded.
    pub fn open_now(&mut self, renderer: &mut Renderer, path: &Path) -> Result<(), DemoError> {
        let mut stage = Stage::with_character(Character::from_gltf(path)?)?;
        stage.method = self.stage.method;
        stage.backend = self.stage.backend;
        stage.show_skeleton = self.stage.show_skeleton;
        stage.skeleton_color = self.stage.skeleton_color;
        stage.upload(renderer, &Coloring::Uniform(BODY_COLOR))?;
        let debug_meshes = upload_debug(renderer, &stage.character)?;
        let clip = stage.character.initial_clip(None);
        stage.sample(clip, 0.0)?;
        stage.frame()?;
        self.adopt(stage, debug_meshes, clip, 0.0);
        self.source = Some(path.to_path_buf());
        self.refocus = true;
        // The graph plays on: loaded again for the new character's skeleton and clips.
        if let Some(file) = self.graph.take().map(|g| g.file) {
            self.open_graph(file);
        }
        Ok(())
    }

    /// Takes `stage` as the model shown (see [`Viewer::reset_for_model`]).
    fn adopt(&mut self, stage: Stage, debug_meshes: [Vec<MeshId>; 3], clip: Option<usize>, time: f32) {
        self.stage = stage;
        self.debug_meshes = debug_meshes;
        self.reset_for_model(clip, time);
    }

    /// Per-model state made for the stage's character (facts, morph sliders, playback and
    /// marks of `clip` at `time`); selections and root motion cleared.
    fn reset_for_model(&mut self, clip: Option<usize>, time: f32) {
        self.info = ModelInfo::of(&self.stage.character);
        self.morph_override = self.stage.posed.weights.iter().map(|w| vec![None; w.len()]).collect();
        self.clip = clip;
        self.time = time;
        self.shown = time;
        self.playing = None;
        self.weight_joint = None;
        self.selected_joint = None;
        self.recolor = false;
        self.root_motion = None;
        self.sync_playback();
    }

    /// Makes the playback and marks for [`Viewer::clip`] if it changed, at [`Viewer::time`],
    /// keeping speed and loop mode.
    fn sync_playback(&mut self) {
        if self.playing == Some(self.clip) {
            return;
        }
        let clip = self.clip.and_then(|c| self.stage.character.clips.get(c));
        self.playback = self.looping.playback(clip.map_or(0.0, |c| c.duration()), self.playback.speed);
        self.playback.seek(f64::from(self.time));
        self.time = self.playback.time();
        self.shown = self.time;
        self.marks = Marks::of(clip.map(|c| &**c));
        self.playing = Some(self.clip);
    }

    /// Writes the sliders' morph weights over the clip's. Allocates nothing.
    fn apply_morph_overrides(&mut self) {
        for (w, o) in self.stage.posed.weights.iter_mut().zip(&self.morph_override) {
            for (w, o) in w.iter_mut().zip(o) {
                if let Some(o) = o {
                    *w = *o;
                }
            }
        }
    }

    /// Where the camera looks, shifted by the root motion travelled.
    fn offset(&self) -> Vec3 {
        self.root_motion.as_ref().map_or_else(Vec3::zeros, |r| r.world.translation)
    }

    /// The line overlays: normals and bounds (from the CPU-skinned mesh) and the selected
    /// joint.
    fn overlays(&mut self, frame: &mut FrameData, model: &Mat4) -> Result<(), DemoError> {
        if self.show_normals || self.show_bounds {
            let stage = &mut self.stage;
            if stage.backend != Backend::Cpu {
                stage.posed.skin_cpu(&stage.character, stage.method)?;
            }
            if self.show_normals {
                overlays::normals(frame, &stage.posed, model, stage.radius * 0.04);
            }
            if let (true, Some((lo, hi))) = (self.show_bounds, stage.posed.bounds()) {
                overlays::bounds(frame, lo, hi, model);
            }
        }
        if let Some(j) = self.selected_joint {
            let sk = &self.stage.character.skeleton;
            overlays::joint(frame, &self.stage.posed.world, sk.parent(j), j, model, self.stage.radius * 0.12);
        }
        Ok(())
    }
}

/// `e` as the panel shows it: prefixed with `path` unless its message starts with it.
fn located(path: &Path, e: &DemoError) -> String {
    let (shown, message) = (path.display().to_string(), e.to_string());
    if message.starts_with(&shown) { message } else { format!("{shown}: {message}") }
}

/// A floor grid of `cell`-sized squares around `centre` (snapped to the cells, so the lines
/// stay put on the floor while the centre moves).
fn floor_grid(frame: &mut FrameData, centre: Vec3, half_cells: i32, cell: f32, height: f32) {
    let (cx, cz) = ((centre.x / cell).round() * cell, (centre.z / cell).round() * cell);
    let h = half_cells as f32 * cell;
    for i in -half_cells..=half_cells {
        let o = i as f32 * cell;
        let c = if i == 0 { [0.55, 0.55, 0.55, 1.0] } else { [0.35, 0.35, 0.35, 1.0] };
        frame.line(Vec3::new(cx + o, height, cz - h), Vec3::new(cx + o, height, cz + h), c);
        frame.line(Vec3::new(cx - h, height, cz + o), Vec3::new(cx + h, height, cz + o), c);
    }
}

impl Viewer {
    /// Draws the character at `id` (the chosen colouring), the overlays and the floor, the
    /// camera moved by `offset` (the root motion travelled).
    fn draw(&mut self, frame: &mut FrameData, id: &Mat4, offset: Vec3) -> Result<(), DemoError> {
        frame.camera.eye += offset;
        frame.camera.target += offset;
        match self.view {
            ColorView::Shaded => self.stage.draw(frame, id)?,
            view => {
                // Draw the debug meshes in place of the shaded ones (swapped back after).
                let k = ColorView::ALL.iter().position(|v| *v == view).unwrap_or(1) - 1;
                std::mem::swap(&mut self.stage.meshes, &mut self.debug_meshes[k]);
                let drawn = self.stage.draw(frame, id);
                std::mem::swap(&mut self.stage.meshes, &mut self.debug_meshes[k]);
                drawn?;
            }
        }
        self.overlays(frame, id)?;
        if self.show_grid {
            if self.root_motion.is_some() || (self.want_root_motion && self.graph.is_some()) {
                let cell = 10f32.powf((self.stage.radius * 0.25).log10().round());
                let half = (self.stage.radius * 3.0 / cell).ceil() as i32;
                floor_grid(frame, offset, half, cell, self.stage.floor);
            } else {
                self.stage.ground(frame);
            }
        }
        Ok(())
    }

    /// A frame of the graph: advanced by `dt` at the playback's speed (a graph plays
    /// forwards only: a negative speed stands), or by the frame steps while paused.
    fn update_graph(&mut self, dt: f32, frame: &mut FrameData) -> Result<(), DemoError> {
        let run = if self.paused || self.scrubbing { 0.0 } else { dt * self.playback.speed.max(0.0) };
        let dt = run + std::mem::take(&mut self.graph_pending);
        let walk = self.want_root_motion;
        let g = self.graph.as_mut().expect("update_graph runs with a graph");
        let placement = if walk { g.world } else { Transform::IDENTITY };
        g.advance(dt, placement, &mut self.stage.posed, &self.stage.character)?;
        let mut at = if walk { g.world } else { Transform::IDENTITY };
        at.translation.y += g.instance.ground_offset();
        let offset = if walk { Vec3::new(g.world.translation.x, 0.0, g.world.translation.z) } else { Vec3::zeros() };
        self.apply_morph_overrides();
        self.draw(frame, &at.to_matrix(), offset)
    }
}

impl Scene for Viewer {
    const NAME: &'static str = "viewer";
    const ABOUT: &'static str = "Plays and inspects skinned characters from glTF files.";
    const CONTROLS: &'static [(&'static str, &'static str)] = &[
        ("c / x", "next / previous clip"),
        ("r", "rest pose"),
        ("m", "LBS / DQ"),
        ("b", "CPU / GPU vertex / GPU compute skinning"),
        ("k", "skeleton overlay"),
        ("j", "colours: shaded / by joint / normals / joint indices"),
        ("w", "weights of the next joint as a heat map (off after the last)"),
        ("g", "ground grid"),
        ("o", "root motion: walk across the floor, camera following"),
        ("space", "pause"),
        (", / .", "pause and step a frame back / forwards"),
        ("drop a file", "open a .gltf / .glb model or a .json animation graph"),
    ];

    fn new(renderer: &mut Renderer, args: &CommonArgs) -> Result<Self, DemoError> {
        let mut stage = Stage::new(renderer, args, &Coloring::Uniform(BODY_COLOR))?;
        let clip = match stage.clip_arg(args)? {
            Some(c) => Some(c),
            None => stage.character.initial_clip(None),
        };
        let debug_meshes = upload_debug(renderer, &stage.character)?;
        stage.sample(clip, args.start)?;
        stage.frame()?;
        stage.show_skeleton = true;
        let mut viewer = Self {
            info: ModelInfo::of(&stage.character),
            stage,
            debug_meshes,
            clip: None,
            time: 0.0,
            show_grid: true,
            view: ColorView::Shaded,
            weight_joint: None,
            recolor: false,
            paused: false,
            root_motion: None,
            want_root_motion: false,
            playback: Looping::Repeat.playback(0.0, 1.0),
            looping: Looping::Repeat,
            playing: None,
            shown: 0.0,
            marks: Marks::default(),
            selected_joint: None,
            morph_override: Vec::new(),
            show_normals: false,
            show_bounds: false,
            file_field: args.model.as_ref().map_or_else(String::new, |m| m.display().to_string()),
            load_error: None,
            source: args.model.clone(),
            pending_open: None,
            refocus: false,
            scrubbing: false,
            graph: None,
            graph_error: None,
            graph_pending: 0.0,
        };
        viewer.reset_for_model(clip, args.start);
        if let Some(path) = &args.graph {
            let mut g = GraphPlay::load(path, &viewer.stage.character, viewer.stage.floor, viewer.stage.radius)?;
            for spec in &args.params {
                g.set_text(spec)?;
            }
            viewer.graph = Some(g);
        } else if let Some(spec) = args.params.first() {
            return Err(DemoError::Args(format!("--param {spec}: no --graph to set it on")));
        }
        Ok(viewer)
    }

    fn focus(&self) -> (Vec3, f32) {
        self.stage.focus()
    }

    fn refocus(&mut self) -> bool {
        std::mem::take(&mut self.refocus)
    }

    fn file_dropped(&mut self, path: &Path) {
        self.file_field = path.display().to_string();
        self.open_any(path);
    }

    fn prepare(&mut self, renderer: &mut Renderer) -> Result<(), DemoError> {
        if let Some(path) = self.pending_open.take() {
            // A file that fails to import leaves the model shown; the panel shows why.
            self.load_error = self.open_now(renderer, &path).err().map(|e| located(&path, &e));
        }
        if std::mem::take(&mut self.recolor) {
            // Back from a weight view: a glTF character to its materials, the mannequin to
            // its body colour.
            let body =
                if self.stage.character.looks.is_some() { Coloring::Material } else { Coloring::Uniform(BODY_COLOR) };
            let coloring = self.weight_joint.map_or(body, Coloring::WeightOf);
            for (part, id) in self.stage.character.parts.iter().zip(&self.stage.meshes) {
                if part.mesh.influences.is_some() {
                    renderer.recolor(*id, &coloring)?;
                }
            }
        }
        Ok(())
    }

    fn update(&mut self, dt: f32, frame: &mut FrameData) -> Result<(), DemoError> {
        if self.graph.is_some() {
            return self.update_graph(dt, frame);
        }
        self.sync_playback();
        if self.time != self.shown {
            self.playback.seek(f64::from(self.time));
        }
        let step = self.playback.advance(if self.paused || self.scrubbing { 0.0 } else { dt });
        self.time = self.playback.time();
        self.shown = self.time;
        if self.want_root_motion && self.root_motion.as_ref().map(|r| Some(r.source)) != Some(self.clip) {
            self.set_root_motion(true)?;
        }
        let id = match &mut self.root_motion {
            Some(r) => {
                if let Some(m) = r.clip.root_motion() {
                    r.world = r.world.combine(&m.delta(&self.playback, step.from, step.to));
                }
                let posed = &mut self.stage.posed;
                posed.pose.locals_mut().copy_from_slice(self.stage.character.skeleton.rest_pose().locals());
                r.clip.sample(self.time, TimePolicy::Clamp, &mut posed.pose)?;
                // The root-motion clip is made from the source clip: its morph weights too.
                posed.sample_weights(&self.stage.character, Some(r.source), self.time)?;
                self.stage.update()?;
                r.world.to_matrix()
            }
            None => {
                self.stage.sample(self.clip, self.time)?;
                Mat4::identity()
            }
        };
        self.apply_morph_overrides();
        let offset = self.offset();
        self.draw(frame, &id, offset)
    }

    fn key(&mut self, key: Key) {
        if self.stage.key(key) {
            return;
        }
        let n = self.stage.character.clips.len();
        if matches!(key, Key::Char('c' | 'x' | 'r')) {
            self.close_graph();
        }
        match key {
            Key::Char('c') if n > 0 => {
                self.clip = Some(self.clip.map_or(0, |c| (c + 1) % n));
                self.time = 0.0;
            }
            Key::Char('x') if n > 0 => {
                self.clip = Some(self.clip.map_or(n - 1, |c| (c + n - 1) % n));
                self.time = 0.0;
            }
            Key::Char('r') => self.clip = None,
            Key::Char('j') => self.view = self.view.next(),
            Key::Char('g') => self.show_grid = !self.show_grid,
            Key::Char('o') => self.toggle_root_motion(),
            Key::Char('w') => {
                let skin_joints = self.stage.character.skins.first().map_or(0, |s| s.len());
                self.weight_joint = match self.weight_joint {
                    None if skin_joints > 0 => Some(0),
                    Some(j) if usize::from(j) + 1 < skin_joints => Some(j + 1),
                    _ => None,
                };
                self.view = ColorView::Shaded;
                self.recolor = true;
            }
            Key::Char(',') => self.step_frames(-1),
            Key::Char('.') => self.step_frames(1),
            Key::Space => self.toggle_play(),
            _ => {}
        }
    }

    fn status(&self) -> String {
        let ch = &self.stage.character;
        let clip = self.clip.and_then(|c| ch.clips.get(c));
        let clip =
            clip.map_or_else(|| "rest pose".into(), |c| format!("{} {:.2}/{:.2} s", c.name(), self.time, c.duration()));
        let weights = self.weight_joint.map_or_else(String::new, |j| {
            let name = ch.skins.first().and_then(|s| s.joints().get(usize::from(j)).copied());
            let name = name.and_then(|n| ch.skeleton.name(n)).unwrap_or("?");
            format!(" | weights of {name}")
        });
        let view = if self.view == ColorView::Shaded { String::new() } else { format!(" | {}", self.view.label()) };
        let rm = self.root_motion.as_ref().map_or_else(String::new, |r| {
            let p = r.world.translation;
            format!(" | root motion at ({:.2}, {:.2})", p.x, p.z)
        });
        let clip = match &self.graph {
            Some(g) => format!("graph {} {:.2} s: {}", g.name(), g.time, g.machine_lines().join(", ")),
            None => clip,
        };
        format!("{} | {clip} | {}{weights}{view}{rm}", ch.name, self.stage.status())
    }

    #[cfg(feature = "ui")]
    fn panel(&mut self, ui: &mut anim_render_vk::ui::egui::Ui, view: &crate::ui::UiView<'_>) {
        panels::panel(self, ui, view);
    }

    #[cfg(feature = "ui")]
    fn windows(&mut self, ctx: &anim_render_vk::ui::egui::Context, view: &crate::ui::UiView<'_>) {
        panels::windows(self, ctx, view);
    }
}

impl Viewer {
    /// Root motion on or off (the `o` key). Extraction errors surface on the next update,
    /// which retries.
    pub fn toggle_root_motion(&mut self) {
        self.want_root_motion = !self.want_root_motion;
        if !self.want_root_motion {
            self.root_motion = None;
        }
    }
}
