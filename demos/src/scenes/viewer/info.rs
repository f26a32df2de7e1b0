//! What the viewer's "Model" window lists about the character shown: skins, joints,
//! meshes and their vertex counts, morph targets, materials and clips with their
//! durations; and the joint hierarchy the joint tree walks. Built once per model.

use crate::Character;

/// One drawable part of the model.
#[derive(Clone, Debug, PartialEq)]
pub struct MeshFacts {
    /// Vertices.
    pub vertices: usize,
    /// Triangles.
    pub triangles: usize,
    /// Skin index (`None`: a rigid part placed by its joint).
    pub skin: Option<usize>,
    /// Names of its morph targets (`target k` where the file names none).
    pub morph_targets: Vec<String>,
}

/// One clip of the model.
#[derive(Clone, Debug, PartialEq)]
pub struct ClipFacts {
    /// Name (`clip k` where the file names none).
    pub name: String,
    /// Duration, seconds.
    pub duration: f32,
    /// Events it carries.
    pub events: usize,
    /// Named scalar curves it carries (foot contacts, …).
    pub curves: usize,
}

/// Facts about a character, for the viewer's windows.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelInfo {
    /// Display name.
    pub name: String,
    /// Skeleton joints (for glTF: one per node).
    pub joints: usize,
    /// Joints some skin deforms with (those the skeleton overlay draws).
    pub skin_joints: usize,
    /// Joints of each skin.
    pub skins: Vec<usize>,
    /// The drawable parts.
    pub meshes: Vec<MeshFacts>,
    /// Materials of the file (0 for the mannequin, which has its body colour).
    pub materials: Vec<String>,
    /// The clips.
    pub clips: Vec<ClipFacts>,
    /// Children of each joint, in skeleton order.
    pub children: Vec<Vec<usize>>,
    /// Joints without a parent.
    pub roots: Vec<usize>,
}

impl ModelInfo {
    /// The facts of `ch`.
    pub fn of(ch: &Character) -> Self {
        let parents = ch.skeleton.parents();
        let mut children = vec![Vec::new(); parents.len()];
        let mut roots = Vec::new();
        for (j, p) in parents.iter().enumerate() {
            match p {
                Some(p) => children[*p].push(j),
                None => roots.push(j),
            }
        }
        let materials = ch.looks.as_ref().map_or_else(Vec::new, |l| {
            l.materials
                .iter()
                .enumerate()
                .map(|(i, m)| if m.name.is_empty() { format!("material {i}") } else { m.name.clone() })
                .collect()
        });
        Self {
            name: ch.name.clone(),
            joints: ch.skeleton.len(),
            skin_joints: ch.bone_mask.iter().filter(|b| **b).count(),
            skins: ch.skins.iter().map(|s| s.len()).collect(),
            meshes: ch
                .parts
                .iter()
                .map(|p| MeshFacts {
                    vertices: p.mesh.vertex_count(),
                    triangles: p.mesh.indices.len() / 3,
                    skin: p.skin.filter(|_| p.mesh.influences.is_some()),
                    morph_targets: p.morph.as_ref().map_or_else(Vec::new, |m| {
                        (0..m.target_count())
                            .map(|k| m.names().get(k).cloned().unwrap_or_else(|| format!("target {k}")))
                            .collect()
                    }),
                })
                .collect(),
            materials,
            clips: ch
                .clips
                .iter()
                .enumerate()
                .map(|(i, c)| ClipFacts {
                    name: if c.name().is_empty() { format!("clip {i}") } else { c.name().to_owned() },
                    duration: c.duration(),
                    events: c.events().len(),
                    curves: c.curves().len(),
                })
                .collect(),
            children,
            roots,
        }
    }

    /// Vertices of every part.
    pub fn vertices(&self) -> usize {
        self.meshes.iter().map(|m| m.vertices).sum()
    }

    /// Morph targets of every part.
    pub fn morph_targets(&self) -> usize {
        self.meshes.iter().map(|m| m.morph_targets.len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::ModelInfo;
    use crate::Character;
    use std::path::Path;

    #[test]
    fn unnamed_clips_are_listed_by_number() {
        // CesiumMan's one animation has no name.
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/assets/CesiumMan/CesiumMan.glb");
        let ch = Character::from_gltf(&path).unwrap();
        assert_eq!(ch.clips[0].name(), "", "the file names its animation after all");
        let info = ModelInfo::of(&ch);
        assert_eq!(info.clips.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["clip 0"]);
        assert!((info.clips[0].duration - ch.clips[0].duration()).abs() < 1e-6);
        // Named clips keep their names.
        let m = ModelInfo::of(&Character::mannequin());
        assert!(m.clips.iter().any(|c| c.name == "walk"), "{:?}", m.clips);
    }
}
