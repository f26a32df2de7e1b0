//! Compute skinning on the GPU equals CPU skinning (`anim_core::skin::skinning::skin` with the
//! same `Palette`): random meshes with 1, 2, 3, 4, 5 and 8 influences a vertex (unweighted
//! vertices included), LBS, rigid DQ and DQ with non-uniform scale; and every skinned model
//! of the shared assets at several times of every clip, LBS and DQ, including `dq.gltf`'s
//! TwistingWithScale. Positions agree to 1e-5 of the bounding-box diagonal; normals to 1e-4.

mod common;

use anim_core::skin::skinning;

use anim_core::clip::TimePolicy;
use anim_core::pose::Pose;
use anim_core::skin::skinning::{NormalMode, SkinningInput, SkinningOutput};
use anim_core::skin::{DqPalette, Influences, Palette, SkinMethod, SkinningError};
use anim_math::{Mat4, Vec3};
use anim_render_vk::{GpuSkinner, RenderError};
use anim_testkit::assets::path as asset;

fn diagonal(p: &[Vec3]) -> f32 {
    let (lo, hi) = p.iter().fold((p[0], p[0]), |(lo, hi), q| (lo.inf(q), hi.sup(q)));
    (hi - lo).norm()
}

fn max_diff(a: &[Vec3], b: &[Vec3]) -> f32 {
    a.iter().zip(b).map(|(x, y)| (x - y).norm()).fold(0.0f32, f32::max)
}

/// Skins on both sides with the same palette and returns the largest position and normal
/// differences and the diagonal of the CPU result's bounding box.
fn compare(
    sk: &GpuSkinner,
    positions: &[Vec3],
    normals: Option<&[Vec3]>,
    inf: &Influences,
    palette: &Palette,
    mode: NormalMode,
) -> (f32, f32, f32) {
    let n = positions.len();
    let (mut cp, mut cn, mut gp, mut gn) =
        (vec![Vec3::zeros(); n], vec![Vec3::zeros(); n], vec![Vec3::zeros(); n], vec![Vec3::zeros(); n]);
    let input = SkinningInput { influences: inf, positions, normals };
    let mut out = SkinningOutput { positions: &mut cp, normals: normals.map(|_| cn.as_mut_slice()) };
    skinning::skin(&input, palette, mode, &mut out).unwrap();
    sk.skin(positions, normals, inf, palette, mode, &mut gp, normals.map(|_| gn.as_mut_slice())).unwrap();
    let dn = if normals.is_some() { max_diff(&cn, &gn) } else { 0.0 };
    (max_diff(&cp, &gp), dn, diagonal(&cp))
}

/// Matrices with rotation, translation and a non-uniform scale and shear per joint.
fn sheared(m: &[Mat4]) -> Vec<Mat4> {
    m.iter()
        .enumerate()
        .map(|(i, mat)| {
            let mut s = Mat4::new_nonuniform_scaling(&Vec3::new(1.0 + 0.1 * i as f32, 0.7, 1.3));
            s[(0, 1)] = 0.2;
            mat * s
        })
        .collect()
}

#[test]
fn random_meshes_any_influence_count() {
    let ctx = common::context();
    let sk = GpuSkinner::new(&ctx).unwrap();
    for (i, per) in [1usize, 2, 3, 4, 5, 8].into_iter().enumerate() {
        let (p, n, inf) = common::random_skin(700, per, 12, 11 + i as u64);
        assert!(!inf.unweighted().is_empty());
        let (m, _) = common::random_palette(12, 5 + i as u64, true);
        let (_, d_rigid) = common::random_palette(12, 5 + i as u64, false);
        let lbs = Palette::Matrices(m.clone());
        let dq_rigid = Palette::DualQuats(DqPalette::from_rigid(&d_rigid));
        let dq_scaled = Palette::from_matrices(SkinMethod::Dq, &sheared(&m));
        assert!(!dq_scaled.dual_quats().unwrap().is_rigid());
        for (name, palette) in [("LBS", &lbs), ("rigid DQ", &dq_rigid), ("scaled DQ", &dq_scaled)] {
            let (dp, dn, diag) = compare(&sk, &p, Some(&n), &inf, palette, NormalMode::Direct);
            assert!(dp <= 1e-5 * diag && dn < 1e-4, "{name}, {per} influences: {dp} (diagonal {diag}), {dn}");
            // Without normals.
            let (dp, _, diag) = compare(&sk, &p, None, &inf, palette, NormalMode::Direct);
            assert!(dp <= 1e-5 * diag, "{name}, {per} influences, no normals: {dp}");
            // Unweighted vertices keep their rest position exactly.
            let mut gp = vec![Vec3::zeros(); p.len()];
            sk.skin(&p, None, &inf, palette, NormalMode::Direct, &mut gp, None).unwrap();
            for &v in inf.unweighted() {
                assert_eq!(gp[v as usize], p[v as usize], "{name}");
            }
        }
    }
    common::assert_clean(&ctx);
}

/// The scale of a DQ palette reaches the GPU: skinning with the scaled palette differs from
/// skinning with its rigid part alone, on both sides alike.
#[test]
fn dq_scale_is_not_dropped() {
    let ctx = common::context();
    let sk = GpuSkinner::new(&ctx).unwrap();
    let (p, n, inf) = common::random_skin(300, 4, 6, 3);
    let (m, _) = common::random_palette(6, 4, false);
    let scaled = Palette::from_matrices(SkinMethod::Dq, &sheared(&m));
    let rigid = Palette::DualQuats(DqPalette::from_rigid(scaled.dual_quats().unwrap().dual_quats()));
    let count = p.len();
    let (mut a, mut b, mut na, mut nb) = (
        vec![Vec3::zeros(); count],
        vec![Vec3::zeros(); count],
        vec![Vec3::zeros(); count],
        vec![Vec3::zeros(); count],
    );
    sk.skin(&p, Some(&n), &inf, &scaled, NormalMode::Direct, &mut a, Some(&mut na)).unwrap();
    sk.skin(&p, Some(&n), &inf, &rigid, NormalMode::Direct, &mut b, Some(&mut nb)).unwrap();
    assert!(max_diff(&a, &b) > 0.05 && max_diff(&na, &nb) > 0.01);
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
    let lbs = Palette::Matrices(m.clone());
    let count = p.len();
    for mode in [NormalMode::Direct, NormalMode::InverseTranspose] {
        let (mut cp, mut cn, mut gp, mut gn) = (
            vec![Vec3::zeros(); count],
            vec![Vec3::zeros(); count],
            vec![Vec3::zeros(); count],
            vec![Vec3::zeros(); count],
        );
        let input = SkinningInput { influences: &inf, positions: &p, normals: Some(&n) };
        skinning::skin(&input, &lbs, mode, &mut SkinningOutput { positions: &mut cp, normals: Some(&mut cn) }).unwrap();
        sk.skin(&p, Some(&n), &inf, &lbs, mode, &mut gp, Some(&mut gn)).unwrap();
        let dn = cn.iter().zip(&gn).map(|(a, b)| (a - b).norm()).fold(0.0f32, f32::max);
        assert!(dn < 1e-4, "{mode:?}: normal error {dn}");
        let dp = cp.iter().zip(&gp).map(|(a, b)| (a - b).norm()).fold(0.0f32, f32::max);
        assert!(dp < 1e-4, "{mode:?}: position error {dp}");
    }
    // The two modes really differ here (so the flag reached the shader).
    let mut direct = vec![Vec3::zeros(); count];
    let mut it = vec![Vec3::zeros(); count];
    let mut scratch = vec![Vec3::zeros(); count];
    sk.skin(&p, Some(&n), &inf, &lbs, NormalMode::Direct, &mut scratch, Some(&mut direct)).unwrap();
    sk.skin(&p, Some(&n), &inf, &lbs, NormalMode::InverseTranspose, &mut scratch, Some(&mut it)).unwrap();
    assert!(direct.iter().zip(&it).map(|(a, b)| (a - b).norm()).fold(0.0f32, f32::max) > 0.05);
    common::assert_clean(&ctx);
}

#[test]
fn rejects_what_the_cpu_rejects() {
    let ctx = common::context();
    let sk = GpuSkinner::new(&ctx).unwrap();
    let (p, n, inf) = common::random_skin(10, 4, 6, 1);
    let (m, _) = common::random_palette(6, 2, false);
    let lbs = Palette::Matrices(m.clone());
    let mut out = vec![Vec3::zeros(); 10];
    let short = sk.skin(&p, None, &inf, &Palette::Matrices(m[..2].to_vec()), NormalMode::Direct, &mut out, None);
    assert!(matches!(short, Err(RenderError::Skinning(SkinningError::PaletteTooShort { got: 2, .. }))), "{short:?}");
    let mut small = vec![Vec3::zeros(); 9];
    assert!(matches!(
        sk.skin(&p, None, &inf, &lbs, NormalMode::Direct, &mut small, None),
        Err(RenderError::Skinning(SkinningError::WrongLength(anim_core::LengthMismatch {
            what: "output positions",
            got: 9,
            expected: 10
        })))
    ));
    let mut on = vec![Vec3::zeros(); 10];
    assert!(sk.skin(&p, None, &inf, &lbs, NormalMode::Direct, &mut out, Some(&mut on)).is_err());
    assert!(sk.skin(&p, Some(&n[..3]), &inf, &lbs, NormalMode::Direct, &mut out, None).is_err());
    common::assert_clean(&ctx);
}

/// Every clip of every skinned mesh instance of `rel` at `times` (fractions of each clip's
/// duration), LBS and DQ; returns the number of comparisons and whether some DQ palette
/// had scale.
fn model_matches(rel: &str, clips: Option<&[&str]>, times: &[f32]) -> (usize, bool) {
    let model = anim_gltf::load(asset(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let ctx = common::context();
    let sk = GpuSkinner::new(&ctx).unwrap();
    let mut pose = Pose::identity(model.skeleton.len());
    let mut world = vec![Mat4::identity(); model.skeleton.len()];
    let mut checked = 0;
    let mut scaled = false;
    let mut worst = 0.0f32;
    let clip_ids: Vec<usize> = match clips {
        Some(names) => {
            names.iter().map(|n| model.find_clip(n).unwrap_or_else(|| panic!("{rel}: no clip {n}"))).collect()
        }
        None => (0..model.clips.len()).collect(),
    };
    for clip in clip_ids {
        let dur = model.clips[clip].duration();
        for &f in times {
            model.sample_pose(clip, dur * f, TimePolicy::Clamp, &mut pose).unwrap();
            model.world_matrices(&pose, &mut world).unwrap();
            for inst in &model.meshes {
                let (Some(s), Some(inf)) = (inst.skin, &inst.data.influences) else { continue };
                let skin = &model.skins[s].skin;
                let p = &inst.data.positions;
                let normals = if inst.data.normals.is_empty() { None } else { Some(inst.data.normals.as_slice()) };
                for method in SkinMethod::ALL {
                    let mut palette = Palette::new(method);
                    palette.update(&world, skin).unwrap();
                    scaled |= palette.dual_quats().is_some_and(|d| !d.is_rigid());
                    let (dp, dn, diag) = compare(&sk, p, normals, inf, &palette, NormalMode::InverseTranspose);
                    assert!(
                        dp <= 1e-5 * diag,
                        "{rel} clip {clip} t={:.3} {method:?}: max position error {dp} > 1e-5 × {diag}",
                        dur * f,
                    );
                    assert!(dn < 1e-4, "{rel} clip {clip} t={:.3} {method:?}: normal error {dn}", dur * f);
                    worst = worst.max(dp / diag);
                    checked += 1;
                }
            }
        }
    }
    assert!(checked >= 2 * times.len(), "{rel}: only {checked} comparisons");
    eprintln!("{rel}: {checked} comparisons, worst position error {worst:.2e} of the diagonal");
    common::assert_clean(&ctx);
    (checked, scaled)
}

const TIMES: [f32; 4] = [0.0, 0.31, 0.77, 1.0];

#[test]
fn fox_gpu_equals_cpu() {
    model_matches("Fox/Fox.glb", None, &TIMES);
}

#[test]
fn cesium_man_gpu_equals_cpu() {
    model_matches("CesiumMan/CesiumMan.glb", None, &TIMES);
}

#[test]
fn rigged_simple_and_figure_gpu_equal_cpu() {
    model_matches("RiggedSimple/RiggedSimple.glb", None, &TIMES);
    model_matches("RiggedFigure/RiggedFigure.glb", None, &TIMES);
}

#[test]
fn simple_skin_gpu_equals_cpu() {
    model_matches("SimpleSkin/SimpleSkin.gltf", None, &TIMES);
}

#[test]
fn woman_gpu_equals_cpu() {
    model_matches("Woman/Woman.gltf", None, &TIMES);
}

#[test]
fn dq_model_gpu_equals_cpu() {
    model_matches("DQ/dq.gltf", None, &TIMES);
}

/// The scale clip of the DQ chapter's model at several times: its palettes have scale
/// (the child joint grows 1 → 2 → 1), and the GPU keeps it as the CPU does.
#[test]
fn dq_twisting_with_scale_gpu_equals_cpu() {
    let (checked, scaled) =
        model_matches("DQ/dq.gltf", Some(&["TwistingWithScale"]), &[0.1, 0.25, 0.4, 0.5, 0.6, 0.75, 0.9]);
    assert!(scaled, "TwistingWithScale gave only rigid DQ palettes");
    assert_eq!(checked, 14);
}
