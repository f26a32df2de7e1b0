//! Posing one mesh instance on the CPU exactly as glTF defines it: the reference behind
//! `animtool skin` (its CPU backend, which the GPU backend is tested against). Skinning
//! follows [`SkinMethod`]'s definitions; linear blend normals use the inverse transpose.

use crate::error::GltfError;
use crate::model::Model;
use anim_core::skin::skinning;
use anim_core::skin::skinning::{NormalMode, SkinningInput, SkinningOutput};
use anim_core::skin::{Palette, SkinMethod};
use anim_math::{Mat4, Vec3};

/// Buffers [`Model::skin_instance`] reuses between calls (it allocates only while they grow).
#[derive(Clone, Debug, Default)]
pub struct SkinScratch {
    world: Vec<Mat4>,
    palette: Palette,
    /// Morphed positions and normals (morphing comes before skinning).
    morphed: (Vec<Vec3>, Vec<Vec3>),
}

impl SkinScratch {
    /// Empty scratch buffers.
    pub fn new() -> Self {
        Self::default()
    }
}

impl Model {
    /// The morph weights of mesh instance `instance` at raw time `time` of clip `clip` under
    /// `policy`, written into `out` (one a target): the clip's `weights` channel of the
    /// instance's node when it has one, the default weights (`node.weights`, else
    /// `mesh.weights`, else zeros) otherwise. An instance without morph targets takes an
    /// empty `out`. Allocates nothing.
    ///
    /// # Errors
    /// Unknown clip or instance, a non-finite time, or `out` of the wrong length.
    pub fn sample_weights(
        &self,
        clip: usize,
        instance: usize,
        time: f32,
        policy: anim_core::clip::TimePolicy,
        out: &mut [f32],
    ) -> Result<(), GltfError> {
        let c = self.clips.get(clip).ok_or_else(|| GltfError::Argument(format!("no clip {clip}")))?;
        let inst =
            self.meshes.get(instance).ok_or_else(|| GltfError::Argument(format!("no mesh instance {instance}")))?;
        let defaults = inst.morph.as_ref().map_or(&[][..], |m| m.default_weights());
        if out.len() != defaults.len() {
            return Err(GltfError::Argument(format!(
                "{} weights asked for mesh instance {instance}, which has {} morph targets",
                out.len(),
                defaults.len()
            )));
        }
        out.copy_from_slice(defaults);
        if !defaults.is_empty() {
            c.sample_weights(inst.joint, time, policy, out)?;
        }
        Ok(())
    }

    /// [`Model::skin_instance`] for a pose: computes the world matrices of `pose` into
    /// `scratch` first. When several instances share a pose, compute the world matrices once
    /// with [`Model::world_matrices`] and call [`Model::skin_instance`] instead.
    ///
    /// # Errors
    /// As [`Model::skin_instance`], or a pose of the wrong length.
    pub fn skin_pose(
        &self,
        instance: usize,
        pose: &anim_core::pose::Pose,
        method: SkinMethod,
        scratch: &mut SkinScratch,
        positions: &mut [Vec3],
        normals: Option<&mut [Vec3]>,
    ) -> Result<(), GltfError> {
        let mut world = std::mem::take(&mut scratch.world);
        world.resize(self.skeleton.len(), Mat4::identity());
        let result = self
            .world_matrices(pose, &mut world)
            .and_then(|()| self.skin_instance(instance, &world, method, scratch, positions, normals));
        scratch.world = world;
        result
    }

    /// Poses mesh instance `instance` (an index into [`Model::meshes`]) with the world
    /// matrices `world` (from [`Model::world_matrices`]), writing one position (and normal,
    /// when `normals` is given) per vertex of the `POSITION` accessor, in glTF scene space:
    /// skinned vertices `Σ wᵢ · world(jointᵢ) · IBMᵢ · p` (the mesh node's own transform
    /// is ignored, as glTF requires), unskinned ones `world(node) · p` with normals by the
    /// inverse transpose of the node matrix's linear part.
    ///
    /// A primitive without normals gets no normals written (`normals` is then left as is).
    /// Morph targets are applied first with the instance's default weights (see
    /// [`Model::skin_instance_weighted`] for animated ones).
    ///
    /// # Errors
    /// Unknown instance, or buffers of the wrong length.
    pub fn skin_instance(
        &self,
        instance: usize,
        world: &[Mat4],
        method: SkinMethod,
        scratch: &mut SkinScratch,
        positions: &mut [Vec3],
        normals: Option<&mut [Vec3]>,
    ) -> Result<(), GltfError> {
        let weights = self.meshes.get(instance).and_then(|i| i.morph.as_ref()).map(|m| m.default_weights());
        self.skin_instance_weighted(instance, world, weights, method, scratch, positions, normals)
    }

    /// [`Model::skin_instance`] with morph weights: the instance's morph targets are applied
    /// with `weights` (one a target; `None` for the default weights) before skinning, as
    /// glTF requires: `p = base + Σ wᵢ · Δᵢ`, then skinned (normals likewise, renormalized
    /// after skinning). Only targets with a non-zero weight cost anything; `scratch` holds
    /// the morphed vertices, so steady calls allocate nothing.
    ///
    /// # Errors
    /// As [`Model::skin_instance`], or `weights` not holding one weight a target.
    #[allow(clippy::too_many_arguments)]
    pub fn skin_instance_weighted(
        &self,
        instance: usize,
        world: &[Mat4],
        weights: Option<&[f32]>,
        method: SkinMethod,
        scratch: &mut SkinScratch,
        positions: &mut [Vec3],
        normals: Option<&mut [Vec3]>,
    ) -> Result<(), GltfError> {
        let inst =
            self.meshes.get(instance).ok_or_else(|| GltfError::Argument(format!("no mesh instance {instance}")))?;
        let mut morphed = std::mem::take(&mut scratch.morphed);
        let result = self.skin_morphed(inst, world, weights, method, scratch, &mut morphed, positions, normals);
        scratch.morphed = morphed;
        result
    }

    #[allow(clippy::too_many_arguments)]
    fn skin_morphed(
        &self,
        inst: &crate::model::MeshInstance,
        world: &[Mat4],
        weights: Option<&[f32]>,
        method: SkinMethod,
        scratch: &mut SkinScratch,
        morphed: &mut (Vec<Vec3>, Vec<Vec3>),
        positions: &mut [Vec3],
        normals: Option<&mut [Vec3]>,
    ) -> Result<(), GltfError> {
        let mesh = &inst.data;
        let n = mesh.vertex_count();
        if world.len() != self.skeleton.len() {
            return Err(GltfError::Argument(format!(
                "world has {} matrices, the model has {} nodes",
                world.len(),
                self.skeleton.len()
            )));
        }
        if positions.len() != n || normals.as_ref().is_some_and(|s| s.len() != n) {
            return Err(GltfError::Argument(format!("output buffers must hold {n} vertices")));
        }
        let normals = if mesh.normals.is_empty() { None } else { normals };
        let weights = weights.or_else(|| inst.morph.as_ref().map(|m| m.default_weights()));
        // Morph first, into scratch, when some target has a non-zero weight.
        let (base_positions, base_normals) = match (&inst.morph, weights) {
            (Some(m), Some(w)) if w.iter().any(|x| *x != 0.0) => {
                let (mp, mn) = morphed;
                mp.resize(n, Vec3::zeros());
                let with_normals = normals.is_some();
                mn.resize(if with_normals { n } else { 0 }, Vec3::zeros());
                let nrm = if with_normals { Some((mesh.normals.as_slice(), mn.as_mut_slice())) } else { None };
                m.apply(w, &mesh.positions, mp, nrm)?;
                (mp.as_slice(), if with_normals { mn.as_slice() } else { mesh.normals.as_slice() })
            }
            (Some(m), Some(w)) if w.len() != m.target_count() => {
                return Err(GltfError::Argument(format!("{} morph weights for {} targets", w.len(), m.target_count())));
            }
            _ => (mesh.positions.as_slice(), mesh.normals.as_slice()),
        };
        match (inst.skin, &mesh.influences) {
            (Some(s), Some(influences)) => {
                let skin = &self.skins[s].skin;
                let input = SkinningInput {
                    influences,
                    positions: base_positions,
                    normals: if normals.is_some() { Some(base_normals) } else { None },
                };
                let mut out = SkinningOutput { positions, normals };
                scratch.palette.set_method(method);
                scratch.palette.update(world, skin)?;
                skinning::skin(&input, &scratch.palette, NormalMode::InverseTranspose, &mut out)?;
            }
            _ => {
                let m = &world[inst.joint];
                let lin = m.fixed_view::<3, 3>(0, 0).into_owned();
                let t = Vec3::new(m[(0, 3)], m[(1, 3)], m[(2, 3)]);
                for (o, p) in positions.iter_mut().zip(base_positions) {
                    *o = lin * p + t;
                }
                if let Some(dst) = normals {
                    let nm = anim_math::normal_matrix(&lin);
                    for (o, nrm) in dst.iter_mut().zip(base_normals) {
                        *o = unit(nm * nrm);
                    }
                }
            }
        }
        Ok(())
    }
}

fn unit(v: Vec3) -> Vec3 {
    let l = v.norm();
    if l > 1e-30 { v / l } else { Vec3::zeros() }
}
