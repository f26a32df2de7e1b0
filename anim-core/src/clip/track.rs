//! Keyframed tracks with glTF's three interpolation modes.
//!
//! Semantics follow the glTF 2.0 specification (appendix C, "Interpolation"):
//! - **Step**: the value of the last key at or before `t`.
//! - **Linear**: `lerp` for vectors and scalars, shortest-path `slerp` for rotations.
//! - **Cubic spline**: each key stores `(in-tangent, value, out-tangent)`; between keys `k`
//!   and `k+1`, with `Δ = t[k+1] − t[k]` and `s = (t − t[k]) / Δ`,
//!   `p(s) = (2s³ − 3s² + 1)·v[k] + (s³ − 2s² + s)·Δ·out[k] + (−2s³ + 3s²)·v[k+1] + (s³ − s²)·Δ·in[k+1]`.
//!   Rotations are renormalized after interpolation.
//!
//! Before the first key a track holds its first value, after the last key its last value.
//!
//! **Finite in, finite out.** Sampling exactly at a key returns that key's value, bit for
//! bit, for vectors and scalars (the forms below reduce to `1·a + 0·b` there; rotations are
//! the key to rounding). Between keys the forms used cannot overflow where the exact result does not:
//! linear interpolation is `a·(1−s) + b·s` (never `a + (b−a)·s`, whose `b − a` overflows
//! for keys of opposite sign near `f32::MAX`), a spline sums its two value terms (a convex
//! combination) before its tangent terms, and a rotation whose raw sum overflows is
//! recomputed scaled down before it is normalized. A cubic spline with huge tangents can
//! still leave the `f32` range where its exact value does; files are kept well inside it by
//! `anim_core::offline::range`.

use super::error::TrackError;
use anim_math::{Quat, Vec3};
use nalgebra::Quaternion;

/// How values between keys are computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Interpolation {
    /// Hold the previous key's value.
    Step,
    /// Linear (spherical for rotations).
    Linear,
    /// Cubic Hermite spline with per-key in and out tangents.
    CubicSpline,
}

/// A value type a [`Track`] can interpolate.
pub trait TrackValue: Copy + std::fmt::Debug {
    /// What sampling returns (rotations come back as unit quaternions).
    type Output: Copy;
    /// Linear interpolation between two keys (slerp for rotations).
    fn interpolate_linear(a: &Self, b: &Self, t: f32) -> Self::Output;
    /// Weighted sum `Σ vᵢ·wᵢ` of four values (used for Hermite splines).
    fn weighted4(v: [&Self; 4], w: [f32; 4]) -> Self;
    /// Turns a stored value into the output (normalizes rotations).
    fn finish(v: &Self) -> Self::Output;
    /// True when every component is finite.
    fn is_finite(v: &Self) -> bool;
    /// Prepares a key of a step or linear track once at construction (rotations are
    /// normalized so sampling need not do it). Cubic tracks are stored as given.
    #[inline]
    fn prepare_key(_v: &mut Self) {}
    /// Sets components smaller than 2⁻⁴⁰ to zero, at construction, for every interpolation
    /// (cubic tangents included): exporters leave such noise where a component is zero,
    /// and its products are subnormal floats, slow on x86.
    #[inline]
    fn flush_key(_v: &mut Self) {}
}

impl TrackValue for f32 {
    type Output = f32;
    #[inline]
    fn interpolate_linear(a: &Self, b: &Self, t: f32) -> f32 {
        a * (1.0 - t) + b * t
    }
    #[inline]
    fn weighted4(v: [&Self; 4], w: [f32; 4]) -> Self {
        v[0] * w[0] + v[1] * w[1] + v[2] * w[2] + v[3] * w[3]
    }
    #[inline]
    fn finish(v: &Self) -> f32 {
        *v
    }
    fn is_finite(v: &Self) -> bool {
        f32::is_finite(*v)
    }
}

impl TrackValue for Vec3 {
    type Output = Vec3;
    #[inline]
    fn interpolate_linear(a: &Self, b: &Self, t: f32) -> Vec3 {
        a * (1.0 - t) + b * t
    }
    #[inline]
    fn weighted4(v: [&Self; 4], w: [f32; 4]) -> Self {
        v[0] * w[0] + v[1] * w[1] + v[2] * w[2] + v[3] * w[3]
    }
    #[inline]
    fn finish(v: &Self) -> Vec3 {
        *v
    }
    fn is_finite(v: &Self) -> bool {
        v.iter().all(|x| x.is_finite())
    }
    fn flush_key(v: &mut Self) {
        v.apply(|x| *x = flush_tiny(*x));
    }
}

/// Rotations are stored as raw quaternions because spline tangents are not unit length.
impl TrackValue for Quaternion<f32> {
    type Output = Quat;
    #[inline]
    fn interpolate_linear(a: &Self, b: &Self, t: f32) -> Quat {
        slerp(a, b, t)
    }
    #[inline]
    fn weighted4(v: [&Self; 4], w: [f32; 4]) -> Self {
        let sum = |k: f32| {
            v[0].coords * (w[0] * k) + v[1].coords * (w[1] * k) + v[2].coords * (w[2] * k) + v[3].coords * (w[3] * k)
        };
        let q = sum(1.0);
        // Only the direction matters (it is normalized next): if the sum overflowed, the
        // same sum scaled by 2^-100 has it.
        if q.iter().all(|x| x.is_finite()) { Quaternion::from(q) } else { Quaternion::from(sum(TWO_POW_MINUS_100)) }
    }
    #[inline]
    fn finish(v: &Self) -> Quat {
        normalize_or_identity(v)
    }
    fn is_finite(v: &Self) -> bool {
        v.coords.iter().all(|x| x.is_finite())
    }
    fn prepare_key(v: &mut Self) {
        *v = normalize_or_identity(v).into_inner();
    }
    fn flush_key(v: &mut Self) {
        v.coords.apply(|x| *x = flush_tiny(*x));
    }
}

/// 2⁻¹⁰⁰: scales a finite quaternion's components (at most `f32::MAX` ≈ 2¹²⁸) to at most
/// 2²⁸, whose squared norm is finite.
const TWO_POW_MINUS_100: f32 = 1.0 / (1u128 << 100) as f32;

/// Magnitudes below `2⁻⁴⁰` (9.1·10⁻¹³): what tracks ([`Track::new`]) and the fast
/// sampling paths (packed exact channels, runtime and baked clips) store as zero.
/// Exporters leave noise of that size where a component is zero (Fox's Walk and Run
/// rotations carry components near 10⁻²⁰), and the squares and products of such values
/// are subnormal floats, which Intel CPUs compute through microcode assists of more than a
/// hundred cycles each: sampling and local-to-model of Fox's Run took three times as long
/// as with zeros, and local-to-model of a pose sampled from Fox's Walk track by track 1.4
/// times as long. A quaternion component of 2⁻⁴⁰ turns a point at 1 km by less than
/// 2·10⁻⁹ m.
pub(crate) const TINY: f32 = 1.0 / (1u64 << 40) as f32;

/// `x`, or zero when `|x| <` [`TINY`].
#[inline]
pub(crate) fn flush_tiny(x: f32) -> f32 {
    if x.abs() < TINY { 0.0 } else { x }
}

#[inline]
pub(crate) fn normalize_or_identity(q: &Quaternion<f32>) -> Quat {
    let n2 = q.coords.norm_squared();
    if n2 > 1e-24 && n2 <= f32::MAX {
        Quat::new_unchecked(Quaternion::from(q.coords * (1.0 / n2.sqrt())))
    } else if n2 > 1e-24 {
        normalize_huge(q)
    } else {
        Quat::identity()
    }
}

/// [`normalize_or_identity`] of a quaternion whose squared norm overflowed (components
/// beyond about 1.8e19): scaled down first. Out of line, so the common path stays small.
#[cold]
#[inline(never)]
fn normalize_huge(q: &Quaternion<f32>) -> Quat {
    let c = q.coords * TWO_POW_MINUS_100;
    Quat::new_unchecked(Quaternion::from(c * (1.0 / c.norm())))
}

/// Shortest-path spherical interpolation of two unit quaternions, as the glTF
/// specification's reference `slerp`.
///
/// `sin(sθ)/sin θ` is evaluated without trigonometry when the keys are less than about
/// 45° apart (`cos θ ≥ 0.7`, the usual case between neighbouring keys): as the series
/// `s·Σ bᵢ(s)·(cos θ − 1)ⁱ` with `b₀ = 1`, `bᵢ = bᵢ₋₁·(s² − i²)/(i(2i + 1))`, truncated
/// after 2 terms for `cos θ ≥ 0.99` (within 6·10⁻⁸ of the exact value there) and after 7
/// terms below (within 6·10⁻⁸ down to `cos θ = 0.7`; both measured on a dense grid). The
/// two truncations are unrolled, so the common case is a few multiply-adds and one
/// well-predicted branch. Wider angles take the exact formula.
#[inline(always)]
pub(crate) fn slerp(a: &Quaternion<f32>, b: &Quaternion<f32>, t: f32) -> Quat {
    slerp4(&a.coords.into(), &b.coords.into(), t)
}

/// [`slerp`] on quaternions stored as `[i, j, k, w]` (the packed sampling path keeps its
/// keys so).
#[inline(always)]
pub(crate) fn slerp4(a: &[f32; 4], b: &[f32; 4], t: f32) -> Quat {
    let (a, b) = (nalgebra::Vector4::from(*a), nalgebra::Vector4::from(*b));
    let d = a.dot(&b);
    // The shortest path: b's weight takes the sign of the dot product.
    let sign = if d < 0.0 { -1.0f32 } else { 1.0 };
    let d = d.abs();
    let (wa, wb) = if d >= 0.99 {
        sin_ratio_pair::<2>(t, d - 1.0)
    } else if d >= 0.7 {
        sin_ratio_pair::<7>(t, d - 1.0)
    } else {
        slerp_weights_trig(d, t)
    };
    normalize_or_identity(&Quaternion::from(a * wa + b * (wb * sign)))
}

/// [`slerp4`] of `L` key pairs at once (lane `l`: from `a[l]` to `b[l]` at `t[l]`; 4, or 8
/// where the caller is compiled for AVX2), the same arithmetic lane by lane in `L`-lane
/// form: each result equals [`slerp4`]'s bit for bit (both truncations of the series are
/// evaluated and each lane takes its own). Lanes whose keys lie more than about 45° apart,
/// or whose blend normalizes only by the rare paths of [`normalize_or_identity`], are
/// redone by [`slerp4`].
#[inline(always)]
// Lane-indexed loops over several arrays at once are what vectorizes here.
#[allow(clippy::needless_range_loop)]
pub(crate) fn slerp_lanes<const L: usize>(a: &[[f32; 4]; L], b: &[[f32; 4]; L], t: &[f32; L]) -> [Quat; L] {
    // Components by lane: x[c][l].
    let mut x = [[0.0f32; L]; 4];
    let mut y = [[0.0f32; L]; 4];
    for c in 0..4 {
        for l in 0..L {
            x[c][l] = a[l][c];
            y[c][l] = b[l][c];
        }
    }
    // nalgebra's four-component dot product: (a0·b0 + a2·b2) + (a1·b1 + a3·b3).
    let mut d = [0.0f32; L];
    let mut sign = [0.0f32; L];
    for l in 0..L {
        let e = (x[0][l] * y[0][l] + x[2][l] * y[2][l]) + (x[1][l] * y[1][l] + x[3][l] * y[3][l]);
        sign[l] = if e < 0.0 { -1.0 } else { 1.0 };
        d[l] = e.abs();
    }
    let (mut wa, mut wb) = ([0.0f32; L], [0.0f32; L]);
    let (two_a, two_b) = sin_ratio_lanes::<2, L>(t, &d);
    let (seven_a, seven_b) = sin_ratio_lanes::<7, L>(t, &d);
    for l in 0..L {
        let two = d[l] >= 0.99;
        wa[l] = if two { two_a[l] } else { seven_a[l] };
        wb[l] = if two { two_b[l] } else { seven_b[l] };
    }
    let mut q = [[0.0f32; L]; 4];
    for c in 0..4 {
        for l in 0..L {
            q[c][l] = x[c][l] * wa[l] + y[c][l] * (wb[l] * sign[l]);
        }
    }
    let mut inv = [0.0f32; L];
    let mut n2 = [0.0f32; L];
    for l in 0..L {
        n2[l] = (q[0][l] * q[0][l] + q[2][l] * q[2][l]) + (q[1][l] * q[1][l] + q[3][l] * q[3][l]);
        inv[l] = 1.0 / n2[l].sqrt();
    }
    let mut out = [Quat::identity(); L];
    for l in 0..L {
        out[l] = if d[l] >= 0.7 && n2[l] > 1e-24 && n2[l] <= f32::MAX {
            Quat::new_unchecked(Quaternion::new(q[3][l] * inv[l], q[0][l] * inv[l], q[1][l] * inv[l], q[2][l] * inv[l]))
        } else {
            slerp4(&a[l], &b[l], t[l])
        };
    }
    out
}

/// [`sin_ratio_pair`] lane by lane (`u = d − 1`), the same operations in the same order.
#[inline(always)]
#[allow(clippy::needless_range_loop)]
fn sin_ratio_lanes<const N: usize, const L: usize>(t: &[f32; L], d: &[f32; L]) -> ([f32; L], [f32; L]) {
    const INV: [f32; 7] = [1.0 / 3.0, 1.0 / 10.0, 1.0 / 21.0, 1.0 / 36.0, 1.0 / 55.0, 1.0 / 78.0, 1.0 / 105.0];
    let (mut ra, mut rb) = ([0.0f32; L], [0.0f32; L]);
    let mut s = [0.0f32; L];
    let (mut s2, mut t2, mut u) = ([0.0f32; L], [0.0f32; L], [0.0f32; L]);
    let (mut acc_s, mut acc_t) = ([1.0f32; L], [1.0f32; L]);
    for l in 0..L {
        s[l] = 1.0 - t[l];
        s2[l] = s[l] * s[l];
        t2[l] = t[l] * t[l];
        u[l] = d[l] - 1.0;
    }
    let mut i = N;
    while i >= 1 {
        let fi2 = (i * i) as f32;
        for l in 0..L {
            let c = INV[i - 1] * u[l];
            acc_s[l] = 1.0 + (s2[l] - fi2) * c * acc_s[l];
            acc_t[l] = 1.0 + (t2[l] - fi2) * c * acc_t[l];
        }
        i -= 1;
    }
    for l in 0..L {
        ra[l] = s[l] * acc_s[l];
        rb[l] = t[l] * acc_t[l];
    }
    (ra, rb)
}

/// The exact slerp weights `sin((1 − t)θ)/sin θ`, `sin(tθ)/sin θ` for `cos θ = d`; out of
/// line, as only keys more than 45° apart take it.
#[cold]
#[inline(never)]
fn slerp_weights_trig(d: f32, t: f32) -> (f32, f32) {
    let theta = d.acos();
    let inv = 1.0 / theta.sin();
    (((1.0 - t) * theta).sin() * inv, (t * theta).sin() * inv)
}

/// `(sin((1 − t)θ)/sin θ, sin(tθ)/sin θ)` as `N` terms of the series in `u = cos θ − 1`
/// (see [`slerp`]), both in one unrolled Horner loop.
#[inline(always)]
fn sin_ratio_pair<const N: usize>(t: f32, u: f32) -> (f32, f32) {
    // 1 / (i(2i + 1)) for i = 1…7.
    const INV: [f32; 7] = [1.0 / 3.0, 1.0 / 10.0, 1.0 / 21.0, 1.0 / 36.0, 1.0 / 55.0, 1.0 / 78.0, 1.0 / 105.0];
    let s = 1.0 - t;
    let (s2, t2) = (s * s, t * t);
    let (mut acc_s, mut acc_t) = (1.0f32, 1.0f32);
    let mut i = N;
    while i >= 1 {
        let (fi2, c) = ((i * i) as f32, INV[i - 1] * u);
        acc_s = 1.0 + (s2 - fi2) * c * acc_s;
        acc_t = 1.0 + (t2 - fi2) * c * acc_t;
        i -= 1;
    }
    (s * acc_s, t * acc_t)
}

/// A keyframed track: key times, values and an interpolation mode.
#[derive(Clone, Debug, PartialEq)]
pub struct Track<T> {
    times: Vec<f32>,
    values: Vec<T>,
    interpolation: Interpolation,
}

impl<T: TrackValue> Track<T> {
    /// Builds a track. For [`Interpolation::CubicSpline`] `values` holds three entries a
    /// key: in-tangent, value, out-tangent (glTF's layout). Rotation keys of step and linear
    /// tracks are normalized; components of rotations, translations and scales smaller than
    /// 2⁻⁴⁰ (`track::TINY`: exporters' noise, whose products are slow subnormal floats) are
    /// stored as zero, as the runtime, baked and packed clips store them.
    ///
    /// # Errors
    /// No keys, times not finite or not strictly increasing, wrong value count, or a
    /// non-finite value.
    pub fn new(interpolation: Interpolation, times: Vec<f32>, mut values: Vec<T>) -> Result<Self, TrackError> {
        if times.is_empty() {
            return Err(TrackError::Empty);
        }
        for (i, &t) in times.iter().enumerate() {
            if !t.is_finite() || (i > 0 && t <= times[i - 1]) {
                return Err(TrackError::TimesNotIncreasing { index: i, time: t });
            }
        }
        let per_key = if interpolation == Interpolation::CubicSpline { 3 } else { 1 };
        if values.len() != times.len() * per_key {
            return Err(TrackError::ValueCount {
                times: times.len(),
                values: values.len(),
                expected: times.len() * per_key,
            });
        }
        if let Some(index) = values.iter().position(|v| !T::is_finite(v)) {
            return Err(TrackError::NonFiniteValue { index });
        }
        if interpolation != Interpolation::CubicSpline {
            values.iter_mut().for_each(T::prepare_key);
        }
        // After normalizing: a flushed component changes a unit quaternion's norm by less
        // than 2⁻⁸⁰, so it stays unit to the last bit.
        values.iter_mut().for_each(T::flush_key);
        Ok(Self { times, values, interpolation })
    }

    /// A track holding one value forever (components below 2⁻⁴⁰ stored as zero, as
    /// [`Track::new`] stores them).
    pub fn constant(mut value: T) -> Self {
        T::flush_key(&mut value);
        Self { times: vec![0.0], values: vec![value], interpolation: Interpolation::Step }
    }

    /// Key times.
    #[inline]
    pub fn times(&self) -> &[f32] {
        &self.times
    }

    /// Stored values (three a key for cubic splines).
    #[inline]
    pub fn values(&self) -> &[T] {
        &self.values
    }

    /// The interpolation mode.
    #[inline]
    pub fn interpolation(&self) -> Interpolation {
        self.interpolation
    }

    /// Time of the first key.
    #[inline]
    pub fn start_time(&self) -> f32 {
        self.times[0]
    }

    /// Time of the last key.
    #[inline]
    pub fn end_time(&self) -> f32 {
        *self.times.last().expect("tracks have at least one key, checked in Track::new")
    }

    /// The value of key `k` (the middle entry of the triple for cubic splines).
    #[inline]
    pub fn key_value(&self, k: usize) -> &T {
        match self.interpolation {
            Interpolation::CubicSpline => &self.values[3 * k + 1],
            _ => &self.values[k],
        }
    }

    /// Samples the track at `t` (binary search for the key).
    #[inline]
    pub fn sample(&self, t: f32) -> T::Output {
        let k = self.times.partition_point(|&x| x <= t);
        self.sample_at_key(k, t)
    }

    /// Samples at `t`, starting the key search from `hint` and updating it: constant time
    /// for forward playback, a binary search when time jumps.
    #[inline]
    pub fn sample_with_hint(&self, hint: &mut usize, t: f32) -> T::Output {
        let n = self.times.len();
        let mut k = (*hint).min(n);
        // `k` is the number of keys at or before `t`.
        let fits = (k == 0 || self.times[k - 1] <= t) && (k == n || self.times[k] > t);
        if !fits {
            // Try a couple of steps forward before giving up and searching.
            let mut steps = 0;
            while k < n && self.times[k] <= t && steps < 2 {
                k += 1;
                steps += 1;
            }
            if !((k == 0 || self.times[k - 1] <= t) && (k == n || self.times[k] > t)) {
                k = self.times.partition_point(|&x| x <= t);
            }
        }
        *hint = k;
        self.sample_at_key(k, t)
    }

    /// `k` = number of keys with time ≤ t.
    #[inline]
    fn sample_at_key(&self, k: usize, t: f32) -> T::Output {
        let n = self.times.len();
        if k == 0 {
            return T::finish(self.key_value(0));
        }
        if k >= n {
            return T::finish(self.key_value(n - 1));
        }
        let i = k - 1;
        let (t0, t1) = (self.times[i], self.times[k]);
        let mut dt = t1 - t0;
        let mut s = (t - t0) / dt;
        if !dt.is_finite() {
            // Key times of opposite sign near f32::MAX: the same ratio from halved times.
            let half = t1 * 0.5 - t0 * 0.5;
            s = (t * 0.5 - t0 * 0.5) / half;
            // Δ itself is beyond f32: the tangent terms saturate at f32::MAX.
            dt = f32::MAX;
        }
        match self.interpolation {
            Interpolation::Step => T::finish(&self.values[i]),
            Interpolation::Linear => T::interpolate_linear(&self.values[i], &self.values[k], s),
            Interpolation::CubicSpline => {
                let s2 = s * s;
                let s3 = s2 * s;
                let h00 = 2.0 * s3 - 3.0 * s2 + 1.0;
                let h10 = (s3 - 2.0 * s2 + s) * dt;
                let h01 = -2.0 * s3 + 3.0 * s2;
                let h11 = (s3 - s2) * dt;
                let v0 = &self.values[3 * i + 1];
                let out0 = &self.values[3 * i + 2];
                let v1 = &self.values[3 * k + 1];
                let in1 = &self.values[3 * k];
                // The value terms (a convex combination) first, the tangent terms after.
                T::finish(&T::weighted4([v0, v1, out0, in1], [h00, h01, h10, h11]))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_linear_and_clamping() {
        let step = Track::new(Interpolation::Step, vec![1.0, 2.0, 3.0], vec![10.0f32, 20.0, 30.0]).unwrap();
        assert_eq!(step.sample(0.0), 10.0);
        assert_eq!(step.sample(1.99), 10.0);
        assert_eq!(step.sample(2.0), 20.0);
        assert_eq!(step.sample(9.0), 30.0);
        let lin = Track::new(Interpolation::Linear, vec![1.0, 3.0], vec![0.0f32, 4.0]).unwrap();
        assert_eq!(lin.sample(2.0), 2.0);
        assert_eq!(lin.sample(2.5), 3.0);
        assert_eq!(lin.sample(-1.0), 0.0);
        assert_eq!(lin.sample(5.0), 4.0);
    }

    #[test]
    fn cubic_spline_hits_keys_and_hand_computed_midpoint() {
        // keys at t=0 (v=0, out=1) and t=2 (v=1, in=0); Δ = 2.
        let values = vec![0.0f32, 0.0, 1.0, 0.0, 1.0, 0.0];
        let c = Track::new(Interpolation::CubicSpline, vec![0.0, 2.0], values).unwrap();
        assert_eq!(c.sample(0.0), 0.0);
        assert_eq!(c.sample(2.0), 1.0);
        // s = 0.5: h00 = 0.5, h10 = 0.125, h01 = 0.5, h11 = -0.125
        // p = 0.5·0 + 0.125·2·1 + 0.5·1 + (-0.125)·2·0 = 0.75
        assert!((c.sample(1.0) - 0.75).abs() < 1e-6);
        // s = 0.25: h10 = 0.140625, h01 = 0.15625 → 0.140625·2 + 0.15625 = 0.4375
        assert!((c.sample(0.5) - 0.4375).abs() < 1e-6);
    }

    /// Keys alternating ±3e38: exact at every key, finite and right between them (the
    /// midpoint of +3e38 and −3e38 is 0, where `a + (b − a)·s` gave NaN).
    #[test]
    fn huge_alternating_keys_stay_finite() {
        let big = 3e38f32;
        let times = vec![0.0, 1.0, 2.0, 3.0];
        let vals: Vec<Vec3> = (0..4).map(|i| Vec3::repeat(if i % 2 == 0 { big } else { -big })).collect();
        for interp in [Interpolation::Step, Interpolation::Linear] {
            let tr = Track::new(interp, times.clone(), vals.clone()).unwrap();
            for (k, v) in vals.iter().enumerate() {
                assert_eq!(tr.sample(k as f32), *v, "{interp:?} at key {k}");
            }
            for t in [0.25f32, 0.5, 1.5, 2.75] {
                let x = tr.sample(t);
                assert!(x.iter().all(|c| c.is_finite()), "{interp:?} at {t}: {x}");
            }
        }
        let lin = Track::new(Interpolation::Linear, times.clone(), vals.clone()).unwrap();
        assert_eq!(lin.sample(0.5), Vec3::zeros());
        assert!((lin.sample(0.25).x - 0.5 * big).abs() <= 1e-6 * big);
        // Cubic spline with zero tangents: p(½) = ½·v0 + ½·v1 = 0, p(¼) = (27/32 − 5/32)·3e38.
        let cubic_vals: Vec<Vec3> = vals.iter().flat_map(|v| [Vec3::zeros(), *v, Vec3::zeros()]).collect();
        let c = Track::new(Interpolation::CubicSpline, times.clone(), cubic_vals).unwrap();
        for (k, v) in vals.iter().enumerate() {
            assert_eq!(c.sample(k as f32), *v);
        }
        assert_eq!(c.sample(1.5), Vec3::zeros());
        assert!((c.sample(0.25).x - big * (22.0 / 32.0)).abs() <= 1e-6 * big, "{}", c.sample(0.25));
        // Scalars, and key times of opposite sign near f32::MAX.
        let f = Track::new(Interpolation::Linear, vec![-big, big], vec![-big, big]).unwrap();
        assert_eq!(f.sample(-big), -big);
        assert_eq!(f.sample(0.0), 0.0);
        assert!((f.sample(big / 2.0) - big / 2.0).abs() <= 1e-6 * big);
    }

    /// Components below 2⁻⁴⁰ are stored as zero, for every interpolation and value kind;
    /// anything else is kept.
    #[test]
    fn tiny_components_are_stored_as_zero() {
        // Fox's Walk carries rotations like (-5e-20, -1.6e-19, -0.0988, 0.9951): the squares
        // and products of such components are subnormal floats.
        let q = Quaternion::new(0.995_106_3, -4.967_46e-20, -1.588_44e-19, -0.098_810_08);
        let t = Vec3::new(12.4, 3e-21, -0.0);
        for interpolation in [Interpolation::Step, Interpolation::Linear, Interpolation::CubicSpline] {
            let n = if interpolation == Interpolation::CubicSpline { 3 } else { 1 };
            let rotations = Track::new(interpolation, vec![0.0, 1.0], vec![q; 2 * n]).unwrap();
            let translations = Track::new(interpolation, vec![0.0, 1.0], vec![t; 2 * n]).unwrap();
            for v in rotations.values() {
                assert_eq!((v.i, v.j), (0.0, 0.0), "{interpolation:?}");
                // Kept as given otherwise (the keys were unit already).
                assert!((v.k - q.k).abs() < 1e-6 && (v.w - q.w).abs() < 1e-6, "{interpolation:?}");
            }
            for v in translations.values() {
                assert_eq!((v.x, v.y, v.z), (12.4, 0.0, 0.0), "{interpolation:?}");
            }
            // 2⁻⁴⁰ itself is kept, and so is anything larger.
            let edge = Track::new(interpolation, vec![0.0, 1.0], vec![Vec3::new(TINY, -TINY, 1e-12); 2 * n]).unwrap();
            assert_eq!(edge.values()[0], Vec3::new(TINY, -TINY, 1e-12));
            let sampled = rotations.sample(0.5);
            assert_eq!((sampled.i, sampled.j), (0.0, 0.0), "{interpolation:?}");
        }
        assert_eq!(Track::constant(t).values(), [Vec3::new(12.4, 0.0, 0.0)]);
    }

    /// Huge raw quaternion keys and tangents normalize to the right rotation, not to NaN or
    /// a zero quaternion.
    #[test]
    fn huge_quaternion_keys_normalize() {
        let q = Quat::from_axis_angle(&Vec3::z_axis(), 0.8);
        let huge = Quaternion::from(q.coords * 3e38);
        let s = Track::new(Interpolation::Linear, vec![0.0, 1.0], vec![huge, huge]).unwrap();
        assert!(s.sample(0.5).angle_to(&q) < 1e-5);
        let t = Quaternion::from(q.coords * 1e38);
        let c = Track::new(Interpolation::CubicSpline, vec![0.0, 1.0], vec![t, huge, t, t, huge, t]).unwrap();
        for time in [0.0f32, 0.3, 0.5, 1.0] {
            assert!(c.sample(time).angle_to(&q) < 1e-5, "{time}");
        }
    }

    #[test]
    fn rotation_slerp_takes_short_path_and_normalizes() {
        let a = Quat::from_axis_angle(&Vec3::z_axis(), 0.0).into_inner();
        let b = -Quat::from_axis_angle(&Vec3::z_axis(), 1.0).into_inner();
        let r = Track::new(Interpolation::Linear, vec![0.0, 1.0], vec![a, b]).unwrap();
        let q = r.sample(0.25);
        assert!((q.angle() - 0.25).abs() < 1e-5);
        let unnormalized = Quaternion::new(0.5f32, 0.0, 0.0, 0.0);
        let s = Track::new(Interpolation::Step, vec![0.0], vec![unnormalized]).unwrap();
        assert!((s.sample(0.0).into_inner().norm() - 1.0).abs() < 1e-6);
    }

    #[test]
    fn slerp_series_matches_trigonometry() {
        for deg in [0.5f32, 5.0, 20.0, 44.0, 46.0, 90.0, 170.0] {
            let a = Quat::from_axis_angle(&Vec3::x_axis(), 0.3);
            let b =
                a * Quat::from_axis_angle(&nalgebra::Unit::new_normalize(Vec3::new(0.3, 1.0, -0.2)), deg.to_radians());
            for i in 0..=10 {
                let t = i as f32 / 10.0;
                let q = slerp(&a.into_inner(), &b.into_inner(), t);
                let expect = a.slerp(&b, t);
                assert!(q.angle_to(&expect) < 2e-6, "{deg}° t={t}: {}", q.angle_to(&expect));
            }
        }
    }

    /// Against slerp in f64 from the same (rounded) keys: within 2·10⁻⁷ per component over
    /// random pairs, near-identical pairs (where the series has 2 terms), pairs near the
    /// 0.99 and 0.7 switches, wide ones (trigonometry) and near-opposite ones (the shortest
    /// path flips the sign), at random fractions and at the ends.
    #[test]
    fn slerp_matches_f64_reference() {
        let mut seed = 0x1234_5678u32;
        let mut rnd = || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            (seed >> 8) as f32 / (1u32 << 24) as f32
        };
        let mut worst = 0.0f64;
        for case in 0..20_000 {
            let axis = nalgebra::Unit::new_normalize(Vec3::new(rnd() - 0.5, rnd() - 0.5, rnd() - 0.5));
            let a = Quat::from_euler_angles(6.0 * rnd() - 3.0, 3.0 * rnd() - 1.5, 6.0 * rnd() - 3.0);
            // Angle between the keys (θ is half the rotation angle).
            let angle = match case % 6 {
                0 => 1e-4 * rnd(),
                1 => 0.1 * rnd(),
                2 => 2.0 * (0.99f32).acos() + 0.01 * (rnd() - 0.5),
                3 => 2.0 * (0.7f32).acos() + 0.01 * (rnd() - 0.5),
                4 => 3.0 * rnd(),
                _ => std::f32::consts::TAU - 1e-3 * rnd(),
            };
            let mut b = (a * Quat::from_axis_angle(&axis, angle)).into_inner();
            if case % 4 == 1 {
                b = -b;
            }
            let t = match case % 5 {
                0 => 0.0,
                1 => 1.0,
                _ => rnd(),
            };
            let got = slerp(&a.into_inner(), &b, t).into_inner().coords;
            // f64 reference from the same f32 keys.
            let (qa, mut qb) = (a.into_inner().coords.cast::<f64>(), b.coords.cast::<f64>());
            let mut d = qa.dot(&qb);
            if d < 0.0 {
                qb = -qb;
                d = -d;
            }
            let theta = d.min(1.0).acos();
            let t = t as f64;
            let want = if theta < 1e-9 {
                qa * (1.0 - t) + qb * t
            } else {
                (qa * ((1.0 - t) * theta).sin() + qb * (t * theta).sin()) / theta.sin()
            };
            let want = want.normalize();
            let err = (got.cast::<f64>() - want).amax();
            worst = worst.max(err);
        }
        assert!(worst <= 2e-7, "worst component error {worst}");
    }

    #[test]
    fn hint_matches_search() {
        let times: Vec<f32> = (0..50).map(|i| i as f32 * 0.1).collect();
        let values: Vec<f32> = (0..50).map(|i| (i * i) as f32).collect();
        let t = Track::new(Interpolation::Linear, times, values).unwrap();
        let mut hint = 0;
        for step in [0.013f32, 0.31, -1.7, 4.2, 0.0] {
            let mut time = -0.5;
            while time < 5.5 {
                assert_eq!(t.sample_with_hint(&mut hint, time), t.sample(time));
                time += step.abs().max(0.013);
            }
            hint = (step.abs() * 1000.0) as usize;
        }
    }

    #[test]
    fn invalid_tracks() {
        assert_eq!(Track::<f32>::new(Interpolation::Linear, vec![], vec![]), Err(TrackError::Empty));
        assert!(matches!(
            Track::new(Interpolation::Linear, vec![0.0, 0.0], vec![1.0f32, 2.0]),
            Err(TrackError::TimesNotIncreasing { index: 1, .. })
        ));
        assert!(matches!(
            Track::new(Interpolation::Linear, vec![0.0, f32::NAN], vec![1.0f32, 2.0]),
            Err(TrackError::TimesNotIncreasing { index: 1, .. })
        ));
        assert!(matches!(
            Track::new(Interpolation::CubicSpline, vec![0.0], vec![1.0f32]),
            Err(TrackError::ValueCount { expected: 3, .. })
        ));
        assert!(matches!(
            Track::new(Interpolation::Step, vec![0.0], vec![f32::INFINITY]),
            Err(TrackError::NonFiniteValue { index: 0 })
        ));
    }
}

/// The tracks that animate one joint. A missing channel leaves that part of the joint's
/// local transform as it was in the pose being sampled into.
#[derive(Clone, Debug, PartialEq)]
pub struct JointTracks {
    /// Skeleton index of the joint.
    pub joint: usize,
    /// Translation track.
    pub translation: Option<Track<Vec3>>,
    /// Rotation track (raw quaternions; samples are normalized).
    pub rotation: Option<Track<Quaternion<f32>>>,
    /// Scale track.
    pub scale: Option<Track<Vec3>>,
}

impl JointTracks {
    /// Tracks for `joint` with no channel yet.
    pub fn new(joint: usize) -> Self {
        Self { joint, translation: None, rotation: None, scale: None }
    }
}
