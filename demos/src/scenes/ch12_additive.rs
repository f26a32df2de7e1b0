//! Chapter 12: an additive layer. `lean_left` (two keys: the reference pose, then a bend
//! of the spine to the character's left) is turned into a base pose (its first key) and an
//! additive pose (its last key); every frame the walk is sampled and
//! `pose += amount · (additive − base)` is applied with [`add_in_place`]. The amount is
//! set with keys in a window and swept by a sine headless (`s` toggles the sweep).

use crate::app::{CommonArgs, Key, Scene};
use crate::character::{Backend, Character, Posed};
use crate::scenes::ch12_blend::{BODY_COLOR, find_clip_like, lib_error};
use crate::{DemoError, scenes};
use anim_core::SkinMethod;
use anim_core::additive::make_additive_base_at;
use anim_core::{Pose, TimePolicy, add_in_place, make_additive_base};
use anim_math::{Mat4, Vec3};
use anim_render_vk::{Coloring, FrameData, MeshId, Renderer};

/// Change of the amount per key press.
pub const AMOUNT_STEP: f32 = 0.1;
/// Largest amount the keys reach (past 1 the lean is extrapolated).
pub const MAX_AMOUNT: f32 = 1.5;
/// Period of the headless sweep, seconds.
pub const SWEEP_PERIOD: f32 = 4.0;

/// The swept amount at `time`: `0.5 − 0.5·cos(2π·t / SWEEP_PERIOD)`, from 0 up to 1 and back.
pub fn swept_amount(time: f32) -> f32 {
    0.5 - 0.5 * (std::f32::consts::TAU * time / SWEEP_PERIOD).cos()
}

/// The additive layer: base and additive poses made once from the additive clip.
#[derive(Clone, Debug)]
pub struct Layer {
    /// The reference pose (rest pose + the clip at its start).
    pub base: Pose,
    /// The full layer (rest pose + the clip at its end).
    pub additive: Pose,
}

impl Layer {
    /// Base and additive poses from clip `clip` of `ch`.
    ///
    /// # Errors
    /// The clip does not fit the skeleton.
    pub fn new(ch: &Character, clip: usize) -> Result<Self, DemoError> {
        let c = ch.clips.get(clip).ok_or_else(|| DemoError::Args(format!("no clip {clip}")))?;
        Ok(Self {
            base: make_additive_base(&ch.skeleton, c)?,
            additive: make_additive_base_at(&ch.skeleton, c, c.duration())?,
        })
    }

    /// Samples `clip` of `ch` at `time` (looping) into `pose` over the rest pose and adds
    /// the layer with `amount`. Allocates nothing.
    ///
    /// # Errors
    /// An unknown clip, failed sampling, or a non-finite amount.
    pub fn apply(&self, ch: &Character, clip: usize, time: f32, amount: f32, pose: &mut Pose) -> Result<(), DemoError> {
        let c = ch.clips.get(clip).ok_or_else(|| DemoError::Args(format!("no clip {clip}")))?;
        pose.locals_mut().copy_from_slice(ch.skeleton.rest_pose().locals());
        c.sample(time, TimePolicy::Wrap, pose)?;
        add_in_place(pose, &self.additive, &self.base, amount, None, &ch.skeleton).map_err(|e| lib_error("additive", e))
    }
}

/// The scene.
#[derive(Debug)]
pub struct AdditiveDemo {
    /// The character.
    pub character: Character,
    /// Its posed state (walk + layer).
    pub posed: Posed,
    /// The walk without the layer (drawn as a skeleton for comparison).
    pub plain: Posed,
    meshes: Vec<MeshId>,
    /// The motion clip (walk).
    pub clip: usize,
    /// The additive clip (lean_left).
    pub additive_clip: usize,
    /// The layer.
    pub layer: Layer,
    /// Time in the motion clip.
    pub time: f32,
    /// Time of the sweep.
    pub sweep_time: f32,
    /// Amount of the layer.
    pub amount: f32,
    /// The amount follows [`swept_amount`] instead of the keys.
    pub sweep: bool,
    /// Draw the un-layered skeleton.
    pub show_plain: bool,
    /// Where skinning runs.
    pub backend: Backend,
    method: SkinMethod,
    centre: Vec3,
    radius: f32,
    floor: f32,
}

impl Scene for AdditiveDemo {
    const NAME: &'static str = "ch12_additive";
    const ABOUT: &'static str =
        "lean_left added on top of walking; its amount set by keys (headless: swept by a sine).";
    const CONTROLS: &'static [(&'static str, &'static str)] = &[
        ("a / d", "less / more lean"),
        ("s", "sweep the amount automatically"),
        ("p", "plain walk skeleton (no layer)"),
        ("b", "CPU / GPU vertex / GPU compute skinning"),
    ];

    fn new(renderer: &mut Renderer, args: &CommonArgs) -> Result<Self, DemoError> {
        let character = Character::load(args.model.as_deref())?;
        let additive_clip = match &args.clip {
            Some(c) => character.find_clip(c).ok_or_else(|| DemoError::Args(format!("no clip {c:?}")))?,
            None => find_clip_like(&character, "lean")
                .ok_or_else(|| DemoError::Args(format!("{}: no lean clip (pass --clip)", character.name)))?,
        };
        let clip = find_clip_like(&character, "walk")
            .or_else(|| (0..character.clips.len()).find(|&c| c != additive_clip))
            .ok_or_else(|| DemoError::Args(format!("{}: no motion to layer onto", character.name)))?;
        let layer = Layer::new(&character, additive_clip)?;
        let meshes = character.upload(renderer, &Coloring::Uniform(BODY_COLOR))?;
        let mut posed = Posed::new(&character);
        let (centre, lo, radius) = scenes::framing(&character, &mut posed)?;
        let plain = posed.clone();
        let sweep = args.headless;
        Ok(Self {
            character,
            posed,
            plain,
            meshes,
            clip,
            additive_clip,
            layer,
            time: args.start,
            sweep_time: args.start,
            amount: if sweep { swept_amount(args.start) } else { 0.5 },
            sweep,
            show_plain: true,
            backend: args.backend,
            method: args.method,
            centre,
            radius,
            floor: lo.y,
        })
    }

    fn focus(&self) -> (Vec3, f32) {
        (self.centre, self.radius)
    }

    fn view_angles(&self) -> (f32, f32) {
        // From the front, a little to the side: the lean is sideways.
        (0.25, 0.15)
    }

    fn update(&mut self, dt: f32, frame: &mut FrameData) -> Result<(), DemoError> {
        self.time += dt;
        if self.sweep {
            self.sweep_time += dt;
            self.amount = swept_amount(self.sweep_time);
        }
        self.layer.apply(&self.character, self.clip, self.time, self.amount, &mut self.posed.pose)?;
        self.posed.update(&self.character)?;
        let id = Mat4::identity();
        self.posed.draw(&self.character, &self.meshes, frame, &id, self.method, self.backend)?;
        if self.show_plain {
            self.layer.apply(&self.character, self.clip, self.time, 0.0, &mut self.plain.pose)?;
            self.plain.update(&self.character)?;
            self.plain.draw_skeleton(&self.character, frame, &id, [0.35, 0.75, 1.0, 1.0], true);
        }
        // The amount as a gauge on the floor.
        let (w, y, z) = (self.radius * 0.8, self.floor + 0.002, self.radius * 0.35);
        let a = Vec3::new(-w, y, z);
        frame.line(a, a + Vec3::x() * (2.0 * w), [0.6, 0.6, 0.6, 1.0]);
        frame.line(a, a + Vec3::x() * (2.0 * w * (self.amount / MAX_AMOUNT).clamp(0.0, 1.0)), [1.0, 0.85, 0.2, 1.0]);
        scenes::ground(frame, self.radius, self.floor);
        Ok(())
    }

    fn key(&mut self, key: Key) {
        match key {
            Key::Char('a') => {
                self.sweep = false;
                self.amount = (self.amount - AMOUNT_STEP).max(0.0);
            }
            Key::Char('d') => {
                self.sweep = false;
                self.amount = (self.amount + AMOUNT_STEP).min(MAX_AMOUNT);
            }
            Key::Char('s') => {
                self.sweep = !self.sweep;
                self.sweep_time = 0.0;
            }
            Key::Char('p') => self.show_plain = !self.show_plain,
            Key::Char('b') => self.backend = self.backend.next(),
            _ => {}
        }
    }

    fn status(&self) -> String {
        let name = |c: usize| self.character.clips.get(c).map_or("?", |c| c.name());
        format!(
            "{} + {} x {:.2}{} | {}",
            name(self.clip),
            name(self.additive_clip),
            self.amount,
            if self.sweep { " (sweeping)" } else { "" },
            self.backend.label()
        )
    }
}
