//! Chapter 12: a [`CrossFadeController`] that fades to a random clip every few seconds.
//! The clips are picked by a seeded generator, so a headless run always shows the same
//! sequence; the title shows the current clip and the fade targets with their weights.
//!
//! The panel picks a target clip and fades to it now, sets the fade's duration and the
//! interval of the automatic fades (or turns them off), and shows every fade in progress
//! with its weight.

use crate::DemoError;
use crate::app::{CommonArgs, Key, Scene};
use crate::character::{Character, Posed};
use crate::stage::{BODY_COLOR, STAGE_CONTROLS, Stage};
use anim_core::blend::crossfade::CrossFadeController;
use anim_core::clip::{Clip, TimePolicy};
use anim_math::{Mat4, Vec3};
use anim_render_vk::{Coloring, FrameData, Renderer};
use std::sync::Arc;

/// Seconds between two fades.
pub const FADE_INTERVAL: f32 = 2.5;
/// Seconds before the first fade.
pub const FIRST_FADE: f32 = 1.6;
/// Length of a fade, seconds.
pub const FADE_DURATION: f32 = 0.6;
/// Seed of the clip picker.
pub const SEED: u64 = 0x12_c0ff_ee15;

/// A small deterministic generator (SplitMix64), enough to pick clips.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Picker {
    state: u64,
}

impl Picker {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A clip index in `0..count` other than `avoid` (any index when `count` is 1).
    pub fn pick(&mut self, count: usize, avoid: Option<usize>) -> usize {
        match (count, avoid) {
            (0 | 1, _) => 0,
            (n, Some(a)) if a < n => {
                let k = (self.next_u64() % (n as u64 - 1)) as usize;
                if k >= a { k + 1 } else { k }
            }
            (n, _) => (self.next_u64() % n as u64) as usize,
        }
    }
}

/// The clips the demo fades between: every clip except additive ones (names containing
/// "lean": they hold a reference pose and a delta, not a motion).
pub fn playable_clips(ch: &Character) -> Vec<usize> {
    let all: Vec<usize> = (0..ch.clips.len()).collect();
    let motions: Vec<usize> =
        all.iter().copied().filter(|&c| !ch.clips[c].name().to_lowercase().contains("lean")).collect();
    if motions.is_empty() { all } else { motions }
}

/// The fading logic without drawing: the controller, the clips, the picker and the clock.
#[derive(Debug)]
pub struct Shuffler {
    /// The controller.
    pub controller: CrossFadeController,
    /// The playable clips, shared with the controller.
    pub clips: Vec<Arc<Clip>>,
    /// Index into `clips` of the last clip faded to (or played).
    pub last: usize,
    /// Seconds until the next fade.
    pub countdown: f32,
    /// The generator.
    pub picker: Picker,
    /// Fades started so far.
    pub fades: usize,
    /// Length of a fade, seconds ([`FADE_DURATION`] by default).
    pub duration: f32,
    /// Seconds between two automatic fades ([`FADE_INTERVAL`] by default).
    pub interval: f32,
}

impl Shuffler {
    /// Plays the first playable clip (`walk` when present).
    ///
    /// # Errors
    /// A character without clips, or clips that do not fit its skeleton.
    pub fn new(ch: &Character) -> Result<Self, DemoError> {
        let ids = playable_clips(ch);
        if ids.is_empty() {
            return Err(DemoError::Args(format!("{}: no clips to fade between", ch.name)));
        }
        let clips: Vec<Arc<Clip>> = ids.iter().map(|&c| Arc::clone(&ch.clips[c])).collect();
        let last = clips.iter().position(|c| c.name().to_lowercase().contains("walk")).unwrap_or(0);
        let mut controller = CrossFadeController::new(&ch.skeleton, 4);
        controller.play(clips[last].clone(), TimePolicy::Wrap)?;
        Ok(Self {
            controller,
            clips,
            last,
            countdown: FIRST_FADE,
            picker: Picker::new(SEED),
            fades: 0,
            duration: FADE_DURATION,
            interval: FADE_INTERVAL,
        })
    }

    /// Starts a fade to a random clip other than the last one now.
    ///
    /// # Errors
    /// As [`CrossFadeController::fade_to`].
    pub fn fade_now(&mut self) -> Result<(), DemoError> {
        let next = self.picker.pick(self.clips.len(), Some(self.last));
        self.fade_to(next)
    }

    /// Starts a fade to `clips[next]` over [`Shuffler::duration`] now (nothing new when it
    /// is already the target); the next automatic fade is an interval away.
    ///
    /// # Errors
    /// An index out of range, or as [`CrossFadeController::fade_to`].
    pub fn fade_to(&mut self, next: usize) -> Result<(), DemoError> {
        let clip = self.clips.get(next).ok_or_else(|| DemoError::Args(format!("no playable clip {next}")))?;
        if self.controller.fade_to(clip.clone(), self.duration, TimePolicy::Wrap)? {
            self.fades += 1;
        }
        self.last = next;
        self.countdown = self.interval;
        Ok(())
    }

    /// Advances by `dt`: counts down to the next fade (started before the update, so it
    /// gets its first `dt` of weight), then updates the controller.
    ///
    /// # Errors
    /// As [`CrossFadeController::update`].
    pub fn step(&mut self, dt: f32) -> Result<(), DemoError> {
        self.countdown -= dt;
        if self.countdown <= 0.0 {
            self.fade_now()?;
        }
        Ok(self.controller.update(dt)?)
    }
}

/// The scene.
#[derive(Debug)]
pub struct CrossFadeDemo {
    /// The character, its pose (the controller's) and how it is drawn.
    pub stage: Stage,
    /// The fading logic.
    pub shuffler: Shuffler,
    /// Fades stop (the current clip keeps playing).
    pub hold: bool,
    /// During a fade, the skeletons of the clip faded from (blue) and the newest target
    /// (orange), each sampled on its own.
    pub show_sources: bool,
    sources: [Posed; 2],
    fade_requested: bool,
    /// Index into the shuffler's clips the panel fades to.
    pub target: usize,
    fade_to_target: bool,
}

impl Scene for CrossFadeDemo {
    const NAME: &'static str = "ch12_crossfade";
    const ABOUT: &'static str =
        "A crossfade controller fading to a random clip every few seconds (seeded: headless runs repeat).";
    const CONTROLS: &'static [(&'static str, &'static str)] = &[
        ("n", "fade to a random clip now"),
        ("h", "hold: no automatic fades"),
        ("s", "skeletons of the clips being faded (from: blue, to: orange)"),
        STAGE_CONTROLS[0],
        STAGE_CONTROLS[1],
        STAGE_CONTROLS[2],
    ];

    fn new(renderer: &mut Renderer, args: &CommonArgs) -> Result<Self, DemoError> {
        let mut stage = Stage::new(renderer, args, &Coloring::Uniform(BODY_COLOR))?;
        let character = &stage.character;
        let mut shuffler = Shuffler::new(character)?;
        if let Some(want) = stage.clip_arg(args)? {
            let name = character.clips[want].name();
            let i = shuffler.clips.iter().position(|k| k.name() == name).ok_or_else(|| {
                DemoError::Args(format!("clip {:?} is additive, not a motion", args.clip.as_deref().unwrap_or(name)))
            })?;
            shuffler.last = i;
            shuffler.controller.play(shuffler.clips[i].clone(), TimePolicy::Wrap)?;
        }
        let sources = [stage.posed.clone(), stage.posed.clone()];
        stage.radius *= 1.1;
        // `--start` fast-forwards the whole sequence (fades included).
        let mut t = args.start;
        while t > 0.0 {
            let dt = t.min(1.0 / 30.0);
            shuffler.step(dt)?;
            t -= dt;
        }
        let target = shuffler.last;
        Ok(Self {
            stage,
            shuffler,
            hold: false,
            show_sources: true,
            sources,
            fade_requested: false,
            target,
            fade_to_target: false,
        })
    }

    fn focus(&self) -> (Vec3, f32) {
        self.stage.focus()
    }

    fn update(&mut self, dt: f32, frame: &mut FrameData) -> Result<(), DemoError> {
        if std::mem::take(&mut self.fade_requested) {
            self.shuffler.fade_now()?;
        }
        if std::mem::take(&mut self.fade_to_target) {
            self.shuffler.fade_to(self.target)?;
        }
        if self.hold {
            self.shuffler.countdown = self.shuffler.interval;
        }
        self.shuffler.step(dt)?;
        let st = &mut self.stage;
        st.posed.pose.locals_mut().copy_from_slice(self.shuffler.controller.pose().locals());
        st.update()?;
        let id = Mat4::identity();
        st.draw(frame, &id)?;
        let c = &self.shuffler.controller;
        if let (true, Some(from), Some(from_time), Some(to)) =
            (self.show_sources, c.current_clip(), c.current_time(), c.targets().last())
        {
            let rest = st.character.skeleton.rest_pose().locals();
            for ((posed, clip, time), color) in [(from, from_time), (to.clip, to.time)]
                .into_iter()
                .zip(&mut self.sources)
                .map(|((clip, time), posed)| (posed, clip, time))
                .zip([[0.35, 0.7, 1.0, 1.0], [1.0, 0.6, 0.2, 1.0]])
            {
                posed.pose.locals_mut().copy_from_slice(rest);
                clip.sample(time, TimePolicy::Wrap, &mut posed.pose)?;
                posed.update(&st.character)?;
                posed.draw_skeleton(&st.character, frame, &id, color, true);
            }
        }
        // Countdown to the next fade as a bar on the floor; fades in progress as bars
        // above it, as long as their weight.
        let (w, y, z) = (st.radius * 0.8, st.floor + 0.002, st.radius * 0.35);
        let left = Vec3::new(-w, y, z);
        let frac = (self.shuffler.countdown / self.shuffler.interval.max(1e-3)).clamp(0.0, 1.0);
        frame.line(left, left + Vec3::x() * (2.0 * w * frac), [0.5, 0.7, 1.0, 1.0]);
        for (i, f) in self.shuffler.controller.targets().enumerate() {
            let a = left + Vec3::z() * (0.05 * st.radius * (i + 1) as f32);
            frame.line(a, a + Vec3::x() * (2.0 * w * f.weight), [1.0, 0.6, 0.2, 1.0]);
        }
        st.ground(frame);
        Ok(())
    }

    fn key(&mut self, key: Key) {
        if self.stage.key(key) {
            return;
        }
        match key {
            Key::Char('n') => self.fade_requested = true,
            Key::Char('h') => self.hold = !self.hold,
            Key::Char('s') => self.show_sources = !self.show_sources,
            _ => {}
        }
    }

    #[cfg(feature = "ui")]
    fn panel(&mut self, ui: &mut anim_render_vk::ui::egui::Ui, _view: &crate::ui::UiView<'_>) {
        use crate::ui::tag;
        use crate::widgets::{check, grid, pick, section, slider, value};
        use anim_render_vk::ui::egui;
        let sh = &mut self.shuffler;
        let clips: Vec<&str> = sh.clips.iter().map(|c| c.name()).collect();
        grid(ui, "crossfade-grid", |ui| {
            pick(ui, "target", "target", &mut self.target, &clips);
            slider(
                ui,
                "duration",
                "duration",
                &mut sh.duration,
                0.0..=2.0,
                |s| s.step_by(0.05),
                |d| format!("{d:.2} s"),
            );
            ui.label("");
            ui.horizontal(|ui| {
                if tag(ui.button("fade to target"), "fade").clicked() {
                    self.fade_to_target = true;
                }
                if tag(ui.button("random (n)"), "random").clicked() {
                    self.fade_requested = true;
                }
            });
            ui.end_row();
            let mut auto = !self.hold;
            if check(ui, "automatic", "auto", &mut auto, "random fades (h)") {
                self.hold = !auto;
            }
            slider(
                ui,
                "interval",
                "interval",
                &mut sh.interval,
                0.5..=10.0,
                |s| s.step_by(0.1),
                |d| format!("{d:.1} s"),
            );
            if !self.hold {
                value(ui, "next fade", format!("in {:.1} s", sh.countdown.max(0.0)));
            }
            check(ui, "skeletons", "sources", &mut self.show_sources, "from (blue) and to (orange) (s)");
        });
        let c = &sh.controller;
        section(ui, "Fades in progress", "crossfade-fades", true, |ui| {
            let current = c.current_clip().map_or("none", |k| k.name());
            ui.label(format!("current: {current} at {:.2} s", c.current_time().unwrap_or(0.0)));
            if c.targets().len() == 0 {
                ui.weak("no fade");
            }
            for f in c.targets() {
                ui.add(egui::ProgressBar::new(f.weight).text(format!("{} {:.0}%", f.clip.name(), f.weight * 100.0)));
            }
        });
        ui.separator();
        self.stage.panel(ui);
    }

    fn status(&self) -> String {
        let c = &self.shuffler.controller;
        let current = c.current_clip().map_or("none", |k| k.name());
        let targets: Vec<String> = c.targets().map(|f| format!("{} {:.0}%", f.clip.name(), f.weight * 100.0)).collect();
        let fading =
            if targets.is_empty() { "no fade".to_string() } else { format!("fading to {}", targets.join(", ")) };
        let next = if self.hold { "held".to_string() } else { format!("next in {:.1} s", self.shuffler.countdown) };
        format!(
            "current {current} {:.2} s | {fading} | {next} | {}",
            c.current_time().unwrap_or(0.0),
            self.stage.status()
        )
    }
}
