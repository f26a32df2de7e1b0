//! Chapter 10: the rest pose, the bind pose and the animated pose of one skeleton, drawn
//! side by side as bones with joint axes (rest red, bind green, animated blue).
//!
//! The rest pose is the nodes' authored transforms; the bind pose is the one the mesh was
//! skinned in (rebuilt from the inverse bind matrices). The default mannequin rests in a
//! relaxed A-pose and is bound in a T-pose; `--model ../shared/assets/Woman/Woman.gltf`
//! shows the book's model, whose rest pose is not its bind pose either.
//!
//! The panel picks the clip, scrubs its time, and shows or hides each skeleton and the
//! joint axes.

use crate::DemoError;
use crate::app::{CommonArgs, Key, Scene};
use crate::character::{Character, Posed};
use crate::stage::Stage;
use anim_math::{Mat4, Vec3};
use anim_render_vk::{FrameData, Renderer, lines};

/// Yaw of the camera at start (the framework's default).
const DEFAULT_YAW: f32 = 0.35;

/// Colours of the three skeletons: rest, bind, animated.
pub const COLORS: [[f32; 4]; 3] = [[1.0, 0.3, 0.3, 1.0], [0.3, 1.0, 0.4, 1.0], [0.35, 0.6, 1.0, 1.0]];

/// The scene.
#[derive(Debug)]
pub struct Poses {
    /// The character (only its skeleton and clips are used, no mesh is uploaded) in its
    /// rest pose, framed for all three skeletons.
    pub stage: Stage,
    bind: Posed,
    animated: Posed,
    /// Clip of the animated skeleton.
    pub clip: Option<usize>,
    /// Time in the clip.
    pub time: f32,
    /// Spacing between the skeletons.
    pub spacing: f32,
    /// Draw joint axes.
    pub axes: bool,
    /// Time stands still.
    pub paused: bool,
    /// Which skeletons are drawn: rest, bind, animated.
    pub shown: [bool; 3],
    /// Moves the framing clear of the panel ([`crate::widgets::clear_of_panel`]).
    view_shift: Vec3,
}

impl Poses {
    /// Model matrix of skeleton `i` (0 rest, 1 bind, 2 animated).
    pub fn placement(&self, i: usize) -> Mat4 {
        Mat4::new_translation(&Vec3::new((i as f32 - 1.0) * self.spacing, 0.0, 0.0))
    }
}

impl Scene for Poses {
    const NAME: &'static str = "ch10_poses";
    const ABOUT: &'static str = "Rest pose (red), bind pose (green) and animated pose (blue) of one skeleton.";
    const CONTROLS: &'static [(&'static str, &'static str)] =
        &[("c", "next clip"), ("a", "joint axes"), ("space", "pause")];

    fn new(_renderer: &mut Renderer, args: &CommonArgs) -> Result<Self, DemoError> {
        let mut stage = Stage::with_character(Character::load(args.model.as_deref())?)?;
        let character = &stage.character;
        let clip = match stage.clip_arg(args)? {
            Some(c) => Some(c),
            None => character.initial_clip(None),
        };
        let mut bind = Posed::new(character);
        bind.pose.clone_from(character.skeleton.bind_pose());
        bind.update(character)?;
        let animated = Posed::new(character);
        let spacing = stage.radius * 1.4;
        stage.radius = spacing * 0.8 + stage.radius * 0.5;
        let view_shift = crate::widgets::clear_of_panel(args, stage.radius, DEFAULT_YAW);
        Ok(Self {
            stage,
            bind,
            animated,
            clip,
            time: args.start,
            spacing,
            axes: true,
            paused: false,
            shown: [true; 3],
            view_shift,
        })
    }

    fn focus(&self) -> (Vec3, f32) {
        (self.stage.centre + self.view_shift, self.stage.radius)
    }

    fn view_angles(&self) -> (f32, f32) {
        (DEFAULT_YAW, 0.22)
    }

    fn update(&mut self, dt: f32, frame: &mut FrameData) -> Result<(), DemoError> {
        if !self.paused {
            self.time += dt;
        }
        let ch = &self.stage.character;
        self.animated.sample(ch, self.clip, self.time)?;
        let axis = self.stage.radius * 0.03;
        for (i, posed) in [&self.stage.posed, &self.bind, &self.animated].into_iter().enumerate() {
            if !self.shown[i] {
                continue;
            }
            let m = self.placement(i);
            posed.draw_skeleton(ch, frame, &m, COLORS[i], true);
            if self.axes {
                for (w, _) in posed.world.iter().zip(&ch.bone_mask).filter(|(_, b)| **b) {
                    lines::joint_axes(frame, std::slice::from_ref(w), &m, axis);
                }
            }
        }
        self.stage.ground(frame);
        Ok(())
    }

    fn key(&mut self, key: Key) {
        match key {
            Key::Char('c') if !self.stage.character.clips.is_empty() => {
                self.clip = Some(self.clip.map_or(0, |c| (c + 1) % self.stage.character.clips.len()));
                self.time = 0.0;
            }
            Key::Char('a') => self.axes = !self.axes,
            Key::Space => self.paused = !self.paused,
            _ => {}
        }
    }

    #[cfg(feature = "ui")]
    fn panel(&mut self, ui: &mut anim_render_vk::ui::egui::Ui, _view: &crate::ui::UiView<'_>) {
        use crate::widgets::{check, grid};
        let ch = &self.stage.character;
        grid(ui, "poses-grid", |ui| {
            crate::widgets::clip_and_time(ui, ch, &mut self.clip, &mut self.time, &mut self.paused);
            for (i, (label, what)) in
                [("rest", "red: the nodes' own transforms"), ("bind", "green: the mesh's pose"), ("animated", "blue")]
                    .into_iter()
                    .enumerate()
            {
                check(ui, label, &format!("show:{label}"), &mut self.shown[i], what);
            }
            check(ui, "axes", "axes", &mut self.axes, "joint axes (a)");
        });
    }

    fn status(&self) -> String {
        let ch = &self.stage.character;
        let clip = self.clip.and_then(|c| ch.clips.get(c)).map_or("rest", |c| c.name());
        format!("{} | animated: {clip}", ch.name)
    }
}
