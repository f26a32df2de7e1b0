//! The linear-blend loops over every [`InfluenceLayout`](crate::skin::mesh::InfluenceLayout):
//! a portable scalar loop, and an AVX2 + FMA loop chosen at run time.
//!
//! The AVX2 loop blends a vertex's matrices as two 256-bit registers, each holding two
//! columns of the 4×4 palette matrix (`[c0 | c1]` and `[c2 | c3]`): one FMA per register
//! and influence. The point is then `[c0·x + c2·z | c1·y + c3]`, summed across the halves;
//! normals the same with the translation column zeroed. Renormalized normals are written
//! raw a chunk of 256 vertices at a time, then rescaled eight at a time while the chunk is
//! in L1, by a reciprocal square root estimate refined by one Newton step (relative error
//! about 1e-7, well inside 1e-6). Results equal the scalar loop's up to float
//! reassociation.
//!
//! The AVX-512 loops ([`Kernel::Avx512`], module `avx512`) skin sixteen vertices a step.

use super::kernel::Kernel;
use super::math::{Cols, apply_point, dq_point, normalized, rotate, transform_normal};
use super::source::{F32Src, Source, UnormSrc};
pub(super) use super::source::{IT, Job, POS, RAW, UNIT};
use crate::skin::mesh::InfluenceView;
use anim_math::{DualQuat, Mat4, Vec3};

/// Runs linear blend skinning with `kernel` (which must be [`Kernel::available`]) for
/// normal handling `mode` (one of the constants above; [`IT`] always runs scalar).
pub(super) fn lbs(view: InfluenceView, kernel: Kernel, mode: u8, job: Job<Mat4>) {
    #[cfg(target_arch = "x86_64")]
    if kernel != Kernel::Scalar && aligned::wanted(job.palette, job.out_p.len()) {
        let mut copy = aligned::Palette::new();
        let palette = copy.fill(job.palette);
        return by_view(view, kernel, mode, Job { palette, ..job });
    }
    by_view(view, kernel, mode, job)
}

fn by_view(view: InfluenceView, kernel: Kernel, mode: u8, job: Job<Mat4>) {
    match view {
        InfluenceView::F32 { joints, weights } => by_count(F32Src { joints, weights }, kernel, mode, job),
        InfluenceView::U16 { joints, weights } => by_count(UnormSrc { joints, weights }, kernel, mode, job),
        InfluenceView::U8 { joints, weights } => by_count(UnormSrc { joints, weights }, kernel, mode, job),
    }
}

/// A 64-byte aligned copy of a palette for the SIMD loops. They load each matrix as one
/// 512-bit register (AVX-512) or two 256-bit ones (AVX2); from a palette that is not
/// 64-byte aligned (a `Vec<Mat4>` is only 4-byte aligned, and the allocator usually
/// gives 16) every such load spans two cache lines, and the loop ran a quarter slower
/// (Fox, four influences: 3.9 µs against 3.1 µs a call, BENCHMARKS.md). Copying the
/// palette costs two memory operations a joint, repaid many times over by the loads of a
/// mesh with more vertices than joints.
#[cfg(target_arch = "x86_64")]
mod aligned {
    use anim_math::Mat4;
    use std::mem::MaybeUninit;

    /// The most joints copied (16 KiB on the stack); a longer palette is read in place.
    pub(super) const MAX: usize = 256;

    /// Whether copying `palette` pays: it is not 64-byte aligned, fits the copy, and the
    /// call skins at least two vertices a joint.
    pub(super) fn wanted(palette: &[Mat4], vertices: usize) -> bool {
        !(palette.as_ptr() as usize).is_multiple_of(64) && palette.len() <= MAX && vertices >= 2 * palette.len()
    }

    #[repr(C, align(64))]
    pub(super) struct Palette(MaybeUninit<[Mat4; MAX]>);

    impl Palette {
        pub(super) fn new() -> Self {
            Self(MaybeUninit::uninit())
        }

        /// Copies `palette` (at most [`MAX`] matrices) to the start of the buffer and
        /// returns the copy.
        pub(super) fn fill(&mut self, palette: &[Mat4]) -> &[Mat4] {
            assert!(palette.len() <= MAX, "`wanted` admits at most MAX joints");
            let dst = self.0.as_mut_ptr().cast::<Mat4>();
            // SAFETY: the buffer holds MAX ≥ len matrices and does not overlap `palette`
            // (it is this function's exclusive borrow); the first len are initialized by
            // the copy before the slice over them is made.
            unsafe {
                std::ptr::copy_nonoverlapping(palette.as_ptr(), dst, palette.len());
                std::slice::from_raw_parts(dst, palette.len())
            }
        }
    }
}

fn by_count<S: Source>(src: S, kernel: Kernel, mode: u8, job: Job<Mat4>) {
    match job.per {
        1 => by_mode::<S, 1>(src, kernel, mode, job),
        2 => by_mode::<S, 2>(src, kernel, mode, job),
        4 => by_mode::<S, 4>(src, kernel, mode, job),
        _ => by_mode::<S, 0>(src, kernel, mode, job),
    }
}

fn by_mode<S: Source, const N: usize>(src: S, kernel: Kernel, mode: u8, job: Job<Mat4>) {
    match (kernel, mode) {
        // SAFETY (every SIMD arm): `kernel` is available (the caller checked); `job` was
        // validated.
        #[cfg(target_arch = "x86_64")]
        (Kernel::Avx512, POS) => unsafe { super::avx512::lbs::<S, N, POS>(src, job) },
        #[cfg(target_arch = "x86_64")]
        (Kernel::Avx512, RAW) => unsafe { super::avx512::lbs::<S, N, RAW>(src, job) },
        #[cfg(target_arch = "x86_64")]
        (Kernel::Avx512, UNIT) => unsafe { super::avx512::lbs::<S, N, UNIT>(src, job) },
        #[cfg(target_arch = "x86_64")]
        (Kernel::Avx2Fma, POS) => unsafe { x86::lbs::<S, N, POS>(src, job) },
        #[cfg(target_arch = "x86_64")]
        (Kernel::Avx2Fma, RAW) => unsafe { x86::lbs::<S, N, RAW>(src, job) },
        #[cfg(target_arch = "x86_64")]
        (Kernel::Avx2Fma, UNIT) => unsafe { x86::lbs::<S, N, UNIT>(src, job) },
        (_, POS) => scalar::<S, N, POS>(src, job),
        (_, RAW) => scalar::<S, N, RAW>(src, job),
        (_, UNIT) => scalar::<S, N, UNIT>(src, job),
        _ => scalar::<S, N, IT>(src, job),
    }
}

/// The portable loop: blend the matrix, apply it.
fn scalar<S: Source, const N: usize, const MODE: u8>(src: S, job: Job<Mat4>) {
    let n = if N == 0 { job.per } else { N };
    let count = job.out_p.len();
    for (v, p) in job.pos[..count].iter().enumerate() {
        let mut c: Cols = [[0.0; 4]; 4];
        let mut acc = 0;
        for k in 0..n {
            // SAFETY: v < count (the vertex count) and k < n = per_vertex.
            let (j, w) = unsafe { src.get(v, n, k, &mut acc) };
            let m = &job.palette[j].data.0;
            for col in 0..4 {
                for row in 0..4 {
                    c[col][row] += w * m[col][row];
                }
            }
        }
        job.out_p[v] = apply_point(&c, p);
        match MODE {
            RAW => {
                let r = transform_normal::<false>(&c, &job.nin[v]);
                job.out_n[v] = Vec3::new(r[0], r[1], r[2]);
            }
            UNIT => job.out_n[v] = normalized(transform_normal::<false>(&c, &job.nin[v])),
            IT => job.out_n[v] = normalized(transform_normal::<true>(&c, &job.nin[v])),
            _ => {}
        }
    }
}

/// Runs rigid dual-quaternion skinning (positions, and normals when `normals`) with
/// `kernel` (which must be [`Kernel::available`]).
pub(super) fn dq(view: InfluenceView, kernel: Kernel, normals: bool, job: Job<DualQuat>) {
    match view {
        InfluenceView::F32 { joints, weights } => dq_by_count(F32Src { joints, weights }, kernel, normals, job),
        InfluenceView::U16 { joints, weights } => dq_by_count(UnormSrc { joints, weights }, kernel, normals, job),
        InfluenceView::U8 { joints, weights } => dq_by_count(UnormSrc { joints, weights }, kernel, normals, job),
    }
}

fn dq_by_count<S: Source>(src: S, kernel: Kernel, normals: bool, job: Job<DualQuat>) {
    match job.per {
        1 => dq_by_mode::<S, 1>(src, kernel, normals, job),
        2 => dq_by_mode::<S, 2>(src, kernel, normals, job),
        4 => dq_by_mode::<S, 4>(src, kernel, normals, job),
        _ => dq_by_mode::<S, 0>(src, kernel, normals, job),
    }
}

fn dq_by_mode<S: Source, const N: usize>(src: S, kernel: Kernel, normals: bool, job: Job<DualQuat>) {
    match (kernel, normals) {
        #[cfg(target_arch = "x86_64")]
        (Kernel::Avx512, false) => unsafe { super::avx512_dq::dq::<S, N, false>(src, job) },
        #[cfg(target_arch = "x86_64")]
        (Kernel::Avx512, true) => unsafe { super::avx512_dq::dq::<S, N, true>(src, job) },
        #[cfg(target_arch = "x86_64")]
        (Kernel::Avx2Fma, false) => unsafe { x86::dq::<S, N, false>(src, job) },
        #[cfg(target_arch = "x86_64")]
        (Kernel::Avx2Fma, true) => unsafe { x86::dq::<S, N, true>(src, job) },
        (_, false) => dq_scalar::<S, N, false>(src, job),
        (_, true) => dq_scalar::<S, N, true>(src, job),
    }
}

/// The portable rigid dual-quaternion loop ([`SkinMethod::Dq`](crate::skin::SkinMethod::Dq)
/// without scale): blend in the first influence's hemisphere, normalize, apply.
fn dq_scalar<S: Source, const N: usize, const NORMALS: bool>(src: S, job: Job<DualQuat>) {
    let n = if N == 0 { job.per } else { N };
    let count = job.out_p.len();
    for (v, p) in job.pos[..count].iter().enumerate() {
        let mut acc = 0;
        let (mut r, mut d) = ([0.0f32; 4], [0.0f32; 4]);
        let mut pivot = [0.0f32; 4];
        for k in 0..n {
            // SAFETY: v < count (the vertex count) and k < n = per_vertex.
            let (j, w) = unsafe { src.get(v, n, k, &mut acc) };
            let q = job.palette[j].as_ref();
            let (qr, qd) = (&q.real.coords, &q.dual.coords);
            if k == 0 {
                pivot = [qr[0], qr[1], qr[2], qr[3]];
            }
            let dot = qr[0] * pivot[0] + qr[1] * pivot[1] + qr[2] * pivot[2] + qr[3] * pivot[3];
            let w = if dot < 0.0 { -w } else { w };
            for i in 0..4 {
                r[i] += w * qr[i];
                d[i] += w * qd[i];
            }
        }
        let l2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + r[3] * r[3];
        let inv = 1.0 / l2.max(1e-30).sqrt();
        // The dual part quartered, as dq_point takes it.
        let dinv = inv * 0.25;
        for i in 0..4 {
            r[i] *= inv;
            d[i] *= dinv;
        }
        job.out_p[v] = dq_point(&r, &d, [p.x, p.y, p.z]);
        if NORMALS {
            let m = &job.nin[v];
            // A rotation keeps length: the normal needs no renormalization.
            let rn = rotate(&r, [m.x, m.y, m.z]);
            job.out_n[v] = Vec3::new(rn[0], rn[1], rn[2]);
        }
    }
}

// The AVX2 DQ loop reads a dual quaternion as 8 floats: real [i, j, k, w], then dual.
const _: () = assert!(std::mem::size_of::<DualQuat>() == 32);

#[cfg(target_arch = "x86_64")]
pub(super) mod x86 {
    use super::super::hemispheres::block_clean;
    use super::{Job, POS, RAW, Source, UNIT};
    use anim_math::{DualQuat, Mat4};
    use std::arch::x86_64::*;

    /// The rigid dual-quaternion loop: each vertex blends its dual quaternions as one
    /// 256-bit register `[real | dual]` a joint, with the hemisphere test as a sign flip
    /// (skipped for a coherent palette, and for the blocks the hemisphere analysis leaves
    /// unmarked: see [`block_clean`]); no normalization (one division by the squared norm
    /// at the end). Blocks of eight vertices are then transposed and transformed in
    /// structure-of-arrays form; the rest one at a time with 128-bit cross products.
    ///
    /// # Safety
    /// As [`lbs`].
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn dq<S: Source, const N: usize, const NORMALS: bool>(src: S, job: Job<DualQuat>) {
        let count = job.out_p.len();
        debug_assert!(count > 0 && job.pos.len() == count);
        debug_assert!(!NORMALS || (job.nin.len() == count && job.out_n.len() == count));
        let n = if N == 0 { job.per } else { N };
        // SAFETY: a DualQuat is 8 floats (checked above the module), real part first.
        let pal = job.palette.as_ptr().cast::<f32>();
        let pos = job.pos.as_ptr().cast::<f32>();
        let nin = job.nin.as_ptr().cast::<f32>();
        let op = job.out_p.as_mut_ptr().cast::<f32>();
        let on = job.out_n.as_mut_ptr().cast::<f32>();
        // No vertex can flip a weight (the palette is coherent, or the vertex's block of
        // sixteen is not marked): the blends skip the hemisphere tests. A block of eight
        // starts at a multiple of eight, so it lies in one block of sixteen.
        let uniform = |v| job.coherent || block_clean(v, job.risky);
        // SAFETY (blocks): v + 8 <= count, so the block's 24 floats of each array exist.
        let mut v = 0;
        while v + 8 <= count {
            unsafe { dq8::<S, N, NORMALS>(src, v, n, uniform(v), pal, pos, nin, op, on) };
            v += 8;
        }
        // SAFETY (the rest): v < count; every vertex but the last may load and store 16
        // bytes at its place (the next vertex's x is read but unused, or rewritten).
        while v + 1 < count {
            unsafe { dq_vertex::<S, N, NORMALS, true>(src, v, n, uniform(v), pal, pos, nin, op, on) };
            v += 1;
        }
        if v < count {
            let last = count - 1;
            unsafe { dq_vertex::<S, N, NORMALS, false>(src, last, n, uniform(last), pal, pos, nin, op, on) };
        }
    }

    /// [`blend`] for the rigid loop: a coherent palette's four influences with their
    /// indices by [`joints_of4`] (`u16` joints; Fox on AMD Zen 3: 8–10% faster). The
    /// scale-aware loop keeps [`blend`]'s indices, which its scale blend reads too: there
    /// the packed indices ran 10% slower.
    ///
    /// # Safety
    /// As [`blend`].
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    unsafe fn rigid_blend<S: Source, const N: usize>(
        src: S,
        v: usize,
        n: usize,
        uniform: bool,
        pal: *const f32,
    ) -> __m256 {
        // SAFETY: as the caller promised (four slots a vertex when N is 4).
        unsafe {
            if uniform && N == 4 && S::PACKED4 {
                let mut acc = 0;
                let j = joints_of4(src, v);
                let w = _mm256_set1_ps(src.get(v, 4, 0, &mut acc).1);
                let mut b = _mm256_mul_ps(w, _mm256_loadu_ps(pal.add(8 * j[0])));
                for (k, &j) in j.iter().enumerate().skip(1) {
                    let w = _mm256_set1_ps(src.get(v, 4, k, &mut acc).1);
                    b = _mm256_fmadd_ps(w, _mm256_loadu_ps(pal.add(8 * j)), b);
                }
                return b;
            }
            blend::<S, N>(src, v, n, uniform, pal)
        }
    }

    /// Blends vertex `v`'s dual quaternions into one register `[real | dual]`, each
    /// influence's weight negated when its real part lies in the other hemisphere from the
    /// first influence's (not normalized).
    ///
    /// # Safety
    /// As [`dq_vertex`].
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    pub(in crate::skin::skinning) unsafe fn blend<S: Source, const N: usize>(
        src: S,
        v: usize,
        n: usize,
        uniform: bool,
        pal: *const f32,
    ) -> __m256 {
        // SAFETY: see `dq`: indices stay inside the validated slices.
        unsafe {
            let mut acc = 0;
            let sign = _mm_set1_ps(-0.0);
            if uniform {
                let (j, w) = src.get(v, n, 0, &mut acc);
                let mut b = _mm256_mul_ps(_mm256_set1_ps(w), _mm256_loadu_ps(pal.add(8 * j)));
                for k in 1..n {
                    let (j, w) = src.get(v, n, k, &mut acc);
                    b = _mm256_fmadd_ps(_mm256_set1_ps(w), _mm256_loadu_ps(pal.add(8 * j)), b);
                }
                return b;
            }
            if N == 4 {
                // The four hemisphere tests at once: the dot products summed by two rounds
                // of horizontal adds (the same order of additions as `dot4`), and each
                // influence's sign applied to its dual quaternion as a mask.
                let (j0, w0) = src.get(v, 4, 0, &mut acc);
                let (j1, w1) = src.get(v, 4, 1, &mut acc);
                let (j2, w2) = src.get(v, 4, 2, &mut acc);
                let (j3, w3) = src.get(v, 4, 3, &mut acc);
                let iw = [(j0, w0), (j1, w1), (j2, w2), (j3, w3)];
                let q = [
                    _mm256_loadu_ps(pal.add(8 * j0)),
                    _mm256_loadu_ps(pal.add(8 * j1)),
                    _mm256_loadu_ps(pal.add(8 * j2)),
                    _mm256_loadu_ps(pal.add(8 * j3)),
                ];
                let pivot = _mm256_castps256_ps128(q[0]);
                let p = [
                    _mm_mul_ps(pivot, pivot),
                    _mm_mul_ps(_mm256_castps256_ps128(q[1]), pivot),
                    _mm_mul_ps(_mm256_castps256_ps128(q[2]), pivot),
                    _mm_mul_ps(_mm256_castps256_ps128(q[3]), pivot),
                ];
                let dots = _mm_hadd_ps(_mm_hadd_ps(p[0], p[1]), _mm_hadd_ps(p[2], p[3]));
                let neg = _mm_cmplt_ps(dots, _mm_setzero_ps());
                // The first influence is its own pivot: its dot is |r|² ≥ 0, never flipped.
                let mut b = _mm256_mul_ps(_mm256_set1_ps(iw[0].1), q[0]);
                if _mm_movemask_ps(neg) == 0 {
                    // The common case (neighbouring joints turn alike): nothing to flip.
                    b = _mm256_fmadd_ps(_mm256_set1_ps(iw[1].1), q[1], b);
                    b = _mm256_fmadd_ps(_mm256_set1_ps(iw[2].1), q[2], b);
                    return _mm256_fmadd_ps(_mm256_set1_ps(iw[3].1), q[3], b);
                }
                let flip = _mm_and_ps(neg, sign);
                let f = _mm256_set_m128(flip, flip);
                let m = _mm256_permute_ps::<0b01_01_01_01>(f);
                b = _mm256_fmadd_ps(_mm256_set1_ps(iw[1].1), _mm256_xor_ps(q[1], m), b);
                let m = _mm256_permute_ps::<0b10_10_10_10>(f);
                b = _mm256_fmadd_ps(_mm256_set1_ps(iw[2].1), _mm256_xor_ps(q[2], m), b);
                let m = _mm256_permute_ps::<0b11_11_11_11>(f);
                return _mm256_fmadd_ps(_mm256_set1_ps(iw[3].1), _mm256_xor_ps(q[3], m), b);
            }
            let (j, w) = src.get(v, n, 0, &mut acc);
            let q = _mm256_loadu_ps(pal.add(8 * j));
            let pivot = _mm256_castps256_ps128(q);
            let mut b = _mm256_mul_ps(_mm256_set1_ps(w), q);
            for k in 1..n {
                let (j, w) = src.get(v, n, k, &mut acc);
                let q = _mm256_loadu_ps(pal.add(8 * j));
                let d = dot4(_mm256_castps256_ps128(q), pivot);
                let flip = _mm_and_ps(_mm_cmplt_ps(d, _mm_setzero_ps()), sign);
                let w = _mm_xor_ps(_mm_set1_ps(w), flip);
                b = _mm256_fmadd_ps(_mm256_set_m128(w, w), q, b);
            }
            b
        }
    }

    /// Eight consecutive 3-float records at `p` as `[x, y, z]`, eight lanes each.
    ///
    /// # Safety
    /// `p` is valid for 96 bytes of reads.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    pub(in crate::skin::skinning) unsafe fn load_soa8(p: *const f32) -> [__m256; 3] {
        // SAFETY: six 16-byte loads inside the 96 bytes. Lane half 0 holds records 0 to 3,
        // half 1 records 4 to 7, as a = [x0 y0 z0 x1], b = [y1 z1 x2 y2], c = [z2 x3 y3 z3].
        let (a, b, c) = unsafe {
            (
                _mm256_set_m128(_mm_loadu_ps(p.add(12)), _mm_loadu_ps(p)),
                _mm256_set_m128(_mm_loadu_ps(p.add(16)), _mm_loadu_ps(p.add(4))),
                _mm256_set_m128(_mm_loadu_ps(p.add(20)), _mm_loadu_ps(p.add(8))),
            )
        };
        let bc = _mm256_shuffle_ps::<0b10_01_11_10>(b, c); // x2 y2 x3 y3
        let ab = _mm256_shuffle_ps::<0b01_00_10_01>(a, b); // y0 z0 y1 z1
        let x = _mm256_shuffle_ps::<0b10_00_11_00>(a, bc);
        let y = _mm256_shuffle_ps::<0b11_01_10_00>(ab, bc);
        let z = _mm256_shuffle_ps::<0b11_00_11_01>(ab, c);
        [x, y, z]
    }

    /// Stores `[x, y, z]` (eight lanes each) as eight consecutive 3-float records at `p`:
    /// the inverse of [`load_soa8`].
    ///
    /// # Safety
    /// `p` is valid for 96 bytes of writes.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    pub(in crate::skin::skinning) unsafe fn store_soa8(p: *mut f32, [x, y, z]: [__m256; 3]) {
        let xy = _mm256_shuffle_ps::<0b10_00_10_00>(x, y); // x0 x2 y0 y2
        let zx = _mm256_shuffle_ps::<0b11_01_10_00>(z, x); // z0 z2 x1 x3
        let yz = _mm256_shuffle_ps::<0b11_01_11_01>(y, z); // y1 y3 z1 z3
        let a = _mm256_shuffle_ps::<0b10_00_10_00>(xy, zx);
        let b = _mm256_shuffle_ps::<0b11_01_10_00>(yz, xy);
        let c = _mm256_shuffle_ps::<0b11_01_11_01>(zx, yz);
        // SAFETY: six 16-byte stores inside the 96 bytes.
        unsafe {
            _mm256_storeu_ps(p, _mm256_permute2f128_ps::<0x20>(a, b));
            _mm256_storeu_ps(p.add(8), _mm256_permute2f128_ps::<0x30>(c, a));
            _mm256_storeu_ps(p.add(16), _mm256_permute2f128_ps::<0x31>(b, c));
        }
    }

    /// The 8×8 transpose: `t[e]` holds element `e` of each row `rows[k]`, in lane `k`.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    pub(in crate::skin::skinning) fn transpose8(rows: &[__m256; 8]) -> [__m256; 8] {
        let mut t = [(_mm256_setzero_ps(), _mm256_setzero_ps()); 4];
        for (k, t) in t.iter_mut().enumerate() {
            *t = (_mm256_unpacklo_ps(rows[2 * k], rows[2 * k + 1]), _mm256_unpackhi_ps(rows[2 * k], rows[2 * k + 1]));
        }
        let mut s = [[_mm256_setzero_ps(); 4]; 2];
        for (k, s) in s.iter_mut().enumerate() {
            let (lo, hi) = (t[2 * k], t[2 * k + 1]);
            *s = [
                _mm256_shuffle_ps::<0x44>(lo.0, hi.0),
                _mm256_shuffle_ps::<0xEE>(lo.0, hi.0),
                _mm256_shuffle_ps::<0x44>(lo.1, hi.1),
                _mm256_shuffle_ps::<0xEE>(lo.1, hi.1),
            ];
        }
        let mut out = [_mm256_setzero_ps(); 8];
        for e in 0..4 {
            out[e] = _mm256_permute2f128_ps::<0x20>(s[0][e], s[1][e]);
            out[4 + e] = _mm256_permute2f128_ps::<0x31>(s[0][e], s[1][e]);
        }
        out
    }

    /// `a × b` for three-lane-group vectors (eight lanes each).
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    pub(in crate::skin::skinning) fn cross8(a: &[__m256; 3], b: &[__m256; 3]) -> [__m256; 3] {
        [
            _mm256_fmsub_ps(a[1], b[2], _mm256_mul_ps(a[2], b[1])),
            _mm256_fmsub_ps(a[2], b[0], _mm256_mul_ps(a[0], b[2])),
            _mm256_fmsub_ps(a[0], b[1], _mm256_mul_ps(a[1], b[0])),
        ]
    }

    /// `2·(w·(u×v) + u×(u×v))`, eight lanes: see [`rotation_offset`].
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    pub(in crate::skin::skinning) fn rotation_offset8(u: &[__m256; 3], w: __m256, v: &[__m256; 3]) -> [__m256; 3] {
        let c = cross8(u, v);
        let cc = cross8(u, &c);
        let o = [_mm256_fmadd_ps(w, c[0], cc[0]), _mm256_fmadd_ps(w, c[1], cc[1]), _mm256_fmadd_ps(w, c[2], cc[2])];
        [_mm256_add_ps(o[0], o[0]), _mm256_add_ps(o[1], o[1]), _mm256_add_ps(o[2], o[2])]
    }

    /// Skins vertices `v..v + 8` with dual quaternions: each blended as in [`blend`], the
    /// eight results transposed to structure-of-arrays form, and points and normals
    /// transformed eight at a time with the formulas of [`dq_vertex`].
    ///
    /// # Safety
    /// `v + 8 <= count`; otherwise as [`dq_vertex`].
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    #[allow(clippy::too_many_arguments)]
    unsafe fn dq8<S: Source, const N: usize, const NORMALS: bool>(
        src: S,
        v: usize,
        n: usize,
        uniform: bool,
        pal: *const f32,
        pos: *const f32,
        nin: *const f32,
        op: *mut f32,
        on: *mut f32,
    ) {
        // SAFETY: v + k < count for every k below 8.
        // Written out, no closures (`[…].map(|k| …)`): a closure is inlined into this
        // target-feature function only when the compiler happens to place both in one
        // codegen unit (a default downstream build has 16); out of line, the block cost
        // 2.7× the instructions (callgrind, Fox). The same holds for every kernel here.
        macro_rules! blend_at {
            ($k:expr) => {
                unsafe { rigid_blend::<S, N>(src, v + $k, n, uniform, pal) }
            };
        }
        let b = [
            blend_at!(0),
            blend_at!(1),
            blend_at!(2),
            blend_at!(3),
            blend_at!(4),
            blend_at!(5),
            blend_at!(6),
            blend_at!(7),
        ];
        // Row k = vertex k's [rx ry rz rw dx dy dz dw].
        let q = Dq8::new(&transpose8(&b));
        // SAFETY: the block's 24 floats of positions (and normals) exist.
        let p = unsafe { load_soa8(pos.add(3 * v)) };
        // SAFETY: as above.
        unsafe { store_soa8(op.add(3 * v), q.point(&p)) };
        if NORMALS {
            // SAFETY: as above.
            let m = unsafe { load_soa8(nin.add(3 * v)) };
            // SAFETY: as above.
            unsafe { store_soa8(on.add(3 * v), q.rotate(&m)) };
        }
    }

    /// Eight blended dual quaternions, not normalized, ready to transform eight points
    /// or vectors in structure-of-arrays form, with the formulas of [`dq_vertex`].
    pub(in crate::skin::skinning) struct Dq8 {
        /// Vector part of the real part.
        u: [__m256; 3],
        /// Scalar part of the real part.
        wr: __m256,
        /// `1 / |r|²` (clamped as the scalar loop clamps).
        inv_l2: __m256,
        /// `w_r·d_v − w_d·r_v + r_v × d_v` with the dual part quartered (see `dq_vertex`):
        /// the translation times `l2 / 8`.
        t: [__m256; 3],
    }

    impl Dq8 {
        /// From the rows of [`transpose8`] of eight `[real | dual]` registers: lanes
        /// `0..4` the real part, `4..8` the dual part.
        #[target_feature(enable = "avx2,fma")]
        #[inline]
        pub(in crate::skin::skinning) fn new(t: &[__m256; 8]) -> Self {
            let (r, d) = ([t[0], t[1], t[2], t[3]], [t[4], t[5], t[6], t[7]]);
            let l2 = _mm256_fmadd_ps(
                r[0],
                r[0],
                _mm256_fmadd_ps(r[1], r[1], _mm256_fmadd_ps(r[2], r[2], _mm256_mul_ps(r[3], r[3]))),
            );
            let inv_l2 = _mm256_div_ps(_mm256_set1_ps(1.0), _mm256_max_ps(l2, _mm256_set1_ps(1e-30)));
            let u = [r[0], r[1], r[2]];
            let wr = r[3];
            let quarter = _mm256_set1_ps(0.25);
            let dv = [_mm256_mul_ps(d[0], quarter), _mm256_mul_ps(d[1], quarter), _mm256_mul_ps(d[2], quarter)];
            let wd = _mm256_mul_ps(d[3], quarter);
            let c = cross8(&u, &dv);
            let mut t = c;
            for i in 0..3 {
                t[i] = _mm256_fmadd_ps(wr, dv[i], _mm256_fnmadd_ps(wd, u[i], c[i]));
            }
            Self { u, wr, inv_l2, t }
        }

        /// The real parts, not normalized, as `[x, y, z, w]`.
        #[target_feature(enable = "avx2,fma")]
        #[inline]
        pub(in crate::skin::skinning) fn real(&self) -> [__m256; 4] {
            [self.u[0], self.u[1], self.u[2], self.wr]
        }

        /// The points `p` moved: rotated, then translated.
        #[target_feature(enable = "avx2,fma")]
        #[inline]
        pub(in crate::skin::skinning) fn point(&self, p: &[__m256; 3]) -> [__m256; 3] {
            let off = rotation_offset8(&self.u, self.wr, p);
            let eight = _mm256_set1_ps(8.0);
            let mut out = *p;
            for i in 0..3 {
                out[i] = _mm256_fmadd_ps(_mm256_fmadd_ps(eight, self.t[i], off[i]), self.inv_l2, p[i]);
            }
            out
        }

        /// The vectors `m` rotated.
        #[target_feature(enable = "avx2,fma")]
        #[inline]
        pub(in crate::skin::skinning) fn rotate(&self, m: &[__m256; 3]) -> [__m256; 3] {
            let off = rotation_offset8(&self.u, self.wr, m);
            let mut out = *m;
            for i in 0..3 {
                out[i] = _mm256_fmadd_ps(off[i], self.inv_l2, m[i]);
            }
            out
        }
    }

    /// The four-lane dot product of `a` and `b`, in every lane.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    fn dot4(a: __m128, b: __m128) -> __m128 {
        let m = _mm_mul_ps(a, b);
        let m = _mm_add_ps(m, _mm_permute_ps::<0b10_11_00_01>(m));
        _mm_add_ps(m, _mm_permute_ps::<0b01_00_11_10>(m))
    }

    /// `a × b` in lanes 0 to 2 (lane 3: zero for finite inputs).
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    fn cross(a: __m128, b: __m128) -> __m128 {
        // (a · b.yzx − a.yzx · b).yzx
        let a_yzx = _mm_permute_ps::<0b11_00_10_01>(a);
        let b_yzx = _mm_permute_ps::<0b11_00_10_01>(b);
        let c = _mm_fmsub_ps(a, b_yzx, _mm_mul_ps(a_yzx, b));
        _mm_permute_ps::<0b11_00_10_01>(c)
    }

    /// `r·v·r* − l2·v = 2·(w·(u×v) + u×(u×v))` for the quaternion `r = (u, w)` (any
    /// length, `w` given in every lane) and `v` in lanes 0 to 2: the rotated `v`, times
    /// `l2 = |r|²`, minus `l2·v`.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    fn rotation_offset(r: __m128, w: __m128, v: __m128) -> __m128 {
        let c = cross(r, v);
        let o = _mm_fmadd_ps(w, c, cross(r, c));
        _mm_add_ps(o, o)
    }

    /// Loads three floats at `p` (16 bytes when `WIDE`; the fourth lane is then unused).
    ///
    /// # Safety
    /// `p` is valid for 12 bytes of reads, 16 when `WIDE`.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    unsafe fn load3<const WIDE: bool>(p: *const f32) -> __m128 {
        // SAFETY: as the caller promised.
        unsafe { if WIDE { _mm_loadu_ps(p) } else { _mm_setr_ps(*p, *p.add(1), *p.add(2), 0.0) } }
    }

    /// Skins vertex `v` with dual quaternions. `WIDE`: its inputs and outputs may be read
    /// and stored as 16 bytes.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    #[allow(clippy::too_many_arguments)]
    unsafe fn dq_vertex<S: Source, const N: usize, const NORMALS: bool, const WIDE: bool>(
        src: S,
        v: usize,
        n: usize,
        uniform: bool,
        pal: *const f32,
        pos: *const f32,
        nin: *const f32,
        op: *mut f32,
        on: *mut f32,
    ) {
        // SAFETY: see `dq`: indices stay inside the validated slices.
        unsafe {
            let b = rigid_blend::<S, N>(src, v, n, uniform, pal);
            let (r, d) = (_mm256_castps256_ps128(b), _mm256_extractf128_ps::<1>(b));
            // Not normalized: with l2 = |r|², r·p·r* = l2·p + 2w(u×p) + 2u×(u×p) and the
            // translation is 2·(w_r·d_v − w_d·r_v + r_v × d_v) / l2, so one division by l2
            // at the end replaces the normalization, off the dependency chain.
            let inv_l2 = _mm_div_ps(_mm_set1_ps(1.0), _mm_max_ps(dot4(r, r), _mm_set1_ps(1e-30)));
            // The dual part quartered, as the scalar `dq_point` takes it (no overflow on the
            // way to a translation near f32::MAX): t = 8·(w_r·d_v − w_d·r_v + r_v × d_v).
            let d = _mm_mul_ps(d, _mm_set1_ps(0.25));
            let wr = _mm_permute_ps::<0b11_11_11_11>(r);
            let wd = _mm_permute_ps::<0b11_11_11_11>(d);
            let t = _mm_fmadd_ps(wr, d, _mm_fnmadd_ps(wd, r, cross(r, d)));
            let p = load3::<WIDE>(pos.add(3 * v));
            let moved = _mm_fmadd_ps(_mm_set1_ps(8.0), t, rotation_offset(r, wr, p));
            store3::<WIDE>(op.add(3 * v), _mm_fmadd_ps(moved, inv_l2, p));
            if NORMALS {
                let m = load3::<WIDE>(nin.add(3 * v));
                store3::<WIDE>(on.add(3 * v), _mm_fmadd_ps(rotation_offset(r, wr, m), inv_l2, m));
            }
        }
    }

    /// The AVX2 + FMA loop.
    ///
    /// # Safety
    /// The CPU supports AVX2 and FMA; `job` was validated (see [`Job`]) and every joint
    /// index `src` yields is below `job.palette.len()`.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn lbs<S: Source, const N: usize, const MODE: u8>(src: S, job: Job<Mat4>) {
        let count = job.out_p.len();
        debug_assert!(count > 0 && job.pos.len() == count);
        debug_assert!(MODE == POS || (job.nin.len() == count && job.out_n.len() == count));
        let n = if N == 0 { job.per } else { N };
        let pal = job.palette.as_ptr().cast::<f32>();
        let pos = job.pos.as_ptr().cast::<f32>();
        let nin = job.nin.as_ptr().cast::<f32>();
        let op = job.out_p.as_mut_ptr().cast::<f32>();
        let on = job.out_n.as_mut_ptr().cast::<f32>();
        // SAFETY (all calls): v < count; every vertex but the last may store 16 bytes (its
        // three floats and the next vertex's x, rewritten right after).
        if MODE == UNIT {
            // Raw normals a chunk at a time, then the chunk's normals renormalized eight
            // at a time while they are in L1: the skinning chain and the reciprocal
            // square roots overlap instead of waiting on each other.
            let mut start = 0;
            while start < count {
                let end = (start + UNIT_CHUNK).min(count);
                let wide_end = if end == count { end - 1 } else { end };
                for v in start..wide_end {
                    unsafe { vertex::<S, N, RAW, true>(src, v, n, pal, pos, nin, op, on) };
                }
                if wide_end < end {
                    unsafe { vertex::<S, N, RAW, false>(src, wide_end, n, pal, pos, nin, op, on) };
                }
                // SAFETY: the chunk's records are inside `out_n`.
                unsafe { renormalize(on.add(3 * start), end - start) };
                start = end;
            }
            return;
        }
        let mut v = 0;
        while v + 1 < count {
            unsafe { vertex::<S, N, MODE, true>(src, v, n, pal, pos, nin, op, on) };
            v += 1;
        }
        unsafe { vertex::<S, N, MODE, false>(src, count - 1, n, pal, pos, nin, op, on) };
    }

    /// Vertices a chunk of the renormalized loop (3 KiB of normals).
    const UNIT_CHUNK: usize = 256;

    /// Renormalizes the `len` 3-float records at `p` in place: eight at a time in
    /// structure-of-arrays form (one reciprocal square root estimate and Newton step for
    /// eight), the rest one by one (see [`inv_length`]). Zero vectors stay zero (their
    /// squared length clamped to 1e-30, as the scalar loop does).
    ///
    /// # Safety
    /// `p` is valid for `12 · len` bytes of reads and writes.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    unsafe fn renormalize(p: *mut f32, len: usize) {
        let mut i = 0;
        // SAFETY: records i..i + 8 (96 bytes) and then each record i are inside the `len`.
        unsafe {
            while i + 8 <= len {
                let [x, y, z] = super::x86::load_soa8(p.add(3 * i));
                let s = _mm256_fmadd_ps(x, x, _mm256_fmadd_ps(y, y, _mm256_mul_ps(z, z)));
                let s = _mm256_max_ps(s, _mm256_set1_ps(1e-30));
                let y0 = _mm256_rsqrt_ps(s);
                let half_sy = _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.5), s), y0);
                let inv = _mm256_mul_ps(y0, _mm256_fnmadd_ps(half_sy, y0, _mm256_set1_ps(1.5)));
                super::x86::store_soa8(
                    p.add(3 * i),
                    [_mm256_mul_ps(x, inv), _mm256_mul_ps(y, inv), _mm256_mul_ps(z, inv)],
                );
                i += 8;
            }
            while i < len {
                let q = p.add(3 * i);
                let r = _mm_setr_ps(*q, *q.add(1), *q.add(2), 0.0);
                store3::<false>(q, _mm_mul_ps(r, inv_length(r)));
                i += 1;
            }
        }
    }

    /// `1 / √s` lane by lane: the estimate refined by one Newton step.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    fn newton_rsqrt(s: __m128) -> __m128 {
        let y = _mm_rsqrt_ps(s);
        let half_sy = _mm_mul_ps(_mm_mul_ps(_mm_set1_ps(0.5), s), y);
        _mm_mul_ps(y, _mm_fnmadd_ps(half_sy, y, _mm_set1_ps(1.5)))
    }

    /// Skins vertex `v` (`MODE` [`POS`] or [`RAW`]). `WIDE`: its outputs may be stored as
    /// 16 bytes.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    #[allow(clippy::too_many_arguments)]
    unsafe fn vertex<S: Source, const N: usize, const MODE: u8, const WIDE: bool>(
        src: S,
        v: usize,
        n: usize,
        pal: *const f32,
        pos: *const f32,
        nin: *const f32,
        op: *mut f32,
        on: *mut f32,
    ) {
        // SAFETY: see `lbs`: indices stay inside the validated slices.
        unsafe {
            let (a, b) = blend_matrix::<S, N>(src, v, n, pal);
            let (xy, z) = spread::<WIDE>(pos.add(3 * v));
            let z1 = _mm256_blend_ps::<0xF0>(z, _mm256_set1_ps(1.0));
            let r = _mm256_fmadd_ps(a, xy, _mm256_mul_ps(b, z1));
            store3::<WIDE>(op.add(3 * v), _mm_add_ps(_mm256_castps256_ps128(r), _mm256_extractf128_ps::<1>(r)));
            if MODE == POS {
                return;
            }
            debug_assert!(MODE == RAW);
            let (nxy, nz) = spread::<WIDE>(nin.add(3 * v));
            let nz0 = _mm256_blend_ps::<0xF0>(nz, _mm256_setzero_ps());
            let r = _mm256_fmadd_ps(a, nxy, _mm256_mul_ps(b, nz0));
            store3::<WIDE>(on.add(3 * v), _mm_add_ps(_mm256_castps256_ps128(r), _mm256_extractf128_ps::<1>(r)));
        }
    }

    /// Vertex `v`'s four joint indices (four slots a vertex), by one 8-byte load split by
    /// shifts in general registers. Read one by one, the compiler gathers them into a
    /// vector and extracts each with `vpextrd`: two more instructions an index on the
    /// vector ports the AVX2 loops are bound by, and a longer chain from the index to the
    /// palette load (LBS on Fox, positions, AMD Zen 3: 20% faster this way, BENCHMARKS.md).
    ///
    /// # Safety
    /// Vertex `v` exists and the layout has four slots a vertex.
    #[inline(always)]
    pub(in crate::skin::skinning) unsafe fn joints_of4<S: Source>(src: S, v: usize) -> [usize; 4] {
        // SAFETY: as the caller promised: slots 4v..4v + 4 exist.
        let packed = unsafe { src.joints4(4 * v) };
        [0, 1, 2, 3].map(|k| ((packed >> (16 * k)) & 0xFFFF) as usize)
    }

    /// Vertex `v`'s blended matrix as `[c0 | c1]` and `[c2 | c3]` (four influences of a
    /// layout with `u16` joints: indices by [`joints_of4`]).
    ///
    /// # Safety
    /// As [`vertex`].
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    unsafe fn blend_matrix<S: Source, const N: usize>(src: S, v: usize, n: usize, pal: *const f32) -> (__m256, __m256) {
        // SAFETY: see `lbs`: indices stay inside the validated slices (four slots a vertex
        // when N is 4).
        unsafe {
            let mut acc = 0;
            if N == 4 && S::PACKED4 {
                let j = joints_of4(src, v);
                let (_, w) = src.get(v, 4, 0, &mut acc);
                let m = pal.add(16 * j[0]);
                let wv = _mm256_set1_ps(w);
                let mut a = _mm256_mul_ps(wv, _mm256_loadu_ps(m));
                let mut b = _mm256_mul_ps(wv, _mm256_loadu_ps(m.add(8)));
                for (k, &j) in j.iter().enumerate().skip(1) {
                    let (_, w) = src.get(v, 4, k, &mut acc);
                    let m = pal.add(16 * j);
                    let wv = _mm256_set1_ps(w);
                    a = _mm256_fmadd_ps(wv, _mm256_loadu_ps(m), a);
                    b = _mm256_fmadd_ps(wv, _mm256_loadu_ps(m.add(8)), b);
                }
                return (a, b);
            }
            let (j, w) = src.get(v, n, 0, &mut acc);
            let m = pal.add(16 * j);
            let wv = _mm256_set1_ps(w);
            let mut a = _mm256_mul_ps(wv, _mm256_loadu_ps(m));
            let mut b = _mm256_mul_ps(wv, _mm256_loadu_ps(m.add(8)));
            for k in 1..n {
                let (j, w) = src.get(v, n, k, &mut acc);
                let m = pal.add(16 * j);
                let wv = _mm256_set1_ps(w);
                a = _mm256_fmadd_ps(wv, _mm256_loadu_ps(m), a);
                b = _mm256_fmadd_ps(wv, _mm256_loadu_ps(m.add(8)), b);
            }
            (a, b)
        }
    }

    /// The vector at `p` spread for the blended columns: `[x x x x | y y y y]` and
    /// `[z z z z | z z z z]`. `WIDE`: by one 16-byte broadcast load (`vbroadcastf128`)
    /// and two in-lane permutes (no lane-crossing shuffle); otherwise by three broadcasts.
    ///
    /// # Safety
    /// `p` is valid for 12 bytes of reads, 16 when `WIDE`.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    unsafe fn spread<const WIDE: bool>(p: *const f32) -> (__m256, __m256) {
        // SAFETY: as the caller promised.
        unsafe {
            if WIDE {
                let q = _mm_loadu_ps(p);
                let mut qq = _mm256_insertf128_ps::<1>(_mm256_castps128_ps256(q), q);
                // The empty `asm!` only hides where `qq` came from: LLVM otherwise folds
                // the permutes below into the load, as a 128-bit permute from memory, a
                // lane-crossing `vpermpd` and a second load for z (Fox, AVX2, AMD Zen 3:
                // 2-5% slower over the three normal modes, BENCHMARKS.md).
                std::arch::asm!("/* {0} */", inout(ymm_reg) qq, options(pure, nomem, nostack, preserves_flags));
                (
                    _mm256_permutevar_ps(qq, _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1)),
                    _mm256_permute_ps::<0b10_10_10_10>(qq),
                )
            } else {
                let xy = _mm256_blend_ps::<0xF0>(_mm256_broadcast_ss(&*p), _mm256_broadcast_ss(&*p.add(1)));
                (xy, _mm256_broadcast_ss(&*p.add(2)))
            }
        }
    }

    /// `1 / |xyz|` of `r` in every lane (a zero vector's squared length clamped to 1e-30,
    /// as the scalar loop does): the reciprocal square root estimate (relative error below
    /// 1.5·2⁻¹²) refined by one Newton step `y·(1.5 − 0.5·s·y²)`, which squares the error.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    fn inv_length(r: __m128) -> __m128 {
        let sq = _mm_blend_ps::<0b1000>(_mm_mul_ps(r, r), _mm_setzero_ps());
        let s = _mm_add_ps(sq, _mm_permute_ps::<0b10_11_00_01>(sq));
        let s = _mm_add_ps(s, _mm_permute_ps::<0b01_00_11_10>(s));
        newton_rsqrt(_mm_max_ps(s, _mm_set1_ps(1e-30)))
    }

    /// Stores the first three lanes of `r` at `dst` (as 16 bytes when `WIDE`).
    ///
    /// # Safety
    /// `dst` is valid for 12 bytes of writes, 16 when `WIDE`.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    unsafe fn store3<const WIDE: bool>(dst: *mut f32, r: __m128) {
        // SAFETY: as the caller promised.
        unsafe {
            if WIDE {
                _mm_storeu_ps(dst, r);
            } else {
                _mm_store_sd(dst.cast::<f64>(), _mm_castps_pd(r));
                _mm_store_ss(dst.add(2), _mm_movehl_ps(r, r));
            }
        }
    }
}
