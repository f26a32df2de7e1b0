//! CPU skinning over caller-owned slices.
//!
//! Every function checks its inputs in constant time before touching a vertex ([`check`]:
//! lengths, and that the palette covers [`Influences::joint_bound`]; the per-vertex joint
//! indices were checked once when the [`Influences`] were built), then runs a tight loop
//! that allocates nothing. Results:
//!
//! - [`skin`]: whichever method a [`Palette`] is for; the entry point most callers want.
//! - [`linear_blend`]: `p' = (Σ wᵢ·Pᵢ) · p` with the matrix palette `Pᵢ = model(jointᵢ) ·
//!   inverse_bindᵢ` (the book's matrix-palette path; also what GPUs run).
//! - [`linear_blend_transforms`]: `p' = Σ wᵢ · (Tᵢ · p)` with a [`Transform`] palette (the
//!   book's per-influence combine path). Equal to the matrix path up to rounding.
//! - [`dual_quaternion`]: dual-quaternion skinning with bind-space scale, as
//!   [`SkinMethod::Dq`](super::SkinMethod::Dq) defines it (the one definition every path of the project follows).
//! - [`rigid`]: each vertex follows only its strongest joint.
//!
//! Normals are transformed by the blended linear part and renormalized; with
//! [`NormalMode::InverseTranspose`] the inverse transpose is used instead, which keeps
//! normals perpendicular under non-uniform scale. Vertices without weights keep their
//! rest position and normal.
//!
//! **Speed.** [`linear_blend`] and [`dual_quaternion`] run the fastest [`Kernel`] the CPU
//! has (AVX-512, sixteen vertices a step, else AVX2 + FMA, detected at run time;
//! [`linear_blend_with`] and [`dual_quaternion_with`] pin one, and [`Kernel::Scalar`] is
//! always there), over the influences in their [`Influences::layout`] (`f32`, or unorm16
//! weights with `u16` or `u8` joints). The loops are specialised for 1, 2 and 4 influences a
//! vertex; other counts take a general loop. Renormalized normals use a reciprocal square
//! root estimate refined by one Newton step (relative error about 1e-7). Dual-quaternion
//! blends skip their hemisphere tests when no pair of joints that share a vertex has
//! rotations in opposite hemispheres ([`Influences::pivot_pairs`], checked once a call),
//! or when negating some joints' dual quaternions (the same transforms) makes it so: the
//! SIMD loops then blend such a copy of the palette and, in meshes of up to 262,144
//! vertices, test only the blocks of sixteen vertices that hold a vertex whose pair still
//! flips.
//! Splitting a mesh by influence count (so that most vertices run the 1- or 2-influence
//! loop) pays off more than anything else.
//!
//! ```
//! use anim_core::skin::skinning::{self, NormalMode, SkinningInput, SkinningOutput};
//! use anim_core::skin::{Influences, Palette, SkinMethod};
//! use anim_math::{Mat4, Vec3};
//!
//! // Two vertices: the first follows joint 0, the second is shared half and half.
//! let influences = Influences::new(2, vec![0, 0, 0, 1], vec![1.0, 0.0, 0.5, 0.5], 2)?;
//! let positions = [Vec3::new(1.0, 0.0, 0.0), Vec3::new(0.0, 1.0, 0.0)];
//! let normals = [Vec3::z(), Vec3::z()];
//! // Joint 0 stays, joint 1 moved 2 up: the palette a pose gives (see `Palette::update`).
//! let moved = [Mat4::identity(), Mat4::new_translation(&Vec3::new(0.0, 2.0, 0.0))];
//! let palette = Palette::from_matrices(SkinMethod::Lbs, &moved);
//!
//! let (mut p, mut n) = ([Vec3::zeros(); 2], [Vec3::zeros(); 2]);
//! let input = SkinningInput { influences: &influences, positions: &positions, normals: Some(&normals) };
//! let mut out = SkinningOutput { positions: &mut p, normals: Some(&mut n) };
//! skinning::skin(&input, &palette, NormalMode::Direct, &mut out)?;
//! assert_eq!(p[0], Vec3::new(1.0, 0.0, 0.0));
//! assert_eq!(p[1], Vec3::new(0.0, 2.0, 0.0)); // half of the 2 units
//! assert!((n[1] - Vec3::z()).norm() < 1e-6);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use super::error::SkinningError;
use super::mesh::{InfluenceLayout, Influences};
use super::palette::{DqPalette, Palette};
use anim_math::{DualQuat, Mat3, Mat4, Transform, Vec3};

#[cfg(target_arch = "x86_64")]
mod avx2_scaled;
#[cfg(target_arch = "x86_64")]
mod avx512;
#[cfg(target_arch = "x86_64")]
mod avx512_dq;
#[cfg(target_arch = "x86_64")]
mod avx512_scaled;
mod fast;
mod hemispheres;
mod kernel;
mod math;
mod source;
#[cfg(target_arch = "x86_64")]
use hemispheres::ROW_SIGN_JOINTS;
use hemispheres::{Hemispheres, SIGN_JOINTS, with_hemispheres};
pub use kernel::Kernel;
use math::{
    Cols, apply_normal, apply_point, dq_point, normal_in_range, normalized, rescaled_normal, rescaled_normal_matrix,
    rotate, transform_normal,
};

/// Skinning input: influences plus bind-pose positions and (optionally) normals.
#[derive(Clone, Copy, Debug)]
pub struct SkinningInput<'a> {
    /// Validated joint influences.
    pub influences: &'a Influences,
    /// Bind-pose positions, one a vertex.
    pub positions: &'a [Vec3],
    /// Bind-pose normals, one a vertex, or `None`.
    pub normals: Option<&'a [Vec3]>,
}

/// Skinning output, written in place.
#[derive(Debug)]
pub struct SkinningOutput<'a> {
    /// Skinned positions, one a vertex.
    pub positions: &'a mut [Vec3],
    /// Skinned normals, or `None` to skip normals.
    pub normals: Option<&'a mut [Vec3]>,
}

/// How normals are transformed by the linear-blend paths.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NormalMode {
    /// By the blended matrix itself (exact for rotation and uniform scale), renormalized.
    #[default]
    Direct,
    /// By the inverse transpose of the blended matrix (correct under non-uniform scale),
    /// renormalized.
    InverseTranspose,
    /// By the blended matrix, **not** renormalized: blending shortens normals slightly where
    /// joints disagree, and scale changes their length. For renderers whose shaders
    /// normalize anyway (ozz-animation's skinning job behaves this way); about a quarter
    /// faster with four influences. The GPU paths always renormalize.
    DirectUnnormalized,
}

/// The checks every skinning function runs, in constant time, for any skinning backend
/// (the GPU skinner calls it too): input and output lengths match the influences'
/// vertex count, output normals come with input normals, and the palette covers
/// [`Influences::joint_bound`].
///
/// `out_positions` and `out_normals` are the lengths of the output buffers (`None`: no
/// normals are written).
///
/// # Errors
/// [`SkinningError::NoNormals`] (normals asked of a mesh without any),
/// [`SkinningError::WrongLength`] or [`SkinningError::PaletteTooShort`].
pub fn check(
    input: &SkinningInput,
    palette_len: usize,
    out_positions: usize,
    out_normals: Option<usize>,
) -> Result<(), SkinningError> {
    let n = input.influences.vertex_count();
    // Output normals asked of a mesh without normals (glTF files may omit them): say so
    // and point at the fix, rather than report a length.
    let no_input_normals = input.normals.is_none_or(<[Vec3]>::is_empty);
    if n > 0 && out_normals.is_some() && no_input_normals {
        return Err(SkinningError::NoNormals { vertices: n });
    }
    let lens = [
        ("input positions", input.positions.len()),
        ("output positions", out_positions),
        ("input normals", input.normals.map_or(n, <[Vec3]>::len)),
        ("output normals", out_normals.unwrap_or(n)),
    ];
    for (what, got) in lens {
        if got != n {
            return Err(SkinningError::WrongLength(crate::LengthMismatch::new(what, got, n)));
        }
    }
    if palette_len < input.influences.joint_bound() {
        return Err(SkinningError::PaletteTooShort { got: palette_len, needed: input.influences.joint_bound() });
    }
    Ok(())
}

fn validate(input: &SkinningInput, palette_len: usize, out: &SkinningOutput) -> Result<(), SkinningError> {
    check(input, palette_len, out.positions.len(), out.normals.as_ref().map(|s| s.len()))
}

/// Skins with whichever method `palette` is for: [`linear_blend`] with `normal_mode` for
/// a matrix palette, [`dual_quaternion`] for a dual-quaternion one (which transforms
/// normals as [`SkinMethod::Dq`](super::SkinMethod::Dq) defines, whatever `normal_mode` says).
///
/// # Errors
/// As [`linear_blend`].
pub fn skin(
    input: &SkinningInput,
    palette: &Palette,
    normal_mode: NormalMode,
    out: &mut SkinningOutput,
) -> Result<(), SkinningError> {
    match palette {
        Palette::Matrices(m) => linear_blend(input, m, normal_mode, out),
        Palette::DualQuats(d) => dual_quaternion(input, d, out),
    }
}

/// Copies rest position and normal for vertices without weights.
fn keep_unweighted(input: &SkinningInput, out: &mut SkinningOutput) {
    for &v in input.influences.unweighted() {
        let v = v as usize;
        out.positions[v] = input.positions[v];
        if let (Some(dst), Some(src)) = (out.normals.as_deref_mut(), input.normals) {
            dst[v] = src[v];
        }
    }
}

/// Dispatches a kernel generic over the influence count `N` (0 = any count).
macro_rules! dispatch {
    ($per:expr, $kernel:ident($($arg:expr),*)) => {
        match $per {
            1 => $kernel::<1>($($arg),*),
            2 => $kernel::<2>($($arg),*),
            3 => $kernel::<3>($($arg),*),
            4 => $kernel::<4>($($arg),*),
            8 => $kernel::<8>($($arg),*),
            _ => $kernel::<0>($($arg),*),
        }
    };
}

/// True when the CPU runs AVX2 (checked once, then cached by the standard library).
#[cfg(target_arch = "x86_64")]
#[inline]
fn avx2() -> bool {
    std::arch::is_x86_feature_detected!("avx2")
}

/// The same LBS loops compiled for AVX2: the matrix blend runs 8 lanes wide. Only the
/// instruction set differs, so results match the baseline loop bit for bit in practice
/// (no fused multiply-add is introduced).
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn lbs_avx2(input: &SkinningInput, palette: &[Mat4], mode: NormalMode, out: &mut SkinningOutput) {
    dispatch!(input.influences.per_vertex(), lbs_kernel(input, palette, mode, out));
}

/// Linear blend skinning with a matrix palette.
///
/// # Errors
/// Length mismatches, or a palette shorter than [`Influences::joint_bound`].
pub fn linear_blend(
    input: &SkinningInput,
    palette: &[Mat4],
    normal_mode: NormalMode,
    out: &mut SkinningOutput,
) -> Result<(), SkinningError> {
    linear_blend_with(input, palette, normal_mode, Kernel::best(), out)
}

/// [`linear_blend`] with a chosen [`Kernel`] (one this CPU lacks runs as
/// [`Kernel::Scalar`]), to compare the loops or pin one. Every kernel reads the
/// influences in their [`Influences::layout`] and gives the same result up to float
/// reassociation; [`NormalMode::InverseTranspose`] and palettes with extreme scales always
/// run scalar loops.
///
/// # Errors
/// As [`linear_blend`].
pub fn linear_blend_with(
    input: &SkinningInput,
    palette: &[Mat4],
    normal_mode: NormalMode,
    kernel: Kernel,
    out: &mut SkinningOutput,
) -> Result<(), SkinningError> {
    validate(input, palette.len(), out)?;
    let kernel = if kernel.available() { kernel } else { Kernel::Scalar };
    if input.influences.joint_bound() == 0 || out.positions.is_empty() {
        // Every vertex is unweighted.
        keep_unweighted(input, out);
        return Ok(());
    }
    if out.normals.is_some() && extreme_linear_parts(palette) {
        lbs_extreme(input, palette, normal_mode, out);
        keep_unweighted(input, out);
        return Ok(());
    }
    let inverse_transpose = out.normals.is_some() && normal_mode == NormalMode::InverseTranspose;
    if inverse_transpose && input.influences.layout() == InfluenceLayout::F32 {
        #[cfg(target_arch = "x86_64")]
        if kernel != Kernel::Scalar && avx2() {
            // SAFETY: `avx2()` checked at run time that this CPU supports AVX2.
            unsafe { lbs_avx2(input, palette, normal_mode, out) };
            keep_unweighted(input, out);
            return Ok(());
        }
        dispatch!(input.influences.per_vertex(), lbs_kernel(input, palette, normal_mode, out));
        keep_unweighted(input, out);
        return Ok(());
    }
    let (nin, mode) = match (input.normals, normal_mode) {
        (Some(n), _) if out.normals.is_none() => (n, fast::POS),
        (Some(n), NormalMode::Direct) => (n, fast::UNIT),
        (Some(n), NormalMode::DirectUnnormalized) => (n, fast::RAW),
        (Some(n), NormalMode::InverseTranspose) => (n, fast::IT),
        (None, _) => (&[][..], fast::POS),
    };
    let job = fast::Job {
        per: input.influences.per_vertex(),
        palette,
        pos: input.positions,
        nin,
        out_p: &mut *out.positions,
        out_n: out.normals.as_deref_mut().unwrap_or(&mut []),
        coherent: false,
        risky: &[],
    };
    fast::lbs(input.influences.view(), kernel, mode, job);
    keep_unweighted(input, out);
    Ok(())
}

/// True when some palette matrix's linear part has its largest entry beyond 1e9 or within
/// (0, 1e-7): blended from such matrices, the fast loops' normals could overflow (the
/// inverse transpose's cofactors are squares of entries, and their squared length a fourth
/// power) or fall under the normalization's `1e-30` clamp. One pass over the palette, so
/// the per-vertex loops stay as they are for every ordinary palette.
fn extreme_linear_parts(palette: &[Mat4]) -> bool {
    palette.iter().any(|m| {
        let largest = m.fixed_view::<3, 3>(0, 0).amax();
        largest > 1e9 || (largest > 0.0 && largest < 1e-7)
    })
}

/// Linear blend skinning for a palette with [`extreme_linear_parts`]: every normal is
/// transformed by the blended matrix rescaled to a largest entry of 1 ([`rescaled_normal`]),
/// so it is finite and unit (left at that length in [`NormalMode::DirectUnnormalized`],
/// where the unscaled one would be infinite or lost to underflow).
#[cold]
#[inline(never)]
fn lbs_extreme(input: &SkinningInput, palette: &[Mat4], mode: NormalMode, out: &mut SkinningOutput) {
    let per = input.influences.per_vertex();
    let joints = input.influences.joints().chunks_exact(per);
    let weights = input.influences.weights().chunks_exact(per);
    for (v, (js, ws)) in joints.zip(weights).enumerate() {
        let c = blend_matrix::<0>(per, js, ws, palette);
        out.positions[v] = apply_point(&c, &input.positions[v]);
        if let (Some(src), Some(dst)) = (input.normals, out.normals.as_deref_mut()) {
            dst[v] = match mode {
                NormalMode::InverseTranspose => rescaled_normal::<true>(&c, &src[v]),
                NormalMode::Direct | NormalMode::DirectUnnormalized => rescaled_normal::<false>(&c, &src[v]),
            };
        }
    }
}

#[inline(always)]
fn blend_matrix<const N: usize>(per: usize, js: &[u16], ws: &[f32], palette: &[Mat4]) -> Cols {
    let n = if N == 0 { per } else { N };
    if N == 1 {
        // One influence: its weight is 1 (or 0 for an unweighted vertex, fixed up later).
        return palette[usize::from(js[0])].data.0;
    }
    let mut c: Cols = [[0.0; 4]; 4];
    for k in 0..n {
        let w = ws[k];
        let m = &palette[usize::from(js[k])].data.0;
        for col in 0..4 {
            for row in 0..4 {
                c[col][row] += w * m[col][row];
            }
        }
    }
    c
}

#[inline(always)]
fn lbs_kernel<const N: usize>(input: &SkinningInput, palette: &[Mat4], mode: NormalMode, out: &mut SkinningOutput) {
    match (input.normals, out.normals.as_deref_mut(), mode) {
        (Some(src), Some(dst), NormalMode::Direct) => {
            lbs_loop::<N, true, false, false>(input, palette, out.positions, src, dst)
        }
        (Some(src), Some(dst), NormalMode::InverseTranspose) => {
            lbs_loop::<N, true, true, false>(input, palette, out.positions, src, dst)
        }
        (Some(src), Some(dst), NormalMode::DirectUnnormalized) => {
            lbs_loop::<N, true, false, true>(input, palette, out.positions, src, dst)
        }
        _ => lbs_loop::<N, false, false, false>(input, palette, out.positions, &[], &mut []),
    }
}

/// The LBS loop, monomorphized on influence count, normals on/off, normal mode (`IT`:
/// inverse transpose) and `RAW` (normals left unnormalized).
///
/// With renormalized normals, vertices go in blocks of four so that the four
/// normalizations (a square root and a division each, with long latency) overlap.
#[inline(always)]
fn lbs_loop<const N: usize, const NORMALS: bool, const IT: bool, const RAW: bool>(
    input: &SkinningInput,
    palette: &[Mat4],
    out_p: &mut [Vec3],
    src_n: &[Vec3],
    dst_n: &mut [Vec3],
) {
    let per = input.influences.per_vertex();
    let n = if N == 0 { per } else { N };
    let count = out_p.len();
    // Lengths were validated; restating them lets the compiler drop bounds checks.
    let pos = &input.positions[..count];
    let joints = &input.influences.joints()[..count * n];
    let weights = &input.influences.weights()[..count * n];
    if !NORMALS {
        for (v, o) in out_p.iter_mut().enumerate() {
            *o = apply_point(
                &blend_matrix::<N>(per, &joints[v * n..v * n + n], &weights[v * n..v * n + n], palette),
                &pos[v],
            );
        }
        return;
    }
    let (src_n, dst_n) = (&src_n[..count], &mut dst_n[..count]);
    if RAW {
        for v in 0..count {
            let c = blend_matrix::<N>(per, &joints[v * n..v * n + n], &weights[v * n..v * n + n], palette);
            out_p[v] = apply_point(&c, &pos[v]);
            let r = transform_normal::<IT>(&c, &src_n[v]);
            dst_n[v] = Vec3::new(r[0], r[1], r[2]);
        }
        return;
    }
    let blocks = count / 4 * 4;
    for b in (0..blocks).step_by(4) {
        let mut raw = [[0.0f32; 3]; 4];
        let mut l2 = [0.0f32; 4];
        for k in 0..4 {
            let c = blend_matrix::<N>(
                per,
                &joints[(b + k) * n..(b + k + 1) * n],
                &weights[(b + k) * n..(b + k + 1) * n],
                palette,
            );
            out_p[b + k] = apply_point(&c, &pos[b + k]);
            raw[k] = transform_normal::<IT>(&c, &src_n[b + k]);
            l2[k] = raw[k][0] * raw[k][0] + raw[k][1] * raw[k][1] + raw[k][2] * raw[k][2];
        }
        let mut inv = [0.0f32; 4];
        for k in 0..4 {
            inv[k] = 1.0 / l2[k].max(1e-30).sqrt();
        }
        for k in 0..4 {
            dst_n[b + k] = Vec3::new(raw[k][0] * inv[k], raw[k][1] * inv[k], raw[k][2] * inv[k]);
        }
    }
    for v in blocks..count {
        let c = blend_matrix::<N>(per, &joints[v * n..v * n + n], &weights[v * n..v * n + n], palette);
        out_p[v] = apply_point(&c, &pos[v]);
        dst_n[v] = normalized(transform_normal::<IT>(&c, &src_n[v]));
    }
}

/// Linear blend skinning through [`Transform`]s: each influence's transform is applied to
/// the vertex and the results are blended (the book's first CPU path).
///
/// # Errors
/// As [`linear_blend`].
pub fn linear_blend_transforms(
    input: &SkinningInput,
    palette: &[Transform],
    normal_mode: NormalMode,
    out: &mut SkinningOutput,
) -> Result<(), SkinningError> {
    validate(input, palette.len(), out)?;
    let per = input.influences.per_vertex();
    let joints = input.influences.joints().chunks_exact(per);
    let weights = input.influences.weights().chunks_exact(per);
    for (v, (js, ws)) in joints.zip(weights).enumerate() {
        let p = &input.positions[v];
        let mut acc = Vec3::zeros();
        let mut nacc = Vec3::zeros();
        for (j, w) in js.iter().zip(ws) {
            if *w == 0.0 {
                continue;
            }
            let t = &palette[usize::from(*j)];
            acc += t.transform_point(p) * *w;
            if let Some(ns) = input.normals {
                let n = &ns[v];
                nacc += match normal_mode {
                    NormalMode::Direct | NormalMode::DirectUnnormalized => t.transform_vector(n),
                    NormalMode::InverseTranspose => {
                        // (R·S)⁻ᵀ = R·S⁻¹; scaled by det(S) to stay finite with zero scale.
                        let s = t.scale;
                        t.rotation * Vec3::new(n.x * s.y * s.z, n.y * s.x * s.z, n.z * s.x * s.y)
                    }
                } * *w;
            }
        }
        out.positions[v] = acc;
        if let Some(dst) = out.normals.as_deref_mut() {
            dst[v] =
                if normal_mode == NormalMode::DirectUnnormalized { nacc } else { normalized([nacc.x, nacc.y, nacc.z]) };
        }
    }
    keep_unweighted(input, out);
    Ok(())
}

/// Dual-quaternion skinning with bind-space scale, exactly as [`SkinMethod::Dq`](super::SkinMethod::Dq) defines
/// it. A rigid palette ([`DqPalette::is_rigid`]) takes a faster loop that skips the scale.
///
/// # Errors
/// As [`linear_blend`].
pub fn dual_quaternion(
    input: &SkinningInput,
    palette: &DqPalette,
    out: &mut SkinningOutput,
) -> Result<(), SkinningError> {
    dual_quaternion_with(input, palette, Kernel::best(), out)
}

/// [`dual_quaternion`] with a chosen [`Kernel`] (one this CPU lacks runs as
/// [`Kernel::Scalar`]). Rigid palettes run the kernel's loop over the influences'
/// [`Influences::layout`]; palettes with scale run the scale-aware loop, which reads the
/// `f32` weights.
///
/// # Errors
/// As [`linear_blend`].
pub fn dual_quaternion_with(
    input: &SkinningInput,
    palette: &DqPalette,
    kernel: Kernel,
    out: &mut SkinningOutput,
) -> Result<(), SkinningError> {
    validate(input, palette.len(), out)?;
    let kernel = if kernel.available() { kernel } else { Kernel::Scalar };
    if input.influences.joint_bound() == 0 || out.positions.is_empty() {
        // Every vertex is unweighted.
    } else if palette.is_rigid() {
        let normals = out.normals.is_some();
        let mut run = |h: Hemispheres<DualQuat>| {
            let job = dq_job(input, out, h.palette, h.coherent, h.risky);
            fast::dq(input.influences.view(), kernel, normals, job);
        };
        if kernel == Kernel::Scalar {
            // The scalar loop tests every influence itself.
            run(Hemispheres { palette: palette.dual_quats(), coherent: false, risky: &[] });
        } else {
            with_hemispheres::<_, SIGN_JOINTS, _>(input.influences, palette.dual_quats(), run);
        }
    } else {
        dq_scaled(input, palette, kernel, out);
    }
    keep_unweighted(input, out);
    Ok(())
}

/// The dual-quaternion loops' job: `input` into `out` (normals when both have them),
/// blending `palette` with the hemisphere facts `coherent` and `risky`.
fn dq_job<'a>(
    input: &SkinningInput<'a>,
    out: &'a mut SkinningOutput,
    palette: &'a [DualQuat],
    coherent: bool,
    risky: &'a [u64],
) -> fast::Job<'a, DualQuat> {
    let normals = out.normals.is_some();
    fast::Job {
        per: input.influences.per_vertex(),
        palette,
        pos: input.positions,
        nin: input.normals.filter(|_| normals).unwrap_or(&[]),
        out_p: &mut *out.positions,
        out_n: out.normals.as_deref_mut().unwrap_or(&mut []),
        coherent,
        risky,
    }
}

/// [`dq_scaled`]'s SIMD loops (x86-64, `kernel` not scalar).
#[cfg(target_arch = "x86_64")]
fn dq_scaled_simd(input: &SkinningInput, palette: &DqPalette, kernel: Kernel, out: &mut SkinningOutput) {
    let (joints, weights) = (input.influences.joints(), input.influences.weights());
    let rows = palette.rows();
    assert_eq!(rows.len(), palette.len(), "a palette with scale has a row per joint");
    let influences = input.influences;
    if kernel == Kernel::Avx512 {
        with_hemispheres::<_, ROW_SIGN_JOINTS, _>(influences, rows, |h| {
            let job = dq_job(input, out, palette.dual_quats(), h.coherent, h.risky);
            // SAFETY: the caller checked that the CPU runs AVX-512; the input was
            // validated, and the palette has one row a joint (asserted); `is_uniform`
            // says whether every row's scale is uniform.
            unsafe { avx512_scaled::run(joints, weights, job, h.palette, palette.is_uniform()) };
        });
        return;
    }
    with_hemispheres::<_, SIGN_JOINTS, _>(influences, palette.dual_quats(), |h| {
        let job = dq_job(input, out, h.palette, h.coherent, h.risky);
        // SAFETY: the caller checked that the CPU runs AVX2 and FMA (`kernel` is neither
        // scalar nor AVX-512); the input was validated, and the palette (not rigid: this
        // function's caller checked) has one row a joint (asserted); `is_uniform` says
        // whether every row's scale is uniform.
        unsafe { avx2_scaled::run(joints, weights, job, rows, palette.is_uniform()) };
    });
}

/// The scale-aware dual-quaternion loops: AVX-512 (sixteen vertices a step) or AVX2 + FMA
/// (eight), when `kernel` is one of them, else the scalar loop. They read the `f32` weights.
fn dq_scaled(input: &SkinningInput, palette: &DqPalette, kernel: Kernel, out: &mut SkinningOutput) {
    // Elsewhere than on x86-64 only the scalar loop exists, whatever `kernel` says.
    #[cfg(not(target_arch = "x86_64"))]
    let _ = kernel;
    #[cfg(target_arch = "x86_64")]
    if kernel != Kernel::Scalar {
        dq_scaled_simd(input, palette, kernel, out);
        return;
    }
    dispatch!(input.influences.per_vertex(), dq_scaled_kernel(input, palette, out));
}

/// The scale-aware dual-quaternion loop ([`SkinMethod::Dq`](super::SkinMethod::Dq) steps 1 to 4).
/// Compiled as a function of its own for each influence count: inlined into
/// [`dq_scaled`], its code depended on what else that function held, and a change there
/// (the hemisphere preparation of the SIMD loops) cost it a quarter more instructions in a
/// default downstream build (callgrind: 477 → 599 a vertex on the fixture).
#[inline(never)]
fn dq_scaled_kernel<const N: usize>(input: &SkinningInput, palette: &DqPalette, out: &mut SkinningOutput) {
    let per = input.influences.per_vertex();
    let n = if N == 0 { per } else { N };
    let count = out.positions.len();
    let (dqs, scales) = (palette.dual_quats(), palette.scales());
    let pos = &input.positions[..count];
    let joints = &input.influences.joints()[..count * n];
    let weights = &input.influences.weights()[..count * n];
    for v in 0..count {
        let (js, ws) = (&joints[v * n..v * n + n], &weights[v * n..v * n + n]);
        let (mut r, mut d, l2) = blend_dq::<N>(per, js, ws, dqs);
        let mut s = Mat3::zeros();
        for k in 0..n {
            s += scales[usize::from(js[k])] * ws[k];
        }
        let inv = 1.0 / l2.max(1e-30).sqrt();
        // The dual part quartered, as dq_point takes it.
        let dinv = inv * 0.25;
        for i in 0..4 {
            r[i] *= inv;
            d[i] *= dinv;
        }
        let p = s * pos[v];
        out.positions[v] = dq_point(&r, &d, [p.x, p.y, p.z]);
        if let (Some(src), Some(dst)) = (input.normals, out.normals.as_deref_mut()) {
            let mut nrm = anim_math::normal_matrix(&s) * src[v];
            if !normal_in_range(nrm.norm_squared()) {
                nrm = rescaled_normal_matrix(&s) * src[v];
            }
            dst[v] = normalized(rotate(&r, [nrm.x, nrm.y, nrm.z]));
        }
    }
}

/// Blended dual quaternion as (real, dual) with nalgebra's `[i, j, k, w]` order, **not yet
/// normalized**, and the squared norm of its real part.
#[inline(always)]
fn blend_dq<const N: usize>(per: usize, js: &[u16], ws: &[f32], palette: &[DualQuat]) -> ([f32; 4], [f32; 4], f32) {
    let n = if N == 0 { per } else { N };
    let q0 = palette[usize::from(js[0])].as_ref();
    let pivot = q0.real.coords;
    let mut r = [0.0f32; 4];
    let mut d = [0.0f32; 4];
    for k in 0..n {
        let q = palette[usize::from(js[k])].as_ref();
        let (qr, qd) = (&q.real.coords, &q.dual.coords);
        let dot = qr[0] * pivot[0] + qr[1] * pivot[1] + qr[2] * pivot[2] + qr[3] * pivot[3];
        let w = if dot < 0.0 { -ws[k] } else { ws[k] };
        for i in 0..4 {
            r[i] += w * qr[i];
            d[i] += w * qd[i];
        }
    }
    let l2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + r[3] * r[3];
    (r, d, l2)
}

/// The rigid DQ loop before the kernels of `fast` (kept as an independent baseline for the
/// tests).
#[cfg(test)]
#[inline(always)]
fn dq_kernel<const N: usize>(input: &SkinningInput, palette: &[DualQuat], out: &mut SkinningOutput) {
    let per = input.influences.per_vertex();
    let n = if N == 0 { per } else { N };
    let count = out.positions.len();
    let pos = &input.positions[..count];
    let joints = &input.influences.joints()[..count * n];
    let weights = &input.influences.weights()[..count * n];
    let normals = match (input.normals, out.normals.as_deref_mut()) {
        (Some(src), Some(dst)) => Some((&src[..count], &mut dst[..count])),
        _ => None,
    };
    let (out_p, mut normals) = (&mut out.positions[..count], normals);
    // Blocks of four: the four normalizations (sqrt and division) run as one vector op.
    let mut v = 0;
    while v < count {
        let m = (count - v).min(4);
        let mut q = [([0.0f32; 4], [0.0f32; 4]); 4];
        let mut l2 = [1.0f32; 4];
        for k in 0..m {
            let (r, d, l) = blend_dq::<N>(
                per,
                &joints[(v + k) * n..(v + k + 1) * n],
                &weights[(v + k) * n..(v + k + 1) * n],
                palette,
            );
            q[k] = (r, d);
            l2[k] = l;
        }
        let mut inv = [0.0f32; 4];
        for k in 0..4 {
            inv[k] = 1.0 / l2[k].max(1e-30).sqrt();
        }
        for k in 0..m {
            let (mut r, mut d) = q[k];
            // The dual part quartered, as dq_point takes it.
            let dinv = inv[k] * 0.25;
            for i in 0..4 {
                r[i] *= inv[k];
                d[i] *= dinv;
            }
            let p = &pos[v + k];
            out_p[v + k] = dq_point(&r, &d, [p.x, p.y, p.z]);
            if let Some((src, dst)) = normals.as_mut() {
                let nrm = &src[v + k];
                // A rotation keeps length: the normal needs no renormalization.
                let rn = rotate(&r, [nrm.x, nrm.y, nrm.z]);
                dst[v + k] = Vec3::new(rn[0], rn[1], rn[2]);
            }
        }
        v += m;
    }
}

/// Rigid skinning: each vertex follows only its strongest joint (the first of equal
/// weights), as in a one-joint-per-vertex rig. Cracks open where neighbouring vertices
/// follow different joints; that is what smooth skinning fixes.
///
/// # Errors
/// As [`linear_blend`].
pub fn rigid(input: &SkinningInput, palette: &[Mat4], out: &mut SkinningOutput) -> Result<(), SkinningError> {
    validate(input, palette.len(), out)?;
    let per = input.influences.per_vertex();
    let joints = input.influences.joints().chunks_exact(per);
    let weights = input.influences.weights().chunks_exact(per);
    for (v, (js, ws)) in joints.zip(weights).enumerate() {
        let mut best = 0;
        for k in 1..per {
            if ws[k] > ws[best] {
                best = k;
            }
        }
        let c = &palette[usize::from(js[best])].data.0;
        out.positions[v] = apply_point(c, &input.positions[v]);
        if let (Some(src), Some(dst)) = (input.normals, out.normals.as_deref_mut()) {
            dst[v] = apply_normal::<false>(c, &src[v]);
        }
    }
    keep_unweighted(input, out);
    Ok(())
}

#[cfg(test)]
mod tests;
