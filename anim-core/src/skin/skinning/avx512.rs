//! The AVX-512 linear-blend loop ([`Kernel::Avx512`](super::Kernel::Avx512)): sixteen
//! vertices a step.
//!
//! Each vertex blends its palette matrices as one 512-bit register (the whole 4×4 matrix,
//! columns `[c0 | c1 | c2 | c3]`, one fused multiply-add per influence), then multiplies
//! it lane by lane with `[x x x x | y y y y | z z z z | 1 1 1 1]` (the position broadcast
//! by an in-lane permute). The four 128-bit quarters of four such products are summed
//! together by a 4×4 transpose of quarters: `(c0·x + c2·z) + (c1·y + c3)` for four vertices
//! in one register. Normals take the same path with `[nx | ny | nz | 0]`; renormalized
//! ones are scaled by a reciprocal square root estimate (relative error below 2⁻¹⁴)
//! refined by one Newton step, sixteen at a time (their squared lengths summed after a
//! transpose inside each 128-bit lane). Sixteen results are packed into three
//! registers of 12-byte records and stored at once.
//!
//! Compact layouts decode a block's unorm16 weights sixteen at a time into a buffer first
//! (the derived last weight from integer sums, as the scalar loop derives it), so every
//! weight reaches its multiply-add as a broadcast load.
//!
//! Results equal the scalar loop's up to float reassociation (products are rounded before
//! the sums here; the scalar loop sums `c0·x + c1·y + c2·z + c3` left to right).

use super::source::{Job, POS, RAW, Source, UNIT, UNORM16_SCALE, Weights};
use crate::skin::mesh::UNORM16_ONE;
use anim_math::Mat4;
use std::arch::x86_64::*;

/// Vertices a step.
pub(super) const BLOCK: usize = 16;

/// Most influences a vertex whose unorm16 weights are decoded a block at a time; vertices
/// with more decode each weight where it is used.
const MAX_SLOTS: usize = 8;

/// The weights of one block of vertices as the blend reads them.
pub(super) struct BlockWeights {
    /// `f32` weights: the layout's own (vertex stride `n`, slot stride 1), or the decoded
    /// buffer (vertex stride `n − 1` for the stored slots).
    pub(super) stored: *const f32,
    /// Vertex stride of `stored`.
    pub(super) stride: usize,
    /// Decoded derived last weights, one a vertex (unorm16 layouts only).
    pub(super) derived: *const f32,
    /// True when the weights were decoded (the last slot is read from `derived`).
    pub(super) unorm: bool,
}

/// Decode buffers for one block of unorm16 weights.
#[repr(C, align(64))]
pub(super) struct Decoded {
    stored: [f32; BLOCK * (MAX_SLOTS - 1)],
    derived: [f32; BLOCK],
}

impl Decoded {
    pub(super) fn new() -> Self {
        Self { stored: [0.0; BLOCK * (MAX_SLOTS - 1)], derived: [0.0; BLOCK] }
    }
}

/// The AVX-512 loop.
///
/// # Safety
/// The CPU supports AVX-512 F, VL, BW and DQ, AVX2 and FMA
/// ([`Kernel::Avx512`](super::Kernel::Avx512) is available); `job` was validated (see
/// [`Job`]) and every joint index `src` yields is below `job.palette.len()`.
#[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
pub(super) unsafe fn lbs<S: Source, const N: usize, const MODE: u8>(src: S, job: Job<Mat4>) {
    let count = job.out_p.len();
    debug_assert!(count > 0 && job.pos.len() == count);
    debug_assert!(MODE == POS || (job.nin.len() == count && job.out_n.len() == count));
    let n = if N == 0 { job.per } else { N };
    let io = Io {
        pal: job.palette.as_ptr().cast::<f32>(),
        pos: job.pos.as_ptr().cast::<f32>(),
        nin: job.nin.as_ptr().cast::<f32>(),
        op: job.out_p.as_mut_ptr().cast::<f32>(),
        on: job.out_n.as_mut_ptr().cast::<f32>(),
        count,
    };
    let mut decoded = Decoded::new();
    let mut v = 0;
    // SAFETY (both calls): `v + BLOCK < count` for full blocks (every 16-byte position and
    // normal read stays inside the arrays), `v + len = count` for the last.
    while v + BLOCK < count {
        unsafe { block::<S, N, MODE, true>(src, v, n, BLOCK, &io, &mut decoded) };
        v += BLOCK;
    }
    unsafe { block::<S, N, MODE, false>(src, v, n, count - v, &io, &mut decoded) };
}

/// The pointers one call reads and writes (lengths validated by the caller).
pub(super) struct Io<P> {
    pub(super) pal: *const P,
    pub(super) pos: *const f32,
    pub(super) nin: *const f32,
    pub(super) op: *mut f32,
    pub(super) on: *mut f32,
    pub(super) count: usize,
}

/// Decodes (unorm16 layouts) or locates (`f32`) the weights of vertices `v..v + len`.
///
/// # Safety
/// `v + len <= count`, `len <= BLOCK`; the AVX-512 features are present.
#[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
#[inline]
pub(super) unsafe fn block_weights<S: Source, const N: usize, const FULL: bool>(
    src: S,
    v: usize,
    n: usize,
    len: usize,
    decoded: &mut Decoded,
) -> BlockWeights {
    match src.weights() {
        // SAFETY: vertex v's weights start at v·n.
        Weights::F32(w) => BlockWeights { stored: unsafe { w.add(v * n) }, stride: n, derived: w, unorm: false },
        Weights::Unorm16(q) if n <= MAX_SLOTS => {
            let m = n - 1;
            let len = if FULL { BLOCK } else { len };
            // SAFETY: vertex v's stored weights start at v·m; `len` vertices hold len·m.
            let q = unsafe { q.add(v * m) };
            let scale = _mm512_set1_ps(UNORM16_SCALE);
            // The stored weights, sixteen at a time: zero-extended, converted (exactly:
            // they are below 2²⁴), scaled as the scalar loop scales them.
            let total = len * m;
            let mut c = 0;
            while c < total {
                let left = total - c;
                let mask: __mmask16 = if left >= 16 { 0xFFFF } else { (1u16 << left) - 1 };
                // SAFETY: the masked lanes are inside the stored weights; masked-off lanes
                // are not read (fault suppression).
                let x = unsafe { _mm256_maskz_loadu_epi16(mask, q.add(c).cast()) };
                let f = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepu16_epi32(x)), scale);
                // SAFETY: c + 16 <= BLOCK·(MAX_SLOTS − 1) since total <= BLOCK·m.
                unsafe { _mm512_storeu_ps(decoded.stored.as_mut_ptr().add(c), f) };
                c += 16;
            }
            // The derived last weights: 65535 minus the integer sum of the stored ones.
            let mut rest = [0i32; BLOCK];
            for (i, r) in rest.iter_mut().enumerate().take(len) {
                let mut acc = 0u32;
                for k in 0..m {
                    // SAFETY: i < len, k < m.
                    acc += u32::from(unsafe { *q.add(i * m + k) });
                }
                // The stored weights of a vertex sum to at most 65535.
                *r = (UNORM16_ONE - acc) as i32;
            }
            // SAFETY: `rest` holds 16 i32.
            let r = unsafe { _mm512_loadu_si512(rest.as_ptr().cast()) };
            // SAFETY: `derived` holds 16 f32.
            unsafe { _mm512_storeu_ps(decoded.derived.as_mut_ptr(), _mm512_mul_ps(_mm512_cvtepi32_ps(r), scale)) };
            BlockWeights { stored: decoded.stored.as_ptr(), stride: m, derived: decoded.derived.as_ptr(), unorm: true }
        }
        // More slots than the buffer holds: read through `Source::get` per weight.
        Weights::Unorm16(_) => {
            BlockWeights { stored: std::ptr::null(), stride: 0, derived: std::ptr::null(), unorm: true }
        }
    }
}

/// Skins vertices `v..v + len` (`FULL`: `len = BLOCK` and `v + BLOCK < count`).
///
/// # Safety
/// As [`lbs`]; `v + len <= count`, `0 < len <= BLOCK`, and `v + BLOCK < count` when `FULL`.
#[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
#[inline]
unsafe fn block<S: Source, const N: usize, const MODE: u8, const FULL: bool>(
    src: S,
    v: usize,
    n: usize,
    len: usize,
    io: &Io<f32>,
    decoded: &mut Decoded,
) {
    let len = if FULL { BLOCK } else { len };
    // SAFETY: as the caller promised.
    let weights = unsafe { block_weights::<S, N, FULL>(src, v, n, len, decoded) };
    // In-lane broadcast of lane 0, 1, 2 (and 3) of each 128-bit quarter's copy of a record.
    let spread = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
    let ones = _mm512_set1_ps(1.0);
    let zero = _mm512_setzero_ps();
    let mut sp = [zero; 4];
    let mut sn = [zero; 4];
    for g in 0..4 {
        let mut rp = [zero; 4];
        let mut rn = [zero; 4];
        for l in 0..4 {
            let i = 4 * g + l;
            if !FULL && i >= len {
                continue;
            }
            // SAFETY: vertex v + i exists; see `blend` and `record`.
            unsafe {
                let m = blend::<S, N>(src, v + i, i, n, &weights, io.pal);
                let p = _mm512_broadcast_f32x4(record::<FULL>(io.pos, v + i, io.count));
                rp[l] = _mm512_mul_ps(m, _mm512_mask_permutevar_ps(ones, 0x0FFF, p, spread));
                if MODE != POS {
                    let q = _mm512_broadcast_f32x4(record::<FULL>(io.nin, v + i, io.count));
                    rn[l] = _mm512_mul_ps(m, _mm512_maskz_permutevar_ps(0x0FFF, q, spread));
                }
            }
        }
        sp[g] = sum_quarters(rp);
        if MODE != POS {
            sn[g] = sum_quarters(rn);
        }
    }
    if MODE == UNIT {
        sn = unit(sn);
    }
    debug_assert!(MODE == POS || MODE == RAW || MODE == UNIT);
    // SAFETY: vertices v..v + len exist.
    unsafe {
        store_records::<FULL>(io.op.add(3 * v), sp, len);
        if MODE != POS {
            store_records::<FULL>(io.on.add(3 * v), sn, len);
        }
    }
}

/// The blended matrix of vertex `v` (block lane `i`): `Σ wₖ·Pₖ`, all sixteen elements.
///
/// # Safety
/// `v` is a vertex, `i < BLOCK` its lane in the block whose weights `w` describes, and
/// every joint index is inside the palette.
#[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
#[inline]
unsafe fn blend<S: Source, const N: usize>(
    src: S,
    v: usize,
    i: usize,
    n: usize,
    w: &BlockWeights,
    pal: *const f32,
) -> __m512 {
    // SAFETY: as the caller promised; a Mat4 is 16 contiguous f32.
    unsafe {
        let weight = |k: usize, acc: &mut u32| -> __m512 {
            if !w.unorm {
                _mm512_set1_ps(*w.stored.add(i * w.stride + k))
            } else if w.stored.is_null() {
                _mm512_set1_ps(src.get(v, n, k, acc).1)
            } else if k + 1 == n {
                _mm512_set1_ps(*w.derived.add(i))
            } else {
                _mm512_set1_ps(*w.stored.add(i * w.stride + k))
            }
        };
        let mut acc = 0;
        let base = v * n;
        let mut m = _mm512_mul_ps(weight(0, &mut acc), _mm512_loadu_ps(pal.add(16 * src.joint(base))));
        for k in 1..n {
            m = _mm512_fmadd_ps(weight(k, &mut acc), _mm512_loadu_ps(pal.add(16 * src.joint(base + k))), m);
        }
        m
    }
}

/// Vertex `v`'s 12-byte record at `p` as the first three lanes (the fourth is anything
/// finite or zero): a 16-byte load, except for the last record of the array.
///
/// # Safety
/// `v < count`, `p` holds `count` records; when `FULL`, `v + 1 < count`.
#[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
#[inline]
pub(super) unsafe fn record<const FULL: bool>(p: *const f32, v: usize, count: usize) -> __m128 {
    // SAFETY: a full 16-byte load when another record follows; else only three lanes are
    // read (fault suppression for the fourth).
    unsafe {
        let p = p.add(3 * v);
        if FULL || v + 1 < count { _mm_loadu_ps(p) } else { _mm_maskz_loadu_ps(0b0111, p) }
    }
}

/// `[Σ quarters of r₀ | Σ quarters of r₁ | Σ quarters of r₂ | Σ quarters of r₃]`, each sum
/// `(q0 + q2) + (q1 + q3)`: a transpose of 128-bit quarters folded into the additions.
#[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
#[inline]
fn sum_quarters(r: [__m512; 4]) -> __m512 {
    // [a.q2 a.q3 b.q0 b.q1] + [a.q0 a.q1 b.q2 b.q3] = [a(q0+q2) a(q1+q3) b(q0+q2) b(q1+q3)]
    let pair = |a: __m512, b: __m512| {
        _mm512_add_ps(_mm512_shuffle_f32x4::<0b01_00_11_10>(a, b), _mm512_mask_blend_ps(0xFF00, a, b))
    };
    let x = pair(r[0], r[1]);
    let y = pair(r[2], r[3]);
    _mm512_add_ps(_mm512_shuffle_f32x4::<0b10_00_10_00>(x, y), _mm512_shuffle_f32x4::<0b11_01_11_01>(x, y))
}

/// Sixteen vectors (lanes 0 to 2 of each quarter of `r[0..4]`) scaled to unit length:
/// `1/√s` by the 14-bit estimate refined by one Newton step `y·(1.5 − 0.5·s·y²)` (relative
/// error about 1e-7); a zero vector's squared length is clamped to 1e-30 as the scalar
/// loop does. The squared lengths are summed after a 4×4 transpose inside each 128-bit
/// lane (`(x² + y²) + z²`), so one estimate and one Newton step serve all sixteen.
#[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
#[inline]
fn unit(r: [__m512; 4]) -> [__m512; 4] {
    let sq =
        [_mm512_mul_ps(r[0], r[0]), _mm512_mul_ps(r[1], r[1]), _mm512_mul_ps(r[2], r[2]), _mm512_mul_ps(r[3], r[3])];
    // In each 128-bit lane k: lo01 = [a.x b.x a.y b.y], hi01 = [a.z b.z a.w b.w], …
    let lo01 = _mm512_unpacklo_ps(sq[0], sq[1]);
    let hi01 = _mm512_unpackhi_ps(sq[0], sq[1]);
    let lo23 = _mm512_unpacklo_ps(sq[2], sq[3]);
    let hi23 = _mm512_unpackhi_ps(sq[2], sq[3]);
    // x = [a.x b.x c.x d.x] (lane 4k + g: register g's quarter k), y, z alike.
    let x = _mm512_shuffle_ps::<0b01_00_01_00>(lo01, lo23);
    let y = _mm512_shuffle_ps::<0b11_10_11_10>(lo01, lo23);
    let z = _mm512_shuffle_ps::<0b01_00_01_00>(hi01, hi23);
    let s = _mm512_max_ps(_mm512_add_ps(_mm512_add_ps(x, y), z), _mm512_set1_ps(1e-30));
    let e = _mm512_rsqrt14_ps(s);
    let half_se = _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(0.5), s), e);
    let inv = _mm512_mul_ps(e, _mm512_fnmadd_ps(half_se, e, _mm512_set1_ps(1.5)));
    // Register g's quarter k takes lane 4k + g.
    [
        _mm512_mul_ps(r[0], _mm512_permute_ps::<0b00_00_00_00>(inv)),
        _mm512_mul_ps(r[1], _mm512_permute_ps::<0b01_01_01_01>(inv)),
        _mm512_mul_ps(r[2], _mm512_permute_ps::<0b10_10_10_10>(inv)),
        _mm512_mul_ps(r[3], _mm512_permute_ps::<0b11_11_11_11>(inv)),
    ]
}

/// Stores sixteen results (lanes 0 to 2 of each quarter of `s[0..4]`, vertex order) as
/// 12-byte records at `dst`: only the first `len` when not `FULL`.
///
/// # Safety
/// `dst` is valid for `12·len` bytes of writes (`len = BLOCK` when `FULL`).
#[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
#[inline]
unsafe fn store_records<const FULL: bool>(dst: *mut f32, s: [__m512; 4], len: usize) {
    let i0 = _mm512_setr_epi32(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, 16, 17, 18, 20);
    let i1 = _mm512_setr_epi32(5, 6, 8, 9, 10, 12, 13, 14, 16, 17, 18, 20, 21, 22, 24, 25);
    let i2 = _mm512_setr_epi32(10, 12, 13, 14, 16, 17, 18, 20, 21, 22, 24, 25, 26, 28, 29, 30);
    let o = [
        _mm512_permutex2var_ps(s[0], i0, s[1]),
        _mm512_permutex2var_ps(s[1], i1, s[2]),
        _mm512_permutex2var_ps(s[2], i2, s[3]),
    ];
    // SAFETY: as the caller promised; masked-off lanes are not written.
    unsafe {
        if FULL {
            for (k, o) in o.iter().enumerate() {
                _mm512_storeu_ps(dst.add(16 * k), *o);
            }
        } else {
            let floats = 3 * len;
            for (k, o) in o.iter().enumerate() {
                let left = floats.saturating_sub(16 * k).min(16);
                if left > 0 {
                    let mask = if left == 16 { 0xFFFF } else { (1u16 << left) - 1 };
                    _mm512_mask_storeu_ps(dst.add(16 * k), mask, *o);
                }
            }
        }
    }
}
