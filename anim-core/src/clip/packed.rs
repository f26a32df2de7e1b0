//! The joint channels of a [`Clip`](super::Clip) laid out for forward playback, the data
//! behind [`Clip::sample_cached`](super::Clip::sample_cached).
//!
//! - **Shared time lines.** Channels whose key times are the same (in every shared asset,
//!   all the channels of a clip: exporters sample every channel at the same times) share
//!   one time line: its key times, the reciprocal of each segment's duration, and one
//!   cursor. A frame finds each time line's segment once, then interpolates every channel
//!   on it.
//! - **Contiguous keys.** Key values of every linear channel sit in one array, the last
//!   key twice, so a segment is two neighbouring entries.
//! - **One list of channels a kind** (translation, rotation, scale), so the loops have no
//!   per-channel dispatch; rotations are slerped eight channels at a time on CPUs with
//!   AVX2 (the `avx2` kernel, chosen at run time), four otherwise
//!   ([`track::slerp_lanes`]), the same bits as one at a time. Channels that never change
//!   are written from their value; step and cubic-spline channels, and linear ones whose key
//!   spacing has no finite reciprocal, are sampled through their [`Track`].
//! - Components below `2⁻⁴⁰` are stored as zero (see `track::TINY`).

use super::track::{self, Interpolation, JointTracks, Track, TrackValue};
use anim_math::{Quat, Transform, Vec3};
use nalgebra::Quaternion;
use std::collections::HashMap;

/// Which part of a joint's local transform a channel drives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Field {
    Translation = 0,
    Rotation = 1,
    Scale = 2,
}

/// Key times shared by channels: where they are, and the cursor slot that follows them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Timeline {
    /// Start of its `n + 2` entries in [`Packed::times`].
    times: usize,
    /// Start of its `n + 1` entries in [`Packed::inv_dt`].
    inv_dt: usize,
    /// Number of keys `n` (at least 2).
    keys: usize,
    /// Its cursor in the sampling cache's hints: the slot of its first channel.
    slot: usize,
}

/// One linear channel: the joint it drives, its time line and where its keys are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct PackedChannel {
    joint: usize,
    timeline: usize,
    /// Start of its `n + 1` entries in [`Packed::values`].
    values: usize,
}

/// See the [module docs](self).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Packed {
    /// Per time line: `−∞, t₀, …, tₙ₋₁, +∞` (the sentinels make the cursor's bounds
    /// checks unconditional).
    times: Vec<f32>,
    /// Per time line: `1 / (tᵢ₊₁ − tᵢ)` for its `n − 1` segments, then `0` for the
    /// "segment" from the last key on.
    inv_dt: Vec<f32>,
    /// Per linear channel: its keys (`x, y, z, 0` for vectors, `i, j, k, w` for rotations,
    /// normalized by [`Track::new`]), the last one twice.
    values: Vec<[f32; 4]>,
    timelines: Vec<Timeline>,
    translations: Vec<PackedChannel>,
    rotations: Vec<PackedChannel>,
    scales: Vec<PackedChannel>,
    /// Channels with one key, or linear/step ones whose keys are all equal: joint, field
    /// and the value every sample returns.
    constants: Vec<(usize, Field, [f32; 4])>,
    /// Everything else: index into the clip's track sets and field.
    generic: Vec<(usize, Field)>,
}

impl Packed {
    pub(crate) fn new(joints: &[JointTracks]) -> Self {
        let mut p = Packed::default();
        let mut lines = HashMap::new();
        for (set, jt) in joints.iter().enumerate() {
            let vec = |v: &Vec3| [v.x, v.y, v.z, 0.0];
            if let Some(tr) = &jt.translation {
                p.add(&mut lines, set, jt.joint, Field::Translation, tr, vec, vec);
            }
            if let Some(tr) = &jt.rotation {
                let raw = |q: &Quaternion<f32>| [q.i, q.j, q.k, q.w];
                p.add(&mut lines, set, jt.joint, Field::Rotation, tr, raw, |q| raw(&track::normalize_or_identity(q)));
            }
            if let Some(tr) = &jt.scale {
                p.add(&mut lines, set, jt.joint, Field::Scale, tr, vec, vec);
            }
        }
        p
    }

    /// Time lines the sampling cache holds a segment for.
    pub(crate) fn timeline_count(&self) -> usize {
        self.timelines.len()
    }

    /// Files one channel. `raw` gives a stored key's components, `finish` the value
    /// sampling returns at that key (rotations normalized, as [`Track::sample`] does).
    #[allow(clippy::too_many_arguments)]
    fn add<T: TrackValue + PartialEq>(
        &mut self,
        lines: &mut HashMap<Vec<u32>, usize>,
        set: usize,
        joint: usize,
        field: Field,
        track: &Track<T>,
        raw: impl Fn(&T) -> [f32; 4],
        finish: impl Fn(&T) -> [f32; 4],
    ) {
        let times = track.times();
        let n = times.len();
        let interp = track.interpolation();
        let values = track.values();
        let all_equal = interp != Interpolation::CubicSpline && values.iter().all(|v| *v == values[0]);
        // Tiny components are stored as zero (see `track::TINY`).
        let finish = |v: &T| finish(v).map(track::flush_tiny);
        let raw = |v: &T| raw(v).map(track::flush_tiny);
        if n == 1 || all_equal {
            self.constants.push((joint, field, finish(track.key_value(0))));
            return;
        }
        let spacing_ok = times.windows(2).all(|w| {
            let inv = 1.0 / (w[1] - w[0]);
            inv.is_finite() && inv > 0.0
        });
        if interp != Interpolation::Linear || !spacing_ok {
            self.generic.push((set, field));
            return;
        }
        let key: Vec<u32> = times.iter().map(|t| t.to_bits()).collect();
        let timeline = *lines.entry(key).or_insert_with(|| {
            self.timelines.push(Timeline {
                times: self.times.len(),
                inv_dt: self.inv_dt.len(),
                keys: n,
                slot: 3 * set + field as usize,
            });
            self.times.push(f32::NEG_INFINITY);
            self.times.extend_from_slice(times);
            self.times.push(f32::INFINITY);
            self.inv_dt.extend(times.windows(2).map(|w| 1.0 / (w[1] - w[0])));
            // From the last key on, the "segment" is that key to itself, and its fraction 0.
            self.inv_dt.push(0.0);
            self.timelines.len() - 1
        });
        let ch = PackedChannel { joint, timeline, values: self.values.len() };
        // Linear rotation keys were normalized by `Track::new`, and sampling normalizes
        // its result as before: the keys are stored as they are.
        self.values.extend(values.iter().map(&raw));
        self.values.push(raw(&values[n - 1]));
        match field {
            Field::Translation => self.translations.push(ch),
            Field::Rotation => self.rotations.push(ch),
            Field::Scale => self.scales.push(ch),
        }
    }

    /// Samples every joint channel at `t` (already inside the clip's time line) into
    /// `locals`, updating the cursors in `hints`; `segments` holds one entry a time line.
    /// The caller checked that `hints` and `segments` fit the clip and `locals` holds every
    /// animated joint.
    pub(crate) fn sample(
        &self,
        joints: &[JointTracks],
        hints: &mut [usize],
        segments: &mut [(usize, f32)],
        t: f32,
        locals: &mut [Transform],
    ) {
        for (tl, seg) in self.timelines.iter().zip(segments.iter_mut()) {
            *seg = self.segment(tl, &mut hints[tl.slot], t);
        }
        let keys = |ch: &PackedChannel| {
            let (i, s) = segments[ch.timeline];
            (self.values[ch.values + i], self.values[ch.values + i + 1], s)
        };
        for ch in &self.translations {
            let (a, b, s) = keys(ch);
            locals[ch.joint].translation = lerp3(&a, &b, s);
        }
        for ch in &self.scales {
            let (a, b, s) = keys(ch);
            locals[ch.joint].scale = lerp3(&a, &b, s);
        }
        self.sample_rotations(segments, locals);
        for &(joint, field, v) in &self.constants {
            let local = &mut locals[joint];
            match field {
                Field::Translation => local.translation = Vec3::new(v[0], v[1], v[2]),
                Field::Rotation => local.rotation = Quat::new_unchecked(Quaternion::new(v[3], v[0], v[1], v[2])),
                Field::Scale => local.scale = Vec3::new(v[0], v[1], v[2]),
            }
        }
        for &(set, field) in &self.generic {
            let jt = &joints[set];
            let hint = &mut hints[3 * set + field as usize];
            let local = &mut locals[jt.joint];
            match field {
                Field::Translation => {
                    if let Some(tr) = &jt.translation {
                        local.translation = tr.sample_with_hint(hint, t);
                    }
                }
                Field::Rotation => {
                    if let Some(tr) = &jt.rotation {
                        local.rotation = tr.sample_with_hint(hint, t);
                    }
                }
                Field::Scale => {
                    if let Some(tr) = &jt.scale {
                        local.scale = tr.sample_with_hint(hint, t);
                    }
                }
            }
        }
    }

    /// The rotation channels, eight at a time on CPUs with AVX2 (chosen at run time), four
    /// at a time otherwise: the same bits either way, each lane [`track::slerp4`]'s.
    #[inline]
    fn sample_rotations(&self, segments: &[(usize, f32)], locals: &mut [Transform]) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            for chunk in self.rotations.chunks(8) {
                // SAFETY: checked at run time that this CPU supports AVX2; the caller
                // checked that `segments` and `locals` fit the clip.
                unsafe { avx2::slerp8(&self.values, chunk, segments, locals) };
            }
            return;
        }
        self.rotations_lanes::<4>(segments, locals);
    }

    /// `L` channels at a time through the `L`-lane slerp (the same bits as one at a time);
    /// the last chunk's missing lanes repeat its first channel.
    #[inline(always)]
    fn rotations_lanes<const L: usize>(&self, segments: &[(usize, f32)], locals: &mut [Transform]) {
        for chunk in self.rotations.chunks(L) {
            let (mut a, mut b, mut s) = ([[0.0f32; 4]; L], [[0.0f32; 4]; L], [0.0f32; L]);
            for (l, ch) in chunk.iter().enumerate() {
                let (i, f) = segments[ch.timeline];
                (a[l], b[l], s[l]) = (self.values[ch.values + i], self.values[ch.values + i + 1], f);
            }
            for l in chunk.len()..L {
                (a[l], b[l], s[l]) = (a[0], b[0], s[0]);
            }
            let q = track::slerp_lanes(&a, &b, &s);
            for (ch, q) in chunk.iter().zip(q) {
                locals[ch.joint].rotation = q;
            }
        }
    }

    /// The segment of time line `tl` around `t` (segment `i` runs from key `i` to key
    /// `i + 1`) and the fraction of the way along it: `0` before the first key, at a key and
    /// from the last key on, so the result is exactly a key there. `hint` is the number of
    /// keys at or before the last time sampled; forward playback moves it by at most two
    /// keys without a branch, anything else searches.
    #[inline(always)]
    fn segment(&self, tl: &Timeline, hint: &mut usize, t: f32) -> (usize, f32) {
        let n = tl.keys;
        // times[j] is key j − 1, with −∞ before the first and +∞ after the last.
        let times = &self.times[tl.times..tl.times + n + 2];
        let mut k = (*hint).min(n);
        k += usize::from(times[k + 1] <= t);
        k += usize::from(times[k + 1] <= t);
        if !(times[k] <= t && t < times[k + 1]) {
            k = times[1..=n].partition_point(|&x| x <= t);
        }
        *hint = k;
        // Before the first key the fraction clamps to 0, and from the last key on the
        // segment is that key to its copy (fraction 0): a key comes back exactly as stored.
        let i = k.saturating_sub(1);
        // `max`/`min`, not `clamp`: a NaN fraction (∞·0 when `t` is ~1e38 past a last key
        // near −f32::MAX) becomes 0, the key itself.
        #[allow(clippy::manual_clamp)]
        let s = ((t - times[i + 1]) * self.inv_dt[tl.inv_dt + i]).max(0.0).min(1.0);
        (i, s)
    }
}

/// `a·(1 − s) + b·s` on the first three components (as [`Track`]'s linear interpolation).
#[inline(always)]
fn lerp3(a: &[f32; 4], b: &[f32; 4], s: f32) -> Vec3 {
    let r = 1.0 - s;
    Vec3::new(a[0] * r + b[0] * s, a[1] * r + b[1] * s, a[2] * r + b[2] * s)
}

/// The eight-lane slerp of [`Packed::sample`] in AVX2 registers from the keys to the
/// locals: the arithmetic of [`track::slerp_lanes`] operation for operation (no fused
/// multiply-add; square root and division are exact in both), so every lane is
/// [`track::slerp4`]'s bits. Written with intrinsics so that the keys, fractions and
/// results never pass through the stack: assembled there lane by lane and read back as
/// whole vectors, they cost a store-forwarding stall each.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::{PackedChannel, track};
    use anim_math::{Quat, Transform};
    use nalgebra::Quaternion;
    use std::arch::x86_64::*;

    /// Slerps the channels of `chunk` (1 to 8 of them) at their time lines' segments into
    /// `locals`; missing lanes repeat the first channel and are not written.
    ///
    /// # Safety
    /// The CPU must support AVX2. `segments` holds every channel's time line and `locals`
    /// every channel's joint (checked by indexing: a violation panics, it is not UB).
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn slerp8(
        values: &[[f32; 4]],
        chunk: &[PackedChannel],
        segments: &[(usize, f32)],
        locals: &mut [Transform],
    ) {
        let n = chunk.len();
        debug_assert!((1..=8).contains(&n));
        // Lane l's keys and fraction (lanes past the chunk repeat its first channel).
        let key = |l: usize| {
            let ch = &chunk[if l < n { l } else { 0 }];
            let (i, f) = segments[ch.timeline];
            (&values[ch.values + i], &values[ch.values + i + 1], f)
        };
        let lanes = [key(0), key(1), key(2), key(3), key(4), key(5), key(6), key(7)];
        // SAFETY (every block below): AVX2 is enabled on this function; the loads read
        // 16 bytes from `[f32; 4]` keys and the stores write 16 bytes into `[f32; 4]`s.
        let (ka, kb) = unsafe {
            (lanes.map(|(a, _, _)| _mm_loadu_ps(a.as_ptr())), lanes.map(|(_, b, _)| _mm_loadu_ps(b.as_ptr())))
        };
        let t = _mm256_setr_ps(
            lanes[0].2, lanes[1].2, lanes[2].2, lanes[3].2, lanes[4].2, lanes[5].2, lanes[6].2, lanes[7].2,
        );
        let [x0, x1, x2, x3] = transpose_in(&ka);
        let [y0, y1, y2, y3] = transpose_in(&kb);
        let add = |a, b| _mm256_add_ps(a, b);
        let mul = |a, b| _mm256_mul_ps(a, b);
        let splat = |v: f32| _mm256_set1_ps(v);
        // (a0·b0 + a2·b2) + (a1·b1 + a3·b3), as nalgebra's dot product.
        let e = add(add(mul(x0, y0), mul(x2, y2)), add(mul(x1, y1), mul(x3, y3)));
        let sign = _mm256_blendv_ps(splat(1.0), splat(-1.0), _mm256_cmp_ps::<_CMP_LT_OQ>(e, splat(0.0)));
        let d = _mm256_andnot_ps(splat(-0.0), e);
        let (two_a, two_b) = sin_ratio::<2>(t, d);
        let (seven_a, seven_b) = sin_ratio::<7>(t, d);
        let two = _mm256_cmp_ps::<_CMP_GE_OQ>(d, splat(0.99));
        let wa = _mm256_blendv_ps(seven_a, two_a, two);
        let wb = mul(_mm256_blendv_ps(seven_b, two_b, two), sign);
        let q = [
            add(mul(x0, wa), mul(y0, wb)),
            add(mul(x1, wa), mul(y1, wb)),
            add(mul(x2, wa), mul(y2, wb)),
            add(mul(x3, wa), mul(y3, wb)),
        ];
        let n2 = add(add(mul(q[0], q[0]), mul(q[2], q[2])), add(mul(q[1], q[1]), mul(q[3], q[3])));
        let inv = _mm256_div_ps(splat(1.0), _mm256_sqrt_ps(n2));
        let ok = _mm256_and_ps(
            _mm256_cmp_ps::<_CMP_GE_OQ>(d, splat(0.7)),
            _mm256_and_ps(
                _mm256_cmp_ps::<_CMP_GT_OQ>(n2, splat(1e-24)),
                _mm256_cmp_ps::<_CMP_LE_OQ>(n2, splat(f32::MAX)),
            ),
        );
        let out = transpose_out(&q.map(|c| mul(c, inv)));
        let ok = _mm256_movemask_ps(ok);
        for (l, ch) in chunk.iter().enumerate() {
            let r = &mut locals[ch.joint].rotation;
            if ok & (1 << l) != 0 {
                let mut c = [0.0f32; 4];
                // SAFETY: see above.
                unsafe { _mm_storeu_ps(c.as_mut_ptr(), out[l]) };
                *r = Quat::new_unchecked(Quaternion::new(c[3], c[0], c[1], c[2]));
            } else {
                let (a, b, f) = lanes[l];
                *r = track::slerp4(a, b, f);
            }
        }
    }

    /// Eight `[x, y, z, w]` vectors to the four component vectors, lane `l` from vector `l`.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn transpose_in(k: &[__m128; 8]) -> [__m256; 4] {
        let r = [0, 1, 2, 3].map(|l| _mm256_set_m128(k[l + 4], k[l]));
        let (t0, t1) = (_mm256_unpacklo_ps(r[0], r[1]), _mm256_unpackhi_ps(r[0], r[1]));
        let (t2, t3) = (_mm256_unpacklo_ps(r[2], r[3]), _mm256_unpackhi_ps(r[2], r[3]));
        let pd = |a: __m256| _mm256_castps_pd(a);
        let ps = |a: __m256d| _mm256_castpd_ps(a);
        [
            ps(_mm256_unpacklo_pd(pd(t0), pd(t2))),
            ps(_mm256_unpackhi_pd(pd(t0), pd(t2))),
            ps(_mm256_unpacklo_pd(pd(t1), pd(t3))),
            ps(_mm256_unpackhi_pd(pd(t1), pd(t3))),
        ]
    }

    /// The four component vectors back to eight `[x, y, z, w]` vectors ([`transpose_in`]
    /// undone).
    #[inline]
    #[target_feature(enable = "avx2")]
    fn transpose_out(c: &[__m256; 4]) -> [__m128; 8] {
        let (t0, t1) = (_mm256_unpacklo_ps(c[0], c[1]), _mm256_unpackhi_ps(c[0], c[1]));
        let (t2, t3) = (_mm256_unpacklo_ps(c[2], c[3]), _mm256_unpackhi_ps(c[2], c[3]));
        let pd = |a: __m256| _mm256_castps_pd(a);
        let ps = |a: __m256d| _mm256_castpd_ps(a);
        let o = [
            ps(_mm256_unpacklo_pd(pd(t0), pd(t2))),
            ps(_mm256_unpackhi_pd(pd(t0), pd(t2))),
            ps(_mm256_unpacklo_pd(pd(t1), pd(t3))),
            ps(_mm256_unpackhi_pd(pd(t1), pd(t3))),
        ];
        [
            _mm256_castps256_ps128(o[0]),
            _mm256_castps256_ps128(o[1]),
            _mm256_castps256_ps128(o[2]),
            _mm256_castps256_ps128(o[3]),
            _mm256_extractf128_ps::<1>(o[0]),
            _mm256_extractf128_ps::<1>(o[1]),
            _mm256_extractf128_ps::<1>(o[2]),
            _mm256_extractf128_ps::<1>(o[3]),
        ]
    }

    /// `track::sin_ratio_lanes` on eight lanes: the same operations in the same order.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn sin_ratio<const N: usize>(t: __m256, d: __m256) -> (__m256, __m256) {
        const INV: [f32; 7] = [1.0 / 3.0, 1.0 / 10.0, 1.0 / 21.0, 1.0 / 36.0, 1.0 / 55.0, 1.0 / 78.0, 1.0 / 105.0];
        let one = _mm256_set1_ps(1.0);
        let s = _mm256_sub_ps(one, t);
        let (s2, t2, u) = (_mm256_mul_ps(s, s), _mm256_mul_ps(t, t), _mm256_sub_ps(d, one));
        let (mut acc_s, mut acc_t) = (one, one);
        let mut i = N;
        while i >= 1 {
            let fi2 = _mm256_set1_ps((i * i) as f32);
            let c = _mm256_mul_ps(_mm256_set1_ps(INV[i - 1]), u);
            acc_s = _mm256_add_ps(one, _mm256_mul_ps(_mm256_mul_ps(_mm256_sub_ps(s2, fi2), c), acc_s));
            acc_t = _mm256_add_ps(one, _mm256_mul_ps(_mm256_mul_ps(_mm256_sub_ps(t2, fi2), c), acc_t));
            i -= 1;
        }
        (_mm256_mul_ps(s, acc_s), _mm256_mul_ps(t, acc_t))
    }
}

#[cfg(test)]
mod tests {
    use super::track::{slerp_lanes, slerp4};
    use anim_math::Quat;

    /// An `L`-lane slerp returns [`slerp4`]'s bits in every lane, over keys from a few
    /// thousandths of a degree to half a turn apart, in either hemisphere, at fractions
    /// from 0 to 1, and for blends that cannot be normalized the common way (all-zero keys).
    fn check_lanes<const L: usize>(mut slerp: impl FnMut(&[[f32; 4]; L], &[[f32; 4]; L], &[f32; L]) -> [Quat; L]) {
        let mut s = 12345u32;
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            (s >> 8) as f32 / (1u32 << 24) as f32
        };
        let unit = |q: [f32; 4]| {
            let n = q.iter().map(|x| x * x).sum::<f32>().sqrt();
            q.map(|x| x / n)
        };
        for round in 0..5000 {
            let (mut a, mut b, mut t) = ([[0.0f32; 4]; L], [[0.0f32; 4]; L], [0.0f32; L]);
            for l in 0..L {
                a[l] = unit([next() - 0.5, next() - 0.5, next() - 0.5, next() - 0.5]);
                // Spread the angle between the keys over every branch of the series.
                let spread = [1e-5, 1e-3, 0.05, 0.3, 1.0, 3.0][(round + l) % 6];
                let d = [0, 1, 2, 3].map(|_| spread * (next() - 0.5));
                b[l] = unit([a[l][0] + d[0], a[l][1] + d[1], a[l][2] + d[2], a[l][3] + d[3]]);
                if next() < 0.3 {
                    b[l] = b[l].map(|x| -x);
                }
                t[l] = [0.0, 1.0, next()][(round + l) % 3];
            }
            if round % 97 == 0 {
                (a[2], b[2]) = ([0.0; 4], [0.0; 4]);
            }
            let got = slerp(&a, &b, &t);
            for l in 0..L {
                let want = slerp4(&a[l], &b[l], t[l]);
                assert_eq!(got[l].coords.map(f32::to_bits), want.coords.map(f32::to_bits), "round {round}, lane {l}");
            }
        }
    }

    #[test]
    fn four_lane_slerp_is_slerp_bit_for_bit() {
        check_lanes::<4>(slerp_lanes);
    }

    /// The eight-lane slerp as the baseline build compiles it, compiled for AVX2, and the
    /// AVX2 sampling kernel (on a CPU without AVX2 the test fails unless
    /// `ANIM_SKIP_KERNELS` names `avx2`, see `anim_testkit::kernels`).
    #[test]
    fn eight_lane_slerp_is_slerp_bit_for_bit() {
        check_lanes::<8>(slerp_lanes);
        #[cfg(target_arch = "x86_64")]
        {
            #[target_feature(enable = "avx2")]
            fn avx2(a: &[[f32; 4]; 8], b: &[[f32; 4]; 8], t: &[f32; 8]) -> [Quat; 8] {
                slerp_lanes(a, b, t)
            }
            // The sampling kernel on chunks of 1 to 8 channels (lane l: keys 2l and 2l + 1
            // on time line l); the lanes past the chunk must stay as they were.
            let mut chunk_len = 0;
            let kernel = |a: &[[f32; 4]; 8], b: &[[f32; 4]; 8], t: &[f32; 8]| {
                chunk_len = chunk_len % 8 + 1;
                let values: Vec<[f32; 4]> = (0..8).flat_map(|l| [a[l], b[l]]).collect();
                let chunk: Vec<_> =
                    (0..chunk_len).map(|l| super::PackedChannel { joint: l, timeline: l, values: 2 * l }).collect();
                let segments: Vec<_> = t.iter().map(|&f| (0, f)).collect();
                let mut locals = vec![anim_math::Transform::IDENTITY; 8];
                // SAFETY: the caller checked that this CPU supports AVX2.
                unsafe { super::avx2::slerp8(&values, &chunk, &segments, &mut locals) };
                std::array::from_fn(|l| {
                    if l < chunk_len {
                        locals[l].rotation
                    } else {
                        assert_eq!(locals[l], anim_math::Transform::IDENTITY, "lane {l} past a chunk of {chunk_len}");
                        super::track::slerp4(&a[l], &b[l], t[l])
                    }
                })
            };
            // Runs, or fails on a CPU without AVX2 unless `ANIM_SKIP_KERNELS` names it.
            if anim_testkit::kernels::require("avx2") {
                // SAFETY: `require` returned true: this CPU supports AVX2.
                check_lanes::<8>(|a, b, t| unsafe { avx2(a, b, t) });
                check_lanes::<8>(kernel);
            }
        }
    }
}
