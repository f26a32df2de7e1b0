//! A crowd of different characters sharing one clip set (`ch15_crowd --models A,B,C`):
//! the clips of one character (`--model`, the mannequin by default) retargeted onto each
//! character type ([`crate::retarget`]), each type baked into its own atlas and drawn as
//! its own instanced crowd (one draw per type), spread over one field at one size.

use crate::DemoError;
use crate::crowd::{CrowdCharacter, Rng, grid_positions};
use crate::retarget::{Humanoid, retarget_clips};
use anim_crowd::atlas::AnimAtlas;
use anim_crowd::crowd::{CharacterDesc, Crowd};
use anim_math::{Quat, Vec3};
use std::path::Path;
use std::sync::Arc;

/// One character type of a mixed crowd, before baking.
#[derive(Clone, Debug)]
pub struct MixedType {
    /// The drawn part, with the retargeted clips (the source's own clips for the source).
    pub character: CrowdCharacter,
    /// Scale that brings it to the source's size (the inverse of its leg ratio).
    pub scale: f32,
}

/// The types of a mixed crowd: each of `models` (`default` for the mannequin, else glTF
/// files) playing `source`'s clips (the mannequin's without a source) retargeted at `rate`
/// Hz; a model that is the source plays its own clips.
///
/// # Errors
/// A model that does not load or rig as a humanoid, or the retargeter's errors.
pub fn mixed_types(source: Option<&Path>, models: &[String], rate: f32) -> Result<Vec<MixedType>, DemoError> {
    let source_spec = source.map_or_else(|| "default".to_owned(), |p| p.to_string_lossy().into_owned());
    let source = Humanoid::load(&source_spec, None)?;
    let all: Vec<usize> = (0..source.model.clips.len()).collect();
    models
        .iter()
        .map(|spec| {
            let (character, scale) = if *spec == source_spec {
                (source.character(source.model.clips.clone())?, 1.0)
            } else {
                let target = Humanoid::load(spec, None).map_err(|e| DemoError::Args(format!("{spec}: {e}")))?;
                let (rt, clips) = retarget_clips(&source, &target, &all, rate)?;
                let clips = clips.into_iter().map(|c| Arc::new(c.clip)).collect();
                (target.character(clips)?, 1.0 / rt.leg_ratio())
            };
            let (character, _) = CrowdCharacter::new(character)?;
            Ok(MixedType { character, scale })
        })
        .collect()
}

/// One crowd per type over one field of `count` characters on a grid of `spacing`: the
/// grid's places go to the types in turn; each character gets a random clip (every atlas
/// has the same clips), phase, speed (0.8–1.2) and heading drawn from `seed`, and its
/// type's scale.
///
/// # Errors
/// Atlases without clips, or the crowd's errors.
pub fn populate_mixed(
    atlases: &[&AnimAtlas],
    scales: &[f32],
    count: usize,
    spacing: f32,
    seed: u64,
) -> Result<Vec<Crowd>, DemoError> {
    let types = atlases.len().max(1);
    let mut crowds: Vec<Crowd> =
        atlases.iter().map(|a| Crowd::with_capacity(a.clips(), count.div_ceil(types))).collect();
    let mut rng = Rng::new(seed);
    for (i, position) in grid_positions(count, spacing).enumerate() {
        let t = i % types;
        let clips = atlases[t].clips();
        if clips.is_empty() {
            return Err(DemoError::Args("an atlas has no clip to play".into()));
        }
        let clip = rng.below(clips.len());
        let jitter = Vec3::new(rng.range(-0.2, 0.2), 0.0, rng.range(-0.2, 0.2)) * spacing;
        crowds[t].add(CharacterDesc {
            position: position + jitter,
            rotation: Quat::from_axis_angle(&Vec3::y_axis(), rng.range(0.0, std::f32::consts::TAU)),
            scale: scales[t],
            clip: clip as u32,
            time: rng.range(0.0, clips[clip].duration.max(0.0)),
            speed: rng.range(0.8, 1.2),
        })?;
    }
    for c in &mut crowds {
        c.update(0.0);
    }
    Ok(crowds)
}
