//! Morph targets (blend shapes) and their animated weights, as glTF 2.0 defines them.
//!
//! A [`MorphTargets`] holds, for one mesh, `target_count` sets of per-vertex deltas for
//! positions, normals and tangents. With weights `wᵢ` the morphed attribute is
//!
//! ```text
//! morphed = base + Σᵢ wᵢ · Δᵢ
//! ```
//!
//! for positions, normals and tangents alike ([`MorphTargets::apply`] normalizes morphed
//! normals; tangents are left to the caller). Morphing comes **before** skinning, as the glTF
//! specification requires. Weights are not clamped: any finite value is allowed.
//!
//! A clip animates weights with [`WeightTrack`](crate::clip::WeightTrack)s (glTF's `weights` channels): `count`
//! weights a key, `3·count` for cubic splines (in-tangents, values, out-tangents of a key).
//! Sampling writes into a caller-owned `&mut [f32]`, and [`MorphTargets::apply`] writes into
//! caller-owned buffers; neither allocates.
//!
//! Only the *active* targets (non-zero weight) cost anything: a frame with every weight zero
//! is a copy of the base attributes.
//!
//! ```
//! use anim_core::skin::MorphTargets;
//! use anim_math::Vec3;
//!
//! // One triangle, two targets: the first lifts vertex 2, the second moves vertex 1.
//! let base = [Vec3::zeros(), Vec3::x(), Vec3::y()];
//! let lift = vec![Vec3::zeros(), Vec3::zeros(), Vec3::new(0.0, 0.0, 1.0)];
//! let slide = vec![Vec3::zeros(), Vec3::new(1.0, 0.0, 0.0), Vec3::zeros()];
//! let targets = MorphTargets::new(3, 2)
//!     .with_positions(vec![lift, slide]).unwrap();
//! let mut out = [Vec3::zeros(); 3];
//! let active = targets.apply(&[0.5, 0.0], &base, &mut out, None).unwrap();
//! assert_eq!(active, 1); // the zero-weight target was skipped
//! assert_eq!(out[2], Vec3::new(0.0, 1.0, 0.5));
//! ```

use crate::length::LengthMismatch;
use anim_math::Vec3;
use thiserror::Error;

/// Why morph data could not be built or applied.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum MorphError {
    /// A slice does not have the length it must have.
    #[error("{0}")]
    WrongLength(#[from] LengthMismatch),
    /// A delta or weight is NaN or infinite.
    #[error("{what} {index} is not finite")]
    NonFinite {
        /// "position delta", "normal delta", "tangent delta", "weight".
        what: &'static str,
        /// Flat index of the bad value.
        index: usize,
    },
}

/// The morph targets of one mesh: per-target, per-vertex deltas (target-major: the delta of
/// target `t` for vertex `v` is at `t · vertex_count + v`), optional names and the default
/// weights (glTF's `node.weights`, else `mesh.weights`, else zeros).
///
/// Any number of targets is allowed. An attribute that no target moves is stored empty;
/// one that only some targets move is zero for the others.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MorphTargets {
    vertex_count: usize,
    target_count: usize,
    positions: Vec<Vec3>,
    normals: Vec<Vec3>,
    tangents: Vec<Vec3>,
    names: Vec<String>,
    default_weights: Vec<f32>,
}

impl MorphTargets {
    /// `target_count` targets over `vertex_count` vertices, with no deltas yet (every target
    /// moves nothing), no names and zero default weights.
    pub fn new(vertex_count: usize, target_count: usize) -> Self {
        Self { vertex_count, target_count, default_weights: vec![0.0; target_count], ..Self::default() }
    }

    fn deltas(&self, per_target: Vec<Vec<Vec3>>, what: &'static str) -> Result<Vec<Vec3>, MorphError> {
        LengthMismatch::check("morph targets", per_target.len(), self.target_count)?;
        let mut flat = Vec::with_capacity(self.target_count * self.vertex_count);
        for d in per_target {
            LengthMismatch::check("morph target deltas", d.len(), self.vertex_count)?;
            flat.extend_from_slice(&d);
        }
        if let Some(index) = flat.iter().position(|v| !v.iter().all(|x| x.is_finite())) {
            return Err(MorphError::NonFinite { what, index });
        }
        Ok(flat)
    }

    /// Sets the position deltas: one `Vec` per target, `vertex_count` deltas each.
    ///
    /// # Errors
    /// Wrong counts, or a non-finite delta.
    pub fn with_positions(mut self, per_target: Vec<Vec<Vec3>>) -> Result<Self, MorphError> {
        self.positions = self.deltas(per_target, "position delta")?;
        Ok(self)
    }

    /// Sets the normal deltas, as [`MorphTargets::with_positions`].
    ///
    /// # Errors
    /// Wrong counts, or a non-finite delta.
    pub fn with_normals(mut self, per_target: Vec<Vec<Vec3>>) -> Result<Self, MorphError> {
        self.normals = self.deltas(per_target, "normal delta")?;
        Ok(self)
    }

    /// Sets the tangent deltas (the `xyz` of glTF's `TANGENT`), as
    /// [`MorphTargets::with_positions`].
    ///
    /// # Errors
    /// Wrong counts, or a non-finite delta.
    pub fn with_tangents(mut self, per_target: Vec<Vec<Vec3>>) -> Result<Self, MorphError> {
        self.tangents = self.deltas(per_target, "tangent delta")?;
        Ok(self)
    }

    /// Sets the target names (glTF's `mesh.extras.targetNames`).
    ///
    /// # Errors
    /// Not one name a target.
    pub fn with_names(mut self, names: Vec<String>) -> Result<Self, MorphError> {
        LengthMismatch::check("morph target names", names.len(), self.target_count)?;
        self.names = names;
        Ok(self)
    }

    /// Sets the default weights.
    ///
    /// # Errors
    /// Not one weight a target, or a non-finite weight.
    pub fn with_default_weights(mut self, weights: Vec<f32>) -> Result<Self, MorphError> {
        LengthMismatch::check("default morph weights", weights.len(), self.target_count)?;
        if let Some(index) = weights.iter().position(|w| !w.is_finite()) {
            return Err(MorphError::NonFinite { what: "weight", index });
        }
        self.default_weights = weights;
        Ok(self)
    }

    /// Number of targets.
    #[inline]
    pub fn target_count(&self) -> usize {
        self.target_count
    }

    /// Number of vertices of the mesh.
    #[inline]
    pub fn vertex_count(&self) -> usize {
        self.vertex_count
    }

    /// Target names; empty when the source had none.
    #[inline]
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Default weights, one a target.
    #[inline]
    pub fn default_weights(&self) -> &[f32] {
        &self.default_weights
    }

    /// Position deltas, target-major; empty when no target moves positions.
    #[inline]
    pub fn position_deltas(&self) -> &[Vec3] {
        &self.positions
    }

    /// Normal deltas, target-major; empty when no target moves normals.
    #[inline]
    pub fn normal_deltas(&self) -> &[Vec3] {
        &self.normals
    }

    /// Tangent deltas, target-major; empty when no target moves tangents.
    #[inline]
    pub fn tangent_deltas(&self) -> &[Vec3] {
        &self.tangents
    }

    /// The deltas of target `t` for `attribute` (empty when that attribute has none).
    fn target<'a>(&self, attribute: &'a [Vec3], t: usize) -> &'a [Vec3] {
        if attribute.is_empty() { &[] } else { &attribute[t * self.vertex_count..(t + 1) * self.vertex_count] }
    }

    /// Morphs `base_positions` (and `normals`: `(base, out)`, when given) with `weights`:
    /// `out = base + Σ wᵢ · Δᵢ` over the targets whose weight is not zero. Morphed normals are
    /// then normalized (a morphed normal of zero length keeps its base normal). Returns the
    /// number of active targets.
    /// Allocates nothing.
    ///
    /// # Errors
    /// A slice of the wrong length, or a non-finite weight.
    pub fn apply(
        &self,
        weights: &[f32],
        base_positions: &[Vec3],
        out_positions: &mut [Vec3],
        normals: Option<(&[Vec3], &mut [Vec3])>,
    ) -> Result<usize, MorphError> {
        LengthMismatch::check("morph weights", weights.len(), self.target_count)?;
        LengthMismatch::check("base positions", base_positions.len(), self.vertex_count)?;
        LengthMismatch::check("morphed positions", out_positions.len(), self.vertex_count)?;
        if let Some(index) = weights.iter().position(|w| !w.is_finite()) {
            return Err(MorphError::NonFinite { what: "weight", index });
        }
        out_positions.copy_from_slice(base_positions);
        let mut active = 0;
        for (t, &w) in weights.iter().enumerate() {
            if w == 0.0 {
                continue;
            }
            active += 1;
            for (o, d) in out_positions.iter_mut().zip(self.target(&self.positions, t)) {
                *o += d * w;
            }
        }
        if let Some((base, out)) = normals {
            LengthMismatch::check("base normals", base.len(), self.vertex_count)?;
            LengthMismatch::check("morphed normals", out.len(), self.vertex_count)?;
            out.copy_from_slice(base);
            let mut moved = false;
            for (t, &w) in weights.iter().enumerate() {
                if w == 0.0 || self.normals.is_empty() {
                    continue;
                }
                moved = true;
                for (o, d) in out.iter_mut().zip(self.target(&self.normals, t)) {
                    *o += d * w;
                }
            }
            if moved {
                // Unit again, so that every skinning kernel (the rigid dual-quaternion one
                // keeps lengths as they come) sees what the GPU's renormalization gives.
                for (o, b) in out.iter_mut().zip(base) {
                    *o = o.try_normalize(f32::MIN_POSITIVE).unwrap_or(*b);
                }
            }
        }
        Ok(active)
    }

    /// Morphs tangents (`xyz`; the handedness `w` is left as is) like
    /// [`MorphTargets::apply`] does positions. Returns the number of active targets.
    ///
    /// # Errors
    /// A slice of the wrong length, or a non-finite weight.
    pub fn apply_tangents(
        &self,
        weights: &[f32],
        base: &[[f32; 4]],
        out: &mut [[f32; 4]],
    ) -> Result<usize, MorphError> {
        LengthMismatch::check("morph weights", weights.len(), self.target_count)?;
        LengthMismatch::check("base tangents", base.len(), self.vertex_count)?;
        LengthMismatch::check("morphed tangents", out.len(), self.vertex_count)?;
        if let Some(index) = weights.iter().position(|w| !w.is_finite()) {
            return Err(MorphError::NonFinite { what: "weight", index });
        }
        out.copy_from_slice(base);
        let mut active = 0;
        for (t, &w) in weights.iter().enumerate() {
            if w == 0.0 {
                continue;
            }
            active += 1;
            for (o, d) in out.iter_mut().zip(self.target(&self.tangents, t)) {
                for k in 0..3 {
                    o[k] += d[k] * w;
                }
            }
        }
        Ok(active)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_tracks_and_lengths() {
        let m = MorphTargets::new(2, 1);
        assert!(m.clone().with_positions(vec![vec![Vec3::zeros(); 3]]).is_err());
        assert!(matches!(
            m.clone().with_normals(vec![vec![Vec3::zeros(), Vec3::new(f32::NAN, 0.0, 0.0)]]),
            Err(MorphError::NonFinite { index: 1, .. })
        ));
        let base = [Vec3::zeros(); 2];
        let mut out = [Vec3::zeros(); 2];
        assert!(m.apply(&[0.0, 1.0], &base, &mut out, None).is_err());
        assert!(m.apply(&[f32::INFINITY], &base, &mut out, None).is_err());
    }

    #[test]
    fn applies_positions_normals_tangents_of_active_targets() {
        let base = [Vec3::new(1.0, 2.0, 3.0), Vec3::new(-1.0, 0.0, 0.5)];
        let nb = [Vec3::z(), Vec3::x()];
        let d = |a: f32| vec![Vec3::new(a, 0.0, 0.0), Vec3::new(0.0, a, 0.0)];
        let m = MorphTargets::new(2, 3)
            .with_positions(vec![d(1.0), d(10.0), d(100.0)])
            .unwrap()
            .with_normals(vec![d(0.5), vec![Vec3::zeros(); 2], d(-0.5)])
            .unwrap()
            .with_tangents(vec![d(1.0), d(2.0), d(3.0)])
            .unwrap();
        let w = [0.5, 0.0, -2.0];
        let (mut p, mut n) = ([Vec3::zeros(); 2], [Vec3::zeros(); 2]);
        assert_eq!(m.apply(&w, &base, &mut p, Some((&nb, &mut n))).unwrap(), 2);
        // 0.5·1 − 2·100 on x of vertex 0, on y of vertex 1.
        assert_eq!(p[0], Vec3::new(1.0 - 199.5, 2.0, 3.0));
        assert_eq!(p[1], Vec3::new(-1.0, -199.5, 0.5));
        // (0.25 + 1, 0, 1), normalized; a normal morphed to zero length keeps its base.
        assert!((n[0] - Vec3::new(1.25, 0.0, 1.0).normalize()).norm() < 1e-7, "{:?}", n[0]);
        let (mut p2, mut n2) = ([Vec3::zeros(); 2], [Vec3::zeros(); 2]);
        let cancel = MorphTargets::new(2, 1).with_normals(vec![vec![-Vec3::z(), Vec3::zeros()]]).unwrap();
        cancel.apply(&[1.0], &base, &mut p2, Some((&nb, &mut n2))).unwrap();
        assert_eq!(n2, nb);
        let tb = [[0.0, 0.0, 1.0, -1.0]; 2];
        let mut t = [[0.0; 4]; 2];
        m.apply_tangents(&w, &tb, &mut t).unwrap();
        assert_eq!(t[0], [0.5 - 6.0, 0.0, 1.0, -1.0]);
        // All zero: a copy.
        assert_eq!(m.apply(&[0.0; 3], &base, &mut p, None).unwrap(), 0);
        assert_eq!(p, base);
    }
}
