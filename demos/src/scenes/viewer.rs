//! The viewer: plays the clips of the default character (or `--model`), with LBS/DQ,
//! CPU/GPU-vertex/GPU-compute skinning, a skeleton overlay and an orbit camera.

use crate::app::{CommonArgs, Key, Scene};
use crate::character::{Backend, Character, Posed};
use crate::{DemoError, scenes};
use anim_core::SkinMethod;
use anim_math::{Mat4, Vec3};
use anim_render_vk::{Coloring, FrameData, MeshId, Renderer};

/// Skin colour of the default look.
pub const BODY_COLOR: [f32; 3] = [0.86, 0.74, 0.62];

/// The viewer scene.
#[derive(Debug)]
pub struct Viewer {
    /// The character.
    pub character: Character,
    /// Its posed state.
    pub posed: Posed,
    /// Meshes with the shaded look.
    pub shaded: Vec<MeshId>,
    /// Meshes coloured by joint (seed 003's debug view).
    pub by_joint: Vec<MeshId>,
    /// Clip playing (`None`: rest pose).
    pub clip: Option<usize>,
    /// Time in the clip, seconds.
    pub time: f32,
    /// LBS or DQ.
    pub method: SkinMethod,
    /// Where skinning runs.
    pub backend: Backend,
    /// Draw the skeleton over the mesh.
    pub show_skeleton: bool,
    /// Draw the ground grid.
    pub show_grid: bool,
    /// Colour by joint instead of shading.
    pub joint_colors: bool,
    /// Joint whose weights are shown as a heat map on the shaded meshes (`None`: plain).
    pub weight_joint: Option<u16>,
    recolor: bool,
    /// Time stands still.
    pub paused: bool,
    centre: Vec3,
    radius: f32,
    floor: f32,
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
        ("j", "colour by joint"),
        ("w", "weights of the next joint as a heat map (off after the last)"),
        ("g", "ground grid"),
        ("space", "pause"),
    ];

    fn new(renderer: &mut Renderer, args: &CommonArgs) -> Result<Self, DemoError> {
        let character = Character::load(args.model.as_deref())?;
        let clip = match &args.clip {
            Some(c) => Some(character.find_clip(c).ok_or_else(|| DemoError::Args(format!("no clip {c:?}")))?),
            None => character.initial_clip(None),
        };
        let shaded = character.upload(renderer, &Coloring::Uniform(BODY_COLOR))?;
        let by_joint = character.upload(renderer, &Coloring::ByJoint)?;
        let mut posed = Posed::new(&character);
        posed.sample(&character, clip, args.start)?;
        let (centre, lo, radius) = scenes::framing(&character, &mut posed)?;
        Ok(Self {
            character,
            posed,
            shaded,
            by_joint,
            clip,
            time: args.start,
            method: args.method,
            backend: args.backend,
            show_skeleton: true,
            show_grid: true,
            joint_colors: false,
            weight_joint: None,
            recolor: false,
            paused: false,
            centre,
            radius,
            floor: lo.y,
        })
    }

    fn focus(&self) -> (Vec3, f32) {
        (self.centre, self.radius)
    }

    fn prepare(&mut self, renderer: &mut Renderer) -> Result<(), DemoError> {
        if std::mem::take(&mut self.recolor) {
            let coloring = self.weight_joint.map_or(Coloring::Uniform(BODY_COLOR), Coloring::WeightOf);
            for (part, id) in self.character.parts.iter().zip(&self.shaded) {
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
        self.posed.sample(&self.character, self.clip, self.time)?;
        let meshes = if self.joint_colors { &self.by_joint } else { &self.shaded };
        let id = Mat4::identity();
        self.posed.draw(&self.character, meshes, frame, &id, self.method, self.backend)?;
        if self.show_skeleton {
            self.posed.draw_skeleton(&self.character, frame, &id, [1.0, 0.85, 0.2, 1.0], true);
        }
        if self.show_grid {
            scenes::ground(frame, self.radius, self.floor);
        }
        Ok(())
    }

    fn key(&mut self, key: Key) {
        let n = self.character.clips.len();
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
            Key::Char('m') => self.method = self.method.next(),
            Key::Char('b') => self.backend = self.backend.next(),
            Key::Char('k') => self.show_skeleton = !self.show_skeleton,
            Key::Char('j') => self.joint_colors = !self.joint_colors,
            Key::Char('g') => self.show_grid = !self.show_grid,
            Key::Char('w') => {
                let skin_joints = self.character.skins.first().map_or(0, |s| s.len());
                self.weight_joint = match self.weight_joint {
                    None if skin_joints > 0 => Some(0),
                    Some(j) if usize::from(j) + 1 < skin_joints => Some(j + 1),
                    _ => None,
                };
                self.joint_colors = false;
                self.recolor = true;
            }
            Key::Space => self.paused = !self.paused,
            _ => {}
        }
    }

    fn status(&self) -> String {
        let clip = self.clip.and_then(|c| self.character.clips.get(c));
        let clip = clip.map_or_else(
            || "rest pose".into(),
            |c| format!("{} {:.2}/{:.2} s", c.name(), self.time % c.duration().max(1e-6), c.duration()),
        );
        let weights = self.weight_joint.map_or_else(String::new, |j| {
            let name = self.character.skins.first().and_then(|s| s.joints().get(usize::from(j)).copied());
            let name = name.and_then(|n| self.character.skeleton.name(n)).unwrap_or("?");
            format!(" | weights of {name}")
        });
        format!("{} | {clip} | {:?} | {}{weights}", self.character.name, self.method, self.backend.label())
    }
}
