//! Quaternions and 3-vectors held in one 4-lane register each, for the runtime's hot
//! paths: anim-retarget's per-frame job and anim-ik's two-bone solve.
//!
//! Their work is a few quaternion products, normalizations and vector rotations per
//! joint. Written over nalgebra's scalar types, each product was 16 multiplies and 12
//! adds issued one lane at a time, with the shuffles between them. Here:
//!
//! - [`F4`]: four `f32` lanes, an SSE register on x86-64 (SSE and SSE2 are part of the
//!   x86-64 baseline, so no run-time dispatch is needed for them), a plain `[f32; 4]` with
//!   the same operations elsewhere. A quaternion is `(x, y, z, w)` (nalgebra's order), a
//!   vector `(x, y, z, 0)`.
//! - [`Fma`]: how `a · b + c` is formed, [`Plain`] (a multiply and an add, every target)
//!   or `Fused` (one FMA instruction; a value exists only where the CPU has AVX2 and
//!   FMA). Code generic over it is compiled once for each; the `Fused` instance only
//!   inlines its instructions into functions built with
//!   `#[target_feature(enable = "avx2,fma")]`.
//! - [`QConst`]: a constant operand of Hamilton products prepared once, and [`QConst4`],
//!   four of them side by side for four joints at a time in structure-of-arrays form.
//! - [`Slot`]: a model-space transform as three registers.

use crate::{Quat, Transform, Vec3};

#[cfg(target_arch = "x86_64")]
mod lanes {
    use super::sel;
    use std::arch::x86_64::*;

    /// Four `f32` lanes.
    #[derive(Clone, Copy, Debug)]
    #[repr(transparent)]
    pub struct F4(__m128);

    // SAFETY (every `unsafe` block in this module that calls an intrinsic without a
    // pointer): the intrinsics used here need SSE or SSE2 only, which every x86-64
    // processor has and the x86-64 targets enable at compile time.
    impl F4 {
        /// Lanes `(x, y, z, w)`.
        #[inline(always)]
        pub fn new(x: f32, y: f32, z: f32, w: f32) -> Self {
            // SAFETY: SSE (module note).
            F4(unsafe { _mm_set_ps(w, z, y, x) })
        }

        /// `v` in every lane.
        #[inline(always)]
        pub fn splat(v: f32) -> Self {
            // SAFETY: SSE (module note).
            F4(unsafe { _mm_set1_ps(v) })
        }

        /// The four lanes, x first.
        #[inline(always)]
        pub fn to_array(self) -> [f32; 4] {
            let mut a = [0.0f32; 4];
            self.store4(&mut a);
            a
        }

        /// One unaligned 16-byte load.
        #[inline(always)]
        pub fn load4(a: &[f32; 4]) -> Self {
            // SAFETY: `a` is four readable `f32`s; the unaligned load needs no alignment.
            F4(unsafe { _mm_loadu_ps(a.as_ptr()) })
        }

        /// One unaligned 16-byte store.
        #[inline(always)]
        pub fn store4(self, a: &mut [f32; 4]) {
            // SAFETY: `a` is four writable `f32`s; the unaligned store needs no alignment.
            unsafe { _mm_storeu_ps(a.as_mut_ptr(), self.0) }
        }

        /// `(a[0], a[1], a[2], 0)`, reading only the 12 bytes of `a`.
        #[inline(always)]
        pub fn load3(a: &[f32; 3]) -> Self {
            // SAFETY: an 8-byte load of `a[0..2]` and a 4-byte load of `a[2]`, both inside
            // `a`; neither needs alignment. The rest is SSE (module note).
            unsafe {
                let lo = _mm_castpd_ps(_mm_load_sd(a.as_ptr().cast::<f64>()));
                F4(_mm_movelh_ps(lo, _mm_load_ss(a.as_ptr().add(2))))
            }
        }

        /// Stores lanes x, y, z into `a` (12 bytes written).
        #[inline(always)]
        pub fn store3(self, a: &mut [f32; 3]) {
            // SAFETY: an 8-byte store to `a[0..2]` and a 4-byte store to `a[2]`, both inside
            // `a`; neither needs alignment. The rest is SSE (module note).
            unsafe {
                _mm_store_sd(a.as_mut_ptr().cast::<f64>(), _mm_castps_pd(self.0));
                _mm_store_ss(a.as_mut_ptr().add(2), _mm_movehl_ps(self.0, self.0));
            }
        }

        /// `1 / self` per lane, 0 where `|self| < eps` (as `Transform::inverse` does for
        /// scales).
        #[inline(always)]
        pub fn recip_or_zero(self, eps: f32) -> Self {
            // SAFETY: SSE (module note).
            unsafe {
                let abs = _mm_andnot_ps(_mm_set1_ps(-0.0), self.0);
                let tiny = _mm_cmplt_ps(abs, _mm_set1_ps(eps));
                F4(_mm_andnot_ps(tiny, _mm_div_ps(_mm_set1_ps(1.0), self.0)))
            }
        }

        /// Lane-wise sum.
        // A method, as every lane operation here, so chains read in evaluation order.
        #[allow(clippy::should_implement_trait)]
        #[inline(always)]
        pub fn add(self, o: Self) -> Self {
            // SAFETY: SSE (module note).
            F4(unsafe { _mm_add_ps(self.0, o.0) })
        }

        /// Lane-wise difference.
        // A method, as every lane operation here, so chains read in evaluation order.
        #[allow(clippy::should_implement_trait)]
        #[inline(always)]
        pub fn sub(self, o: Self) -> Self {
            // SAFETY: SSE (module note).
            F4(unsafe { _mm_sub_ps(self.0, o.0) })
        }

        /// Lane-wise product.
        // A method, as every lane operation here, so chains read in evaluation order.
        #[allow(clippy::should_implement_trait)]
        #[inline(always)]
        pub fn mul(self, o: Self) -> Self {
            // SAFETY: SSE (module note).
            F4(unsafe { _mm_mul_ps(self.0, o.0) })
        }

        /// An estimate of `1 / √self` per lane, to 12 bits ([`F4::rsqrt`] refines it).
        #[inline(always)]
        pub fn rsqrt_estimate(self) -> Self {
            // SAFETY: SSE (module note).
            F4(unsafe { _mm_rsqrt_ps(self.0) })
        }

        /// `√self` per lane, correctly rounded (as `f32::sqrt`).
        #[inline(always)]
        pub fn sqrt(self) -> Self {
            // SAFETY: SSE (module note).
            F4(unsafe { _mm_sqrt_ps(self.0) })
        }

        /// Flips the sign of the lanes whose parameter is 1 (`X` for lane x, …).
        #[inline(always)]
        pub fn flip<const X: u32, const Y: u32, const Z: u32, const W: u32>(self) -> Self {
            let m = |b: u32| if b != 0 { -0.0f32 } else { 0.0 };
            // SAFETY: SSE (module note).
            F4(unsafe { _mm_xor_ps(self.0, _mm_set_ps(m(W), m(Z), m(Y), m(X))) })
        }

        /// The sum of the four lanes in every lane.
        #[inline(always)]
        pub fn sum(self) -> Self {
            // SAFETY: SSE (module note).
            unsafe {
                let v = self.0;
                let s = _mm_add_ps(v, _mm_shuffle_ps::<{ sel(1, 0, 3, 2) }>(v, v));
                F4(_mm_add_ps(s, _mm_shuffle_ps::<{ sel(2, 3, 0, 1) }>(s, s)))
            }
        }

        /// The lanes of `self` rearranged as selector `M` says ([`super::sel`]).
        #[inline(always)]
        pub fn swizzle<const M: i32>(self) -> Self {
            // SAFETY: SSE (module note).
            F4(unsafe { _mm_shuffle_ps::<M>(self.0, self.0) })
        }

        /// The bitwise and of the lanes.
        #[inline(always)]
        pub fn and(self, mask: Self) -> Self {
            // SAFETY: SSE (module note).
            F4(unsafe { _mm_and_ps(self.0, mask.0) })
        }

        /// The 4 × 4 transpose: lane `i` of row `j` becomes lane `j` of row `i`.
        #[inline(always)]
        pub fn transpose(rows: [Self; 4]) -> [Self; 4] {
            let [a, b, c, d] = rows.map(|r| r.0);
            // SAFETY: SSE (module note).
            unsafe {
                let (ab_lo, ab_hi) = (_mm_unpacklo_ps(a, b), _mm_unpackhi_ps(a, b));
                let (cd_lo, cd_hi) = (_mm_unpacklo_ps(c, d), _mm_unpackhi_ps(c, d));
                [
                    F4(_mm_movelh_ps(ab_lo, cd_lo)),
                    F4(_mm_movehl_ps(cd_lo, ab_lo)),
                    F4(_mm_movelh_ps(ab_hi, cd_hi)),
                    F4(_mm_movehl_ps(cd_hi, ab_hi)),
                ]
            }
        }

        /// Lane `x`.
        #[inline(always)]
        pub fn x(self) -> f32 {
            // SAFETY: SSE (module note).
            unsafe { _mm_cvtss_f32(self.0) }
        }

        /// The bitwise exclusive or of the lanes.
        #[inline(always)]
        pub fn xor(self, o: Self) -> Self {
            // SAFETY: SSE (module note).
            F4(unsafe { _mm_xor_ps(self.0, o.0) })
        }
    }

    /// Fused multiply-adds (FMA3). A value exists only where the CPU has AVX2 and FMA:
    /// [`Fused::detect`] is the only way to make one.
    #[derive(Clone, Copy, Debug)]
    pub struct Fused(());

    impl Fused {
        /// `Some` when this CPU has AVX2 and FMA.
        #[inline]
        pub fn detect() -> Option<Self> {
            (std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma"))
                .then_some(Fused(()))
        }
    }

    // SAFETY (the three `unsafe` blocks below): a `Fused` exists only where the CPU has
    // FMA (`Fused::detect`), so the FMA instructions can run; they take no pointers.
    impl super::Fma for Fused {
        #[inline(always)]
        fn mul_add(self, a: F4, b: F4, c: F4) -> F4 {
            // SAFETY: see above.
            F4(unsafe { _mm_fmadd_ps(a.0, b.0, c.0) })
        }
        #[inline(always)]
        fn mul_sub(self, a: F4, b: F4, c: F4) -> F4 {
            // SAFETY: see above.
            F4(unsafe { _mm_fmsub_ps(a.0, b.0, c.0) })
        }
        #[inline(always)]
        fn neg_mul_add(self, a: F4, b: F4, c: F4) -> F4 {
            // SAFETY: see above.
            F4(unsafe { _mm_fnmadd_ps(a.0, b.0, c.0) })
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
mod lanes {
    /// Four `f32` lanes.
    #[derive(Clone, Copy, Debug)]
    pub struct F4([f32; 4]);

    impl F4 {
        #[inline(always)]
        fn map2(self, o: Self, f: impl Fn(f32, f32) -> f32) -> Self {
            F4([f(self.0[0], o.0[0]), f(self.0[1], o.0[1]), f(self.0[2], o.0[2]), f(self.0[3], o.0[3])])
        }
        /// Lanes `(x, y, z, w)`.
        #[inline(always)]
        pub fn new(x: f32, y: f32, z: f32, w: f32) -> Self {
            F4([x, y, z, w])
        }
        /// `v` in every lane.
        #[inline(always)]
        pub fn splat(v: f32) -> Self {
            F4([v; 4])
        }
        /// The four lanes, x first.
        #[inline(always)]
        pub fn to_array(self) -> [f32; 4] {
            self.0
        }
        /// One unaligned 16-byte load.
        #[inline(always)]
        pub fn load4(a: &[f32; 4]) -> Self {
            F4(*a)
        }
        /// One unaligned 16-byte store.
        #[inline(always)]
        pub fn store4(self, a: &mut [f32; 4]) {
            *a = self.0;
        }
        /// `(a[0], a[1], a[2], 0)`, reading only the 12 bytes of `a`.
        #[inline(always)]
        pub fn load3(a: &[f32; 3]) -> Self {
            F4([a[0], a[1], a[2], 0.0])
        }
        /// Stores lanes x, y, z into `a` (12 bytes written).
        #[inline(always)]
        pub fn store3(self, a: &mut [f32; 3]) {
            *a = [self.0[0], self.0[1], self.0[2]];
        }
        /// `1 / self` per lane, 0 where `|self| < eps` (as `Transform::inverse` does for
        /// scales).
        #[inline(always)]
        pub fn recip_or_zero(self, eps: f32) -> Self {
            F4(self.0.map(|v| if v.abs() < eps { 0.0 } else { 1.0 / v }))
        }
        /// Lane-wise sum.
        // A method, as every lane operation here, so chains read in evaluation order.
        #[allow(clippy::should_implement_trait)]
        #[inline(always)]
        pub fn add(self, o: Self) -> Self {
            self.map2(o, |a, b| a + b)
        }
        /// Lane-wise difference.
        // A method, as every lane operation here, so chains read in evaluation order.
        #[allow(clippy::should_implement_trait)]
        #[inline(always)]
        pub fn sub(self, o: Self) -> Self {
            self.map2(o, |a, b| a - b)
        }
        /// Lane-wise product.
        // A method, as every lane operation here, so chains read in evaluation order.
        #[allow(clippy::should_implement_trait)]
        #[inline(always)]
        pub fn mul(self, o: Self) -> Self {
            self.map2(o, |a, b| a * b)
        }
        /// An estimate of `1 / √self` per lane, to 12 bits ([`F4::rsqrt`] refines it).
        #[inline(always)]
        pub fn rsqrt_estimate(self) -> Self {
            F4(self.0.map(|v| 1.0 / v.sqrt()))
        }
        /// `√self` per lane, correctly rounded (as `f32::sqrt`).
        #[inline(always)]
        pub fn sqrt(self) -> Self {
            F4(self.0.map(f32::sqrt))
        }
        /// Flips the sign of the lanes whose parameter is 1 (`X` for lane x, …).
        #[inline(always)]
        pub fn flip<const X: u32, const Y: u32, const Z: u32, const W: u32>(self) -> Self {
            let s = |b: u32, v: f32| if b != 0 { -v } else { v };
            F4([s(X, self.0[0]), s(Y, self.0[1]), s(Z, self.0[2]), s(W, self.0[3])])
        }
        /// The sum of the four lanes in every lane.
        #[inline(always)]
        pub fn sum(self) -> Self {
            let a = self.0;
            F4([(a[0] + a[1]) + (a[2] + a[3]); 4])
        }
        /// The lanes of `self` rearranged as selector `M` says ([`super::sel`]).
        #[inline(always)]
        pub fn swizzle<const M: i32>(self) -> Self {
            let lane = |i: i32| self.0[((M >> (2 * i)) & 3) as usize];
            F4([lane(0), lane(1), lane(2), lane(3)])
        }
        /// The bitwise and of the lanes.
        #[inline(always)]
        pub fn and(self, mask: Self) -> Self {
            self.map2(mask, |a, m| f32::from_bits(a.to_bits() & m.to_bits()))
        }
        /// The 4 × 4 transpose: lane `i` of row `j` becomes lane `j` of row `i`.
        #[inline(always)]
        pub fn transpose(rows: [Self; 4]) -> [Self; 4] {
            std::array::from_fn(|i| F4(std::array::from_fn(|j| rows[j].0[i])))
        }
        /// Lane `x`.
        #[inline(always)]
        pub fn x(self) -> f32 {
            self.0[0]
        }
        /// The bitwise exclusive or of the lanes.
        #[inline(always)]
        pub fn xor(self, o: Self) -> Self {
            self.map2(o, |a, b| f32::from_bits(a.to_bits() ^ b.to_bits()))
        }
    }
}

pub use lanes::F4;

impl PartialEq for F4 {
    /// Lane by lane, as `f32`s.
    fn eq(&self, other: &Self) -> bool {
        self.to_array() == other.to_array()
    }
}

/// The selector of [`F4::swizzle`] (`_MM_SHUFFLE(w, z, y, x)`): lane x of the result is
/// lane `x` of the source, and so on.
pub const fn sel(x: i32, y: i32, z: i32, w: i32) -> i32 {
    x | (y << 2) | (z << 4) | (w << 6)
}

/// How the lane arithmetic forms `a · b + c` and its kin: [`Plain`] as a multiply and an
/// add, [`Fused`] as one fused multiply-add (rounded once). The job's passes are generic
/// over it and compiled once for each.
pub trait Fma: Copy {
    /// `a · b + c`.
    fn mul_add(self, a: F4, b: F4, c: F4) -> F4;
    /// `a · b − c`.
    fn mul_sub(self, a: F4, b: F4, c: F4) -> F4;
    /// `c − a · b`.
    fn neg_mul_add(self, a: F4, b: F4, c: F4) -> F4;
}

/// A multiply, then an add (every target).
#[derive(Clone, Copy, Debug)]
pub struct Plain;

impl Fma for Plain {
    #[inline(always)]
    fn mul_add(self, a: F4, b: F4, c: F4) -> F4 {
        a.mul(b).add(c)
    }
    #[inline(always)]
    fn mul_sub(self, a: F4, b: F4, c: F4) -> F4 {
        a.mul(b).sub(c)
    }
    #[inline(always)]
    fn neg_mul_add(self, a: F4, b: F4, c: F4) -> F4 {
        c.sub(a.mul(b))
    }
}

#[cfg(target_arch = "x86_64")]
pub use lanes::Fused;

impl F4 {
    /// A quaternion, `(x, y, z, w)` (one load).
    #[inline(always)]
    pub fn quat(q: &Quat) -> Self {
        F4::load4(&q.as_ref().coords.data.0[0])
    }

    /// A vector, `(x, y, z, 0)`.
    #[inline(always)]
    pub fn vec3(v: &Vec3) -> Self {
        F4::load3(&v.data.0[0])
    }

    /// Back to a quaternion (taken as unit: the job normalizes where it needs to).
    #[inline(always)]
    pub fn to_quat(self) -> Quat {
        let [x, y, z, w] = self.to_array();
        Quat::new_unchecked(nalgebra::Quaternion::new(w, x, y, z))
    }

    /// Back to a vector (lane `w` dropped).
    #[inline(always)]
    pub fn to_vec3(self) -> Vec3 {
        let [x, y, z, _] = self.to_array();
        Vec3::new(x, y, z)
    }

    /// Writes this quaternion over `q` (one store; taken as unit, as [`F4::to_quat`]).
    #[inline(always)]
    pub fn store_quat(self, q: &mut Quat) {
        self.store4(&mut q.as_mut_unchecked().coords.data.0[0]);
    }

    /// Writes lanes x, y, z over `v`.
    #[inline(always)]
    pub fn store_vec3(self, v: &mut Vec3) {
        self.store3(&mut v.data.0[0]);
    }

    /// `Transform::inverse` of `(translation, rotation, scale)` applied to point `x`:
    /// `R⁻¹ (S⁻¹ x) + S⁻¹ R⁻¹ (−t)`, term for term.
    #[inline(always)]
    pub fn inverse_point<M: Fma>(translation: F4, rotation: F4, scale: F4, x: F4, m: M) -> F4 {
        let (r, s) = (rotation.conj(), scale.recip_or_zero(crate::EPSILON));
        m.mul_add(s, r.rotate(F4::splat(0.0).sub(translation), m), r.rotate(s.mul(x), m))
    }

    /// The Hamilton product `self · o` of two quaternions.
    #[inline(always)]
    pub fn qmul<M: Fma>(self, o: Self, m: M) -> Self {
        // a · b = a.x · K_x + a.y · K_y + a.z · K_z + a.w · b (`right_terms`), in two
        // independent halves, then their sum: the model rotations of a chain are a
        // chain of these products, so their latency (three steps, not four) is the
        // chain's.
        let [kx, ky, kz, _] = right_terms(o);
        let wx = m.mul_add(self.swizzle::<{ sel(0, 0, 0, 0) }>(), kx, self.swizzle::<{ sel(3, 3, 3, 3) }>().mul(o));
        let yz = m.mul_add(self.swizzle::<{ sel(2, 2, 2, 2) }>(), kz, self.swizzle::<{ sel(1, 1, 1, 1) }>().mul(ky));
        wx.add(yz)
    }

    /// The conjugate (the inverse of a unit quaternion).
    #[inline(always)]
    pub fn conj(self) -> Self {
        self.flip::<1, 1, 1, 0>()
    }

    /// The four-lane dot product, in every lane.
    #[inline(always)]
    pub fn dot(self, o: Self) -> Self {
        self.mul(o).sum()
    }

    /// `1 / √self` per lane, to about 2e-7 relative: the estimate (12 bits) and one Newton
    /// step, `y · (1.5 − 0.5 · x · y²)`. A square root and a division cost about ten
    /// times as much on the divider, and the job normalizes a quaternion per joint.
    #[inline(always)]
    pub fn rsqrt<M: Fma>(self, m: M) -> Self {
        let y = self.rsqrt_estimate();
        y.mul(m.neg_mul_add(self.mul(F4::splat(0.5)), y.mul(y), F4::splat(1.5)))
    }

    /// The cross product of two vectors (lane `w` of the result is 0 when both are 0).
    #[inline(always)]
    pub fn cross<M: Fma>(self, o: Self, m: M) -> Self {
        let b = self.swizzle::<{ sel(2, 0, 1, 3) }>().mul(o.swizzle::<{ sel(1, 2, 0, 3) }>());
        m.mul_sub(self.swizzle::<{ sel(1, 2, 0, 3) }>(), o.swizzle::<{ sel(2, 0, 1, 3) }>(), b)
    }

    /// `base + w·t + u × t` with `t = 2 u × v`, `u` and `w` the vector and scalar parts of
    /// unit quaternion `self`: `base` plus `self` applied to `v` minus `v` (nalgebra's
    /// formula for the rotation, `v + w·t + u × t`).
    #[inline(always)]
    fn rotate_onto<M: Fma>(self, v: Self, base: Self, m: M) -> Self {
        // `cross` leaves lane w at 0 whatever the w lanes hold (it subtracts w · w from
        // itself), so the quaternion serves as u as it is.
        let t = self.cross(v, m);
        let t = t.add(t);
        let r = m.mul_add(self.swizzle::<{ sel(3, 3, 3, 3) }>(), t, base);
        // + u × t, as two fused steps.
        let r = m.mul_add(self.swizzle::<{ sel(1, 2, 0, 3) }>(), t.swizzle::<{ sel(2, 0, 1, 3) }>(), r);
        m.neg_mul_add(self.swizzle::<{ sel(2, 0, 1, 3) }>(), t.swizzle::<{ sel(1, 2, 0, 3) }>(), r)
    }

    /// Unit quaternion `self` applied to vector `v`.
    #[inline(always)]
    pub fn rotate<M: Fma>(self, v: Self, m: M) -> Self {
        self.rotate_onto(v, v, m)
    }

    /// Unit quaternion `self` applied to vector `v`, plus `offset`. The offset is added
    /// last: along a chain of joints it is the parent's position, the one input of this
    /// that waits on the joint before.
    #[inline(always)]
    pub fn rotate_add<M: Fma>(self, v: Self, offset: Self, m: M) -> Self {
        self.rotate_onto(v, v, m).add(offset)
    }

    /// `nlerp(a, b, t)` of two unit quaternions: the shorter way, normalized; `a` when
    /// the blend is degenerate (`anim_math::quat::nlerp`).
    #[inline(always)]
    pub fn nlerp<M: Fma>(a: Self, b: Self, t: f32, m: M) -> Self {
        let d = a.dot(b);
        // b's sign flipped where a · b < 0: xor with the sign bit of the dot product.
        let b = b.xor(d.and(F4::splat(-0.0)));
        let v = m.mul_add(b.sub(a), F4::splat(t), a);
        let n2 = v.dot(v);
        if n2.x() < crate::EPSILON * crate::EPSILON { a } else { v.mul(n2.rsqrt(m)) }
    }
}

/// The four terms `[K_x, K_y, K_z, K_w]` of products `v · b` with right operand `b`:
/// `v · b = v.x · K_x + v.y · K_y + v.z · K_z + v.w · K_w` with
/// `K_x = (bw, -bz, by, -bx)`, `K_y = (bz, bw, -bx, -by)`, `K_z = (-by, bx, bw, -bz)`, `K_w = b`.
#[inline(always)]
fn right_terms(b: F4) -> [F4; 4] {
    [
        b.swizzle::<{ sel(3, 2, 1, 0) }>().flip::<0, 1, 0, 1>(),
        b.swizzle::<{ sel(2, 3, 0, 1) }>().flip::<0, 0, 1, 1>(),
        b.swizzle::<{ sel(1, 0, 3, 2) }>().flip::<1, 0, 0, 1>(),
        b,
    ]
}

/// A constant quaternion prepared as one operand of Hamilton products: the product is
/// linear in the other operand `v`, `v.w · K_w + v.x · K_x + v.y · K_y + v.z · K_z`, with
/// the four `K` (signed permutations of the constant) decided once. A product with a
/// prepared constant is then four broadcasts, four multiplies and three adds, against
/// [`F4::qmul`]'s seven shuffles, three sign flips, four multiplies and three adds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QConst {
    k: [F4; 4],
}

impl QConst {
    /// `c` as the right operand: [`QConst::apply`]`(v)` is `v · c`.
    pub fn right(c: &Quat) -> Self {
        QConst { k: right_terms(F4::quat(c)) }
    }

    /// `c` as the left operand: [`QConst::apply`]`(v)` is `c · v`.
    pub fn left(c: &Quat) -> Self {
        let a = F4::quat(c);
        // a · v = v.w · a + v.x · (aw, az, -ay, -ax) + v.y · (-az, aw, ax, -ay)
        //       + v.z · (ay, -ax, aw, -az)
        QConst {
            k: [
                a.swizzle::<{ sel(3, 2, 1, 0) }>().flip::<0, 0, 1, 1>(),
                a.swizzle::<{ sel(2, 3, 0, 1) }>().flip::<1, 0, 0, 1>(),
                a.swizzle::<{ sel(1, 0, 3, 2) }>().flip::<0, 1, 0, 1>(),
                a,
            ],
        }
    }

    /// The product with `v` (`v · c` or `c · v`, as prepared).
    #[inline(always)]
    pub fn apply<M: Fma>(&self, v: F4, m: M) -> F4 {
        let [kx, ky, kz, kw] = self.k;
        let r = v.swizzle::<{ sel(3, 3, 3, 3) }>().mul(kw);
        let r = m.mul_add(v.swizzle::<{ sel(0, 0, 0, 0) }>(), kx, r);
        let r = m.mul_add(v.swizzle::<{ sel(1, 1, 1, 1) }>(), ky, r);
        m.mul_add(v.swizzle::<{ sel(2, 2, 2, 2) }>(), kz, r)
    }
}

/// Four [`QConst`]s side by side, for four joints at once in structure-of-arrays form:
/// `k[t][c]` holds, in lane `j`, component `c` of the `t`-th term of the `j`-th constant.
/// A product of four quaternions (one per lane, as four component registers) with their
/// four constants is then sixteen multiply-adds and no shuffle.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QConst4 {
    k: [[F4; 4]; 4],
}

impl QConst4 {
    /// The four constants, lane `j` from `c[j]`.
    pub fn new(c: [&QConst; 4]) -> Self {
        let terms = c.map(|q| q.k.map(F4::to_array));
        QConst4 {
            k: std::array::from_fn(|t| {
                std::array::from_fn(|comp| {
                    F4::new(terms[0][t][comp], terms[1][t][comp], terms[2][t][comp], terms[3][t][comp])
                })
            }),
        }
    }

    /// The four products, `v` and the result as component registers `[x, y, z, w]`.
    #[inline(always)]
    pub fn apply<M: Fma>(&self, v: [F4; 4], m: M) -> [F4; 4] {
        let [kx, ky, kz, kw] = &self.k;
        std::array::from_fn(|c| {
            let r = v[3].mul(kw[c]);
            let r = m.mul_add(v[0], kx[c], r);
            let r = m.mul_add(v[1], ky[c], r);
            m.mul_add(v[2], kz[c], r)
        })
    }
}

/// Four quaternions as component registers `[x, y, z, w]`, each divided by its norm
/// ([`F4::rsqrt`]).
#[inline(always)]
pub fn normalize4<M: Fma>(q: [F4; 4], m: M) -> [F4; 4] {
    let d = m.mul_add(q[3], q[3], m.mul_add(q[2], q[2], m.mul_add(q[1], q[1], q[0].mul(q[0]))));
    let r = d.rsqrt(m);
    q.map(|c| c.mul(r))
}

/// A transform as anim-retarget's job keeps its model-space ones: translation, rotation
/// and scale each in a 4-lane register ([`F4`], `(x, y, z, 0)` and `(x, y, z, w)`), stored
/// and loaded whole. A `Transform` (40 bytes, its rotation at offset 12) was copied in
/// pieces the compiler chose, which did not match the pieces it was stored in; every such
/// load then waited for the stores to retire (a store-forwarding stall), and those stalls
/// were most of that job's time before it kept its transforms so.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(16))]
pub struct Slot {
    /// Translation, `(x, y, z, 0)`.
    pub translation: F4,
    /// Rotation, `(x, y, z, w)`.
    pub rotation: F4,
    /// Scale, `(x, y, z, 0)`.
    pub scale: F4,
}

impl Slot {
    /// The identity transform.
    #[inline(always)]
    pub fn identity() -> Self {
        Slot { translation: F4::splat(0.0), rotation: F4::new(0.0, 0.0, 0.0, 1.0), scale: F4::new(1.0, 1.0, 1.0, 0.0) }
    }

    /// Back to a [`Transform`].
    #[inline(always)]
    pub fn get(&self) -> Transform {
        Transform {
            translation: self.translation.to_vec3(),
            rotation: self.rotation.to_quat(),
            scale: self.scale.to_vec3(),
        }
    }

    /// [`Transform::combine`] of this (a parent's model transform) with a child's model
    /// rotation already known (`rotation`) and its local translation and scale.
    #[inline(always)]
    pub fn place<M: Fma>(&self, translation: F4, rotation: F4, scale: F4, m: M) -> Slot {
        Slot {
            translation: self.rotation.rotate_add(self.scale.mul(translation), self.translation, m),
            rotation,
            scale: self.scale.mul(scale),
        }
    }

    /// [`Transform::combine`] of this with a child's local transform `(t, r, s)`.
    #[inline(always)]
    pub fn combine<M: Fma>(&self, translation: F4, rotation: F4, scale: F4, m: M) -> Slot {
        self.place(translation, self.rotation.qmul(rotation, m), scale, m)
    }

    /// [`Slot::combine`] with a local `Transform`.
    #[inline(always)]
    pub fn combine_local<M: Fma>(&self, local: &Transform, m: M) -> Slot {
        self.combine(F4::vec3(&local.translation), F4::quat(&local.rotation), F4::vec3(&local.scale), m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quat;

    fn close_q(a: Quat, b: &Quat) -> bool {
        (a.as_ref().coords - b.as_ref().coords).norm() <= 2e-6
    }

    fn samples() -> Vec<Quat> {
        let axes = [Vec3::new(0.3, -0.8, 0.5), Vec3::new(-1.0, 0.2, 0.1), Vec3::new(0.0, 0.0, 1.0)];
        let mut out = Vec::new();
        for (i, axis) in axes.iter().enumerate() {
            for k in 0..7 {
                let angle = -3.0 + k as f32 * 1.01 + i as f32 * 0.3;
                out.push(Quat::from_axis_angle(&nalgebra::Unit::new_normalize(*axis), angle));
            }
        }
        out
    }

    /// Every operation against nalgebra's: products (all sign patterns of the Hamilton
    /// product's terms), conjugates, rotations of vectors, normalization, nlerp both
    /// ways round the hemisphere, and the round trips through the lanes.
    fn lanes_match_nalgebra<M: Fma>(m: M) {
        let qs = samples();
        let vs = [Vec3::new(1.0, 2.0, -3.0), Vec3::new(-0.25, 0.0, 4.5), Vec3::new(0.0, -7.0, 0.5)];
        for a in &qs {
            assert_eq!(F4::quat(a).to_quat(), *a);
            assert!(close_q(F4::quat(a).conj().to_quat(), &a.inverse()));
            for b in &qs {
                assert!(close_q(F4::quat(a).qmul(F4::quat(b), m).to_quat(), &(a * b)), "{a:?} · {b:?}");
                for t in [0.0, 0.3, 1.0] {
                    let want = quat::nlerp(a, b, t);
                    assert!(close_q(F4::nlerp(F4::quat(a), F4::quat(b), t, m).to_quat(), &want), "nlerp {t}");
                }
            }
            for v in &vs {
                assert_eq!(F4::vec3(v).to_vec3(), *v);
                let got = F4::quat(a).rotate(F4::vec3(v), m).to_vec3();
                assert!((got - a * v).norm() <= 4e-6 * v.norm(), "{got:?} against {:?}", a * v);
            }
            let scaled = F4::quat(a).mul(F4::splat(3.5));
            let scaled = scaled.mul(scaled.dot(scaled).rsqrt(m)).to_quat();
            assert!(close_q(scaled, a));
        }
        let (a, b) = (F4::vec3(&vs[0]), F4::vec3(&vs[1]));
        assert!((a.cross(b, m).to_vec3() - vs[0].cross(&vs[1])).norm() <= 1e-5);
        assert_eq!(a.cross(b, m).to_array()[3], 0.0);
        let t = crate::Transform::new(vs[0], qs[3], Vec3::new(2.0, 0.0, -0.5));
        let x =
            F4::inverse_point(F4::vec3(&t.translation), F4::quat(&t.rotation), F4::vec3(&t.scale), F4::vec3(&vs[1]), m);
        assert!((x.to_vec3() - t.inverse().transform_point(&vs[1])).norm() <= 1e-5);
        let mut q = qs[0];
        F4::quat(&qs[5]).store_quat(&mut q);
        assert_eq!(q, qs[5]);
        let mut v = vs[0];
        F4::vec3(&vs[2]).store_vec3(&mut v);
        assert_eq!(v, vs[2]);
        for c in &qs {
            for v in &qs {
                assert!(close_q(QConst::right(c).apply(F4::quat(v), m).to_quat(), &(v * c)));
                assert!(close_q(QConst::left(c).apply(F4::quat(v), m).to_quat(), &(c * v)));
            }
        }
        // Four at a time: transposed in, four constants, normalized, transposed out.
        for w in qs.windows(4) {
            let (cs, vs4) = ([&w[0], &w[1], &w[2], &w[3]], [w[3], w[1], w[0], w[2]]);
            let (right, left) = (cs.map(QConst::right), cs.map(QConst::left));
            let v = F4::transpose(vs4.map(|q| F4::quat(&q).mul(F4::splat(1.5))));
            let r =
                F4::transpose(normalize4(QConst4::new([&right[0], &right[1], &right[2], &right[3]]).apply(v, m), m));
            let l = F4::transpose(normalize4(QConst4::new([&left[0], &left[1], &left[2], &left[3]]).apply(v, m), m));
            for j in 0..4 {
                assert!(close_q(r[j].to_quat(), &(vs4[j] * cs[j])), "lane {j}");
                assert!(close_q(l[j].to_quat(), &(cs[j] * vs4[j])), "lane {j}");
            }
        }
        let signs = F4::new(1.0, -2.0, 3.0, -0.5).and(F4::splat(-0.0));
        assert_eq!(F4::splat(2.0).xor(signs).to_array(), [2.0, -2.0, 2.0, -2.0]);
        assert_eq!(F4::new(1.0, 2.0, 3.0, 4.0).sum().to_array(), [10.0; 4]);
        assert_eq!(F4::new(4.0, 2.0, 0.0, 1e-6).sqrt().to_array(), [2.0, 2f32.sqrt(), 0.0, 1e-6f32.sqrt()]);
    }

    /// [`lanes_match_nalgebra`] with a multiply and an add.
    #[test]
    fn plain_lanes_match_nalgebra() {
        lanes_match_nalgebra(Plain);
    }

    /// [`lanes_match_nalgebra`] with fused multiply-adds (AVX2 and FMA; the kernel policy
    /// of `anim_testkit::kernels`).
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn fused_lanes_match_nalgebra() {
        if anim_testkit::kernels::require("avx2") {
            lanes_match_nalgebra(Fused::detect().expect("the CPU has AVX2 and FMA (checked)"));
        }
    }
}
