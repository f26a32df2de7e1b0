//! Skinning palettes: for each skin joint, `model(joint) · inverse_bind`, the transform
//! that takes a bind-pose vertex to its animated place. As matrices (for linear blend
//! skinning), transforms (the book's per-influence path) or dual quaternions with their
//! bind-space scale ([`DqPalette`]).
//!
//! [`Palette`] holds the one form a [`SkinMethod`] needs and is what the skinning
//! functions, the GPU renderer and the tools take: build it once, then
//! [`Palette::update`] it every frame (no allocation once it has the skin's length).

use super::bind::Skin;
use crate::pose::PoseError;
use anim_math::affine_mul;
use anim_math::nalgebra::Rotation3;
use anim_math::{DualQuat, Mat3, Mat4, Quat, Transform, Vec3, dual, polar_decomposition};
use std::fmt;
use std::str::FromStr;

/// How far a palette matrix's linear part may be from orthonormal (column lengths from 1,
/// column dot products from 0) and still count as carrying no scale. Rounding through a
/// chain of rotations stays well below it; a deliberate scale of 1.00001 is kept.
pub const RIGID_TOLERANCE: f32 = 4e-6;

/// True when the linear part of `m` is a rotation within [`RIGID_TOLERANCE`]: unit
/// columns, orthogonal to each other, positive determinant.
#[inline]
pub fn is_orthonormal(m: &Mat4) -> bool {
    let c = |i: usize| m.fixed_view::<3, 1>(0, i);
    let (c0, c1, c2) = (c(0), c(1), c(2));
    let t = RIGID_TOLERANCE;
    (c0.norm_squared() - 1.0).abs() <= 2.0 * t
        && (c1.norm_squared() - 1.0).abs() <= 2.0 * t
        && (c2.norm_squared() - 1.0).abs() <= 2.0 * t
        && c0.dot(&c1).abs() <= t
        && c1.dot(&c2).abs() <= t
        && c2.dot(&c0).abs() <= t
        && c0.cross(&c1).dot(&c2) > 0.0
}

/// One dual quaternion on 32-byte aligned storage: the skinning kernels read each palette
/// entry with one 256-bit load, which a misaligned entry splits across two cache lines
/// (and, once a page, across two pages, which costs far more: that placement made the
/// same DQ skinning run twice as long in one process as in another).
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, align(32))]
struct Aligned(DualQuat);

const _: () = assert!(std::mem::size_of::<Aligned>() == std::mem::size_of::<DualQuat>());

/// One joint of a palette with scale as the SIMD loops read it, on a 64-byte line of its
/// own: the dual quaternion's eight floats (real part `[i, j, k, w]`, then dual), then the
/// six distinct entries of the symmetric scale `Sᵢ` (`s00, s11, s22, s01, s02, s12`), then
/// two zeros. One aligned 512-bit load and one fused multiply-add an influence blend both
/// (the AVX-512 loops); a uniform `Sᵢ = s·I` puts `s` in lane 8, where the loop for such
/// palettes reads it alone.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, align(64))]
pub(crate) struct DqRow(pub(crate) [f32; 16]);

impl DqRow {
    /// The row of dual quaternion `q` and symmetric scale `s`.
    fn new(q: &DualQuat, s: &Mat3) -> Self {
        let mut row = [0.0; 16];
        row[..4].copy_from_slice(q.as_ref().real.coords.as_slice());
        row[4..8].copy_from_slice(q.as_ref().dual.coords.as_slice());
        row[8..14].copy_from_slice(&[s[(0, 0)], s[(1, 1)], s[(2, 2)], s[(0, 1)], s[(0, 2)], s[(1, 2)]]);
        DqRow(row)
    }
}

/// A dual-quaternion skinning palette: for each joint the rigid part `qᵢ` of its palette
/// matrix and the symmetric bind-space scale `Sᵢ` that the rigid part cannot hold (see
/// [`SkinMethod::Dq`] for the definition and how a vertex is skinned with it).
///
/// Whether any joint carries scale is decided once, when the palette is built: a rigid
/// palette ([`DqPalette::is_rigid`]) stores identity scales and every skinning path
/// (CPU, vertex and compute shader) skips the scale work for it. A joint whose scale is
/// uniform within [`RIGID_TOLERANCE`] (relative) stores exactly `Sᵢ = s·I`, as a rigid one
/// stores exactly `I`; when every joint is so ([`DqPalette::is_uniform`]), the AVX-512 and
/// AVX2 loops transpose one scale factor a vertex instead of six entries.
#[derive(Clone, Debug, PartialEq)]
pub struct DqPalette {
    dual_quats: Vec<Aligned>,
    scales: Vec<Mat3>,
    /// Dual quaternions and scales side by side for the SIMD loops: one a joint when the
    /// palette is not rigid, empty when it is.
    rows: Vec<DqRow>,
    rigid: bool,
    /// Every scale is `s·I`, `s > 0` (rigid joints too).
    uniform: bool,
}

impl Default for DqPalette {
    fn default() -> Self {
        Self::new()
    }
}

impl DqPalette {
    /// An empty palette.
    #[must_use]
    pub fn new() -> Self {
        Self { dual_quats: Vec::new(), scales: Vec::new(), rows: Vec::new(), rigid: true, uniform: true }
    }

    /// The palette of the skinning matrices `matrices` (`model(joint) · inverse_bind`).
    #[must_use]
    pub fn from_matrices(matrices: &[Mat4]) -> Self {
        let mut p = Self::new();
        p.set_from_matrices(matrices);
        p
    }

    /// A rigid palette from dual quaternions (every scale is the identity).
    #[must_use]
    pub fn from_rigid(dual_quats: &[DualQuat]) -> Self {
        Self {
            dual_quats: dual_quats.iter().copied().map(Aligned).collect(),
            scales: vec![Mat3::identity(); dual_quats.len()],
            rows: Vec::new(),
            rigid: true,
            uniform: true,
        }
    }

    /// Refills the palette from skinning matrices, reusing its storage (it allocates only
    /// to grow).
    pub fn set_from_matrices(&mut self, matrices: &[Mat4]) {
        self.fill(matrices.len(), |i| matrices[i]);
    }

    /// Refills the palette with `n` rigid joints, entry `i` being the unit dual quaternion
    /// `dual_quat(i)`, and every scale the identity: afterwards [`DqPalette::is_rigid`].
    /// Reuses the storage (it allocates only to grow); use it for rigid transforms that are
    /// already dual quaternions, or to drop the scale of matrices on purpose
    /// (`|i| dual::from_rigid_matrix(&m[i])`, see [`dual::from_rigid_matrix`]).
    pub fn set_rigid(&mut self, n: usize, mut dual_quat: impl FnMut(usize) -> DualQuat) {
        if !self.rigid {
            // Scales of a rigid palette are identities already: rewrite them only after a
            // palette with scale.
            self.scales.iter_mut().for_each(|s| *s = Mat3::identity());
        }
        self.scales.resize(n, Mat3::identity());
        self.rows.clear();
        self.dual_quats.resize(n, Aligned(DualQuat::identity()));
        for (i, q) in self.dual_quats.iter_mut().enumerate() {
            q.0 = dual_quat(i);
        }
        self.rigid = true;
        self.uniform = true;
    }

    /// [`DqPalette::set_rigid`] from a slice: the palette becomes `dual_quats` with identity
    /// scales, reusing its storage.
    pub fn set_from_rigid(&mut self, dual_quats: &[DualQuat]) {
        self.set_rigid(dual_quats.len(), |i| dual_quats[i]);
    }

    /// Refills the palette from model matrices and a skin: entry `i` comes from
    /// `model[skin.joints[i]] · skin.inverse_bind[i]`. Allocates only to grow.
    ///
    /// # Errors
    /// `model` is not one matrix per joint of the skin's skeleton ([`PoseError::SkeletonMismatch`]).
    pub fn update(&mut self, model: &[Mat4], skin: &Skin) -> Result<(), PoseError> {
        check(model.len(), skin, skin.len())?;
        let (joints, ibm) = (skin.joints(), skin.inverse_bind());
        self.fill(skin.len(), |i| affine_mul(&model[joints[i]], &ibm[i]));
        Ok(())
    }

    /// Splits each matrix `m = [A | t]` into `q = (R, t)` and the symmetric `S = Rᵀ · A`,
    /// `R` the rotation nearest `A` ([`polar_decomposition`]). A joint whose `A` is a
    /// rotation (orthonormal with a positive determinant, within [`RIGID_TOLERANCE`]) gets
    /// exactly `S = I` without computing it, so a rigid palette costs little more than its
    /// dual quaternions; the palette is rigid when every joint is. A joint whose `A` is a
    /// rotation times `s > 0` within [`RIGID_TOLERANCE`] relative to `s` gets exactly `s·I`
    /// ([`uniform_factor`]), its rotation read from the normalized columns (which is the
    /// polar rotation of such a matrix) without iterating.
    fn fill(&mut self, n: usize, matrix: impl Fn(usize) -> Mat4) {
        // Sized first, then written in place: cheaper than pushing two vectors per joint.
        self.dual_quats.resize(n, Aligned(DualQuat::identity()));
        self.scales.resize(n, Mat3::identity());
        self.rows.clear();
        let mut rigid = true;
        let mut uniform = true;
        for (i, (q_out, s_out)) in self.dual_quats.iter_mut().map(|q| &mut q.0).zip(&mut self.scales).enumerate() {
            let m = matrix(i);
            if is_orthonormal(&m) {
                // Already a rotation: read it directly, no column normalization needed.
                let r = Rotation3::from_matrix_unchecked(m.fixed_view::<3, 3>(0, 0).into_owned());
                let t = Vec3::new(m[(0, 3)], m[(1, 3)], m[(2, 3)]);
                *q_out = dual::from_parts(&t, &Quat::from_rotation_matrix(&r));
                *s_out = Mat3::identity();
            } else {
                rigid = false;
                let (q, scale, is_uniform) = split_scaled(&m);
                *q_out = q;
                *s_out = scale;
                uniform &= is_uniform;
            }
        }
        self.rigid = rigid;
        self.uniform = uniform;
        if !rigid {
            self.rows.extend(self.dual_quats.iter().zip(&self.scales).map(|(q, s)| DqRow::new(&q.0, s)));
        }
    }

    /// Number of joints.
    #[inline]
    #[must_use]
    pub fn len(&self) -> usize {
        self.dual_quats.len()
    }

    /// True when the palette has no joints.
    #[inline]
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.dual_quats.is_empty()
    }

    /// The rigid part `qᵢ` of each joint's palette matrix.
    #[inline]
    #[must_use]
    pub fn dual_quats(&self) -> &[DualQuat] {
        // SAFETY: `Aligned` is `repr(C)` with one `DualQuat` at offset 0 and the same size
        // (asserted below), so its slots are a valid `[DualQuat]` of the same length.
        unsafe { std::slice::from_raw_parts(self.dual_quats.as_ptr().cast::<DualQuat>(), self.dual_quats.len()) }
    }

    /// The bind-space scale `Sᵢ = Rᵢᵀ · Aᵢ` of each joint, symmetric (the identity for
    /// every joint of a rigid palette); as many as [`DqPalette::dual_quats`].
    #[inline]
    #[must_use]
    pub fn scales(&self) -> &[Mat3] {
        &self.scales
    }

    /// True when no joint carries scale, so skinning can skip it.
    #[inline]
    #[must_use]
    pub fn is_rigid(&self) -> bool {
        self.rigid
    }

    /// True when every joint's scale is uniform: `Sᵢ = sᵢ·I` with `sᵢ > 0` (rigid joints
    /// too, with `sᵢ = 1`). Normals then only turn, and the AVX-512 and AVX2 loops
    /// transform with one factor a vertex instead of a matrix.
    #[inline]
    #[must_use]
    pub fn is_uniform(&self) -> bool {
        self.uniform
    }

    /// Each joint's dual quaternion and scale as 64-byte rows ([`DqRow`]) when the palette
    /// has scale; empty when it is rigid.
    #[inline]
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // read by the x86-64 loops only
    pub(crate) fn rows(&self) -> &[DqRow] {
        &self.rows
    }
}

/// A joint matrix `m = [A | t]` that is not a rotation, split as [`DqPalette`]'s `fill`
/// describes: its dual quaternion, its symmetric scale, and whether that scale is `s·I`.
/// Out of line: inlined, it made the loop over rigid joints a tenth slower.
#[inline(never)]
fn split_scaled(m: &Mat4) -> (DualQuat, Mat3, bool) {
    let a = m.fixed_view::<3, 3>(0, 0).into_owned();
    let q = dual::from_rigid_matrix(m);
    let scale = q.rotation().to_rotation_matrix().into_inner().transpose() * a;
    if let Some(s) = uniform_factor(&scale) {
        return (q, Mat3::from_diagonal_element(s), true);
    }
    if let Some(s) = positive_symmetric(&scale) {
        // Orthogonal columns (a scale along the joint's own axes): the columns' rotation
        // is the polar one already.
        return (q, s, false);
    }
    // Not finite: the columns' rotation and `Rᵀ·A` made symmetric, so every path still
    // reads one symmetric matrix (the vertices are not finite either way).
    let (r, s) = polar_decomposition(&a).unwrap_or_else(|| (q.rotation(), (scale + scale.transpose()) * 0.5));
    let t = Vec3::new(m[(0, 3)], m[(1, 3)], m[(2, 3)]);
    (dual::from_parts(&t, &r), s, false)
}

/// `scale` made exactly symmetric, when it is symmetric within [`RIGID_TOLERANCE`] relative
/// to its largest entry and positive definite: then the rotation it was read back from is
/// the polar rotation ([`polar_decomposition`]) to that tolerance.
fn positive_symmetric(scale: &Mat3) -> Option<Mat3> {
    let bound = RIGID_TOLERANCE * scale.amax();
    let s = |r: usize, c: usize| scale[(r, c)];
    let close =
        (s(0, 1) - s(1, 0)).abs() <= bound && (s(0, 2) - s(2, 0)).abs() <= bound && (s(1, 2) - s(2, 1)).abs() <= bound;
    let sym = (scale + scale.transpose()) * 0.5;
    // Sylvester's criterion: the leading minors are positive.
    let positive =
        sym[(0, 0)] > 0.0 && sym[(0, 0)] * sym[(1, 1)] - sym[(0, 1)] * sym[(0, 1)] > 0.0 && sym.determinant() > 0.0;
    (close && positive && bound.is_finite()).then_some(sym)
}

/// `s` when `scale` is `s·I` with `s > 0` (finite) within [`RIGID_TOLERANCE`] relative to
/// `s`: every off-diagonal entry and every diagonal entry's difference from `s`, the mean of
/// the diagonal. Rounding through the rotation a scale is read back from stays far below it.
fn uniform_factor(scale: &Mat3) -> Option<f32> {
    let s = (scale[(0, 0)] + scale[(1, 1)] + scale[(2, 2)]) / 3.0;
    let bound = RIGID_TOLERANCE * s;
    let close = (0..3).all(|r| (0..3).all(|c| (scale[(r, c)] - if r == c { s } else { 0.0 }).abs() <= bound));
    (s > 0.0 && s.is_finite() && close).then_some(s)
}

/// A skinning palette in the form one [`SkinMethod`] needs: matrices for linear blend
/// skinning, dual quaternions with scale for dual-quaternion skinning.
///
/// Made once per character, refilled every frame from the model matrices
/// ([`Palette::update`], which allocates nothing once sized), handed to
/// [`skinning::skin`](super::skinning::skin) or to the GPU.
///
/// ```
/// use anim_core::pose::{JointDesc, Skeleton};
/// use anim_core::skin::{Palette, Skin, SkinMethod};
/// use anim_math::{Mat4, Quat, Transform, Vec3};
///
/// // A root and a child one unit up, bound in this rest pose.
/// let skeleton = Skeleton::new(vec![
///     JointDesc::new("root", None, Transform::IDENTITY),
///     JointDesc::new("tip", Some(0), Transform::from_translation(Vec3::y())),
/// ])?;
/// let skin = Skin::from_skeleton(&skeleton);
/// let mut pose = skeleton.rest_pose().clone();
/// pose.locals_mut()[1].rotation = Quat::from_axis_angle(&Vec3::z_axis(), std::f32::consts::FRAC_PI_2);
/// let mut model = vec![Mat4::identity(); skeleton.len()];
/// pose.local_to_model(&skeleton, &mut model)?;
///
/// let mut palette = Palette::new(SkinMethod::Dq);
/// palette.update(&model, &skin)?;
/// // The tip's palette entry turns a bind-pose point a unit above it (y = 2) by 90°
/// // about the tip (at y = 1): to x = -1.
/// let dq = palette.dual_quats().expect("a DQ palette").dual_quats()[1];
/// let p = dq.transform_point(&anim_math::Point3::new(0.0, 2.0, 0.0));
/// assert!((p - anim_math::Point3::new(-1.0, 1.0, 0.0)).norm() < 1e-5);
///
/// // Model matrices of another skeleton are refused, not silently misread.
/// assert!(palette.update(&model[..1], &skin).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum Palette {
    /// Skinning matrices `model(joint) · inverse_bind` ([`SkinMethod::Lbs`]).
    Matrices(Vec<Mat4>),
    /// Dual quaternions and bind-space scales ([`SkinMethod::Dq`]).
    DualQuats(DqPalette),
}

impl Default for Palette {
    fn default() -> Self {
        Self::new(SkinMethod::default())
    }
}

impl Palette {
    /// An empty palette for `method`.
    #[must_use]
    pub fn new(method: SkinMethod) -> Self {
        match method {
            SkinMethod::Lbs => Self::Matrices(Vec::new()),
            SkinMethod::Dq => Self::DualQuats(DqPalette::new()),
        }
    }

    /// The palette for `method` of the skinning matrices `matrices`.
    #[must_use]
    pub fn from_matrices(method: SkinMethod, matrices: &[Mat4]) -> Self {
        match method {
            SkinMethod::Lbs => Self::Matrices(matrices.to_vec()),
            SkinMethod::Dq => Self::DualQuats(DqPalette::from_matrices(matrices)),
        }
    }

    /// The method this palette serves.
    #[must_use]
    pub fn method(&self) -> SkinMethod {
        match self {
            Self::Matrices(_) => SkinMethod::Lbs,
            Self::DualQuats(_) => SkinMethod::Dq,
        }
    }

    /// Switches to `method`, keeping no entries (call [`Palette::update`] next). Does
    /// nothing when the method is already `method`.
    pub fn set_method(&mut self, method: SkinMethod) {
        if self.method() != method {
            *self = Self::new(method);
        }
    }

    /// Number of joints.
    #[must_use]
    pub fn len(&self) -> usize {
        match self {
            Self::Matrices(m) => m.len(),
            Self::DualQuats(d) => d.len(),
        }
    }

    /// True when the palette has no joints.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The matrices of a [`Palette::Matrices`] palette.
    #[must_use]
    pub fn matrices(&self) -> Option<&[Mat4]> {
        match self {
            Self::Matrices(m) => Some(m),
            Self::DualQuats(_) => None,
        }
    }

    /// The dual quaternions of a [`Palette::DualQuats`] palette.
    #[must_use]
    pub fn dual_quats(&self) -> Option<&DqPalette> {
        match self {
            Self::Matrices(_) => None,
            Self::DualQuats(d) => Some(d),
        }
    }

    /// Refills the palette from skinning matrices, reusing its storage.
    pub fn set_from_matrices(&mut self, matrices: &[Mat4]) {
        match self {
            Self::Matrices(m) => {
                m.clear();
                m.extend_from_slice(matrices);
            }
            Self::DualQuats(d) => d.set_from_matrices(matrices),
        }
    }

    /// Computes the palette of `skin` posed by `model` (from
    /// [`crate::pose::Pose::local_to_model`]) in this palette's form, reusing its storage: it
    /// allocates only to grow.
    ///
    /// # Errors
    /// `model` is not one matrix per joint of the skin's skeleton
    /// ([`PoseError::SkeletonMismatch`]: model matrices of another skeleton, such as the
    /// full skeleton's with a trimmed runtime skeleton's skin).
    pub fn update(&mut self, model: &[Mat4], skin: &Skin) -> Result<(), PoseError> {
        match self {
            Self::Matrices(m) => {
                m.resize(skin.len(), Mat4::identity());
                skinning_matrices(model, skin, m)
            }
            Self::DualQuats(d) => d.update(model, skin),
        }
    }
}

fn check(model: usize, skin: &Skin, out: usize) -> Result<(), PoseError> {
    if out != skin.len() {
        return Err(PoseError::WrongLength(crate::LengthMismatch::new("palette", out, skin.len())));
    }
    if let Some((index, &joint)) = skin.joints().iter().enumerate().find(|(_, j)| **j >= model) {
        return Err(PoseError::JointOutOfRange { index, joint, count: model });
    }
    // Every joint the skin names is there; matrices of another skeleton can still cover
    // them (a full skeleton's with a trimmed skeleton's skin): the lengths tell.
    if model != skin.skeleton_len() {
        return Err(PoseError::SkeletonMismatch { what: "model matrices", joints: model });
    }
    Ok(())
}

/// Matrix skinning palette: `out[i] = model[skin.joints[i]] · skin.inverse_bind[i]`.
///
/// `model` comes from [`crate::pose::Pose::local_to_model`].
///
/// # Errors
/// `model` is not one matrix per joint of the skin's skeleton
/// ([`PoseError::SkeletonMismatch`]), or `out` is not the skin's length.
pub fn skinning_matrices(model: &[Mat4], skin: &Skin, out: &mut [Mat4]) -> Result<(), PoseError> {
    check(model.len(), skin, out.len())?;
    for ((o, &j), ibm) in out.iter_mut().zip(skin.joints()).zip(skin.inverse_bind()) {
        *o = affine_mul(&model[j], ibm);
    }
    Ok(())
}

/// Transform skinning palette: `out[i] = globals[skin.joints[i]] ∘ inverse_bind[i]`, with
/// the inverse bind decomposed into a [`Transform`]. Equal to the matrix palette when no
/// joint combines non-uniform scale with rotation (see [`Transform::combine`]).
///
/// # Errors
/// As [`skinning_matrices`].
pub fn skinning_transforms(globals: &[Transform], skin: &Skin, out: &mut [Transform]) -> Result<(), PoseError> {
    check(globals.len(), skin, out.len())?;
    for ((o, &j), ibm) in out.iter_mut().zip(skin.joints()).zip(skin.inverse_bind_transforms()) {
        *o = globals[j].combine(ibm);
    }
    Ok(())
}

/// The rigid part of each palette matrix: `dual::from_rigid_matrix(model[skin.joints[i]]
/// · inverse_bind[i])`, with any scale dropped. For skinning use a [`DqPalette`], which
/// keeps the scale (see [`SkinMethod::Dq`]).
///
/// # Errors
/// As [`skinning_matrices`].
pub fn skinning_dual_quats(model: &[Mat4], skin: &Skin, out: &mut [DualQuat]) -> Result<(), PoseError> {
    check(model.len(), skin, out.len())?;
    for ((o, &j), ibm) in out.iter_mut().zip(skin.joints()).zip(skin.inverse_bind()) {
        *o = dual::from_rigid_matrix(&affine_mul(&model[j], ibm));
    }
    Ok(())
}

/// How skinned vertices are blended from their joints. The one definition of the project:
/// the CPU functions of [`super::skinning`], the vertex and compute shaders of `anim-render-vk` and the
/// glTF tools all follow it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SkinMethod {
    /// Linear blend skinning with the matrix palette `Pᵢ = model(jointᵢ) · inverse_bindᵢ`:
    /// `p' = (Σ wᵢ · Pᵢ) · p`. Normals by the blended matrix (or its inverse transpose,
    /// see [`NormalMode`](super::NormalMode)), renormalized.
    #[default]
    Lbs,
    /// Dual-quaternion skinning with scale. Each palette matrix `Pᵢ = [Aᵢ | tᵢ]` splits into
    /// its rigid part, the unit dual quaternion `qᵢ` of the translation `tᵢ` and the
    /// rotation `Rᵢ` nearest `Aᵢ`, and the bind-space scale `Sᵢ = Rᵢᵀ · Aᵢ` that a dual
    /// quaternion cannot hold: the polar decomposition `Aᵢ = Rᵢ · Sᵢ`, `Sᵢ` symmetric
    /// ([`anim_math::polar_decomposition`], [`DqPalette`]). For a joint scaled along its
    /// own axes, `Rᵢ` is the joint's rotation; under shear (a parent's non-uniform scale
    /// seen through a turned child) it is still the rotation the joint's frame is closest
    /// to, so the blend turns vertices by the joints' rotations and the scale stays in
    /// `Sᵢ`. A vertex with weights `wᵢ`:
    ///
    /// 1. `q = Σ wᵢ · sᵢ · qᵢ`, with `sᵢ = ±1` so that the real part of every `qᵢ` lies in
    ///    the hemisphere of the first influence's (Kavan et al. 2007), then normalized:
    ///    `q̂ = q / |real(q)|`;
    /// 2. `S = Σ wᵢ · Sᵢ`, blended linearly;
    /// 3. `p' = q̂ · (S · p)`: the scale in bind space first, then the blended rotation and
    ///    translation;
    /// 4. `n' = normalize(rotation(q̂) · cof(S) · n)`, where `cof(S)` is the cofactor
    ///    matrix ([`anim_math::normal_matrix`]: the inverse transpose up to a positive factor).
    ///
    /// A palette without scale (every `Sᵢ = I`, [`DqPalette::is_rigid`]) makes this plain
    /// dual-quaternion linear blending, and every path then skips steps 2 and the scale
    /// part of 3 and 4. Vertices without weights keep their rest position and normal.
    Dq,
}

impl SkinMethod {
    /// Both methods, in menu order.
    pub const ALL: [SkinMethod; 2] = [SkinMethod::Lbs, SkinMethod::Dq];

    /// Short lowercase name, as parsed by [`FromStr`]: `"lbs"` or `"dq"`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Lbs => "lbs",
            Self::Dq => "dq",
        }
    }

    /// Display label: `"LBS"` or `"DQ"`.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Self::Lbs => "LBS",
            Self::Dq => "DQ",
        }
    }

    /// The other method (for a toggle key).
    #[must_use]
    pub fn next(self) -> Self {
        match self {
            Self::Lbs => Self::Dq,
            Self::Dq => Self::Lbs,
        }
    }
}

impl fmt::Display for SkinMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is no [`SkinMethod`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown skinning method {0:?} (expected \"lbs\" or \"dq\")")]
pub struct UnknownSkinMethod(pub String);

impl FromStr for SkinMethod {
    type Err = UnknownSkinMethod;

    /// Parses `"lbs"` or `"dq"`, ignoring ASCII case.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL.into_iter().find(|m| m.name().eq_ignore_ascii_case(s)).ok_or_else(|| UnknownSkinMethod(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pose::{JointDesc, Pose, Skeleton};
    use anim_math::{Quat, Vec3};

    #[test]
    fn rest_equals_bind_gives_identity_palettes() {
        let s = Skeleton::new(vec![
            JointDesc::new(
                "a",
                None,
                Transform::new(
                    Vec3::new(1.0, 0.0, 0.0),
                    Quat::from_euler_angles(0.1, 0.2, 0.3),
                    Vec3::new(1.0, 1.0, 1.0),
                ),
            ),
            JointDesc::new("b", Some(0), Transform::from_translation(Vec3::new(0.0, 2.0, 0.0))),
        ])
        .unwrap();
        let skin = Skin::from_skeleton(&s);
        let pose = s.rest_pose();
        let mut model = vec![Mat4::identity(); 2];
        pose.local_to_model(&s, &mut model).unwrap();
        let mut m = vec![Mat4::zeros(); 2];
        skinning_matrices(&model, &skin, &mut m).unwrap();
        let mut g = vec![Transform::IDENTITY; 2];
        pose.globals(&s, &mut g).unwrap();
        let mut t = vec![Transform::IDENTITY; 2];
        skinning_transforms(&g, &skin, &mut t).unwrap();
        let mut d = vec![DualQuat::identity(); 2];
        skinning_dual_quats(&model, &skin, &mut d).unwrap();
        for i in 0..2 {
            assert!((m[i] - Mat4::identity()).abs().max() < 1e-5);
            assert!((t[i].to_matrix() - Mat4::identity()).abs().max() < 1e-5);
            assert!(d[i].rotation().angle() < 1e-3 && d[i].translation().vector.norm() < 1e-5);
        }
        let _ = Pose::identity(2);
    }

    #[test]
    fn errors_name_the_joint() {
        let s = Skeleton::new(vec![JointDesc::new("a", None, Transform::IDENTITY)]).unwrap();
        let skin = Skin::from_skeleton(&s);
        let mut out = vec![Mat4::zeros(); 2];
        assert!(matches!(skinning_matrices(&[Mat4::identity()], &skin, &mut out), Err(PoseError::WrongLength(_))));
        let mut out = vec![Mat4::zeros(); 1];
        assert!(matches!(
            skinning_matrices(&[], &skin, &mut out),
            Err(PoseError::JointOutOfRange { index: 0, joint: 0, count: 0 })
        ));
        assert!(Skin::new(vec![3], vec![Mat4::identity()], &s).is_err());
    }

    /// Every way of filling a palette leaves its dual quaternions on 32-byte boundaries (the
    /// skinning kernels' loads never split), each the value written.
    #[test]
    fn dual_quats_are_32_byte_aligned() {
        let q = DualQuat::from_parts(Vec3::new(1.0, 2.0, 3.0).into(), Quat::from_euler_angles(0.3, 0.0, 0.1));
        let aligned = |p: &DqPalette| (p.dual_quats().as_ptr() as usize).is_multiple_of(32);
        for n in 1..40 {
            let mut p = DqPalette::from_rigid(&vec![q; n]);
            assert!(aligned(&p) && p.dual_quats().len() == n && p.dual_quats().iter().all(|d| *d == q));
            let pick = |i: usize| if i.is_multiple_of(2) { q } else { DualQuat::identity() };
            p.set_rigid(n + 3, pick);
            assert!(aligned(&p) && p.dual_quats().len() == n + 3);
            assert!(p.dual_quats().iter().enumerate().all(|(i, d)| *d == pick(i)));
            let p = DqPalette::from_matrices(&vec![Mat4::new_translation(&Vec3::new(1.0, 0.0, 0.0)); n]);
            assert!(aligned(&p) && p.dual_quats().len() == n);
        }
    }

    /// True when `p`'s rows are one a joint, 64-byte aligned, each its dual quaternion,
    /// the six entries of its scale (which is symmetric) and two zeros.
    fn rows_match(p: &DqPalette) -> bool {
        let rows = p.rows();
        rows.len() == p.len()
            && (rows.as_ptr() as usize).is_multiple_of(64)
            && rows.iter().zip(p.dual_quats().iter().zip(p.scales())).all(|(r, (q, s))| {
                r.0[..4] == *q.as_ref().real.coords.as_slice()
                    && r.0[4..8] == *q.as_ref().dual.coords.as_slice()
                    && r.0[8..] == [s[(0, 0)], s[(1, 1)], s[(2, 2)], s[(0, 1)], s[(0, 2)], s[(1, 2)], 0.0, 0.0]
                    && *s == s.transpose()
            })
    }

    /// The SIMD loops' rows are kept in step with the palette by every way of filling it,
    /// and are empty (not stale) once the palette is rigid again.
    #[test]
    fn rows_follow_the_palette() {
        for n in 1..20 {
            let stretched: Vec<Mat4> = (0..n)
                .map(|i| {
                    Mat4::new_nonuniform_scaling(&Vec3::new(1.0 + i as f32, 2.0, 0.5))
                        * Mat4::new_rotation(Vec3::y() * 0.3)
                })
                .collect();
            let mut p = DqPalette::from_matrices(&stretched);
            assert!(!p.is_rigid() && rows_match(&p), "{n} joints");
            p.set_from_matrices(&stretched[..n / 2 + 1]);
            assert!(!p.is_rigid() && rows_match(&p), "{n} joints, refilled shorter");
            // Joints with and without scale mixed, the first with scale anywhere.
            let mixed: Vec<Mat4> = (0..n)
                .map(|i| if i % 3 == n % 3 { stretched[i] } else { Mat4::new_rotation(Vec3::x() * 0.2) })
                .collect();
            p.set_from_matrices(&mixed);
            if n >= 3 {
                assert!(!p.is_rigid() && rows_match(&p), "{n} joints, mixed");
            } else {
                assert!(p.is_rigid() && p.rows().is_empty(), "{n} joints, none with scale");
            }
            p.set_from_rigid(&vec![DualQuat::identity(); n]);
            assert!(p.is_rigid() && p.rows().is_empty());
            p.set_from_matrices(&vec![Mat4::identity(); n]);
            assert!(p.is_rigid() && p.rows().is_empty());
            assert_eq!(p, DqPalette::from_rigid(&vec![DualQuat::identity(); n]));
        }
    }

    /// A joint's matrix splits into the rotation nearest it and a symmetric scale: a
    /// rotation `R₀` times a scale along turned axes, `R₀·B·D·Bᵀ`, gives back `R₀` and
    /// `B·D·Bᵀ`, where the columns' rotation would have been turned by the scale.
    #[test]
    fn a_scale_along_turned_axes_keeps_the_joints_rotation() {
        let r0 = Quat::from_euler_angles(0.2, 0.9, -0.4);
        let b = Quat::from_euler_angles(0.7, -0.3, 0.5).to_rotation_matrix().into_inner();
        let scale = b * Mat3::from_diagonal(&Vec3::new(0.6, 1.0, 1.8)) * b.transpose();
        let t = Vec3::new(0.5, -1.0, 2.0);
        let m = Mat4::new_translation(&t) * (r0.to_rotation_matrix().into_inner() * scale).to_homogeneous();
        let p = DqPalette::from_matrices(&[m, Mat4::identity()]);
        assert!(!p.is_rigid() && !p.is_uniform() && rows_match(&p));
        let q = p.dual_quats()[0];
        assert!(q.rotation().angle_to(&r0) < 1e-5, "rotation off by {}", q.rotation().angle_to(&r0));
        assert!((q.translation().vector - t).norm() < 1e-5);
        assert!((p.scales()[0] - scale).abs().max() < 1e-5, "{}", p.scales()[0]);
        // The columns' rotation is not the joint's: that split would have turned the mesh.
        let columns = dual::from_rigid_matrix(&m).rotation();
        assert!(columns.angle_to(&r0) > 1e-2);
        // A mirror still splits into a rotation and a symmetric scale whose product it is.
        let mirror = Mat4::new_nonuniform_scaling(&Vec3::new(-1.0, 1.0, 1.0)) * m;
        let p = DqPalette::from_matrices(&[mirror]);
        let a = p.dual_quats()[0].rotation().to_rotation_matrix().into_inner() * p.scales()[0];
        assert!((a - mirror.fixed_view::<3, 3>(0, 0)).abs().max() < 1e-5 && rows_match(&p));
    }

    /// Uniform scales within the tolerance are stored exactly as `s·I`, and a palette of
    /// them (rigid joints among them) is uniform, its rows holding `s` in lane 8. A scale
    /// that differs by 1e-5 between axes, a mirrored one, or one joint stretched makes the
    /// palette non-uniform.
    #[test]
    fn uniform_scales_are_exact() {
        let turn = |i: usize| Mat4::new_rotation(Vec3::new(0.3, -0.2, 0.5) * i as f32);
        let scaled = |i: usize, s: Vec3| turn(i) * Mat4::new_nonuniform_scaling(&s);
        let mats: Vec<Mat4> =
            (0..9).map(|i| if i % 3 == 0 { turn(i) } else { scaled(i, Vec3::repeat(0.5 + 0.7 * i as f32)) }).collect();
        let mut p = DqPalette::from_matrices(&mats);
        assert!(!p.is_rigid() && p.is_uniform() && rows_match(&p));
        for (i, (row, s)) in p.rows().iter().zip(p.scales()).enumerate() {
            let f = if i % 3 == 0 { 1.0 } else { 0.5 + 0.7 * i as f32 };
            assert!((s[(0, 0)] - f).abs() < 1e-5 * f, "joint {i}: {s}");
            assert_eq!(*s, Mat3::from_diagonal_element(s[(0, 0)]), "joint {i}: exactly s·I");
            assert_eq!(row.0[8], s[(0, 0)]);
        }
        for odd in [Vec3::new(2.0, 2.0, 2.00002), Vec3::new(2.0, -2.0, 2.0), Vec3::new(1.0, 1.5, 1.0)] {
            let mut m = mats.clone();
            m[4] = scaled(4, odd);
            p.set_from_matrices(&m);
            assert!(!p.is_rigid() && !p.is_uniform() && rows_match(&p), "{odd}");
        }
        p.set_from_rigid(&[DualQuat::identity()]);
        assert!(p.is_rigid() && p.is_uniform() && p.rows().is_empty());
    }

    #[test]
    fn set_rigid_replaces_scales_and_reuses_storage() {
        let stretched = Mat4::new_nonuniform_scaling(&Vec3::new(1.0, 2.0, 0.5));
        let mut p = DqPalette::from_matrices(&[stretched, Mat4::identity()]);
        assert!(!p.is_rigid());
        let q = DualQuat::from_parts(Vec3::new(1.0, 2.0, 3.0).into(), Quat::from_euler_angles(0.3, 0.0, 0.1));
        p.set_from_rigid(&[q, q]);
        assert!(p.is_rigid());
        assert_eq!(p.dual_quats(), &[q, q]);
        assert_eq!(p.scales(), &[Mat3::identity(); 2]);
        assert_eq!(p, DqPalette::from_rigid(&[q, q]));
        let (dq_ptr, s_ptr) = (p.dual_quats().as_ptr(), p.scales().as_ptr());
        p.set_rigid(1, |_| dual::from_rigid_matrix(&stretched));
        assert_eq!((p.len(), p.scales().len()), (1, 1));
        assert_eq!((p.dual_quats().as_ptr(), p.scales().as_ptr()), (dq_ptr, s_ptr), "no reallocation");
        assert!(p.dual_quats()[0].rotation().angle() < 1e-6 && p.scales()[0] == Mat3::identity());
    }
}
