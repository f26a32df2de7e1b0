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
//!
//! The panel changes everything while it runs: the count (the field is repopulated from
//! the seed), the path, the atlas layout and texel format (rebaked; each configuration is
//! registered with the renderer once and reused), skinning, culling and the levels of
//! detail; it plots the GPU time of each pass.

use crate::DemoError;
use crate::app::{CommonArgs, Key, Scene};
use crate::crowd::{CrowdCharacter, Rng, grid_half_extent, populate};
use crate::mixed_crowd::{mixed_types, populate_mixed};
use crate::stage::ground;
use anim_core::skin::SkinMethod;
use anim_crowd::atlas::{AnimAtlas, BakeSettings, TexelFormat, TextureLayout};
use anim_crowd::crowd::Crowd;
use anim_crowd::lod::MeshLods;
use anim_math::Vec3;
use anim_render_vk::{CrowdDraw, CrowdId, CrowdPath, FrameData, MeshId, Renderer};
use std::time::Instant;

/// Skin colour of the crowd (each character's tint varies a little around it).
pub const CROWD_COLOR: [f32; 3] = [0.80, 0.72, 0.62];

/// Most characters the panel's count goes to.
pub const MAX_COUNT: usize = 16384;

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

/// One character type: its drawn part, its scale, its mesh on the GPU, its mesh levels of
/// detail (made when first asked for) and the atlas loaded from `--anim-texture`.
#[derive(Debug)]
struct CrowdType {
    character: CrowdCharacter,
    scale: f32,
    mesh: MeshId,
    lods: Option<MeshLods>,
    file_atlas: Option<AnimAtlas>,
}

/// The GPU crowds of every type for one atlas layout and texel format, with room for
/// `capacity` characters each. The renderer cannot drop a crowd, so each configuration is
/// registered once and reused (a larger count registers a larger one, by powers of two).
#[derive(Debug)]
struct Registered {
    layout: TextureLayout,
    format: TexelFormat,
    capacity: usize,
    atlases: Vec<AnimAtlas>,
    ids: Vec<CrowdId>,
    lods_set: bool,
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
    /// Characters wanted: a change repopulates the field in [`Scene::prepare`] (new
    /// clips, phases, speeds from the seed).
    pub count: usize,
    /// Atlas layout wanted: a change rebakes the atlases in [`Scene::prepare`].
    pub layout: TextureLayout,
    /// Texel format wanted: as [`CrowdScene::layout`].
    pub format: TexelFormat,
    /// Why the last change of count, layout or format was refused (they went back).
    pub error: Option<String>,
    types: Vec<CrowdType>,
    registered: Vec<Registered>,
    active: usize,
    rate: f32,
    seed: u64,
    spacing: f32,
    size: f32,
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
    /// The visible count of the last frame, for the panel.
    visible: String,
}

impl CrowdScene {
    /// The last stats line (character count, visible count, GPU pass times, CPU time).
    pub fn stats_line(&self) -> &str {
        &self.status
    }

    /// Whether every atlas is rigid (DQ skinning possible).
    pub fn rigid(&self) -> bool {
        self.rigid
    }

    /// Characters in the crowd (every type).
    pub fn len(&self) -> usize {
        self.crowd.len() + self.others.iter().map(|g| g.crowd.len()).sum::<usize>()
    }

    /// Whether the crowd has no character.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The layout and format of the atlases drawn now.
    pub fn atlas_config(&self) -> (TextureLayout, TexelFormat) {
        let r = &self.registered[self.active];
        (r.layout, r.format)
    }

    /// Bakes every type's atlas for `layout` / `format` (a type loaded from a file keeps
    /// its atlas).
    fn bake(&self, layout: TextureLayout, format: TexelFormat) -> Result<Vec<AnimAtlas>, DemoError> {
        let settings = BakeSettings { rate: self.rate, layout, format };
        self.types
            .iter()
            .map(|t| match &t.file_atlas {
                Some(a) => Ok(a.clone()),
                None => t.character.bake(&settings),
            })
            .collect()
    }

    /// Makes the field match [`CrowdScene::count`], [`CrowdScene::layout`] and
    /// [`CrowdScene::format`]: finds (or bakes and registers) the GPU crowds of that
    /// configuration with room for the count, and repopulates.
    fn rebuild(&mut self, renderer: &mut Renderer) -> Result<(), DemoError> {
        let (layout, format, count) = (self.layout, self.format, self.count);
        let found = self.registered.iter().position(|r| r.layout == layout && r.format == format);
        let active = match found {
            Some(i) if self.registered[i].capacity >= count => i,
            _ => {
                let atlases = match found {
                    Some(i) => std::mem::take(&mut self.registered[i].atlases),
                    None => self.bake(layout, format)?,
                };
                let capacity = count.next_power_of_two().clamp(64, MAX_COUNT.max(count));
                let reg = register(renderer, &self.types, atlases, layout, format, capacity)?;
                match found {
                    Some(i) => {
                        self.registered[i] = reg;
                        i
                    }
                    None => {
                        self.registered.push(reg);
                        self.registered.len() - 1
                    }
                }
            }
        };
        let reg = &self.registered[active];
        let mut crowds = populate_all(reg, &self.types, count, self.spacing, self.seed)?;
        let mut ids = reg.ids.clone();
        self.rigid = reg.atlases.iter().all(AnimAtlas::is_rigid);
        self.clip_count = reg.atlases[0].clips().len() as u32;
        self.others = crowds
            .drain(1..)
            .zip(ids.drain(1..))
            .zip(&self.types[1..])
            .map(|((crowd, id), t)| CrowdGroup { name: t.character.character.name.clone(), crowd, id })
            .collect();
        (self.crowd, self.id) = (crowds.remove(0), ids[0]);
        self.active = active;
        if !self.rigid {
            self.method = SkinMethod::Lbs;
        }
        self.radius = (grid_half_extent(count, self.spacing) + self.size).max(self.size);
        Ok(())
    }

    /// Gives the drawn crowds their mesh levels of detail when a draw asks for them.
    fn ensure_lods(&mut self, renderer: &mut Renderer) -> Result<(), DemoError> {
        let reg = &mut self.registered[self.active];
        if self.lod_pixels.is_none() || reg.lods_set {
            return Ok(());
        }
        for (t, id) in self.types.iter_mut().zip(&reg.ids) {
            if t.lods.is_none() {
                t.lods = Some(
                    MeshLods::from_mesh(t.character.mesh(), &[0.5, 0.25, 0.1])
                        .map_err(|e| DemoError::Args(format!("mesh levels of detail: {e}")))?,
                );
            }
            if let Some(lods) = &t.lods {
                renderer.set_crowd_lods(*id, lods)?;
            }
        }
        reg.lods_set = true;
        Ok(())
    }
}

/// Registers one GPU crowd per type for `atlases` (one a type) with room for `capacity`.
fn register(
    renderer: &mut Renderer,
    types: &[CrowdType],
    atlases: Vec<AnimAtlas>,
    layout: TextureLayout,
    format: TexelFormat,
    capacity: usize,
) -> Result<Registered, DemoError> {
    let ids = types
        .iter()
        .zip(&atlases)
        .map(|(t, atlas)| renderer.add_crowd(t.mesh, atlas, capacity.max(1) as u32))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Registered { layout, format, capacity, atlases, ids, lods_set: false })
}

/// The field of `count` characters over the registered crowds' atlases.
fn populate_all(
    reg: &Registered,
    types: &[CrowdType],
    count: usize,
    spacing: f32,
    seed: u64,
) -> Result<Vec<Crowd>, DemoError> {
    if types.len() == 1 {
        Ok(vec![populate(&reg.atlases[0], count, spacing, seed)?])
    } else {
        let atlases: Vec<&AnimAtlas> = reg.atlases.iter().collect();
        let scales: Vec<f32> = types.iter().map(|t| t.scale).collect();
        populate_mixed(&atlases, &scales, count, spacing, seed)
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
        let (layout, format) = (c.layout()?, c.texel_format()?);
        // Each character type with its scale (and its atlas when loaded from a file): one
        // type, or one per `--models`.
        let parts: Vec<(CrowdCharacter, f32, Option<AnimAtlas>)> = match &c.models {
            Some(models) => {
                if c.anim_texture.is_some() {
                    return Err(DemoError::Args("--anim-texture plays one character; not with --models".into()));
                }
                mixed_types(args.model.as_deref(), models, 60.0)?
                    .into_iter()
                    .map(|t| (t.character, t.scale, None))
                    .collect()
            }
            None => {
                let (cc, skipped) = CrowdCharacter::new(crate::Character::load(args.model.as_deref())?)?;
                if skipped > 0 {
                    log::warn!("{}: drawing one skinned part; {skipped} other part(s) left out", cc.character.name);
                }
                let atlas = c.anim_texture.as_ref().map(|path| cc.load_atlas(path)).transpose()?;
                vec![(cc, 1.0, atlas)]
            }
        };
        let mut types = Vec::with_capacity(parts.len());
        for (character, scale, file_atlas) in parts {
            let mesh = character.upload(renderer, CROWD_COLOR)?;
            types.push(CrowdType { character, scale, mesh, lods: None, file_atlas });
        }
        let (layout, format) = match &types[0].file_atlas {
            Some(a) => (a.layout(), a.format()),
            None => (layout, format),
        };
        let (cc, scale) = (&types[0].character, types[0].scale);
        let (lo, hi) = cc.mesh().bounds().unwrap_or((Vec3::zeros(), Vec3::new(1.0, 1.0, 1.0)));
        let (lo, hi) = (lo * scale, hi * scale);
        let size = (hi - lo).x.max((hi - lo).z).max((hi - lo).y * 0.5);
        let spacing = size * 1.6;
        let count = c.count as usize;
        let settings = BakeSettings { rate: c.rate, layout, format };
        let atlases = types
            .iter()
            .map(|t| match &t.file_atlas {
                Some(a) => Ok(a.clone()),
                None => t.character.bake(&settings),
            })
            .collect::<Result<Vec<_>, DemoError>>()?;
        if args.method == SkinMethod::Dq && atlases.iter().any(|a| !a.is_rigid()) {
            return Err(DemoError::Args("--method dq needs a rigid skin; this atlas is not rigid".into()));
        }
        let reg = register(renderer, &types, atlases, layout, format, count)?;
        let mut crowds = populate_all(&reg, &types, count, spacing, c.seed)?;
        let mut ids = reg.ids.clone();
        let others: Vec<CrowdGroup> = crowds
            .drain(1..)
            .zip(ids.drain(1..))
            .zip(&types[1..])
            .map(|((crowd, id), t)| CrowdGroup { name: t.character.character.name.clone(), crowd, id })
            .collect();
        let (crowd, id) = (crowds.remove(0), ids[0]);
        let half = grid_half_extent(count, spacing) + size;
        let threads = c.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        let mut scene = Self {
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
            count,
            layout,
            format,
            error: None,
            rigid: reg.atlases.iter().all(AnimAtlas::is_rigid),
            clip_count: reg.atlases[0].clips().len() as u32,
            types,
            registered: vec![reg],
            active: 0,
            rate: c.rate,
            seed: c.seed,
            spacing,
            size,
            rng: Rng::new(c.seed ^ 0x5eed),
            since_wave: 0.0,
            fade_all: false,
            centre: Vec3::new(0.0, lo.y + (hi.y - lo.y) * 0.5, 0.0),
            radius: half.max(size),
            floor: lo.y,
            cpu_ms: 0.0,
            frames: 0,
            status: String::new(),
            visible: "all".to_owned(),
        };
        scene.ensure_lods(renderer)?;
        Ok(scene)
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
        let (layout, format) = self.atlas_config();
        if self.count != self.len() || self.layout != layout || self.format != format {
            if let Err(e) = self.rebuild(renderer) {
                // Refused (a DQ layout of a skin that is not rigid, an atlas beyond the
                // device): back to what is drawn.
                self.error = Some(e.to_string());
                (self.count, self.layout, self.format) = (self.len(), layout, format);
            } else {
                self.error = None;
            }
        }
        self.ensure_lods(renderer)?;
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
            self.visible.clone_from(&visible);
            self.status = format!(
                "{} characters{types}, {visible} visible{levels}{tris}, {} {} · GPU {stats} · CPU {:.3} ms",
                self.len(),
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

    #[cfg(feature = "ui")]
    fn panel(&mut self, ui: &mut anim_render_vk::ui::egui::Ui, view: &crate::ui::UiView<'_>) {
        use crate::ui::tag;
        use crate::widgets::{grid, section, slider, value};
        use anim_render_vk::ui::egui;
        let from_file = self.types[0].file_atlas.is_some();
        let visible = &self.visible;
        grid(ui, "crowd-grid", |ui| {
            slider(
                ui,
                "characters",
                "count",
                &mut self.count,
                1..=MAX_COUNT,
                |s| s.logarithmic(true),
                |n| format!("{n} ({visible} visible)"),
            );
            ui.label("path");
            ui.horizontal(|ui| {
                for p in CrowdPath::ALL {
                    tag(ui.selectable_value(&mut self.path, p, p.name()), &format!("path:{}", p.name()));
                }
            });
            ui.end_row();
            if from_file {
                value(ui, "atlas", format!("{}, {} (the file's)", self.layout, self.format));
            } else {
                ui.label("atlas");
                ui.horizontal(|ui| {
                    for l in TextureLayout::ALL {
                        tag(ui.selectable_value(&mut self.layout, l, l.name()), &format!("layout:{}", l.name()));
                    }
                    ui.separator();
                    for f in TexelFormat::ALL {
                        tag(ui.selectable_value(&mut self.format, f, f.name()), &format!("format:{}", f.name()));
                    }
                });
                ui.end_row();
            }
            ui.label("skinning");
            ui.horizontal(|ui| {
                tag(ui.selectable_value(&mut self.method, SkinMethod::Lbs, "LBS"), "method:lbs");
                if self.rigid {
                    tag(ui.selectable_value(&mut self.method, SkinMethod::Dq, "DQ"), "method:dq");
                } else {
                    ui.weak("DQ needs a rigid atlas");
                }
            });
            ui.end_row();
            ui.label("culling");
            ui.horizontal(|ui| {
                tag(ui.checkbox(&mut self.cull, "on the GPU (u)"), "cull");
                tag(ui.checkbox(&mut self.paused, "pause"), "pause");
            });
            ui.end_row();
            let (mut far, mut levels) = (self.lod_distance.is_some(), self.lod_pixels.is_some());
            ui.label("detail");
            ui.horizontal(|ui| {
                if tag(ui.checkbox(&mut far, "one influence far"), "lod_distance:on").changed() {
                    self.lod_distance = far.then_some(self.radius * 0.5);
                }
                if tag(ui.checkbox(&mut levels, "mesh levels"), "lod_pixels:on").changed() {
                    self.lod_pixels = levels.then_some(1.0);
                }
            });
            ui.end_row();
            if let Some(d) = &mut self.lod_distance {
                let max = (self.radius * 4.0).max(1.0);
                slider(ui, "distance", "lod_distance", d, 0.01..=max, |s| s.logarithmic(true), |d| format!("{d:.2} m"));
            }
            if let Some(px) = &mut self.lod_pixels {
                slider(ui, "error", "lod_pixels", px, 0.1..=16.0, |s| s.logarithmic(true), |p| format!("{p:.2} px"));
            }
            ui.label("crossfades");
            ui.horizontal(|ui| {
                let waves = egui::Slider::new(&mut self.wave_seconds, 0.1..=10.0).logarithmic(true).show_value(false);
                tag(ui.add(waves), "waves").on_hover_text("seconds between waves of crossfades (one in 16)");
                ui.monospace(format!("{:.1} s", self.wave_seconds));
                if tag(ui.button("all now (c)"), "fade_all").clicked() {
                    self.fade_all = true;
                }
            });
            ui.end_row();
        });
        if let Some(e) = &self.error {
            ui.colored_label(egui::Color32::from_rgb(255, 120, 90), e);
        }
        section(ui, "GPU time per pass", "crowd-gpu", true, |ui| {
            let r = ui.scope(|ui| crate::ui::timings_plot(ui, "gpu", &view.timings.gpu));
            tag(r.response, "gpu");
        });
    }

    fn status(&self) -> String {
        self.status.clone()
    }
}
