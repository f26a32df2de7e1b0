//! The CPU reader: the palette the shaders compute for a character, from the atlas's
//! texels, exactly as the module docs of [`super`] define it.

use super::error::AtlasError;
use super::types::{AnimAtlas, FramePair, TextureLayout};
use anim_core::skin::{Palette, SkinMethod};
use anim_math::nalgebra::{DualQuaternion, Quaternion};
use anim_math::{DualQuat, Mat4, Vec3, affine_mul, dual};

/// `a · (1 − t) + b · t`, GLSL's `mix`.
#[inline(always)]
pub(super) fn mix4(a: [f32; 4], b: [f32; 4], t: f32) -> [f32; 4] {
    let s = 1.0 - t;
    [a[0] * s + b[0] * t, a[1] * s + b[1] * t, a[2] * s + b[2] * t, a[3] * s + b[3] * t]
}

#[inline(always)]
pub(super) fn dot4(a: [f32; 4], b: [f32; 4]) -> f32 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3]
}

#[inline(always)]
pub(super) fn neg4(a: [f32; 4]) -> [f32; 4] {
    [-a[0], -a[1], -a[2], -a[3]]
}

#[inline(always)]
pub(super) fn scale4(a: [f32; 4], s: f32) -> [f32; 4] {
    [a[0] * s, a[1] * s, a[2] * s, a[3] * s]
}

/// `normalize(mix(a, ±b, t))`, `b` negated when `dot(a, b) < 0`. A zero-length result
/// (opposite inputs at exactly the middle) gives `a`.
#[inline(always)]
pub(super) fn nlerp4(a: [f32; 4], b: [f32; 4], t: f32) -> [f32; 4] {
    let b = if dot4(a, b) < 0.0 { neg4(b) } else { b };
    let v = mix4(a, b, t);
    let n = dot4(v, v).sqrt();
    if n > 0.0 { scale4(v, 1.0 / n) } else { a }
}

/// Blends two dual quaternions `(real, dual)` by `t`, the second sign-flipped when the real
/// parts' dot product is negative, then divides both parts by the real part's length.
#[inline(always)]
pub(super) fn dq_mix(a: ([f32; 4], [f32; 4]), b: ([f32; 4], [f32; 4]), t: f32) -> ([f32; 4], [f32; 4]) {
    let b = if dot4(a.0, b.0) < 0.0 { (neg4(b.0), neg4(b.1)) } else { b };
    let (r, d) = (mix4(a.0, b.0, t), mix4(a.1, b.1, t));
    let n = dot4(r, r).sqrt();
    if n > 0.0 { (scale4(r, 1.0 / n), scale4(d, 1.0 / n)) } else { a }
}

/// Column-major rotation matrix columns of the unit quaternion `(i, j, k, w)`.
#[inline(always)]
pub(super) fn quat_columns(q: [f32; 4]) -> [[f32; 3]; 3] {
    let [x, y, z, w] = q;
    [
        [1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y + z * w), 2.0 * (x * z - y * w)],
        [2.0 * (x * y - z * w), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z + x * w)],
        [2.0 * (x * z + y * w), 2.0 * (y * z - x * w), 1.0 - 2.0 * (x * x + y * y)],
    ]
}

/// The matrix `T · R · S`.
#[inline(always)]
pub(super) fn trs_matrix(t: [f32; 4], q: [f32; 4], s: [f32; 4]) -> Mat4 {
    let c = quat_columns(q);
    Mat4::new(
        c[0][0] * s[0],
        c[1][0] * s[1],
        c[2][0] * s[2],
        t[0],
        c[0][1] * s[0],
        c[1][1] * s[1],
        c[2][1] * s[2],
        t[1],
        c[0][2] * s[0],
        c[1][2] * s[1],
        c[2][2] * s[2],
        t[2],
        0.0,
        0.0,
        0.0,
        1.0,
    )
}

/// The matrix of a unit dual quaternion: rotation of the real part `r`, translation
/// `2 · vec(d · conj(r))`.
#[inline(always)]
pub(super) fn dq_matrix(r: [f32; 4], d: [f32; 4]) -> Mat4 {
    let c = quat_columns(r);
    let (rv, rw) = (Vec3::new(r[0], r[1], r[2]), r[3]);
    let (dv, dw) = (Vec3::new(d[0], d[1], d[2]), d[3]);
    let t = (dv * rw - rv * dw + rv.cross(&dv)) * 2.0;
    Mat4::new(
        c[0][0], c[1][0], c[2][0], t.x, c[0][1], c[1][1], c[2][1], t.y, c[0][2], c[1][2], c[2][2], t.z, 0.0, 0.0, 0.0,
        1.0,
    )
}

/// Which sample of the atlas a palette reads: a frame pair of clip A, and optionally one
/// of clip B with its weight.
struct Sample {
    a: FramePair,
    b: Option<(FramePair, f32)>,
}

impl AnimAtlas {
    /// The palette the shaders compute for a character at `a`, blended with `b` by its
    /// weight when given. Dual quaternions need a rigid atlas.
    ///
    /// With [`SkinMethod::Lbs`] this allocates nothing once `out` is a matrix palette of
    /// the atlas's joint count. [`SkinMethod::Dq`] on the [`TextureLayout::ModelTrs`] and
    /// [`TextureLayout::SkinMatrix`] layouts needs a matrix scratch and allocates one each
    /// call: use [`AnimAtlas::palette_with_scratch`] in a loop.
    ///
    /// # Errors
    /// A column outside the atlas, a non-finite factor or weight, or
    /// [`SkinMethod::Dq`] on an atlas that is not rigid.
    pub fn palette(
        &self,
        a: FramePair,
        b: Option<(FramePair, f32)>,
        method: SkinMethod,
        out: &mut Palette,
    ) -> Result<(), AtlasError> {
        let mut scratch = Vec::new();
        self.palette_with_scratch(a, b, method, out, &mut scratch)
    }

    /// [`AnimAtlas::palette`] with a caller-owned matrix scratch (used by
    /// [`SkinMethod::Dq`] on the [`TextureLayout::ModelTrs`] and [`TextureLayout::SkinMatrix`]
    /// layouts only): allocates nothing once `out` and `scratch` have the atlas's joint
    /// count.
    ///
    /// Each skin joint's entry is computed as the [module docs](super) say the shaders do:
    /// for [`SkinMethod::Lbs`] the interpolated skinning matrix; for [`SkinMethod::Dq`] a
    /// rigid [`DqPalette`](anim_core::skin::DqPalette) (identity scales) holding the interpolated dual
    /// quaternion itself with [`TextureLayout::SkinDualQuat`], and the rigid part
    /// [`dual::from_rigid_matrix`] of the interpolated skinning matrix with the other
    /// layouts.
    ///
    /// # Errors
    /// As [`AnimAtlas::palette`].
    pub fn palette_with_scratch(
        &self,
        a: FramePair,
        b: Option<(FramePair, f32)>,
        method: SkinMethod,
        out: &mut Palette,
        scratch: &mut Vec<Mat4>,
    ) -> Result<(), AtlasError> {
        let sample = self.check_sample(a, b)?;
        let n = self.joint_count();
        match method {
            SkinMethod::Lbs => {
                out.set_method(SkinMethod::Lbs);
                if let Palette::Matrices(m) = out {
                    m.resize(n, Mat4::identity());
                    self.write_matrices(&sample, m);
                }
            }
            SkinMethod::Dq => {
                if !self.rigid {
                    return Err(AtlasError::DqNeedsRigid);
                }
                out.set_method(SkinMethod::Dq);
                if let Palette::DualQuats(d) = out {
                    if self.layout == TextureLayout::SkinDualQuat {
                        // The shaders hand the interpolated dual quaternion on as it is.
                        d.set_rigid(n, |j| {
                            let (r, d) = self.joint_dual_quat(&sample, j);
                            let q = |v: [f32; 4]| Quaternion::new(v[3], v[0], v[1], v[2]);
                            DualQuat::new_unchecked(DualQuaternion::from_real_and_dual(q(r), q(d)))
                        });
                    } else {
                        // The rigid part of each interpolated matrix: the shaders' conversion,
                        // which drops the slight shrink of interpolated rotations.
                        scratch.resize(n, Mat4::identity());
                        self.write_matrices(&sample, scratch);
                        d.set_rigid(n, |j| dual::from_rigid_matrix(&scratch[j]));
                    }
                }
            }
        }
        Ok(())
    }

    fn check_sample(&self, a: FramePair, b: Option<(FramePair, f32)>) -> Result<Sample, AtlasError> {
        let width = self.width;
        let col = |which: &'static str, column: u32| {
            if column < width { Ok(()) } else { Err(AtlasError::ColumnOutOfRange { which, column, width }) }
        };
        let finite = |which: &'static str, value: f32| {
            if value.is_finite() { Ok(()) } else { Err(AtlasError::NonFiniteFactor { which, value }) }
        };
        col("clip A frame0", a.frame0)?;
        col("clip A frame1", a.frame1)?;
        finite("clip A factor", a.t)?;
        if let Some((pb, w)) = b {
            col("clip B frame0", pb.frame0)?;
            col("clip B frame1", pb.frame1)?;
            finite("clip B factor", pb.t)?;
            finite("clip B weight", w)?;
        }
        Ok(Sample { a, b })
    }

    /// Texel `k` of joint `j` at column `x` (all in range: checked by `check_sample`).
    #[inline(always)]
    fn fetch(&self, x: u32, j: usize, k: usize) -> [f32; 4] {
        let tpj = self.layout.texels_per_joint() as usize;
        let i = (j * tpj + k) * self.width as usize + x as usize;
        self.texels.get(i).unwrap_or([0.0; 4])
    }

    /// The skinning matrix of every joint for `s`, as the shaders compute it.
    fn write_matrices(&self, s: &Sample, out: &mut [Mat4]) {
        for (j, o) in out.iter_mut().enumerate() {
            *o = match self.layout {
                TextureLayout::ModelTrs => {
                    let trs = |p: FramePair| {
                        let f = |k| (self.fetch(p.frame0, j, k), self.fetch(p.frame1, j, k));
                        let ((t0, t1), (q0, q1), (s0, s1)) = (f(0), f(1), f(2));
                        (mix4(t0, t1, p.t), nlerp4(q0, q1, p.t), mix4(s0, s1, p.t))
                    };
                    let (mut t, mut q, mut sc) = trs(s.a);
                    if let Some((pb, w)) = s.b {
                        let (tb, qb, sb) = trs(pb);
                        t = mix4(t, tb, w);
                        q = nlerp4(q, qb, w);
                        sc = mix4(sc, sb, w);
                    }
                    let ib = self.inverse_bind.get(j).copied().unwrap_or_else(Mat4::identity);
                    affine_mul(&trs_matrix(t, q, sc), &ib)
                }
                TextureLayout::SkinMatrix => {
                    let rows = |p: FramePair| {
                        let r = |k| mix4(self.fetch(p.frame0, j, k), self.fetch(p.frame1, j, k), p.t);
                        [r(0), r(1), r(2)]
                    };
                    let mut r = rows(s.a);
                    if let Some((pb, w)) = s.b {
                        let rb = rows(pb);
                        for k in 0..3 {
                            r[k] = mix4(r[k], rb[k], w);
                        }
                    }
                    Mat4::new(
                        r[0][0], r[0][1], r[0][2], r[0][3], r[1][0], r[1][1], r[1][2], r[1][3], r[2][0], r[2][1],
                        r[2][2], r[2][3], 0.0, 0.0, 0.0, 1.0,
                    )
                }
                TextureLayout::SkinDualQuat => {
                    let (r, d) = self.joint_dual_quat(s, j);
                    dq_matrix(r, d)
                }
            };
        }
    }

    /// The interpolated dual quaternion (real, dual) of joint `j` for `s`, as the shaders
    /// compute it ([`TextureLayout::SkinDualQuat`] only).
    #[inline(always)]
    fn joint_dual_quat(&self, s: &Sample, j: usize) -> ([f32; 4], [f32; 4]) {
        let dq = |p: FramePair| {
            let f = |x| (self.fetch(x, j, 0), self.fetch(x, j, 1));
            dq_mix(f(p.frame0), f(p.frame1), p.t)
        };
        let mut q = dq(s.a);
        if let Some((pb, w)) = s.b {
            q = dq_mix(q, dq(pb), w);
        }
        q
    }
}
