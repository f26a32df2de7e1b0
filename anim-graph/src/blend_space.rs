//! Blend-space weights: linear on one axis, and gradient band interpolation in a plane.
//!
//! **Gradient band interpolation** (R. S. Johansen, *Automated Semi-Procedural Animation
//! for Character Locomotion*, Aarhus University, 2009, ch. 6; the method behind Unity's
//! 2D Freeform blend trees) weighs sample points `pᵢ` for an input `p` without a
//! triangulation. Each pair of samples defines a band; sample `i`'s influence is the
//! smallest of its bands' gradients:
//!
//! ```text
//! hᵢ(p) = max(0, min over j ≠ i of ( 1 − (pᵢp · pᵢpⱼ) / |pᵢpⱼ|² )),      wᵢ = hᵢ / Σₖ hₖ
//! ```
//!
//! - **Cartesian** form: `pᵢp = p − pᵢ` and `pᵢpⱼ = pⱼ − pᵢ`.
//! - **Polar** (directional) form, for velocities: both vectors are measured in a space
//!   of (magnitude difference / mean magnitude of the pair, angle difference × 2):
//!   `pᵢpⱼ = ((|pⱼ| − |pᵢ|) / aᵢⱼ, 2·∠(pᵢ, pⱼ))`, `pᵢp = ((|p| − |pᵢ|) / aᵢⱼ, 2·∠(pᵢ, p))`
//!   with `aᵢⱼ = (|pᵢ| + |pⱼ|) / 2` and `∠` the signed angle in `(−π, π]`. A pair with a
//!   sample at the origin (an idle) has no direction: its angle component is 0, so the
//!   band between an idle and a walk depends on the speed alone, in every direction.
//!
//! Properties (both forms): at a sample point `pₖ` the weights are exactly one-hot
//! (`hₖ = 1`; every other `hᵢ` has the term `j = k` equal to `0`). In the Cartesian form
//! the nearest sample always has `h ≥ ½` (from `|p − pᵢ| ≤ |p − pⱼ|` follows
//! `(p − pᵢ)·(pⱼ − pᵢ) ≤ |pⱼ − pᵢ|²/2`), so the sum never vanishes and the weights are
//! continuous everywhere: each term is Lipschitz with constant `1 / |pⱼ − pᵢ|`, hence
//! `|Δwᵢ| ≤ 2(n + 1)·|Δp| / dmin` for `n` samples at least `dmin` apart. The polar form
//! is continuous wherever the angles are (away from the origin unless a sample sits
//! there, and away from the direction opposite a sample when the samples do not surround
//! it); where every influence vanishes it gives all weight to the nearest sample.
//!
//! Evaluation is O(n²) with every pair's constants precomputed, and allocates nothing.
//!
//! ```
//! use anim_graph::blend_space::{GradientBands, weights_1d};
//! use anim_graph::desc::SpaceForm;
//!
//! // Idle at the origin, walk and run forwards, a sidestep to the left.
//! let bands = GradientBands::new(SpaceForm::Polar, &[[0.0, 0.0], [0.0, 1.0], [0.0, 3.0], [1.0, 0.0]]).unwrap();
//! let mut w = [0.0; 4];
//! bands.weights([0.0, 2.0], &mut w);
//! assert!((w[1] - 0.5).abs() < 1e-6 && (w[2] - 0.5).abs() < 1e-6); // half walk, half run
//! bands.weights([1.0, 0.0], &mut w);
//! assert_eq!(w, [0.0, 0.0, 0.0, 1.0]); // exactly the sidestep at its point
//!
//! let mut w = [0.0; 3];
//! weights_1d(&[0.0, 1.0, 3.0], 2.0, &mut w);
//! assert_eq!(w, [0.0, 0.5, 0.5]);
//! ```

use crate::desc::SpaceForm;
use std::f32::consts::{PI, TAU};
use thiserror::Error;

/// The angle factor of the polar form.
pub const ANGLE_FACTOR: f32 = 2.0;

/// Why blend-space points were refused.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum BlendSpaceError {
    /// Fewer than two points.
    #[error("a blend space needs at least 2 points, it has {0}")]
    TooFewPoints(usize),
    /// Two points at the same place.
    #[error("points {0} and {1} are at the same place")]
    Coincident(usize, usize),
    /// A coordinate is NaN or infinite.
    #[error("point {0} is not finite")]
    NotFinite(usize),
}

/// Weights of points at `positions` (sorted ascending, at least one) for the input `x`:
/// the two neighbours around `x` share the weight linearly, every other point gets 0;
/// `x` outside the points gives the nearest end point weight 1 (a NaN `x` counts as the
/// first point). `out` has one weight per position.
pub fn weights_1d(positions: &[f32], x: f32, out: &mut [f32]) {
    out.iter_mut().for_each(|w| *w = 0.0);
    let n = positions.len().min(out.len());
    if n == 0 {
        return;
    }
    // `x <= first`, or NaN.
    if x.partial_cmp(&positions[0]) != Some(std::cmp::Ordering::Greater) {
        out[0] = 1.0;
        return;
    }
    if x >= positions[n - 1] {
        out[n - 1] = 1.0;
        return;
    }
    // positions[k] < x < positions[k + 1] or x == positions[k + 1].
    let k = positions[..n].partition_point(|&p| p < x) - 1;
    let (a, b) = (positions[k], positions[k + 1]);
    let t = ((x - a) / (b - a)).clamp(0.0, 1.0);
    out[k] = 1.0 - t;
    out[k + 1] = t;
}

/// Checks 1D points: at least two, finite, all different.
///
/// # Errors
/// As [`BlendSpaceError`].
pub fn check_1d(positions: &[f32]) -> Result<(), BlendSpaceError> {
    if positions.len() < 2 {
        return Err(BlendSpaceError::TooFewPoints(positions.len()));
    }
    for (i, p) in positions.iter().enumerate() {
        if !p.is_finite() {
            return Err(BlendSpaceError::NotFinite(i));
        }
        if let Some(j) = positions[..i].iter().position(|q| q == p) {
            return Err(BlendSpaceError::Coincident(j, i));
        }
    }
    Ok(())
}

/// Precomputed constants of one ordered pair `(i, j)`.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Pair {
    /// `pᵢpⱼ`.
    d: [f32; 2],
    /// `1 / |pᵢpⱼ|²`.
    inv_len2: f32,
    /// Polar: `1 / aᵢⱼ`.
    inv_mean: f32,
}

/// Gradient band interpolation over a fixed point set (see the [module docs](self)).
#[derive(Clone, Debug, PartialEq)]
pub struct GradientBands {
    form: SpaceForm,
    points: Vec<[f32; 2]>,
    /// Polar: magnitude and angle of each point.
    polar: Vec<(f32, f32)>,
    /// `pairs[i·n + j]`.
    pairs: Vec<Pair>,
}

/// `x` brought into `(−π, π]`.
#[inline]
pub fn wrap_angle(x: f32) -> f32 {
    let mut a = x % TAU;
    if a > PI {
        a -= TAU;
    } else if a <= -PI {
        a += TAU;
    }
    a
}

impl GradientBands {
    /// The bands of `points` in `form`.
    ///
    /// # Errors
    /// Fewer than two points, a non-finite coordinate, or two points at the same place.
    pub fn new(form: SpaceForm, points: &[[f32; 2]]) -> Result<Self, BlendSpaceError> {
        let n = points.len();
        if n < 2 {
            return Err(BlendSpaceError::TooFewPoints(n));
        }
        for (i, p) in points.iter().enumerate() {
            if !(p[0].is_finite() && p[1].is_finite()) {
                return Err(BlendSpaceError::NotFinite(i));
            }
            if let Some(j) = points[..i].iter().position(|q| q == p) {
                return Err(BlendSpaceError::Coincident(j, i));
            }
        }
        let polar: Vec<(f32, f32)> = points.iter().map(|p| (p[0].hypot(p[1]), p[1].atan2(p[0]))).collect();
        let mut pairs = Vec::with_capacity(n * n);
        for i in 0..n {
            for j in 0..n {
                let (d, inv_mean) = match form {
                    SpaceForm::Cartesian => ([points[j][0] - points[i][0], points[j][1] - points[i][1]], 0.0),
                    SpaceForm::Polar => {
                        let ((mi, ai), (mj, aj)) = (polar[i], polar[j]);
                        let mean = 0.5 * (mi + mj);
                        let inv_mean = if mean > 0.0 { 1.0 / mean } else { 0.0 };
                        let angle = if mi > 0.0 && mj > 0.0 { ANGLE_FACTOR * wrap_angle(aj - ai) } else { 0.0 };
                        ([(mj - mi) * inv_mean, angle], inv_mean)
                    }
                };
                let len2 = d[0] * d[0] + d[1] * d[1];
                if i != j && !(len2 > 0.0 && len2.is_finite()) {
                    // Different points whose difference rounds to nothing or overflows.
                    return Err(BlendSpaceError::Coincident(i.min(j), i.max(j)));
                }
                pairs.push(Pair { d, inv_len2: if i == j { 0.0 } else { 1.0 / len2 }, inv_mean });
            }
        }
        Ok(Self { form, points: points.to_vec(), polar, pairs })
    }

    /// The form.
    pub fn form(&self) -> SpaceForm {
        self.form
    }

    /// The points.
    pub fn points(&self) -> &[[f32; 2]] {
        &self.points
    }

    /// Writes the weight of every point for input `p` into `out` (one per point; they sum
    /// to 1). A non-finite input counts as the origin.
    pub fn weights(&self, p: [f32; 2], out: &mut [f32]) {
        let n = self.points.len();
        let p = if p[0].is_finite() && p[1].is_finite() { p } else { [0.0, 0.0] };
        // At a sample the formula gives exactly one-hot weights; with the products by
        // precomputed reciprocals the zeros could round to a few ulps, so say it directly.
        if let Some(k) = self.points.iter().position(|q| *q == p) {
            out.iter_mut().take(n).enumerate().for_each(|(i, w)| *w = f32::from(u8::from(i == k)));
            return;
        }
        let (m, a) = (p[0].hypot(p[1]), p[1].atan2(p[0]));
        let mut sum = 0.0f32;
        for (i, o) in out.iter_mut().enumerate().take(n) {
            let pairs = &self.pairs[i * n..(i + 1) * n];
            let mut h = f32::INFINITY;
            match self.form {
                SpaceForm::Cartesian => {
                    let v = [p[0] - self.points[i][0], p[1] - self.points[i][1]];
                    for (j, q) in pairs.iter().enumerate() {
                        if j != i {
                            h = h.min(1.0 - (v[0] * q.d[0] + v[1] * q.d[1]) * q.inv_len2);
                        }
                    }
                }
                SpaceForm::Polar => {
                    let (mi, ai) = self.polar[i];
                    let angle = if m > 0.0 && mi > 0.0 { ANGLE_FACTOR * wrap_angle(a - ai) } else { 0.0 };
                    for (j, q) in pairs.iter().enumerate() {
                        if j != i {
                            let u = (m - mi) * q.inv_mean;
                            h = h.min(1.0 - (u * q.d[0] + angle * q.d[1]) * q.inv_len2);
                        }
                    }
                }
            }
            let h = h.max(0.0);
            *o = h;
            sum += h;
        }
        if sum > 0.0 && sum.is_finite() {
            let inv = 1.0 / sum;
            out.iter_mut().take(n).for_each(|w| *w *= inv);
        } else {
            // Every influence vanished (possible in the polar form only): the nearest point.
            let nearest = (0..n)
                .min_by(|&i, &j| {
                    let d = |k: usize| (self.points[k][0] - p[0]).hypot(self.points[k][1] - p[1]);
                    d(i).total_cmp(&d(j))
                })
                .unwrap_or(0);
            out.iter_mut().take(n).enumerate().for_each(|(i, w)| *w = f32::from(u8::from(i == nearest)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_hot_at_points_and_sum_one_between() {
        let pts = [[0.0, 0.0], [0.0, 1.0], [0.0, 2.5], [0.7, 0.0], [-0.7, 0.1], [0.2, -0.9]];
        for form in [SpaceForm::Cartesian, SpaceForm::Polar] {
            let g = GradientBands::new(form, &pts).unwrap();
            let mut w = [0.0; 6];
            for (k, p) in pts.iter().enumerate() {
                g.weights(*p, &mut w);
                for (i, wi) in w.iter().enumerate() {
                    assert_eq!(*wi, if i == k { 1.0 } else { 0.0 }, "{form:?} point {k}");
                }
            }
            g.weights([0.3, 0.4], &mut w);
            assert!((w.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        }
    }

    #[test]
    fn refuses_bad_point_sets() {
        assert_eq!(GradientBands::new(SpaceForm::Cartesian, &[[0.0, 0.0]]), Err(BlendSpaceError::TooFewPoints(1)));
        assert_eq!(
            GradientBands::new(SpaceForm::Polar, &[[0.0, 1.0], [1.0, 0.0], [0.0, 1.0]]),
            Err(BlendSpaceError::Coincident(0, 2))
        );
        assert_eq!(check_1d(&[0.0, f32::NAN]), Err(BlendSpaceError::NotFinite(1)));
    }

    #[test]
    fn one_axis_clamps_at_the_ends() {
        let mut w = [9.0; 3];
        weights_1d(&[0.0, 1.0, 2.0], -5.0, &mut w);
        assert_eq!(w, [1.0, 0.0, 0.0]);
        weights_1d(&[0.0, 1.0, 2.0], 1.0, &mut w);
        assert_eq!(w, [0.0, 1.0, 0.0]);
        weights_1d(&[0.0, 1.0, 2.0], 1.25, &mut w);
        assert_eq!(w, [0.0, 0.75, 0.25]);
    }
}
