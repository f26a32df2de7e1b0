//! The AVX-512 scale-aware dual-quaternion loops ([`SkinMethod::Dq`](crate::skin::SkinMethod::Dq)
//! with bind-space scale): sixteen vertices a step.
//!
//! Each joint is one 64-byte row ([`DqRow`]): its dual quaternion and its symmetric scale
//! `Sᵢ` (six entries), so one aligned load and one fused multiply-add an influence blend
//! both, the rigid loop's cost with 512-bit registers in place of 256-bit ones. Sixteen
//! blended rows are transposed to structure-of-arrays form; then, sixteen lanes at a time:
//! `p' = q·(S·p)` with the rigid loop's formulas, and the normal
//! `normalize(rotate(r, cof(S)·n))` with `cof(S)` the cofactor matrix negated when
//! `det S < 0` ([`anim_math::normal_matrix`]). A lane whose `cof(S)·n` has a squared
//! length outside `[1e-30, f32::MAX]` (scales near 1e±10) is redone by the scalar rule, with
//! the scale matrix rescaled first ([`rescaled_normal_matrix`](super::math::rescaled_normal_matrix)).
//!
//! A palette whose every scale is uniform ([`DqPalette::is_uniform`](crate::skin::DqPalette::is_uniform))
//! transposes only the scale factor (lane 8, `Sᵢ = s·I`); then `p' = q·(s·p)` and the
//! normal `normalize(rotate(r, n))`, which is the general rule's for `S = s·I`, `s > 0`.
//!
//! Symmetric scales are what the palette stores (the polar decomposition of each joint's
//! matrix): nine floats an influence, read from a second row, made this loop 2.1× the
//! cost of LBS on the squashed fixture (AMD Zen 5, BENCHMARKS.md).

use super::avx512::{BLOCK, Decoded, Io, block_weights};
use super::avx512_dq::{Dq16, Four, Tests, block_tests, dot4, load_soa, store_soa, transpose};
use super::math::redone_dq_normal;
use super::source::{F32Src, Job, Source};
use crate::skin::palette::DqRow;
use anim_math::{DualQuat, Mat3, Vec3};
use std::arch::x86_64::*;

/// Runs [`dq_rows`] over `f32` influences (`joints`, `weights`, `job.per` a vertex), with
/// or without normals, specialised for 1, 2 and 4 influences; `uniform` when every scale
/// is `s·I` ([`DqPalette::is_uniform`](crate::skin::DqPalette::is_uniform)).
///
/// # Safety
/// As [`dq_rows`].
pub(super) unsafe fn run(joints: &[u16], weights: &[f32], job: Job<DualQuat>, rows: &[DqRow], uniform: bool) {
    let src = F32Src { joints, weights };
    let normals = !job.out_n.is_empty();
    macro_rules! go {
        ($sym:literal) => {
            match (job.per, normals) {
                (1, false) => dq_rows::<_, 1, false, $sym>(src, job, rows),
                (1, true) => dq_rows::<_, 1, true, $sym>(src, job, rows),
                (2, false) => dq_rows::<_, 2, false, $sym>(src, job, rows),
                (2, true) => dq_rows::<_, 2, true, $sym>(src, job, rows),
                (4, false) => dq_rows::<_, 4, false, $sym>(src, job, rows),
                (4, true) => dq_rows::<_, 4, true, $sym>(src, job, rows),
                (_, false) => dq_rows::<_, 0, false, $sym>(src, job, rows),
                (_, true) => dq_rows::<_, 0, true, $sym>(src, job, rows),
            }
        };
    }
    // SAFETY: as the caller promised.
    unsafe { if uniform { go!(false) } else { go!(true) } }
}

/// The AVX-512 loop for palettes with scale: `rows` holds each joint's dual quaternion and
/// scale (`job.palette`'s dual quaternions, unnegated: `job.coherent` and `job.risky`
/// describe them). `SYM`: the scales are symmetric matrices; else every one is `s·I`.
///
/// # Safety
/// As [`super::avx512::lbs`]; `rows` is as long as `job.palette`, the same joints, and
/// without `SYM` every row's scale is uniform.
#[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
pub(super) unsafe fn dq_rows<S: Source, const N: usize, const NORMALS: bool, const SYM: bool>(
    src: S,
    job: Job<DualQuat>,
    rows: &[DqRow],
) {
    let count = job.out_p.len();
    debug_assert!(count > 0 && job.pos.len() == count && rows.len() == job.palette.len());
    debug_assert!(!NORMALS || (job.nin.len() == count && job.out_n.len() == count));
    let n = if N == 0 { job.per } else { N };
    let io = Io {
        // A row is 16 contiguous f32, 64-byte aligned.
        pal: rows.as_ptr().cast::<f32>(),
        pos: job.pos.as_ptr().cast::<f32>(),
        nin: job.nin.as_ptr().cast::<f32>(),
        op: job.out_p.as_mut_ptr().cast::<f32>(),
        on: job.out_n.as_mut_ptr().cast::<f32>(),
        count,
    };
    // SAFETY: as the caller promised.
    unsafe {
        if job.coherent {
            row_blocks::<S, N, NORMALS, false, SYM>(src, n, job.risky, &io);
        } else {
            row_blocks::<S, N, NORMALS, true, SYM>(src, n, job.risky, &io);
        }
    }
}

/// Every block of the mesh, software-pipelined: the next block's blends and transposes
/// come before this block's transforms in the instruction stream, so the core overlaps
/// the two (a block's transforms wait on all sixteen of its blends); the next block is
/// held as its transposed registers, not its sixteen rows. With `CHECK`, each vertex
/// whose first joint is marked in `risky` takes the hemisphere tests.
///
/// # Safety
/// As [`dq_rows`].
#[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
#[inline]
unsafe fn row_blocks<S: Source, const N: usize, const NORMALS: bool, const CHECK: bool, const SYM: bool>(
    src: S,
    n: usize,
    risky: &[u64],
    io: &Io<f32>,
) {
    let count = io.count;
    let mut decoded = Decoded::new();
    // SAFETY (every call): full blocks end before the last vertex, the last block at it.
    unsafe {
        if count <= BLOCK {
            let b = blend_block::<S, N, NORMALS, false, CHECK, SYM>(src, 0, n, count, risky, io, &mut decoded);
            finish::<NORMALS, false, SYM>(&b, 0, count, io);
            return;
        }
        let mut b = blend_block::<S, N, NORMALS, true, CHECK, SYM>(src, 0, n, BLOCK, risky, io, &mut decoded);
        let mut v = 0;
        loop {
            let next = v + BLOCK;
            if next + BLOCK < count {
                let following =
                    blend_block::<S, N, NORMALS, true, CHECK, SYM>(src, next, n, BLOCK, risky, io, &mut decoded);
                finish::<NORMALS, true, SYM>(&b, v, BLOCK, io);
                (b, v) = (following, next);
            } else {
                let last = blend_block::<S, N, NORMALS, false, CHECK, SYM>(
                    src,
                    next,
                    n,
                    count - next,
                    risky,
                    io,
                    &mut decoded,
                );
                finish::<NORMALS, true, SYM>(&b, v, BLOCK, io);
                finish::<NORMALS, false, SYM>(&last, next, count - next, io);
                return;
            }
        }
    }
}

/// Sixteen blended rows transposed: real parts, dual parts (not normalized) and the scale
/// lane by lane: `s00, s11, s22, s01, s02, s12` (`SYM`), or the factor `s` in `s[0]`.
struct Blended {
    r: [__m512; 4],
    d: [__m512; 4],
    s: [__m512; 6],
}

/// The blends of vertices `v..v + len` (`FULL`: `len = BLOCK`), transposed; `CHECK` as in
/// [`row_blocks`]. Always inlined, as `avx512_dq`'s `blend_block`, so that it is compiled
/// with its caller's features.
///
/// # Safety
/// As [`dq_rows`]; `v + len <= count`, `0 < len <= BLOCK`; called only from functions with
/// the AVX-512 features.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn blend_block<
    S: Source,
    const N: usize,
    const NORMALS: bool,
    const FULL: bool,
    const CHECK: bool,
    const SYM: bool,
>(
    src: S,
    v: usize,
    n: usize,
    len: usize,
    risky: &[u64],
    io: &Io<f32>,
    decoded: &mut Decoded,
) -> Blended {
    let len = if FULL { BLOCK } else { len };
    // SAFETY: as the caller promised (the features; vertex v + i exists, its joints are
    // inside the rows).
    unsafe {
        let weights = block_weights::<S, N, FULL>(src, v, n, len, decoded);
        let mut b = [_mm512_setzero_ps(); BLOCK];
        let tests = if CHECK { block_tests(v, risky) } else { Tests::None };
        for (i, b) in b.iter_mut().enumerate() {
            if FULL || i < len {
                let four = Four::read::<S, N, NORMALS>(src, v + i, i, &weights);
                *b = if tests.vertex(src, v + i, n, risky) {
                    row_blend::<S, N, NORMALS, true>(src, v + i, i, n, &weights, four, io.pal)
                } else {
                    row_blend::<S, N, NORMALS, false>(src, v + i, i, n, &weights, four, io.pal)
                };
            }
        }
        if SYM {
            transpose_rows(&b)
        } else {
            let mut halves = [_mm256_setzero_ps(); BLOCK];
            for (h, b) in halves.iter_mut().zip(&b) {
                *h = _mm512_castps512_ps256(*b);
            }
            let (r, d) = transpose(&halves);
            let mut s = [_mm512_setzero_ps(); 6];
            s[0] = lane8(&b);
            Blended { r, d, s }
        }
    }
}

/// Skins vertices `v..v + len` (`FULL`: `len = BLOCK`) from their transposed blends `b`.
/// Always inlined (see [`blend_block`]).
///
/// # Safety
/// As [`blend_block`].
#[inline(always)]
unsafe fn finish<const NORMALS: bool, const FULL: bool, const SYM: bool>(
    b: &Blended,
    v: usize,
    len: usize,
    io: &Io<f32>,
) {
    let len = if FULL { BLOCK } else { len };
    let s = &b.s;
    // SAFETY: the caller has the AVX-512 features; vertices v..v + len exist.
    unsafe {
        let q = Dq16::new(&b.r, &b.d);
        let p = load_soa::<FULL>(io.pos.add(3 * v), len);
        let ps = if SYM {
            sym_mul(s, &p)
        } else {
            [_mm512_mul_ps(p[0], s[0]), _mm512_mul_ps(p[1], s[0]), _mm512_mul_ps(p[2], s[0])]
        };
        store_soa::<FULL>(io.op.add(3 * v), q.point(&ps), len);
        if !NORMALS {
            return;
        }
        let m = load_soa::<FULL>(io.nin.add(3 * v), len);
        let (nrm, in_range) = if SYM {
            // The cofactor matrix of a symmetric S is symmetric: six entries.
            let c = [
                _mm512_fmsub_ps(s[1], s[2], _mm512_mul_ps(s[5], s[5])),
                _mm512_fmsub_ps(s[0], s[2], _mm512_mul_ps(s[4], s[4])),
                _mm512_fmsub_ps(s[0], s[1], _mm512_mul_ps(s[3], s[3])),
                _mm512_fmsub_ps(s[4], s[5], _mm512_mul_ps(s[3], s[2])),
                _mm512_fmsub_ps(s[3], s[5], _mm512_mul_ps(s[4], s[1])),
                _mm512_fmsub_ps(s[3], s[4], _mm512_mul_ps(s[0], s[5])),
            ];
            let det = _mm512_fmadd_ps(s[0], c[0], _mm512_fmadd_ps(s[3], c[3], _mm512_mul_ps(s[4], c[4])));
            let flip = _mm512_and_ps(det, _mm512_set1_ps(-0.0));
            let mut nrm = sym_mul(&c, &m);
            for x in &mut nrm {
                *x = _mm512_xor_ps(*x, flip);
            }
            let n2 = _mm512_fmadd_ps(nrm[0], nrm[0], _mm512_fmadd_ps(nrm[1], nrm[1], _mm512_mul_ps(nrm[2], nrm[2])));
            let in_range = _mm512_cmp_ps_mask::<_CMP_GE_OQ>(n2, _mm512_set1_ps(1e-30))
                & _mm512_cmp_ps_mask::<_CMP_LE_OQ>(n2, _mm512_set1_ps(f32::MAX));
            (nrm, in_range)
        } else {
            (m, 0xFFFF)
        };
        let rot = q.rotate(&nrm);
        let len2 = _mm512_fmadd_ps(rot[0], rot[0], _mm512_fmadd_ps(rot[1], rot[1], _mm512_mul_ps(rot[2], rot[2])));
        let y = rsqrt(_mm512_max_ps(len2, _mm512_set1_ps(1e-30)));
        let unit = [_mm512_mul_ps(rot[0], y), _mm512_mul_ps(rot[1], y), _mm512_mul_ps(rot[2], y)];
        store_soa::<FULL>(io.on.add(3 * v), unit, len);
        let valid: __mmask16 = if len == BLOCK { 0xFFFF } else { (1u16 << len) - 1 };
        if SYM && in_range & valid != valid {
            redo_normals(v, len, !in_range & valid, &b.r, s, io);
        }
    }
}

/// Vertex `v`'s blended row (block lane `i`): the dual quaternion in lanes 0 to 7, not
/// normalized, the scale in lanes 8 to 13. With `TEST`, an influence whose real part's dot
/// product with the first influence's is negative has its dual quaternion's lanes negated
/// (not its scale's), as [`blend`](super::avx512_dq::blend) does.
///
/// # Safety
/// As [`blend`](super::avx512_dq::blend); every joint index is inside the rows at `pal` (64-byte aligned, 16 floats
/// a joint).
#[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
#[inline]
unsafe fn row_blend<S: Source, const N: usize, const NORMALS: bool, const TEST: bool>(
    src: S,
    v: usize,
    i: usize,
    n: usize,
    w: &super::avx512::BlockWeights,
    four: Option<Four>,
    pal: *const f32,
) -> __m512 {
    // As in `blend`: `Four` only in loops without normals.
    debug_assert!(four.is_none() || !NORMALS);
    // SAFETY: as the caller promised; each row is a whole aligned 64 bytes.
    unsafe {
        let weight = |k: usize, acc: &mut u32| -> __m512 {
            if let Some(f) = four {
                f.weight(k)
            } else if !w.unorm {
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
        let joint = |k: usize| four.map_or_else(|| src.joint(base + k), |f| f.joint(k));
        let q0 = _mm512_load_ps(pal.add(16 * joint(0)));
        let pivot = _mm512_castps512_ps128(q0);
        let sign = _mm_set1_ps(-0.0);
        let mut b = _mm512_mul_ps(weight(0, &mut acc), q0);
        for k in 1..n {
            let q = _mm512_load_ps(pal.add(16 * joint(k)));
            let q = if TEST {
                // The first influence is its own pivot (dot |r|² ≥ 0): never flipped.
                let flip = _mm_and_ps(dot4(_mm512_castps512_ps128(q), pivot), sign);
                _mm512_xor_ps(q, _mm512_maskz_broadcast_f32x4(0x00FF, flip))
            } else {
                q
            };
            b = _mm512_fmadd_ps(weight(k, &mut acc), q, b);
        }
        b
    }
}

/// Lane 8 of each of sixteen rows, as one register (lane `i` from row `i`): a tree of
/// two-source permutes, pairs of rows first.
#[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
#[inline]
fn lane8(b: &[__m512; BLOCK]) -> __m512 {
    // Level 1 puts lane 8 of rows 2k and 2k + 1 in lanes 0 and 1; each later level joins
    // the lanes filled so far of two registers.
    let first = _mm512_setr_epi32(8, 24, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    let mut t = [_mm512_setzero_ps(); 8];
    for (k, t) in t.iter_mut().enumerate() {
        *t = _mm512_permutex2var_ps(b[2 * k], first, b[2 * k + 1]);
    }
    for (level, join) in JOIN.iter().enumerate() {
        // SAFETY: 16 i32.
        let idx = unsafe { _mm512_loadu_si512(join.as_ptr().cast()) };
        for k in 0..(4 >> level) {
            t[k] = _mm512_permutex2var_ps(t[2 * k], idx, t[2 * k + 1]);
        }
    }
    t[0]
}

/// For [`lane8`]'s levels after the first: the `w` lanes filled in each of two registers,
/// side by side (`w` = 2, 4, 8).
const JOIN: [[i32; 16]; 3] = [join(2), join(4), join(8)];

const fn join(w: i32) -> [i32; 16] {
    let mut idx = [0i32; 16];
    let mut l = 0;
    while l < 16 {
        idx[l as usize] = if l < w {
            l
        } else if l < 2 * w {
            16 + l - w
        } else {
            0
        };
        l += 1;
    }
    idx
}

/// Sixteen rows (`rows[i]`, lanes 0 to 13) as their fourteen lanes, each a register of
/// sixteen: `r` lanes 0 to 3, `d` 4 to 7, `s` 8 to 13. Floats are unpacked and shuffled
/// within 128-bit quarters (quarter `q` of `u[4m + e]` then holds lane `4q + e` of rows
/// `4m..4m + 4`), and the quarters gathered by two shuffles of quarters each.
#[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
#[inline]
fn transpose_rows(rows: &[__m512; BLOCK]) -> Blended {
    let z = _mm512_setzero_ps();
    let mut t = [z; BLOCK];
    for k in 0..8 {
        t[2 * k] = _mm512_unpacklo_ps(rows[2 * k], rows[2 * k + 1]);
        t[2 * k + 1] = _mm512_unpackhi_ps(rows[2 * k], rows[2 * k + 1]);
    }
    let mut u = [z; BLOCK];
    for m in 0..4 {
        let (lo0, hi0, lo1, hi1) = (t[4 * m], t[4 * m + 1], t[4 * m + 2], t[4 * m + 3]);
        u[4 * m] = _mm512_shuffle_ps::<0x44>(lo0, lo1);
        u[4 * m + 1] = _mm512_shuffle_ps::<0xEE>(lo0, lo1);
        u[4 * m + 2] = _mm512_shuffle_ps::<0x44>(hi0, hi1);
        u[4 * m + 3] = _mm512_shuffle_ps::<0xEE>(hi0, hi1);
    }
    let mut lanes = [z; 14];
    for e in 0..4 {
        // Quarters 0 and 1 (lanes e and 4 + e) of rows 0-7, then of rows 8-15.
        let a = _mm512_shuffle_f32x4::<0b01_00_01_00>(u[e], u[4 + e]);
        let b = _mm512_shuffle_f32x4::<0b01_00_01_00>(u[8 + e], u[12 + e]);
        lanes[e] = _mm512_shuffle_f32x4::<0b10_00_10_00>(a, b);
        lanes[4 + e] = _mm512_shuffle_f32x4::<0b11_01_11_01>(a, b);
        if e < 2 {
            // Quarters 2 and 3: lanes 8 + e and 12 + e.
            let a = _mm512_shuffle_f32x4::<0b11_10_11_10>(u[e], u[4 + e]);
            let b = _mm512_shuffle_f32x4::<0b11_10_11_10>(u[8 + e], u[12 + e]);
            lanes[8 + e] = _mm512_shuffle_f32x4::<0b10_00_10_00>(a, b);
            lanes[12 + e] = _mm512_shuffle_f32x4::<0b11_01_11_01>(a, b);
        } else {
            // Quarter 2 only: lane 8 + e.
            let a = _mm512_shuffle_f32x4::<0b10_10_10_10>(u[e], u[4 + e]);
            let b = _mm512_shuffle_f32x4::<0b10_10_10_10>(u[8 + e], u[12 + e]);
            lanes[8 + e] = _mm512_shuffle_f32x4::<0b10_00_10_00>(a, b);
        }
    }
    Blended {
        r: [lanes[0], lanes[1], lanes[2], lanes[3]],
        d: [lanes[4], lanes[5], lanes[6], lanes[7]],
        s: [lanes[8], lanes[9], lanes[10], lanes[11], lanes[12], lanes[13]],
    }
}

/// `S·p` for the symmetric `s` (`s00, s11, s22, s01, s02, s12`), sixteen lanes.
#[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
#[inline]
fn sym_mul(s: &[__m512; 6], p: &[__m512; 3]) -> [__m512; 3] {
    [
        _mm512_fmadd_ps(s[0], p[0], _mm512_fmadd_ps(s[3], p[1], _mm512_mul_ps(s[4], p[2]))),
        _mm512_fmadd_ps(s[3], p[0], _mm512_fmadd_ps(s[1], p[1], _mm512_mul_ps(s[5], p[2]))),
        _mm512_fmadd_ps(s[4], p[0], _mm512_fmadd_ps(s[5], p[1], _mm512_mul_ps(s[2], p[2]))),
    ]
}

/// `1 / √s`: the 14-bit estimate refined by one Newton step.
#[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
#[inline]
fn rsqrt(s: __m512) -> __m512 {
    let y = _mm512_rsqrt14_ps(s);
    let half_sy = _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(0.5), s), y);
    _mm512_mul_ps(y, _mm512_fnmadd_ps(half_sy, y, _mm512_set1_ps(1.5)))
}

/// Redoes the normals of the block lanes in `lanes`, whose `cof(S)·n` left the range where
/// it normalizes accurately, as the scalar loop does: from the scale matrix rescaled to a
/// largest entry of 1.
///
/// # Safety
/// Vertices `v..v + len` exist and the lanes are below `len`.
#[cold]
#[inline(never)]
#[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
unsafe fn redo_normals(v: usize, len: usize, lanes: __mmask16, r: &[__m512; 4], s: &[__m512; 6], io: &Io<f32>) {
    let lane = |x: __m512, i: usize| {
        let mut a = [0.0f32; BLOCK];
        // SAFETY: 16 f32.
        unsafe { _mm512_storeu_ps(a.as_mut_ptr(), x) };
        a[i]
    };
    for i in (0..len).filter(|&i| lanes & (1 << i) != 0) {
        let q = [lane(r[0], i), lane(r[1], i), lane(r[2], i), lane(r[3], i)];
        let [s00, s11, s22, s01, s02, s12] = s.map(|x| lane(x, i));
        let m = Mat3::new(s00, s01, s02, s01, s11, s12, s02, s12, s22);
        // SAFETY: vertex v + i exists.
        let (n, dst) = unsafe { (*io.nin.cast::<Vec3>().add(v + i), io.on.cast::<Vec3>().add(v + i)) };
        // SAFETY: as above.
        unsafe { *dst = redone_dq_normal(q, &m, &n) };
    }
}
