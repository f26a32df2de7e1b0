//! Chapter 14: linear blend skinning (left) against dual-quaternion skinning (right) on a
//! bar generated in code: two joints, the child twisting about the bar's axis up to 180°.
//! LBS averages the two joints' matrices, so at 180° the middle of the bar collapses to its
//! axis (the candy-wrapper artefact); DQS blends rotations and keeps the volume. With
//! `--model`, the model's clip plays on both sides instead (e.g. `DQ/dq.gltf`).
//!
//! The panel sets the twist angle (a slider that stops the animation), twist or bend, and
//! the skinning method of each side.

use crate::DemoError;
use crate::app::{CommonArgs, Key, Scene};
use crate::character::{Character, Part};
use crate::stage::Stage;
use anim_core::pose::{JointDesc, Skeleton};
use anim_core::skin::SkinMethod;
use anim_core::skin::{Influences, Mesh, Skin};
use anim_math::{Mat4, Quat, Transform, Vec3};
use anim_render_vk::{Coloring, FrameData, Renderer};
use std::f32::consts::{PI, TAU};

/// Bar length (along +x); the child joint sits at half of it.
pub const BAR_LENGTH: f32 = 4.0;
/// Bar radius.
pub const BAR_RADIUS: f32 = 0.45;
const RINGS: usize = 48;
const SEGMENTS: usize = 32;

/// The twisting bar: a tube along +x, rings of `SEGMENTS` vertices; the weight of the child
/// joint rises smoothly from 0 to 1 between 30% and 70% of the length. Four coloured stripes
/// run along it so the twist shows.
pub fn bar() -> Result<(Skeleton, Mesh), DemoError> {
    let skeleton = Skeleton::new(vec![
        JointDesc::new("root", None, Transform::IDENTITY),
        JointDesc::new("twist", Some(0), Transform::from_translation(Vec3::new(BAR_LENGTH * 0.5, 0.0, 0.0))),
    ])?;
    let mut positions = Vec::new();
    let mut normals = Vec::new();
    let mut joints = Vec::new();
    let mut weights = Vec::new();
    for r in 0..=RINGS {
        let x = BAR_LENGTH * r as f32 / RINGS as f32;
        let s = ((x / BAR_LENGTH - 0.3) / 0.4).clamp(0.0, 1.0);
        let w1 = s * s * (3.0 - 2.0 * s);
        for k in 0..SEGMENTS {
            let a = TAU * k as f32 / SEGMENTS as f32;
            let (sin, cos) = a.sin_cos();
            positions.push(Vec3::new(x, BAR_RADIUS * cos, BAR_RADIUS * sin));
            normals.push(Vec3::new(0.0, cos, sin));
            joints.extend_from_slice(&[0, 1]);
            weights.extend_from_slice(&[1.0 - w1, w1]);
        }
    }
    let mut indices = Vec::new();
    for r in 0..RINGS as u32 {
        for k in 0..SEGMENTS as u32 {
            let a = r * SEGMENTS as u32 + k;
            let b = r * SEGMENTS as u32 + (k + 1) % SEGMENTS as u32;
            indices.extend_from_slice(&[a, b + SEGMENTS as u32, b, a, a + SEGMENTS as u32, b + SEGMENTS as u32]);
        }
    }
    let influences = Influences::new(2, joints, weights, 2)?;
    Ok((skeleton, Mesh { positions, normals, uvs: Vec::new(), influences: Some(influences), indices }))
}

/// Stripe colours of the bar.
fn stripes(n: usize) -> Vec<[f32; 4]> {
    let palette = [[0.9, 0.35, 0.3, 1.0], [0.95, 0.85, 0.5, 1.0], [0.3, 0.55, 0.9, 1.0], [0.95, 0.85, 0.5, 1.0]];
    (0..n).map(|v| palette[(v % SEGMENTS) * 4 / SEGMENTS]).collect()
}

/// Twist angle at time `t`: 0 → 180° → 0 over 4 s (180° at t = 2 s).
pub fn twist_angle(t: f32) -> f32 {
    PI * 0.5 * (1.0 - (t * PI * 0.5).cos())
}

/// Local rotation of the bar's child joint at `angle`: about the bar's axis (twist), or
/// half of it about z (bend).
pub fn bar_rotation(angle: f32, bend: bool) -> Quat {
    if bend {
        Quat::from_axis_angle(&Vec3::z_axis(), angle * 0.5)
    } else {
        Quat::from_axis_angle(&Vec3::x_axis(), angle)
    }
}

/// The scene.
#[derive(Debug)]
pub struct DqVsLbs {
    /// The bar (or `--model`), drawn twice (LBS left, DQ right) with the stage's backend;
    /// its radius and floor cover both copies.
    pub stage: Stage,
    /// True for the generated bar.
    pub is_bar: bool,
    /// Bend instead of twist (bar only).
    pub bend: bool,
    /// Clip (model only).
    pub clip: Option<usize>,
    /// Time.
    pub time: f32,
    /// Distance between the two copies.
    pub spacing: f32,
    /// The angle follows [`twist_angle`] of the time (the clip plays, with `--model`).
    pub animate: bool,
    /// Angle of the bar's child joint, radians (the twist; half of it bends).
    pub angle: f32,
    /// Skinning method of the left and the right copy (LBS and DQ at start).
    pub methods: [SkinMethod; 2],
    /// Moves the framing clear of the panel ([`crate::widgets::clear_of_panel`]).
    view_shift: Vec3,
}

impl Scene for DqVsLbs {
    const NAME: &'static str = "ch14_dq_vs_lbs";
    const ABOUT: &'static str =
        "LBS (left) vs dual-quaternion skinning (right) on a twisting bar: the candy-wrapper collapse.";
    const CONTROLS: &'static [(&'static str, &'static str)] = &[
        ("n", "twist / bend (bar)"),
        ("c", "next clip (--model)"),
        ("b", "CPU / GPU vertex / GPU compute"),
        ("k", "skeleton overlay"),
        ("space", "pause"),
    ];

    fn new(renderer: &mut Renderer, args: &CommonArgs) -> Result<Self, DemoError> {
        let (character, is_bar) = match &args.model {
            Some(path) => (Character::from_gltf(path)?, false),
            None => {
                let (skeleton, mesh) = bar()?;
                let skin = Skin::from_skeleton(&skeleton);
                let ch = Character {
                    name: "twisted bar".into(),
                    bone_mask: vec![true; skeleton.len()],
                    skeleton,
                    skins: vec![skin],
                    parts: vec![Part::new(mesh, Some(0), 0)],
                    clips: Vec::new(),
                    looks: None,
                };
                (ch, true)
            }
        };
        let coloring = if is_bar {
            Coloring::PerVertex(stripes(character.parts[0].mesh.vertex_count()))
        } else {
            Coloring::ByJoint
        };
        let mut stage = Stage::with_character(character)?;
        stage.upload(renderer, &coloring)?;
        stage.backend = args.backend;
        stage.show_skeleton = true;
        stage.skeleton_color = [1.0, 1.0, 1.0, 1.0];
        let clip = match stage.clip_arg(args)? {
            Some(c) => Some(c),
            None => stage.character.initial_clip(Some("Twisting")),
        };
        let radius = stage.radius;
        let spacing = radius * 2.2;
        stage.radius = spacing * 0.5 + radius;
        stage.floor -= radius * 0.5;
        let stage_radius = stage.radius;
        Ok(Self {
            stage,
            is_bar,
            bend: false,
            clip,
            time: args.start,
            spacing,
            animate: true,
            angle: twist_angle(args.start),
            methods: [SkinMethod::Lbs, SkinMethod::Dq],
            view_shift: crate::widgets::clear_of_panel(args, stage_radius, 0.25),
        })
    }

    fn focus(&self) -> (Vec3, f32) {
        (self.stage.centre + self.view_shift, self.stage.radius)
    }

    fn view_angles(&self) -> (f32, f32) {
        (0.25, 0.3)
    }

    fn update(&mut self, dt: f32, frame: &mut FrameData) -> Result<(), DemoError> {
        if self.animate {
            self.time += dt;
            self.angle = twist_angle(self.time);
        }
        let st = &mut self.stage;
        if self.is_bar {
            st.posed.pose.locals_mut().copy_from_slice(st.character.skeleton.rest_pose().locals());
            st.posed.pose.locals_mut()[1].rotation = bar_rotation(self.angle, self.bend);
            st.update()?;
        } else {
            st.sample(self.clip, self.time)?;
        }
        for (method, x) in [(self.methods[0], -0.5), (self.methods[1], 0.5)] {
            let m = Mat4::new_translation(&Vec3::new(x * self.spacing, 0.0, 0.0));
            st.draw_with(frame, &m, method, st.backend)?;
        }
        st.ground(frame);
        Ok(())
    }

    fn key(&mut self, key: Key) {
        let n = self.stage.character.clips.len();
        match key {
            Key::Char('n') => self.bend = !self.bend,
            Key::Char('c') if n > 0 => {
                self.clip = Some(self.clip.map_or(0, |c| (c + 1) % n));
                self.time = 0.0;
            }
            // Each side has its method: `m` does nothing here.
            Key::Char('m') => {}
            Key::Space => self.animate = !self.animate,
            key => {
                self.stage.key(key);
            }
        }
    }

    #[cfg(feature = "ui")]
    fn panel(&mut self, ui: &mut anim_render_vk::ui::egui::Ui, _view: &crate::ui::UiView<'_>) {
        use crate::character::Backend;
        use crate::widgets::{check, choice, grid, pick};
        grid(ui, "dq-grid", |ui| {
            if self.is_bar {
                let mut deg = self.angle.to_degrees();
                if crate::widgets::slider(
                    ui,
                    "twist",
                    "twist",
                    &mut deg,
                    0.0..=180.0,
                    |s| s.step_by(1.0),
                    |d| format!("{d:.0}°"),
                ) {
                    self.angle = deg.to_radians();
                    self.animate = false;
                }
                choice(
                    ui,
                    "motion",
                    &mut self.bend,
                    &[(false, "twist", "mode:twist"), (true, "bend (half)", "mode:bend")],
                );
            } else {
                let clips: Vec<&str> = self.stage.character.clips.iter().map(|c| c.name()).collect();
                let mut c = self.clip.unwrap_or(0);
                if !clips.is_empty() && pick(ui, "clip", "clip", &mut c, &clips) {
                    (self.clip, self.time) = (Some(c), 0.0);
                }
            }
            check(ui, "animate", "animate", &mut self.animate, "0 to 180° and back in 4 s (space)");
            for (side, label) in [(0, "left"), (1, "right")] {
                let tags = [format!("{label}:lbs"), format!("{label}:dq")];
                choice(
                    ui,
                    label,
                    &mut self.methods[side],
                    &[(SkinMethod::Lbs, "LBS", &tags[0]), (SkinMethod::Dq, "DQ", &tags[1])],
                );
            }
            let tags: Vec<String> = Backend::ALL.iter().map(|b| format!("backend:{}", b.label())).collect();
            let backends: Vec<(Backend, &str, &str)> =
                Backend::ALL.iter().zip(&tags).map(|(b, t)| (*b, b.label(), t.as_str())).collect();
            choice(ui, "backend", &mut self.stage.backend, &backends);
            check(ui, "skeleton", "skeleton", &mut self.stage.show_skeleton, "overlay (k)");
        });
    }

    fn status(&self) -> String {
        let [l, r] = self.methods.map(|m| m.name().to_uppercase());
        if self.is_bar {
            format!(
                "left {l} | right {r} | {} {:.0} deg | {}",
                if self.bend { "bend" } else { "twist" },
                self.angle.to_degrees() * if self.bend { 0.5 } else { 1.0 },
                self.stage.backend.label()
            )
        } else {
            format!("left {l} | right {r} | {} | {}", self.stage.character.name, self.stage.backend.label())
        }
    }
}
