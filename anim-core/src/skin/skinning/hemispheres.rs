//! Which vertices of a mesh flip an influence's weight under a dual-quaternion palette,
//! decided once a call for the SIMD loops: a coherent mesh skips every hemisphere test; a
//! palette whose flips one sign a joint explains is blended from a negated copy instead
//! ([`with_hemispheres`], [`signs_from`]); the rest test the vertices of their risky
//! joints, or the AVX-512 loops whole blocks of sixteen that hold one.

use crate::skin::mesh::Influences;
use crate::skin::palette::DqRow;
use anim_math::DualQuat;

/// A palette entry the SIMD dual-quaternion loops blend: a dual quaternion, or a row (a
/// dual quaternion and a scale).
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

impl Entry for DqRow {
    #[inline]
    fn real(&self) -> [f32; 4] {
        [self.0[0], self.0[1], self.0[2], self.0[3]]
    }

    #[inline]
    fn negated(&self) -> Self {
        let mut row = *self;
        // The dual quaternion's eight floats; the scale keeps its sign.
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
    /// risky joint's pairs, which the SIMD loops test whole, and the others not at all.
    pub(super) risky: &'a [u64],
}

/// A palette copy for [`with_hemispheres`]: up to `CAP` entries on a 64-byte boundary,
/// so each is aligned as in the palette (32 bytes a dual quaternion, 64 a row).
#[repr(C, align(64))]
struct Copied<T, const CAP: usize>([std::mem::MaybeUninit<T>; CAP]);

impl<T: Entry, const CAP: usize> Copied<T, CAP> {
    /// `palette` (at most `CAP` entries) with the entries whose sign is [`SIGN_BIT`]
    /// negated, as a slice of the copy.
    fn signed(&mut self, palette: &[T], signs: &[u32]) -> &[T] {
        let n = palette.len();
        assert!(n <= CAP && signs.len() == n, "a sign an entry, at most CAP entries");
        for ((slot, q), &sign) in self.0.iter_mut().zip(palette).zip(signs) {
            slot.write(if sign == SIGN_BIT { q.negated() } else { *q });
        }
        // SAFETY: entries 0..n were written above (`n <= CAP`); `T` is plain floats.
        unsafe { std::slice::from_raw_parts(self.0.as_ptr().cast::<T>(), n) }
    }
}

/// Runs `f` with what the SIMD loops blend from for `influences` under `palette`. The
/// mesh's pivot pairs ([`Influences::pivot_pairs`]) are dotted as the scalar loops dot
/// them, once a call:
///
/// - no dot negative (or NaN): the mesh is coherent, no vertex flips anything;
/// - else, for palettes of up to `CAP` joints, [`signs_from`] picks a sign a joint
///   that accounts for as many flips as it can (all of them when no cycle of pairs has an
///   odd number of flips), and the loops blend a copy of the palette with those joints
///   negated (the same transforms) when it leaves fewer pairs flipping: each vertex then
///   blends `±` the scalar loop's blend (the sign of its first joint), which transforms
///   points and vectors alike. Joints negated by a matrix's reading (which picks a
///   quaternion's sign by its own rule) cost a copy of the palette, not a test an
///   influence;
/// - the first joint of each pair still flipping is marked risky: those vertices test; the
///   SIMD loops test the blocks of sixteen vertices that hold one of them (marked from
///   [`Influences::pivot_vertices`], a bit a block; the AVX2 loops by their blocks of
///   eight inside them, [`block_clean`]), and no other vertex. A test a
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
    // Each pair's dot product is computed once a call: the signs, the count of pairs they
    // leave flipping and the marks all read it again (recomputed, the analysis cost a
    // sixth of the uniform-scale loop's call on the 80-joint fixture, BENCHMARKS.md).
    // The first `DOT_CACHE` pairs keep theirs on the stack; a mesh with more recomputes
    // the rest.
    let mut cache = [const { std::mem::MaybeUninit::<f32>::uninit() }; DOT_CACHE];
    let mut flipped = 0;
    let head = pairs.len().min(DOT_CACHE);
    for (&pair, slot) in pairs[..head].iter().zip(&mut cache) {
        let dot = pair_dot(palette, pair);
        slot.write(dot);
        flipped += usize::from(flips(dot));
    }
    for &pair in &pairs[head..] {
        let dot = pair_dot(palette, pair);
        flipped += usize::from(flips(dot));
    }
    if flipped == 0 {
        return f(Hemispheres { palette, coherent: true, risky: &[] });
    }
    let dot = |p: usize| match cache.get(p) {
        // SAFETY: the loop above wrote the slot of every pair below `DOT_CACHE`.
        Some(slot) => unsafe { slot.assume_init_read() },
        None => pair_dot(palette, pairs[p]),
    };
    let n = palette.len();
    if n <= CAP {
        let mut signs = [0u32; CAP];
        // The pairs that may flip against the signs: those that conflicted, and those
        // linked by none (a NaN or infinite dot). Every other pair holds.
        let cached = pairs.len() <= DOT_CACHE;
        let mut suspects = [const { std::mem::MaybeUninit::<u16>::uninit() }; DOT_CACHE];
        let mut reported = 0;
        signs_from::<CAP>(pairs, &dot, &mut signs[..n], |p| {
            if cached {
                // Each pair is reported once: `reported` and `p` are below the number of
                // pairs, at most DOT_CACHE, which fits a u16.
                suspects[reported].write(p as u16);
            }
            reported += 1;
        });
        // A pair flips against the copy when its dot product, negated when one of its
        // joints is (exactly: negating a joint negates its dot products), is negative or
        // NaN.
        let signs = &signs[..n];
        let flips_signed = |p: usize| {
            let (a, b) = pair_joints(pairs[p]);
            // The signs are 0 or the sign bit: their xor negates the dot product or not,
            // without a branch (which mispredicted on mixed signs).
            flips(f32::from_bits(dot(p).to_bits() ^ signs[a] ^ signs[b]))
        };
        let mut copy = Copied::<T, CAP>([const { std::mem::MaybeUninit::uninit() }; CAP]);
        if reported == 0 {
            return f(Hemispheres { palette: copy.signed(palette, signs), coherent: true, risky: &[] });
        }
        let mut risky = [0u64; RISK_WORDS + BLOCK_WORDS];
        let left = if cached {
            // SAFETY: the slots below `reported` were written (`cached`).
            let list = suspects[..reported].iter().map(|slot| usize::from(unsafe { slot.assume_init_read() }));
            mark(influences, list.filter(|&p| flips_signed(p)), &mut risky)
        } else {
            mark(influences, (0..pairs.len()).filter(|&p| flips_signed(p)), &mut risky)
        };
        if left == 0 {
            return f(Hemispheres { palette: copy.signed(palette, signs), coherent: true, risky: &[] });
        }
        if left < flipped {
            let signed = copy.signed(palette, signs);
            return f(Hemispheres { palette: signed, coherent: false, risky: &risky[..marked_words(influences)] });
        }
    }
    let mut risky = [0u64; RISK_WORDS + BLOCK_WORDS];
    mark(influences, (0..pairs.len()).filter(|&p| flips(dot(p))), &mut risky);
    f(Hemispheres { palette, coherent: false, risky: &risky[..marked_words(influences)] })
}

/// Pairs whose dot products [`with_hemispheres`] keeps on the stack (16 KiB).
const DOT_CACHE: usize = 4096;

/// The real parts' dot product of pivot pair `pair` under `palette`, as the scalar loops
/// compute it.
#[inline]
fn pair_dot<T: Entry>(palette: &[T], pair: u32) -> f32 {
    // Pairs hold joints below `joint_bound`, which the palette covers (validated).
    let (a, b) = pair_joints(pair);
    let (p, q) = (palette[a].real(), palette[b].real());
    q[0] * p[0] + q[1] * p[1] + q[2] * p[2] + q[3] * p[3]
}

/// A pivot pair's joints: `(first, other)`.
#[inline]
fn pair_joints(pair: u32) -> (usize, usize) {
    ((pair >> 16) as usize, (pair & 0xFFFF) as usize)
}

/// Whether a pair whose real parts' dot product is `dot` counts as flipping: negative (the
/// scalar loop flips it) or NaN (which marks the pair). Both compares, without a branch.
#[inline]
fn flips(dot: f32) -> bool {
    (dot < 0.0) | dot.is_nan()
}

/// Marks in `risky` (all zero) the risky joints: the first joints of the pivot pairs
/// `flipping` names (indices in [`Influences::pivot_pairs`], each once); and, for a mesh of
/// at most [`MARKED_VERTICES`], the blocks of [`MARK_BLOCK`] vertices that hold a vertex of
/// a risky joint's pairs ([`Influences::pivot_vertices`]). Returns the number of pairs.
fn mark(
    influences: &Influences,
    flipping: impl Iterator<Item = usize>,
    risky: &mut [u64; RISK_WORDS + BLOCK_WORDS],
) -> usize {
    let blocks = influences.vertex_count() <= MARKED_VERTICES;
    let pairs = influences.pivot_pairs();
    let mut left = 0;
    for p in flipping {
        left += 1;
        let (a, _) = pair_joints(pairs[p]);
        let bit = 1 << (a % 64);
        if risky[a / 64] & bit != 0 {
            // Its vertices are marked already.
            continue;
        }
        risky[a / 64] |= bit;
        if blocks {
            // A joint's vertices come in order, many to a block: each block is set once.
            let mut previous = usize::MAX;
            for &v in influences.pivot_vertices(a) {
                let block = v as usize / MARK_BLOCK;
                if block != previous {
                    risky[RISK_WORDS + block / 64] |= 1 << (block % 64);
                    previous = block;
                }
            }
        }
    }
    left
}

/// The words of [`mark`]'s table the loops read for `influences`: the joints', and the
/// blocks' when it marked them.
fn marked_words(influences: &Influences) -> usize {
    if influences.vertex_count() <= MARKED_VERTICES { RISK_WORDS + BLOCK_WORDS } else { RISK_WORDS }
}

/// The vertices a block of [`Hemispheres::risky`]'s block marks: the AVX-512 loops' step.
pub(super) const MARK_BLOCK: usize = 16;

/// True when `risky` ([`Hemispheres::risky`]) marks the mesh's blocks and not the block of
/// [`MARK_BLOCK`] vertices that holds vertex `v`: none of that block's vertices flips a
/// weight against the palette blended, so a loop may blend any of them without tests.
/// False when the blocks are not marked (then only the risky joints say).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // read by the x86-64 loops only
#[inline(always)]
pub(super) fn block_clean(v: usize, risky: &[u64]) -> bool {
    match risky.get(RISK_WORDS..) {
        Some(blocks) if !blocks.is_empty() => {
            let b = v / MARK_BLOCK;
            blocks[b / 64] & (1 << (b % 64)) == 0
        }
        _ => false,
    }
}

/// Words of block marks after the joints' in [`Hemispheres::risky`].
pub(super) const BLOCK_WORDS: usize = 256;

/// The most vertices a mesh has for its blocks to be marked (a bit each on the stack).
const MARKED_VERTICES: usize = BLOCK_WORDS * 64 * MARK_BLOCK;

/// Bits of the risky-joint table: one a possible joint index (`u16`).
pub(super) const RISK_WORDS: usize = (u16::MAX as usize + 1) / 64;

/// The largest rigid palette [`with_hemispheres`] copies with signs. Its stack frame holds
/// the copy (32 KiB), the dot products, signs and marks: 74 KiB on x86-64 (measured from
/// the release build's prologue).
pub(super) const SIGN_JOINTS: usize = 1024;

/// The largest palette of uniform rows [`with_hemispheres`] copies with signs (a copy of
/// 16 KiB; the frame is 52 KiB, as measured for [`SIGN_JOINTS`]).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // the uniform rows' loop is x86-64's
pub(super) const ROW_SIGN_JOINTS: usize = 256;

/// The `f32` sign bit, as [`signs_from`] stores a flip.
pub(super) const SIGN_BIT: u32 = 0x8000_0000;

/// [`signs_from`] with the dot products of `palette`'s real parts.
#[cfg(test)]
pub(super) fn hemisphere_signs<T: Entry, const CAP: usize>(pairs: &[u32], palette: &[T], signs: &mut [u32]) -> bool {
    debug_assert!(signs.len() == palette.len());
    signs_from::<CAP>(pairs, |p| pair_dot(palette, pairs[p]), signs, |_| {})
}

/// Picks a sign a joint (`0` or [`SIGN_BIT`], `signs` one a palette entry; `dot(p)` is
/// pivot pair `p`'s real parts' dot product) such that for as many pivot pairs `(a, b)` as
/// it can, `signs[a] ^ signs[b]` is the sign bit exactly when the scalar loop flips `b`'s
/// weight for a vertex pivoting on `a` (their dot product negative): negating the joints
/// whose sign is set leaves those pairs unflipped. Returns true when no pair conflicts;
/// calls `unheld` once with each pair that conflicts and each pair whose dot product is NaN
/// or infinite (linked by none): every other pair holds.
///
/// The signs are a two-colouring of the pairs' graph with the flips as parities, built by
/// linking the pairs clearest first (see the body) into components whose joints carry
/// their parity. A pair that closes a cycle with an odd number of flips (three joints whose
/// quaternions spread beyond a quarter turn of their sphere, say) cannot hold with the
/// others and is left. Of a component's two colourings, the one that leaves its lowest
/// joint unnegated is returned.
fn signs_from<const CAP: usize>(
    pairs: &[u32],
    dot: impl Fn(usize) -> f32,
    signs: &mut [u32],
    mut unheld: impl FnMut(usize),
) -> bool {
    let n = signs.len();
    debug_assert!(n <= CAP && CAP < 1 << 16, "joint labels and sizes fit a u16");
    // Components found so far, each joint labelled with its component (`comp`, a joint of
    // it) and its parity relative to that joint (`signs`); a component's joints form a
    // cycle through `next`, and `size` counts them (valid at the label). A label is one
    // load, where a union-find's walk to its root mispredicted and waited on each step
    // (that search was most of this function's time); a union relabels the smaller side,
    // so a joint is relabelled at most log₂ n times.
    let mut comp = [0u16; CAP];
    let mut next = [0u16; CAP];
    let mut size = [1u16; CAP];
    for j in 0..n {
        // `n` is at most CAP, at most 2^16: the index fits a u16.
        (comp[j], next[j]) = (j as u16, j as u16);
    }
    signs.fill(0);
    // Links pair `p`; false when it conflicts with the pairs linked before.
    let mut link = |p: usize, dot: f32| {
        let (mut a, mut b) = pair_joints(pairs[p]);
        let flip = if dot < 0.0 { SIGN_BIT } else { 0 };
        let (mut ca, mut cb) = (usize::from(comp[a]), usize::from(comp[b]));
        if ca == cb {
            return signs[a] ^ signs[b] == flip;
        }
        if size[ca] < size[cb] {
            (a, b, ca, cb) = (b, a, cb, ca);
        }
        // b's side joins a's: its parities change by `delta`, so that the pair's holds.
        let delta = signs[a] ^ signs[b] ^ flip;
        let mut y = b;
        loop {
            signs[y] ^= delta;
            // `ca` is a joint, below `n`.
            comp[y] = ca as u16;
            y = usize::from(next[y]);
            if y == b {
                break;
            }
        }
        // Splicing the two cycles makes one.
        next.swap(a, b);
        size[ca] += size[cb];
        true
    };
    // The clearest pairs go first (real parts nearly parallel or opposite, |dot| ≥ 0.5),
    // then |dot| in [0.2, 0.5), then below 0.2, each band in pair order, so that the
    // conflicts fall on pairs nearer a quarter turn apart, whose flip is the least certain.
    // Each pair is linked once; a NaN or infinite dot is linked by none. Without a conflict
    // any order gives signs that hold for every pair.
    let band = |d: f32| {
        let a = d.abs();
        // 0, 1, 2 for the bands, 3 for none.
        (u8::from(a < 0.5) + u8::from(a < 0.2)) | (u8::from(!a.is_finite()) * 3)
    };
    let mut every = true;
    // Links pair `p` of band `b`, or reports it.
    let mut settle = |p: usize, d: f32, b: u8| {
        if b == 3 {
            unheld(p);
        } else if !link(p, d) {
            every = false;
            unheld(p);
        }
    };
    if pairs.len() <= DOT_CACHE {
        // Most pairs are in the first band (a tenth were not on the 80-joint fixture): they
        // are linked as they come, the others kept in a list for the later bands. (Sorting
        // all of them by band first cost more than the linking.)
        let mut later = [const { std::mem::MaybeUninit::<u16>::uninit() }; DOT_CACHE];
        let mut count = 0;
        for p in 0..pairs.len() {
            let d = dot(p);
            if band(d) == 0 {
                settle(p, d, 0);
            } else {
                // `p` is below DOT_CACHE, which fits a u16, and so is `count`.
                later[count].write(p as u16);
                count += 1;
            }
        }
        for b in 1..4 {
            for slot in &later[..count] {
                // SAFETY: the slots below `count` were written above.
                let p = usize::from(unsafe { slot.assume_init_read() });
                let d = dot(p);
                if band(d) == b {
                    settle(p, d, b);
                }
            }
        }
    } else {
        for b in 0..4 {
            for p in 0..pairs.len() {
                let d = dot(p);
                if band(d) == b {
                    settle(p, d, b);
                }
            }
        }
    }
    // Either sign of a whole component serves: the one that leaves its lowest joint
    // unnegated (the first of its joints met in order sets the component's flip).
    let mut flip = [u32::MAX; CAP];
    for j in 0..n {
        let c = usize::from(comp[j]);
        if flip[c] == u32::MAX {
            flip[c] = signs[j];
        }
        signs[j] ^= flip[c];
    }
    every
}
