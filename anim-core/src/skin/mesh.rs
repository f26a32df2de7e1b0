//! Meshes and their skinning influences.

use super::error::SkinningError;
use anim_math::Vec3;

/// 2⁶⁰ and 2⁶⁴: weights whose largest lies outside `[2⁻⁶⁰, 2⁶⁰]` are rescaled by `2^∓64`
/// before they are summed (see [`Influences::new`]).
const TWO_POW_60: f32 = (1u64 << 60) as f32;
const TWO_POW_64: f32 = TWO_POW_60 * 16.0;

/// Joint influences of every vertex: `per_vertex` (joint, weight) pairs a vertex, any
/// count (4 is the common layout; glTF's `JOINTS_1`… give 8, 12, …).
///
/// Construction validates once what the skinning loops then rely on: weights are finite
/// and non-negative, every joint with a non-zero weight exists, and weights are divided by
/// their sum (so they need not sum to one in the source). The division is overflow- and
/// underflow-safe: extreme weights are first rescaled by a power of two, so `(1e-40, 0, 0, 0)`
/// becomes `(1, 0, 0, 0)` and `(3e38, 3e38)` becomes `(0.5, 0.5)`. A vertex whose weights
/// are all zero ("unweighted") keeps its rest position and normal when skinned. A zero-weight slot may name any
/// joint (exporters leave garbage there); it is set to joint 0 and ignored.
///
/// **Layouts.** Besides the `u16` joints and `f32` weights that [`Influences::joints`] and
/// [`Influences::weights`] return (what the GPU paths upload), influences can carry a
/// compact copy for the CPU skinning loops ([`Influences::with_layout`],
/// [`InfluenceLayout`]): joints as `u8` or `u16`, weights as unorm16 with the last weight
/// of each vertex derived from the others, so that the quantized weights sum to exactly 1.
///
/// ```
/// use anim_core::skin::Influences;
///
/// // Two vertices, two slots each; weights are divided by their sum.
/// let inf = Influences::new(2, vec![0, 1, 1, 0], vec![3.0, 1.0, 1.0, 0.0], 2)?;
/// assert_eq!(inf.weights(), &[0.75, 0.25, 1.0, 0.0]);
/// // A joint the palette does not have is refused once, here, not per vertex per frame.
/// assert!(Influences::new(1, vec![5], vec![1.0], 2).is_err());
/// # Ok::<(), anim_core::skin::SkinningError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Influences {
    per_vertex: usize,
    joints: Vec<u16>,
    weights: Vec<f32>,
    unweighted: Vec<u32>,
    joint_bound: usize,
    packed: Packed,
    /// Every (first joint, other weighted joint) pair of a vertex, once, as
    /// `first << 16 | other`, sorted: the hemisphere tests dual-quaternion skinning makes.
    pivot_pairs: Vec<u32>,
    /// The vertices that make any pivot pair, grouped by first joint (ascending within a
    /// group): joint `j`'s are `pivot_vertices[pivot_starts[j]..pivot_starts[j + 1]]`.
    pivot_vertices: Vec<u32>,
    /// `joint_bound + 1` offsets into `pivot_vertices`.
    pivot_starts: Vec<u32>,
}

/// The largest unorm16 value: a stored weight `k` decodes to `k / 65535`.
pub const UNORM16_ONE: u32 = 65_535;

/// Which influence data the CPU skinning loops read (see [`Influences::with_layout`]).
///
/// The compact layouts quantize weights to unorm16 (`k / 65535`): each decoded weight is
/// within `1 / 65535` of the validated `f32` weight, and the `per_vertex − 1` stored
/// weights of a vertex plus the derived last one (`65535 − Σ stored`) sum to exactly 65535.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum InfluenceLayout {
    /// `u16` joints and `f32` weights, [`Influences::joints`] and [`Influences::weights`]
    /// themselves (24 bytes a vertex with 4 influences).
    #[default]
    F32,
    /// `u16` joints and unorm16 weights, the last derived (14 bytes a vertex with 4).
    U16Unorm16,
    /// `u8` joints and unorm16 weights, the last derived (10 bytes a vertex with 4); needs
    /// a [`Influences::joint_bound`] of at most 256.
    U8Unorm16,
}

/// The compact copy of the influences, if any.
#[derive(Clone, Debug, Default, PartialEq)]
enum Packed {
    /// No copy: the loops read `joints` and `weights`.
    #[default]
    None,
    /// unorm16 weights, `per_vertex − 1` a vertex; joints are `Influences::joints`.
    U16 { weights: Vec<u16> },
    /// `u8` joints, `per_vertex` a vertex, and unorm16 weights, `per_vertex − 1` a vertex.
    U8 { joints: Vec<u8>, weights: Vec<u16> },
}

/// What the skinning loops read: joints `per_vertex` a vertex; `f32` weights `per_vertex`
/// a vertex, or unorm16 weights `per_vertex − 1` a vertex (the last derived).
#[derive(Clone, Copy, Debug)]
pub(crate) enum InfluenceView<'a> {
    F32 { joints: &'a [u16], weights: &'a [f32] },
    U16 { joints: &'a [u16], weights: &'a [u16] },
    U8 { joints: &'a [u8], weights: &'a [u16] },
}

/// See [`Influences::pivot_pairs`]. A zero-weight slot is left out: flipping its weight
/// adds `±0` to the blend, which changes nothing but, at most, the sign of a zero.
fn pivot_pairs(per: usize, joints: &[u16], weights: &[f32]) -> Vec<u32> {
    let mut pairs: Vec<u32> = joints
        .chunks_exact(per)
        .zip(weights.chunks_exact(per))
        .flat_map(|(js, ws)| {
            let first = u32::from(js[0]);
            js.iter()
                .zip(ws)
                .skip(1)
                .filter(move |&(&j, &w)| w != 0.0 && u32::from(j) != first)
                .map(move |(&j, _)| (first << 16) | u32::from(j))
        })
        .collect();
    pairs.sort_unstable();
    pairs.dedup();
    pairs.shrink_to_fit();
    pairs
}

/// The vertices with a pivot pair (a weighted slot after the first whose joint differs
/// from the first's), grouped by first joint: `(vertices, starts)` as in
/// [`Influences::pivot_vertices`].
fn pivot_vertices(per: usize, joints: &[u16], weights: &[f32], joint_bound: usize) -> (Vec<u32>, Vec<u32>) {
    let pairs = |js: &[u16], ws: &[f32]| js.iter().zip(ws).skip(1).any(|(&j, &w)| w != 0.0 && j != js[0]);
    let mut starts = vec![0u32; joint_bound + 1];
    for (js, ws) in joints.chunks_exact(per).zip(weights.chunks_exact(per)) {
        if pairs(js, ws) {
            // Below the bound: a weighted first joint is, and an unweighted slot holds joint
            // 0 while another slot of the vertex is weighted.
            starts[usize::from(js[0]) + 1] += 1;
        }
    }
    for j in 0..joint_bound {
        starts[j + 1] += starts[j];
    }
    let mut next = starts.clone();
    let mut vertices = vec![0u32; starts[joint_bound] as usize];
    for (v, (js, ws)) in joints.chunks_exact(per).zip(weights.chunks_exact(per)).enumerate() {
        if pairs(js, ws) {
            let slot = &mut next[usize::from(js[0])];
            // Vertex indices fit a u32 (checked by `Influences::new`).
            vertices[*slot as usize] = v as u32;
            *slot += 1;
        }
    }
    (vertices, starts)
}

/// Quantizes one vertex's weights (summing to 1, or all zero) to unorm16 values that sum
/// to exactly [`UNORM16_ONE`] (all zero stays zero), each within 1 of `w · 65535`: the
/// floors, plus one for the slots with the largest remainders until the sum is reached
/// (largest-remainder rounding).
fn quantize_unorm16(ws: &[f32], out: &mut Vec<u16>) {
    let sum: f64 = ws.iter().map(|&w| f64::from(w)).sum();
    let start = out.len();
    if sum <= 0.0 {
        out.extend(ws.iter().map(|_| 0u16));
        return;
    }
    let exact = |w: f32| f64::from(w) / sum * f64::from(UNORM16_ONE);
    let mut total = 0u32;
    for &w in ws {
        // In [0, 65535]: w / sum ≤ 1.
        let k = exact(w).floor() as u16;
        total += u32::from(k);
        out.push(k);
    }
    // Σ floors > Σ exact − slots, so fewer than `slots` units are missing.
    for _ in total..UNORM16_ONE {
        let slot = (0..ws.len())
            .max_by(|&a, &b| {
                let ra = exact(ws[a]) - f64::from(out[start + a]);
                let rb = exact(ws[b]) - f64::from(out[start + b]);
                ra.total_cmp(&rb).then(b.cmp(&a))
            })
            .expect("a vertex has at least one slot");
        out[start + slot] += 1;
    }
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
            let mut largest = 0.0f32;
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
                largest = largest.max(*w);
            }
            if largest > 0.0 {
                // A largest weight far from 1 is first brought nearer by an exact power of
                // two: above 2^60 scaled into (2^-4, 2^64], below 2^-60 (subnormals
                // included, ≥ 2^-149) into [2^-85, 2^4). Then the sum (≤ 2^64 · slots) and
                // its inverse are finite and non-zero. Ordinary weights stay bit for bit.
                let pow2 = if largest > TWO_POW_60 {
                    1.0 / TWO_POW_64
                } else if largest < 1.0 / TWO_POW_60 {
                    TWO_POW_64
                } else {
                    1.0
                };
                if pow2 != 1.0 {
                    ws.iter_mut().for_each(|w| *w *= pow2);
                }
                let inv = 1.0 / ws.iter().sum::<f32>();
                ws.iter_mut().for_each(|w| *w *= inv);
            } else {
                unweighted.push(v as u32);
            }
        }
        let pivot_pairs = pivot_pairs(per_vertex, &joints, &weights);
        let (pivot_vertices, pivot_starts) = pivot_vertices(per_vertex, &joints, &weights, joint_bound);
        Ok(Self {
            per_vertex,
            joints,
            weights,
            unweighted,
            joint_bound,
            packed: Packed::None,
            pivot_pairs,
            pivot_vertices,
            pivot_starts,
        })
    }

    /// Every pair (joint of a vertex's first slot, joint of another of its slots with a
    /// non-zero weight, the two different) that occurs in the mesh, once, as
    /// `first << 16 | other`, sorted. Dual-quaternion skinning blends each vertex in the
    /// hemisphere of its first joint's rotation: when no such pair's rotations lie in
    /// opposite hemispheres, no vertex flips a weight, and the SIMD loops skip the tests.
    #[inline]
    pub fn pivot_pairs(&self) -> &[u32] {
        &self.pivot_pairs
    }

    /// The vertices whose first slot is `joint` and that make a pivot pair (see
    /// [`Influences::pivot_pairs`]), ascending: those a flip of one of `joint`'s pairs can
    /// touch. Empty for a joint at or past [`Influences::joint_bound`].
    #[inline]
    pub(crate) fn pivot_vertices(&self, joint: usize) -> &[u32] {
        match (self.pivot_starts.get(joint), self.pivot_starts.get(joint + 1)) {
            (Some(&a), Some(&b)) => &self.pivot_vertices[a as usize..b as usize],
            _ => &[],
        }
    }

    /// These influences with a compact copy in `layout` for the CPU skinning loops (or
    /// without one, for [`InfluenceLayout::F32`]). [`Influences::joints`] and
    /// [`Influences::weights`] keep returning the validated data.
    ///
    /// # Errors
    /// [`SkinningError::Layout`] for [`InfluenceLayout::U8Unorm16`] when a weighted joint
    /// index is 256 or more.
    pub fn with_layout(mut self, layout: InfluenceLayout) -> Result<Self, SkinningError> {
        self.set_layout(layout)?;
        Ok(self)
    }

    /// In-place [`Influences::with_layout`]; on error the layout is unchanged.
    ///
    /// # Errors
    /// As [`Influences::with_layout`].
    pub fn set_layout(&mut self, layout: InfluenceLayout) -> Result<(), SkinningError> {
        let per = self.per_vertex;
        let quantized = || {
            let mut all = Vec::with_capacity(self.vertex_count() * (per - 1));
            let mut one = Vec::with_capacity(per);
            for ws in self.weights.chunks_exact(per) {
                one.clear();
                quantize_unorm16(ws, &mut one);
                // The last weight is derived, not stored.
                all.extend_from_slice(&one[..per - 1]);
            }
            all
        };
        self.packed = match layout {
            InfluenceLayout::F32 => Packed::None,
            InfluenceLayout::U16Unorm16 => Packed::U16 { weights: quantized() },
            InfluenceLayout::U8Unorm16 => {
                if self.joint_bound > 256 {
                    return Err(SkinningError::Layout(format!(
                        "u8 joint indices need at most 256 joints, the influences use {}",
                        self.joint_bound
                    )));
                }
                // Every joint index is below joint_bound ≤ 256 (zero-weight slots are 0).
                let joints = self.joints.iter().map(|&j| j as u8).collect();
                Packed::U8 { joints, weights: quantized() }
            }
        };
        Ok(())
    }

    /// The layout the CPU skinning loops read.
    #[inline]
    pub fn layout(&self) -> InfluenceLayout {
        match self.packed {
            Packed::None => InfluenceLayout::F32,
            Packed::U16 { .. } => InfluenceLayout::U16Unorm16,
            Packed::U8 { .. } => InfluenceLayout::U8Unorm16,
        }
    }

    /// The stored unorm16 weights of a compact layout, `per_vertex − 1` a vertex (the last
    /// weight of a vertex is `65535 − Σ stored`), or `None` for [`InfluenceLayout::F32`].
    #[inline]
    pub fn unorm16_weights(&self) -> Option<&[u16]> {
        match &self.packed {
            Packed::None => None,
            Packed::U16 { weights } | Packed::U8 { weights, .. } => Some(weights),
        }
    }

    /// The data the skinning loops read, by layout.
    #[inline]
    pub(crate) fn view(&self) -> InfluenceView<'_> {
        match &self.packed {
            Packed::None => InfluenceView::F32 { joints: &self.joints, weights: &self.weights },
            Packed::U16 { weights } => InfluenceView::U16 { joints: &self.joints, weights },
            Packed::U8 { joints, weights } => InfluenceView::U8 { joints, weights },
        }
    }

    /// The `u8` joint indices of [`InfluenceLayout::U8Unorm16`], `per_vertex` a vertex.
    #[inline]
    pub fn joints_u8(&self) -> Option<&[u8]> {
        match &self.packed {
            Packed::U8 { joints, .. } => Some(joints),
            _ => None,
        }
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
///
/// ```
/// use anim_core::skin::{Influences, Mesh};
/// use anim_math::Vec3;
///
/// // One triangle, every vertex on joint 0. glTF files may omit normals: compute them.
/// let mesh = Mesh {
///     positions: vec![Vec3::zeros(), Vec3::x(), Vec3::y()],
///     normals: Vec::new(),
///     uvs: Vec::new(),
///     influences: Some(Influences::new(1, vec![0, 0, 0], vec![1.0; 3], 1)?),
///     indices: vec![0, 1, 2],
/// };
/// assert_eq!(mesh.vertex_count(), 3);
/// assert_eq!(mesh.smooth_normals(), vec![Vec3::z(); 3]);
/// # Ok::<(), anim_core::skin::SkinningError>(())
/// ```
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

    /// Extreme but finite weights normalize to the right finite values: a subnormal lone
    /// weight does not overflow its inverse, two huge weights do not overflow their sum.
    #[test]
    fn extreme_weights_normalize_finitely() {
        let inf = Influences::new(4, vec![0, 1, 0, 0], vec![1e-40, 0.0, 0.0, 0.0], 2).unwrap();
        assert_eq!(inf.weights(), &[1.0, 0.0, 0.0, 0.0]);
        let inf = Influences::new(2, vec![0, 1], vec![3e38, 3e38], 2).unwrap();
        assert_eq!(inf.weights(), &[0.5, 0.5]);
        let inf = Influences::new(3, vec![0, 1, 1], vec![f32::MAX, f32::MAX, f32::MAX / 2.0], 2).unwrap();
        assert!((inf.weights()[0] - 0.4).abs() < 1e-6 && (inf.weights()[2] - 0.2).abs() < 1e-6);
        // Weights that are all zero: unweighted, no NaN.
        let inf = Influences::new(2, vec![1, 0], vec![0.0, 0.0], 2).unwrap();
        assert_eq!(inf.weights(), &[0.0, 0.0]);
        assert_eq!(inf.unweighted(), &[0]);
        // Skinning such a vertex keeps its rest place: see the skinning module's tests.
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
