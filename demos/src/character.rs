//! A character to draw: the default mannequin or a glTF file, posed from a clip, drawn with
//! any skinning backend (CPU, GPU vertex shader, GPU compute) and method (LBS, DQ).
//! Parts with morph targets (the mannequin's `breathe` and `brow_raise`, a glTF
//! primitive's targets) are morphed with the clip's sampled weights before skinning, on
//! every backend.

use crate::DemoError;
use crate::surfaces::{Looks, PartSurface};
use anim_core::clip::{Clip, TimePolicy};
use anim_core::pose::{Pose, Skeleton};
use anim_core::skin::SkinMethod;
use anim_core::skin::skinning;
use anim_core::skin::skinning::{NormalMode, SkinningInput, SkinningOutput};
use anim_core::skin::{Mesh, MorphTargets, Palette, Skin};
use anim_math::{Mat4, Vec3};
use anim_render_vk::{Coloring, FrameData, MeshId, Renderer, SkinPath};
use std::path::Path;
use std::sync::Arc;

/// Where skinning runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Backend {
    /// On the CPU (`anim_core::skin::skinning`); vertices uploaded every frame.
    Cpu,
    /// In the vertex shader.
    #[default]
    Vertex,
    /// In a compute pass (`gpu` is accepted too, as `animtool` calls it).
    #[value(alias = "gpu")]
    Compute,
}

impl Backend {
    /// Every backend, in the order [`Backend::next`] cycles them.
    pub const ALL: [Backend; 3] = [Self::Cpu, Self::Vertex, Self::Compute];

    /// The next backend (for a toggle key).
    pub fn next(self) -> Self {
        match self {
            Self::Cpu => Self::Vertex,
            Self::Vertex => Self::Compute,
            Self::Compute => Self::Cpu,
        }
    }

    /// Short name.
    pub fn label(self) -> &'static str {
        match self {
            Self::Cpu => "CPU",
            Self::Vertex => "GPU vertex",
            Self::Compute => "GPU compute",
        }
    }
}

/// Index of `method`'s palettes in [`Posed`].
fn method_slot(method: SkinMethod) -> usize {
    match method {
        SkinMethod::Lbs => 0,
        SkinMethod::Dq => 1,
    }
}

/// One drawable primitive of a character.
#[derive(Clone, Debug)]
pub struct Part {
    /// Bind-pose mesh (normals always present: computed when the file had none).
    pub mesh: Mesh,
    /// Skin index, `None` for a rigid part.
    pub skin: Option<usize>,
    /// Skeleton joint whose world matrix places a rigid part.
    pub joint: usize,
    /// Morph targets of the mesh (with their default weights), or `None`.
    pub morph: Option<MorphTargets>,
    /// The target of the clips' weight tracks that animate [`Part::morph`] (the glTF node's
    /// joint, or the mannequin's [`anim_mannequin::MESH_NODE`]).
    pub morph_node: usize,
    /// The glTF primitive's material and surface attributes (`None` for the mannequin).
    pub surface: Option<PartSurface>,
}

impl Part {
    /// A part without morph targets.
    pub fn new(mesh: Mesh, skin: Option<usize>, joint: usize) -> Self {
        Self { mesh, skin, joint, morph: None, morph_node: joint, surface: None }
    }
}

/// A character: skeleton, skins, parts and clips.
#[derive(Clone, Debug)]
pub struct Character {
    /// Display name.
    pub name: String,
    /// The skeleton (for glTF: one joint per node).
    pub skeleton: Skeleton,
    /// Skins.
    pub skins: Vec<Skin>,
    /// Drawable parts.
    pub parts: Vec<Part>,
    /// Clips.
    pub clips: Vec<Arc<Clip>>,
    /// Joints drawn in the skeleton overlay (skin joints).
    pub bone_mask: Vec<bool>,
    /// A glTF file's materials, textures and images (`None` for the mannequin).
    pub looks: Option<Arc<Looks>>,
}

fn with_normals(mut mesh: Mesh) -> Mesh {
    if mesh.normals.len() != mesh.positions.len() {
        mesh.normals = mesh.smooth_normals();
    }
    mesh
}

impl Character {
    /// The default character ([`anim_mannequin`]).
    pub fn mannequin() -> Self {
        let m = anim_mannequin::build();
        let skin = Skin::from_skeleton(&m.skeleton);
        Self {
            name: "mannequin".into(),
            bone_mask: vec![true; m.skeleton.len()],
            skins: vec![skin],
            parts: vec![Part {
                morph: Some(m.morph),
                morph_node: anim_mannequin::MESH_NODE,
                ..Part::new(with_normals(m.mesh), Some(0), 0)
            }],
            clips: m.clips.into_iter().map(Arc::new).collect(),
            skeleton: m.skeleton,
            looks: None,
        }
    }

    /// A glTF file (every mesh instance of its default scene).
    ///
    /// # Errors
    /// The loader's errors, or a file without meshes.
    pub fn from_gltf(path: &Path) -> Result<Self, DemoError> {
        let model = anim_gltf::load(path)?;
        let name = path.file_stem().map_or_else(|| "model".into(), |s| s.to_string_lossy().into_owned());
        Self::from_model(name, model).map_err(|e| DemoError::Args(format!("{}: {e}", path.display())))
    }

    /// A loaded glTF model (every mesh instance of its default scene, drawn with its
    /// materials), named `name`.
    ///
    /// # Errors
    /// A model without meshes.
    pub fn from_model(name: String, mut model: anim_gltf::Model) -> Result<Self, DemoError> {
        let looks = Looks::take(&mut model);
        if model.meshes.is_empty() {
            return Err(DemoError::Args("no mesh to draw".into()));
        }
        let bone_mask = model.nodes.iter().fold(vec![false; model.skeleton.len()], |mut m, n| {
            m[n.joint] |= n.is_skin_joint;
            m
        });
        Ok(Self {
            name,
            skins: model.skins.iter().map(|s| s.skin.clone()).collect(),
            parts: model
                .meshes
                .iter()
                .map(|m| Part {
                    morph: m.morph.clone(),
                    morph_node: m.joint,
                    surface: Some(PartSurface {
                        material: m.material,
                        tangents: m.tangents.clone(),
                        colors: m.colors.clone(),
                        uvs1: m.uvs1.clone(),
                    }),
                    ..Part::new(with_normals(m.data.clone()), m.skin, m.joint)
                })
                .collect(),
            clips: model.clips,
            skeleton: model.skeleton,
            bone_mask,
            looks: Some(Arc::new(looks)),
        })
    }

    /// `model` when given, else the default character.
    ///
    /// # Errors
    /// As [`Character::from_gltf`].
    pub fn load(model: Option<&Path>) -> Result<Self, DemoError> {
        model.map_or_else(|| Ok(Self::mannequin()), Self::from_gltf)
    }

    /// The index of the clip named `name`, or with that index.
    pub fn find_clip(&self, name: &str) -> Option<usize> {
        self.clips.iter().position(|c| c.name() == name).or_else(|| name.parse().ok().filter(|i| *i < self.clips.len()))
    }

    /// The index of the clip named `name` (or with that index), as [`Character::find_clip`],
    /// or an error naming it.
    ///
    /// # Errors
    /// No such clip.
    pub fn require_clip(&self, name: &str) -> Result<usize, DemoError> {
        self.find_clip(name).ok_or_else(|| DemoError::Args(format!("no clip {name:?}")))
    }

    /// The clip named `keyword`, else the first whose name contains it (case-insensitive):
    /// `walk` finds the mannequin's `walk` and the Woman model's `Walking`.
    pub fn find_clip_like(&self, keyword: &str) -> Option<usize> {
        let k = keyword.to_lowercase();
        self.find_clip(keyword).or_else(|| self.clips.iter().position(|c| c.name().to_lowercase().contains(&k)))
    }

    /// The clip to start with: `preferred` if present, else `walk`, else the first.
    pub fn initial_clip(&self, preferred: Option<&str>) -> Option<usize> {
        preferred.and_then(|p| self.find_clip(p)).or_else(|| self.find_clip("walk")).or(if self.clips.is_empty() {
            None
        } else {
            Some(0)
        })
    }

    /// Uploads every part with `coloring` (debug colourings apply to skinned parts; rigid
    /// parts get a neutral colour), and the morph targets of skinned parts. A character
    /// from a glTF file asked for a uniform body colour (what the demos draw by default) is
    /// drawn with its own materials and textures instead, as its authors made it.
    ///
    /// # Errors
    /// Upload failure.
    pub fn upload(&self, renderer: &mut Renderer, coloring: &Coloring) -> Result<Vec<MeshId>, DemoError> {
        let materials = match (&self.looks, coloring) {
            (Some(looks), Coloring::Uniform(_) | Coloring::Material) => Some(looks.upload(renderer)?),
            _ => None,
        };
        self.parts
            .iter()
            .map(|p| {
                let id = match (&materials, &p.surface) {
                    (Some(ids), Some(s)) => renderer.add_surface_mesh(&p.mesh, &s.surface(ids))?,
                    _ => {
                        let c = if p.mesh.influences.is_some() {
                            coloring.clone()
                        } else {
                            Coloring::Uniform([0.7, 0.7, 0.7])
                        };
                        renderer.add_mesh(&p.mesh, &c)?
                    }
                };
                if let (Some(m), Some(_)) = (&p.morph, &p.mesh.influences) {
                    renderer.add_morph_targets(id, m)?;
                }
                Ok(id)
            })
            .collect()
    }
}

/// A posed instance of a character: pose, world matrices, palettes, CPU skinning buffers.
/// Palettes are computed only for the method that draws, when it first draws after a
/// pose change. Reuses its buffers: posing and drawing allocate nothing after the first
/// frame of each method.
#[derive(Clone, Debug)]
pub struct Posed {
    /// Local transforms.
    pub pose: Pose,
    /// Model-space matrix of every joint.
    pub world: Vec<Mat4>,
    /// One palette per skin, per method (indexed by [`method_slot`]).
    palettes: [Vec<Palette>; 2],
    /// Whether `palettes[slot]` matches the current world matrices.
    fresh: [bool; 2],
    /// CPU-skinned positions per part (valid after [`Posed::skin_cpu`]).
    pub positions: Vec<Vec<Vec3>>,
    /// CPU-skinned normals per part.
    pub normals: Vec<Vec<Vec3>>,
    /// Morph weights per part (empty for a part without targets): the defaults, or the
    /// clip's as [`Posed::sample`] / [`Posed::sample_weights`] set them.
    pub weights: Vec<Vec<f32>>,
    /// Morphed bind positions and normals per part (CPU skinning of morphed parts).
    morphed: Vec<(Vec<Vec3>, Vec<Vec3>)>,
}

impl Posed {
    /// Buffers for `ch`, in the rest pose.
    pub fn new(ch: &Character) -> Self {
        let mut p = Self {
            pose: ch.skeleton.rest_pose().clone(),
            world: vec![Mat4::identity(); ch.skeleton.len()],
            palettes: SkinMethod::ALL.map(|m| ch.skins.iter().map(|_| Palette::new(m)).collect()),
            fresh: [false; 2],
            positions: ch.parts.iter().map(|p| p.mesh.positions.clone()).collect(),
            normals: ch.parts.iter().map(|p| p.mesh.normals.clone()).collect(),
            weights: ch
                .parts
                .iter()
                .map(|p| p.morph.as_ref().map_or(Vec::new(), |m| m.default_weights().to_vec()))
                .collect(),
            morphed: ch
                .parts
                .iter()
                .map(|p| match p.morph {
                    Some(_) => (p.mesh.positions.clone(), p.mesh.normals.clone()),
                    None => (Vec::new(), Vec::new()),
                })
                .collect(),
        };
        // The rest pose of a valid skeleton always evaluates.
        let _ = p.update(ch);
        p
    }

    /// Samples `clip` at `time` (looping) over the rest pose; `None` gives the rest pose.
    ///
    /// # Errors
    /// Unknown clip or failed sampling.
    pub fn sample(&mut self, ch: &Character, clip: Option<usize>, time: f32) -> Result<(), DemoError> {
        // Copy into the existing buffer (a derived `clone_from` would reallocate).
        self.pose.locals_mut().copy_from_slice(ch.skeleton.rest_pose().locals());
        if let Some(c) = clip {
            let clip = ch.clips.get(c).ok_or_else(|| DemoError::Args(format!("no clip {c}")))?;
            clip.sample(time, TimePolicy::Wrap, &mut self.pose)?;
        }
        self.sample_weights(ch, clip, time)?;
        self.update(ch)
    }

    /// Sets every morphed part's weights to its defaults, then to `clip`'s weight track for
    /// the part at `time` (looping) where the clip has one. Allocates nothing.
    ///
    /// # Errors
    /// Unknown clip, or a weight track of another target count.
    pub fn sample_weights(&mut self, ch: &Character, clip: Option<usize>, time: f32) -> Result<(), DemoError> {
        let clip = clip.map(|c| ch.clips.get(c).ok_or_else(|| DemoError::Args(format!("no clip {c}")))).transpose()?;
        for (part, w) in ch.parts.iter().zip(&mut self.weights) {
            let Some(m) = &part.morph else { continue };
            w.copy_from_slice(m.default_weights());
            if let Some(c) = clip {
                c.sample_weights(part.morph_node, time, TimePolicy::Wrap, w)
                    .map_err(|e| DemoError::Args(format!("morph weights of clip {:?}: {e}", c.name())))?;
            }
        }
        Ok(())
    }

    /// Recomputes the world matrices from [`Posed::pose`]; palettes follow on demand.
    ///
    /// # Errors
    /// A pose that does not fit the skeleton.
    pub fn update(&mut self, ch: &Character) -> Result<(), DemoError> {
        self.pose.local_to_model(&ch.skeleton, &mut self.world)?;
        self.fresh = [false; 2];
        Ok(())
    }

    /// The palette of every skin for `method`, computed from the world matrices if they
    /// changed since it was last asked for.
    ///
    /// # Errors
    /// A skin that names a joint the skeleton does not have.
    pub fn palettes(&mut self, ch: &Character, method: SkinMethod) -> Result<&[Palette], DemoError> {
        let slot = method_slot(method);
        if !self.fresh[slot] {
            for (skin, p) in ch.skins.iter().zip(&mut self.palettes[slot]) {
                p.update(&self.world, skin)?;
            }
            self.fresh[slot] = true;
        }
        Ok(&self.palettes[slot])
    }

    /// Skins every part on the CPU into [`Posed::positions`] / [`Posed::normals`] (rigid
    /// parts are placed by their joint's world matrix).
    ///
    /// # Errors
    /// Skinning input that does not fit.
    pub fn skin_cpu(&mut self, ch: &Character, method: SkinMethod) -> Result<(), DemoError> {
        self.palettes(ch, method)?;
        let palettes = &self.palettes[method_slot(method)];
        for (i, part) in ch.parts.iter().enumerate() {
            let (pos, nrm) = (&mut self.positions[i], &mut self.normals[i]);
            // Morph first (glTF's order), then skin or place the morphed vertices.
            let (bind_p, bind_n) = match &part.morph {
                Some(m) => {
                    let (mp, mn) = &mut self.morphed[i];
                    m.apply(&self.weights[i], &part.mesh.positions, mp, Some((&part.mesh.normals, mn)))
                        .map_err(|e| DemoError::Args(format!("morphing part {i}: {e}")))?;
                    (&mp[..], &mn[..])
                }
                None => (&part.mesh.positions[..], &part.mesh.normals[..]),
            };
            match (part.skin, &part.mesh.influences) {
                (Some(s), Some(inf)) => {
                    let input = SkinningInput { influences: inf, positions: bind_p, normals: Some(bind_n) };
                    let mut out = SkinningOutput { positions: pos, normals: Some(nrm) };
                    skinning::skin(&input, &palettes[s], NormalMode::Direct, &mut out)?;
                }
                _ => {
                    let m = &self.world[part.joint];
                    for (o, p) in pos.iter_mut().zip(bind_p) {
                        *o = (m * p.push(1.0)).xyz();
                    }
                    for (o, n) in nrm.iter_mut().zip(bind_n) {
                        *o = (m * n.push(0.0)).xyz().try_normalize(1e-20).unwrap_or_else(Vec3::zeros);
                    }
                }
            }
        }
        Ok(())
    }

    /// Axis-aligned bounds of the CPU-skinned vertices (after [`Posed::skin_cpu`]).
    pub fn bounds(&self) -> Option<(Vec3, Vec3)> {
        let mut it = self.positions.iter().flatten();
        let first = *it.next()?;
        Some(it.fold((first, first), |(lo, hi), p| (lo.inf(p), hi.sup(p))))
    }

    /// Adds the character to `frame`, placed by `model`.
    ///
    /// # Errors
    /// Palette or vertex ranges that do not fit (a bug), or CPU skinning failure.
    pub fn draw(
        &mut self,
        ch: &Character,
        meshes: &[MeshId],
        frame: &mut FrameData,
        model: &Mat4,
        method: SkinMethod,
        backend: Backend,
    ) -> Result<(), DemoError> {
        // Rigid parts with morph targets are morphed on the CPU whatever the backend (the
        // renderer's static path does not morph); skinned ones on the GPU paths are morphed
        // there, with the weights passed per draw.
        let rigid_morph = ch.parts.iter().any(|p| p.morph.is_some() && p.mesh.influences.is_none());
        if backend == Backend::Cpu || rigid_morph {
            self.skin_cpu(ch, method)?;
        } else {
            self.palettes(ch, method)?;
        }
        let palettes = &self.palettes[method_slot(method)];
        for (i, (part, id)) in ch.parts.iter().zip(meshes).enumerate() {
            let skin = part.skin.filter(|_| part.mesh.influences.is_some());
            match (skin, backend) {
                (None, _) if part.morph.is_some() => {
                    frame.add_cpu(*id, *model, &self.positions[i], &self.normals[i])?;
                }
                (None, _) => frame.add_static(*id, model * self.world[part.joint], [1.0; 3]),
                (Some(_), Backend::Cpu) => frame.add_cpu(*id, *model, &self.positions[i], &self.normals[i])?,
                (Some(s), gpu) => {
                    let path = if gpu == Backend::Compute { SkinPath::Compute } else { SkinPath::VertexShader };
                    frame.add_skinned_morphed(*id, *model, path, &palettes[s], &self.weights[i])?;
                }
            }
        }
        Ok(())
    }

    /// Adds the skeleton (skin joints to their parents) as lines, over everything when
    /// `overlay` is set.
    pub fn draw_skeleton(&self, ch: &Character, frame: &mut FrameData, model: &Mat4, color: [f32; 4], overlay: bool) {
        for (j, parent) in ch.skeleton.parents().iter().enumerate() {
            let Some(p) = *parent else { continue };
            if !ch.bone_mask[j] || !ch.bone_mask[p] {
                continue;
            }
            let a = (model * self.world[p].column(3)).xyz();
            let b = (model * self.world[j].column(3)).xyz();
            if overlay {
                frame.overlay_line(a, b, color);
            } else {
                frame.line(a, b, color);
            }
        }
    }
}
