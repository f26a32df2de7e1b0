//! Chapter 12: an additive layer, as in the book's sample. The additive clip `lean_left`
//! (two keys: the reference pose, then a bend of the spine to the character's left) is
//! made relative to its first frame once ([`make_additive_base`]); every frame the walk is
//! sampled, the additive clip is sampled at the **additive time** into a pose the scene
//! owns, and `pose += additive − base` is applied at full weight with [`add_in_place`].
//! The additive time picks how far into the lean the layer is: at 0 the layer is the base
//! pose and adds nothing, at the clip's end it adds the whole bend. Keys move the additive
//! time through the clip in a window; headless runs sweep it back and forth (`s` toggles
//! the sweep), as the book's sample ping-pongs it.
//!
//! The panel sets the additive time (a slider that stops the sweep), the sweep, the motion
//! and the additive clip.

use crate::DemoError;
use crate::app::{CommonArgs, Key, Scene};
use crate::character::{Character, Posed};
use crate::stage::{BODY_COLOR, STAGE_CONTROLS, Stage};
use anim_core::blend::additive::{add_in_place, make_additive_base};
use anim_core::clip::TimePolicy;
use anim_core::pose::Pose;
use anim_math::{Mat4, Vec3};
use anim_render_vk::{Coloring, FrameData, Renderer};

/// Change of the additive time per key press, as a fraction of the additive clip.
pub const TIME_STEP: f32 = 0.1;
/// Period of the headless sweep (start of the clip to its end and back), seconds.
pub const SWEEP_PERIOD: f32 = 4.0;

/// The swept additive time at `time`, as a fraction of the additive clip: a triangle wave
/// from 0 up to 1 (at half the [`SWEEP_PERIOD`]) and back, the book's ping-pong.
pub fn swept_fraction(time: f32) -> f32 {
    let u = (time / SWEEP_PERIOD).rem_euclid(1.0);
    1.0 - (2.0 * u - 1.0).abs()
}

/// The additive layer: the base pose made once from the additive clip's first frame, and
/// the pose the clip is sampled into at the additive time (reused every frame).
#[derive(Clone, Debug)]
pub struct Layer {
    /// The additive clip.
    pub clip: usize,
    /// The reference pose (rest pose + the clip at its start).
    pub base: Pose,
    /// The additive pose of the last [`Layer::apply`] (rest pose + the clip at the
    /// additive time).
    pub additive: Pose,
}

impl Layer {
    /// The layer of clip `clip` of `ch`.
    ///
    /// # Errors
    /// An unknown clip, or one that does not fit the skeleton.
    pub fn new(ch: &Character, clip: usize) -> Result<Self, DemoError> {
        let c = ch.clips.get(clip).ok_or_else(|| DemoError::Args(format!("no clip {clip}")))?;
        let base = make_additive_base(&ch.skeleton, c)?;
        Ok(Self { clip, additive: base.clone(), base })
    }

    /// Length of the additive clip, seconds.
    pub fn duration(&self, ch: &Character) -> f32 {
        ch.clips.get(self.clip).map_or(0.0, |c| c.duration())
    }

    /// Samples motion clip `clip` of `ch` at `time` (looping) into `pose` over the rest
    /// pose, samples the additive clip at `additive_time` seconds from its start (clamped
    /// into the clip) and adds it at full weight. Allocates nothing.
    ///
    /// # Errors
    /// An unknown clip, failed sampling, or poses that do not fit the skeleton.
    pub fn apply(
        &mut self,
        ch: &Character,
        clip: usize,
        time: f32,
        additive_time: f32,
        pose: &mut Pose,
    ) -> Result<(), DemoError> {
        let c = ch.clips.get(clip).ok_or_else(|| DemoError::Args(format!("no clip {clip}")))?;
        let a = ch.clips.get(self.clip).ok_or_else(|| DemoError::Args(format!("no clip {}", self.clip)))?;
        let rest = ch.skeleton.rest_pose().locals();
        pose.locals_mut().copy_from_slice(rest);
        c.sample(time, TimePolicy::Wrap, pose)?;
        self.additive.locals_mut().copy_from_slice(rest);
        a.sample(a.start_time() + additive_time, TimePolicy::Clamp, &mut self.additive)?;
        Ok(add_in_place(pose, &self.additive, &self.base, 1.0, None, &ch.skeleton)?)
    }
}

/// The scene.
#[derive(Debug)]
pub struct AdditiveDemo {
    /// The character, its layered pose and how it is drawn.
    pub stage: Stage,
    /// The walk without the layer (drawn as a skeleton for comparison).
    pub plain: Posed,
    /// The motion clip (walk).
    pub clip: usize,
    /// The layer (its clip: lean_left).
    pub layer: Layer,
    /// Time in the motion clip.
    pub time: f32,
    /// Time in the additive clip, seconds from its start (0 to its duration).
    pub additive_time: f32,
    /// Time of the sweep.
    pub sweep_time: f32,
    /// The additive time follows [`swept_fraction`] instead of the keys.
    pub sweep: bool,
    /// Draw the un-layered skeleton.
    pub show_plain: bool,
}

impl AdditiveDemo {
    /// The additive time as a fraction of the additive clip (0 when it has no length).
    pub fn fraction(&self) -> f32 {
        let d = self.layer.duration(&self.stage.character);
        if d > 0.0 { (self.additive_time / d).clamp(0.0, 1.0) } else { 0.0 }
    }

    fn set_fraction(&mut self, f: f32) {
        self.additive_time = f.clamp(0.0, 1.0) * self.layer.duration(&self.stage.character);
    }

    /// Turns the sweep on (continuing, rising, from the current additive time) or off.
    pub fn set_sweep(&mut self, on: bool) {
        if on && !self.sweep {
            self.sweep_time = self.fraction() * SWEEP_PERIOD * 0.5;
        }
        self.sweep = on;
    }
}

impl Scene for AdditiveDemo {
    const NAME: &'static str = "ch12_additive";
    const ABOUT: &'static str =
        "lean_left added on top of walking, sampled at an additive time set by keys (headless: swept).";
    const CONTROLS: &'static [(&'static str, &'static str)] = &[
        ("a / d", "additive time back / forward (less / more lean)"),
        ("s", "sweep the additive time back and forth"),
        ("p", "plain walk skeleton (no layer)"),
        STAGE_CONTROLS[0],
        STAGE_CONTROLS[1],
        STAGE_CONTROLS[2],
    ];

    fn new(renderer: &mut Renderer, args: &CommonArgs) -> Result<Self, DemoError> {
        let stage = Stage::new(renderer, args, &Coloring::Uniform(BODY_COLOR))?;
        let ch = &stage.character;
        let additive_clip = match stage.clip_arg(args)? {
            Some(c) => c,
            None => ch
                .find_clip_like("lean")
                .ok_or_else(|| DemoError::Args(format!("{}: no lean clip (pass --clip)", ch.name)))?,
        };
        let clip = ch
            .find_clip_like("walk")
            .or_else(|| (0..ch.clips.len()).find(|&c| c != additive_clip))
            .ok_or_else(|| DemoError::Args(format!("{}: no motion to layer onto", ch.name)))?;
        let layer = Layer::new(ch, additive_clip)?;
        let plain = stage.posed.clone();
        let sweep = args.headless;
        let mut demo = Self {
            stage,
            plain,
            clip,
            layer,
            time: args.start,
            additive_time: 0.0,
            sweep_time: args.start,
            sweep,
            show_plain: true,
        };
        demo.set_fraction(if sweep { swept_fraction(args.start) } else { 0.5 });
        Ok(demo)
    }

    fn focus(&self) -> (Vec3, f32) {
        self.stage.focus()
    }

    fn view_angles(&self) -> (f32, f32) {
        // From the front, a little to the side: the lean is sideways.
        (0.25, 0.15)
    }

    fn update(&mut self, dt: f32, frame: &mut FrameData) -> Result<(), DemoError> {
        self.time += dt;
        if self.sweep {
            self.sweep_time += dt;
            self.set_fraction(swept_fraction(self.sweep_time));
        }
        let fraction = self.fraction();
        let st = &mut self.stage;
        self.layer.apply(&st.character, self.clip, self.time, self.additive_time, &mut st.posed.pose)?;
        st.update()?;
        let id = Mat4::identity();
        st.draw(frame, &id)?;
        if self.show_plain {
            self.plain.sample(&st.character, Some(self.clip), self.time)?;
            self.plain.draw_skeleton(&st.character, frame, &id, [0.35, 0.75, 1.0, 1.0], true);
        }
        // The additive time as a gauge on the floor.
        let (w, y, z) = (st.radius * 0.8, st.floor + 0.002, st.radius * 0.35);
        let a = Vec3::new(-w, y, z);
        frame.line(a, a + Vec3::x() * (2.0 * w), [0.6, 0.6, 0.6, 1.0]);
        frame.line(a, a + Vec3::x() * (2.0 * w * fraction), [1.0, 0.85, 0.2, 1.0]);
        st.ground(frame);
        Ok(())
    }

    fn key(&mut self, key: Key) {
        if self.stage.key(key) {
            return;
        }
        match key {
            Key::Char('a') => {
                self.sweep = false;
                self.set_fraction(self.fraction() - TIME_STEP);
            }
            Key::Char('d') => {
                self.sweep = false;
                self.set_fraction(self.fraction() + TIME_STEP);
            }
            Key::Char('s') => self.set_sweep(!self.sweep),
            Key::Char('p') => self.show_plain = !self.show_plain,
            _ => {}
        }
    }

    #[cfg(feature = "ui")]
    fn panel(&mut self, ui: &mut anim_render_vk::ui::egui::Ui, _view: &crate::ui::UiView<'_>) {
        use crate::widgets::{check, grid, pick, slider};
        let ch = &self.stage.character;
        let clips: Vec<&str> = ch.clips.iter().map(|c| c.name()).collect();
        let duration = self.layer.duration(ch);
        let mut additive_clip = self.layer.clip;
        let mut sweep = self.sweep;
        grid(ui, "additive-grid", |ui| {
            let r = slider(
                ui,
                "additive time",
                "additive",
                &mut self.additive_time,
                0.0..=duration,
                |s| s.step_by(0.01),
                |t| format!("{t:.2} / {duration:.2} s"),
            );
            if r {
                sweep = false;
            }
            check(ui, "sweep", "sweep", &mut sweep, "back and forth (s)");
            pick(ui, "motion", "clip", &mut self.clip, &clips);
            pick(ui, "additive clip", "additive_clip", &mut additive_clip, &clips);
            check(ui, "plain skeleton", "plain", &mut self.show_plain, "the motion without the layer (p)");
        });
        self.set_sweep(sweep);
        if additive_clip != self.layer.clip {
            // A clip of the character always makes a layer of the same skeleton.
            if let Ok(layer) = Layer::new(&self.stage.character, additive_clip) {
                self.layer = layer;
                self.additive_time = self.additive_time.min(self.layer.duration(&self.stage.character));
            }
        }
        ui.separator();
        self.stage.panel(ui);
    }

    fn status(&self) -> String {
        let ch = &self.stage.character;
        let name = |c: usize| ch.clips.get(c).map_or("?", |c| c.name());
        format!(
            "{} + {} at {:.2}/{:.2} s{} | {}",
            name(self.clip),
            name(self.layer.clip),
            self.additive_time,
            self.layer.duration(ch),
            if self.sweep { " (sweeping)" } else { "" },
            self.stage.status()
        )
    }
}
