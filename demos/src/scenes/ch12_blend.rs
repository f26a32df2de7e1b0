//! Chapter 12: walk and run blended by a timer-driven weight. The weight ping-pongs
//! between 0 (walk) and 1 (run); both clips play at the same normalized time (their
//! phases line up: the left foot touches down at phase 0 in both), and the phase advances
//! at the rate of the blended cycle length, so the feet never fight each other.
//!
//! `w` layers an upper-body wave over the locomotion ([`anim_core::blend::layered`]): the
//! locomotion pose with a lower-body mask and the wave pose (a clip made in code, see
//! [`wave_clip`]) with the complementary upper-body mask, faded in and out over
//! [`WAVE_FADE`] seconds.
//!
//! The panel sets the weight (a slider that holds the timer), the timer, the two clips,
//! and the wave layer: on or off, its weight, and the joint its upper-body mask starts at.

use crate::DemoError;
use crate::app::{CommonArgs, Key, Scene};
use crate::character::Character;
use crate::stage::{BODY_COLOR, STAGE_CONTROLS, Stage};
use anim_core::blend::blend;
use anim_core::blend::layered::{Layer, blend_layers};
use anim_core::clip::{Clip, Interpolation, JointTracks, TimePolicy, Track};
use anim_core::pose::{Pose, Skeleton};
use anim_math::{Mat4, Quat, Vec3};
use anim_render_vk::{Coloring, FrameData, Renderer};

/// Seconds for the weight to go from 0 to 1 and back.
pub const WEIGHT_PERIOD: f32 = 6.0;

/// The blend weight at `time` seconds: a triangle wave 0 → 1 → 0 over [`WEIGHT_PERIOD`],
/// eased with smoothstep so it lingers at pure walk and pure run.
pub fn blend_weight(time: f32) -> f32 {
    let u = (time / WEIGHT_PERIOD).rem_euclid(1.0);
    let tri = 1.0 - (2.0 * u - 1.0).abs();
    tri * tri * (3.0 - 2.0 * tri)
}

/// Samples clips `a` and `b` of `ch` at normalized time `phase` (0..1 of each clip's own
/// duration) into `pose_a` / `pose_b` (over the rest pose) and blends them into `out`
/// with `weight` (0 = `a`, 1 = `b`). Allocates nothing.
///
/// # Errors
/// Unknown clips or failed sampling/blending.
#[allow(clippy::too_many_arguments)]
pub fn sample_blend(
    ch: &Character,
    a: usize,
    b: usize,
    phase: f32,
    weight: f32,
    pose_a: &mut Pose,
    pose_b: &mut Pose,
    out: &mut Pose,
) -> Result<(), DemoError> {
    for (clip, pose) in [(a, &mut *pose_a), (b, &mut *pose_b)] {
        let clip = ch.clips.get(clip).ok_or_else(|| DemoError::Args(format!("no clip {clip}")))?;
        pose.locals_mut().copy_from_slice(ch.skeleton.rest_pose().locals());
        clip.sample(phase * clip.duration(), TimePolicy::Wrap, pose)?;
    }
    Ok(blend(out, pose_a, pose_b, weight, None, &ch.skeleton)?)
}

/// Cycle length of the blend: the clips' durations mixed by the weight.
pub fn blended_duration(ch: &Character, a: usize, b: usize, weight: f32) -> f32 {
    let d = |c: usize| ch.clips.get(c).map_or(1.0, |c| c.duration());
    (d(a) + (d(b) - d(a)) * weight).max(1e-3)
}

/// Seconds the wave layer takes to fade fully in or out.
pub const WAVE_FADE: f32 = 0.5;

/// Root of the upper body for the wave mask (the mannequin's lowest spine joint).
pub const UPPER_BODY_ROOT: &str = "spine_01";

/// A 1.2-second looping wave of the right arm for a skeleton with the mannequin's joint
/// names (`upperarm_r`, `lowerarm_r`, `spine_03`): the upper arm raised above the shoulder,
/// the forearm swinging side to side in the frontal plane, the chest swaying slightly.
/// `None` when a joint is missing.
pub fn wave_clip(skeleton: &Skeleton) -> Option<Clip> {
    let (upper, lower, chest) =
        (skeleton.find("upperarm_r")?, skeleton.find("lowerarm_r")?, skeleton.find("spine_03")?);
    const KEYS: usize = 13;
    const LENGTH: f32 = 1.2;
    let times: Vec<f32> = (0..KEYS).map(|k| LENGTH * k as f32 / (KEYS - 1) as f32).collect();
    let q = |axis: Vec3, angle: f32| Quat::from_axis_angle(&nalgebra::Unit::new_normalize(axis), angle).into_inner();
    let phase = |t: f32| (std::f32::consts::TAU * t / LENGTH).sin();
    let rot = |f: &dyn Fn(f32) -> nalgebra::Quaternion<f32>| {
        Track::new(Interpolation::Linear, times.clone(), times.iter().map(|&t| f(t)).collect()).ok()
    };
    let mut u = JointTracks::new(upper);
    u.rotation = rot(&|t| q(Vec3::z(), -1.0 - 0.1 * phase(t)))?.into();
    let mut l = JointTracks::new(lower);
    l.rotation = rot(&|t| q(Vec3::z(), -0.6 + 0.55 * phase(t)))?.into();
    let mut c = JointTracks::new(chest);
    c.rotation = rot(&|t| q(Vec3::z(), 0.06 * phase(t)))?.into();
    Clip::new("wave", vec![u, l, c], vec![]).ok()
}

/// The scene.
#[derive(Debug)]
pub struct BlendDemo {
    /// The character, its blended pose and how it is drawn.
    pub stage: Stage,
    /// Clip at weight 0 (walk).
    pub clip_a: usize,
    /// Clip at weight 1 (run).
    pub clip_b: usize,
    pose_a: Pose,
    pose_b: Pose,
    /// Time driving the weight.
    pub weight_time: f32,
    /// Current weight.
    pub weight: f32,
    /// Normalized time shared by both clips, in `[0, 1)`.
    pub phase: f32,
    /// The weight timer stands still.
    pub hold: bool,
    /// Everything stands still.
    pub paused: bool,
    /// The wave layer is wanted (`w`); its weight follows over [`WAVE_FADE`].
    pub wave_on: bool,
    /// Weight the wave layer fades to when on (1 by default).
    pub wave_target: f32,
    /// Current weight of the wave layer.
    pub wave_weight: f32,
    /// Time in the wave clip.
    pub wave_time: f32,
    wave: Option<Clip>,
    wave_pose: Pose,
    layered: Pose,
    /// Root joint of the wave's mask ([`UPPER_BODY_ROOT`] by default).
    pub mask_root: Option<usize>,
    /// 1 on the upper body (the subtree of [`BlendDemo::mask_root`]), 0 elsewhere.
    upper: Vec<f32>,
    mask_upper: Vec<f32>,
    mask_lower: Vec<f32>,
}

impl BlendDemo {
    /// Makes the wave's mask the subtree of `root` (nothing without a root).
    ///
    /// # Errors
    /// A joint out of range.
    pub fn set_mask_root(&mut self, root: Option<usize>) -> Result<(), DemoError> {
        let skeleton = &self.stage.character.skeleton;
        match root {
            Some(r) => anim_core::blend::mix::subtree_mask(&mut self.upper, r, 1.0, skeleton)?,
            None => self.upper.fill(0.0),
        }
        self.mask_root = root;
        Ok(())
    }

    /// Turns the weight timer on (resuming, rising, from the weight held: no jump) or off
    /// (the weight is held).
    pub fn set_timer(&mut self, on: bool) {
        if on && self.hold {
            // Invert the smoothstep, then the triangle's rising half.
            let w = self.weight.clamp(0.0, 1.0);
            let tri = (0.5 - ((1.0 - 2.0 * w).asin() / 3.0).sin()).clamp(0.0, 1.0);
            self.weight_time = tri * WEIGHT_PERIOD * 0.5;
        }
        self.hold = !on;
    }

    /// The mask of the wave layer: 1 on the joints of the upper body, 0 elsewhere.
    pub fn upper_mask(&self) -> &[f32] {
        &self.upper
    }

    /// Layers the wave over the locomotion pose in `self.stage.posed.pose` with the current
    /// wave weight (nothing at weight 0). Allocates nothing.
    ///
    /// # Errors
    /// Sampling or blending failed.
    pub fn apply_wave(&mut self) -> Result<(), DemoError> {
        let Some(wave) = &self.wave else { return Ok(()) };
        if self.wave_weight <= 0.0 {
            return Ok(());
        }
        let skeleton = &self.stage.character.skeleton;
        self.wave_pose.locals_mut().copy_from_slice(skeleton.rest_pose().locals());
        wave.sample(self.wave_time, TimePolicy::Wrap, &mut self.wave_pose)?;
        for ((up, lo), m) in self.mask_upper.iter_mut().zip(&mut self.mask_lower).zip(&self.upper) {
            *up = m * self.wave_weight;
            *lo = 1.0 - *up;
        }
        let loco = &self.stage.posed.pose;
        blend_layers(
            &mut self.layered,
            skeleton,
            &[
                Layer::new(loco, 1.0).with_mask(&self.mask_lower),
                Layer::new(&self.wave_pose, 1.0).with_mask(&self.mask_upper),
            ],
            &[],
            0.1,
        )?;
        self.stage.posed.pose.locals_mut().copy_from_slice(self.layered.locals());
        Ok(())
    }
}

impl Scene for BlendDemo {
    const NAME: &'static str = "ch12_blend";
    const ABOUT: &'static str = "Walk and run blended by a timer-driven weight, both clips in sync (normalized time).";
    const CONTROLS: &'static [(&'static str, &'static str)] = &[
        ("h", "hold the weight"),
        ("w", "upper-body wave layer on / off"),
        ("0 / 1", "weight 0 (walk) / 1 (run), held"),
        STAGE_CONTROLS[0],
        STAGE_CONTROLS[1],
        STAGE_CONTROLS[2],
        ("space", "pause"),
    ];

    fn new(renderer: &mut Renderer, args: &CommonArgs) -> Result<Self, DemoError> {
        let stage = Stage::new(renderer, args, &Coloring::Uniform(BODY_COLOR))?;
        let ch = &stage.character;
        let clip_a = ch.find_clip_like("walk").or(if ch.clips.is_empty() { None } else { Some(0) });
        let clip_a = clip_a.ok_or_else(|| DemoError::Args(format!("{}: no clips to blend", ch.name)))?;
        let clip_b = ch
            .find_clip_like("run")
            .or_else(|| (0..ch.clips.len()).find(|&c| c != clip_a))
            .ok_or_else(|| DemoError::Args(format!("{}: blending needs two clips", ch.name)))?;
        let rest = ch.skeleton.rest_pose().clone();
        let weight_time = args.start;
        let wave = wave_clip(&ch.skeleton);
        let mask_root = ch.skeleton.find(UPPER_BODY_ROOT);
        let upper = vec![0.0; ch.skeleton.len()];
        let mut demo = Self {
            stage,
            clip_a,
            clip_b,
            pose_a: rest.clone(),
            pose_b: rest.clone(),
            wave_on: false,
            wave_target: 1.0,
            wave_weight: 0.0,
            wave_time: 0.0,
            wave,
            wave_pose: rest.clone(),
            layered: rest,
            mask_upper: upper.clone(),
            mask_lower: upper.clone(),
            upper,
            mask_root,
            weight_time,
            weight: blend_weight(weight_time),
            phase: 0.0,
            hold: false,
            paused: false,
        };
        demo.set_mask_root(mask_root)?;
        Ok(demo)
    }

    fn focus(&self) -> (Vec3, f32) {
        self.stage.focus()
    }

    fn update(&mut self, dt: f32, frame: &mut FrameData) -> Result<(), DemoError> {
        let dt = if self.paused { 0.0 } else { dt };
        if !self.hold {
            self.weight_time += dt;
            self.weight = blend_weight(self.weight_time);
        }
        let cycle = blended_duration(&self.stage.character, self.clip_a, self.clip_b, self.weight);
        self.phase = (self.phase + dt / cycle).rem_euclid(1.0);
        let st = &mut self.stage;
        sample_blend(
            &st.character,
            self.clip_a,
            self.clip_b,
            self.phase,
            self.weight,
            &mut self.pose_a,
            &mut self.pose_b,
            &mut st.posed.pose,
        )?;
        let target = if self.wave_on && self.wave.is_some() { self.wave_target } else { 0.0 };
        let fade = dt / WAVE_FADE;
        self.wave_weight = (self.wave_weight + (target - self.wave_weight).clamp(-fade, fade)).clamp(0.0, 1.0);
        self.wave_time += dt;
        self.apply_wave()?;
        let st = &mut self.stage;
        st.update()?;
        st.draw(frame, &Mat4::identity())?;
        // A weight gauge on the floor in front of the character: walk end blue, run end red.
        let (w, y, z) = (st.radius * 0.8, st.floor + 0.002, st.radius * 0.35);
        let a = Vec3::new(-w, y, z);
        let b = Vec3::new(w, y, z);
        frame.line(a, b, [0.6, 0.6, 0.6, 1.0]);
        let m = a + (b - a) * self.weight;
        let h = st.radius * 0.08;
        frame.line(a, m, [1.0, 0.85, 0.2, 1.0]);
        frame.line(m - Vec3::z() * h, m + Vec3::z() * h, [1.0, 0.85, 0.2, 1.0]);
        frame.line(a - Vec3::z() * h, a + Vec3::z() * h, [0.3, 0.5, 1.0, 1.0]);
        frame.line(b - Vec3::z() * h, b + Vec3::z() * h, [1.0, 0.3, 0.3, 1.0]);
        st.ground(frame);
        Ok(())
    }

    fn key(&mut self, key: Key) {
        if self.stage.key(key) {
            return;
        }
        match key {
            Key::Char('h') => self.set_timer(self.hold),
            Key::Char('w') => self.wave_on = !self.wave_on,
            Key::Char('0') => {
                self.hold = true;
                self.weight = 0.0;
            }
            Key::Char('1') => {
                self.hold = true;
                self.weight = 1.0;
            }
            Key::Space => self.paused = !self.paused,
            _ => {}
        }
    }

    #[cfg(feature = "ui")]
    fn panel(&mut self, ui: &mut anim_render_vk::ui::egui::Ui, _view: &crate::ui::UiView<'_>) {
        use crate::widgets::{check, grid, pick, section, slider, value};
        let ch = &self.stage.character;
        let clips: Vec<&str> = ch.clips.iter().map(|c| c.name()).collect();
        let mut timer = !self.hold;
        grid(ui, "blend-grid", |ui| {
            let r =
                slider(ui, "weight", "blend", &mut self.weight, 0.0..=1.0, |s| s.step_by(0.01), |w| format!("{w:.2}"));
            if r {
                timer = false;
            }
            check(ui, "timer", "timer", &mut timer, "weight follows the timer (h)");
            pick(ui, "weight 0", "clip_a", &mut self.clip_a, &clips);
            pick(ui, "weight 1", "clip_b", &mut self.clip_b, &clips);
            value(ui, "phase", format!("{:.2} of the cycle", self.phase));
            check(ui, "pause", "pause", &mut self.paused, "stand still (space)");
        });
        self.set_timer(timer);
        let joints: Vec<String> = self.stage.character.skeleton.names().to_vec();
        let wave = self.wave.is_some();
        let mut root = self.mask_root.unwrap_or(0);
        section(ui, "Upper-body layer", "blend-layer", true, |ui| {
            if !wave {
                ui.weak("no wave: the character lacks the mannequin's arm joints");
                return;
            }
            grid(ui, "blend-layer-grid", |ui| {
                check(ui, "wave layer", "wave", &mut self.wave_on, "on (w)");
                slider(
                    ui,
                    "layer weight",
                    "layer_weight",
                    &mut self.wave_target,
                    0.0..=1.0,
                    |s| s.step_by(0.01),
                    |w| format!("{w:.2}"),
                );
                ui.label("now");
                ui.add(
                    anim_render_vk::ui::egui::ProgressBar::new(self.wave_weight)
                        .desired_width(120.0)
                        .text(format!("{:.2}", self.wave_weight)),
                );
                ui.end_row();
                let names: Vec<&str> = joints.iter().map(String::as_str).collect();
                pick(ui, "mask root", "mask_root", &mut root, &names);
                let upper = self.upper.iter().filter(|&&m| m > 0.0).count();
                value(ui, "mask", format!("{upper} of {} joints take the wave", self.upper.len()));
            });
        });
        if wave && Some(root) != self.mask_root {
            // A root from the list is a joint of the skeleton.
            let _ = self.set_mask_root(Some(root));
        }
        ui.separator();
        self.stage.panel(ui);
    }

    fn status(&self) -> String {
        let name = |c: usize| self.stage.character.clips.get(c).map_or("?", |c| c.name());
        format!(
            "{} {:.0}% + {} {:.0}% | weight {:.2}{} | phase {:.2} | wave {:.2} | {}",
            name(self.clip_a),
            (1.0 - self.weight) * 100.0,
            name(self.clip_b),
            self.weight * 100.0,
            self.weight,
            if self.hold { " (held)" } else { "" },
            self.phase,
            self.wave_weight,
            self.stage.status()
        )
    }
}
