//! The per-frame part of runtime-clip playback: the two active keys of sixteen tracks
//! ([`Interp`], one cache line a field), lerped (translation, scale) and nlerped
//! (rotation) into a structure-of-arrays pose.
//!
//! Three loops, chosen at run time: a portable one, four lanes at a time (what the compiler
//! makes of it for x86-64's SSE2 baseline); an AVX-512 one, sixteen lanes a register
//! (x86-64 with AVX-512 F, VL, BW and DQ); and an AVX2 + FMA one, eight lanes a register.
//! The two SIMD loops blend with fused multiply-adds and normalize rotations by a
//! reciprocal square root estimate refined by one Newton step. They agree with the portable
//! loop within a few ulps of the values, and within `3·10⁻⁷` (AVX-512: a 14-bit estimate)
//! or `4·10⁻⁷` (AVX2: a 12-bit one) of a rotation's length (tested below).

use crate::pose::{LANES, SoaTransform};

/// Tracks an [`Interp`] holds: sixteen, one 512-bit register a field.
pub(crate) const WIDE: usize = 16;

/// The two active keys of [`WIDE`] tracks, decoded: `v0` at `t0`, `v1` at `t1`.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, align(64))]
pub(crate) struct Interp<const N: usize> {
    pub(crate) t0: [f32; WIDE],
    pub(crate) t1: [f32; WIDE],
    pub(crate) inv: [f32; WIDE],
    pub(crate) v0: [[f32; WIDE]; N],
    pub(crate) v1: [[f32; WIDE]; N],
}

impl<const N: usize> Interp<N> {
    /// Every lane holding `identity`, with no key loaded.
    pub(crate) fn reset(identity: [f32; N]) -> Self {
        let lanes = identity.map(|c| [c; WIDE]);
        Self { t0: [0.0; WIDE], t1: [f32::NEG_INFINITY; WIDE], inv: [0.0; WIDE], v0: lanes, v1: lanes }
    }

    /// Shifts lane `l`'s next key to previous and loads `value` at `time` as the next.
    #[inline]
    pub(crate) fn push(&mut self, l: usize, time: f32, value: [f32; N]) {
        let t0 = self.t1[l];
        self.t0[l] = t0;
        self.t1[l] = time;
        self.inv[l] = if time > t0 { 1.0 / (time - t0) } else { 0.0 };
        for (c, v) in value.iter().enumerate() {
            self.v0[c][l] = self.v1[c][l];
            self.v1[c][l] = *v;
        }
    }

    /// Interpolation weights of the four lanes of quarter `q` at `t`.
    // Lane-indexed loops over several arrays at once are what vectorizes here.
    #[allow(clippy::needless_range_loop)]
    #[inline(always)]
    fn alpha(&self, q: usize, t: f32) -> [f32; LANES] {
        let mut a = [0.0; LANES];
        for l in 0..LANES {
            let i = q * LANES + l;
            let x = ((t - self.t0[i]) * self.inv[i]).clamp(0.0, 1.0);
            a[l] = if t >= self.t1[i] { 1.0 } else { x };
        }
        a
    }
}

/// The translation, rotation and scale keys of one group of [`WIDE`] tracks.
pub(crate) type Group<'a> = (&'a Interp<3>, &'a Interp<4>, &'a Interp<3>);

/// Lerps and nlerps every group's active keys at `t` into `out` (four joints a
/// [`SoaTransform`], [`WIDE`] / [`LANES`] of them a group): `group(g)` gives group `g`'s
/// keys, for every `g < out.len().div_ceil(WIDE / LANES)`.
#[inline]
pub(crate) fn interpolate<'a>(group: impl Fn(usize) -> Group<'a>, t: f32, out: &mut [SoaTransform]) {
    #[cfg(target_arch = "x86_64")]
    {
        if avx512() {
            // SAFETY: the CPU has AVX-512 F, VL, BW and DQ (checked just above).
            unsafe { x86::interpolate(group, t, out) };
            return;
        }
        if avx2() {
            // SAFETY: the CPU has AVX2 and FMA (checked just above).
            unsafe { x86::interpolate_avx2(group, t, out) };
            return;
        }
    }
    portable(group, t, out);
}

/// [`interpolate`] over three slices of groups.
#[cfg(test)]
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // read by the x86-64 loops only
fn slices<'a>(tr: &'a [Interp<3>], ro: &'a [Interp<4>], sc: &'a [Interp<3>]) -> impl Fn(usize) -> Group<'a> {
    move |g| (&tr[g], &ro[g], &sc[g])
}

/// True when the AVX-512 loop runs (checked once, then cached by the standard library).
#[cfg(target_arch = "x86_64")]
#[inline]
pub(crate) fn avx512() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512vl")
        && std::arch::is_x86_feature_detected!("avx512bw")
        && std::arch::is_x86_feature_detected!("avx512dq")
}

/// True when the AVX2 + FMA loop can run (checked once, then cached by the standard
/// library).
#[cfg(target_arch = "x86_64")]
#[inline]
pub(crate) fn avx2() -> bool {
    std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
}

/// The portable loop: four lanes at a time.
pub(crate) fn portable<'a>(group: impl Fn(usize) -> Group<'a>, t: f32, out: &mut [SoaTransform]) {
    for (w, chunk) in out.chunks_mut(WIDE / LANES).enumerate() {
        let (tr, ro, sc) = group(w);
        for (q, o) in chunk.iter_mut().enumerate() {
            interpolate_quarter(tr, ro, sc, q, t, o);
        }
    }
}

/// Quarter `q` (four lanes) of [`portable`]. Kept out of line: inlined, the compiler
/// vectorizes the loop over quarters instead of the lanes (gathering lanes), which measured
/// slower than this body, whose every operation is one four-lane instruction.
#[allow(clippy::needless_range_loop)]
#[inline(never)]
fn interpolate_quarter(tr: &Interp<3>, ro: &Interp<4>, sc: &Interp<3>, q: usize, t: f32, o: &mut SoaTransform) {
    let base = q * LANES;
    let a = tr.alpha(q, t);
    for c in 0..3 {
        for l in 0..LANES {
            o.translation[c][l] = tr.v0[c][base + l] * (1.0 - a[l]) + tr.v1[c][base + l] * a[l];
        }
    }
    let a = sc.alpha(q, t);
    for c in 0..3 {
        for l in 0..LANES {
            o.scale[c][l] = sc.v0[c][base + l] * (1.0 - a[l]) + sc.v1[c][base + l] * a[l];
        }
    }
    let a = ro.alpha(q, t);
    let mut r = [[0.0f32; LANES]; 4];
    let mut n2 = [0.0f32; LANES];
    for c in 0..4 {
        for l in 0..LANES {
            r[c][l] = ro.v0[c][base + l] * (1.0 - a[l]) + ro.v1[c][base + l] * a[l];
            n2[l] += r[c][l] * r[c][l];
        }
    }
    let mut inv = [0.0f32; LANES];
    for l in 0..LANES {
        inv[l] = 1.0 / n2[l].sqrt();
    }
    for c in 0..4 {
        for l in 0..LANES {
            o.rotation[c][l] = r[c][l] * inv[l];
        }
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) mod x86 {
    use super::{Group, Interp, LANES, SoaTransform, WIDE};
    use std::arch::x86_64::*;

    /// The AVX-512 loop: each [`Interp`] in sixteen-lane registers, its four quarters
    /// stored to four [`SoaTransform`]s.
    ///
    /// # Safety
    /// The CPU has AVX-512 F, VL, BW and DQ.
    #[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
    // Components are indexed across several arrays at once.
    #[allow(clippy::needless_range_loop)]
    pub(crate) unsafe fn interpolate<'a>(group: impl Fn(usize) -> Group<'a>, t: f32, out: &mut [SoaTransform]) {
        let tv = _mm512_set1_ps(t);
        for (w, chunk) in out.chunks_mut(WIDE / LANES).enumerate() {
            let (tr, ro, sc) = group(w);
            let mut v = [_mm512_setzero_ps(); 10];
            let a = alpha(tr, tv);
            for c in 0..3 {
                v[c] = lerp(&tr.v0[c], &tr.v1[c], a);
            }
            let a = alpha(sc, tv);
            for c in 0..3 {
                v[7 + c] = lerp(&sc.v0[c], &sc.v1[c], a);
            }
            let a = alpha(ro, tv);
            let mut n2 = _mm512_setzero_ps();
            for c in 0..4 {
                v[3 + c] = lerp(&ro.v0[c], &ro.v1[c], a);
                n2 = _mm512_fmadd_ps(v[3 + c], v[3 + c], n2);
            }
            // 1/√n2: the 14-bit estimate and one Newton step y·(1.5 − 0.5·n2·y²).
            let y = _mm512_rsqrt14_ps(n2);
            let half_ny = _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(0.5), n2), y);
            let y = _mm512_mul_ps(y, _mm512_fnmadd_ps(half_ny, y, _mm512_set1_ps(1.5)));
            for c in 3..7 {
                v[c] = _mm512_mul_ps(v[c], y);
            }
            // SoaTransform: translation[3][4], rotation[4][4], scale[3][4], in that order:
            // component k of quarter q goes to floats 4k.. of transform q.
            for (q, o) in chunk.iter_mut().enumerate() {
                let dst = std::ptr::from_mut(o).cast::<f32>();
                for (k, v) in v.iter().enumerate() {
                    let x = match q {
                        0 => _mm512_extractf32x4_ps::<0>(*v),
                        1 => _mm512_extractf32x4_ps::<1>(*v),
                        2 => _mm512_extractf32x4_ps::<2>(*v),
                        _ => _mm512_extractf32x4_ps::<3>(*v),
                    };
                    // SAFETY: a SoaTransform is 40 contiguous f32 (asserted below).
                    unsafe { _mm_storeu_ps(dst.add(LANES * k), x) };
                }
            }
        }
    }

    const _: () = assert!(size_of::<SoaTransform>() == 40 * size_of::<f32>());

    /// The AVX2 + FMA loop: each [`Interp`] field as two eight-lane halves, each half's
    /// two quarters stored to two [`SoaTransform`]s.
    ///
    /// The rotations' `1/√n2` is the 12-bit estimate (relative error at most 1.5·2⁻¹²)
    /// refined by one Newton step, which leaves at most 1.5 times its square (2·10⁻⁷) plus
    /// the roundings.
    ///
    /// # Safety
    /// The CPU has AVX2 and FMA.
    #[target_feature(enable = "avx2,fma")]
    // Components are indexed across several arrays at once.
    #[allow(clippy::needless_range_loop)]
    pub(crate) unsafe fn interpolate_avx2<'a>(group: impl Fn(usize) -> Group<'a>, t: f32, out: &mut [SoaTransform]) {
        let tv = _mm256_set1_ps(t);
        for (w, chunk) in out.chunks_mut(WIDE / LANES).enumerate() {
            let (tr, ro, sc) = group(w);
            for (h, pair) in chunk.chunks_mut(2).enumerate() {
                let base = HALF * h;
                let mut v = [_mm256_setzero_ps(); 10];
                let a = alpha8(tr, base, tv);
                for c in 0..3 {
                    v[c] = lerp8(&tr.v0[c], &tr.v1[c], base, a);
                }
                let a = alpha8(sc, base, tv);
                for c in 0..3 {
                    v[7 + c] = lerp8(&sc.v0[c], &sc.v1[c], base, a);
                }
                let a = alpha8(ro, base, tv);
                let mut n2 = _mm256_setzero_ps();
                for c in 0..4 {
                    v[3 + c] = lerp8(&ro.v0[c], &ro.v1[c], base, a);
                    n2 = _mm256_fmadd_ps(v[3 + c], v[3 + c], n2);
                }
                let y = _mm256_rsqrt_ps(n2);
                let half_ny = _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.5), n2), y);
                let y = _mm256_mul_ps(y, _mm256_fnmadd_ps(half_ny, y, _mm256_set1_ps(1.5)));
                for c in 3..7 {
                    v[c] = _mm256_mul_ps(v[c], y);
                }
                // Lanes 0..4 of each register belong to the pair's first transform, 4..8 to
                // its second; component k goes to floats 4k.. (the layout above).
                for (q, o) in pair.iter_mut().enumerate() {
                    let dst = std::ptr::from_mut(o).cast::<f32>();
                    for (k, v) in v.iter().enumerate() {
                        let x = if q == 0 { _mm256_castps256_ps128(*v) } else { _mm256_extractf128_ps::<1>(*v) };
                        // SAFETY: a SoaTransform is 40 contiguous f32 (asserted above).
                        unsafe { _mm_storeu_ps(dst.add(LANES * k), x) };
                    }
                }
            }
        }
    }

    /// Lanes an AVX2 register holds: half an [`Interp`] field.
    const HALF: usize = WIDE / 2;

    /// [`alpha`] for the eight lanes from `base` (0 or [`HALF`]).
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    fn alpha8<const N: usize>(g: &Interp<N>, base: usize, t: __m256) -> __m256 {
        debug_assert!(base + HALF <= WIDE);
        // SAFETY: base + 8 <= 16, the fields' length.
        let (t0, t1, inv) = unsafe {
            (
                _mm256_loadu_ps(g.t0.as_ptr().add(base)),
                _mm256_loadu_ps(g.t1.as_ptr().add(base)),
                _mm256_loadu_ps(g.inv.as_ptr().add(base)),
            )
        };
        let x = _mm256_mul_ps(_mm256_sub_ps(t, t0), inv);
        let x = _mm256_min_ps(_mm256_max_ps(x, _mm256_setzero_ps()), _mm256_set1_ps(1.0));
        _mm256_blendv_ps(x, _mm256_set1_ps(1.0), _mm256_cmp_ps::<_CMP_GE_OQ>(t, t1))
    }

    /// [`lerp`] for the eight lanes from `base` (0 or [`HALF`]).
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    fn lerp8(v0: &[f32; WIDE], v1: &[f32; WIDE], base: usize, a: __m256) -> __m256 {
        debug_assert!(base + HALF <= WIDE);
        // SAFETY: base + 8 <= 16.
        let (v0, v1) = unsafe { (_mm256_loadu_ps(v0.as_ptr().add(base)), _mm256_loadu_ps(v1.as_ptr().add(base))) };
        _mm256_fmadd_ps(v1, a, _mm256_mul_ps(v0, _mm256_sub_ps(_mm256_set1_ps(1.0), a)))
    }

    /// Interpolation weights of sixteen lanes at `t`: `clamp((t − t0)·inv, 0, 1)`, or 1
    /// from `t1` on.
    #[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
    #[inline]
    fn alpha<const N: usize>(g: &Interp<N>, t: __m512) -> __m512 {
        // SAFETY: 16 f32 each.
        let (t0, t1, inv) = unsafe {
            (_mm512_loadu_ps(g.t0.as_ptr()), _mm512_loadu_ps(g.t1.as_ptr()), _mm512_loadu_ps(g.inv.as_ptr()))
        };
        let x = _mm512_mul_ps(_mm512_sub_ps(t, t0), inv);
        let x = _mm512_min_ps(_mm512_max_ps(x, _mm512_setzero_ps()), _mm512_set1_ps(1.0));
        _mm512_mask_mov_ps(x, _mm512_cmp_ps_mask::<_CMP_GE_OQ>(t, t1), _mm512_set1_ps(1.0))
    }

    /// `v0·(1 − a) + v1·a`, sixteen lanes.
    #[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
    #[inline]
    fn lerp(v0: &[f32; WIDE], v1: &[f32; WIDE], a: __m512) -> __m512 {
        // SAFETY: 16 f32 each.
        let (v0, v1) = unsafe { (_mm512_loadu_ps(v0.as_ptr()), _mm512_loadu_ps(v1.as_ptr())) };
        _mm512_fmadd_ps(v1, a, _mm512_mul_ps(v0, _mm512_sub_ps(_mm512_set1_ps(1.0), a)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random active keys for `groups` groups: times around `t`, values in [-2, 2], unit
    /// quaternions in one hemisphere.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // read by the x86-64 loops only
    fn state(seed: u32, groups: usize) -> (Vec<Interp<3>>, Vec<Interp<4>>, Vec<Interp<3>>) {
        let mut s = seed;
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            (s >> 8) as f32 / (1u32 << 24) as f32
        };
        let vec3 = |reset: [f32; 3], next: &mut dyn FnMut() -> f32| {
            let mut g = Interp::reset(reset);
            for l in 0..WIDE {
                g.push(l, next() - 1.0, [0, 1, 2].map(|_| 4.0 * next() - 2.0));
                g.push(l, next() + 0.05, [0, 1, 2].map(|_| 4.0 * next() - 2.0));
            }
            g
        };
        let tr = (0..groups).map(|_| vec3([0.0; 3], &mut next)).collect();
        let sc = (0..groups).map(|_| vec3([1.0; 3], &mut next)).collect();
        let ro = (0..groups)
            .map(|_| {
                let mut g = Interp::reset([0.0, 0.0, 0.0, 1.0]);
                for l in 0..WIDE {
                    for _ in 0..2 {
                        let q = [next() - 0.5, next() - 0.5, next() - 0.5, 1.0];
                        let n = q.iter().map(|x| x * x).sum::<f32>().sqrt();
                        g.push(l, next() - 0.5, q.map(|x| x / n));
                    }
                }
                g
            })
            .collect();
        (tr, ro, sc)
    }

    /// The AVX-512 loop gives the portable loop's result within its bound: lerps within 2
    /// ulps of 2 (fused versus separate roundings), rotations within 3e-7 (the Newton step
    /// against a square root and a division); every quarter of `out` is written, and
    /// nothing past it. Times before, between and after the keys.
    #[test]
    fn avx512_loop_matches_the_portable_loop() {
        #[cfg(target_arch = "x86_64")]
        {
            if !anim_testkit::kernels::require("avx512") {
                return;
            }
            assert!(avx512());
            // SAFETY: checked just above.
            matches_the_portable_loop(|g, t, out| unsafe { x86::interpolate(g, t, out) }, 3e-7);
        }
    }

    /// The AVX2 loop, likewise; its rotations within 4e-7 (a 12-bit estimate before the
    /// Newton step: see `x86::interpolate_avx2`). Quarter counts that end on either half
    /// of a group.
    #[test]
    fn avx2_loop_matches_the_portable_loop() {
        #[cfg(target_arch = "x86_64")]
        {
            if !anim_testkit::kernels::require("avx2") {
                return;
            }
            assert!(avx2());
            // SAFETY: checked just above.
            matches_the_portable_loop(|g, t, out| unsafe { x86::interpolate_avx2(g, t, out) }, 4e-7);
        }
    }

    /// Runs `simd` against [`portable`] over several group and quarter counts and times;
    /// `rotation` bounds the rotations' difference.
    #[cfg(target_arch = "x86_64")]
    fn matches_the_portable_loop(
        simd: impl for<'a> Fn(&dyn Fn(usize) -> Group<'a>, f32, &mut [SoaTransform]),
        rotation: f32,
    ) {
        for (groups, quarters) in [(1, 1), (1, 2), (1, 3), (1, 4), (2, 7), (3, 9), (3, 10)] {
            let (tr, ro, sc) = state(groups as u32 * 77 + quarters as u32, groups);
            for t in [-2.0, -0.3, 0.0, 0.2, 0.7, 1.5] {
                let mut want = vec![SoaTransform::IDENTITY; quarters];
                portable(slices(&tr, &ro, &sc), t, &mut want);
                let mut got = vec![SoaTransform::IDENTITY; quarters + 1];
                let sentinel = got[quarters];
                simd(&slices(&tr, &ro, &sc), t, &mut got[..quarters]);
                assert_eq!(got[quarters], sentinel, "nothing written past `out`");
                for (g, (a, b)) in got.iter().zip(&want).enumerate() {
                    for l in 0..LANES {
                        for c in 0..3 {
                            let what = format!("{groups} groups, t {t}, quarter {g}, lane {l}, component {c}");
                            assert!((a.translation[c][l] - b.translation[c][l]).abs() < 5e-7, "{what}");
                            assert!((a.scale[c][l] - b.scale[c][l]).abs() < 5e-7, "{what}");
                        }
                        for c in 0..4 {
                            assert!(
                                (a.rotation[c][l] - b.rotation[c][l]).abs() < rotation,
                                "t {t} quarter {g} lane {l}: {} against {}",
                                a.rotation[c][l],
                                b.rotation[c][l]
                            );
                        }
                    }
                }
            }
        }
    }
}
