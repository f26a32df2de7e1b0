//! Chapter 12: walk and run blended by a timer-driven weight. The weight ping-pongs
//! between 0 (walk) and 1 (run); both clips play at the same normalized time (their
//! phases line up: the left foot touches down at phase 0 in both), and the phase advances
//! at the rate of the blended cycle length, so the feet never fight each other.

use crate::app::{CommonArgs, Key, Scene};
use crate::character::{Backend, Character, Posed};
use crate::{DemoError, scenes};
use anim_core::SkinMethod;
use anim_core::{Pose, TimePolicy, blend};
use anim_math::{Mat4, Vec3};
use anim_render_vk::{Coloring, FrameData, MeshId, Renderer};

/// Seconds for the weight to go from 0 to 1 and back.
pub const WEIGHT_PERIOD: f32 = 6.0;

/// Skin colour.
pub const BODY_COLOR: [f32; 3] = [0.86, 0.74, 0.62];

/// The blend weight at `time` seconds: a triangle wave 0 → 1 → 0 over [`WEIGHT_PERIOD`],
/// eased with smoothstep so it lingers at pure walk and pure run.
pub fn blend_weight(time: f32) -> f32 {
    let u = (time / WEIGHT_PERIOD).rem_euclid(1.0);
    let tri = 1.0 - (2.0 * u - 1.0).abs();
    tri * tri * (3.0 - 2.0 * tri)
}

/// Any library error as a demo error (the message names what failed).
pub(crate) fn lib_error(what: &str, e: impl std::fmt::Display) -> DemoError {
    DemoError::Args(format!("{what}: {e}"))
}

/// The first clip whose name contains `keyword` (case-insensitive): `walk` finds the
/// mannequin's `walk` and the Woman model's `Walking`.
pub fn find_clip_like(ch: &Character, keyword: &str) -> Option<usize> {
    let k = keyword.to_lowercase();
    ch.find_clip(keyword).or_else(|| ch.clips.iter().position(|c| c.name().to_lowercase().contains(&k)))
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
    blend(out, pose_a, pose_b, weight, None, &ch.skeleton).map_err(|e| lib_error("blend", e))
}

/// Cycle length of the blend: the clips' durations mixed by the weight.
pub fn blended_duration(ch: &Character, a: usize, b: usize, weight: f32) -> f32 {
    let d = |c: usize| ch.clips.get(c).map_or(1.0, |c| c.duration());
    (d(a) + (d(b) - d(a)) * weight).max(1e-3)
}

/// The scene.
#[derive(Debug)]
pub struct BlendDemo {
    /// The character.
    pub character: Character,
    /// Its posed state (the blended pose).
    pub posed: Posed,
    meshes: Vec<MeshId>,
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
    /// LBS or DQ.
    pub method: SkinMethod,
    /// Where skinning runs.
    pub backend: Backend,
    /// Skeleton overlay.
    pub show_skeleton: bool,
    centre: Vec3,
    radius: f32,
    floor: f32,
}

impl Scene for BlendDemo {
    const NAME: &'static str = "ch12_blend";
    const ABOUT: &'static str = "Walk and run blended by a timer-driven weight, both clips in sync (normalized time).";
    const CONTROLS: &'static [(&'static str, &'static str)] = &[
        ("h", "hold the weight"),
        ("0 / 1", "weight 0 (walk) / 1 (run), held"),
        ("k", "skeleton overlay"),
        ("b", "CPU / GPU vertex / GPU compute skinning"),
        ("space", "pause"),
    ];

    fn new(renderer: &mut Renderer, args: &CommonArgs) -> Result<Self, DemoError> {
        let character = Character::load(args.model.as_deref())?;
        let clip_a = find_clip_like(&character, "walk").or(if character.clips.is_empty() { None } else { Some(0) });
        let clip_a = clip_a.ok_or_else(|| DemoError::Args(format!("{}: no clips to blend", character.name)))?;
        let clip_b = find_clip_like(&character, "run")
            .or_else(|| (0..character.clips.len()).find(|&c| c != clip_a))
            .ok_or_else(|| DemoError::Args(format!("{}: blending needs two clips", character.name)))?;
        let meshes = character.upload(renderer, &Coloring::Uniform(BODY_COLOR))?;
        let mut posed = Posed::new(&character);
        let (centre, lo, radius) = scenes::framing(&character, &mut posed)?;
        let rest = character.skeleton.rest_pose().clone();
        let weight_time = args.start;
        Ok(Self {
            character,
            posed,
            meshes,
            clip_a,
            clip_b,
            pose_a: rest.clone(),
            pose_b: rest,
            weight_time,
            weight: blend_weight(weight_time),
            phase: 0.0,
            hold: false,
            paused: false,
            method: args.method,
            backend: args.backend,
            show_skeleton: false,
            centre,
            radius,
            floor: lo.y,
        })
    }

    fn focus(&self) -> (Vec3, f32) {
        (self.centre, self.radius)
    }

    fn update(&mut self, dt: f32, frame: &mut FrameData) -> Result<(), DemoError> {
        let dt = if self.paused { 0.0 } else { dt };
        if !self.hold {
            self.weight_time += dt;
            self.weight = blend_weight(self.weight_time);
        }
        let cycle = blended_duration(&self.character, self.clip_a, self.clip_b, self.weight);
        self.phase = (self.phase + dt / cycle).rem_euclid(1.0);
        sample_blend(
            &self.character,
            self.clip_a,
            self.clip_b,
            self.phase,
            self.weight,
            &mut self.pose_a,
            &mut self.pose_b,
            &mut self.posed.pose,
        )?;
        self.posed.update(&self.character)?;
        let id = Mat4::identity();
        self.posed.draw(&self.character, &self.meshes, frame, &id, self.method, self.backend)?;
        if self.show_skeleton {
            self.posed.draw_skeleton(&self.character, frame, &id, [1.0, 0.85, 0.2, 1.0], true);
        }
        // A weight gauge on the floor in front of the character: walk end blue, run end red.
        let (w, y, z) = (self.radius * 0.8, self.floor + 0.002, self.radius * 0.35);
        let a = Vec3::new(-w, y, z);
        let b = Vec3::new(w, y, z);
        frame.line(a, b, [0.6, 0.6, 0.6, 1.0]);
        let m = a + (b - a) * self.weight;
        let h = self.radius * 0.08;
        frame.line(a, m, [1.0, 0.85, 0.2, 1.0]);
        frame.line(m - Vec3::z() * h, m + Vec3::z() * h, [1.0, 0.85, 0.2, 1.0]);
        frame.line(a - Vec3::z() * h, a + Vec3::z() * h, [0.3, 0.5, 1.0, 1.0]);
        frame.line(b - Vec3::z() * h, b + Vec3::z() * h, [1.0, 0.3, 0.3, 1.0]);
        scenes::ground(frame, self.radius, self.floor);
        Ok(())
    }

    fn key(&mut self, key: Key) {
        match key {
            Key::Char('h') => self.hold = !self.hold,
            Key::Char('0') => {
                self.hold = true;
                self.weight = 0.0;
            }
            Key::Char('1') => {
                self.hold = true;
                self.weight = 1.0;
            }
            Key::Char('k') => self.show_skeleton = !self.show_skeleton,
            Key::Char('b') => self.backend = self.backend.next(),
            Key::Space => self.paused = !self.paused,
            _ => {}
        }
    }

    fn status(&self) -> String {
        let name = |c: usize| self.character.clips.get(c).map_or("?", |c| c.name());
        format!(
            "{} {:.0}% + {} {:.0}% | weight {:.2}{} | phase {:.2} | {}",
            name(self.clip_a),
            (1.0 - self.weight) * 100.0,
            name(self.clip_b),
            self.weight * 100.0,
            self.weight,
            if self.hold { " (held)" } else { "" },
            self.phase,
            self.backend.label()
        )
    }
}
