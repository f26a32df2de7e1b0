//! The AVX-512 rigid dual-quaternion loop ([`Kernel::Avx512`](super::Kernel::Avx512)):
//! sixteen vertices a step.
//!
//! Each vertex blends its dual quaternions as one 256-bit register `[real | dual]` a joint
//! (one fused multiply-add per influence), weights flipped where the joint's rotation lies
//! in the other hemisphere from the vertex's first joint's (the test is skipped when no
//! pair of the mesh can flip: [`Job::coherent`]). Sixteen blends are transposed to
//! structure-of-arrays form (eight registers of sixteen lanes) and positions and normals
//! are transformed sixteen at a time, with the formulas of the AVX2 loop: no
//! normalization, one division by the squared norm of the real part at the end. Positions
//! from `f32` weights blend the next block before transforming this one (software
//! pipelining, [`blocks_pipelined`]).

use super::avx512::{BLOCK, BlockWeights, Decoded, Io, block_weights};
use super::hemispheres::{MARK_BLOCK, RISK_WORDS};
use super::source::{Job, Source, Weights};
use anim_math::DualQuat;
use std::arch::x86_64::*;

/// The AVX-512 rigid dual-quaternion loop.
///
/// # Safety
/// As [`super::avx512::lbs`].
#[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
pub(super) unsafe fn dq<S: Source, const N: usize, const NORMALS: bool>(src: S, job: Job<DualQuat>) {
    let count = job.out_p.len();
    debug_assert!(count > 0 && job.pos.len() == count);
    debug_assert!(!NORMALS || (job.nin.len() == count && job.out_n.len() == count));
    let n = if N == 0 { job.per } else { N };
    let io = Io {
        // A DualQuat is 8 floats, real part [i, j, k, w] first (asserted in `fast`).
        pal: job.palette.as_ptr().cast::<f32>(),
        pos: job.pos.as_ptr().cast::<f32>(),
        nin: job.nin.as_ptr().cast::<f32>(),
        op: job.out_p.as_mut_ptr().cast::<f32>(),
        on: job.out_n.as_mut_ptr().cast::<f32>(),
        count,
    };
    // A coherent palette (the usual case) runs a loop without the per-vertex test at all
    // (a test inside the block, even one that always went the same way, cost 4-5% on
    // Fox's unorm16 layouts, Zen 5). Positions from f32 weights take the software-pipelined
    // loop ([`blocks_pipelined`]).
    let pipelined = !NORMALS && count > BLOCK && matches!(src.weights(), Weights::F32(_));
    // SAFETY: as the caller promised; the pipelined loop gets more than one block.
    unsafe {
        match (pipelined, job.coherent) {
            (true, true) => blocks_pipelined::<S, N, false>(src, n, job.risky, &io),
            (true, false) => blocks_pipelined::<S, N, true>(src, n, job.risky, &io),
            (false, true) => blocks::<S, N, NORMALS, false>(src, n, job.risky, &io),
            (false, false) => blocks::<S, N, NORMALS, true>(src, n, job.risky, &io),
        }
    }
}

/// Every block of the mesh; with `CHECK`, each vertex whose first joint is marked in
/// `risky` takes the hemisphere tests.
///
/// # Safety
/// As [`dq`].
#[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
#[inline]
unsafe fn blocks<S: Source, const N: usize, const NORMALS: bool, const CHECK: bool>(
    src: S,
    n: usize,
    risky: &[u64],
    io: &Io<f32>,
) {
    let count = io.count;
    let mut decoded = Decoded::new();
    let mut v = 0;
    // SAFETY (both calls): full blocks end before the last vertex, the last block at it.
    while v + BLOCK < count {
        unsafe {
            let b = blend_block::<S, N, NORMALS, true, CHECK>(src, v, n, BLOCK, risky, io, &mut decoded);
            finish::<NORMALS, true>(&b, v, BLOCK, io);
        }
        v += BLOCK;
    }
    unsafe {
        let b = blend_block::<S, N, NORMALS, false, CHECK>(src, v, n, count - v, risky, io, &mut decoded);
        finish::<NORMALS, false>(&b, v, count - v, io);
    }
}

/// [`blocks`] for positions from f32 weights (more than one block), software-pipelined:
/// the next block's blends come before this block's transpose and transforms in the
/// instruction stream, so the core overlaps the two (a block's transforms wait on all
/// sixteen of its blends): 14% faster on Fox (Zen 5). With normals or decoded weights the
/// sixteen blends held across the transforms no longer fit the registers, and this loop
/// was 4-7% slower than [`blocks`], which they keep.
///
/// # Safety
/// As [`dq`]; more than [`BLOCK`] vertices.
#[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
#[inline]
unsafe fn blocks_pipelined<S: Source, const N: usize, const CHECK: bool>(
    src: S,
    n: usize,
    risky: &[u64],
    io: &Io<f32>,
) {
    let count = io.count;
    debug_assert!(count > BLOCK);
    let mut decoded = Decoded::new();
    // SAFETY (every call): full blocks end before the last vertex, the last block at it.
    unsafe {
        let mut b = blend_block::<S, N, false, true, CHECK>(src, 0, n, BLOCK, risky, io, &mut decoded);
        let mut v = 0;
        loop {
            let next = v + BLOCK;
            if next + BLOCK < count {
                let following = blend_block::<S, N, false, true, CHECK>(src, next, n, BLOCK, risky, io, &mut decoded);
                finish::<false, true>(&b, v, BLOCK, io);
                (b, v) = (following, next);
            } else {
                let last =
                    blend_block::<S, N, false, false, CHECK>(src, next, n, count - next, risky, io, &mut decoded);
                finish::<false, true>(&b, v, BLOCK, io);
                finish::<false, false>(&last, next, count - next, io);
                return;
            }
        }
    }
}

/// The blended dual quaternions of vertices `v..v + len` (`FULL`: `len = BLOCK`), lane by
/// lane; `CHECK` as in [`blocks`]. Always inlined (as [`finish`]), so it is compiled into
/// each loop with that loop's AVX-512 features: a copy of its own, called from several
/// places, was not inlined, and the sixteen blends went through memory (15-20% slower).
///
/// # Safety
/// As [`dq`]; `v + len <= count`, `0 < len <= BLOCK`; called only from functions with
/// the AVX-512 features.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn blend_block<S: Source, const N: usize, const NORMALS: bool, const FULL: bool, const CHECK: bool>(
    src: S,
    v: usize,
    n: usize,
    len: usize,
    risky: &[u64],
    io: &Io<f32>,
    decoded: &mut Decoded,
) -> [__m256; BLOCK] {
    let len = if FULL { BLOCK } else { len };
    // SAFETY: as the caller promised.
    unsafe {
        let weights = block_weights::<S, N, FULL>(src, v, n, len, decoded);
        let mut b = [_mm256_setzero_ps(); BLOCK];
        let tests = if CHECK { block_tests(v, risky) } else { Tests::None };
        for (i, b) in b.iter_mut().enumerate() {
            if FULL || i < len {
                // Vertex v + i exists.
                let four = Four::read::<S, N, NORMALS>(src, v + i, i, &weights);
                *b = if tests.vertex(src, v + i, n, risky) {
                    blend::<S, N, NORMALS, true>(src, v + i, i, n, &weights, four, io.pal)
                } else {
                    blend::<S, N, NORMALS, false>(src, v + i, i, n, &weights, four, io.pal)
                };
            }
        }
        b
    }
}

/// Skins vertices `v..v + len` (`FULL`: `len = BLOCK`) from their blends `b`. Always
/// inlined (see [`blend_block`]).
///
/// # Safety
/// As [`dq`]; `v + len <= count`, `0 < len <= BLOCK`; called only from functions with
/// the AVX-512 features.
#[inline(always)]
unsafe fn finish<const NORMALS: bool, const FULL: bool>(b: &[__m256; BLOCK], v: usize, len: usize, io: &Io<f32>) {
    let len = if FULL { BLOCK } else { len };
    // SAFETY: the caller has the AVX-512 features; vertices v..v + len exist.
    unsafe {
        let (r, d) = transpose(b);
        let q = Dq16::new(&r, &d);
        let p = load_soa::<FULL>(io.pos.add(3 * v), len);
        store_soa::<FULL>(io.op.add(3 * v), q.point(&p), len);
        if NORMALS {
            let m = load_soa::<FULL>(io.nin.add(3 * v), len);
            store_soa::<FULL>(io.on.add(3 * v), q.rotate(&m), len);
        }
    }
}

/// Sixteen blended dual quaternions (real parts `r`, dual parts `d`, lane by lane) as the
/// transforms read them: the real part's vector and scalar parts, the dual part quartered
/// (see `math::dq_point`), their cross product, and `1 / |r|²` (no normalization: points
/// and vectors are divided by it at the end). Shared by the rigid and the scaled loop.
pub(super) struct Dq16 {
    u: [__m512; 3],
    wr: __m512,
    dv: [__m512; 3],
    wd: __m512,
    c: [__m512; 3],
    inv_l2: __m512,
}

impl Dq16 {
    /// # Safety
    /// Called only from functions with the AVX-512 features (always inlined into them).
    #[inline(always)]
    pub(super) unsafe fn new(r: &[__m512; 4], d: &[__m512; 4]) -> Self {
        // SAFETY: as the caller promised.
        unsafe {
            let l2 = _mm512_fmadd_ps(
                r[0],
                r[0],
                _mm512_fmadd_ps(r[1], r[1], _mm512_fmadd_ps(r[2], r[2], _mm512_mul_ps(r[3], r[3]))),
            );
            let inv_l2 = reciprocal(_mm512_max_ps(l2, _mm512_set1_ps(1e-30)));
            let u = [r[0], r[1], r[2]];
            let quarter = _mm512_set1_ps(0.25);
            let dv = [_mm512_mul_ps(d[0], quarter), _mm512_mul_ps(d[1], quarter), _mm512_mul_ps(d[2], quarter)];
            let c = cross(&u, &dv);
            Self { u, wr: r[3], dv, wd: _mm512_mul_ps(d[3], quarter), c, inv_l2 }
        }
    }

    /// Points `p` transformed: rotated, then translated by `t = 8·(w_r·d_v − w_d·r_v + r_v × d_v)`.
    ///
    /// # Safety
    /// As [`Dq16::new`].
    #[inline(always)]
    pub(super) unsafe fn point(&self, p: &[__m512; 3]) -> [__m512; 3] {
        // SAFETY: as the caller promised.
        unsafe {
            let off = rotation_offset(&self.u, self.wr, p);
            let eight = _mm512_set1_ps(8.0);
            let mut out = *p;
            for i in 0..3 {
                let t = _mm512_fmadd_ps(self.wr, self.dv[i], _mm512_fnmadd_ps(self.wd, self.u[i], self.c[i]));
                out[i] = _mm512_fmadd_ps(_mm512_fmadd_ps(eight, t, off[i]), self.inv_l2, p[i]);
            }
            out
        }
    }

    /// Vectors `m` rotated.
    ///
    /// # Safety
    /// As [`Dq16::new`].
    #[inline(always)]
    pub(super) unsafe fn rotate(&self, m: &[__m512; 3]) -> [__m512; 3] {
        // SAFETY: as the caller promised.
        unsafe {
            let off = rotation_offset(&self.u, self.wr, m);
            let mut out = *m;
            for i in 0..3 {
                out[i] = _mm512_fmadd_ps(off[i], self.inv_l2, m[i]);
            }
            out
        }
    }
}

/// `1 / x` lane by lane: the 14-bit estimate refined by one Newton step `y·(2 − x·y)`
/// (relative error about 1e-7, against a division's half an ulp).
#[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
#[inline]
pub(super) fn reciprocal(x: __m512) -> __m512 {
    let y = _mm512_rcp14_ps(x);
    _mm512_mul_ps(y, _mm512_fnmadd_ps(x, y, _mm512_set1_ps(2.0)))
}

/// A vertex's four joint indices (sixteen bits each, from the lowest) and four weights
/// (lanes 0 to 3), read with one load each for the blends of four influences in the loops
/// without normals. Read slot by slot, a blend issues three loads an influence (index,
/// weight broadcast, palette entry), and those loops were bound by loads: with these, the
/// uniform-scale loop ran 13% faster on the 80-joint fixture, the rigid one 9% on Fox
/// (BENCHMARKS.md). With normals the same reads made the loops slower (the permutes that
/// broadcast the weights compete with the transforms'), and they read slot by slot.
#[derive(Clone, Copy)]
pub(super) struct Four {
    joints: u64,
    weights: __m128,
}

impl Four {
    /// Vertex `v`'s slots (block lane `i`, weights `w`); `None` unless `N` is 4 and the
    /// loop skins positions alone (not `NORMALS`).
    ///
    /// # Safety
    /// As [`blend`]; called only from functions with the AVX-512 features.
    #[inline(always)]
    pub(super) unsafe fn read<S: Source, const N: usize, const NORMALS: bool>(
        src: S,
        v: usize,
        i: usize,
        w: &BlockWeights,
    ) -> Option<Four> {
        if N != 4 || NORMALS {
            return None;
        }
        // SAFETY: as the caller promised: vertex v's four slots exist.
        let joints = unsafe { src.joints4(4 * v) };
        // SAFETY: as the caller promised: vertex v's four slots exist; its f32 weights are
        // at i·4 of the block's, its decoded ones at i·3 (three lanes read) and i.
        unsafe {
            let weights = if !w.unorm {
                _mm_loadu_ps(w.stored.add(4 * i))
            } else {
                // Four slots decode a block at a time (at most MAX_SLOTS): `stored` is the buffer.
                let stored = _mm_maskz_loadu_ps(0b0111, w.stored.add(3 * i));
                _mm_blend_ps::<0b1000>(stored, _mm_broadcast_ss(&*w.derived.add(i)))
            };
            Some(Four { joints, weights })
        }
    }

    /// Slot `k`'s joint index.
    #[inline(always)]
    pub(super) fn joint(self, k: usize) -> usize {
        ((self.joints >> (16 * k)) & 0xFFFF) as usize
    }

    /// Slot `k`'s weight in every lane of 512 bits.
    ///
    /// # Safety
    /// Called only from functions with the AVX-512 features.
    #[inline(always)]
    pub(super) unsafe fn weight(self, k: usize) -> __m512 {
        // SAFETY: as the caller promised.
        unsafe { _mm512_permutexvar_ps(_mm512_set1_epi32(k as i32), _mm512_castps128_ps512(self.weights)) }
    }

    /// Slot `k`'s weight in every lane of 256 bits.
    ///
    /// # Safety
    /// As [`Four::weight`].
    #[inline(always)]
    pub(super) unsafe fn weight256(self, k: usize) -> __m256 {
        // SAFETY: as the caller promised.
        unsafe { _mm256_permutevar8x32_ps(_mm256_castps128_ps256(self.weights), _mm256_set1_epi32(k as i32)) }
    }
}

/// Vertex `v`'s blended dual quaternion `[real | dual]` (block lane `i`), not normalized;
/// with `TEST`, each influence's weight is negated when its real part's dot product with
/// the first influence's is negative.
///
/// # Safety
/// As [`super::avx512::lbs`]'s blend: `v` a vertex, `i < BLOCK`, joints inside the palette.
#[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
#[inline]
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn blend<S: Source, const N: usize, const NORMALS: bool, const TEST: bool>(
    src: S,
    v: usize,
    i: usize,
    n: usize,
    w: &BlockWeights,
    four: Option<Four>,
    pal: *const f32,
) -> __m256 {
    // `NORMALS` only tells which loop this blend is compiled into (`Four` is read by loops
    // without normals); the copies per loop keep each loop's code as it was measured.
    debug_assert!(four.is_none() || !NORMALS);
    // SAFETY: as the caller promised; a DualQuat is 8 contiguous f32.
    unsafe {
        let weight = |k: usize, acc: &mut u32| -> __m256 {
            if let Some(f) = four {
                f.weight256(k)
            } else if !w.unorm {
                _mm256_set1_ps(*w.stored.add(i * w.stride + k))
            } else if w.stored.is_null() {
                _mm256_set1_ps(src.get(v, n, k, acc).1)
            } else if k + 1 == n {
                _mm256_set1_ps(*w.derived.add(i))
            } else {
                _mm256_set1_ps(*w.stored.add(i * w.stride + k))
            }
        };
        let mut acc = 0;
        let base = v * n;
        let joint = |k: usize| four.map_or_else(|| src.joint(base + k), |f| f.joint(k));
        let q0 = _mm256_loadu_ps(pal.add(8 * joint(0)));
        let pivot = _mm256_castps256_ps128(q0);
        let sign = _mm_set1_ps(-0.0);
        let mut b = _mm256_mul_ps(weight(0, &mut acc), q0);
        for k in 1..n {
            let q = _mm256_loadu_ps(pal.add(8 * joint(k)));
            let q = if TEST {
                // The first influence is its own pivot (dot |r|² ≥ 0): never flipped.
                let flip = _mm_and_ps(dot4(_mm256_castps256_ps128(q), pivot), sign);
                _mm256_xor_ps(q, _mm256_set_m128(flip, flip))
            } else {
                q
            };
            b = _mm256_fmadd_ps(weight(k, &mut acc), q, b);
        }
        b
    }
}

/// Which vertices of a block test their influences' hemispheres.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Tests {
    /// None of them: no vertex of the block pivots on a risky joint.
    None,
    /// All of them: the block is marked (some vertex pivots on a risky joint).
    All,
    /// Those whose first joint is risky: the mesh's blocks are not marked.
    Risky,
}

impl Tests {
    /// Whether vertex `v` tests.
    ///
    /// # Safety
    /// As [`first_is_risky`].
    #[inline(always)]
    pub(super) unsafe fn vertex<S: Source>(self, src: S, v: usize, n: usize, risky: &[u64]) -> bool {
        match self {
            Tests::None => false,
            Tests::All => true,
            // SAFETY: as the caller promised.
            Tests::Risky => unsafe { first_is_risky(src, v, n, risky) },
        }
    }
}

/// [`Tests`] for the block starting at vertex `v` (a multiple of [`BLOCK`]) from `risky`,
/// the joints' bits followed, when the mesh's blocks are marked, by the blocks' bits.
#[inline(always)]
pub(super) fn block_tests(v: usize, risky: &[u64]) -> Tests {
    match risky.get(RISK_WORDS..) {
        Some(blocks) if !blocks.is_empty() => {
            let b = v / BLOCK;
            if blocks[b / 64] & (1 << (b % 64)) != 0 { Tests::All } else { Tests::None }
        }
        _ => Tests::Risky,
    }
}

const _: () = assert!(BLOCK == MARK_BLOCK, "the blocks marked are the loops' blocks");

/// True when vertex `v`'s first joint is marked in `risky` (see [`Job::risky`]).
///
/// # Safety
/// `v` is a vertex; `risky` covers every joint index.
#[inline(always)]
pub(super) unsafe fn first_is_risky<S: Source>(src: S, v: usize, n: usize, risky: &[u64]) -> bool {
    // SAFETY: slot v·n exists.
    let j = unsafe { src.joint(v * n) };
    // SAFETY: `risky` covers the palette, which covers every joint index (validated).
    unsafe { *risky.get_unchecked(j / 64) & (1 << (j % 64)) != 0 }
}

/// The four-lane dot product of `a` and `b`, in every lane.
#[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
#[inline]
pub(super) fn dot4(a: __m128, b: __m128) -> __m128 {
    let m = _mm_mul_ps(a, b);
    let m = _mm_add_ps(m, _mm_permute_ps::<0b10_11_00_01>(m));
    _mm_add_ps(m, _mm_permute_ps::<0b01_00_11_10>(m))
}

/// Sixteen `[rx ry rz rw dx dy dz dw]` rows as eight registers of sixteen lanes (real
/// components, then dual), lane `i` = row `i`: pairs of rows side by side in 512 bits
/// (`[b₀ | b₄]`, `[b₁ | b₅]`, …, then `[b₈ | b₁₂]`, …), an 8×8 transpose in each half, and
/// one shuffle of 128-bit quarters that puts the lanes in row order.
#[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
#[inline]
pub(super) fn transpose(b: &[__m256; BLOCK]) -> ([__m512; 4], [__m512; 4]) {
    let z = _mm512_setzero_ps();
    let mut c = [z; 8];
    for (k, &row) in [0, 1, 2, 3, 8, 9, 10, 11].iter().enumerate() {
        c[k] = _mm512_insertf32x8::<1>(_mm512_castps256_ps512(b[row]), b[row + 4]);
    }
    let mut t = [z; 8];
    for k in 0..4 {
        t[2 * k] = _mm512_unpacklo_ps(c[2 * k], c[2 * k + 1]);
        t[2 * k + 1] = _mm512_unpackhi_ps(c[2 * k], c[2 * k + 1]);
    }
    let mut s = [[z; 4]; 2];
    for (h, s) in s.iter_mut().enumerate() {
        let (lo0, hi0, lo1, hi1) = (t[4 * h], t[4 * h + 1], t[4 * h + 2], t[4 * h + 3]);
        *s = [
            _mm512_shuffle_ps::<0x44>(lo0, lo1),
            _mm512_shuffle_ps::<0xEE>(lo0, lo1),
            _mm512_shuffle_ps::<0x44>(hi0, hi1),
            _mm512_shuffle_ps::<0xEE>(hi0, hi1),
        ];
    }
    // s[0][i] = [real_i rows 0-3 | dual_i rows 0-3 | real_i rows 4-7 | dual_i rows 4-7],
    // s[1][i] the same for rows 8 to 15.
    let (mut r, mut d) = ([z; 4], [z; 4]);
    for i in 0..4 {
        r[i] = _mm512_shuffle_f32x4::<0b10_00_10_00>(s[0][i], s[1][i]);
        d[i] = _mm512_shuffle_f32x4::<0b11_01_11_01>(s[0][i], s[1][i]);
    }
    (r, d)
}

/// Lane masks of the first `floats` of 48 floats, split over three registers.
#[inline(always)]
fn masks(floats: usize) -> [__mmask16; 3] {
    [0, 1, 2].map(|k| {
        let left = floats.saturating_sub(16 * k).min(16);
        if left == 16 { 0xFFFF } else { (1u16 << left) - 1 }
    })
}

/// Sixteen consecutive 12-byte records at `p` as `[x, y, z]`, sixteen lanes each (the
/// first `len` when not `FULL`; the other lanes zero).
///
/// # Safety
/// `p` is valid for `12·len` bytes of reads (`len = BLOCK` when `FULL`).
#[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
#[inline]
pub(super) unsafe fn load_soa<const FULL: bool>(p: *const f32, len: usize) -> [__m512; 3] {
    // SAFETY: as the caller promised; masked-off lanes are not read.
    let z = unsafe {
        if FULL {
            [_mm512_loadu_ps(p), _mm512_loadu_ps(p.add(16)), _mm512_loadu_ps(p.add(32))]
        } else {
            let m = masks(3 * len);
            [
                _mm512_maskz_loadu_ps(m[0], p),
                _mm512_maskz_loadu_ps(m[1], p.add(16)),
                _mm512_maskz_loadu_ps(m[2], p.add(32)),
            ]
        }
    };
    // Component c of record i is float 3i + c: from the first two registers while
    // 3i + c < 32, from the third after (indices taken modulo 16 there).
    let mut out = [z[0]; 3];
    for (c, out) in out.iter_mut().enumerate() {
        // SAFETY: 16 i32.
        let lanes = unsafe { _mm512_loadu_si512(LOAD_LANES[c].as_ptr().cast()) };
        let low = _mm512_permutex2var_ps(z[0], lanes, z[1]);
        // Records 11 to 15 (and 10 for z) lie in the third register.
        let from_high: __mmask16 = if c < 2 { 0xF800 } else { 0xFC00 };
        *out = _mm512_mask_permutexvar_ps(low, from_high, lanes, z[2]);
    }
    out
}

/// For component `c` of [`load_soa`]: lane `i` takes float `3i + c` (modulo 32, then 16).
const LOAD_LANES: [[i32; 16]; 3] = [load_lanes(0), load_lanes(1), load_lanes(2)];

const fn load_lanes(c: i32) -> [i32; 16] {
    let mut l = [0i32; 16];
    let mut i = 0;
    while i < 16 {
        l[i as usize] = (3 * i + c) % 32;
        i += 1;
    }
    l
}

/// For register `k` of [`store_soa`]: float `f` is component `(16k + f) % 3` of record
/// `(16k + f) / 3`: the indices of a two-source permute of x and y (y's + 16), the
/// indices into z, and the lanes z fills.
const STORE_LANES: [([i32; 16], [i32; 16], u16); 3] = [store_lanes(0), store_lanes(1), store_lanes(2)];

const fn store_lanes(k: i32) -> ([i32; 16], [i32; 16], u16) {
    let mut xy = [0i32; 16];
    let mut zl = [0i32; 16];
    let mut zm: u16 = 0;
    let mut f = 0;
    while f < 16 {
        let g = 16 * k + f;
        let (rec, comp) = (g / 3, g % 3);
        xy[f as usize] = if comp == 1 { 16 + rec } else { rec };
        zl[f as usize] = rec;
        if comp == 2 {
            zm |= 1 << f;
        }
        f += 1;
    }
    (xy, zl, zm)
}

/// Stores `[x, y, z]` (sixteen lanes each) as sixteen 12-byte records at `p` (the first
/// `len` when not `FULL`): the inverse of [`load_soa`].
///
/// # Safety
/// `p` is valid for `12·len` bytes of writes (`len = BLOCK` when `FULL`).
#[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
#[inline]
pub(super) unsafe fn store_soa<const FULL: bool>(p: *mut f32, [x, y, z]: [__m512; 3], len: usize) {
    let mut out = [x; 3];
    for (k, out) in out.iter_mut().enumerate() {
        let (xy, zl, zm) = &STORE_LANES[k];
        // SAFETY: 16 i32 each.
        let (xy, zl) = unsafe { (_mm512_loadu_si512(xy.as_ptr().cast()), _mm512_loadu_si512(zl.as_ptr().cast())) };
        *out = _mm512_mask_permutexvar_ps(_mm512_permutex2var_ps(x, xy, y), *zm, zl, z);
    }
    // SAFETY: as the caller promised; masked-off lanes are not written.
    unsafe {
        if FULL {
            for (k, o) in out.iter().enumerate() {
                _mm512_storeu_ps(p.add(16 * k), *o);
            }
        } else {
            let m = masks(3 * len);
            for (k, o) in out.iter().enumerate() {
                _mm512_mask_storeu_ps(p.add(16 * k), m[k], *o);
            }
        }
    }
}

/// `a × b` for three-component vectors of sixteen lanes.
#[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
#[inline]
pub(super) fn cross(a: &[__m512; 3], b: &[__m512; 3]) -> [__m512; 3] {
    [
        _mm512_fmsub_ps(a[1], b[2], _mm512_mul_ps(a[2], b[1])),
        _mm512_fmsub_ps(a[2], b[0], _mm512_mul_ps(a[0], b[2])),
        _mm512_fmsub_ps(a[0], b[1], _mm512_mul_ps(a[1], b[0])),
    ]
}

/// `2·(w·(u×v) + u×(u×v))`: for the quaternion `(u, w)` with `l2 = |(u, w)|²`, the rotated
/// `v` times `l2`, minus `l2·v`.
#[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
#[inline]
pub(super) fn rotation_offset(u: &[__m512; 3], w: __m512, v: &[__m512; 3]) -> [__m512; 3] {
    let c = cross(u, v);
    let cc = cross(u, &c);
    let mut o = cc;
    for i in 0..3 {
        let x = _mm512_fmadd_ps(w, c[i], cc[i]);
        o[i] = _mm512_add_ps(x, x);
    }
    o
}
