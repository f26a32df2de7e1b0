//! Retargeting for `animtool retarget`, the `retarget` demo and the mixed crowd: humanoids
//! loaded with their rigs (automatic map or a map file, bind-pose reference), clips carried
//! from one to another at a rate, and the result written as glTF.

use crate::character::Character;
use crate::error::DemoError;
use anim_core::clip::Clip;
use anim_gltf::ExportMesh;
use anim_gltf::Model;
use anim_retarget::{
    AutoMap, HumanoidRig, OfflineSettings, Reference, RetargetSettings, RetargetedClip, Retargeter, Role, Side,
    auto_map, parse_map_file,
};
use std::path::Path;
use std::sync::Arc;

/// A character rigged as a humanoid.
#[derive(Clone, Debug)]
pub struct Humanoid {
    /// Display name (`mannequin` for the default character, else the file stem).
    pub name: String,
    /// The model as loaded.
    pub model: Model,
    /// Its rig.
    pub rig: HumanoidRig,
    /// What automatic mapping found, when the map is automatic.
    pub auto: Option<AutoMap>,
}

impl Humanoid {
    /// Loads `spec` (`default` for the mannequin, else a glTF file) and rigs it: the map
    /// from `map_file` when given, else automatic; the reference is the first skin's bind
    /// pose (the rest pose without a skin).
    ///
    /// # Errors
    /// The loader's errors, a refused map file, or a map that does not rig the skeleton
    /// (automatic mapping's unmapped roles are in the message).
    pub fn load(spec: &str, map_file: Option<&Path>) -> Result<Self, DemoError> {
        let (name, model) = if spec == "default" {
            ("mannequin".to_owned(), anim_gltf::mannequin_model())
        } else {
            let path = Path::new(spec);
            let name = path.file_stem().map_or_else(|| "model".into(), |s| s.to_string_lossy().into_owned());
            (name, anim_gltf::load(path)?)
        };
        Self::from_model(name, model, map_file)
    }

    /// Rigs a loaded model (see [`Humanoid::load`]).
    ///
    /// # Errors
    /// As [`Humanoid::load`].
    pub fn from_model(name: String, model: Model, map_file: Option<&Path>) -> Result<Self, DemoError> {
        let (map, auto) = match map_file {
            Some(file) => {
                let text =
                    std::fs::read_to_string(file).map_err(|e| DemoError::Args(format!("{}: {e}", file.display())))?;
                (parse_map_file(&text, &model.skeleton)?, None)
            }
            None => {
                let auto = auto_map(&model.skeleton);
                if !auto.is_complete() {
                    let missing: Vec<&str> =
                        auto.unmapped.iter().filter(|r| r.is_required()).map(|r| r.name()).collect();
                    return Err(DemoError::Args(format!(
                        "{name}: automatic mapping found no joint for {} (give a map file)",
                        missing.join(", ")
                    )));
                }
                (auto.map.clone(), Some(auto))
            }
        };
        let reference = model.skins.first().map_or(Reference::Rest, |s| Reference::Bind(&s.skin));
        let rig = HumanoidRig::new(&model.skeleton, map, reference)?;
        Ok(Self { name, model, rig, auto })
    }

    /// The feet and toes joints (what the clip reports watch above the floor).
    pub fn feet_and_toes(&self) -> Vec<usize> {
        Side::BOTH
            .into_iter()
            .flat_map(|s| [self.rig.joint(Role::Foot(s)), self.rig.joint(Role::Toes(s))])
            .flatten()
            .collect()
    }

    /// The mapping as lines `role: joint`, unmapped roles last.
    pub fn mapping_lines(&self) -> Vec<String> {
        let s = &self.model.skeleton;
        let name = |j: usize| s.name(j).unwrap_or("").to_owned();
        let mut out: Vec<String> = Role::ALL
            .into_iter()
            .filter_map(|r| self.rig.joint(r).map(|j| format!("{}: {}", r.name(), name(j))))
            .collect();
        let spine: Vec<String> = self.rig.map().spine().iter().map(|&j| name(j)).collect();
        out.push(format!("spine: [{}]", spine.join(", ")));
        let unmapped: Vec<&str> =
            Role::ALL.into_iter().filter(|r| self.rig.joint(*r).is_none()).map(|r| r.name()).collect();
        if !unmapped.is_empty() {
            out.push(format!("not mapped: {}", unmapped.join(", ")));
        }
        out
    }

    /// The character for drawing, playing `clips`.
    ///
    /// # Errors
    /// A model without meshes.
    pub fn character(&self, clips: Vec<Arc<Clip>>) -> Result<Character, DemoError> {
        let mut c = Character::from_model(self.name.clone(), self.model.clone())?;
        if self.name == "mannequin" && self.model.materials.is_empty() {
            // The default character has no glTF material: draw it in the demos' colour, as
            // every other demo does, not in glTF's white default material.
            c.looks = None;
        }
        c.clips = clips;
        Ok(c)
    }
}

/// Retargets clips `clips` (indices) of `source` onto `target` at `rate` Hz.
///
/// # Errors
/// A clip index out of range, or the retargeter's errors.
pub fn retarget_clips(
    source: &Humanoid,
    target: &Humanoid,
    clips: &[usize],
    rate: f32,
) -> Result<(Retargeter, Vec<RetargetedClip>), DemoError> {
    retarget_clips_with_progress(source, target, clips, rate, &mut |_| {})
}

/// [`retarget_clips`], calling `on_clip(k)` before `clips[k]` is retargeted, for a
/// progress report.
///
/// # Errors
/// As [`retarget_clips`].
pub fn retarget_clips_with_progress(
    source: &Humanoid,
    target: &Humanoid,
    clips: &[usize],
    rate: f32,
    on_clip: &mut dyn FnMut(usize),
) -> Result<(Retargeter, Vec<RetargetedClip>), DemoError> {
    let rt = Retargeter::new(&source.rig, &target.rig, RetargetSettings::default())?;
    let settings = OfflineSettings { rate, ..OfflineSettings::default() };
    let feet = target.feet_and_toes();
    let out = clips
        .iter()
        .enumerate()
        .map(|(k, &i)| {
            on_clip(k);
            let clip =
                source.model.clips.get(i).ok_or_else(|| DemoError::Args(format!("{} has no clip {i}", source.name)))?;
            Ok(anim_retarget::retarget_clip(&rt, clip, &settings, &feet)?)
        })
        .collect::<Result<Vec<_>, DemoError>>()?;
    Ok((rt, out))
}

/// The target model written as binary glTF (its skeleton, meshes, skins and morph targets
/// as imported) with `clips` as its animations.
///
/// # Errors
/// The exporter's errors.
pub fn export(model: &Model, clips: &[Clip]) -> Result<Vec<u8>, DemoError> {
    let names: Vec<String> =
        model.meshes.iter().map(|m| model.nodes.get(m.node).map_or_else(String::new, |n| n.name.clone())).collect();
    let meshes: Vec<ExportMesh> = model
        .meshes
        .iter()
        .zip(&names)
        .map(|(m, name)| ExportMesh { name, mesh: &m.data, skin: m.skin.map(|s| &model.skins[s].skin) })
        .collect();
    let morphs: Vec<_> = model.meshes.iter().map(|m| m.morph.as_ref()).collect();
    Ok(anim_gltf::export_glb_with_morphs(&model.skeleton, &meshes, &morphs, clips)?)
}
