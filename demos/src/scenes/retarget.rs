//! Retargeting (`anim-retarget`): the mannequin's clips played by the mannequin and, side
//! by side, by CesiumMan, RiggedFigure and the book's Woman (`../shared/assets`), or by
//! `--model FILE` for any other humanoid. Each character's joints are mapped to the
//! humanoid profile by name; every clip is retargeted offline at 60 Hz when the demo
//! starts (rotations relative to the bind poses, hips scaled by the leg-length ratio,
//! planted feet placed by two-bone IK) and played like any other clip. The characters are
//! drawn at the mannequin's size (each scaled by the inverse of its leg ratio), on one
//! floor; `c` switches the clip for all of them.
//!
//! The panel picks the clip and scrubs its time, shows or hides each character with its
//! mapping and contact error, and sets the skinning of all of them.

use crate::DemoError;
use crate::app::{CommonArgs, Key, Scene};
use crate::retarget::{Humanoid, retarget_clips};
use crate::stage::{BODY_COLOR, Stage, ground};
use anim_math::{Mat4, Vec3};
use anim_render_vk::{Coloring, FrameData, Renderer};
use std::path::PathBuf;
use std::sync::Arc;

/// The shared models the demo shows next to the mannequin.
pub const SHARED: [&str; 3] = ["CesiumMan/CesiumMan.glb", "RiggedFigure/RiggedFigure.glb", "Woman/Woman.gltf"];

/// Where the shared models are: `../shared/assets` from the working directory (the
/// repository's root), else from this crate's source.
pub fn shared_assets() -> Option<PathBuf> {
    [PathBuf::from("../shared/assets"), PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/assets"))]
        .into_iter()
        .find(|p| p.join(SHARED[0]).is_file())
}

/// One character on the stage.
#[derive(Debug)]
pub struct Player {
    /// The character, its meshes and pose.
    pub stage: Stage,
    /// Its size relative to the mannequin (its leg ratio); drawn scaled by the inverse.
    pub leg_ratio: f32,
    /// Per clip, the largest contact error of the retarget (target units; 0 for the
    /// mannequin's own clips).
    pub contact_error: Vec<f32>,
    /// The feet and toes joints.
    pub feet: Vec<usize>,
    /// Drawn.
    pub shown: bool,
    /// Joints mapped to the humanoid profile, of the skeleton's.
    pub mapped: (usize, usize),
}

/// The scene.
#[derive(Debug)]
pub struct Retarget {
    /// The mannequin first, then the targets.
    pub players: Vec<Player>,
    /// The clip playing (an index into the mannequin's clips; every target has its
    /// retargeted copy at the same index).
    pub clip: usize,
    /// Time in the clip.
    pub time: f32,
    /// Distance between two characters.
    pub spacing: f32,
    /// Time stands still.
    pub paused: bool,
    /// Moves the framing clear of the panel ([`crate::widgets::clear_of_panel`]).
    view_shift: Vec3,
}

/// Joints of `h` mapped to the humanoid profile, and its skeleton's joints.
fn mapped(h: &Humanoid) -> (usize, usize) {
    let n = h.model.skeleton.len();
    (h.rig.map().slots().count(), n)
}

impl Retarget {
    /// Model matrix of player `i`: side by side along x, scaled to the mannequin's size.
    pub fn placement(&self, i: usize) -> Mat4 {
        let n = self.players.len() as f32;
        let x = (i as f32 - (n - 1.0) * 0.5) * self.spacing;
        Mat4::new_translation(&Vec3::new(x, 0.0, 0.0)) * Mat4::new_scaling(1.0 / self.players[i].leg_ratio)
    }

    /// The lowest foot or toe joint of any character in the current pose, in the world
    /// (the floor is at 0).
    pub fn lowest_foot(&self) -> f32 {
        let mut lowest = f32::INFINITY;
        for (i, p) in self.players.iter().enumerate() {
            let m = self.placement(i);
            for &j in &p.feet {
                lowest = lowest.min((m * p.stage.posed.world[j]).column(3).y);
            }
        }
        lowest
    }
}

impl Scene for Retarget {
    const NAME: &'static str = "retarget";
    const ABOUT: &'static str =
        "The mannequin's clips retargeted onto CesiumMan, RiggedFigure and the Woman (or --model FILE), side by side.";
    const CONTROLS: &'static [(&'static str, &'static str)] = &[
        ("c", "next clip"),
        ("m", "LBS / DQ"),
        ("b", "CPU / GPU vertex / GPU compute skinning"),
        ("k", "skeleton overlay"),
        ("space", "pause"),
    ];

    fn new(renderer: &mut Renderer, args: &CommonArgs) -> Result<Self, DemoError> {
        let source = Humanoid::load("default", None)?;
        let targets: Vec<PathBuf> = match &args.model {
            Some(m) => vec![m.clone()],
            None => {
                let dir = shared_assets().ok_or_else(|| {
                    DemoError::Args("the shared models (../shared/assets) are not there; give --model FILE".into())
                })?;
                SHARED.iter().map(|m| dir.join(m)).collect()
            }
        };
        let all: Vec<usize> = (0..source.model.clips.len()).collect();
        let mut players = Vec::new();
        let own = source.character(source.model.clips.clone())?;
        players.push(Player {
            stage: Stage::with_character(own)?,
            leg_ratio: 1.0,
            contact_error: vec![0.0; all.len()],
            feet: source.feet_and_toes(),
            shown: true,
            mapped: mapped(&source),
        });
        for path in targets {
            let target = Humanoid::load(&path.to_string_lossy(), None)?;
            let (rt, clips) = retarget_clips(&source, &target, &all, 60.0)?;
            let contact_error = clips.iter().map(|c| c.report.contact_error).collect();
            let character = target.character(clips.into_iter().map(|c| Arc::new(c.clip)).collect())?;
            players.push(Player {
                stage: Stage::with_character(character)?,
                leg_ratio: rt.leg_ratio(),
                contact_error,
                feet: target.feet_and_toes(),
                shown: true,
                mapped: mapped(&target),
            });
        }
        for p in &mut players {
            p.stage.method = args.method;
            p.stage.backend = args.backend;
            p.stage.upload(renderer, &Coloring::Uniform(BODY_COLOR))?;
        }
        let clip = match &args.clip {
            Some(c) => source.model.clip_index(c)?,
            None => source.model.clip_index("walk").unwrap_or(0),
        };
        let mut demo = Self { players, clip, time: args.start, spacing: 1.1, paused: false, view_shift: Vec3::zeros() };
        demo.view_shift = crate::widgets::clear_of_panel(args, demo.focus().1, 0.25);
        Ok(demo)
    }

    fn focus(&self) -> (Vec3, f32) {
        let n = self.players.len() as f32;
        (Vec3::new(0.0, 0.85, 0.0) + self.view_shift, 0.33 * n * self.spacing + 0.25)
    }

    fn view_angles(&self) -> (f32, f32) {
        (0.25, 0.15)
    }

    fn update(&mut self, dt: f32, frame: &mut FrameData) -> Result<(), DemoError> {
        if !self.paused {
            self.time += dt;
        }
        for i in 0..self.players.len() {
            let m = self.placement(i);
            let p = &mut self.players[i];
            p.stage.sample(Some(self.clip), self.time)?;
            if p.shown {
                p.stage.draw(frame, &m)?;
            }
        }
        let (_, radius) = self.focus();
        ground(frame, radius, 0.0);
        Ok(())
    }

    fn key(&mut self, key: Key) {
        if let Key::Char('c') = key {
            let n = self.players[0].stage.character.clips.len();
            self.clip = (self.clip + 1) % n.max(1);
            self.time = 0.0;
            return;
        }
        if key == Key::Space {
            self.paused = !self.paused;
            return;
        }
        for p in &mut self.players {
            p.stage.key(key);
        }
    }

    #[cfg(feature = "ui")]
    fn panel(&mut self, ui: &mut anim_render_vk::ui::egui::Ui, _view: &crate::ui::UiView<'_>) {
        use crate::widgets::{grid, section};
        let clip_now = self.clip;
        grid(ui, "retarget-grid", |ui| {
            let source = &self.players[0].stage.character;
            let mut clip = Some(self.clip);
            crate::widgets::clip_and_time(ui, source, &mut clip, &mut self.time, &mut self.paused);
            // The rest pose is no retargeted clip: keep the one playing.
            self.clip = clip.unwrap_or(clip_now);
        });
        section(ui, "Characters", "retarget-players", true, |ui| {
            anim_render_vk::ui::egui::Grid::new("retarget-players-grid").num_columns(3).show(ui, |ui| {
                ui.strong("shown");
                ui.strong("joints mapped");
                ui.strong("contact error");
                ui.end_row();
                for (i, p) in self.players.iter_mut().enumerate() {
                    let name = p.stage.character.name.clone();
                    crate::ui::tag(ui.checkbox(&mut p.shown, name), &format!("show:{i}"));
                    ui.label(format!("{} of {}", p.mapped.0, p.mapped.1));
                    if i == 0 {
                        ui.weak("source");
                    } else {
                        let mm = 1000.0 * p.contact_error.get(clip_now).copied().unwrap_or(0.0) / p.leg_ratio;
                        ui.label(format!("{mm:.1} mm (1 m leg)"));
                    }
                    ui.end_row();
                }
            });
        });
        ui.separator();
        let (first, rest) = self.players.split_at_mut(1);
        let lead = &mut first[0].stage;
        lead.panel(ui);
        for p in rest {
            (p.stage.method, p.stage.backend, p.stage.show_skeleton) = (lead.method, lead.backend, lead.show_skeleton);
        }
    }

    fn status(&self) -> String {
        let source = &self.players[0].stage.character;
        let clip = source.clips.get(self.clip).map_or("", |c| c.name());
        let errors: Vec<String> = self.players[1..]
            .iter()
            .map(|p| {
                let mm = 1000.0 * p.contact_error.get(self.clip).copied().unwrap_or(0.0) / p.leg_ratio;
                format!("{} {mm:.1} mm", p.stage.character.name)
            })
            .collect();
        format!("{clip} | contact error (1 m leg): {} | {}", errors.join(", "), self.players[0].stage.status())
    }
}
