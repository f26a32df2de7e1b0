//! Mesh LODs of crowd characters: simplified index lists of one skinned mesh, made at bake
//! time with meshoptimizer's simplifier, each with its geometric error recorded.
//!
//! Every level draws the mesh's own vertices with fewer triangles, so skin weights, joint
//! indices, normals and texture coordinates are the mesh's, unchanged; vertices that share a
//! position but not their attributes (UV seams, hard edges) are kept together by the
//! simplifier, which only collapses along such seams, never across them. A level's
//! [`MeshLod::error`] is an object-space distance that bounds how far the full-detail
//! surface lies from the level's surface: the larger of the simplifier's own estimate and the
//! deviation measured at every full-detail vertex and edge midpoint ([`deviation`]).
//!
//! A renderer picks a character's level from the error projected to the screen
//! ([`select_level`]): the coarsest level whose error, seen at the character's distance,
//! covers at most a given number of pixels. The choice follows resolution and field of view,
//! not a fixed distance.
//!
//! ```
//! use anim_crowd::lod::{MeshLods, select_level};
//! use anim_math::Vec3;
//!
//! // A 16 × 16 grid of quads, flat but for a bump: most of it simplifies away.
//! let n = 17;
//! let positions: Vec<Vec3> = (0..n * n)
//!     .map(|i| {
//!         let (x, z) = ((i % n) as f32, (i / n) as f32);
//!         Vec3::new(x, if (x, z) == (8.0, 8.0) { 0.5 } else { 0.0 }, z)
//!     })
//!     .collect();
//! let mut indices = Vec::new();
//! for z in 0..n - 1 {
//!     for x in 0..n - 1 {
//!         let i = (z * n + x) as u32;
//!         indices.extend_from_slice(&[i, i + n as u32, i + 1, i + 1, i + n as u32, i + n as u32 + 1]);
//!     }
//! }
//! let lods = MeshLods::build(&positions, &indices, &[0.25, 0.05])?;
//! assert_eq!(lods.levels().len(), 3);
//! assert!(lods.levels()[2].indices.len() < indices.len() / 4);
//! // Far enough, the coarsest level's error is below one pixel.
//! let errors: Vec<f32> = lods.levels().iter().map(|l| l.error).collect();
//! assert_eq!(select_level(&errors, 1.0, 1.0e6, 1000.0), 2);
//! assert_eq!(select_level(&errors, 1.0, 0.0, 1000.0), 0);
//! # Ok::<(), anim_crowd::lod::LodError>(())
//! ```

use anim_core::skin::Mesh;
use anim_math::Vec3;

/// The most levels (full detail included) a [`MeshLods`] holds: what the GPU crowd's
/// indirect arguments have room for.
pub const MAX_LODS: usize = 4;

/// Why LODs cannot be made from a mesh.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum LodError {
    /// The index list is not whole triangles.
    #[error("{0} indices are not whole triangles")]
    NotTriangles(usize),
    /// An index names a vertex the mesh does not have.
    #[error("index {position} names vertex {index} of {vertices}")]
    IndexOutOfRange {
        /// Position in the index list.
        position: usize,
        /// The index.
        index: u32,
        /// Vertices of the mesh.
        vertices: usize,
    },
    /// A level's triangle ratio is not in (0, 1), or not below the previous level's.
    #[error("LOD ratio {0} is not in (0, 1) and below the previous level's")]
    InvalidRatio(f32),
    /// More levels than [`MAX_LODS`] (full detail included).
    #[error("{0} levels asked for, at most {MAX_LODS} are supported (full detail included)")]
    TooManyLevels(usize),
    /// A position is not finite.
    #[error("vertex {0} has a position that is not finite")]
    NonFinite(usize),
    /// The welding attributes are not `stride` values a vertex.
    #[error("{len} attribute values for {vertices} vertices of {stride}")]
    Attributes {
        /// Values given.
        len: usize,
        /// Vertices of the mesh.
        vertices: usize,
        /// Values a vertex.
        stride: usize,
    },
}

/// One level of detail: an index list over the full mesh's vertices, and its error.
#[derive(Clone, Debug, PartialEq)]
pub struct MeshLod {
    /// Triangle list indices into the full mesh's vertices.
    pub indices: Vec<u32>,
    /// Object-space distance bounding how far the full-detail surface lies from this level's
    /// surface (0 for full detail).
    pub error: f32,
}

/// The levels of detail of one mesh, full detail first, errors non-decreasing.
#[derive(Clone, Debug, PartialEq)]
pub struct MeshLods {
    levels: Vec<MeshLod>,
}

impl MeshLods {
    /// Level 0 is the mesh itself; level `k + 1` is simplified towards `ratios[k]` of its
    /// triangles (each ratio in (0, 1), decreasing). A level the simplifier cannot reduce
    /// further repeats the previous level's triangles.
    ///
    /// # Errors
    /// [`LodError`] for an index list that is not whole triangles or names missing
    /// vertices, a position that is not finite, or ratios out of order or too many.
    pub fn build(positions: &[Vec3], indices: &[u32], ratios: &[f32]) -> Result<Self, LodError> {
        Self::build_welded(positions, &[], 0, indices, ratios)
    }

    /// As [`MeshLods::build`], but vertices whose position and `stride` attribute values
    /// (`attributes[v · stride..][..stride]`: texture coordinates, joints, weights, whatever
    /// must not change across a collapse) are bitwise equal are simplified as one, the
    /// first of them standing for all. Meshes split per face (flat-shaded ones, whose
    /// vertices repeat with another normal: the simplifier sees every triangle alone and
    /// cannot reduce them) simplify this way; the levels then name one of the split
    /// vertices and take its normal. Vertices that differ in an attribute stay apart, so
    /// seams in those attributes stay. With `stride` 0 nothing is welded.
    ///
    /// # Errors
    /// As [`MeshLods::build`]; [`LodError::Attributes`] when `attributes` does not hold
    /// `stride` values a vertex.
    pub fn build_welded(
        positions: &[Vec3],
        attributes: &[f32],
        stride: usize,
        indices: &[u32],
        ratios: &[f32],
    ) -> Result<Self, LodError> {
        if stride > 0 && attributes.len() != positions.len() * stride {
            return Err(LodError::Attributes { len: attributes.len(), vertices: positions.len(), stride });
        }
        if !indices.len().is_multiple_of(3) {
            return Err(LodError::NotTriangles(indices.len()));
        }
        if let Some((position, &index)) = indices.iter().enumerate().find(|(_, i)| **i as usize >= positions.len()) {
            return Err(LodError::IndexOutOfRange { position, index, vertices: positions.len() });
        }
        if let Some(v) = positions.iter().position(|p| !p.iter().all(|x| x.is_finite())) {
            return Err(LodError::NonFinite(v));
        }
        if ratios.len() + 1 > MAX_LODS {
            return Err(LodError::TooManyLevels(ratios.len() + 1));
        }
        let mut last = 1.0;
        for &r in ratios {
            if !(r > 0.0 && r < last) {
                return Err(LodError::InvalidRatio(r));
            }
            last = r;
        }
        let mut points: Vec<[f32; 3]> = positions.iter().map(|p| [p.x, p.y, p.z]).collect();
        // With welding, the simplifier sees only the welded vertices (`reps[k]` is the
        // original vertex compact vertex `k` stands for): vertices left over at the same
        // position would look like seams to it and lock the mesh.
        let mut reps: Vec<u32> = Vec::new();
        let welded: Vec<u32> = if stride == 0 {
            indices.to_vec()
        } else {
            let mut compact = std::collections::HashMap::new();
            let remap: Vec<u32> = (0..positions.len())
                .map(|v| {
                    let mut key: Vec<u32> = points[v].iter().map(|x| x.to_bits()).collect();
                    key.extend(attributes[v * stride..][..stride].iter().map(|x| x.to_bits()));
                    *compact.entry(key).or_insert_with(|| {
                        reps.push(v as u32);
                        reps.len() as u32 - 1
                    })
                })
                .collect();
            points = reps.iter().map(|&v| points[v as usize]).collect();
            indices.iter().map(|&i| remap[i as usize]).collect()
        };
        let mut levels = vec![MeshLod { indices: indices.to_vec(), error: 0.0 }];
        for &r in ratios {
            let target = ((indices.len() as f32 * r) as usize / 3 * 3).max(3);
            let mut estimate = 0.0f32;
            let simplified = meshopt::simplify_decoder(
                &welded,
                &points,
                target,
                f32::MAX,
                meshopt::SimplifyOptions::ErrorAbsolute,
                Some(&mut estimate),
            );
            let simplified: Vec<u32> =
                if reps.is_empty() { simplified } else { simplified.iter().map(|&k| reps[k as usize]).collect() };
            let prev = levels.last().expect("level 0 is always there");
            let level = if simplified.is_empty() || simplified.len() >= prev.indices.len() {
                prev.clone()
            } else {
                let measured = deviation(positions, indices, &simplified);
                MeshLod { error: estimate.max(measured).max(prev.error), indices: simplified }
            };
            levels.push(level);
        }
        Ok(Self { levels })
    }

    /// The levels of a skinned (or static) mesh, welding its vertices that agree in
    /// position, texture coordinates, joints and weights ([`MeshLods::build_welded`]):
    /// skin weights and UV seams stay, and meshes split per face still simplify.
    ///
    /// # Errors
    /// As [`MeshLods::build`].
    pub fn from_mesh(mesh: &Mesh, ratios: &[f32]) -> Result<Self, LodError> {
        let n = mesh.positions.len();
        let uvs = mesh.uvs.len() == n;
        let per = mesh.influences.as_ref().map_or(0, |i| i.per_vertex());
        let stride = if uvs { 2 } else { 0 } + 2 * per;
        let mut attributes = Vec::with_capacity(n * stride);
        for v in 0..n {
            if uvs {
                attributes.extend_from_slice(&mesh.uvs[v]);
            }
            if let Some(i) = &mesh.influences {
                attributes.extend(i.joints()[v * per..][..per].iter().map(|&j| f32::from(j)));
                attributes.extend_from_slice(&i.weights()[v * per..][..per]);
            }
        }
        // A mesh with neither still welds by position alone.
        let (attributes, stride) = if stride == 0 { (vec![0.0; n], 1) } else { (attributes, stride) };
        Self::build_welded(&mesh.positions, &attributes, stride, &mesh.indices, ratios)
    }

    /// The levels, full detail first.
    pub fn levels(&self) -> &[MeshLod] {
        &self.levels
    }

    /// Each level's error, full detail first.
    pub fn errors(&self) -> Vec<f32> {
        self.levels.iter().map(|l| l.error).collect()
    }
}

/// The level of detail of a character: the coarsest level whose error, scaled by the
/// character's `scale` and seen at `distance` from the eye, covers at most one pixel, where
/// `pixels_per_unit` is the number of pixels an object-space unit covers at distance 1 divided by
/// the pixel threshold (`height / (2 · tan(fov_y / 2)) / threshold_pixels`). `errors` are
/// non-decreasing, full detail (0) first. The GPU crowd's list pass computes the same.
pub fn select_level(errors: &[f32], scale: f32, distance: f32, pixels_per_unit: f32) -> usize {
    let mut level = 0;
    for (k, e) in errors.iter().enumerate().skip(1) {
        if e * scale.abs() * pixels_per_unit <= distance {
            level = k;
        }
    }
    level
}

/// The largest distance from the full-detail surface (`indices`: its vertices and the
/// midpoints of its edges) to the nearest triangle of `simplified`, over the same
/// `positions`.
pub fn deviation(positions: &[Vec3], indices: &[u32], simplified: &[u32]) -> f32 {
    let tris: Vec<[Vec3; 3]> = simplified
        .chunks_exact(3)
        .map(|t| [positions[t[0] as usize], positions[t[1] as usize], positions[t[2] as usize]])
        .collect();
    let nearest = |p: Vec3| tris.iter().map(|t| point_triangle_distance(p, t)).fold(f32::INFINITY, f32::min);
    let mut worst = 0.0f32;
    for t in indices.chunks_exact(3) {
        let [a, b, c] = [positions[t[0] as usize], positions[t[1] as usize], positions[t[2] as usize]];
        for p in [a, b, c, 0.5 * (a + b), 0.5 * (b + c), 0.5 * (c + a)] {
            worst = worst.max(nearest(p));
        }
    }
    worst
}

/// The distance from `p` to the triangle `t` (closest point by region, as in Ericson's
/// "Real-Time Collision Detection", 5.1.5).
pub fn point_triangle_distance(p: Vec3, t: &[Vec3; 3]) -> f32 {
    let [a, b, c] = *t;
    let (ab, ac, ap) = (b - a, c - a, p - a);
    let (d1, d2) = (ab.dot(&ap), ac.dot(&ap));
    if d1 <= 0.0 && d2 <= 0.0 {
        return (p - a).norm();
    }
    let bp = p - b;
    let (d3, d4) = (ab.dot(&bp), ac.dot(&bp));
    if d3 >= 0.0 && d4 <= d3 {
        return (p - b).norm();
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        let v = d1 / (d1 - d3);
        return (p - (a + v * ab)).norm();
    }
    let cp = p - c;
    let (d5, d6) = (ab.dot(&cp), ac.dot(&cp));
    if d6 >= 0.0 && d5 <= d6 {
        return (p - c).norm();
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        let w = d2 / (d2 - d6);
        return (p - (a + w * ac)).norm();
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        let w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        return (p - (b + w * (c - b))).norm();
    }
    let denom = 1.0 / (va + vb + vc);
    if !denom.is_finite() {
        // A degenerate triangle: the nearest of its edges' endpoints.
        return [a, b, c].iter().map(|q| (p - q).norm()).fold(f32::INFINITY, f32::min);
    }
    let (v, w) = (vb * denom, vc * denom);
    (p - (a + ab * v + ac * w)).norm()
}
