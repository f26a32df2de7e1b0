//! The per-vertex arithmetic every skinning loop shares (scalar and SIMD kernels alike):
//! blended columns applied to points and normals, normal rescaling for extreme linear parts,
//! and the dual-quaternion point transform.

use anim_math::{Mat3, Vec3};

#[inline(always)]
pub(super) fn normalized(v: [f32; 3]) -> Vec3 {
    let l2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
    // Branch-free; clamping keeps a zero vector zero instead of NaN.
    let s = 1.0 / l2.max(1e-30).sqrt();
    Vec3::new(v[0] * s, v[1] * s, v[2] * s)
}

#[inline(always)]
pub(super) fn cross(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

pub(super) type Cols = [[f32; 4]; 4];

#[inline(always)]
pub(super) fn apply_point(c: &Cols, p: &Vec3) -> Vec3 {
    let mut r = [0.0f32; 4];
    for i in 0..4 {
        r[i] = c[0][i] * p.x + c[1][i] * p.y + c[2][i] * p.z + c[3][i];
    }
    Vec3::new(r[0], r[1], r[2])
}

/// Transforms a normal by the linear part of `c` (`IT = false`) or by its inverse
/// transpose (`IT = true`), then renormalizes.
#[inline(always)]
pub(super) fn apply_normal<const IT: bool>(c: &Cols, n: &Vec3) -> Vec3 {
    normalized(transform_normal::<IT>(c, n))
}

/// True when a transformed normal's squared length `l2` can be normalized accurately as it
/// is: neither overflowed (nor NaN from an overflow) nor so small that the `1e-30` clamp of
/// the normalization would leave it short. Outside, the normal is recomputed from the
/// rescaled matrix ([`rescaled_normal_matrix`], the scale-aware DQ loop), off the hot path.
#[inline(always)]
pub(super) fn normal_in_range(l2: f32) -> bool {
    (1e-30..=f32::MAX).contains(&l2)
}

/// Largest absolute entry of the linear part of `c`, and the factor in two exact-enough
/// steps (`pre`, then `1 / (largest·pre)`) that brings it to 1 without overflowing the
/// inverse of a subnormal.
#[cold]
pub(super) fn unit_scale(largest: f32) -> (f32, f32) {
    const TWO_POW_64: f32 = 18_446_744_073_709_551_616.0;
    let pre = if largest < 1.0 / TWO_POW_64 { TWO_POW_64 } else { 1.0 };
    (pre, 1.0 / (largest * pre))
}

/// [`transform_normal`] followed by normalization for a linear part whose entries are so
/// large (scale ≳ 1e9: the cofactors or squared lengths overflow) or so small that the
/// direct form fails: the matrix is first scaled so its largest entry is 1 (a positive
/// factor, which changes neither the direction of the normal nor, for the inverse
/// transpose, the sign of the determinant). A zero linear part gives a zero normal.
#[cold]
#[inline(never)]
pub(super) fn rescaled_normal<const IT: bool>(c: &Cols, n: &Vec3) -> Vec3 {
    let largest =
        (0..3).flat_map(|col| (0..3).map(move |row| (col, row))).fold(0.0f32, |m, (col, row)| m.max(c[col][row].abs()));
    if largest == 0.0 {
        return Vec3::zeros();
    }
    let (pre, k) = unit_scale(largest);
    let mut u: Cols = [[0.0; 4]; 4];
    for col in 0..3 {
        for row in 0..3 {
            u[col][row] = c[col][row] * pre * k;
        }
    }
    normalized(transform_normal::<IT>(&u, n))
}

/// [`anim_math::normal_matrix`] of `s` scaled so its largest entry is 1 (see
/// [`rescaled_normal`]): the same directions, with no overflow for huge scales.
#[cold]
#[inline(never)]
pub(super) fn rescaled_normal_matrix(s: &Mat3) -> Mat3 {
    let largest = s.amax();
    if largest == 0.0 {
        return Mat3::zeros();
    }
    let (pre, k) = unit_scale(largest);
    anim_math::normal_matrix(&(s * pre * k))
}

/// The unnormalized part of [`apply_normal`].
#[inline(always)]
pub(super) fn transform_normal<const IT: bool>(c: &Cols, n: &Vec3) -> [f32; 3] {
    let mut r = [0.0f32; 3];
    if !IT {
        for i in 0..3 {
            r[i] = c[0][i] * n.x + c[1][i] * n.y + c[2][i] * n.z;
        }
        return r;
    }
    // inverse(M)ᵀ = [c1×c2, c2×c0, c0×c1] / det(M); the scale goes in the normalization,
    // the sign of det must stay.
    let (c0, c1, c2) = ([c[0][0], c[0][1], c[0][2]], [c[1][0], c[1][1], c[1][2]], [c[2][0], c[2][1], c[2][2]]);
    let (k0, k1, k2) = (cross(c1, c2), cross(c2, c0), cross(c0, c1));
    let det = c0[0] * k0[0] + c0[1] * k0[1] + c0[2] * k0[2];
    let s = if det < 0.0 { -1.0 } else { 1.0 };
    for i in 0..3 {
        r[i] = s * (k0[i] * n.x + k1[i] * n.y + k2[i] * n.z);
    }
    r
}

/// Applies the normalized dual quaternion (real `r`, dual part `4·d`) to a point: rotation,
/// then the translation `t = 2·(w_r·D_v − w_D·r_v + r_v × D_v) = 8·(w_r·d_v − w_d·r_v + r_v ×
/// d_v)` with `D = 4·d`.
///
/// The caller passes the dual part **quartered** (`d = D/4`, exact: a power of two): the
/// partial sums in the bracket are then at most `2·|D|/4 = |t|/4`, so a translation with
/// components near `f32::MAX` does not overflow on the way to its (finite) value.
#[inline(always)]
pub(super) fn dq_point(r: &[f32; 4], d: &[f32; 4], p: [f32; 3]) -> Vec3 {
    let rv = [r[0], r[1], r[2]];
    let dv = [d[0], d[1], d[2]];
    let c = cross(rv, dv);
    let rp = rotate(r, p);
    Vec3::new(
        rp[0] + 8.0 * (r[3] * dv[0] - d[3] * rv[0] + c[0]),
        rp[1] + 8.0 * (r[3] * dv[1] - d[3] * rv[1] + c[1]),
        rp[2] + 8.0 * (r[3] * dv[2] - d[3] * rv[2] + c[2]),
    )
}

/// Rotates `v` by the unit quaternion `r` ([i, j, k, w]): v + 2w(q×v) + 2q×(q×v).
#[inline(always)]
pub(super) fn rotate(r: &[f32; 4], v: [f32; 3]) -> [f32; 3] {
    let q = [r[0], r[1], r[2]];
    let t = cross(q, v);
    let t = [2.0 * t[0], 2.0 * t[1], 2.0 * t[2]];
    let u = cross(q, t);
    [v[0] + r[3] * t[0] + u[0], v[1] + r[3] * t[1] + u[1], v[2] + r[3] * t[2] + u[2]]
}

/// The scale-aware DQ normal by the rule for scale matrices so large or small that
/// `cof(S)·n` leaves the range where it normalizes accurately: `n` through the rescaled
/// normal matrix of `s` ([`rescaled_normal_matrix`]), rotated by the real part `q` (any
/// length, normalized here), then normalized. The SIMD loops redo such lanes with it.
#[cold]
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // used by the x86-64 loops only
pub(super) fn redone_dq_normal(q: [f32; 4], s: &Mat3, n: &Vec3) -> Vec3 {
    let inv = 1.0 / (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).max(1e-30).sqrt();
    let q = q.map(|c| c * inv);
    let nrm = rescaled_normal_matrix(s) * n;
    normalized(rotate(&q, [nrm.x, nrm.y, nrm.z]))
}
