//! The stage the character demos share: one [`Character`] with its uploaded meshes and
//! posed state, the skinning method and backend it is drawn with, the framing (centre,
//! radius, floor) the camera and the ground grid use, and the skeleton overlay switch.
//!
//! A scene holds a [`Stage`], writes its pose (sample a clip, blend, add, solve IK) into
//! [`Stage::posed`], then calls [`Stage::draw`] and [`Stage::ground`]; it passes keys to
//! [`Stage::key`] first, which handles the keys every character demo shares
//! ([`STAGE_CONTROLS`]: `m` method, `b` backend, `k` skeleton overlay).

use crate::DemoError;
use crate::app::{CommonArgs, Key};
use crate::character::{Backend, Character, Posed};
use anim_core::skin::SkinMethod;
use anim_math::{Mat4, Vec3};
use anim_render_vk::{Coloring, FrameData, MeshId, Renderer, lines};

/// Skin colour of the default look.
pub const BODY_COLOR: [f32; 3] = [0.86, 0.74, 0.62];

/// Colour of the skeleton overlay.
pub const SKELETON_COLOR: [f32; 4] = [1.0, 0.85, 0.2, 1.0];

/// The keys [`Stage::key`] handles, for scenes' control lists.
pub const STAGE_CONTROLS: &[(&str, &str)] =
    &[("m", "LBS / DQ"), ("b", "CPU / GPU vertex / GPU compute skinning"), ("k", "skeleton overlay")];

/// Centre, lowest corner and radius of a posed character's CPU-skinned (LBS) bounds.
///
/// # Errors
/// CPU skinning failure.
pub fn framing(ch: &Character, posed: &mut Posed) -> Result<(Vec3, Vec3, f32), DemoError> {
    posed.skin_cpu(ch, SkinMethod::Lbs)?;
    let (lo, hi) = posed.bounds().unwrap_or((Vec3::zeros(), Vec3::new(1.0, 1.0, 1.0)));
    Ok(((lo + hi) * 0.5, lo, ((hi - lo).norm() * 0.5).max(1e-3)))
}

/// A ground grid sized for something of `radius` standing on `floor`.
pub fn ground(frame: &mut FrameData, radius: f32, floor: f32) {
    let cell = 10f32.powf((radius * 0.25).log10().round());
    lines::grid(frame, (radius * 2.0 / cell).ceil() as i32, cell, floor);
}

/// A character on stage: what it is, how it is drawn, where the camera looks.
#[derive(Debug)]
pub struct Stage {
    /// The character.
    pub character: Character,
    /// Its parts on the GPU, one per [`Character::parts`] entry (empty until
    /// [`Stage::upload`]: such a stage poses but draws no mesh).
    pub meshes: Vec<MeshId>,
    /// Its posed state: scenes write the pose and call [`Posed::update`].
    pub posed: Posed,
    /// LBS or DQ.
    pub method: SkinMethod,
    /// Where skinning runs.
    pub backend: Backend,
    /// Centre of the framed bounds.
    pub centre: Vec3,
    /// Radius the camera frames (and the ground grid spans).
    pub radius: f32,
    /// Height of the ground grid.
    pub floor: f32,
    /// Draw the skeleton over the mesh.
    pub show_skeleton: bool,
    /// Colour of the skeleton overlay.
    pub skeleton_color: [f32; 4],
}

impl Stage {
    /// Loads `args.model` (or the mannequin), uploads it with `coloring`, poses it at rest
    /// and frames it; method and backend come from the command line, the overlay is off.
    ///
    /// # Errors
    /// Loading, upload or posing failures.
    pub fn new(renderer: &mut Renderer, args: &CommonArgs, coloring: &Coloring) -> Result<Self, DemoError> {
        let mut stage = Self::with_character(Character::load(args.model.as_deref())?)?;
        stage.method = args.method;
        stage.backend = args.backend;
        stage.upload(renderer, coloring)?;
        Ok(stage)
    }

    /// `character` posed at rest and framed, not uploaded (see [`Stage::upload`]), drawn
    /// with LBS in the vertex shader.
    ///
    /// # Errors
    /// Posing failures.
    pub fn with_character(character: Character) -> Result<Self, DemoError> {
        let posed = Posed::new(&character);
        let mut stage = Self {
            character,
            meshes: Vec::new(),
            posed,
            method: SkinMethod::Lbs,
            backend: Backend::Vertex,
            centre: Vec3::zeros(),
            radius: 1.0,
            floor: 0.0,
            show_skeleton: false,
            skeleton_color: SKELETON_COLOR,
        };
        stage.frame()?;
        Ok(stage)
    }

    /// Uploads the character's parts with `coloring` (see [`Character::upload`]), replacing
    /// [`Stage::meshes`].
    ///
    /// # Errors
    /// Upload failure.
    pub fn upload(&mut self, renderer: &mut Renderer, coloring: &Coloring) -> Result<(), DemoError> {
        self.meshes = self.character.upload(renderer, coloring)?;
        Ok(())
    }

    /// Frames the current pose: centre, radius and floor from its CPU-skinned bounds.
    ///
    /// # Errors
    /// CPU skinning failure.
    pub fn frame(&mut self) -> Result<(), DemoError> {
        let (centre, lo, radius) = framing(&self.character, &mut self.posed)?;
        (self.centre, self.radius, self.floor) = (centre, radius, lo.y);
        Ok(())
    }

    /// The clip `--clip` names (by name or index), `None` when not given.
    ///
    /// # Errors
    /// A name the character has no clip for.
    pub fn clip_arg(&self, args: &CommonArgs) -> Result<Option<usize>, DemoError> {
        args.clip.as_deref().map(|c| self.character.require_clip(c)).transpose()
    }

    /// Samples `clip` at `time` (looping) over the rest pose; `None` gives the rest pose.
    ///
    /// # Errors
    /// As [`Posed::sample`].
    pub fn sample(&mut self, clip: Option<usize>, time: f32) -> Result<(), DemoError> {
        self.posed.sample(&self.character, clip, time)
    }

    /// Recomputes the world matrices after the scene wrote [`Posed::pose`].
    ///
    /// # Errors
    /// As [`Posed::update`].
    pub fn update(&mut self) -> Result<(), DemoError> {
        self.posed.update(&self.character)
    }

    /// Handles a shared key: `m` next method, `b` next backend, `k` skeleton overlay.
    /// Returns whether the key was one of them.
    pub fn key(&mut self, key: Key) -> bool {
        match key {
            Key::Char('m') => self.method = self.method.next(),
            Key::Char('b') => self.backend = self.backend.next(),
            Key::Char('k') => self.show_skeleton = !self.show_skeleton,
            _ => return false,
        }
        true
    }

    /// Adds the character placed by `model` with the stage's method and backend, and the
    /// skeleton overlay when it is on.
    ///
    /// # Errors
    /// As [`Posed::draw`].
    pub fn draw(&mut self, frame: &mut FrameData, model: &Mat4) -> Result<(), DemoError> {
        self.draw_with(frame, model, self.method, self.backend)
    }

    /// [`Stage::draw`] with another method and backend (side-by-side comparisons).
    ///
    /// # Errors
    /// As [`Posed::draw`].
    pub fn draw_with(
        &mut self,
        frame: &mut FrameData,
        model: &Mat4,
        method: SkinMethod,
        backend: Backend,
    ) -> Result<(), DemoError> {
        self.posed.draw(&self.character, &self.meshes, frame, model, method, backend)?;
        if self.show_skeleton {
            self.draw_skeleton(frame, model, self.skeleton_color);
        }
        Ok(())
    }

    /// Adds the skeleton of the current pose as overlay lines in `color`.
    pub fn draw_skeleton(&self, frame: &mut FrameData, model: &Mat4, color: [f32; 4]) {
        self.posed.draw_skeleton(&self.character, frame, model, color, true);
    }

    /// Adds the ground grid under the framed character.
    pub fn ground(&self, frame: &mut FrameData) {
        ground(frame, self.radius, self.floor);
    }

    /// Centre and radius for [`crate::Scene::focus`].
    pub fn focus(&self) -> (Vec3, f32) {
        (self.centre, self.radius)
    }

    /// The shared controls in a demo's panel: skinning method, backend and the skeleton
    /// overlay (the `m`, `b` and `k` keys). Widgets are tagged `method:lbs`, `method:dq`,
    /// `backend:<label>` and `skeleton` (see [`crate::ui::tag`]).
    #[cfg(feature = "ui")]
    pub fn panel(&mut self, ui: &mut anim_render_vk::ui::egui::Ui) {
        use crate::ui::tag;
        ui.horizontal(|ui| {
            ui.label("skinning");
            for m in SkinMethod::ALL {
                let name = m.name();
                tag(ui.selectable_value(&mut self.method, m, name.to_uppercase()), &format!("method:{name}"));
            }
        });
        ui.horizontal(|ui| {
            ui.label("backend");
            for b in Backend::ALL {
                tag(ui.selectable_value(&mut self.backend, b, b.label()), &format!("backend:{}", b.label()));
            }
        });
        tag(ui.checkbox(&mut self.show_skeleton, "skeleton overlay"), "skeleton");
    }

    /// Method and backend for a status line, e.g. `LBS | GPU vertex`.
    pub fn status(&self) -> String {
        format!("{} | {}", self.method.name().to_uppercase(), self.backend.label())
    }
}
