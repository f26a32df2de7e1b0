//! Chapter 10: the same animated mesh skinned on the CPU (left, warm tint) and on the GPU
//! (right, cool tint), side by side.
//!
//! The panel picks the clip, scrubs its time, the skinning method and the GPU path.

use crate::DemoError;
use crate::app::{CommonArgs, Key, Scene};
use crate::character::Backend;
use crate::stage::{BODY_COLOR, Stage};
use anim_math::{Mat4, Vec3};
use anim_render_vk::{Coloring, FrameData, Renderer};

/// The scene.
#[derive(Debug)]
pub struct CpuGpu {
    /// The character; its backend is the GPU path of the right side (vertex or compute),
    /// its radius covers both copies.
    pub stage: Stage,
    /// Clip playing.
    pub clip: Option<usize>,
    /// Time in the clip.
    pub time: f32,
    /// Distance between the two copies.
    pub spacing: f32,
    /// Time stands still.
    pub paused: bool,
    /// Moves the framing clear of the panel ([`crate::widgets::clear_of_panel`]).
    view_shift: Vec3,
}

impl Scene for CpuGpu {
    const NAME: &'static str = "ch10_cpu_gpu";
    const ABOUT: &'static str = "The same animated mesh skinned on the CPU (left) and on the GPU (right).";
    const CONTROLS: &'static [(&'static str, &'static str)] = &[
        ("c", "next clip"),
        ("m", "LBS / DQ"),
        ("b", "GPU vertex / compute shader"),
        ("k", "skeleton overlay"),
        ("space", "pause"),
    ];

    fn new(renderer: &mut Renderer, args: &CommonArgs) -> Result<Self, DemoError> {
        let mut stage = Stage::new(renderer, args, &Coloring::Uniform(BODY_COLOR))?;
        let clip = match stage.clip_arg(args)? {
            Some(c) => Some(c),
            None => stage.character.initial_clip(None),
        };
        stage.sample(clip, args.start)?;
        stage.frame()?;
        let spacing = stage.radius * 1.2;
        stage.radius *= 1.5;
        stage.backend = if args.backend == Backend::Compute { Backend::Compute } else { Backend::Vertex };
        let view_shift = crate::widgets::clear_of_panel(args, stage.radius, 0.35);
        Ok(Self { stage, clip, time: args.start, spacing, paused: false, view_shift })
    }

    fn focus(&self) -> (Vec3, f32) {
        (self.stage.centre + self.view_shift, self.stage.radius)
    }

    fn view_angles(&self) -> (f32, f32) {
        (0.35, 0.22)
    }

    fn update(&mut self, dt: f32, frame: &mut FrameData) -> Result<(), DemoError> {
        if !self.paused {
            self.time += dt;
        }
        let st = &mut self.stage;
        st.sample(self.clip, self.time)?;
        let sides = [(Backend::Cpu, -0.5, [1.0, 0.93, 0.88]), (st.backend, 0.5, [0.9, 0.96, 1.0])];
        for (backend, x, tint) in sides {
            let first = frame.instances.len();
            let m = Mat4::new_translation(&Vec3::new(x * self.spacing, 0.0, 0.0));
            st.draw_with(frame, &m, st.method, backend)?;
            for inst in &mut frame.instances[first..] {
                inst.tint = tint;
            }
        }
        st.ground(frame);
        Ok(())
    }

    fn key(&mut self, key: Key) {
        let n = self.stage.character.clips.len();
        match key {
            Key::Char('c') if n > 0 => {
                self.clip = Some(self.clip.map_or(0, |c| (c + 1) % n));
                self.time = 0.0;
            }
            // The right side stays on the GPU: `b` switches between its two paths.
            Key::Char('b') => {
                let st = &mut self.stage;
                st.backend = if st.backend == Backend::Vertex { Backend::Compute } else { Backend::Vertex };
            }
            Key::Space => self.paused = !self.paused,
            key => {
                self.stage.key(key);
            }
        }
    }

    #[cfg(feature = "ui")]
    fn panel(&mut self, ui: &mut anim_render_vk::ui::egui::Ui, _view: &crate::ui::UiView<'_>) {
        use crate::widgets::{check, choice, grid};
        let st = &mut self.stage;
        grid(ui, "cpu-gpu-grid", |ui| {
            crate::widgets::clip_and_time(ui, &st.character, &mut self.clip, &mut self.time, &mut self.paused);
            choice(
                ui,
                "skinning",
                &mut st.method,
                &[
                    (anim_core::skin::SkinMethod::Lbs, "LBS", "method:lbs"),
                    (anim_core::skin::SkinMethod::Dq, "DQ", "method:dq"),
                ],
            );
            choice(
                ui,
                "right side",
                &mut st.backend,
                &[
                    (Backend::Vertex, "GPU vertex", "backend:vertex"),
                    (Backend::Compute, "GPU compute", "backend:compute"),
                ],
            );
            check(ui, "skeleton", "skeleton", &mut st.show_skeleton, "overlay (k)");
        });
    }

    fn status(&self) -> String {
        format!("left: CPU | right: {} | {}", self.stage.backend.label(), self.stage.method.name().to_uppercase())
    }
}
