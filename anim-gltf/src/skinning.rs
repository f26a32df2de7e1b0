//! Posing one mesh instance on the CPU exactly as glTF defines it: the reference behind
//! `animtool skin` (its CPU backend, which the GPU backend is tested against). The demos'
//! CPU path instead mirrors what their shaders draw (direct normals, DQ without scale), so
//! CPU and GPU pictures can be compared.

use crate::{GltfError, Model};
use anim_core::palette;
use anim_core::skinning::{self, NormalMode, SkinningInput, SkinningOutput};
use anim_math::{DualQuat, Mat3, Mat4, Vec3, dual};

/// How skinned vertices are blended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SkinMethod {
    /// Linear blend skinning: `p' = (Σ wᵢ · world(jointᵢ) · IBMᵢ) · p`; normals by the
    /// inverse transpose of the blended matrix's linear part, renormalized.
    #[default]
    Lbs,
    /// Dual-quaternion skinning. Each palette matrix `Pᵢ = [Aᵢ | tᵢ]` is split into its
    /// rigid part (rotation `Rᵢ` from the normalized basis, translation `tᵢ`) and the
    /// remaining bind-space scale `Sᵢ = Rᵢᵀ · Aᵢ`; the scales are blended linearly and
    /// applied first, then the blended dual quaternion: `p' = DQ(Σ wᵢ qᵢ) · ((Σ wᵢ Sᵢ) · p)`.
    /// Without scale in the palette (`Sᵢ = I`) this is plain dual-quaternion skinning.
    /// Normals: `(Σ wᵢ Sᵢ)⁻ᵀ · n`, then the blended rotation, renormalized.
    Dq,
}

/// Buffers [`Model::skin_instance`] reuses between calls (it allocates only while they grow).
#[derive(Clone, Debug, Default)]
pub struct SkinScratch {
    world: Vec<Mat4>,
    matrices: Vec<Mat4>,
    dual_quats: Vec<DualQuat>,
    scales: Vec<Mat3>,
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
                scratch.matrices.resize(skin.len(), Mat4::identity());
                palette::skinning_matrices(world, skin, &mut scratch.matrices)
                    .map_err(|e| GltfError::Argument(e.to_string()))?;
                match method {
                    SkinMethod::Lbs => {
                        skinning::linear_blend(&input, &scratch.matrices, NormalMode::InverseTranspose, &mut out)
                            .map_err(arg)?;
                    }
                    SkinMethod::Dq => {
                        scratch.dual_quats.clear();
                        scratch.scales.clear();
                        let mut scaled = false;
                        for p in &scratch.matrices {
                            let q = dual::from_rigid_matrix(p);
                            let r = q.rotation().to_rotation_matrix().into_inner();
                            let a = p.fixed_view::<3, 3>(0, 0).into_owned();
                            let s = r.transpose() * a;
                            scaled |= (s - Mat3::identity()).abs().max() > 1e-6;
                            scratch.dual_quats.push(q);
                            scratch.scales.push(s);
                        }
                        if scaled {
                            dq_with_scale(&input, &scratch.dual_quats, &scratch.scales, &mut out);
                        } else {
                            skinning::dual_quaternion(&input, &scratch.dual_quats, &mut out).map_err(arg)?;
                        }
                    }
                }
            }
            _ => {
                let m = &world[inst.joint];
                let lin = m.fixed_view::<3, 3>(0, 0).into_owned();
                let t = Vec3::new(m[(0, 3)], m[(1, 3)], m[(2, 3)]);
                for (o, p) in positions.iter_mut().zip(&mesh.positions) {
                    *o = lin * p + t;
                }
                if let Some(dst) = normals {
                    let nm = normal_matrix(&lin);
                    for (o, nrm) in dst.iter_mut().zip(&mesh.normals) {
                        *o = unit(nm * nrm);
                    }
                }
            }
        }
        Ok(())
    }
}

/// Inverse transpose of a 3×3 matrix up to a positive factor (the cofactor matrix, signed
/// by the determinant), finite even for a singular matrix.
fn normal_matrix(m: &Mat3) -> Mat3 {
    let (c0, c1, c2) = (m.column(0).into_owned(), m.column(1).into_owned(), m.column(2).into_owned());
    let cof = Mat3::from_columns(&[c1.cross(&c2), c2.cross(&c0), c0.cross(&c1)]);
    if m.determinant() < 0.0 { -cof } else { cof }
}

fn unit(v: Vec3) -> Vec3 {
    let l = v.norm();
    if l > 1e-30 { v / l } else { Vec3::zeros() }
}

/// Dual-quaternion skinning with the palette's bind-space scales blended linearly first
/// (see [`SkinMethod::Dq`]). Unweighted vertices keep their rest data.
fn dq_with_scale(input: &SkinningInput, dqs: &[DualQuat], scales: &[Mat3], out: &mut SkinningOutput) {
    let inf = input.influences;
    let per = inf.per_vertex();
    for (v, (js, ws)) in inf.joints().chunks_exact(per).zip(inf.weights().chunks_exact(per)).enumerate() {
        let p = input.positions[v];
        if ws.iter().all(|w| *w == 0.0) {
            out.positions[v] = p;
            if let (Some(src), Some(dst)) = (input.normals, out.normals.as_deref_mut()) {
                dst[v] = src[v];
            }
            continue;
        }
        let pivot = dqs[usize::from(js[0])].as_ref().real.coords;
        let mut real = nalgebra::Vector4::<f32>::zeros();
        let mut du = nalgebra::Vector4::<f32>::zeros();
        let mut s = Mat3::zeros();
        for (j, w) in js.iter().zip(ws) {
            if *w == 0.0 {
                continue;
            }
            let q = dqs[usize::from(*j)].as_ref();
            let sign = if q.real.coords.dot(&pivot) < 0.0 { -*w } else { *w };
            real += q.real.coords * sign;
            du += q.dual.coords * sign;
            s += scales[usize::from(*j)] * *w;
        }
        let blended = dual::normalize(&nalgebra::DualQuaternion::from_real_and_dual(
            nalgebra::Quaternion::from(real),
            nalgebra::Quaternion::from(du),
        ));
        out.positions[v] = dual::transform_point(&blended, &(s * p));
        if let (Some(src), Some(dst)) = (input.normals, out.normals.as_deref_mut()) {
            dst[v] = unit(dual::transform_vector(&blended, &(normal_matrix(&s) * src[v])));
        }
    }
}
