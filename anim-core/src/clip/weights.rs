//! Animated morph weights (glTF's `weights` channels): [`WeightTrack`]s that a [`Clip`](super::Clip)
//! carries and samples into a caller-owned `&mut [f32]`; the morph targets they weigh are
//! [`crate::skin::MorphTargets`].

use super::error::TrackError;
use super::track::Interpolation;
use crate::length::LengthMismatch;

/// The animated morph weights of one node (glTF's `weights` channel): `count` weights a
/// key (`3·count` for cubic splines: the key's `count` in-tangents, `count` values, `count`
/// out-tangents). Sampled weights are not clamped; linear interpolation is plain `lerp`
/// per weight.
#[derive(Clone, Debug, PartialEq)]
pub struct WeightTrack {
    /// What the weights belong to: a skeleton joint index, like [`JointTracks::joint`](super::JointTracks::joint)
    /// (the glTF importer maps every node to a joint, so this is the mesh node's joint).
    pub target: usize,
    count: usize,
    interpolation: Interpolation,
    times: Vec<f32>,
    values: Vec<f32>,
}

impl WeightTrack {
    /// Builds a track of `count` weights a key.
    ///
    /// # Errors
    /// No keys, `count == 0`, times not finite or not strictly increasing, a value count
    /// other than `keys · count` (`· 3` for cubic splines), or a non-finite value.
    pub fn new(
        target: usize,
        count: usize,
        interpolation: Interpolation,
        times: Vec<f32>,
        values: Vec<f32>,
    ) -> Result<Self, TrackError> {
        if times.is_empty() || count == 0 {
            return Err(TrackError::Empty);
        }
        for (i, &t) in times.iter().enumerate() {
            if !t.is_finite() || (i > 0 && t <= times[i - 1]) {
                return Err(TrackError::TimesNotIncreasing { index: i, time: t });
            }
        }
        let per_key = if interpolation == Interpolation::CubicSpline { 3 * count } else { count };
        if values.len() != times.len() * per_key {
            return Err(TrackError::ValueCount {
                times: times.len(),
                values: values.len(),
                expected: times.len() * per_key,
            });
        }
        if let Some(index) = values.iter().position(|v| !v.is_finite()) {
            return Err(TrackError::NonFiniteValue { index });
        }
        Ok(Self { target, count, interpolation, times, values })
    }

    /// Weights a key (the target count of the animated mesh).
    #[inline]
    pub fn count(&self) -> usize {
        self.count
    }

    /// The interpolation mode.
    #[inline]
    pub fn interpolation(&self) -> Interpolation {
        self.interpolation
    }

    /// Key times.
    #[inline]
    pub fn times(&self) -> &[f32] {
        &self.times
    }

    /// Stored values, key-major (see the type's docs for the cubic layout).
    #[inline]
    pub fn values(&self) -> &[f32] {
        &self.values
    }

    /// Time of the first key.
    #[inline]
    pub fn start_time(&self) -> f32 {
        self.times[0]
    }

    /// Time of the last key.
    #[inline]
    pub fn end_time(&self) -> f32 {
        *self.times.last().expect("weight tracks have at least one key, checked in WeightTrack::new")
    }

    /// The `count` values of key `k` (the middle third for cubic splines).
    fn key(&self, k: usize) -> &[f32] {
        let n = self.count;
        match self.interpolation {
            Interpolation::CubicSpline => &self.values[3 * n * k + n..3 * n * k + 2 * n],
            _ => &self.values[n * k..n * (k + 1)],
        }
    }

    /// Samples the weights at `t` into `out` (before the first key the first key's weights,
    /// after the last the last's). Allocates nothing.
    ///
    /// # Errors
    /// `out` does not hold [`WeightTrack::count`] weights.
    pub fn sample(&self, t: f32, out: &mut [f32]) -> Result<(), LengthMismatch> {
        LengthMismatch::check("sampled weights", out.len(), self.count)?;
        let keys = self.times.len();
        let k = self.times.partition_point(|&x| x <= t);
        if k == 0 || k >= keys {
            out.copy_from_slice(self.key(if k == 0 { 0 } else { keys - 1 }));
            return Ok(());
        }
        let i = k - 1;
        let (t0, t1) = (self.times[i], self.times[k]);
        let dt = t1 - t0;
        let s = (t - t0) / dt;
        match self.interpolation {
            Interpolation::Step => out.copy_from_slice(self.key(i)),
            Interpolation::Linear => {
                for ((o, a), b) in out.iter_mut().zip(self.key(i)).zip(self.key(k)) {
                    *o = a + (b - a) * s;
                }
            }
            Interpolation::CubicSpline => {
                let n = self.count;
                let (s2, s3) = (s * s, s * s * s);
                let h00 = 2.0 * s3 - 3.0 * s2 + 1.0;
                let h10 = (s3 - 2.0 * s2 + s) * dt;
                let h01 = -2.0 * s3 + 3.0 * s2;
                let h11 = (s3 - s2) * dt;
                let (a, b) = (3 * n * i, 3 * n * k);
                for (j, o) in out.iter_mut().enumerate() {
                    let v0 = self.values[a + n + j];
                    let out0 = self.values[a + 2 * n + j];
                    let v1 = self.values[b + n + j];
                    let in1 = self.values[b + j];
                    *o = h00 * v0 + h10 * out0 + h01 * v1 + h11 * in1;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_linear_cubic_against_analytic_values() {
        // Two weights, keys at 0 and 2.
        let step = WeightTrack::new(0, 2, Interpolation::Step, vec![0.0, 2.0], vec![1.0, -1.0, 3.0, 5.0]).unwrap();
        let mut w = [0.0; 2];
        step.sample(1.9, &mut w).unwrap();
        assert_eq!(w, [1.0, -1.0]);
        step.sample(2.0, &mut w).unwrap();
        assert_eq!(w, [3.0, 5.0]);
        let lin = WeightTrack::new(0, 2, Interpolation::Linear, vec![0.0, 2.0], vec![1.0, -1.0, 3.0, 5.0]).unwrap();
        lin.sample(0.5, &mut w).unwrap();
        // Not clamped to [0, 1], and plain lerp: 1 + (3-1)·0.25, -1 + 6·0.25.
        assert!((w[0] - 1.5).abs() < 1e-6 && (w[1] - 0.5).abs() < 1e-6);
        lin.sample(-3.0, &mut w).unwrap();
        assert_eq!(w, [1.0, -1.0]);
        lin.sample(9.0, &mut w).unwrap();
        assert_eq!(w, [3.0, 5.0]);
        // Cubic: weight 0 is p(s) for v0 = 0, m0 = 1 (out-tangent), v1 = 1, m1 = 0 (in-tangent)
        // over Δ = 2: p(s) = (s³−2s²+s)·2 + (−2s³+3s²). Weight 1 is constant 4 with zero tangents.
        let cubic = WeightTrack::new(
            7,
            2,
            Interpolation::CubicSpline,
            vec![0.0, 2.0],
            // key 0: in[2], v[2], out[2]; key 1: in[2], v[2], out[2]
            vec![9.0, 9.0, 0.0, 4.0, 1.0, 0.0, 0.0, 0.0, 1.0, 4.0, 9.0, 9.0],
        )
        .unwrap();
        for t in [0.0f32, 0.3, 1.0, 1.7, 2.0] {
            cubic.sample(t, &mut w).unwrap();
            let s = t / 2.0;
            let expected = (s * s * s - 2.0 * s * s + s) * 2.0 + (-2.0 * s * s * s + 3.0 * s * s);
            assert!((w[0] - expected).abs() < 1e-6, "t={t}: {} vs {expected}", w[0]);
            assert!((w[1] - 4.0).abs() < 1e-6);
        }
    }

    #[test]
    fn bad_tracks_and_lengths() {
        assert!(matches!(
            WeightTrack::new(0, 2, Interpolation::Linear, vec![0.0, 1.0], vec![0.0; 3]),
            Err(TrackError::ValueCount { expected: 4, .. })
        ));
        assert!(matches!(
            WeightTrack::new(0, 1, Interpolation::CubicSpline, vec![0.0], vec![0.0]),
            Err(TrackError::ValueCount { expected: 3, .. })
        ));
        assert!(WeightTrack::new(0, 1, Interpolation::Linear, vec![1.0, 1.0], vec![0.0; 2]).is_err());
        let t = WeightTrack::new(0, 2, Interpolation::Linear, vec![0.0], vec![0.0; 2]).unwrap();
        assert!(t.sample(0.0, &mut [0.0; 3]).is_err());
    }
}
