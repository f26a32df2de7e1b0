//! Chapter 15: a field of characters drawn as one instanced crowd. Every clip of the
//! character is baked into one animation texture (or loaded from `animtool bake`'s file
//! with `--anim-texture`); each character plays a random clip at its own phase and speed.
//! The CPU only advances times ([`anim_crowd::crowd::Crowd::update`], over all cores) and uploads
//! 64 bytes a character; the GPU culls, evaluates poses and skins.
//!
//! Paths (`--path`, key `p`): `book` samples the texture in the vertex shader for every
//! influence of every vertex (the book's way); `palette-vertex` and `palette-compute`
//! evaluate each visible character's palette once per joint in a compute pass and skin
//! from it in the vertex shader or in a compute pass.
//!
//! The title bar and stdout show the character count, the visible count after culling, the
//! GPU time of each pass and the CPU time a frame.
//!
//! The crowd changes while it runs: every second one character in 16 crossfades to a
//! random clip (through the record's second clip), and `c` sends every character into a
//! crossfade at once.
//!
//! `--models A,B,C` makes a crowd of different characters sharing one clip set: the clips
//! of `--model` (the mannequin by default) retargeted onto each of A, B, C
//! ([`crate::mixed_crowd`]), each type baked into its own atlas and drawn with one
//! instanced draw, at the source's size.

use crate::DemoError;
use crate::app::{CommonArgs, Key, Scene};
use crate::crowd::{CrowdCharacter, Rng, grid_half_extent, populate};
use crate::mixed_crowd::{mixed_types, populate_mixed};
use crate::stage::ground;
use anim_core::skin::SkinMethod;
use anim_crowd::atlas::{AnimAtlas, BakeSettings};
use anim_crowd::crowd::Crowd;
use anim_crowd::lod::MeshLods;
use anim_math::Vec3;
use anim_render_vk::{CrowdDraw, CrowdId, CrowdPath, FrameData, Renderer};
use std::time::Instant;

/// Skin colour of the crowd (each character's tint varies a little around it).
pub const CROWD_COLOR: [f32; 3] = [0.80, 0.72, 0.62];

/// One more character type of a mixed crowd (`--models`): its crowd and its GPU crowd.
#[derive(Debug)]
pub struct CrowdGroup {
    /// The character's name.
    pub name: String,
    /// Its characters' state.
    pub crowd: Crowd,
    /// Its crowd registered with the renderer.
    pub id: CrowdId,
}

/// The crowd scene.
#[derive(Debug)]
pub struct CrowdScene {
    /// Characters' state.
    pub crowd: Crowd,
    /// The crowd registered with the renderer.
    pub id: CrowdId,
    /// With `--models`, the other character types (the first one is `crowd` / `id`).
    pub others: Vec<CrowdGroup>,
    /// How the crowd is animated and skinned on the GPU.
    pub path: CrowdPath,
    /// LBS or DQ (DQ needs a rigid atlas).
    pub method: SkinMethod,
    /// Frustum culling on the GPU.
    pub cull: bool,
    /// Distance beyond which characters skin with one influence.
    pub lod_distance: Option<f32>,
    /// Projected error, in pixels, the mesh levels of detail may show.
    pub lod_pixels: Option<f32>,
    /// Threads for the crowd update.
    pub threads: usize,
    /// Time stands still.
    pub paused: bool,
    /// Seconds between waves of crossfades: every wave, one character in 16 fades to a
    /// random clip while the crowd runs.
    pub wave_seconds: f32,
    rng: Rng,
    since_wave: f32,
    clip_count: u32,
    fade_all: bool,
    rigid: bool,
    centre: Vec3,
    radius: f32,
    floor: f32,
    cpu_ms: f32,
    frames: u32,
    status: String,
}

impl CrowdScene {
    /// The last stats line (character count, visible count, GPU pass times, CPU time).
    pub fn stats_line(&self) -> &str {
        &self.status
    }
}

impl Scene for CrowdScene {
    const NAME: &'static str = "ch15_crowd";
    const ABOUT: &'static str =
        "Chapter 15: thousands of characters, each with its own clip, phase and speed, in one instanced draw.";
    const CONTROLS: &'static [(&'static str, &'static str)] = &[
        ("p", "path: book / palette-vertex / palette-compute"),
        ("m", "LBS / DQ"),
        ("u", "GPU culling on / off"),
        ("c", "every character crossfades to a random clip"),
        ("space", "pause"),
    ];

    fn new(renderer: &mut Renderer, args: &CommonArgs) -> Result<Self, DemoError> {
        let c = &args.crowd;
        let settings = BakeSettings { rate: c.rate, layout: c.layout()?, format: c.texel_format()? };
        // Each character type with its atlas and scale: one type, or one per `--models`.
        let types: Vec<(CrowdCharacter, AnimAtlas, f32)> = match &c.models {
            Some(models) => {
                if c.anim_texture.is_some() {
                    return Err(DemoError::Args("--anim-texture plays one character; not with --models".into()));
                }
                let mut types = Vec::new();
                for t in mixed_types(args.model.as_deref(), models, 60.0)? {
                    let atlas = t.character.bake(&settings)?;
                    types.push((t.character, atlas, t.scale));
                }
                types
            }
            None => {
                let (cc, skipped) = CrowdCharacter::new(crate::Character::load(args.model.as_deref())?)?;
                if skipped > 0 {
                    log::warn!("{}: drawing one skinned part; {skipped} other part(s) left out", cc.character.name);
                }
                let atlas = match &c.anim_texture {
                    Some(path) => cc.load_atlas(path)?,
                    None => cc.bake(&settings)?,
                };
                vec![(cc, atlas, 1.0)]
            }
        };
        if args.method == SkinMethod::Dq && types.iter().any(|t| !t.1.is_rigid()) {
            return Err(DemoError::Args("--method dq needs a rigid skin; this atlas is not rigid".into()));
        }
        let (cc, atlas, scale) = (&types[0].0, &types[0].1, types[0].2);
        let (lo, hi) = cc.mesh().bounds().unwrap_or((Vec3::zeros(), Vec3::new(1.0, 1.0, 1.0)));
        let (lo, hi) = (lo * scale, hi * scale);
        let size = (hi - lo).x.max((hi - lo).z).max((hi - lo).y * 0.5);
        let spacing = size * 1.6;
        let count = c.count as usize;
        let mut crowds = if types.len() == 1 {
            vec![populate(atlas, count, spacing, c.seed)?]
        } else {
            let atlases: Vec<&AnimAtlas> = types.iter().map(|t| &t.1).collect();
            let scales: Vec<f32> = types.iter().map(|t| t.2).collect();
            populate_mixed(&atlases, &scales, count, spacing, c.seed)?
        };
        let mut ids = Vec::with_capacity(types.len());
        for ((cc, atlas, _), crowd) in types.iter().zip(&crowds) {
            let mesh = cc.upload(renderer, CROWD_COLOR)?;
            let id = renderer.add_crowd(mesh, atlas, (crowd.len() as u32).max(1))?;
            if c.lod_pixels.is_some() {
                let lods = MeshLods::from_mesh(cc.mesh(), &[0.5, 0.25, 0.1])
                    .map_err(|e| DemoError::Args(format!("--lod-pixels: {e}")))?;
                renderer.set_crowd_lods(id, &lods)?;
            }
            ids.push(id);
        }
        let others: Vec<CrowdGroup> = crowds
            .drain(1..)
            .zip(ids.drain(1..))
            .zip(types.iter().skip(1))
            .map(|((crowd, id), t)| CrowdGroup { name: t.0.character.name.clone(), crowd, id })
            .collect();
        let (crowd, id) = (crowds.remove(0), ids[0]);
        let half = grid_half_extent(count, spacing) + size;
        let threads = c.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        Ok(Self {
            crowd,
            id,
            others,
            path: c.path,
            method: args.method,
            cull: !c.no_cull,
            lod_distance: c.lod_distance,
            lod_pixels: c.lod_pixels,
            threads,
            paused: false,
            wave_seconds: 1.0,
            rng: Rng::new(c.seed ^ 0x5eed),
            since_wave: 0.0,
            clip_count: atlas.clips().len() as u32,
            fade_all: false,
            rigid: types.iter().all(|t| t.1.is_rigid()),
            centre: Vec3::new(0.0, lo.y + (hi.y - lo.y) * 0.5, 0.0),
            radius: half.max(size),
            floor: lo.y,
            cpu_ms: 0.0,
            frames: 0,
            status: String::new(),
        })
    }

    /// Frames the front half of the field from a corner, low: near characters are large,
    /// the far ones recede, and those behind the camera's frustum are culled.
    fn focus(&self) -> (Vec3, f32) {
        (self.centre + Vec3::new(0.3, 0.0, 0.3) * self.radius, self.radius * 0.25)
    }

    fn view_angles(&self) -> (f32, f32) {
        (0.75, 0.25)
    }

    fn prepare(&mut self, renderer: &mut Renderer) -> Result<(), DemoError> {
        // The instances the last update computed go to the GPU with this frame.
        renderer.set_crowd_instances(self.id, self.crowd.instances())?;
        for g in &self.others {
            renderer.set_crowd_instances(g.id, g.crowd.instances())?;
        }
        if let Some(stats) = renderer.frame_stats() {
            let ids = std::iter::once(self.id).chain(self.others.iter().map(|g| g.id));
            let visible: Option<u32> = ids.map(|id| renderer.crowd_visible(id)).sum();
            let visible = visible.map_or_else(|| "all".to_owned(), |v| v.to_string());
            let types =
                if self.others.is_empty() { String::new() } else { format!(" of {} types", self.others.len() + 1) };
            let levels = match renderer.crowd_level_counts(self.id) {
                Some(l) => format!(" (levels {l:?})"),
                None => String::new(),
            };
            let tris = renderer.crowd_triangles(self.id).map_or_else(String::new, |t| format!(", {t} triangles"));
            self.status = format!(
                "{} characters{types}, {visible} visible{levels}{tris}, {} {} · GPU {stats} · CPU {:.3} ms",
                self.crowd.len() + self.others.iter().map(|g| g.crowd.len()).sum::<usize>(),
                self.path,
                self.method.name(),
                self.cpu_ms
            );
        }
        self.frames += 1;
        if self.frames.is_multiple_of(30) && !self.status.is_empty() {
            println!("{}: {}", Self::NAME, self.status);
        }
        Ok(())
    }

    fn update(&mut self, dt: f32, frame: &mut FrameData) -> Result<(), DemoError> {
        let start = Instant::now();
        if !self.paused {
            self.since_wave += dt;
            let every = if std::mem::take(&mut self.fade_all) {
                Some(1)
            } else if self.since_wave >= self.wave_seconds {
                self.since_wave = 0.0;
                Some(16)
            } else {
                None
            };
            if let Some(every) = every {
                for crowd in std::iter::once(&mut self.crowd).chain(self.others.iter_mut().map(|g| &mut g.crowd)) {
                    for i in (self.rng.below(every)..crowd.len()).step_by(every) {
                        let clip = self.rng.below(self.clip_count as usize) as u32;
                        crowd.set_clip(i, clip, 0.4)?;
                    }
                }
            }
            self.crowd.update_parallel(dt, self.threads);
            for g in &mut self.others {
                g.crowd.update_parallel(dt, self.threads);
            }
        }
        self.cpu_ms = start.elapsed().as_secs_f32() * 1e3;
        frame.add_crowd(CrowdDraw {
            crowd: self.id,
            path: self.path,
            method: self.method,
            cull: self.cull,
            lod_distance: self.lod_distance,
            tint: [1.0; 3],
            lod_pixels: self.lod_pixels,
        });
        for g in &self.others {
            frame.add_crowd(CrowdDraw {
                crowd: g.id,
                path: self.path,
                method: self.method,
                cull: self.cull,
                lod_distance: self.lod_distance,
                tint: [1.0; 3],
                lod_pixels: self.lod_pixels,
            });
        }
        ground(frame, self.radius, self.floor);
        Ok(())
    }

    fn key(&mut self, key: Key) {
        match key {
            Key::Char('p') => {
                let all = CrowdPath::ALL;
                let i = all.iter().position(|p| *p == self.path).unwrap_or(0);
                self.path = all[(i + 1) % all.len()];
            }
            Key::Char('m') if self.rigid => self.method = self.method.next(),
            Key::Char('u') => self.cull = !self.cull,
            Key::Char('c') => self.fade_all = true,
            Key::Space => self.paused = !self.paused,
            _ => {}
        }
    }

    fn status(&self) -> String {
        self.status.clone()
    }
}
