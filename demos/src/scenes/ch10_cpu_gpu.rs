//! Chapter 10: the same animated mesh skinned on the CPU (left, warm tint) and on the GPU
//! (right, cool tint), side by side.

use crate::app::{CommonArgs, Key, Scene};
use crate::character::{Backend, Character, Posed};
use crate::scenes::viewer::BODY_COLOR;
use crate::{DemoError, scenes};
use anim_core::SkinMethod;
use anim_math::{Mat4, Vec3};
use anim_render_vk::{Coloring, FrameData, MeshId, Renderer};

/// The scene.
#[derive(Debug)]
pub struct CpuGpu {
    /// The character.
    pub character: Character,
    posed: Posed,
    meshes: Vec<MeshId>,
    /// Clip playing.
    pub clip: Option<usize>,
    /// Time in the clip.
    pub time: f32,
    /// LBS or DQ (both sides).
    pub method: SkinMethod,
    /// GPU path of the right side (vertex or compute).
    pub gpu: Backend,
    /// Distance between the two copies.
    pub spacing: f32,
    centre: Vec3,
    radius: f32,
    floor: f32,
}

impl Scene for CpuGpu {
    const NAME: &'static str = "ch10_cpu_gpu";
    const ABOUT: &'static str = "The same animated mesh skinned on the CPU (left) and on the GPU (right).";
    const CONTROLS: &'static [(&'static str, &'static str)] =
        &[("c", "next clip"), ("m", "LBS / DQ"), ("b", "GPU vertex / compute shader")];

    fn new(renderer: &mut Renderer, args: &CommonArgs) -> Result<Self, DemoError> {
        let character = Character::load(args.model.as_deref())?;
        let clip = match &args.clip {
            Some(c) => Some(character.find_clip(c).ok_or_else(|| DemoError::Args(format!("no clip {c:?}")))?),
            None => character.initial_clip(None),
        };
        let meshes = character.upload(renderer, &Coloring::Uniform(BODY_COLOR))?;
        let mut posed = Posed::new(&character);
        posed.sample(&character, clip, args.start)?;
        let (centre, lo, radius) = scenes::framing(&character, &mut posed)?;
        let gpu = if args.backend == Backend::Compute { Backend::Compute } else { Backend::Vertex };
        Ok(Self {
            character,
            posed,
            meshes,
            clip,
            time: args.start,
            method: args.method,
            gpu,
            spacing: radius * 1.2,
            centre,
            radius: radius * 1.5,
            floor: lo.y,
        })
    }

    fn focus(&self) -> (Vec3, f32) {
        (self.centre, self.radius)
    }

    fn update(&mut self, dt: f32, frame: &mut FrameData) -> Result<(), DemoError> {
        self.time += dt;
        self.posed.sample(&self.character, self.clip, self.time)?;
        let sides = [(Backend::Cpu, -0.5, [1.0, 0.93, 0.88]), (self.gpu, 0.5, [0.9, 0.96, 1.0])];
        for (backend, x, tint) in sides {
            let first = frame.instances.len();
            let m = Mat4::new_translation(&Vec3::new(x * self.spacing, 0.0, 0.0));
            self.posed.draw(&self.character, &self.meshes, frame, &m, self.method, backend)?;
            for inst in &mut frame.instances[first..] {
                inst.tint = tint;
            }
        }
        scenes::ground(frame, self.radius, self.floor);
        Ok(())
    }

    fn key(&mut self, key: Key) {
        match key {
            Key::Char('c') if !self.character.clips.is_empty() => {
                self.clip = Some(self.clip.map_or(0, |c| (c + 1) % self.character.clips.len()));
                self.time = 0.0;
            }
            Key::Char('m') => self.method = self.method.next(),
            Key::Char('b') => self.gpu = if self.gpu == Backend::Vertex { Backend::Compute } else { Backend::Vertex },
            _ => {}
        }
    }

    fn status(&self) -> String {
        format!("left: CPU | right: {} | {:?}", self.gpu.label(), self.method)
    }
}
