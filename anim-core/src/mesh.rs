//! Meshes and their skinning influences.

use crate::SkinningError;
use anim_math::Vec3;

/// Joint influences of every vertex: `per_vertex` (joint, weight) pairs a vertex, any
/// count (4 is the common layout; glTF's `JOINTS_1`… give 8, 12, …).
///
/// Construction validates once what the skinning loops then rely on: weights are finite
/// and non-negative, every joint with a non-zero weight exists, and weights are divided by
/// their sum (so they need not sum to one in the source). A vertex whose weights are all
/// zero keeps its rest position and normal when skinned. A zero-weight slot may name any
/// joint (exporters leave garbage there); it is set to joint 0 and ignored.
#[derive(Clone, Debug, PartialEq)]
pub struct Influences {
    per_vertex: usize,
    joints: Vec<u16>,
    weights: Vec<f32>,
    unweighted: Vec<u32>,
    joint_bound: usize,
}

impl Influences {
    /// Validates and normalizes influences for a skin of `joint_count` joints.
    ///
    /// # Errors
    /// Mismatched lengths, `per_vertex == 0`, a negative or non-finite weight, or a joint
    /// with non-zero weight at or beyond `joint_count`.
    pub fn new(
        per_vertex: usize,
        mut joints: Vec<u16>,
        mut weights: Vec<f32>,
        joint_count: usize,
    ) -> Result<Self, SkinningError> {
        if per_vertex == 0 {
            return Err(SkinningError::Layout("zero influences per vertex".into()));
        }
        if joints.len() != weights.len() || !joints.len().is_multiple_of(per_vertex) {
            return Err(SkinningError::Layout(format!(
                "{} joint indices and {} weights do not make whole vertices of {per_vertex} influences",
                joints.len(),
                weights.len()
            )));
        }
        if joints.len() / per_vertex > u32::MAX as usize {
            return Err(SkinningError::Layout("more than 2^32 vertices".into()));
        }
        let mut unweighted = Vec::new();
        let mut joint_bound = 0usize;
        for (v, (js, ws)) in joints.chunks_exact_mut(per_vertex).zip(weights.chunks_exact_mut(per_vertex)).enumerate() {
            let mut sum = 0.0f32;
            for (slot, (j, w)) in js.iter_mut().zip(ws.iter()).enumerate() {
                if !w.is_finite() || *w < 0.0 {
                    return Err(SkinningError::BadWeight { vertex: v, slot, weight: *w });
                }
                if *w == 0.0 {
                    *j = 0;
                    continue;
                }
                if usize::from(*j) >= joint_count {
                    return Err(SkinningError::JointOutOfRange {
                        vertex: v,
                        slot,
                        joint: usize::from(*j),
                        count: joint_count,
                    });
                }
                joint_bound = joint_bound.max(usize::from(*j) + 1);
                sum += w;
            }
            if sum > 0.0 {
                let inv = 1.0 / sum;
                ws.iter_mut().for_each(|w| *w *= inv);
            } else {
                unweighted.push(v as u32);
            }
        }
        Ok(Self { per_vertex, joints, weights, unweighted, joint_bound })
    }

    /// Influences per vertex.
    #[inline]
    pub fn per_vertex(&self) -> usize {
        self.per_vertex
    }

    /// Number of vertices.
    #[inline]
    pub fn vertex_count(&self) -> usize {
        self.joints.len() / self.per_vertex
    }

    /// Joint indices, `per_vertex` a vertex (indices into the skin's palette).
    #[inline]
    pub fn joints(&self) -> &[u16] {
        &self.joints
    }

    /// Normalized weights, `per_vertex` a vertex; all zero for an unweighted vertex.
    #[inline]
    pub fn weights(&self) -> &[f32] {
        &self.weights
    }

    /// Vertices whose weights are all zero (they keep their rest position).
    #[inline]
    pub fn unweighted(&self) -> &[u32] {
        &self.unweighted
    }

    /// One more than the largest joint index used with a non-zero weight: the shortest
    /// palette these influences can be skinned with.
    #[inline]
    pub fn joint_bound(&self) -> usize {
        self.joint_bound
    }

    /// How many vertices have exactly `k` non-zero weights, for `k` in `0..=per_vertex`.
    pub fn histogram(&self) -> Vec<usize> {
        let mut h = vec![0; self.per_vertex + 1];
        for ws in self.weights.chunks_exact(self.per_vertex) {
            h[ws.iter().filter(|w| **w > 0.0).count()] += 1;
        }
        h
    }
}

/// A triangle mesh as the runtime sees it (the book's `Mesh`): bind-pose positions,
/// normals, texture coordinates, skinning influences (absent for a static mesh) and
/// triangle indices.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Mesh {
    /// Bind-pose positions.
    pub positions: Vec<Vec3>,
    /// Unit normals, one a vertex, or empty.
    pub normals: Vec<Vec3>,
    /// Texture coordinates, one a vertex, or empty.
    pub uvs: Vec<[f32; 2]>,
    /// Skinning influences, or `None` for a static mesh.
    pub influences: Option<Influences>,
    /// Triangle list indices (three a triangle).
    pub indices: Vec<u32>,
}

impl Mesh {
    /// Number of vertices.
    pub fn vertex_count(&self) -> usize {
        self.positions.len()
    }

    /// Axis-aligned bounds `(min, max)` of the positions, or `None` when empty.
    pub fn bounds(&self) -> Option<(Vec3, Vec3)> {
        let first = *self.positions.first()?;
        Some(self.positions.iter().fold((first, first), |(lo, hi), p| (lo.inf(p), hi.sup(p))))
    }

    /// Smooth vertex normals from the triangles: each vertex gets the sum of the
    /// (area-weighted) face normals around it, normalized. A vertex that no triangle uses,
    /// or whose faces cancel or are degenerate, gets +y. Triangles naming a vertex out of
    /// range are skipped. For meshes that come without normals.
    pub fn smooth_normals(&self) -> Vec<Vec3> {
        let positions = &self.positions;
        let mut n = vec![Vec3::zeros(); positions.len()];
        for t in self.indices.chunks_exact(3) {
            let [a, b, c] = [t[0] as usize, t[1] as usize, t[2] as usize];
            if a >= positions.len() || b >= positions.len() || c >= positions.len() {
                continue;
            }
            let f = (positions[b] - positions[a]).cross(&(positions[c] - positions[a]));
            n[a] += f;
            n[b] += f;
            n[c] += f;
        }
        for v in &mut n {
            let l = v.norm();
            *v = if l > 1e-20 { *v / l } else { Vec3::new(0.0, 1.0, 0.0) };
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_and_records_unweighted() {
        let inf = Influences::new(2, vec![0, 1, 1, 9, 0, 0], vec![1.0, 3.0, 2.0, 0.0, 0.0, 0.0], 2).unwrap();
        assert_eq!(inf.weights(), &[0.25, 0.75, 1.0, 0.0, 0.0, 0.0]);
        // the zero-weight slot naming joint 9 was cleared, not rejected
        assert_eq!(inf.joints()[3], 0);
        assert_eq!(inf.unweighted(), &[2]);
        assert_eq!(inf.joint_bound(), 2);
        assert_eq!(inf.histogram(), vec![1, 1, 1]);
    }

    #[test]
    fn smooth_normals_of_a_folded_quad() {
        // Two triangles: one in the xy plane (normal +z), one in the xz plane (normal -y
        // for this winding); the shared edge gets the normalized sum.
        let mesh = Mesh {
            positions: vec![
                Vec3::new(0.0, 0.0, 0.0),
                Vec3::new(1.0, 0.0, 0.0),
                Vec3::new(0.0, 1.0, 0.0),
                Vec3::new(0.0, 0.0, 1.0),
                Vec3::new(5.0, 5.0, 5.0),
            ],
            indices: vec![0, 1, 2, 0, 1, 3, 0, 1, 9],
            ..Mesh::default()
        };
        let n = mesh.smooth_normals();
        assert!((n[2] - Vec3::z()).norm() < 1e-6);
        assert!((n[3] + Vec3::y()).norm() < 1e-6);
        let shared = Vec3::new(0.0, -1.0, 1.0).normalize();
        assert!((n[0] - shared).norm() < 1e-6 && (n[1] - shared).norm() < 1e-6);
        // Unused vertex: +y.
        assert_eq!(n[4], Vec3::y());
    }

    #[test]
    fn rejects_bad_input() {
        assert!(matches!(
            Influences::new(2, vec![0, 5], vec![0.5, 0.5], 2),
            Err(SkinningError::JointOutOfRange { vertex: 0, slot: 1, joint: 5, count: 2 })
        ));
        assert!(matches!(Influences::new(1, vec![0], vec![-1.0], 2), Err(SkinningError::BadWeight { .. })));
        assert!(matches!(Influences::new(1, vec![0], vec![f32::NAN], 2), Err(SkinningError::BadWeight { .. })));
        assert!(matches!(Influences::new(4, vec![0, 0], vec![1.0, 0.0], 2), Err(SkinningError::Layout(_))));
        assert!(matches!(Influences::new(0, vec![], vec![], 2), Err(SkinningError::Layout(_))));
    }
}
