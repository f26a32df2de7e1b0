//! Compute skinning on the GPU equals CPU skinning (`anim_core::skinning`): random meshes
//! with 1, 2, 3, 4, 5 and 8 influences a vertex (unweighted vertices included), and Fox and
//! CesiumMan from the shared assets at several times of their clips, LBS and DQ. Positions
//! agree to 1e-5 of the bounding-box diagonal; normals to 1e-4.

mod common;

use anim_core::skinning::{self, NormalMode, SkinningInput, SkinningOutput};
use anim_core::{Influences, Pose, SkinningError, TimePolicy, palette};
use anim_math::{DualQuat, Mat4, Vec3};
use anim_render_vk::{GpuPalette, GpuSkinner, RenderError};

fn diagonal(p: &[Vec3]) -> f32 {
    let (lo, hi) = p.iter().fold((p[0], p[0]), |(lo, hi), q| (lo.inf(q), hi.sup(q)));
    (hi - lo).norm()
}

/// Skins on both sides and returns the largest position and normal differences.
#[allow(clippy::too_many_arguments)]
fn compare(
    sk: &GpuSkinner,
    positions: &[Vec3],
    normals: Option<&[Vec3]>,
    inf: &Influences,
    matrices: &[Mat4],
    dqs: &[DualQuat],
    dq: bool,
) -> (f32, f32) {
    let n = positions.len();
    let (mut cp, mut cn, mut gp, mut gn) =
        (vec![Vec3::zeros(); n], vec![Vec3::zeros(); n], vec![Vec3::zeros(); n], vec![Vec3::zeros(); n]);
    let input = SkinningInput { influences: inf, positions, normals };
    let mut out = SkinningOutput { positions: &mut cp, normals: normals.map(|_| cn.as_mut_slice()) };
    if dq {
        skinning::dual_quaternion(&input, &anim_core::DqPalette::from_rigid(dqs), &mut out).unwrap();
        sk.skin(
            positions,
            normals,
            inf,
            GpuPalette::Dq(dqs),
            NormalMode::Direct,
            &mut gp,
            normals.map(|_| gn.as_mut_slice()),
        )
        .unwrap();
    } else {
        skinning::linear_blend(&input, matrices, NormalMode::Direct, &mut out).unwrap();
        sk.skin(
            positions,
            normals,
            inf,
            GpuPalette::Lbs(matrices),
            NormalMode::Direct,
            &mut gp,
            normals.map(|_| gn.as_mut_slice()),
        )
        .unwrap();
    }
    let dp = cp.iter().zip(&gp).map(|(a, b)| (a - b).norm()).fold(0.0f32, f32::max);
    let dn =
        if normals.is_some() { cn.iter().zip(&gn).map(|(a, b)| (a - b).norm()).fold(0.0f32, f32::max) } else { 0.0 };
    (dp, dn)
}

#[test]
fn random_meshes_any_influence_count() {
    let ctx = common::context();
    let sk = GpuSkinner::new(&ctx).unwrap();
    for (i, per) in [1usize, 2, 3, 4, 5, 8].into_iter().enumerate() {
        let (p, n, inf) = common::random_skin(700, per, 12, 11 + i as u64);
        assert!(!inf.unweighted().is_empty());
        let (m, d) = common::random_palette(12, 5 + i as u64, true);
        let (_, d_rigid) = common::random_palette(12, 5 + i as u64, false);
        let tol = 1e-5 * diagonal(&p) * 8.0; // palettes move points up to ~4 diagonals away
        let (dp, dn) = compare(&sk, &p, Some(&n), &inf, &m, &d, false);
        assert!(dp < tol && dn < 1e-4, "LBS {per} influences: {dp} {dn}");
        let (dp, dn) = compare(&sk, &p, Some(&n), &inf, &m, &d_rigid, true);
        assert!(dp < tol && dn < 1e-4, "DQ {per} influences: {dp} {dn}");
        // Without normals.
        let (dp, _) = compare(&sk, &p, None, &inf, &m, &d, false);
        assert!(dp < tol);
        // Unweighted vertices keep their rest position exactly.
        let mut gp = vec![Vec3::zeros(); p.len()];
        sk.skin(&p, None, &inf, GpuPalette::Lbs(&m), NormalMode::Direct, &mut gp, None).unwrap();
        for &v in inf.unweighted() {
            assert_eq!(gp[v as usize], p[v as usize]);
        }
    }
    common::assert_clean(&ctx);
}

#[test]
fn inverse_transpose_normals_under_non_uniform_scale() {
    let ctx = common::context();
    let sk = GpuSkinner::new(&ctx).unwrap();
    let (p, n, inf) = common::random_skin(500, 4, 6, 21);
    let (mut m, _) = common::random_palette(6, 9, false);
    for (i, mat) in m.iter_mut().enumerate() {
        *mat *= Mat4::new_nonuniform_scaling(&Vec3::new(1.0 + 0.3 * i as f32, 0.6, 1.4));
    }
    let count = p.len();
    for mode in [NormalMode::Direct, NormalMode::InverseTranspose] {
        let (mut cp, mut cn, mut gp, mut gn) = (
            vec![Vec3::zeros(); count],
            vec![Vec3::zeros(); count],
            vec![Vec3::zeros(); count],
            vec![Vec3::zeros(); count],
        );
        let input = SkinningInput { influences: &inf, positions: &p, normals: Some(&n) };
        skinning::linear_blend(&input, &m, mode, &mut SkinningOutput { positions: &mut cp, normals: Some(&mut cn) })
            .unwrap();
        sk.skin(&p, Some(&n), &inf, GpuPalette::Lbs(&m), mode, &mut gp, Some(&mut gn)).unwrap();
        let dn = cn.iter().zip(&gn).map(|(a, b)| (a - b).norm()).fold(0.0f32, f32::max);
        assert!(dn < 1e-4, "{mode:?}: normal error {dn}");
        let dp = cp.iter().zip(&gp).map(|(a, b)| (a - b).norm()).fold(0.0f32, f32::max);
        assert!(dp < 1e-4, "{mode:?}: position error {dp}");
    }
    // The two modes really differ here (so the flag reached the shader).
    let mut direct = vec![Vec3::zeros(); count];
    let mut it = vec![Vec3::zeros(); count];
    let mut scratch = vec![Vec3::zeros(); count];
    sk.skin(&p, Some(&n), &inf, GpuPalette::Lbs(&m), NormalMode::Direct, &mut scratch, Some(&mut direct)).unwrap();
    sk.skin(&p, Some(&n), &inf, GpuPalette::Lbs(&m), NormalMode::InverseTranspose, &mut scratch, Some(&mut it))
        .unwrap();
    assert!(direct.iter().zip(&it).map(|(a, b)| (a - b).norm()).fold(0.0f32, f32::max) > 0.05);
    common::assert_clean(&ctx);
}

#[test]
fn rejects_what_the_cpu_rejects() {
    let ctx = common::context();
    let sk = GpuSkinner::new(&ctx).unwrap();
    let (p, n, inf) = common::random_skin(10, 4, 6, 1);
    let (m, _) = common::random_palette(6, 2, false);
    let mut out = vec![Vec3::zeros(); 10];
    let short = sk.skin(&p, None, &inf, GpuPalette::Lbs(&m[..2]), NormalMode::Direct, &mut out, None);
    assert!(matches!(short, Err(RenderError::Skinning(SkinningError::PaletteTooShort { got: 2, .. }))), "{short:?}");
    let mut small = vec![Vec3::zeros(); 9];
    assert!(matches!(
        sk.skin(&p, None, &inf, GpuPalette::Lbs(&m), NormalMode::Direct, &mut small, None),
        Err(RenderError::Skinning(SkinningError::WrongLength { what: "output positions", got: 9, expected: 10 }))
    ));
    let mut on = vec![Vec3::zeros(); 10];
    assert!(sk.skin(&p, None, &inf, GpuPalette::Lbs(&m), NormalMode::Direct, &mut out, Some(&mut on)).is_err());
    assert!(sk.skin(&p, Some(&n[..3]), &inf, GpuPalette::Lbs(&m), NormalMode::Direct, &mut out, None).is_err());
    common::assert_clean(&ctx);
}

fn asset(rel: &str) -> std::path::PathBuf {
    std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/assets")).join(rel)
}

fn model_matches(rel: &str) {
    let model = anim_gltf::load(asset(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let ctx = common::context();
    let sk = GpuSkinner::new(&ctx).unwrap();
    let mut pose = Pose::identity(model.skeleton.len());
    let mut world = vec![Mat4::identity(); model.skeleton.len()];
    let mut checked = 0;
    let mut worst = 0.0f32;
    for clip in 0..model.clips.len() {
        let dur = model.clips[clip].duration();
        for f in [0.0, 0.31, 0.77, 1.0] {
            model.sample_pose(clip, dur * f, TimePolicy::Clamp, &mut pose).unwrap();
            model.world_matrices(&pose, &mut world).unwrap();
            for inst in &model.meshes {
                let (Some(s), Some(inf)) = (inst.skin, &inst.data.influences) else { continue };
                let skin = &model.skins[s].skin;
                let mut m = vec![Mat4::identity(); skin.len()];
                let mut d = vec![DualQuat::identity(); skin.len()];
                palette::skinning_matrices(&world, skin, &mut m).unwrap();
                palette::skinning_dual_quats(&world, skin, &mut d).unwrap();
                let p = &inst.data.positions;
                let normals = if inst.data.normals.is_empty() { None } else { Some(inst.data.normals.as_slice()) };
                for dq in [false, true] {
                    let n = p.len();
                    let mut cpu = vec![Vec3::zeros(); n];
                    let input = SkinningInput { influences: inf, positions: p, normals: None };
                    if dq {
                        skinning::dual_quaternion(
                            &input,
                            &anim_core::DqPalette::from_rigid(&d),
                            &mut SkinningOutput { positions: &mut cpu, normals: None },
                        )
                        .unwrap();
                    } else {
                        skinning::linear_blend(
                            &input,
                            &m,
                            NormalMode::Direct,
                            &mut SkinningOutput { positions: &mut cpu, normals: None },
                        )
                        .unwrap();
                    }
                    let tol = 1e-5 * diagonal(&cpu);
                    let (dp, dn) = compare(&sk, p, normals, inf, &m, &d, dq);
                    assert!(
                        dp <= tol,
                        "{rel} clip {clip} t={:.3} {}: max position error {dp} > {tol}",
                        dur * f,
                        if dq { "DQ" } else { "LBS" }
                    );
                    assert!(dn < 1e-4, "{rel}: normal error {dn}");
                    worst = worst.max(dp / diagonal(&cpu));
                    checked += 1;
                }
            }
        }
    }
    assert!(checked >= 8, "{rel}: only {checked} comparisons");
    eprintln!("{rel}: {checked} comparisons, worst position error {worst:.2e} of the diagonal");
    common::assert_clean(&ctx);
}

#[test]
fn fox_gpu_equals_cpu() {
    model_matches("Fox/Fox.glb");
}

#[test]
fn cesium_man_gpu_equals_cpu() {
    model_matches("CesiumMan/CesiumMan.glb");
}
