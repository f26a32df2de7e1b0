//! The skinning kernels and influence layouts: every [`Kernel`] agrees with the scalar loop
//! on every layout, the compact layouts agree with `f32` within their quantization bound,
//! quantized weights sum to exactly one, and the fast renormalization stays within its
//! error bound.
//!
//! A test comparing kernels runs every one of them or fails: a kernel this CPU lacks is
//! passed over only when `ANIM_SKIP_KERNELS` names it (`tests/common/kernels.rs`), and each
//! such test prints the kernels it ran.

use anim_core::skin::mesh::{InfluenceLayout, UNORM16_ONE};
use anim_core::skin::skinning::{
    Kernel, NormalMode, SkinningInput, SkinningOutput, dual_quaternion, dual_quaternion_with, linear_blend_with,
};
use anim_core::skin::{DqPalette, Influences, SkinningError};
use anim_math::{DualQuat, Mat4, Quat, Transform, Vec3};
use nalgebra::Unit;

use anim_testkit::rng::Rng;

const LAYOUTS: [InfluenceLayout; 3] = [InfluenceLayout::F32, InfluenceLayout::U16Unorm16, InfluenceLayout::U8Unorm16];
const KERNELS: [Kernel; 3] = [Kernel::Scalar, Kernel::Avx2Fma, Kernel::Avx512];

/// A kernel's name in `ANIM_SKIP_KERNELS`, or `None` for the scalar loop, which every CPU
/// runs. A kernel added to [`Kernel`] fails here until it is named (and listed in
/// [`KERNELS`] and in `anim_testkit::kernels`).
fn skip_name(kernel: Kernel) -> Option<&'static str> {
    match kernel {
        Kernel::Scalar => None,
        Kernel::Avx2Fma => Some("avx2"),
        Kernel::Avx512 => Some("avx512"),
        other => panic!("{other:?} has no name in ANIM_SKIP_KERNELS: add it to skip_name and KERNELS"),
    }
}

/// The kernels of [`KERNELS`] that `test` runs: all of them, less those the CPU lacks and
/// `ANIM_SKIP_KERNELS` names (any other missing kernel fails the test). Prints which.
fn kernels_to_run(test: &str) -> Vec<Kernel> {
    let run: Vec<Kernel> = KERNELS
        .into_iter()
        .filter(|&kernel| match skip_name(kernel) {
            None => true,
            Some(name) => {
                // The CPU flags are read here, independently of `Kernel::available`, which
                // must agree with them.
                let has = anim_testkit::kernels::cpu_has(name);
                assert_eq!(kernel.available(), has, "{kernel:?}.available() disagrees with the CPU flags");
                anim_testkit::kernels::require_kernel(name, has)
            }
        })
        .collect();
    eprintln!("{test}: kernels run: {run:?}");
    run
}

/// A random mesh: `verts` vertices, `per` slots each (some zero, one vertex unweighted),
/// positions within 2 units, unit normals; and a palette of `joints` rigid transforms with
/// some uniform scale.
fn scene(seed: u32, verts: usize, per: usize, joints: usize) -> (Influences, Vec<Vec3>, Vec<Vec3>, Vec<Mat4>) {
    let mut rng = Rng(seed);
    let mut js = Vec::new();
    let mut ws = Vec::new();
    for v in 0..verts {
        for k in 0..per {
            js.push((rng.next_f32() * joints as f32) as u16 % joints as u16);
            let zero = v == 3 || (k > 0 && rng.next_f32() < 0.2);
            ws.push(if zero { 0.0 } else { rng.range(0.05, 2.0) });
        }
    }
    let inf = Influences::new(per, js, ws, joints).unwrap();
    let pos: Vec<Vec3> = (0..verts).map(|_| rng.vec3(2.0)).collect();
    let nrm: Vec<Vec3> = (0..verts).map(|_| (rng.vec3(1.0) + Vec3::new(0.0, 0.0, 1.5)).normalize()).collect();
    let pal = (0..joints)
        .map(|_| {
            let r = Quat::from_euler_angles(rng.range(-3.0, 3.0), rng.range(-1.5, 1.5), rng.range(-3.0, 3.0));
            let s = rng.range(0.8, 1.2);
            Transform::new(rng.vec3(3.0), r, Vec3::new(s, s, s)).to_matrix()
        })
        .collect();
    (inf, pos, nrm, pal)
}

const MODES: [Option<NormalMode>; 4] =
    [None, Some(NormalMode::Direct), Some(NormalMode::DirectUnnormalized), Some(NormalMode::InverseTranspose)];

fn lbs(
    inf: &Influences,
    pos: &[Vec3],
    nrm: &[Vec3],
    pal: &[Mat4],
    mode: Option<NormalMode>,
    kernel: Kernel,
) -> (Vec<Vec3>, Vec<Vec3>) {
    let (mut p, mut n) = (vec![Vec3::zeros(); pos.len()], vec![Vec3::zeros(); pos.len()]);
    let input = SkinningInput { influences: inf, positions: pos, normals: mode.map(|_| nrm) };
    let mut out = SkinningOutput { positions: &mut p, normals: mode.map(|_| &mut n[..]) };
    linear_blend_with(&input, pal, mode.unwrap_or_default(), kernel, &mut out).unwrap();
    (p, n)
}

/// Every kernel gives the scalar loop's result on every layout, influence count and normal
/// mode, up to float reassociation (positions are within 7 units, so 1e-5 is a few ulps
/// times the number of terms); renormalized normals are unit within the fast
/// renormalization's bound. Unweighted vertex 3 keeps its rest position and normal.
/// Vertex counts cover the AVX-512 loop's full blocks of sixteen, a last block of every
/// length from 1 to 16, and a count that is a multiple of 16; 9 influences take the
/// compact layouts' per-weight decoding (more slots than a block decodes at once). Counts
/// past 256 cross the AVX2 renormalized loop's chunks (a chunk ending on a full group of
/// eight normals, one ending with a remainder, and a last chunk of one vertex).
#[test]
fn kernels_match_the_scalar_loop_on_every_layout() {
    let kernels = kernels_to_run("kernels_match_the_scalar_loop_on_every_layout");
    let cases = [1usize, 2, 3, 4, 5, 8, 9].into_iter().flat_map(|per| [(per, 37), (per, 48)]);
    let tails = (4..=19).map(|verts| (4, verts + 16));
    let chunks = [(4, 267), (4, 512), (2, 513)];
    for (per, verts) in cases.chain(tails).chain(chunks) {
        let (inf, pos, nrm, pal) = scene(7 + per as u32 + verts as u32, verts, per, 12);
        for layout in LAYOUTS {
            let inf = inf.clone().with_layout(layout).unwrap();
            assert_eq!(inf.layout(), layout);
            for mode in MODES {
                let (rp, rn) = lbs(&inf, &pos, &nrm, &pal, mode, Kernel::Scalar);
                for &kernel in &kernels {
                    let (p, n) = lbs(&inf, &pos, &nrm, &pal, mode, kernel);
                    for v in 0..pos.len() {
                        let what =
                            format!("{per} influences, {verts} vertices, {layout:?}, {mode:?}, {kernel:?}, vertex {v}");
                        assert!((p[v] - rp[v]).norm() < 1e-5, "{what}: {} vs {}", p[v], rp[v]);
                        if mode.is_some() {
                            assert!((n[v] - rn[v]).norm() < 2e-6, "{what}: normal {} vs {}", n[v], rn[v]);
                        }
                        if mode.is_some_and(|m| m != NormalMode::DirectUnnormalized) {
                            assert!((n[v].norm() - 1.0).abs() < 2e-6, "{what}: |n| = {}", n[v].norm());
                        }
                    }
                    assert_eq!((p[3], mode.map(|_| n[3])), (pos[3], mode.map(|_| nrm[3])), "unweighted vertex");
                }
            }
        }
    }
}

/// Quantized weights: stored plus derived sum to exactly 65535 for every weighted vertex,
/// each within 1/65535 of the validated weight (largest-remainder rounding); u8 joints are
/// the u16 ones.
#[test]
fn unorm16_weights_sum_to_one_within_the_decode_bound() {
    for per in [1usize, 2, 3, 4, 8] {
        let (inf, ..) = scene(100 + per as u32, 500, per, 40);
        for layout in [InfluenceLayout::U16Unorm16, InfluenceLayout::U8Unorm16] {
            let q = inf.clone().with_layout(layout).unwrap();
            let stored = q.unorm16_weights().expect("a compact layout stores unorm16 weights");
            assert_eq!(stored.len(), q.vertex_count() * (per - 1));
            if layout == InfluenceLayout::U8Unorm16 {
                let j8: Vec<u16> = q.joints_u8().unwrap().iter().map(|&j| u16::from(j)).collect();
                assert_eq!(j8, q.joints());
            }
            for v in 0..q.vertex_count() {
                let w = &q.weights()[v * per..(v + 1) * per];
                if w.iter().all(|&w| w == 0.0) {
                    continue;
                }
                let s = &stored[v * (per - 1)..(v + 1) * (per - 1)];
                let sum: u32 = s.iter().map(|&k| u32::from(k)).sum();
                assert!(sum <= UNORM16_ONE, "vertex {v}: stored weights exceed one");
                let mut k: Vec<u32> = s.iter().map(|&k| u32::from(k)).collect();
                k.push(UNORM16_ONE - sum);
                assert_eq!(k.iter().sum::<u32>(), UNORM16_ONE);
                for (slot, (&k, &w)) in k.iter().zip(w).enumerate() {
                    let err = (f64::from(k) / f64::from(UNORM16_ONE) - f64::from(w)).abs();
                    assert!(err < 1.0 / 65535.0 + 1e-7, "vertex {v} slot {slot}: {k} for {w} (error {err})");
                }
            }
        }
        // The f32 copy is what joints()/weights() return whatever the layout.
        let q = inf.clone().with_layout(InfluenceLayout::U16Unorm16).unwrap();
        assert_eq!((q.joints(), q.weights()), (inf.joints(), inf.weights()));
    }
}

/// A compact layout's skinned positions are within the bound its weights allow of the f32
/// layout's: `Σ |Δwₖ| · |Pₖ p|` with each `|Δwₖ| < 1/65535`.
#[test]
fn compact_layouts_match_f32_within_the_quantization_bound() {
    let (inf, pos, nrm, pal) = scene(5, 200, 4, 30);
    let (rp, _) = lbs(&inf, &pos, &nrm, &pal, None, Kernel::best());
    for layout in [InfluenceLayout::U16Unorm16, InfluenceLayout::U8Unorm16] {
        let q = inf.clone().with_layout(layout).unwrap();
        let (p, _) = lbs(&q, &pos, &nrm, &pal, None, Kernel::best());
        for v in 0..pos.len() {
            let largest = (0..4)
                .map(|k| (pal[usize::from(inf.joints()[v * 4 + k])] * pos[v].push(1.0)).xyz().norm())
                .fold(0.0f32, f32::max);
            let bound = 4.0 * largest / 65535.0 + 1e-5;
            assert!((p[v] - rp[v]).norm() <= bound, "{layout:?} vertex {v}: {} > {bound}", (p[v] - rp[v]).norm());
        }
    }
}

/// u8 joints hold at most 256 joints: a mesh using joint 300 is refused and keeps its layout.
#[test]
fn u8_layout_needs_at_most_256_joints() {
    let mut inf = Influences::new(2, vec![0, 300, 255, 1], vec![0.5, 0.5, 1.0, 0.0], 301).unwrap();
    assert!(matches!(inf.set_layout(InfluenceLayout::U8Unorm16), Err(SkinningError::Layout(_))));
    assert_eq!(inf.layout(), InfluenceLayout::F32);
    let inf = Influences::new(2, vec![0, 255, 255, 1], vec![0.5, 0.5, 1.0, 0.0], 256).unwrap();
    let inf = inf.with_layout(InfluenceLayout::U8Unorm16).unwrap();
    assert_eq!(inf.joints_u8(), Some(&[0u8, 255, 255, 0][..]));
}

/// True when no pivot pair of `inf` has real parts in opposite hemispheres of `pal` (the
/// condition under which the SIMD loops skip the hemisphere tests), computed here from the
/// pairs and the palette.
fn coherent(inf: &Influences, pal: &DqPalette) -> bool {
    inf.pivot_pairs().iter().all(|&pair| {
        let a = pal.dual_quats()[(pair >> 16) as usize].as_ref().real.coords;
        let b = pal.dual_quats()[(pair & 0xFFFF) as usize].as_ref().real.coords;
        a.dot(&b) >= 0.0
    })
}

/// `mats` with the (uniform) scale of `scene`'s palettes divided out: rigid matrices.
fn without_scale(mats: &[Mat4]) -> Vec<Mat4> {
    mats.iter()
        .map(|m| {
            let s = m.fixed_view::<3, 1>(0, 0).norm();
            let mut r = *m;
            r.fixed_view_mut::<3, 3>(0, 0).scale_mut(1.0 / s);
            r
        })
        .collect()
}

/// Runs dual-quaternion skinning with every kernel of `kernels` (`None`: the plain function)
/// and compares with the scalar loop, positions only and with normals, on every layout:
/// positions within 1e-5 (float reassociation), normals within 2e-6 and unit.
fn check_dq(what: &str, inf: &Influences, pos: &[Vec3], nrm: &[Vec3], pal: &DqPalette, kernels: &[Option<Kernel>]) {
    compare_dq(what, inf, pos, nrm, pal, kernels, false);
}

/// [`check_dq`] with positions within 1e-5 relative to their size (plus 1e-5), for
/// palettes whose scales move vertices far.
fn check_dq_scaled(
    what: &str,
    inf: &Influences,
    pos: &[Vec3],
    nrm: &[Vec3],
    pal: &DqPalette,
    kernels: &[Option<Kernel>],
) {
    compare_dq(what, inf, pos, nrm, pal, kernels, true);
}

fn compare_dq(
    what: &str,
    inf: &Influences,
    pos: &[Vec3],
    nrm: &[Vec3],
    pal: &DqPalette,
    kernels: &[Option<Kernel>],
    relative: bool,
) {
    for layout in LAYOUTS {
        if layout == InfluenceLayout::U8Unorm16 && inf.joint_bound() > 256 {
            // `u8` indices cannot name these joints (refused, tested above).
            continue;
        }
        let inf = inf.clone().with_layout(layout).unwrap();
        for normals in [false, true] {
            let run = |kernel: Option<Kernel>| {
                let (mut p, mut n) = (vec![Vec3::zeros(); pos.len()], vec![Vec3::zeros(); pos.len()]);
                let input = SkinningInput { influences: &inf, positions: pos, normals: normals.then_some(nrm) };
                let mut out = SkinningOutput { positions: &mut p, normals: normals.then_some(&mut n[..]) };
                match kernel {
                    Some(k) => dual_quaternion_with(&input, pal, k, &mut out).unwrap(),
                    None => dual_quaternion(&input, pal, &mut out).unwrap(),
                }
                (p, n)
            };
            let (rp, rn) = run(Some(Kernel::Scalar));
            for &kernel in kernels {
                let (p, n) = run(kernel);
                for v in 0..pos.len() {
                    let what = format!("{what}, {layout:?}, normals {normals}, {kernel:?}, vertex {v}");
                    let bound = if relative { 1e-5 * (1.0 + rp[v].norm()) } else { 1e-5 };
                    assert!((p[v] - rp[v]).norm() < bound, "{what}: {} vs {}", p[v], rp[v]);
                    if normals {
                        assert!((n[v] - rn[v]).norm() < 2e-6, "{what}: normal {} vs {}", n[v], rn[v]);
                        assert!((n[v].norm() - 1.0).abs() < 2e-6, "{what}");
                    }
                }
            }
        }
    }
}

/// The kernels to compare with the scalar loop in the DQ tests: the plain function (best
/// kernel) and every kernel this CPU runs but the scalar loop itself.
fn dq_kernels(test: &str) -> Vec<Option<Kernel>> {
    std::iter::once(None)
        .chain(kernels_to_run(test).into_iter().map(Some))
        .filter(|&k| k != Some(Kernel::Scalar))
        .collect()
}

/// Dual-quaternion kernels agree with the scalar loop on every layout and influence count
/// (rigid palette), and renormalize nothing they should not: rotated normals stay unit.
/// The palette's rotations are spread over the whole sphere, so vertices flip weights
/// (asserted: the kernels take the path with hemisphere tests). Vertex counts cover the
/// AVX2 loop's blocks of eight and the AVX-512 loop's blocks of sixteen, alone, with a
/// remainder of every length, and a remainder alone. The same palettes with their uniform
/// scale kept take the AVX-512 loop for uniform scales, and agree too.
#[test]
fn dq_kernels_match_the_scalar_loop_on_every_layout() {
    let kernels = dq_kernels("dq_kernels_match_the_scalar_loop_on_every_layout");
    let cases = [1usize, 2, 3, 4, 5, 8, 9].into_iter().flat_map(|p| [(p, 5), (p, 29), (p, 32), (p, 48)]);
    let tails = (1..=16).map(|t| (4, 16 + t));
    for (per, verts) in cases.chain(tails) {
        let (inf, pos, nrm, mats) = scene(40 + per as u32 + verts as u32, verts, per, 9);
        let rigid = without_scale(&mats);
        let pal = DqPalette::from_matrices(&rigid);
        assert!(pal.is_rigid());
        if per >= 3 && verts >= 29 {
            assert!(!coherent(&inf, &pal), "{per} influences, {verts} vertices: some vertex flips a weight");
        }
        check_dq(&format!("{per} influences, {verts} vertices"), &inf, &pos, &nrm, &pal, &kernels);
        let scaled = DqPalette::from_matrices(&mats);
        assert!(!scaled.is_rigid() && scaled.is_uniform());
        check_dq(&format!("{per} influences, {verts} vertices, uniform scale"), &inf, &pos, &nrm, &scaled, &kernels);
    }
}

/// Palettes where no vertex can flip a weight take the SIMD loops' path without hemisphere
/// tests: its results still equal the scalar loop's, which tests every influence. First a
/// palette whose rotations all lie within 45° of the identity; then one where only the
/// pairs the mesh uses agree: joints 2k and 2k + 1 turn alike, while joint 2k + 2 lies in
/// the hemisphere opposite joint 2k's (so the palette as a whole has no common hemisphere).
/// A mesh that also pairs joints 0 and 2 is no longer coherent, and agrees too. The 45°
/// palette uniformly scaled (one factor a joint, 1e-3 to 1e3) takes the AVX-512 loop for
/// uniform scales without tests.
#[test]
fn dq_kernels_without_hemisphere_tests_match_the_scalar_loop() {
    let kernels = dq_kernels("dq_kernels_without_hemisphere_tests_match_the_scalar_loop");
    let mut rng = Rng(77);
    let joints = 7;
    let turns: Vec<(Vec3, Quat)> = (0..joints)
        .map(|_| {
            let r = Quat::from_euler_angles(rng.range(-0.5, 0.5), rng.range(-0.5, 0.5), rng.range(-0.5, 0.5));
            (rng.vec3(3.0), r)
        })
        .collect();
    let mats: Vec<Mat4> =
        turns.iter().map(|&(t, r)| Transform::new(t, r, Vec3::new(1.0, 1.0, 1.0)).to_matrix()).collect();
    let pal = DqPalette::from_matrices(&mats);
    assert!(pal.is_rigid());
    let scaled: Vec<Mat4> = turns
        .iter()
        .enumerate()
        .map(|(j, &(t, r))| Transform::new(t, r, Vec3::repeat(10f32.powi(j as i32 - 3))).to_matrix())
        .collect();
    let scaled = DqPalette::from_matrices(&scaled);
    assert!(!scaled.is_rigid() && scaled.is_uniform());
    for (per, verts) in [(4usize, 29usize), (4, 32), (3, 29), (2, 8), (4, 48), (8, 37), (1, 17)] {
        let (inf, pos, nrm, _) = scene(90 + per as u32 + verts as u32, verts, per, joints);
        assert!(coherent(&inf, &pal), "the palette takes the path under test");
        check_dq(&format!("45° palette, {per} influences, {verts} vertices"), &inf, &pos, &nrm, &pal, &kernels);
        check_dq_scaled(
            &format!("45° palette scaled, {per} influences, {verts} vertices"),
            &inf,
            &pos,
            &nrm,
            &scaled,
            &kernels,
        );
    }

    // Joint 2k turns by 0.9·k·π about one axis, joint 2k + 1 by 0.2 rad more: each pair
    // agrees, while joints 0 and 4 (quaternion half-angles 0 and 0.9π) lie in opposite
    // hemispheres.
    let axis = Vec3::new(0.3, 1.0, -0.2).normalize();
    let turn = |angle: f32| Quat::from_axis_angle(&Unit::new_normalize(axis), angle);
    let mut dqs = Vec::new();
    for k in 0..4 {
        for extra in [0.0, 0.2] {
            let t =
                Transform::new(rng.vec3(2.0), turn(0.9 * std::f32::consts::PI * k as f32 + extra), Vec3::repeat(1.0));
            dqs.push(anim_math::dual::from_transform(&t));
        }
    }
    let pal = DqPalette::from_rigid(&dqs);
    let real = |j: usize| pal.dual_quats()[j].as_ref().real.coords;
    assert!(real(0).dot(&real(4)) < 0.0, "the palette has no common hemisphere");
    let verts = 37;
    let mesh = |pairs: &dyn Fn(usize) -> (u16, u16)| {
        let mut js = Vec::new();
        let mut ws = Vec::new();
        for v in 0..verts {
            let (a, b) = pairs(v);
            js.extend([a, b]);
            ws.extend([0.3 + 0.01 * v as f32, 0.7]);
        }
        Influences::new(2, js, ws, dqs.len()).unwrap()
    };
    let (_, pos, nrm, _) = scene(5, verts, 2, 8);
    let paired = mesh(&|v| ((2 * (v % 4)) as u16, (2 * (v % 4) + 1) as u16));
    assert!(coherent(&paired, &pal));
    check_dq("pairs (2k, 2k + 1)", &paired, &pos, &nrm, &pal, &kernels);
    let crossed = mesh(&|v| if v == 20 { (0, 4) } else { ((2 * (v % 4)) as u16, (2 * (v % 4) + 1) as u16) });
    assert!(!coherent(&crossed, &pal));
    check_dq("pairs (2k, 2k + 1) and (0, 4)", &crossed, &pos, &nrm, &pal, &kernels);
}

/// Whole dual quaternions negated (the same transforms) make pairs of a mesh flip without
/// any cycle of flips: the SIMD loops then blend with a sign a joint instead of a test an
/// influence, and still agree with the scalar loop. First the 45° palette with every other
/// joint negated; then palettes with scale (uniform and not) turned about one axis by
/// −0.5π to −0.92π, where reading the rotation from the matrix gives the first joints one
/// sign and the others the opposite one (past −2π/3 the matrix's trace is negative).
#[test]
fn dq_kernels_with_negated_joints_match_the_scalar_loop() {
    let kernels = dq_kernels("dq_kernels_with_negated_joints_match_the_scalar_loop");
    let mut rng = Rng(78);
    let joints = 7;
    let dqs: Vec<DualQuat> = (0..joints)
        .map(|j| {
            let r = Quat::from_euler_angles(rng.range(-0.5, 0.5), rng.range(-0.5, 0.5), rng.range(-0.5, 0.5));
            let q = anim_math::dual::from_transform(&Transform::new(rng.vec3(3.0), r, Vec3::new(1.0, 1.0, 1.0)));
            if j % 2 == 1 { DualQuat::new_unchecked(-q.into_inner()) } else { q }
        })
        .collect();
    let pal = DqPalette::from_rigid(&dqs);
    for (per, verts) in [(4usize, 29usize), (4, 48), (3, 33), (2, 8), (8, 37)] {
        let (inf, pos, nrm, _) = scene(190 + per as u32 + verts as u32, verts, per, joints);
        assert!(!coherent(&inf, &pal), "some pair flips");
        check_dq(&format!("negated joints, {per} influences, {verts} vertices"), &inf, &pos, &nrm, &pal, &kernels);
    }
    let axis = Unit::new_normalize(Vec3::new(0.2, 1.0, -0.4));
    for uniform in [true, false] {
        let mats: Vec<Mat4> = (0..joints)
            .map(|j| {
                let angle = -std::f32::consts::PI * (0.5 + 0.07 * j as f32);
                let s = if uniform { Vec3::repeat(rng.range(0.5, 1.5)) } else { Vec3::new(0.8, 1.3, 1.1) };
                Transform::new(rng.vec3(3.0), Quat::from_axis_angle(&axis, angle), s).to_matrix()
            })
            .collect();
        let pal = DqPalette::from_matrices(&mats);
        assert!(!pal.is_rigid());
        let (inf, pos, nrm, _) = scene(300, 45, 4, joints);
        assert!(!coherent(&inf, &pal), "some pair flips");
        check_dq(&format!("turned palette with scale, uniform {uniform}"), &inf, &pos, &nrm, &pal, &kernels);
    }
}

/// Three joints turned about one axis by 0, 0.8π and 1.6π (quaternion half-angles 0, 0.4π
/// and 0.8π: a cycle of pairs with one flip, which no sign a joint removes) shared by six
/// vertices of a mesh of 405 whose other joints turn less than 0.3 rad. The SIMD loops
/// then test only the blocks of sixteen vertices that hold one of those six (the AVX2
/// loops' blocks of eight inside them); every kernel
/// agrees with the scalar loop, on every layout, for the rigid palette and with scale,
/// uniform and not (a block left untested would blend its flipping vertex wrongly).
#[test]
fn dq_kernels_test_the_blocks_of_flipping_vertices() {
    let kernels = dq_kernels("dq_kernels_test_the_blocks_of_flipping_vertices");
    let mut rng = Rng(79);
    let joints = 10;
    let axis = Unit::new_normalize(Vec3::new(0.2, 1.0, -0.4));
    let turns: Vec<(Vec3, Quat)> = (0..joints)
        .map(|j| {
            let r = if j < 3 {
                Quat::from_axis_angle(&axis, 0.8 * std::f32::consts::PI * j as f32)
            } else {
                Quat::from_euler_angles(rng.range(-0.1, 0.1), rng.range(-0.1, 0.1), rng.range(-0.1, 0.1))
            };
            (rng.vec3(3.0), r)
        })
        .collect();
    let verts = 16 * 25 + 5;
    let pairs = [(0usize, 0u16, 1u16), (17, 1, 2), (100, 2, 0), (203, 1, 2), (399, 2, 1), (404, 0, 2)];
    let (mut js, mut ws) = (Vec::new(), Vec::new());
    for v in 0..verts {
        match pairs.iter().find(|p| p.0 == v) {
            Some(&(_, a, b)) => {
                js.extend([a, b, 3, 4]);
                ws.extend([0.5, 0.4, 0.05, 0.05]);
            }
            None => {
                js.extend((0..4).map(|_| 3 + (rng.next_f32() * 7.0) as u16 % 7));
                ws.extend((0..4).map(|_| rng.range(0.05, 1.0)));
            }
        }
    }
    let inf = Influences::new(4, js, ws, joints).unwrap();
    let (_, pos, nrm, _) = scene(401, verts, 4, joints);
    let scales = [None, Some(Vec3::repeat(1.0)), Some(Vec3::new(0.8, 1.3, 1.1))];
    for scale in scales {
        let mats: Vec<Mat4> = turns
            .iter()
            .map(|&(t, r)| {
                // Uniform: a factor a joint.
                let s =
                    scale.map_or(Vec3::repeat(1.0), |s| if s.x == s.y { Vec3::repeat(rng.range(0.5, 1.5)) } else { s });
                Transform::new(t, r, s).to_matrix()
            })
            .collect();
        let pal = DqPalette::from_matrices(&mats);
        assert_eq!(pal.is_rigid(), scale.is_none());
        assert!(!coherent(&inf, &pal), "some pair flips");
        check_dq_scaled(&format!("a few flipping vertices, scale {scale:?}"), &inf, &pos, &nrm, &pal, &kernels);
    }
}

/// A palette with bind-space scale takes the scale-aware loops: every kernel agrees with
/// the scalar loop, positions within 1e-5 relative to their size (plus 1e-5), normals within
/// 2e-6 and unit, on every layout (the loops read the `f32` weights), with and without
/// normals, for influence counts 1 to 9 and every length of the AVX-512 loop's last block.
/// Scales are non-uniform, one joint mirrors (negative determinant: its cofactor matrix is
/// negated), and a second palette has joints scaled by 1e15 and 1e-16, whose cofactors
/// leave the range where normals normalize accurately (the rescaled rule redoes them). The
/// same palettes with one factor a joint (`s·I`; 1e15 and 1e-5) take the loops for uniform
/// scales.
#[test]
fn dq_kernels_with_scale_match_the_scalar_loop() {
    let kernels = dq_kernels("dq_kernels_with_scale_match_the_scalar_loop");
    let palette = |seed: u32, extreme: bool, uniform: bool| {
        let mut rng = Rng(seed);
        let mats: Vec<Mat4> = (0..9)
            .map(|j| {
                let r = Quat::from_euler_angles(rng.range(-3.0, 3.0), rng.range(-1.5, 1.5), rng.range(-3.0, 3.0));
                let mut s = Vec3::new(rng.range(0.5, 1.5), rng.range(0.5, 1.5), rng.range(0.5, 1.5));
                if uniform {
                    s = Vec3::repeat(s.x);
                } else if j == 4 {
                    s.y = -s.y;
                }
                if extreme && j == 2 {
                    s *= 1e15;
                }
                if extreme && j == 6 {
                    // (A uniform scale reads back as uniform down to columns of about 1e-6.)
                    s *= if uniform { 1e-5 } else { 1e-16 };
                }
                let m = Transform::new(rng.vec3(3.0), r, s).to_matrix();
                if j % 3 == 1 && !uniform {
                    // A stretch along turned axes: the joint's symmetric scale has
                    // off-diagonal entries.
                    let b = Quat::from_euler_angles(rng.range(-3.0, 3.0), rng.range(-1.5, 1.5), 0.4).to_homogeneous();
                    let d = Mat4::new_nonuniform_scaling(&Vec3::new(0.7, 1.3, rng.range(0.8, 1.2)));
                    m * b * d * b.transpose()
                } else {
                    m
                }
            })
            .collect();
        let pal = DqPalette::from_matrices(&mats);
        assert!(!pal.is_rigid() && pal.is_uniform() == uniform, "extreme {extreme}, uniform {uniform}");
        pal
    };
    let cases = [1usize, 2, 3, 4, 5, 8, 9].into_iter().flat_map(|p| [(p, 5), (p, 32), (p, 48)]);
    let tails = (1..=16).map(|t| (4, 16 + t));
    for (per, verts) in cases.chain(tails) {
        let (inf, pos, nrm, _) = scene(60 + per as u32 + verts as u32, verts, per, 9);
        for (extreme, uniform) in [(false, false), (true, false), (false, true), (true, true)] {
            let pal = palette(per as u32 * 31 + verts as u32, extreme, uniform);
            for layout in LAYOUTS {
                let inf = inf.clone().with_layout(layout).unwrap();
                for normals in [false, true] {
                    let run = |kernel: Option<Kernel>| {
                        let (mut p, mut n) = (vec![Vec3::zeros(); verts], vec![Vec3::zeros(); verts]);
                        let input =
                            SkinningInput { influences: &inf, positions: &pos, normals: normals.then_some(&nrm[..]) };
                        let mut out = SkinningOutput { positions: &mut p, normals: normals.then_some(&mut n[..]) };
                        match kernel {
                            Some(k) => dual_quaternion_with(&input, &pal, k, &mut out).unwrap(),
                            None => dual_quaternion(&input, &pal, &mut out).unwrap(),
                        }
                        (p, n)
                    };
                    let (rp, rn) = run(Some(Kernel::Scalar));
                    for &kernel in &kernels {
                        let (p, n) = run(kernel);
                        for v in 0..verts {
                            let what = format!(
                                "{per} influences, {verts} vertices, extreme {extreme}, uniform {uniform}, {layout:?}, normals {normals}, {kernel:?}, vertex {v}"
                            );
                            let bound = 1e-5 * (1.0 + rp[v].norm());
                            assert!((p[v] - rp[v]).norm() <= bound, "{what}: {} vs {}", p[v], rp[v]);
                            if normals {
                                assert!((n[v] - rn[v]).norm() < 2e-6, "{what}: normal {} vs {}", n[v], rn[v]);
                                if v != 3 {
                                    assert!((n[v].norm() - 1.0).abs() < 2e-6, "{what}: |n| = {}", n[v].norm());
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// A palette of more than 4,096 joints keeps its hemisphere bits in the whole 8 KiB table
/// (smaller ones in 512 bytes): vertices whose joints lie past joint 4,096 and flip
/// weights are still tested, rigid palette and palette with scale alike.
/// A mesh with more pivot pairs than the hemisphere analysis keeps dot products for on the
/// stack (4,096): the rest are recomputed, and its signs are linked band by band without
/// the sorted lists. Random rotations leave odd cycles, so the loops test the vertices of
/// risky joints against a signed copy; rigid, uniform and non-uniform palettes.
#[test]
fn dq_kernels_match_the_scalar_loop_past_4096_pairs() {
    let kernels = dq_kernels("dq_kernels_match_the_scalar_loop_past_4096_pairs");
    let (inf, pos, nrm, mats) = scene(4097, 6000, 4, 200);
    assert!(inf.pivot_pairs().len() > 4096, "{} pairs", inf.pivot_pairs().len());
    let rigid = DqPalette::from_matrices(&without_scale(&mats));
    assert!(rigid.is_rigid() && !coherent(&inf, &rigid));
    check_dq("12k pairs, rigid", &inf, &pos, &nrm, &rigid, &kernels);
    let uniform = DqPalette::from_matrices(&mats);
    assert!(uniform.is_uniform() && !uniform.is_rigid() && !coherent(&inf, &uniform));
    check_dq("12k pairs, uniform scale", &inf, &pos, &nrm, &uniform, &kernels);
    let squash = Mat4::new_nonuniform_scaling(&Vec3::new(1.0, 1.15, 0.9));
    let squashed = DqPalette::from_matrices(&mats.iter().map(|m| m * squash).collect::<Vec<_>>());
    assert!(!squashed.is_uniform() && !coherent(&inf, &squashed));
    check_dq("12k pairs, non-uniform scale", &inf, &pos, &nrm, &squashed, &kernels);
}

#[test]
fn dq_kernels_match_the_scalar_loop_past_4096_joints() {
    let kernels = dq_kernels("dq_kernels_match_the_scalar_loop_past_4096_joints");
    let joints = 4200;
    let (inf, pos, nrm, mats) = scene(4242, 64, 4, joints);
    // The same weights on joints 4,090 to 4,199 only.
    let js: Vec<u16> = inf.joints().iter().map(|&j| 4090 + j % 110).collect();
    let inf = Influences::new(4, js, inf.weights().to_vec(), joints).unwrap();
    let rigid = without_scale(&mats);
    let pal = DqPalette::from_matrices(&rigid);
    assert!(pal.is_rigid() && !coherent(&inf, &pal), "some vertex flips a weight");
    check_dq("4,200 joints, rigid", &inf, &pos, &nrm, &pal, &kernels);
    let scaled = DqPalette::from_matrices(&mats);
    assert!(!scaled.is_rigid() && !coherent(&inf, &scaled));
    check_dq("4,200 joints, with scale", &inf, &pos, &nrm, &scaled, &kernels);
}
