//! The AVX2 + FMA scale-aware dual-quaternion loop ([`SkinMethod::Dq`](crate::skin::SkinMethod::Dq)
//! with bind-space scale): eight vertices a step, for CPUs without AVX-512.
//!
//! Each vertex blends its dual quaternions as the rigid AVX2 loop does (one 256-bit
//! register `[real | dual]`, hemisphere tests skipped for a coherent palette and for the
//! blocks the hemisphere analysis leaves unmarked) and its
//! symmetric scale matrices `Sᵢ` as one 256-bit register (the six entries
//! `s00, s11, s22, s01, s02, s12` of the joint's [`DqRow`], then two zeros): one fused
//! multiply-add of each per influence. Eight of each are transposed to
//! structure-of-arrays form; then, eight lanes at a time, the formulas of the AVX-512 loop
//! (`avx512_scaled`): `p' = q·(S·p)`, and the normal
//! `normalize(rotate(r, cof(S)·n))` with `cof(S)` negated when `det S < 0`
//! ([`anim_math::normal_matrix`]). A lane whose `cof(S)·n` has a squared length outside
//! `[1e-30, f32::MAX]` is redone by the scalar rule, from the rescaled scale matrix
//! ([`rescaled_normal_matrix`](super::math::rescaled_normal_matrix)). The last block, shorter than eight, runs the same code on
//! copies of its inputs padded with zeros.
//!
//! A palette whose every scale is uniform ([`DqPalette::is_uniform`](crate::skin::DqPalette::is_uniform))
//! takes only entry 0 of each blended scale (`Sᵢ = s·I`, seven shuffles in place of a
//! transpose); then `p' = q·(s·p)` and the normal `normalize(rotate(r, n))`, which is the
//! general rule's for `S = s·I`, `s > 0`.
//!
//! Full blocks are compiled apart from the last one and, for each, with and without the
//! hemisphere tests: with the lane count and the tests' presence known, a block is one
//! straight run of loads and FMAs (a block that decided both at run time cost 1.2× on the
//! 80-joint fixture, AMD Zen 3, BENCHMARKS.md).
//!
//! Measured on the 80-joint fixture (AMD Zen 3, BENCHMARKS.md): the blends alone cost about
//! what the whole LBS loop costs (two 256-bit loads and FMAs an influence, as LBS's 4×4
//! matrix), so the transposes and the transform come on top: 1.45–1.6× LBS with uniform
//! scales, 1.7–1.85× with symmetric ones. When the scales were general matrices (nine
//! entries, one register and one scalar lane) this loop was 3.7× the speed of the scalar
//! loop compiled for AVX2 that it replaced. Variants that ran slower there and were
//! dropped: the AVX-512 loop's per-joint `risky` bits (the fixture's random influences mark
//! nearly every joint, and the extra branch costs more than it skips); blending the scales
//! first and the dual quaternions after (fewer live registers, 10–16% slower); each sum of
//! four influences as two pairs (a shorter chain, no faster); for uniform scales, the
//! factor blended by scalar FMAs from 4-byte loads (10% slower than the 256-bit blend); the
//! next block's blends issued before this block's transform (software pipelining, 5%
//! slower).

use super::fast::x86::{Dq8, blend, load_soa8, store_soa8, transpose8};
use super::hemispheres::block_clean;
use super::math::redone_dq_normal;
use super::source::{F32Src, Job, Source};
use crate::skin::palette::DqRow;
use anim_math::{DualQuat, Mat3, Vec3};
use std::arch::x86_64::*;

/// Vertices a step.
const BLOCK: usize = 8;

const _: () = assert!(super::hemispheres::MARK_BLOCK.is_multiple_of(BLOCK), "a step lies in one marked block");

/// Runs [`dq_scaled`] over `f32` influences (`joints`, `weights`, `job.per` a vertex), with
/// or without normals, specialised for 1, 2 and 4 influences; `uniform` when every scale
/// is `s·I` ([`DqPalette::is_uniform`](crate::skin::DqPalette::is_uniform)).
///
/// # Safety
/// As [`dq_scaled`].
pub(super) unsafe fn run(joints: &[u16], weights: &[f32], job: Job<DualQuat>, scales: &[DqRow], uniform: bool) {
    let src = F32Src { joints, weights };
    let normals = !job.out_n.is_empty();
    macro_rules! go {
        ($sym:literal) => {
            match (job.per, normals) {
                (1, false) => dq_scaled::<_, 1, false, $sym>(src, job, scales),
                (1, true) => dq_scaled::<_, 1, true, $sym>(src, job, scales),
                (2, false) => dq_scaled::<_, 2, false, $sym>(src, job, scales),
                (2, true) => dq_scaled::<_, 2, true, $sym>(src, job, scales),
                (4, false) => dq_scaled::<_, 4, false, $sym>(src, job, scales),
                (4, true) => dq_scaled::<_, 4, true, $sym>(src, job, scales),
                (_, false) => dq_scaled::<_, 0, false, $sym>(src, job, scales),
                (_, true) => dq_scaled::<_, 0, true, $sym>(src, job, scales),
            }
        };
    }
    // SAFETY: as the caller promised.
    unsafe { if uniform { go!(false) } else { go!(true) } }
}

/// Where one block reads and writes: its first vertex's three floats in each array.
struct Io {
    pos: *const f32,
    nin: *const f32,
    op: *mut f32,
    on: *mut f32,
}

/// The AVX2 scale-aware dual-quaternion loop: `job`'s palette holds the rigid parts,
/// `scales` the rows that hold the bind-space scales, one a joint. `SYM`: the scales are
/// symmetric matrices; else every one is `s·I`, `s > 0`.
///
/// # Safety
/// The CPU supports AVX2 and FMA; `job` was validated (see [`Job`]), every joint index
/// `src` yields is below `job.palette.len()`, and `scales` is as long as `job.palette`.
#[target_feature(enable = "avx2,fma")]
unsafe fn dq_scaled<S: Source, const N: usize, const NORMALS: bool, const SYM: bool>(
    src: S,
    job: Job<DualQuat>,
    scales: &[DqRow],
) {
    let count = job.out_p.len();
    debug_assert!(count > 0 && job.pos.len() == count && scales.len() == job.palette.len());
    debug_assert!(!NORMALS || (job.nin.len() == count && job.out_n.len() == count));
    let n = if N == 0 { job.per } else { N };
    // SAFETY: a DualQuat is 8 floats, real part first (checked in `fast`).
    let pal = job.palette.as_ptr().cast::<f32>();
    // A row is 16 contiguous f32, 64-byte aligned; its scale's six entries and two zeros
    // are the 32-byte aligned floats 8 to 15.
    // SAFETY: the palette is not empty (`count > 0` vertices have joints inside it), so
    // the first row's float 8 exists.
    let sc = unsafe { scales.as_ptr().cast::<f32>().add(8) };
    let (pos, nin) = (job.pos.as_ptr().cast::<f32>(), job.nin.as_ptr().cast::<f32>());
    let (op, on) = (job.out_p.as_mut_ptr().cast::<f32>(), job.out_n.as_mut_ptr().cast::<f32>());
    // A block of eight (from a multiple of eight) lies in one block of sixteen of the
    // hemisphere marks: when the palette is coherent or that block is not marked, no
    // vertex of it flips a weight and its blends skip the tests.
    let uniform = |v| job.coherent || block_clean(v, job.risky);
    let mut v = 0;
    while v + BLOCK <= count {
        // SAFETY: vertices v..v + 8 exist: 24 floats of each array from 3·v.
        unsafe {
            let io = Io { pos: pos.add(3 * v), nin: nin.add(3 * v), op: op.add(3 * v), on: on.add(3 * v) };
            if uniform(v) {
                block::<S, N, NORMALS, SYM, true, true>(src, v, n, BLOCK, pal, sc, &io);
            } else {
                block::<S, N, NORMALS, SYM, true, false>(src, v, n, BLOCK, pal, sc, &io);
            }
        }
        v += BLOCK;
    }
    if v < count {
        // The last vertices, through zero-padded copies of their inputs and outputs.
        let len = count - v;
        let mut tmp = [[0.0f32; 3 * BLOCK]; 4];
        tmp[0][..3 * len].copy_from_slice(flat(&job.pos[v..]));
        if NORMALS {
            tmp[1][..3 * len].copy_from_slice(flat(&job.nin[v..]));
        }
        let [p_in, n_in, p_out, n_out] = &mut tmp;
        let io = Io { pos: p_in.as_ptr(), nin: n_in.as_ptr(), op: p_out.as_mut_ptr(), on: n_out.as_mut_ptr() };
        // SAFETY: the copies hold eight vertices; vertices v..count exist.
        unsafe {
            if uniform(v) {
                block::<S, N, NORMALS, SYM, false, true>(src, v, n, len, pal, sc, &io);
            } else {
                block::<S, N, NORMALS, SYM, false, false>(src, v, n, len, pal, sc, &io);
            }
        }
        flat_mut(&mut job.out_p[v..]).copy_from_slice(&p_out[..3 * len]);
        if NORMALS {
            flat_mut(&mut job.out_n[v..]).copy_from_slice(&n_out[..3 * len]);
        }
    }
}

/// A slice of vectors as its floats (`Vec3` is three contiguous `f32`).
fn flat(v: &[Vec3]) -> &[f32] {
    // SAFETY: nalgebra's `Vector3<f32>` is `repr(C)` storage of three f32, no padding.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<f32>(), 3 * v.len()) }
}

/// [`flat`] for writing.
fn flat_mut(v: &mut [Vec3]) -> &mut [f32] {
    // SAFETY: as in `flat`; the borrow is unique.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<f32>(), 3 * v.len()) }
}

/// Skins the `len` (1 to 8) vertices from `v`, reading and writing them through `io`,
/// which holds eight vertices (lanes past `len` are computed from zeros and ignored).
/// `SYM`: the scales are symmetric matrices, else every one is `s·I`; `FULL`: `len` is 8
/// (and ignored); `NO_TESTS`: no vertex of the block flips a weight (a coherent palette
/// or an unmarked block), so the blends skip the hemisphere tests.
///
/// # Safety
/// As [`dq_scaled`]; vertices `v..v + len` exist and `io`'s pointers are valid for 24
/// floats.
#[target_feature(enable = "avx2,fma")]
#[inline]
#[allow(clippy::too_many_arguments)]
unsafe fn block<
    S: Source,
    const N: usize,
    const NORMALS: bool,
    const SYM: bool,
    const FULL: bool,
    const NO_TESTS: bool,
>(
    src: S,
    v: usize,
    n: usize,
    len: usize,
    pal: *const f32,
    sc: *const f32,
    io: &Io,
) {
    let len = if FULL { BLOCK } else { len };
    let z = _mm256_setzero_ps();
    let (mut b, mut sb) = ([z; BLOCK], [z; BLOCK]);
    // Written out, no closures: see `fast::x86::dq8`.
    macro_rules! lane {
        ($i:expr) => {
            if len > $i {
                // SAFETY: vertex v + i exists; its joints are inside the palette and `sc`.
                unsafe {
                    b[$i] = blend::<S, N>(src, v + $i, n, NO_TESTS, pal);
                    sb[$i] = scale_blend::<S, N>(src, v + $i, n, sc);
                }
            }
        };
    }
    lane!(0);
    lane!(1);
    lane!(2);
    lane!(3);
    lane!(4);
    lane!(5);
    lane!(6);
    lane!(7);
    let q = Dq8::new(&transpose8(&b));
    // SAFETY: `io` holds eight vertices.
    let p = unsafe { load_soa8(io.pos) };
    if !SYM {
        // Every scale is `s·I`, `s > 0`: the blend's first entry is the vertex's `s`.
        let s = first_entries(&sb);
        let ps = [_mm256_mul_ps(s, p[0]), _mm256_mul_ps(s, p[1]), _mm256_mul_ps(s, p[2])];
        // SAFETY: as above.
        unsafe { store_soa8(io.op, q.point(&ps)) };
        if NORMALS {
            // `cof(s·I) = s²·I`, `det > 0`: the general rule's normal is `n` rotated,
            // normalized.
            // SAFETY: as above.
            let m = unsafe { load_soa8(io.nin) };
            // SAFETY: as above.
            unsafe { store_soa8(io.on, normalized8(q.rotate(&m))) };
        }
        return;
    }
    let t = transpose8(&sb);
    let s = [t[0], t[1], t[2], t[3], t[4], t[5]];
    let ps = sym_mul(&s, &p);
    // SAFETY: as above.
    unsafe { store_soa8(io.op, q.point(&ps)) };
    if NORMALS {
        // SAFETY: as above.
        let m = unsafe { load_soa8(io.nin) };
        // The cofactor matrix of a symmetric S is symmetric: six entries, in S's order.
        let c = [
            _mm256_fmsub_ps(s[1], s[2], _mm256_mul_ps(s[5], s[5])),
            _mm256_fmsub_ps(s[0], s[2], _mm256_mul_ps(s[4], s[4])),
            _mm256_fmsub_ps(s[0], s[1], _mm256_mul_ps(s[3], s[3])),
            _mm256_fmsub_ps(s[4], s[5], _mm256_mul_ps(s[3], s[2])),
            _mm256_fmsub_ps(s[3], s[5], _mm256_mul_ps(s[4], s[1])),
            _mm256_fmsub_ps(s[3], s[4], _mm256_mul_ps(s[0], s[5])),
        ];
        let det = _mm256_fmadd_ps(s[0], c[0], _mm256_fmadd_ps(s[3], c[3], _mm256_mul_ps(s[4], c[4])));
        let flip = _mm256_and_ps(det, _mm256_set1_ps(-0.0));
        let mut nrm = sym_mul(&c, &m);
        for x in &mut nrm {
            *x = _mm256_xor_ps(*x, flip);
        }
        let n2 = _mm256_fmadd_ps(nrm[0], nrm[0], _mm256_fmadd_ps(nrm[1], nrm[1], _mm256_mul_ps(nrm[2], nrm[2])));
        let in_range = _mm256_and_ps(
            _mm256_cmp_ps::<_CMP_GE_OQ>(n2, _mm256_set1_ps(1e-30)),
            _mm256_cmp_ps::<_CMP_LE_OQ>(n2, _mm256_set1_ps(f32::MAX)),
        );
        // SAFETY: as above.
        unsafe { store_soa8(io.on, normalized8(q.rotate(&nrm))) };
        let valid = (1u32 << len) - 1;
        let good = _mm256_movemask_ps(in_range) as u32;
        if good & valid != valid {
            // SAFETY: as above.
            unsafe { redo_normals(len, !good & valid, &q.real(), &s, io) };
        }
    }
}

/// Vertex `v`'s blended scale `Σ wₖ·Sₖ`: its six entries (`s00, s11, s22, s01, s02,
/// s12`), then two zeros.
///
/// # Safety
/// As [`blend`]; every joint index `j` has its scale's eight floats at `sc + 16·j`, 32-byte
/// aligned (float 8 of its [`DqRow`]).
#[target_feature(enable = "avx2,fma")]
#[inline]
unsafe fn scale_blend<S: Source, const N: usize>(src: S, v: usize, n: usize, sc: *const f32) -> __m256 {
    // SAFETY: as the caller promised.
    unsafe {
        let mut acc = 0;
        let (j, w) = src.get(v, n, 0, &mut acc);
        let mut s = _mm256_mul_ps(_mm256_set1_ps(w), _mm256_load_ps(sc.add(16 * j)));
        for k in 1..n {
            let (j, w) = src.get(v, n, k, &mut acc);
            s = _mm256_fmadd_ps(_mm256_set1_ps(w), _mm256_load_ps(sc.add(16 * j)), s);
        }
        s
    }
}

/// `S·p` for the symmetric `s` (`s00, s11, s22, s01, s02, s12`), eight lanes.
#[target_feature(enable = "avx2,fma")]
#[inline]
fn sym_mul(s: &[__m256; 6], p: &[__m256; 3]) -> [__m256; 3] {
    [
        _mm256_fmadd_ps(s[0], p[0], _mm256_fmadd_ps(s[3], p[1], _mm256_mul_ps(s[4], p[2]))),
        _mm256_fmadd_ps(s[3], p[0], _mm256_fmadd_ps(s[1], p[1], _mm256_mul_ps(s[5], p[2]))),
        _mm256_fmadd_ps(s[4], p[0], _mm256_fmadd_ps(s[5], p[1], _mm256_mul_ps(s[2], p[2]))),
    ]
}

/// `v` normalized (eight lanes), a zero vector kept zero by the scalar loop's clamp.
#[target_feature(enable = "avx2,fma")]
#[inline]
fn normalized8(v: [__m256; 3]) -> [__m256; 3] {
    let len2 = _mm256_fmadd_ps(v[0], v[0], _mm256_fmadd_ps(v[1], v[1], _mm256_mul_ps(v[2], v[2])));
    let y = rsqrt(_mm256_max_ps(len2, _mm256_set1_ps(1e-30)));
    [_mm256_mul_ps(v[0], y), _mm256_mul_ps(v[1], y), _mm256_mul_ps(v[2], y)]
}

/// Entry 0 of each of the eight registers, in lanes 0 to 7: the first row of
/// [`transpose8`] for seven shuffles instead of its twenty-four.
#[target_feature(enable = "avx2,fma")]
#[inline]
fn first_entries(r: &[__m256; BLOCK]) -> __m256 {
    // Written out, no closure: see `fast::x86::dq8`.
    let (x0, x1, x2, x3) = (
        _mm256_castps256_ps128(r[0]),
        _mm256_castps256_ps128(r[1]),
        _mm256_castps256_ps128(r[2]),
        _mm256_castps256_ps128(r[3]),
    );
    let (x4, x5, x6, x7) = (
        _mm256_castps256_ps128(r[4]),
        _mm256_castps256_ps128(r[5]),
        _mm256_castps256_ps128(r[6]),
        _mm256_castps256_ps128(r[7]),
    );
    let lo = _mm_movelh_ps(_mm_unpacklo_ps(x0, x1), _mm_unpacklo_ps(x2, x3));
    let hi = _mm_movelh_ps(_mm_unpacklo_ps(x4, x5), _mm_unpacklo_ps(x6, x7));
    _mm256_set_m128(hi, lo)
}

/// `1 / √s`: the 12-bit estimate refined by one Newton step.
#[target_feature(enable = "avx2,fma")]
#[inline]
fn rsqrt(s: __m256) -> __m256 {
    let y = _mm256_rsqrt_ps(s);
    let half_sy = _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.5), s), y);
    _mm256_mul_ps(y, _mm256_fnmadd_ps(half_sy, y, _mm256_set1_ps(1.5)))
}

/// Redoes the normals of the block lanes in `lanes` (bits below `len`), whose `cof(S)·n`
/// left the range where it normalizes accurately, as the scalar loop does: from the scale
/// matrix rescaled to a largest entry of 1.
///
/// # Safety
/// `io`'s pointers are valid for 24 floats.
#[cold]
#[inline(never)]
#[target_feature(enable = "avx2,fma")]
unsafe fn redo_normals(len: usize, lanes: u32, r: &[__m256; 4], s: &[__m256; 6], io: &Io) {
    let lane = |x: __m256, i: usize| {
        let mut a = [0.0f32; BLOCK];
        // SAFETY: 8 f32.
        unsafe { _mm256_storeu_ps(a.as_mut_ptr(), x) };
        a[i]
    };
    for i in (0..len).filter(|&i| lanes & (1 << i) != 0) {
        let q = [lane(r[0], i), lane(r[1], i), lane(r[2], i), lane(r[3], i)];
        let [s00, s11, s22, s01, s02, s12] = s.map(|x| lane(x, i));
        let m = Mat3::new(s00, s01, s02, s01, s11, s12, s02, s12, s22);
        // SAFETY: lane i < 8 of the block's 24 floats.
        let (n, dst) = unsafe { (*io.nin.cast::<Vec3>().add(i), io.on.cast::<Vec3>().add(i)) };
        // SAFETY: as above.
        unsafe { *dst = redone_dq_normal(q, &m, &n) };
    }
}
