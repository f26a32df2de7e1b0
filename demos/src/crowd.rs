//! What the crowd demo, `animtool bake` and the crowd report share: one skinned part of a
//! character with its skeleton and skin, baked into an animation atlas (or an atlas loaded
//! from a file and checked against the character), and a field of characters placed on a
//! grid with random clips, phases and speeds.

use crate::{Character, DemoError};
use anim_core::skin::{Mesh, Skin};
use anim_crowd::atlas::{AnimAtlas, AtlasSource, BakeSettings};
use anim_crowd::crowd::{CharacterDesc, Crowd};
use anim_math::{Quat, Vec3};
use anim_render_vk::{Coloring, MeshId, Renderer};
use std::path::Path;

/// The part of a character a crowd draws: one skinned mesh and its skin.
#[derive(Clone, Debug)]
pub struct CrowdCharacter {
    /// The character (skeleton, skins, clips).
    pub character: Character,
    /// Index of the part drawn (the first skinned part).
    pub part: usize,
    /// Index of that part's skin.
    pub skin: usize,
    /// Names of the skin's joints, in skin order (what an atlas file is checked against).
    pub joint_names: Vec<String>,
}

impl CrowdCharacter {
    /// The first skinned part of `character`. Other parts are left out (a crowd draws one
    /// mesh); the returned count says how many.
    ///
    /// # Errors
    /// The character has no skinned part or no clip.
    pub fn new(character: Character) -> Result<(Self, usize), DemoError> {
        let (part, skin) = character
            .parts
            .iter()
            .enumerate()
            .find_map(|(i, p)| p.skin.filter(|_| p.mesh.influences.is_some()).map(|s| (i, s)))
            .ok_or_else(|| DemoError::Args(format!("{}: no skinned mesh to draw in a crowd", character.name)))?;
        if character.clips.is_empty() {
            return Err(DemoError::Args(format!("{}: no clip to play", character.name)));
        }
        let names = character.skeleton.names();
        let joint_names = character.skins[skin].joints().iter().map(|&j| names[j].clone()).collect();
        let skipped = character.parts.len() - 1;
        Ok((Self { character, part, skin, joint_names }, skipped))
    }

    /// The drawn mesh.
    pub fn mesh(&self) -> &Mesh {
        &self.character.parts[self.part].mesh
    }

    /// Uploads the drawn mesh: with the character's materials and textures when it came
    /// from a glTF file (one material set per character type), else in `color`.
    ///
    /// # Errors
    /// Upload failure.
    pub fn upload(&self, renderer: &mut Renderer, color: [f32; 3]) -> Result<MeshId, DemoError> {
        let part = &self.character.parts[self.part];
        match (&self.character.looks, &part.surface) {
            (Some(looks), Some(surface)) => {
                let materials = looks.upload(renderer)?;
                Ok(renderer.add_surface_mesh(&part.mesh, &surface.surface(&materials))?)
            }
            _ => Ok(renderer.add_mesh(&part.mesh, &Coloring::Uniform(color))?),
        }
    }

    /// The drawn mesh's skin.
    pub fn skin(&self) -> &Skin {
        &self.character.skins[self.skin]
    }

    /// Bakes every clip (looping) into one atlas.
    ///
    /// # Errors
    /// The atlas's errors (bad rate, an atlas wider than 16384 frames, DQ layout on a
    /// non-rigid skin, …).
    pub fn bake(&self, settings: &BakeSettings) -> Result<AnimAtlas, DemoError> {
        self.bake_clips(settings, true)
    }

    /// Bakes every clip into one atlas, looping or clamping at the ends.
    ///
    /// # Errors
    /// As [`CrowdCharacter::bake`].
    pub fn bake_clips(&self, settings: &BakeSettings, looping: bool) -> Result<AnimAtlas, DemoError> {
        let sources: Vec<AtlasSource<'_>> =
            self.character.clips.iter().map(|clip| AtlasSource { clip, looping }).collect();
        Ok(AnimAtlas::bake(&self.character.skeleton, self.skin(), &[self.mesh()], &sources, settings)?)
    }

    /// Loads an atlas file written by `animtool bake` and checks that it was baked for this
    /// character's skin.
    ///
    /// # Errors
    /// Unreadable or malformed file, or an atlas of another skin.
    pub fn load_atlas(&self, path: &Path) -> Result<AnimAtlas, DemoError> {
        let atlas = AnimAtlas::load(path)?;
        atlas.check_joints(&self.joint_names)?;
        Ok(atlas)
    }
}

/// A small deterministic random generator (SplitMix64), so crowds and screenshots are the
/// same on every run.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A float in `[0, 1)`.
    pub fn unit(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }

    /// A float in `[lo, hi)`.
    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.unit()
    }

    /// An index below `n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// Where a field of `count` characters stands: a square grid of `spacing` centred on the
/// origin, rows filled first. Returns the positions' half extent in x and z.
pub fn grid_positions(count: usize, spacing: f32) -> impl Iterator<Item = Vec3> {
    let side = (count as f64).sqrt().ceil().max(1.0) as usize;
    let half = (side as f32 - 1.0) * spacing * 0.5;
    (0..count).map(move |i| Vec3::new((i % side) as f32 * spacing - half, 0.0, (i / side) as f32 * spacing - half))
}

/// Half the side of the square [`grid_positions`] fills.
pub fn grid_half_extent(count: usize, spacing: f32) -> f32 {
    let side = (count as f64).sqrt().ceil().max(1.0) as f32;
    (side - 1.0) * spacing * 0.5
}

/// A crowd of `count` characters on a grid of `spacing`, each with a random clip of the
/// atlas, phase, speed (0.8–1.2) and heading, drawn from `seed`.
///
/// # Errors
/// An atlas without clips, or the crowd's errors.
pub fn populate(atlas: &AnimAtlas, count: usize, spacing: f32, seed: u64) -> Result<Crowd, DemoError> {
    let clips = atlas.clips();
    if clips.is_empty() && count > 0 {
        return Err(DemoError::Args("the atlas has no clip to play".into()));
    }
    let mut crowd = Crowd::with_capacity(clips, count);
    let mut rng = Rng::new(seed);
    for position in grid_positions(count, spacing) {
        let clip = rng.below(clips.len());
        let duration = clips[clip].duration;
        let jitter = Vec3::new(rng.range(-0.2, 0.2), 0.0, rng.range(-0.2, 0.2)) * spacing;
        crowd.add(CharacterDesc {
            position: position + jitter,
            rotation: Quat::from_axis_angle(&Vec3::y_axis(), rng.range(0.0, std::f32::consts::TAU)),
            scale: 1.0,
            clip: clip as u32,
            time: rng.range(0.0, duration.max(0.0)),
            speed: rng.range(0.8, 1.2),
        })?;
    }
    crowd.update(0.0);
    Ok(crowd)
}
