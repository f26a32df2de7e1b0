//! Nodes, scenes and skins: every node becomes a joint of the skeleton, the default scene
//! selects the nodes whose meshes are drawn, and each skin gets its inverse bind matrices
//! and bind pose.

use super::Importer;
use super::buffers::{F32, Want, check_accessor, check_finite};
use crate::error::GltfError;
use crate::model::NodeInfo;
use crate::model::SkinInfo;
use anim_core::pose::{JointDesc, Pose, Skeleton, SkeletonError};
use anim_core::skin::Skin;
use anim_math::{Mat4, Quat, Transform, Vec3};
use gltf::accessor::Dimensions;
use nalgebra::Quaternion;

impl Importer<'_> {
    /// Every node becomes a joint (source index = node index), so anything a skin or a
    /// channel refers to has a world transform.
    pub(super) fn skeleton(&mut self) -> Result<(Skeleton, Vec<NodeInfo>), GltfError> {
        let n = self.doc.nodes().len();
        if n > Skeleton::MAX_JOINTS {
            return Err(GltfError::Unsupported {
                path: "nodes".into(),
                message: format!("{n} nodes, at most {} are supported", Skeleton::MAX_JOINTS),
            });
        }
        let mut parent: Vec<Option<usize>> = vec![None; n];
        for node in self.doc.nodes() {
            for child in node.children() {
                let c = child.index();
                if c == node.index() {
                    return Err(GltfError::Hierarchy {
                        path: format!("nodes[{}].children", node.index()),
                        message: "a node is its own child".into(),
                    });
                }
                if let Some(p) = parent[c] {
                    return Err(GltfError::Hierarchy {
                        path: format!("nodes[{}].children", node.index()),
                        message: format!("node {c} is already a child of node {p}; the node graph must be a forest"),
                    });
                }
                parent[c] = Some(node.index());
            }
        }
        let mut joints = Vec::with_capacity(n);
        let mut infos = Vec::with_capacity(n);
        for node in self.doc.nodes() {
            let i = node.index();
            let path = format!("nodes[{i}]");
            let rest = match node.transform() {
                gltf::scene::Transform::Matrix { matrix } => {
                    let mpath = format!("{path}.matrix");
                    check_finite(&matrix, &mpath, "column")?;
                    let m = Mat4::from_column_slice(matrix.as_flattened());
                    let t = Transform::from_matrix(&m);
                    // The affine part must be rotation · scale (no shear, no projection),
                    // or the decomposition would silently change the node.
                    let size = m.iter().fold(1.0f32, |a, x| a.max(x.abs()));
                    let back = t.to_matrix();
                    if !t.is_finite() || (back - m).iter().any(|d| d.abs() > 1e-4 * size) {
                        return Err(GltfError::Schema {
                            path: mpath,
                            message: "NODE_MATRIX_NON_TRS: the matrix is not decomposable to translation, rotation \
                                      and scale"
                                .into(),
                        });
                    }
                    t
                }
                gltf::scene::Transform::Decomposed { translation, rotation, scale } => {
                    check_finite(&[translation], &format!("{path}.translation"), "value")?;
                    check_finite(&[rotation], &format!("{path}.rotation"), "value")?;
                    check_finite(&[scale], &format!("{path}.scale"), "value")?;
                    let q = Quaternion::new(rotation[3], rotation[0], rotation[1], rotation[2]);
                    let norm = q.norm();
                    if !(norm > 1e-12 && norm.is_finite()) {
                        return Err(GltfError::Degenerate {
                            path: format!("{path}.rotation"),
                            what: "zero-length quaternion (not normalizable)".into(),
                        });
                    }
                    Transform::new(Vec3::from(translation), Quat::from_quaternion(q), Vec3::from(scale))
                }
            };
            let name = node.name().unwrap_or("").to_owned();
            infos.push(NodeInfo {
                name: name.clone(),
                parent: parent[i],
                mesh: node.mesh().map(|m| m.index()),
                skin: node.skin().map(|s| s.index()),
                joint: 0,
                is_skin_joint: false,
            });
            joints.push(JointDesc::new(name, parent[i], rest));
        }
        let skeleton = Skeleton::new(joints).map_err(|e| match e {
            SkeletonError::Cycle { joint, .. } => GltfError::Hierarchy {
                path: format!("nodes[{joint}]"),
                message: "is part of a cycle in the node hierarchy".into(),
            },
            other => GltfError::Hierarchy { path: "nodes".into(), message: other.to_string() },
        })?;
        for (i, info) in infos.iter_mut().enumerate() {
            info.joint = skeleton.from_source_index(i).expect("every node is a joint of the skeleton");
        }
        for skin in self.doc.skins() {
            for j in skin.joints() {
                infos[j.index()].is_skin_joint = true;
            }
        }
        Ok((skeleton, infos))
    }

    /// Nodes of the default scene (scene 0 when `scene` is absent; every node when there
    /// are no scenes), in node-index order.
    pub(super) fn scene_nodes(&mut self, skeleton: &Skeleton) -> Vec<usize> {
        let scene = self.doc.default_scene().or_else(|| self.doc.scenes().next());
        let mut in_scene = vec![scene.is_none(); self.doc.nodes().len()];
        if let Some(scene) = scene {
            for root in scene.nodes() {
                let j = skeleton.from_source_index(root.index()).expect("node is a joint");
                for k in skeleton.subtree(j) {
                    in_scene[skeleton.source_index(k).expect("joint has a source")] = true;
                }
            }
        }
        (0..in_scene.len()).filter(|&i| in_scene[i]).collect()
    }

    /// Each skin: its joints, inverse bind matrices and bind pose.
    pub(super) fn skins(&mut self, skeleton: &Skeleton) -> Result<Vec<SkinInfo>, GltfError> {
        let mut out = Vec::new();
        let mut rest_world = vec![Mat4::identity(); skeleton.len()];
        skeleton
            .rest_pose()
            .local_to_model(skeleton, &mut rest_world)
            .expect("rest pose and buffer have the skeleton's length");
        for skin in self.doc.skins() {
            let spath = format!("skins[{}]", skin.index());
            // Each skin keeps a bind pose over the whole skeleton and builds it from world
            // matrices: skins × nodes, so charged to the budget first.
            let per_joint = std::mem::size_of::<Mat4>() + std::mem::size_of::<Transform>() + 16;
            self.buffers.charge(&spath, skeleton.len() as u64, per_joint as u64)?;
            let joints: Vec<usize> =
                skin.joints().map(|n| skeleton.from_source_index(n.index()).expect("node is a joint")).collect();
            if joints.is_empty() {
                return Err(GltfError::Schema { path: format!("{spath}.joints"), message: "empty joint list".into() });
            }
            let mut first_use: Vec<Option<usize>> = vec![None; skeleton.len()];
            for (k, &j) in joints.iter().enumerate() {
                if let Some(prev) = first_use[j].replace(k) {
                    return Err(GltfError::JointOutOfRange {
                        path: format!("{spath}.joints[{k}]"),
                        message: format!("node is listed twice (also at index {prev})"),
                    });
                }
            }
            let ibms: Vec<Mat4> = match skin.inverse_bind_matrices() {
                None => vec![Mat4::identity(); joints.len()],
                Some(acc) => {
                    let apath = format!("{spath}.inverseBindMatrices");
                    check_accessor(
                        &acc,
                        self.buffers,
                        &Want { dims: &[Dimensions::Mat4], types: &[F32], what: "MAT4 FLOAT" },
                        &apath,
                    )?;
                    if acc.count() < joints.len() {
                        return Err(GltfError::accessor(
                            apath,
                            format!(
                                "accessors[{}] has only {} matrices for {} joints",
                                acc.index(),
                                acc.count(),
                                joints.len()
                            ),
                        ));
                    }
                    let m: Vec<[[f32; 4]; 4]> = skin
                        .reader(self.data())
                        .read_inverse_bind_matrices()
                        .ok_or_else(|| GltfError::accessor(apath.clone(), "cannot be read"))?
                        // The spec allows more matrices than joints; the extra ones are unused.
                        .take(joints.len())
                        .collect();
                    let flat: Vec<[f32; 16]> = m
                        .iter()
                        .map(|c| {
                            let mut a = [0.0; 16];
                            a.copy_from_slice(c.as_flattened());
                            a
                        })
                        .collect();
                    check_finite(&flat, &apath, "inverse bind matrix")?;
                    flat.iter().map(|a| Mat4::from_column_slice(a)).collect()
                }
            };
            let core = Skin::new(joints.clone(), ibms.clone(), skeleton)
                .map_err(|e| GltfError::JointOutOfRange { path: format!("{spath}.joints"), message: e.to_string() })?;
            // Bind pose (chapter 10): rest world transforms, skin joints replaced by
            // inverse(IBM), converted back to parent-local.
            let mut world = rest_world.clone();
            for (k, (&j, ibm)) in joints.iter().zip(&ibms).enumerate() {
                match ibm.try_inverse() {
                    Some(inv) => world[j] = inv,
                    None => self.warnings.push(format!(
                        "{spath}.inverseBindMatrices[{k}] is singular; the bind pose keeps the rest transform there"
                    )),
                }
            }
            let mut locals = Vec::with_capacity(skeleton.len());
            for (i, w) in world.iter().enumerate() {
                let local = match skeleton.parent(i) {
                    Some(p) => world[p].try_inverse().map_or(*w, |inv| inv * w),
                    None => *w,
                };
                let t = Transform::from_matrix(&local);
                if !t.is_finite() {
                    let node = skeleton.source_index(i).expect("joint has a source");
                    return Err(GltfError::NonFinite {
                        path: format!("{spath}.inverseBindMatrices"),
                        what: format!(
                            "bind transform at nodes[{node}] ({:?}), derived from the inverse bind matrices",
                            skeleton.name(i).unwrap_or("")
                        ),
                    });
                }
                locals.push(t);
            }
            out.push(SkinInfo {
                name: skin.name().unwrap_or("").to_owned(),
                skin: core,
                nodes: skin.joints().map(|n| n.index()).collect(),
                bind_pose: Pose::from_locals(locals),
            });
        }
        Ok(out)
    }
}
