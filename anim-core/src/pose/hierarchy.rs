//! Local-to-model: the hierarchy pass that turns local joint transforms into model-space
//! matrices, for a whole skeleton or for one subtree (partial updates after IK).
//!
//! # Design
//! Joints are processed in skeleton order (parents before children), [`LANES`] at a time:
//!
//! 1. the local transforms of four joints are converted to 3×4 affine matrices at once,
//!    structure-of-arrays (one SIMD register holds the same matrix element of four
//!    joints), which is where most of the arithmetic is (the quaternion-to-rotation
//!    products and the scale);
//! 2. each joint's matrix is then multiplied by its parent's model matrix, one joint at a
//!    time, with the parent's four columns in four SIMD registers and the local elements
//!    broadcast: `col_k = P·c0·L0k + P·c1·L1k + P·c2·L2k (+ P·c3 for k = 3)`. The
//!    projective row is never computed: it comes out `0 0 0 1` because the parent's is.
//!
//! A joint's parent may sit in the same group of four (a chain), so step 2 is sequential;
//! the "siblings at the same depth" layout would make step 2 SIMD too, but needs the
//! joints reordered by depth, which every other pass (sampling, palettes, masks) would
//! have to follow. Step 1 carries the bulk of the work and is already four-wide.
//!
//! On x86-64 the kernel uses SSE2 (always present) and, when the CPU has AVX2 and FMA
//! (checked at run time, cached), the same kernel compiled for them with fused
//! multiply-adds. Other targets use [`local_to_model_reference`], the scalar loop that
//! the tests compare every path with.
//!
//! # Partial updates
//! [`Skeleton::subtree`] is contiguous (the skeleton is sorted depth-first, parents
//! first: see [`Skeleton`]), so updating a subtree is the same loop over a range:
//! [`local_to_model_from`] recomputes joint `from` and everything below it, trusting the
//! model matrix of `from`'s parent that `out` already holds, and leaves every other
//! joint's matrix as it was. [`local_to_model_from_to`] also stops after joint `to`:
//! enough for an IK pass that needs one chain's end (every ancestor of `to` inside the
//! subtree comes before it).
//!
//! ```
//! use anim_core::pose::{hierarchy, JointDesc, Skeleton};
//! use anim_core::pose::soa::SoaPose;
//! use anim_math::{Mat4, Quat, Transform, Vec3};
//!
//! // root ─ arm ─ hand, and a leg beside the arm.
//! let up = Transform::from_translation(Vec3::new(0.0, 1.0, 0.0));
//! let skeleton = Skeleton::new(vec![
//!     JointDesc::new("root", None, up),
//!     JointDesc::new("arm", Some(0), up),
//!     JointDesc::new("hand", Some(1), up),
//!     JointDesc::new("leg", Some(0), up),
//! ])
//! .unwrap();
//! let mut locals = SoaPose::from_pose(skeleton.rest_pose());
//! let mut model = vec![Mat4::identity(); 4];
//! hierarchy::local_to_model(&skeleton, &locals, &mut model).unwrap();
//! assert_eq!(model[2].column(3).y, 3.0);
//!
//! // Bend the arm a quarter turn about z and update its subtree only.
//! let arm = skeleton.find("arm").unwrap();
//! let bent = Transform { rotation: Quat::from_axis_angle(&Vec3::z_axis(), std::f32::consts::FRAC_PI_2), ..up };
//! locals.set(arm, &bent);
//! let leg_before = model[3];
//! hierarchy::local_to_model_from(&skeleton, &locals, arm, &mut model).unwrap();
//! assert!((model[2].column(3).x - -1.0).abs() < 1e-6); // the hand swung to -x
//! assert_eq!(model[3], leg_before); // outside the subtree: untouched
//! ```

use super::locals::{Pose, PoseError};
use super::skeleton::Skeleton;
use super::soa::{LANES, SoaPose, SoaTransform};
use crate::length::LengthMismatch;
use anim_math::{Mat4, Transform, affine_mul};
use thiserror::Error;

/// Why a partial local-to-model update was refused.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum HierarchyError {
    /// The pose or the output has the wrong length.
    #[error(transparent)]
    Pose(#[from] PoseError),
    /// The joint a partial update starts from (or stops at) does not exist.
    #[error("{what} joint {joint} is out of range: the skeleton has {count} joints")]
    JointOutOfRange {
        /// "from" or "to".
        what: &'static str,
        /// The joint asked for.
        joint: usize,
        /// The skeleton's joint count.
        count: usize,
    },
}

/// The hierarchy operations of a [`Pose`]: model-space transforms and matrices.
impl Pose {
    /// Model-space (skeleton-root-relative) transform of one joint, found by combining
    /// up the parent chain. Returns `None` for a joint out of range or a pose that does not
    /// match the skeleton. For all joints use [`Pose::globals`], which is one pass.
    pub fn global(&self, skeleton: &Skeleton, joint: usize) -> Option<Transform> {
        if self.check_skeleton(skeleton.id(), skeleton.len()).is_err() || joint >= self.len() {
            return None;
        }
        let mut result = self.locals()[joint];
        let mut p = skeleton.parent(joint);
        while let Some(i) = p {
            result = self.locals()[i].combine(&result);
            p = skeleton.parent(i);
        }
        Some(result)
    }

    /// Model-space transforms of every joint in one forward pass (parents come first).
    ///
    /// # Errors
    /// The pose or `out` length differs from the skeleton's joint count.
    pub fn globals(&self, skeleton: &Skeleton, out: &mut [Transform]) -> Result<(), PoseError> {
        self.check_hierarchy(skeleton, out.len(), "global transforms")?;
        for (i, parent) in skeleton.parents().iter().enumerate() {
            out[i] = match parent {
                Some(p) => out[*p].combine(&self.locals()[i]),
                None => self.locals()[i],
            };
        }
        Ok(())
    }

    /// Model-space matrices of every joint in one forward pass: the book's matrix palette
    /// (`GetMatrixPalette`). Unlike [`Pose::globals`] this is exact with non-uniform scale.
    ///
    /// # Errors
    /// The pose or `out` length differs from the skeleton's joint count.
    pub fn local_to_model(&self, skeleton: &Skeleton, out: &mut [Mat4]) -> Result<(), PoseError> {
        self.check_hierarchy(skeleton, out.len(), "model matrices")?;
        // Regrouped four joints at a time into the SIMD kernel of this module.
        run(skeleton.parents(), self.locals(), 0, skeleton.len(), out);
        Ok(())
    }

    /// Recomputes the model matrices of joint `from` and its subtree only, as
    /// [`local_to_model_from`] does for a [`SoaPose`]:
    /// `from`'s parent's matrix in `out` is trusted, joints outside the subtree are left
    /// as they are. For IK passes that change a few joints.
    ///
    /// # Errors
    /// Wrong lengths, or `from` is not a joint.
    pub fn local_to_model_from(
        &self,
        skeleton: &Skeleton,
        from: usize,
        out: &mut [Mat4],
    ) -> Result<(), HierarchyError> {
        self.check_hierarchy(skeleton, out.len(), "model matrices")?;
        if from >= skeleton.len() {
            return Err(HierarchyError::JointOutOfRange { what: "from", joint: from, count: skeleton.len() });
        }
        let range = skeleton.subtree(from);
        run(skeleton.parents(), self.locals(), range.start, range.end, out);
        Ok(())
    }

    fn check_hierarchy(&self, skeleton: &Skeleton, out: usize, what: &'static str) -> Result<(), PoseError> {
        self.check_skeleton(skeleton.id(), skeleton.len())?;
        Ok(LengthMismatch::check(what, out, skeleton.len())?)
    }
}

/// Local transforms the kernel reads four at a time: a [`SoaPose`] as it is, an AoS
/// slice regrouped on the fly.
pub(crate) trait Groups {
    /// Group `g` (joints `g·LANES ..`); lanes past the end hold anything finite.
    fn group(&self, g: usize) -> SoaTransform;
}

impl Groups for SoaPose {
    #[inline(always)]
    fn group(&self, g: usize) -> SoaTransform {
        self.groups()[g]
    }
}

impl Groups for [Transform] {
    #[inline(always)]
    fn group(&self, g: usize) -> SoaTransform {
        let mut t = SoaTransform::IDENTITY;
        let base = g * LANES;
        for (lane, joint) in self[base..self.len().min(base + LANES)].iter().enumerate() {
            t.set(lane, joint);
        }
        t
    }
}

/// Model-space matrices of every joint from a structure-of-arrays local pose (see the
/// module docs for how): the same result as [`Pose::local_to_model`] on the
/// equivalent pose, to float rounding.
///
/// # Errors
/// The pose or `out` length differs from the skeleton's joint count.
pub fn local_to_model(skeleton: &Skeleton, locals: &SoaPose, out: &mut [Mat4]) -> Result<(), PoseError> {
    check(skeleton, locals.len(), out.len())?;
    run(skeleton.parents(), locals, 0, skeleton.len(), out);
    Ok(())
}

/// Recomputes the model matrices of joint `from` and its whole subtree from `locals`,
/// reading `from`'s parent's model matrix from `out` (it must be up to date) and leaving
/// every joint outside the subtree as it is in `out`.
///
/// # Errors
/// Wrong lengths, or `from` is not a joint.
pub fn local_to_model_from(
    skeleton: &Skeleton,
    locals: &SoaPose,
    from: usize,
    out: &mut [Mat4],
) -> Result<(), HierarchyError> {
    let range = subtree_range(skeleton, locals.len(), from, out.len())?;
    run(skeleton.parents(), locals, range.start, range.end, out);
    Ok(())
}

/// As [`local_to_model_from`], but stops after joint `to`: only the joints of `from`'s
/// subtree with an index up to `to` are written. When `to` is in the subtree, its model
/// matrix and those of all its ancestors in the subtree are then up to date; when `to`
/// comes before `from`, nothing is written.
///
/// # Errors
/// Wrong lengths, or `from` or `to` is not a joint.
pub fn local_to_model_from_to(
    skeleton: &Skeleton,
    locals: &SoaPose,
    from: usize,
    to: usize,
    out: &mut [Mat4],
) -> Result<(), HierarchyError> {
    let range = subtree_range(skeleton, locals.len(), from, out.len())?;
    if to >= skeleton.len() {
        return Err(HierarchyError::JointOutOfRange { what: "to", joint: to, count: skeleton.len() });
    }
    run(skeleton.parents(), locals, range.start, range.end.min(to + 1), out);
    Ok(())
}

/// The scalar reference: one joint at a time, `Transform::to_matrix` then an affine
/// product with the parent's matrix. Every SIMD path is tested against it.
///
/// # Errors
/// The pose or `out` length differs from the skeleton's joint count.
pub fn local_to_model_reference(skeleton: &Skeleton, locals: &SoaPose, out: &mut [Mat4]) -> Result<(), PoseError> {
    check(skeleton, locals.len(), out.len())?;
    scalar(skeleton.parents(), locals, 0, skeleton.len(), out);
    Ok(())
}

fn check(skeleton: &Skeleton, locals: usize, out: usize) -> Result<(), PoseError> {
    LengthMismatch::check("pose", locals, skeleton.len())?;
    Ok(LengthMismatch::check("model matrices", out, skeleton.len())?)
}

fn subtree_range(
    skeleton: &Skeleton,
    locals: usize,
    from: usize,
    out: usize,
) -> Result<std::ops::Range<usize>, HierarchyError> {
    check(skeleton, locals, out)?;
    if from >= skeleton.len() {
        return Err(HierarchyError::JointOutOfRange { what: "from", joint: from, count: skeleton.len() });
    }
    Ok(skeleton.subtree(from))
}

/// Joints `begin..end` of a parents-first hierarchy; parents outside the range are read
/// from `out`. The caller has checked `end <= parents.len() == out.len()` and that the
/// source holds `parents.len()` joints.
#[inline]
pub(crate) fn run<G: Groups + ?Sized>(parents: &[Option<usize>], src: &G, begin: usize, end: usize, out: &mut [Mat4]) {
    debug_assert!(end <= parents.len() && parents.len() == out.len());
    #[cfg(target_arch = "x86_64")]
    {
        if fma_available() {
            // SAFETY: the CPU has AVX2 and FMA (checked just above).
            unsafe { x86::run_fma(parents, src, begin, end, out) };
        } else {
            x86::run_sse(parents, src, begin, end, out);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    scalar(parents, src, begin, end, out);
}

/// True when the AVX2 + FMA kernel can run (checked once, then cached by the standard library).
#[cfg(target_arch = "x86_64")]
#[inline]
fn fma_available() -> bool {
    std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
}

/// The scalar loop over `begin..end` (see [`local_to_model_reference`]).
pub(crate) fn scalar<G: Groups + ?Sized>(
    parents: &[Option<usize>],
    src: &G,
    begin: usize,
    end: usize,
    out: &mut [Mat4],
) {
    for i in begin..end {
        let local = src.group(i / LANES).get(i % LANES).to_matrix();
        out[i] = match parents[i] {
            Some(p) => affine_mul(&out[p], &local),
            None => local,
        };
    }
}

/// The 3×4 affine matrices of a group's four joints: `m[col·3 + row][lane]`.
#[cfg(target_arch = "x86_64")]
type SoaAffine = [[f32; LANES]; 12];

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{Groups, LANES, SoaAffine, SoaTransform};
    use anim_math::Mat4;
    use std::arch::x86_64::*;

    /// `a·b + c`, fused or not.
    #[inline(always)]
    fn madd<const FMA: bool>(a: __m128, b: __m128, c: __m128) -> __m128 {
        if FMA {
            // SAFETY: FMA is only true inside `run_fma`, whose caller checked the CPU.
            unsafe { _mm_fmadd_ps(a, b, c) }
        } else {
            // SAFETY: SSE is part of x86-64.
            unsafe { _mm_add_ps(_mm_mul_ps(a, b), c) }
        }
    }

    /// Four joints' transforms to affine matrices, lane-parallel:
    /// `M = [R(q)·diag(s) | t]` with `R(q)` the rotation of the unit quaternion `q`.
    #[inline(always)]
    fn affine(t: &SoaTransform, m: &mut SoaAffine) {
        let ld = |a: &[f32; LANES]| -> __m128 {
            // SAFETY: a reads 4 f32 from a `[f32; 4]`.
            unsafe { _mm_loadu_ps(a.as_ptr()) }
        };
        let st = |a: &mut [f32; LANES], v: __m128| {
            // SAFETY: writes 4 f32 into a `[f32; 4]`.
            unsafe { _mm_storeu_ps(a.as_mut_ptr(), v) }
        };
        // SAFETY: SSE and SSE2 are part of x86-64; only register arithmetic here.
        unsafe {
            let (x, y, z, w) = (ld(&t.rotation[0]), ld(&t.rotation[1]), ld(&t.rotation[2]), ld(&t.rotation[3]));
            let two = _mm_set1_ps(2.0);
            let one = _mm_set1_ps(1.0);
            let (x2, y2, z2) = (_mm_mul_ps(x, two), _mm_mul_ps(y, two), _mm_mul_ps(z, two));
            let (xx, yy, zz) = (_mm_mul_ps(x, x2), _mm_mul_ps(y, y2), _mm_mul_ps(z, z2));
            let (xy, xz, yz) = (_mm_mul_ps(x, y2), _mm_mul_ps(x, z2), _mm_mul_ps(y, z2));
            let (wx, wy, wz) = (_mm_mul_ps(w, x2), _mm_mul_ps(w, y2), _mm_mul_ps(w, z2));
            let (sx, sy, sz) = (ld(&t.scale[0]), ld(&t.scale[1]), ld(&t.scale[2]));
            // Column 0 (x axis) times sx, column 1 times sy, column 2 times sz.
            st(&mut m[0], _mm_mul_ps(_mm_sub_ps(one, _mm_add_ps(yy, zz)), sx));
            st(&mut m[1], _mm_mul_ps(_mm_add_ps(xy, wz), sx));
            st(&mut m[2], _mm_mul_ps(_mm_sub_ps(xz, wy), sx));
            st(&mut m[3], _mm_mul_ps(_mm_sub_ps(xy, wz), sy));
            st(&mut m[4], _mm_mul_ps(_mm_sub_ps(one, _mm_add_ps(xx, zz)), sy));
            st(&mut m[5], _mm_mul_ps(_mm_add_ps(yz, wx), sy));
            st(&mut m[6], _mm_mul_ps(_mm_add_ps(xz, wy), sz));
            st(&mut m[7], _mm_mul_ps(_mm_sub_ps(yz, wx), sz));
            st(&mut m[8], _mm_mul_ps(_mm_sub_ps(one, _mm_add_ps(xx, yy)), sz));
            st(&mut m[9], ld(&t.translation[0]));
            st(&mut m[10], ld(&t.translation[1]));
            st(&mut m[11], ld(&t.translation[2]));
        }
    }

    #[inline(always)]
    fn kernel<G: Groups + ?Sized, const FMA: bool>(
        parents: &[Option<usize>],
        src: &G,
        begin: usize,
        end: usize,
        out: &mut [Mat4],
    ) {
        assert!(end <= parents.len() && parents.len() == out.len(), "range checked by every caller");
        let mut m: SoaAffine = [[0.0; LANES]; 12];
        let base = out.as_mut_ptr().cast::<f32>();
        // The previous joint's model columns stay in registers: in a chain (spine, limbs)
        // the child then does not wait for its parent's matrix to round-trip through memory.
        // SAFETY: SSE is part of x86-64.
        let zero = unsafe { _mm_setzero_ps() };
        let mut last = [zero; 4];
        let mut last_joint = usize::MAX;
        let mut i = begin;
        while i < end {
            let g = i / LANES;
            affine(&src.group(g), &mut m);
            let group_end = end.min((g + 1) * LANES);
            while i < group_end {
                let l = i % LANES;
                // SAFETY: SSE is part of x86-64.
                let e = |k: usize| unsafe { _mm_set1_ps(m[k][l]) };
                // SAFETY: `i < end <= out.len()`, and a parent index is always smaller than
                // its child's (Skeleton's invariant), so both pointers are inside `out`;
                // a `Mat4` is 16 contiguous f32, column-major.
                unsafe {
                    let o = base.add(i * 16);
                    let cols = match parents[i] {
                        Some(p) => {
                            debug_assert!(p < i);
                            let [p0, p1, p2, p3] = if p == last_joint {
                                last
                            } else {
                                let pm = base.add(p * 16) as *const f32;
                                [
                                    _mm_loadu_ps(pm),
                                    _mm_loadu_ps(pm.add(4)),
                                    _mm_loadu_ps(pm.add(8)),
                                    _mm_loadu_ps(pm.add(12)),
                                ]
                            };
                            let col = |c: usize| {
                                madd::<FMA>(p2, e(3 * c + 2), madd::<FMA>(p1, e(3 * c + 1), _mm_mul_ps(p0, e(3 * c))))
                            };
                            [
                                col(0),
                                col(1),
                                col(2),
                                madd::<FMA>(p2, e(11), madd::<FMA>(p1, e(10), madd::<FMA>(p0, e(9), p3))),
                            ]
                        }
                        None => [
                            _mm_setr_ps(m[0][l], m[1][l], m[2][l], 0.0),
                            _mm_setr_ps(m[3][l], m[4][l], m[5][l], 0.0),
                            _mm_setr_ps(m[6][l], m[7][l], m[8][l], 0.0),
                            _mm_setr_ps(m[9][l], m[10][l], m[11][l], 1.0),
                        ],
                    };
                    for (c, col) in cols.iter().enumerate() {
                        _mm_storeu_ps(o.add(4 * c), *col);
                    }
                    last = cols;
                    last_joint = i;
                }
                i += 1;
            }
        }
    }

    /// The SSE2 kernel (x86-64's baseline).
    pub(super) fn run_sse<G: Groups + ?Sized>(
        parents: &[Option<usize>],
        src: &G,
        begin: usize,
        end: usize,
        out: &mut [Mat4],
    ) {
        kernel::<G, false>(parents, src, begin, end, out);
    }

    /// The same kernel compiled for AVX2 with fused multiply-adds.
    ///
    /// # Safety
    /// The CPU must support AVX2 and FMA.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn run_fma<G: Groups + ?Sized>(
        parents: &[Option<usize>],
        src: &G,
        begin: usize,
        end: usize,
        out: &mut [Mat4],
    ) {
        kernel::<G, true>(parents, src, begin, end, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pose::skeleton::JointDesc;
    use anim_math::{Quat, Vec3};

    /// A skeleton with chains, siblings and two roots, out of source order, and a pose
    /// with rotations, non-uniform scales and translations everywhere.
    fn fixture(n: usize) -> (Skeleton, SoaPose) {
        let joints = (0..n)
            .map(|i| {
                let parent = match i {
                    0 => None,
                    5 => None,
                    _ => Some((i * 7 + 3) % i),
                };
                JointDesc::new(format!("j{i}"), parent, Transform::IDENTITY)
            })
            .collect();
        let skeleton = Skeleton::new(joints).unwrap();
        let locals: Vec<Transform> = (0..n)
            .map(|i| {
                let f = i as f32;
                Transform::new(
                    Vec3::new(0.3 * f, 1.0 - 0.1 * f, 0.05 * f),
                    Quat::from_euler_angles(0.37 * f, -0.21 * f + 0.1, 0.13 * f),
                    Vec3::new(1.0 + 0.01 * f, 0.9, 1.1 - 0.005 * f),
                )
            })
            .collect();
        (skeleton, SoaPose::from_pose(&Pose::from_locals(locals)))
    }

    fn max_diff(a: &[Mat4], b: &[Mat4]) -> f32 {
        a.iter().zip(b).map(|(x, y)| (x - y).abs().max() / (1.0 + y.abs().max())).fold(0.0, f32::max)
    }

    #[test]
    fn every_kernel_matches_the_reference() {
        for n in [1, 3, 4, 5, 13, 26, 80] {
            let (s, locals) = fixture(n);
            let mut reference = vec![Mat4::zeros(); n];
            local_to_model_reference(&s, &locals, &mut reference).unwrap();
            // The reference is the Pose path, which is independent code.
            let mut pose = Pose::identity(n);
            locals.to_pose(&mut pose).unwrap();
            let mut aos = vec![Mat4::zeros(); n];
            for (i, p) in s.parents().iter().enumerate() {
                let l = pose.locals()[i].to_matrix();
                aos[i] = p.map_or(l, |p| aos[p] * l);
            }
            assert!(max_diff(&reference, &aos) < 1e-5);
            let mut got = vec![Mat4::zeros(); n];
            local_to_model(&s, &locals, &mut got).unwrap();
            assert!(max_diff(&got, &reference) < 1e-5, "dispatched n={n}");
            #[cfg(target_arch = "x86_64")]
            {
                let mut sse = vec![Mat4::zeros(); n];
                x86::run_sse(s.parents(), &locals, 0, n, &mut sse);
                assert!(max_diff(&sse, &reference) < 1e-5, "sse n={n}");
                if anim_testkit::kernels::require("avx2") {
                    assert!(fma_available());
                    let mut fma = vec![Mat4::zeros(); n];
                    // SAFETY: checked just above.
                    unsafe { x86::run_fma(s.parents(), &locals, 0, n, &mut fma) };
                    assert!(max_diff(&fma, &reference) < 1e-5, "fma n={n}");
                }
            }
            for m in &got {
                assert_eq!(m.row(3).iter().copied().collect::<Vec<_>>(), [0.0, 0.0, 0.0, 1.0]);
            }
        }
    }

    #[test]
    fn partial_update_equals_full_and_leaves_the_rest() {
        let n = 80;
        let (s, mut locals) = fixture(n);
        let mut model = vec![Mat4::zeros(); n];
        local_to_model(&s, &locals, &mut model).unwrap();
        for from in [0, 1, 6, 17, 40, 79] {
            let sub = s.subtree(from);
            // Change every local inside the subtree only.
            for j in sub.clone() {
                let mut t = locals.get(j).unwrap();
                t.rotation = Quat::from_euler_angles(0.1 * from as f32, 0.2, -0.3) * t.rotation;
                t.translation.x += 0.5;
                locals.set(j, &t);
            }
            let before = model.clone();
            local_to_model_from(&s, &locals, from, &mut model).unwrap();
            let mut full = vec![Mat4::zeros(); n];
            local_to_model(&s, &locals, &mut full).unwrap();
            for j in 0..n {
                if sub.contains(&j) {
                    assert!(max_diff(&model[j..=j], &full[j..=j]) < 1e-6, "from {from}, joint {j}");
                    assert!(max_diff(&model[j..=j], &before[j..=j]) > 1e-4, "from {from}, joint {j} moved");
                } else {
                    assert_eq!(model[j], before[j], "from {from}: joint {j} is outside the subtree");
                }
            }
        }
    }

    #[test]
    fn from_to_stops_after_to_and_gets_its_chain_right() {
        let n = 40;
        let (s, locals) = fixture(n);
        let mut full = vec![Mat4::zeros(); n];
        local_to_model(&s, &locals, &mut full).unwrap();
        let from = 0;
        let to = s.subtree(from).end - 3;
        let mut out = vec![Mat4::zeros(); n];
        local_to_model_from_to(&s, &locals, from, to, &mut out).unwrap();
        assert_eq!(out[..=to], full[..=to]);
        assert!(out[to + 1..].iter().all(|m| *m == Mat4::zeros()));
        // to before from: nothing is written.
        let mut out = vec![Mat4::zeros(); n];
        local_to_model_from_to(&s, &locals, 6, 2, &mut out).unwrap();
        assert!(out.iter().all(|m| *m == Mat4::zeros()));
    }

    #[test]
    fn bad_arguments_are_errors() {
        let (s, locals) = fixture(6);
        let mut out = vec![Mat4::zeros(); 6];
        assert_eq!(
            local_to_model_from(&s, &locals, 6, &mut out),
            Err(HierarchyError::JointOutOfRange { what: "from", joint: 6, count: 6 })
        );
        assert!(matches!(
            local_to_model_from_to(&s, &locals, 0, 9, &mut out),
            Err(HierarchyError::JointOutOfRange { what: "to", .. })
        ));
        let mut short = vec![Mat4::zeros(); 5];
        assert!(matches!(local_to_model_from(&s, &locals, 0, &mut short), Err(HierarchyError::Pose(_))));
        assert!(local_to_model(&s, &SoaPose::identity(5), &mut out).is_err());
    }
}

#[cfg(test)]
mod pose_tests {
    use super::*;
    use crate::pose::skeleton::JointDesc;
    use anim_math::{Quat, Vec3};

    /// A two-joint chain: root at (0,1,0) rotated 90° about z, child 2 units along x.
    fn chain() -> (Skeleton, Pose) {
        let root = Transform::new(
            Vec3::new(0.0, 1.0, 0.0),
            Quat::from_axis_angle(&Vec3::z_axis(), std::f32::consts::FRAC_PI_2),
            Vec3::new(1.0, 1.0, 1.0),
        );
        let child = Transform::from_translation(Vec3::new(2.0, 0.0, 0.0));
        let s =
            Skeleton::new(vec![JointDesc::new("root", None, root), JointDesc::new("child", Some(0), child)]).unwrap();
        let p = s.rest_pose().clone();
        (s, p)
    }

    #[test]
    fn local_to_model_matches_the_pose_path() {
        let joints = (0..6)
            .map(|i| {
                let parent = if i == 0 { None } else { Some((i - 1) / 2) };
                let f = i as f32;
                let rest = Transform {
                    translation: Vec3::new(0.5 * f, 1.0, -0.25 * f),
                    rotation: Quat::from_euler_angles(0.3 * f, -0.1, 0.2),
                    scale: Vec3::new(1.0, 1.0 + 0.1 * f, 0.9),
                };
                JointDesc::new(format!("j{i}"), parent, rest)
            })
            .collect();
        let skeleton = Skeleton::new(joints).unwrap();
        let pose = skeleton.rest_pose().clone();
        let mut expected = vec![Mat4::identity(); 6];
        pose.local_to_model(&skeleton, &mut expected).unwrap();
        let mut got = vec![Mat4::zeros(); 6];
        local_to_model(&skeleton, &SoaPose::from_pose(&pose), &mut got).unwrap();
        for (g, e) in got.iter().zip(&expected) {
            assert!((g - e).abs().max() < 1e-5, "{g} vs {e}");
        }
        assert!(local_to_model(&skeleton, &SoaPose::identity(5), &mut got).is_err());
    }

    #[test]
    fn hand_computed_two_joint_chain() {
        let (s, p) = chain();
        // Child sits at root.translation + Rz(90°)·(2,0,0) = (0,1,0) + (0,2,0).
        let g = p.global(&s, 1).unwrap();
        assert!((g.translation - Vec3::new(0.0, 3.0, 0.0)).norm() < 1e-6);
        let mut m = vec![Mat4::zeros(); 2];
        p.local_to_model(&s, &mut m).unwrap();
        assert!((m[1].column(3).xyz() - Vec3::new(0.0, 3.0, 0.0)).norm() < 1e-6);
        let mut g = vec![Transform::IDENTITY; 2];
        p.globals(&s, &mut g).unwrap();
        assert!((g[1].translation - Vec3::new(0.0, 3.0, 0.0)).norm() < 1e-6);
    }

    #[test]
    fn partial_update_from_pose_matches_full_and_leaves_the_rest() {
        // root ─ a ─ b, root ─ c: change a's subtree, update from a.
        let t = |x: f32| {
            Transform::new(Vec3::new(x, 1.0, 0.0), Quat::from_euler_angles(0.2, x, 0.1), Vec3::new(1.0, 1.5, 1.0))
        };
        let s = Skeleton::new(vec![
            JointDesc::new("root", None, t(0.1)),
            JointDesc::new("a", Some(0), t(0.2)),
            JointDesc::new("b", Some(1), t(0.3)),
            JointDesc::new("c", Some(0), t(0.4)),
        ])
        .unwrap();
        let mut p = s.rest_pose().clone();
        let mut model = vec![Mat4::zeros(); 4];
        p.local_to_model(&s, &mut model).unwrap();
        let a = s.find("a").unwrap();
        p.locals_mut()[a] = t(0.9);
        let before = model.clone();
        p.local_to_model_from(&s, a, &mut model).unwrap();
        let mut full = vec![Mat4::zeros(); 4];
        p.local_to_model(&s, &mut full).unwrap();
        for j in 0..4 {
            if s.is_in_hierarchy(a, j) {
                assert!((model[j] - full[j]).abs().max() < 1e-6);
                assert!((model[j] - before[j]).abs().max() > 1e-3);
            } else {
                assert_eq!(model[j], before[j]);
            }
        }
        assert!(p.local_to_model_from(&s, 4, &mut model).is_err());
    }

    #[test]
    fn wrong_lengths_are_errors() {
        let (s, p) = chain();
        let mut m = vec![Mat4::zeros(); 1];
        assert!(matches!(p.local_to_model(&s, &mut m), Err(PoseError::WrongLength(LengthMismatch { got: 1, .. }))));
        assert!(Pose::identity(3).global(&s, 0).is_none());
        assert!(p.global(&s, 2).is_none());
    }
}
