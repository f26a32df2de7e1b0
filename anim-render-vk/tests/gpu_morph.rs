//! Morph targets on the GPU (the compute `*_morph` passes) equal the CPU path
//! (`MorphTargets::apply`, then `anim_core::skinning::skin`) to 1e-5 of the bounding-box
//! diagonal, LBS and DQ, with normals; the active-target limit
//! ([`MAX_ACTIVE_MORPH_TARGETS`]) is reached and enforced; and the glTF SimpleMorph asset
//! matches the CPU path of anim-gltf. Validation layer on.

mod common;

use anim_core::skinning::{self, NormalMode, SkinningInput, SkinningOutput};
use anim_core::{Influences, MorphTargets, Palette, SkinMethod};
use anim_math::Vec3;
use anim_render_vk::{GpuSkinner, MAX_ACTIVE_MORPH_TARGETS, RenderError};
use common::Rng;

fn diagonal(p: &[Vec3]) -> f32 {
    let (lo, hi) = p.iter().fold((p[0], p[0]), |(lo, hi), q| (lo.inf(q), hi.sup(q)));
    (hi - lo).norm()
}

fn max_diff(a: &[Vec3], b: &[Vec3]) -> f32 {
    a.iter().zip(b).map(|(x, y)| (x - y).norm()).fold(0.0f32, f32::max)
}

fn random_targets(n: usize, count: usize, seed: u64) -> MorphTargets {
    let mut r = Rng(seed);
    let mut d = || {
        (0..count)
            .map(|_| (0..n).map(|_| Vec3::new(r.range(-0.3, 0.3), r.range(-0.3, 0.3), r.range(-0.3, 0.3))).collect())
            .collect::<Vec<Vec<Vec3>>>()
    };
    let (p, nd) = (d(), d());
    MorphTargets::new(n, count).with_positions(p).unwrap().with_normals(nd).unwrap()
}

/// CPU: morph, then skin. GPU: both in one pass. Largest position and normal differences
/// and the CPU result's diagonal.
#[allow(clippy::too_many_arguments)]
fn compare(
    sk: &GpuSkinner,
    p: &[Vec3],
    nrm: &[Vec3],
    targets: &MorphTargets,
    w: &[f32],
    inf: &Influences,
    palette: &Palette,
) -> (f32, f32, f32) {
    let n = p.len();
    let (mut mp, mut mn) = (vec![Vec3::zeros(); n], vec![Vec3::zeros(); n]);
    targets.apply(w, p, &mut mp, Some((nrm, &mut mn))).unwrap();
    let (mut cp, mut cn, mut gp, mut gn) =
        (vec![Vec3::zeros(); n], vec![Vec3::zeros(); n], vec![Vec3::zeros(); n], vec![Vec3::zeros(); n]);
    let input = SkinningInput { influences: inf, positions: &mp, normals: Some(&mn) };
    skinning::skin(
        &input,
        palette,
        NormalMode::Direct,
        &mut SkinningOutput { positions: &mut cp, normals: Some(&mut cn) },
    )
    .unwrap();
    sk.skin_morphed(p, Some(nrm), Some((targets, w)), inf, palette, NormalMode::Direct, &mut gp, Some(&mut gn))
        .unwrap();
    (max_diff(&cp, &gp), max_diff(&cn, &gn), diagonal(&cp))
}

#[test]
fn gpu_morph_then_skin_equals_cpu_up_to_the_active_target_limit() {
    let ctx = common::context();
    let sk = GpuSkinner::new(&ctx).unwrap();
    let n = 500;
    let (p, nrm, inf) = common::random_skin(n, 4, 10, 3);
    let (m, _) = common::random_palette(10, 4, true);
    let lbs = Palette::Matrices(m.clone());
    let dq = Palette::from_matrices(SkinMethod::Dq, &m);
    // More targets than may be active at once: any number a mesh is fine.
    let count = MAX_ACTIVE_MORPH_TARGETS + 16;
    let targets = random_targets(n, count, 9);
    let mut r = Rng(17);
    for active in [0usize, 1, 4, 16, MAX_ACTIVE_MORPH_TARGETS] {
        // `active` non-zero weights spread over the targets, some negative or above 1.
        let mut w = vec![0.0f32; count];
        for k in 0..active {
            w[(k * 7 + 3) % count] = r.range(-0.5, 1.5);
        }
        assert_eq!(w.iter().filter(|x| **x != 0.0).count(), active);
        for (name, pal) in [("LBS", &lbs), ("DQ", &dq)] {
            let (dp, dn, diag) = compare(&sk, &p, &nrm, &targets, &w, &inf, pal);
            assert!(dp <= 1e-5 * diag && dn < 1e-4, "{name}, {active} active: {dp} (diagonal {diag}), {dn}");
        }
    }
    // The morph changes the result (the test is not vacuous).
    let w1: Vec<f32> = (0..count).map(|t| if t == 5 { 1.0 } else { 0.0 }).collect();
    let (mut a, mut b) = (vec![Vec3::zeros(); n], vec![Vec3::zeros(); n]);
    sk.skin(&p, None, &inf, &lbs, NormalMode::Direct, &mut a, None).unwrap();
    sk.skin_morphed(&p, None, Some((&targets, &w1)), &inf, &lbs, NormalMode::Direct, &mut b, None).unwrap();
    assert!(max_diff(&a, &b) > 0.01);
    // One more active target than the limit is refused, naming the limit.
    let over: Vec<f32> = (0..count).map(|t| if t <= MAX_ACTIVE_MORPH_TARGETS { 0.5 } else { 0.0 }).collect();
    let e = sk.skin_morphed(&p, None, Some((&targets, &over)), &inf, &lbs, NormalMode::Direct, &mut b, None);
    assert!(matches!(&e, Err(RenderError::Input(m)) if m.contains("at most 64")), "{e:?}");
    // Weights for another target count are refused.
    let e = sk.skin_morphed(&p, None, Some((&targets, &[1.0])), &inf, &lbs, NormalMode::Direct, &mut b, None);
    assert!(matches!(e, Err(RenderError::Input(_))));
    common::assert_clean(&ctx);
}

#[test]
fn simple_morph_asset_gpu_equals_cpu() {
    let path = format!("{}/../../shared/assets/SimpleMorph/SimpleMorph.gltf", env!("CARGO_MANIFEST_DIR"));
    let model = anim_gltf::load(path).unwrap();
    let inst = &model.meshes[0];
    let targets = inst.morph.as_ref().unwrap();
    let ctx = common::context();
    let sk = GpuSkinner::new(&ctx).unwrap();
    // Unskinned: a one-joint identity skin makes the GPU pass a plain morph.
    let n = inst.data.vertex_count();
    let inf = Influences::new(1, vec![0; n], vec![1.0; n], 1).unwrap();
    let pal = Palette::Matrices(vec![anim_math::Mat4::identity()]);
    let mut scratch = anim_gltf::SkinScratch::new();
    let world = vec![anim_math::Mat4::identity(); model.skeleton.len()];
    for t in [0.0f32, 0.5, 1.0, 1.5, 2.5, 3.25, 4.0] {
        let mut w = vec![0.0; targets.target_count()];
        model.sample_weights(0, 0, t, anim_core::TimePolicy::Clamp, &mut w).unwrap();
        let (mut cpu, mut gpu) = (vec![Vec3::zeros(); n], vec![Vec3::zeros(); n]);
        model.skin_instance_weighted(0, &world, Some(&w), SkinMethod::Lbs, &mut scratch, &mut cpu, None).unwrap();
        sk.skin_morphed(
            &inst.data.positions,
            None,
            Some((targets, &w)),
            &inf,
            &pal,
            NormalMode::Direct,
            &mut gpu,
            None,
        )
        .unwrap();
        assert!(max_diff(&cpu, &gpu) <= 1e-5 * diagonal(&cpu), "t={t}: {cpu:?} vs {gpu:?}");
    }
    common::assert_clean(&ctx);
}
