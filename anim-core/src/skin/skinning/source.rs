//! What every skinning loop reads: the influences in their layout ([`Source`]), and the
//! slices of one call ([`Job`]).

use crate::skin::mesh::UNORM16_ONE;
use anim_math::Vec3;

/// Scale of a unorm16 weight (`k / 65535`).
pub(crate) const UNORM16_SCALE: f32 = 1.0 / UNORM16_ONE as f32;

/// One influence layout as the loops read it.
pub(crate) trait Source: Copy {
    /// True when [`Source::joints4`] is one 8-byte load (`u16` joints): the AVX2 loops then
    /// split a vertex's four indices from it. `u8` joints would need their bytes spread
    /// first, more work than the four loads it saves.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // read by the x86-64 loops only
    const PACKED4: bool;

    /// Joint index and weight of slot `k` of vertex `v` (`n` slots a vertex). Slots are read
    /// in order `0..n`; `acc` carries the running sum of stored unorm16 weights so the
    /// last one can be derived.
    ///
    /// # Safety
    /// `v` is below the vertex count and `k` below `n`, the influences' `per_vertex`.
    unsafe fn get(self, v: usize, n: usize, k: usize, acc: &mut u32) -> (usize, f32);

    /// Joint index of slot `i` (vertex `i / n`, slot `i % n`), read by a volatile load:
    /// a plain load the compiler gathers, for a block of vertices, into a vector and
    /// extracts lane by lane, two vector instructions an index instead of one load.
    ///
    /// # Safety
    /// `i` is below the vertex count times `per_vertex`.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // read by the x86-64 loops only
    unsafe fn joint(self, i: usize) -> usize;

    /// Joint indices of slots `i..i + 4`, sixteen bits each from the lowest, by one load
    /// where the layout allows: the AVX-512 loops without normals and the AVX2 loops read a
    /// vertex's four indices so (`avx512_dq::Four`, `fast::x86::joints_of4`; x86-64 is
    /// little-endian: slot `i` in the lowest bits).
    ///
    /// # Safety
    /// `i + 4` is at most the vertex count times `per_vertex`.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // read by the x86-64 loops only
    #[inline(always)]
    unsafe fn joints4(self, i: usize) -> u64 {
        // SAFETY: as the caller promised.
        unsafe { (0..4).fold(0, |packed, k| packed | (self.joint(i + k) as u64 & 0xFFFF) << (16 * k)) }
    }

    /// The raw weights: `f32`, `per_vertex` a vertex, or unorm16, `per_vertex − 1` a
    /// vertex (the last derived).
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // read by the x86-64 loops only
    fn weights(self) -> Weights;
}

/// Where a layout's stored weights start (see [`Source::weights`]).
#[derive(Clone, Copy)]
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // read by the x86-64 loops only
pub(crate) enum Weights {
    F32(*const f32),
    Unorm16(*const u16),
}

#[derive(Clone, Copy)]
pub(crate) struct F32Src<'a> {
    pub(crate) joints: &'a [u16],
    pub(crate) weights: &'a [f32],
}

impl Source for F32Src<'_> {
    const PACKED4: bool = true;

    #[inline(always)]
    unsafe fn get(self, v: usize, n: usize, k: usize, _acc: &mut u32) -> (usize, f32) {
        let i = v * n + k;
        // SAFETY: the caller keeps `v * n + k` inside the `per_vertex`-a-vertex arrays.
        unsafe { (usize::from(*self.joints.get_unchecked(i)), *self.weights.get_unchecked(i)) }
    }

    #[inline(always)]
    unsafe fn joint(self, i: usize) -> usize {
        // SAFETY: as the caller promised: `i` is inside `joints`.
        usize::from(unsafe { self.joints.as_ptr().add(i).read_volatile() })
    }

    #[inline(always)]
    fn weights(self) -> Weights {
        Weights::F32(self.weights.as_ptr())
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn joints4(self, i: usize) -> u64 {
        // SAFETY: as the caller promised: four u16 from `i` are inside `joints`, read as
        // one unaligned u64 (little-endian: slot i in the lowest bits).
        unsafe { self.joints.as_ptr().add(i).cast::<u64>().read_unaligned() }
    }
}

/// unorm16 weights with the last one derived, joints of type `J`.
#[derive(Clone, Copy)]
pub(crate) struct UnormSrc<'a, J> {
    pub(crate) joints: &'a [J],
    pub(crate) weights: &'a [u16],
}

impl<J: Copy + Into<usize>> Source for UnormSrc<'_, J> {
    const PACKED4: bool = std::mem::size_of::<J>() == 2;

    #[inline(always)]
    unsafe fn get(self, v: usize, n: usize, k: usize, acc: &mut u32) -> (usize, f32) {
        // SAFETY: the caller keeps `v * n + k` inside the joints (`n` a vertex) and, for
        // `k < n − 1`, `v * (n − 1) + k` inside the stored weights (`n − 1` a vertex).
        unsafe {
            let j = (*self.joints.get_unchecked(v * n + k)).into();
            let q = if k + 1 == n {
                // The stored weights of a vertex sum to at most 65535.
                UNORM16_ONE - *acc
            } else {
                let q = u32::from(*self.weights.get_unchecked(v * (n - 1) + k));
                *acc += q;
                q
            };
            (j, q as f32 * UNORM16_SCALE)
        }
    }

    #[inline(always)]
    unsafe fn joint(self, i: usize) -> usize {
        // SAFETY: as the caller promised: `i` is inside `joints`.
        unsafe { self.joints.as_ptr().add(i).read_volatile() }.into()
    }

    #[inline(always)]
    fn weights(self) -> Weights {
        Weights::Unorm16(self.weights.as_ptr())
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn joints4(self, i: usize) -> u64 {
        // SAFETY (both reads): as the caller promised, four `J` from `i` are inside
        // `joints`; `J` is u16 or u8 (the layouts' joint types).
        unsafe {
            let p = self.joints.as_ptr().add(i);
            match std::mem::size_of::<J>() {
                2 => p.cast::<u64>().read_unaligned(),
                _ => {
                    let b = u64::from(p.cast::<u32>().read_unaligned());
                    (b & 0xFF) | (b & 0xFF00) << 8 | (b & 0xFF_0000) << 16 | (b & 0xFF00_0000) << 24
                }
            }
        }
    }
}

/// What the normals get: none, unnormalized, renormalized, or the renormalized inverse
/// transpose (scalar loop only).
pub(crate) const POS: u8 = 0;
pub(crate) const RAW: u8 = 1;
pub(crate) const UNIT: u8 = 2;
pub(crate) const IT: u8 = 3;

/// The slices one call works on; lengths were validated (all `count` long, palette
/// covering every joint index the influences hold, `count > 0`).
pub(crate) struct Job<'a, P> {
    pub per: usize,
    pub palette: &'a [P],
    pub pos: &'a [Vec3],
    pub nin: &'a [Vec3],
    pub out_p: &'a mut [Vec3],
    pub out_n: &'a mut [Vec3],
    /// Dual quaternions only: no vertex can flip an influence's weight (no pivot pair of
    /// the mesh, [`Influences::pivot_pairs`](crate::skin::Influences::pivot_pairs), has
    /// real parts in opposite hemispheres), so the SIMD loops skip the hemisphere tests.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // read by the x86-64 loops only
    pub coherent: bool,
    /// Dual quaternions only, when not `coherent`: one bit a joint, set for the joints whose
    /// vertices (as their first joint) may flip a weight; the others skip the tests too.
    /// Then, when the mesh's blocks are marked, a bit a block of sixteen vertices that the
    /// SIMD loops test whole (see `hemispheres::Hemispheres::risky`).
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // read by the x86-64 loops only
    pub risky: &'a [u64],
}
