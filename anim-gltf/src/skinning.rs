//! Posing one mesh instance on the CPU exactly as glTF defines it: the reference behind
//! `animtool skin` (its CPU backend, which the GPU backend is tested against). Skinning
//! follows [`SkinMethod`]'s definitions; linear blend normals use the inverse transpose.

use crate::{GltfError, Model};
use anim_core::skinning::{self, NormalMode, SkinningInput, SkinningOutput};
use anim_core::{Palette, SkinMethod};
use anim_math::{Mat4, Vec3};

/// Buffers [`Model::skin_instance`] reuses between calls (it allocates only while they grow).
#[derive(Clone, Debug, Default)]
pub struct SkinScratch {
    world: Vec<Mat4>,
    palette: Palette,
}

impl SkinScratch {
    /// Empty scratch buffers.
    pub fn new() -> Self {
        Self::default()
    }
}

impl Model {
    /// [`Model::skin_instance`] for a pose: computes the world matrices of `pose` into
    /// `scratch` first. When several instances share a pose, compute the world matrices once
    /// with [`Model::world_matrices`] and call [`Model::skin_instance`] instead.
    ///
    /// # Errors
    /// As [`Model::skin_instance`], or a pose of the wrong length.
    pub fn skin_pose(
        &self,
        instance: usize,
        pose: &anim_core::Pose,
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
        let inst =
            self.meshes.get(instance).ok_or_else(|| GltfError::Argument(format!("no mesh instance {instance}")))?;
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
        let arg = |e: anim_core::SkinningError| GltfError::Argument(e.to_string());
        match (inst.skin, &mesh.influences) {
            (Some(s), Some(influences)) => {
                let skin = &self.skins[s].skin;
                let input = SkinningInput {
                    influences,
                    positions: &mesh.positions,
                    normals: if normals.is_some() { Some(&mesh.normals) } else { None },
                };
                let mut out = SkinningOutput { positions, normals };
                scratch.palette.set_method(method);
                scratch.palette.update(world, skin).map_err(|e| GltfError::Argument(e.to_string()))?;
                skinning::skin(&input, &scratch.palette, NormalMode::InverseTranspose, &mut out).map_err(arg)?;
            }
            _ => {
                let m = &world[inst.joint];
                let lin = m.fixed_view::<3, 3>(0, 0).into_owned();
                let t = Vec3::new(m[(0, 3)], m[(1, 3)], m[(2, 3)]);
                for (o, p) in positions.iter_mut().zip(&mesh.positions) {
                    *o = lin * p + t;
                }
                if let Some(dst) = normals {
                    let nm = anim_math::normal_matrix(&lin);
                    for (o, nrm) in dst.iter_mut().zip(&mesh.normals) {
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
