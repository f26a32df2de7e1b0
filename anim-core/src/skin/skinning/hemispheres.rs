//! Which vertices of a mesh flip an influence's weight under a dual-quaternion palette,
//! decided once a call for the SIMD loops: a coherent mesh skips every hemisphere test; a
//! palette whose flips one sign a joint explains is blended from a negated copy instead
//! ([`with_hemispheres`], [`hemisphere_signs`]); the rest test the vertices of their risky
//! joints, or the AVX-512 loops whole blocks of sixteen that hold one.

use crate::skin::mesh::Influences;
use crate::skin::palette::UniformRow;
use anim_math::DualQuat;

/// A palette entry the SIMD dual-quaternion loops blend: a dual quaternion, or a uniform
/// row (a dual quaternion and a scale factor).
pub(super) trait Entry: Copy {
    /// The real part, `[i, j, k, w]`.
    fn real(&self) -> [f32; 4];
    /// The same transform with the other sign: the dual quaternion negated.
    #[must_use]
    fn negated(&self) -> Self;
}

impl Entry for DualQuat {
    #[inline]
    fn real(&self) -> [f32; 4] {
        let r = &self.as_ref().real.coords;
        [r[0], r[1], r[2], r[3]]
    }

    #[inline]
    fn negated(&self) -> Self {
        DualQuat::new_unchecked(-self.into_inner())
    }
}

impl Entry for UniformRow {
    #[inline]
    fn real(&self) -> [f32; 4] {
        [self.0[0], self.0[1], self.0[2], self.0[3]]
    }

    #[inline]
    fn negated(&self) -> Self {
        let mut row = *self;
        // The dual quaternion's eight floats; the scale factor keeps its sign.
        row.0[..8].iter_mut().for_each(|x| *x = -*x);
        row
    }
}

/// What the SIMD dual-quaternion loops blend from, for one mesh and palette
/// ([`with_hemispheres`]).
pub(super) struct Hemispheres<'a, T> {
    /// The entries to blend: the palette's, or a copy with some negated.
    pub(super) palette: &'a [T],
    /// No vertex flips a weight against `palette`: the loops skip the hemisphere tests.
    pub(super) coherent: bool,
    /// When not `coherent`: one bit a joint ([`RISK_WORDS`] words), set for the joints
    /// whose vertices (as their first joint) may flip a weight; the others skip the tests
    /// too. For a mesh of at most [`MARKED_VERTICES`], [`BLOCK_WORDS`] more words follow:
    /// one bit a block of [`MARK_BLOCK`] vertices, set for the blocks holding a vertex of a
    /// risky joint's pairs, which the AVX-512 loops test whole, and the others not at all.
    pub(super) risky: &'a [u64],
}

/// A palette copy for [`with_hemispheres`]: up to `CAP` entries on a 64-byte boundary,
/// so each is aligned as in the palette (32 bytes a dual quaternion, 64 a uniform row).
#[repr(C, align(64))]
struct Copied<T, const CAP: usize>([std::mem::MaybeUninit<T>; CAP]);

/// Runs `f` with what the SIMD loops blend from for `influences` under `palette`. The
/// mesh's pivot pairs ([`Influences::pivot_pairs`]) are dotted as the scalar loops dot
/// them, once a call:
///
/// - no dot negative (or NaN): the mesh is coherent, no vertex flips anything;
/// - else, for palettes of up to `CAP` joints, [`hemisphere_signs`] picks a sign a joint
///   that accounts for as many flips as it can (all of them when no cycle of pairs has an
///   odd number of flips), and the loops blend a copy of the palette with those joints
///   negated (the same transforms) when it leaves fewer pairs flipping: each vertex then
///   blends `±` the scalar loop's blend (the sign of its first joint), which transforms
///   points and vectors alike. Joints negated by a matrix's reading (which picks a
///   quaternion's sign by its own rule) cost a copy of the palette, not a test an
///   influence;
/// - the first joint of each pair still flipping is marked risky: those vertices test; the
///   AVX-512 loops test the blocks of sixteen vertices that hold one of them (marked from
///   [`Influences::pivot_vertices`], a bit a block), and no other vertex. A test a
///   vertex, of a bit of its first joint, cost a sixth of the loop even when no vertex
///   took it (10,000 vertices, 80 joints, two such pairs; BENCHMARKS.md).
///
/// The stack tables are filled only when needed: a coherent call clears no memory.
pub(super) fn with_hemispheres<T: Entry, const CAP: usize, R>(
    influences: &Influences,
    palette: &[T],
    f: impl FnOnce(Hemispheres<T>) -> R,
) -> R {
    let pairs = influences.pivot_pairs();
    let (mut flipped, mut nan) = (0, false);
    for &pair in pairs {
        let dot = pair_dot(palette, pair);
        flipped += usize::from(dot < 0.0 || dot.is_nan());
        nan |= dot.is_nan();
    }
    if flipped == 0 {
        return f(Hemispheres { palette, coherent: true, risky: &[] });
    }
    let n = palette.len();
    if n <= CAP {
        let mut signs = [0u32; CAP];
        let every = hemisphere_signs::<T, CAP>(pairs, palette, &mut signs[..n]);
        let mut copy = Copied::<T, CAP>([const { std::mem::MaybeUninit::uninit() }; CAP]);
        for ((slot, q), &sign) in copy.0.iter_mut().zip(palette).zip(&signs[..n]) {
            slot.write(if sign == SIGN_BIT { q.negated() } else { *q });
        }
        // SAFETY: entries 0..n were written above (`n <= CAP`); `T` is plain floats.
        let signed = unsafe { std::slice::from_raw_parts(copy.0.as_ptr().cast::<T>(), n) };
        // Signs that hold for every pair leave none flipping but a NaN one (negating a
        // joint negates its dot products exactly).
        let left = if every && !nan { 0 } else { pairs.iter().filter(|&&pair| pair_flips(signed, pair)).count() };
        if left == 0 {
            return f(Hemispheres { palette: signed, coherent: true, risky: &[] });
        }
        if left < flipped {
            return tested(influences, signed, f);
        }
    }
    tested(influences, palette, f)
}

/// The real parts' dot product of pivot pair `pair` under `palette`, as the scalar loops
/// compute it.
#[inline]
fn pair_dot<T: Entry>(palette: &[T], pair: u32) -> f32 {
    // Pairs hold joints below `joint_bound`, which the palette covers (validated).
    let (p, q) = (palette[(pair >> 16) as usize].real(), palette[(pair & 0xFFFF) as usize].real());
    q[0] * p[0] + q[1] * p[1] + q[2] * p[2] + q[3] * p[3]
}

/// True when pivot pair `pair`'s dot product is negative or NaN (a NaN dot flips nothing
/// in the scalar loop, but marks the pair).
#[inline]
fn pair_flips<T: Entry>(palette: &[T], pair: u32) -> bool {
    let dot = pair_dot(palette, pair);
    dot < 0.0 || dot.is_nan()
}

/// [`with_hemispheres`]'s last case: `f` with `palette`, its risky joints marked, and,
/// for a mesh of at most [`MARKED_VERTICES`], the blocks of [`MARK_BLOCK`] vertices that
/// hold a vertex of a risky joint's pairs ([`Influences::pivot_vertices`]).
fn tested<T: Entry, R>(influences: &Influences, palette: &[T], f: impl FnOnce(Hemispheres<T>) -> R) -> R {
    let mut risky = [0u64; RISK_WORDS + BLOCK_WORDS];
    let mark = influences.vertex_count() <= MARKED_VERTICES;
    let mut last = None;
    for &pair in influences.pivot_pairs() {
        let a = (pair >> 16) as usize;
        if last != Some(a) && pair_flips(palette, pair) {
            // Pairs are sorted: a joint's come together, and its vertices are marked once.
            last = Some(a);
            risky[a / 64] |= 1 << (a % 64);
            if mark {
                for &v in influences.pivot_vertices(a) {
                    let block = v as usize / MARK_BLOCK;
                    risky[RISK_WORDS + block / 64] |= 1 << (block % 64);
                }
            }
        }
    }
    let words = if mark { RISK_WORDS + BLOCK_WORDS } else { RISK_WORDS };
    f(Hemispheres { palette, coherent: false, risky: &risky[..words] })
}

/// The vertices a block of [`Hemispheres::risky`]'s block marks: the AVX-512 loops' step.
pub(super) const MARK_BLOCK: usize = 16;

/// Words of block marks after the joints' in [`Hemispheres::risky`].
pub(super) const BLOCK_WORDS: usize = 256;

/// The most vertices a mesh has for its blocks to be marked (a bit each on the stack).
const MARKED_VERTICES: usize = BLOCK_WORDS * 64 * MARK_BLOCK;

/// Bits of the risky-joint table: one a possible joint index (`u16`).
pub(super) const RISK_WORDS: usize = (u16::MAX as usize + 1) / 64;

/// The largest rigid palette [`with_hemispheres`] copies with signs (its tables, 38 KiB,
/// live on the stack).
pub(super) const SIGN_JOINTS: usize = 1024;

/// The largest palette of uniform rows [`with_hemispheres`] copies with signs (its tables,
/// 18 KiB, on the stack).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // the uniform rows' loop is x86-64's
pub(super) const ROW_SIGN_JOINTS: usize = 256;

/// The `f32` sign bit, as [`hemisphere_signs`] stores a flip.
pub(super) const SIGN_BIT: u32 = 0x8000_0000;

/// Picks a sign a joint (`0` or [`SIGN_BIT`], `signs` one a palette entry) such that for
/// as many pivot pairs `(a, b)` as it can, `signs[a] ^ signs[b]` is the sign bit exactly
/// when the scalar loop flips `b`'s weight for a vertex pivoting on `a` (their real parts'
/// dot product negative): negating the joints whose sign is set leaves those pairs
/// unflipped. Returns true when that holds for every pair.
///
/// The signs are a two-colouring of the pairs' graph with the flips as parities: a
/// union-find whose links carry the parity to their parent. A pair that closes a cycle
/// with an odd number of flips (three joints whose quaternions spread beyond a quarter turn
/// of their sphere, say) cannot hold with the others and is left; when there is such a
/// pair, the links are redone clearest pairs first (see the body).
pub(super) fn hemisphere_signs<T: Entry, const CAP: usize>(pairs: &[u32], palette: &[T], signs: &mut [u32]) -> bool {
    let n = signs.len();
    debug_assert!(n <= CAP && CAP <= 1 << 16 && n == palette.len());
    let mut parent = [0u16; CAP];
    // (root of `x`, parity of `x` relative to it), linking the path straight to the root.
    let find = |parent: &mut [u16; CAP], signs: &mut [u32], x: usize| -> (usize, u32) {
        let (mut root, mut parity) = (x, 0);
        while usize::from(parent[root]) != root {
            parity ^= signs[root];
            root = usize::from(parent[root]);
        }
        let (mut y, mut py) = (x, parity);
        while y != root {
            let (up, pu) = (usize::from(parent[y]), py ^ signs[y]);
            // `root` is below `n`, so it fits a u16 as `parent`'s entries do.
            (parent[y], signs[y]) = (root as u16, py);
            (y, py) = (up, pu);
        }
        (root, parity)
    };
    // Links the pairs whose |dot| lies in `band`; false when one of them conflicts.
    let link = |parent: &mut [u16; CAP], signs: &mut [u32], band: std::ops::Range<f32>| {
        let mut every = true;
        for &pair in pairs {
            let dot = pair_dot(palette, pair);
            if !band.contains(&dot.abs()) {
                continue;
            }
            let (a, b) = ((pair >> 16) as usize, (pair & 0xFFFF) as usize);
            let flip = if dot < 0.0 { SIGN_BIT } else { 0 };
            let (ra, pa) = find(parent, signs, a);
            let (rb, pb) = find(parent, signs, b);
            if ra == rb {
                every &= pa ^ pb == flip;
            } else {
                // `ra` is below `n` (see above).
                (parent[rb], signs[rb]) = (ra as u16, pa ^ pb ^ flip);
            }
        }
        every
    };
    let reset = |parent: &mut [u16; CAP], signs: &mut [u32]| {
        for (j, p) in parent[..n].iter_mut().enumerate() {
            // `n` is at most CAP, at most 2^16: the index fits a u16.
            *p = j as u16;
        }
        // While linking, `signs[j]` is j's parity relative to `parent[j]` (0 for a root).
        signs.fill(0);
    };
    // One pass in order settles the usual case (no conflict at all). Otherwise the
    // clearest pairs go first (real parts nearly parallel or opposite), so that the
    // conflicts fall on pairs nearer a quarter turn apart, whose flip is the least certain.
    reset(&mut parent, signs);
    let mut every = link(&mut parent, signs, 0.0..f32::INFINITY);
    if !every {
        reset(&mut parent, signs);
        every = true;
        for band in [0.5..f32::INFINITY, 0.2..0.5, 0.0..0.2] {
            every &= link(&mut parent, signs, band);
        }
    }
    // Every joint's parity relative to its root: its sign.
    for j in 0..n {
        let (_, parity) = find(&mut parent, signs, j);
        signs[j] = parity;
    }
    every
}
