//! Meshes: each primitive of a mesh in the default scene becomes a [`Mesh`] (positions,
//! normals, texture coordinates, skinning influences from every `JOINTS_n`/`WEIGHTS_n`
//! set, triangle indices) and the surface attributes its material reads (tangents, read or
//! generated with MikkTSpace, `COLOR_0`, `TEXCOORD_1`).

use super::buffers::{F32, Want, check_accessor, check_finite, quantized};
use super::{Importer, MAX_INFLUENCE_SETS};
use crate::error::GltfError;
use crate::material::Material;
use crate::model::MeshInstance;
use crate::model::SkinInfo;
use anim_core::pose::Skeleton;
use anim_core::skin::{Influences, Mesh};
use anim_math::Vec3;
use gltf::accessor::{DataType, Dimensions};
use gltf::mesh::{Mode, Semantic};

/// Vertex attribute types, including those `KHR_mesh_quantization` allows.
const POSITIONS: Want = Want {
    dims: &[Dimensions::Vec3],
    types: &[F32, (DataType::I8, false), (DataType::U8, false), (DataType::I16, false), (DataType::U16, false)],
    what: "VEC3 FLOAT (or integers with KHR_mesh_quantization)",
};
const NORMALS: Want = Want {
    dims: &[Dimensions::Vec3],
    types: &[F32, (DataType::I8, true), (DataType::I16, true)],
    what: "VEC3 FLOAT (or normalized BYTE/SHORT with KHR_mesh_quantization)",
};
const TEXCOORDS: Want = Want {
    dims: &[Dimensions::Vec2],
    types: &[F32, (DataType::I8, false), (DataType::U8, false), (DataType::I16, false), (DataType::U16, false)],
    what: "VEC2 FLOAT or (normalized) integers",
};
const TANGENTS: Want = Want {
    dims: &[Dimensions::Vec4],
    types: &[F32, (DataType::I8, true), (DataType::I16, true)],
    what: "VEC4 FLOAT (or normalized BYTE/SHORT with KHR_mesh_quantization)",
};
const COLORS: Want = Want {
    dims: &[Dimensions::Vec3, Dimensions::Vec4],
    types: &[F32, (DataType::U8, true), (DataType::U16, true)],
    what: "VEC3/VEC4 FLOAT or normalized UNSIGNED_BYTE/UNSIGNED_SHORT",
};

/// The surface attributes of a primitive besides its [`Mesh`].
struct Surface {
    tangents: Vec<[f32; 4]>,
    colors: Vec<[f32; 4]>,
    uvs1: Vec<[f32; 2]>,
}

impl<'a> Importer<'a> {
    /// The primitives of the meshes of the scene's nodes, one [`MeshInstance`] each.
    pub(super) fn meshes(
        &mut self,
        skeleton: &Skeleton,
        skins: &[SkinInfo],
        scene_nodes: &[usize],
        materials: &[Material],
    ) -> Result<Vec<MeshInstance>, GltfError> {
        let mut out = Vec::new();
        self.morph_target_counts()?;
        let nodes: Vec<gltf::Node> = self.doc.nodes().collect();
        for &ni in scene_nodes {
            let node = &nodes[ni];
            let Some(mesh) = node.mesh() else { continue };
            for prim in mesh.primitives() {
                let ppath = format!("meshes[{}].primitives[{}]", mesh.index(), prim.index());
                let skin = node.skin().map(|s| s.index());
                let (m, skinned) = self.primitive(&prim, &ppath, skin.map(|s| (s, &skins[s])))?;
                let material = prim.material().index();
                let normal_set = material.and_then(|k| materials.get(k)).and_then(|k| k.normal_texture);
                let surface = self.surface(&prim, &ppath, &m, normal_set.map(|t| t.tex_coord))?;
                if skin.is_some() && !skinned {
                    self.warnings
                        .push(format!("nodes[{ni}] has a skin but {ppath} has no JOINTS_0/WEIGHTS_0; drawn unskinned"));
                }
                let morph = self.primitive_morph(node, &mesh, &prim, m.positions.len())?;
                out.push(MeshInstance {
                    node: ni,
                    joint: skeleton.from_source_index(ni).expect("node is a joint"),
                    mesh: mesh.index(),
                    primitive: prim.index(),
                    skin: if skinned { skin } else { None },
                    data: m,
                    morph,
                    material,
                    tangents: surface.tangents,
                    colors: surface.colors,
                    uvs1: surface.uvs1,
                });
            }
        }
        Ok(out)
    }

    /// One primitive as a mesh, and whether it is skinned.
    fn primitive(
        &mut self,
        prim: &gltf::Primitive<'a>,
        ppath: &str,
        skin: Option<(usize, &SkinInfo)>,
    ) -> Result<(Mesh, bool), GltfError> {
        let reader = prim.reader(self.data());
        let apath = |s: &str| format!("{ppath}.attributes.{s}");
        let pos_acc = prim
            .get(&Semantic::Positions)
            .ok_or_else(|| GltfError::Schema { path: apath("POSITION"), message: "missing".into() })?;
        check_accessor(&pos_acc, self.buffers, &POSITIONS, &apath("POSITION"))?;
        let n = pos_acc.count();
        let positions: Vec<[f32; 3]> = if pos_acc.data_type() == DataType::F32 {
            reader.read_positions().map_or_else(|| vec![[0.0; 3]; n], |it| it.collect())
        } else {
            quantized::<3>(&pos_acc, self.buffers)
        };
        check_finite(&positions, &format!("accessors[{}]", pos_acc.index()), "position")?;
        let check_count = |acc: &gltf::Accessor, what: &str| {
            if acc.count() != n {
                Err(GltfError::accessor(
                    format!("accessors[{}]", acc.index()),
                    format!("used as {} it has {} elements, POSITION has {n}", apath(what), acc.count()),
                ))
            } else {
                Ok(())
            }
        };
        let mut normals = Vec::new();
        if let Some(acc) = prim.get(&Semantic::Normals) {
            check_accessor(&acc, self.buffers, &NORMALS, &apath("NORMAL"))?;
            check_count(&acc, "NORMAL")?;
            let raw: Vec<[f32; 3]> = if acc.data_type() == DataType::F32 {
                reader.read_normals().map_or_else(|| vec![[0.0; 3]; n], |it| it.collect())
            } else {
                quantized::<3>(&acc, self.buffers)
            };
            check_finite(&raw, &format!("accessors[{}]", acc.index()), "normal")?;
            normals = raw.iter().map(|v| repair_normal(Vec3::from(*v))).collect();
        }
        let mut uvs = Vec::new();
        if let Some(acc) = prim.get(&Semantic::TexCoords(0)) {
            check_accessor(&acc, self.buffers, &TEXCOORDS, &apath("TEXCOORD_0"))?;
            check_count(&acc, "TEXCOORD_0")?;
            uvs = quantized::<2>(&acc, self.buffers);
        }
        // Influence sets.
        let mut sets = 0u32;
        while prim.get(&Semantic::Joints(sets)).is_some() || prim.get(&Semantic::Weights(sets)).is_some() {
            sets += 1;
            if sets > MAX_INFLUENCE_SETS {
                return Err(GltfError::Unsupported {
                    path: apath(&format!("JOINTS_{sets}")),
                    message: format!("more than {MAX_INFLUENCE_SETS} JOINTS_n/WEIGHTS_n sets"),
                });
            }
        }
        let mut influences = None;
        if sets > 0
            && let Some((si, skin)) = skin
        {
            let per = 4 * sets as usize;
            // Joints (u16) and weights (f32) of every set, before they are allocated.
            self.buffers.charge(&apath("JOINTS_0"), (n as u64).saturating_mul(per as u64), 6)?;
            let mut joints = vec![0u16; n * per];
            let mut weights = vec![0f32; n * per];
            for set in 0..sets {
                let (jn, wn) = (format!("JOINTS_{set}"), format!("WEIGHTS_{set}"));
                let jacc = prim.get(&Semantic::Joints(set)).ok_or_else(|| GltfError::Schema {
                    path: apath(&jn),
                    message: format!("missing, but {wn} is present"),
                })?;
                let wacc = prim.get(&Semantic::Weights(set)).ok_or_else(|| GltfError::Schema {
                    path: apath(&wn),
                    message: format!("missing, but {jn} is present"),
                })?;
                const JOINTS: Want = Want {
                    dims: &[Dimensions::Vec4],
                    types: &[(DataType::U8, false), (DataType::U16, false)],
                    what: "VEC4 UNSIGNED_BYTE/UNSIGNED_SHORT",
                };
                const WEIGHTS: Want = Want {
                    dims: &[Dimensions::Vec4],
                    types: &[F32, (DataType::U8, true), (DataType::U16, true)],
                    what: "VEC4 FLOAT or normalized UNSIGNED_BYTE/UNSIGNED_SHORT",
                };
                check_accessor(&jacc, self.buffers, &JOINTS, &apath(&jn))?;
                check_accessor(&wacc, self.buffers, &WEIGHTS, &apath(&wn))?;
                check_count(&jacc, &jn)?;
                check_count(&wacc, &wn)?;
                let base = 4 * set as usize;
                // An accessor without data reads as zeros, which the buffers already hold.
                if let Some(it) = reader.read_joints(set) {
                    for (v, j) in it.into_u16().enumerate() {
                        joints[v * per + base..v * per + base + 4].copy_from_slice(&j);
                    }
                }
                if let Some(it) = reader.read_weights(set) {
                    for (v, w) in it.into_f32().enumerate() {
                        weights[v * per + base..v * per + base + 4].copy_from_slice(&w);
                    }
                }
            }
            let inf = Influences::new(per, joints, weights, skin.skin.len()).map_err(|e| match e {
                anim_core::skin::SkinningError::JointOutOfRange { vertex, slot, count, .. } => {
                    GltfError::JointOutOfRange {
                        path: apath(&format!("JOINTS_{}", slot / 4)),
                        message: format!(
                            "vertex {vertex} (slot {slot}) uses a joint index with a non-zero weight that is not \
                         below skins[{si}]'s joint count {count}"
                        ),
                    }
                }
                anim_core::skin::SkinningError::BadWeight { vertex, slot, .. } => GltfError::Accessor {
                    path: apath(&format!("WEIGHTS_{}", slot / 4)),
                    message: format!("vertex {vertex} (slot {slot}) has a negative or non-finite weight"),
                },
                other => GltfError::accessor(apath("JOINTS_0"), other.to_string()),
            })?;
            influences = Some(inf);
        } else if sets > 0 {
            self.warnings.push(format!("{ppath} has JOINTS/WEIGHTS but its node has no skin; drawn unskinned"));
        }
        // Indices.
        let mut indices = Vec::new();
        let raw_indices: Option<Vec<u32>> = match prim.indices() {
            Some(acc) => {
                const IDX: Want = Want {
                    dims: &[Dimensions::Scalar],
                    types: &[(DataType::U8, false), (DataType::U16, false), (DataType::U32, false)],
                    what: "SCALAR UNSIGNED_BYTE/SHORT/INT",
                };
                let ipath = format!("{ppath}.indices");
                check_accessor(&acc, self.buffers, &IDX, &ipath)?;
                let v: Vec<u32> =
                    reader.read_indices().map_or_else(|| vec![0; acc.count()], |r| r.into_u32().collect());
                if let Some(k) = v.iter().position(|&i| i as usize >= n) {
                    return Err(GltfError::accessor(
                        format!("accessors[{}]", acc.index()),
                        format!("index {k} is not below the primitive's vertex count {n}"),
                    ));
                }
                Some(v)
            }
            None => None,
        };
        // Strips and fans expand to up to three indices a vertex.
        let listed = raw_indices.as_ref().map_or(n, Vec::len) as u64;
        self.buffers.charge(&format!("{ppath}.indices"), listed, 12)?;
        let seq = || raw_indices.clone().unwrap_or_else(|| (0..n as u32).collect());
        match prim.mode() {
            Mode::Triangles => indices = seq(),
            Mode::TriangleStrip => {
                let s = seq();
                for k in 2..s.len() {
                    if k % 2 == 0 {
                        indices.extend_from_slice(&[s[k - 2], s[k - 1], s[k]]);
                    } else {
                        indices.extend_from_slice(&[s[k - 1], s[k - 2], s[k]]);
                    }
                }
            }
            Mode::TriangleFan => {
                let s = seq();
                for k in 2..s.len() {
                    indices.extend_from_slice(&[s[k - 1], s[k], s[0]]);
                }
            }
            other => self.warnings.push(format!("{ppath} has mode {other:?}; loaded without triangles")),
        }
        indices.truncate(indices.len() / 3 * 3);
        let mesh =
            Mesh { positions: positions.into_iter().map(Vec3::from).collect(), normals, uvs, influences, indices };
        let skinned = mesh.influences.is_some();
        Ok((mesh, skinned))
    }
}

impl Importer<'_> {
    /// `TANGENT` (or MikkTSpace tangents when the material has a normal texture reading
    /// set `normal_set` and the file gives none), `COLOR_0` and `TEXCOORD_1` of a primitive
    /// already read into `mesh`.
    fn surface(
        &mut self,
        prim: &gltf::Primitive<'_>,
        ppath: &str,
        mesh: &Mesh,
        normal_set: Option<u32>,
    ) -> Result<Surface, GltfError> {
        let n = mesh.positions.len();
        let apath = |s: &str| format!("{ppath}.attributes.{s}");
        let counted = |acc: &gltf::Accessor, what: &str| {
            if acc.count() == n {
                Ok(())
            } else {
                Err(GltfError::accessor(
                    format!("accessors[{}]", acc.index()),
                    format!("used as {} it has {} elements, POSITION has {n}", apath(what), acc.count()),
                ))
            }
        };
        let mut tangents = Vec::new();
        if let Some(acc) = prim.get(&Semantic::Tangents) {
            check_accessor(&acc, self.buffers, &TANGENTS, &apath("TANGENT"))?;
            counted(&acc, "TANGENT")?;
            let raw = quantized::<4>(&acc, self.buffers);
            check_finite(&raw, &format!("accessors[{}]", acc.index()), "tangent")?;
            tangents = raw.into_iter().map(repair_tangent).collect();
        }
        let mut colors = Vec::new();
        if let Some(acc) = prim.get(&Semantic::Colors(0)) {
            check_accessor(&acc, self.buffers, &COLORS, &apath("COLOR_0"))?;
            counted(&acc, "COLOR_0")?;
            colors = if acc.dimensions() == Dimensions::Vec3 {
                quantized::<3>(&acc, self.buffers).into_iter().map(|[r, g, b]| [r, g, b, 1.0]).collect()
            } else {
                quantized::<4>(&acc, self.buffers)
            };
            check_finite(&colors, &format!("accessors[{}]", acc.index()), "colour")?;
        }
        let mut uvs1 = Vec::new();
        if let Some(acc) = prim.get(&Semantic::TexCoords(1)) {
            check_accessor(&acc, self.buffers, &TEXCOORDS, &apath("TEXCOORD_1"))?;
            counted(&acc, "TEXCOORD_1")?;
            uvs1 = quantized::<2>(&acc, self.buffers);
            check_finite(&uvs1, &format!("accessors[{}]", acc.index()), "texture coordinate")?;
        }
        if tangents.is_empty()
            && let Some(set) = normal_set
        {
            let uvs = if set == 0 { &mesh.uvs } else { &uvs1 };
            if uvs.len() == n && !mesh.indices.is_empty() {
                self.buffers.charge(&apath("TANGENT"), n as u64, 16 + 12)?;
                tangents = super::tangents::mikktspace(mesh, uvs);
            } else {
                self.warnings.push(format!(
                    "{ppath} has a normal texture but neither TANGENT nor TEXCOORD_{set} triangles to compute them from"
                ));
            }
        }
        Ok(Surface { tangents, colors, uvs1 })
    }
}

/// A unit tangent with w = ±1; a zero-length one becomes +X.
fn repair_tangent([x, y, z, w]: [f32; 4]) -> [f32; 4] {
    let l = (x * x + y * y + z * z).sqrt();
    let w = if w < 0.0 { -1.0 } else { 1.0 };
    if l > 1e-12 { [x / l, y / l, z / l, w] } else { [1.0, 0.0, 0.0, w] }
}

/// Unit normal; a zero-length normal becomes +Y (a degenerate normal is repaired, not kept).
fn repair_normal(n: Vec3) -> Vec3 {
    let l = n.norm();
    if l > 1e-12 { n / l } else { Vec3::y() }
}
