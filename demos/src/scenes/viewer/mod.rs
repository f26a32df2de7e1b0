//! The viewer: plays the clips of the default character (or `--model`), with LBS/DQ,
//! CPU/GPU-vertex/GPU-compute skinning, a skeleton overlay and an orbit camera.

use crate::DemoError;
use crate::app::{CommonArgs, Key, Scene};
use crate::stage::{BODY_COLOR, Stage};
use anim_core::clip::playback::{LoopMode, Playback};
use anim_core::clip::{Clip, TimePolicy};
use anim_math::{Mat4, Transform, Vec3};
use anim_render_vk::{Coloring, FrameData, MeshId, Renderer};

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

/// Root-motion playback of one clip (the `o` key): the in-place clip, its playback and
/// where the character stands.
#[derive(Debug)]
pub struct RootMotionState {
    /// Index of the character's clip this was made from.
    pub source: usize,
    /// The clip with its root motion extracted ([`crate::root_motion::root_motion_clip`]).
    pub clip: Clip,
    /// Its playback.
    pub playback: Playback,
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
    /// Clip playing (`None`: rest pose).
    pub clip: Option<usize>,
    /// Time in the clip, seconds.
    pub time: f32,
    /// Draw the ground grid.
    pub show_grid: bool,
    /// The colouring shown.
    pub view: ColorView,
    /// Joint whose weights are shown as a heat map on the shaded meshes (`None`: plain).
    pub weight_joint: Option<u16>,
    recolor: bool,
    /// Time stands still.
    pub paused: bool,
    /// Root motion on (`o`): the character walks across the floor, the camera follows.
    pub root_motion: Option<RootMotionState>,
    want_root_motion: bool,
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
                let mut playback = Playback::new(clip.duration(), LoopMode::Repeat);
                playback.seek(f64::from(self.time));
                Some(RootMotionState { source: c, clip, playback, world: Transform::IDENTITY })
            }
            _ => None,
        };
        Ok(())
    }

    /// Where the camera looks, shifted by the root motion travelled.
    fn offset(&self) -> Vec3 {
        self.root_motion.as_ref().map_or_else(Vec3::zeros, |r| r.world.translation)
    }
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

impl Scene for Viewer {
    const NAME: &'static str = "viewer";
    const ABOUT: &'static str = "Plays a skinned character: clips, LBS/DQ, CPU/GPU skinning, skeleton overlay.";
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
    ];

    fn new(renderer: &mut Renderer, args: &CommonArgs) -> Result<Self, DemoError> {
        let mut stage = Stage::new(renderer, args, &Coloring::Uniform(BODY_COLOR))?;
        let clip = match stage.clip_arg(args)? {
            Some(c) => Some(c),
            None => stage.character.initial_clip(None),
        };
        let ch = &stage.character;
        let debug_meshes = [
            ch.upload(renderer, &Coloring::ByJoint)?,
            ch.upload(renderer, &Coloring::Normals)?,
            ch.upload(renderer, &Coloring::JointIndices)?,
        ];
        stage.sample(clip, args.start)?;
        stage.frame()?;
        stage.show_skeleton = true;
        Ok(Self {
            stage,
            debug_meshes,
            clip,
            time: args.start,
            show_grid: true,
            view: ColorView::Shaded,
            weight_joint: None,
            recolor: false,
            paused: false,
            root_motion: None,
            want_root_motion: false,
        })
    }

    fn focus(&self) -> (Vec3, f32) {
        self.stage.focus()
    }

    fn prepare(&mut self, renderer: &mut Renderer) -> Result<(), DemoError> {
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
        if !self.paused {
            self.time += dt;
        }
        if self.want_root_motion && self.root_motion.as_ref().map(|r| Some(r.source)) != Some(self.clip) {
            self.set_root_motion(true)?;
        }
        let id = match &mut self.root_motion {
            Some(r) => {
                let step = r.playback.advance(if self.paused { 0.0 } else { dt });
                if let Some(m) = r.clip.root_motion() {
                    r.world = r.world.combine(&m.delta(&r.playback, step.from, step.to));
                }
                let posed = &mut self.stage.posed;
                posed.pose.locals_mut().copy_from_slice(self.stage.character.skeleton.rest_pose().locals());
                r.clip.sample(r.playback.time(), TimePolicy::Clamp, &mut posed.pose)?;
                // The root-motion clip is made from the source clip: its morph weights too.
                posed.sample_weights(&self.stage.character, Some(r.source), r.playback.time())?;
                self.stage.update()?;
                r.world.to_matrix()
            }
            None => {
                self.stage.sample(self.clip, self.time)?;
                Mat4::identity()
            }
        };
        let offset = self.offset();
        frame.camera.eye += offset;
        frame.camera.target += offset;
        match self.view {
            ColorView::Shaded => self.stage.draw(frame, &id)?,
            view => {
                // Draw the debug meshes in place of the shaded ones (swapped back after).
                let k = ColorView::ALL.iter().position(|v| *v == view).unwrap_or(1) - 1;
                std::mem::swap(&mut self.stage.meshes, &mut self.debug_meshes[k]);
                let drawn = self.stage.draw(frame, &id);
                std::mem::swap(&mut self.stage.meshes, &mut self.debug_meshes[k]);
                drawn?;
            }
        }
        if self.show_grid {
            if self.root_motion.is_some() {
                let cell = 10f32.powf((self.stage.radius * 0.25).log10().round());
                let half = (self.stage.radius * 3.0 / cell).ceil() as i32;
                floor_grid(frame, offset, half, cell, self.stage.floor);
            } else {
                self.stage.ground(frame);
            }
        }
        Ok(())
    }

    fn key(&mut self, key: Key) {
        if self.stage.key(key) {
            return;
        }
        let n = self.stage.character.clips.len();
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
            Key::Char('o') => {
                // Extraction errors surface on the next update, which retries.
                self.want_root_motion = !self.want_root_motion;
                if !self.want_root_motion {
                    self.root_motion = None;
                }
            }
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
            Key::Space => self.paused = !self.paused,
            _ => {}
        }
    }

    fn status(&self) -> String {
        let ch = &self.stage.character;
        let clip = self.clip.and_then(|c| ch.clips.get(c));
        let clip = clip.map_or_else(
            || "rest pose".into(),
            |c| format!("{} {:.2}/{:.2} s", c.name(), self.time % c.duration().max(1e-6), c.duration()),
        );
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
        format!("{} | {clip} | {}{weights}{view}{rm}", ch.name, self.stage.status())
    }
}
