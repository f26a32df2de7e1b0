//! Morph targets on the GPU (the compute `*_morph` passes) equal the CPU path
//! (`MorphTargets::apply`, then `anim_core::skin::skinning::skin`) to 1e-5 of the bounding-box
//! diagonal, LBS and DQ, with normals; the active-target limit
//! ([`MAX_ACTIVE_MORPH_TARGETS`]) is reached and enforced; and the glTF SimpleMorph asset
//! matches the CPU path of anim-gltf. The `Renderer`'s own vertex-shader and compute paths
//! (`FrameData::add_skinned_morphed`) draw the same image as the CPU-morphed and -skinned
//! vertices with 0, a few and exactly 64 active targets; 65 and the bone-texture path are
//! typed errors. Validation layer on.

mod common;

use anim_core::skin::skinning;

use anim_core::skin::skinning::{NormalMode, SkinningInput, SkinningOutput};
use anim_core::skin::{Influences, Mesh, MorphTargets, Palette, SkinMethod};
use anim_math::{Mat4, Quat, Vec3};
use anim_render_vk::{
    Camera, Coloring, FrameData, GpuSkinner, MAX_ACTIVE_MORPH_TARGETS, OFFSCREEN_FORMAT, Offscreen, RenderError,
    Renderer, RgbaImage, SkinPath,
};
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
    assert!(matches!(&e, Err(RenderError::TooManyMorphTargets { active: 65, max: 64, .. })), "{e:?}");
    assert!(e.unwrap_err().to_string().contains("at most 64"));
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
        model.sample_weights(0, 0, t, anim_core::clip::TimePolicy::Clamp, &mut w).unwrap();
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

/// A bar along +x from 0 to 4, `segments` rings of 4 vertices, two joints blended between
/// x = 1.5 and x = 2.5.
fn bar(segments: usize) -> Mesh {
    let (mut positions, mut joints, mut weights, mut indices) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for s in 0..=segments {
        let x = 4.0 * s as f32 / segments as f32;
        let w1 = (x - 1.5).clamp(0.0, 1.0);
        for (y, z) in [(-0.3f32, -0.3f32), (0.3, -0.3), (0.3, 0.3), (-0.3, 0.3)] {
            positions.push(Vec3::new(x, y, z));
            joints.extend_from_slice(&[0u16, 1]);
            weights.extend_from_slice(&[1.0 - w1, w1]);
        }
    }
    for s in 0..segments as u32 {
        for c in 0..4u32 {
            let (a, b) = (s * 4 + c, s * 4 + (c + 1) % 4);
            indices.extend_from_slice(&[a, b, b + 4, a, b + 4, a + 4]);
        }
    }
    let influences = Some(Influences::new(2, joints, weights, 2).unwrap());
    Mesh { positions, influences, indices, ..Mesh::default() }
}

/// `count` smooth targets of the bar: target t swells or shifts the cross-section by a
/// sine along x (amplitude `amp`), normals tilted a little.
fn smooth_targets(p: &[Vec3], count: usize, amp: f32) -> MorphTargets {
    let per = |f: &dyn Fn(usize, &Vec3) -> Vec3| {
        (0..count).map(|t| p.iter().map(|v| f(t, v)).collect()).collect::<Vec<Vec<Vec3>>>()
    };
    let pos = per(&|t, v| {
        let s = (v.x * (0.7 + 0.13 * t as f32) + t as f32).sin() * amp;
        match t % 3 {
            0 => Vec3::new(0.0, v.y * s, v.z * s),
            1 => Vec3::new(0.0, s, 0.0),
            _ => Vec3::new(0.0, 0.0, s),
        }
    });
    let nrm = per(&|t, v| Vec3::new(0.0, 0.05 * (v.x + t as f32).cos(), 0.0));
    MorphTargets::new(p.len(), count).with_positions(pos).unwrap().with_normals(nrm).unwrap()
}

fn diff_fraction(a: &RgbaImage, b: &RgbaImage, tol: u8) -> f32 {
    let n = a
        .pixels
        .chunks_exact(4)
        .zip(b.pixels.chunks_exact(4))
        .filter(|(x, y)| x.iter().zip(y.iter()).any(|(p, q)| p.abs_diff(*q) > tol))
        .count();
    n as f32 / (a.width * a.height) as f32
}

/// The Renderer's vertex-shader and compute paths, LBS and DQ, morph then skin: each image
/// equals that of the CPU result (`MorphTargets::apply` then `skinning::skin`, drawn as
/// CPU-skinned vertices) with 0, 3 and exactly `MAX_ACTIVE_MORPH_TARGETS` active targets of
/// 70, and the compute path's vertices, read back, equal the CPU ones to 1e-5 of the
/// bounding-box diagonal (the vertex-shader path runs the same GLSL and draws the same
/// image); the morph visibly changes the image; more active targets than the limit, weights for
/// another target count and the bone-texture path are typed errors.
#[test]
fn renderer_vertex_and_compute_paths_morph_then_skin() {
    const W: u32 = 160;
    const H: u32 = 120;
    let ctx = common::context();
    let mut r = Renderer::new(&ctx, OFFSCREEN_FORMAT).unwrap();
    let mut target = Offscreen::new(&ctx, W, H).unwrap();
    let mesh = bar(24);
    let id = r.add_mesh(&mesh, &Coloring::ByJoint).unwrap();
    let inf = mesh.influences.as_ref().unwrap();
    let (bp, bn) = (r.mesh(id).unwrap().bind_positions().to_vec(), r.mesh(id).unwrap().bind_normals().to_vec());
    let n = bp.len();
    let count = MAX_ACTIVE_MORPH_TARGETS + 6;
    let targets = smooth_targets(&bp, count, 0.04);
    // Targets for another vertex count are refused; then the real ones are uploaded.
    assert!(matches!(r.add_morph_targets(id, &MorphTargets::new(n + 1, 2)), Err(RenderError::Input(_))));
    r.add_morph_targets(id, &targets).unwrap();
    assert_eq!(r.mesh(id).unwrap().morph_target_count(), count as u32);
    let pivot = Mat4::new_translation(&Vec3::new(2.0, 0.0, 0.0));
    let bend = pivot * Quat::from_euler_angles(0.3, 0.0, 0.9).to_homogeneous() * pivot.try_inverse().unwrap();
    let lbs = Palette::Matrices(vec![Mat4::identity(), bend]);
    let dq = Palette::from_matrices(SkinMethod::Dq, &[Mat4::identity(), bend]);
    let model = Mat4::new_translation(&Vec3::new(-2.0, -0.8, 0.0));
    let camera = Camera { eye: Vec3::new(0.0, 0.5, 6.0), target: Vec3::zeros(), ..Camera::default() };
    let mut frame = FrameData { camera, ..FrameData::default() };
    let mut shot = |r: &mut Renderer, fill: &dyn Fn(&mut FrameData)| {
        frame.clear();
        fill(&mut frame);
        target.render(r, &frame).unwrap();
        target.image().unwrap()
    };
    let mut read = Vec::new();
    let mut rng = Rng(23);
    for active in [0usize, 3, MAX_ACTIVE_MORPH_TARGETS] {
        let mut w = vec![0.0f32; count];
        for k in 0..active {
            // Few targets: large weights; all 64: moderate ones (some negative).
            let (lo, hi) = if active <= 3 { (2.0, 4.0) } else { (-0.5, 1.5) };
            w[(k * 11 + 2) % count] = rng.range(lo, hi);
        }
        assert_eq!(w.iter().filter(|x| **x != 0.0).count(), active);
        let (mut mp, mut mn) = (vec![Vec3::zeros(); n], vec![Vec3::zeros(); n]);
        targets.apply(&w, &bp, &mut mp, Some((&bn, &mut mn))).unwrap();
        // Morphed normals are not unit length; the GPU renormalizes after skinning, and so
        // does the CPU except in its rigid-DQ kernel (which assumes unit input normals), so
        // the reference starts from unit normals (same direction, same result).
        for v in &mut mn {
            *v = v.normalize();
        }
        for (name, pal) in [("LBS", &lbs), ("DQ", &dq)] {
            let (mut cp, mut cn) = (vec![Vec3::zeros(); n], vec![Vec3::zeros(); n]);
            let input = SkinningInput { influences: inf, positions: &mp, normals: Some(&mn) };
            let mut out = SkinningOutput { positions: &mut cp, normals: Some(&mut cn) };
            skinning::skin(&input, pal, NormalMode::Direct, &mut out).unwrap();
            let cpu = shot(&mut r, &|f| f.add_cpu(id, model, &cp, &cn).unwrap());
            let plain = shot(&mut r, &|f| f.add_skinned(id, model, SkinPath::VertexShader, pal).unwrap());
            let mut vertex_image = None;
            for path in [SkinPath::VertexShader, SkinPath::Compute] {
                let gpu = shot(&mut r, &|f| f.add_skinned_morphed(id, model, path, pal, &w).unwrap());
                if path == SkinPath::Compute {
                    // Both paths run the same GLSL (`bind_vertex`, then `skin_vertex`): the
                    // vertex-shader image is the compute one, whose vertices are checked next.
                    let d = diff_fraction(vertex_image.as_ref().unwrap(), &gpu, 1);
                    assert!(d < 0.0005, "{name}, {active} active: vertex vs compute, {:.3}% of pixels", d * 100.0);
                    // The compute output read back: the CPU result to 1e-5 of its diagonal.
                    r.compute_skinned(0, &mut read).unwrap();
                    let gp: Vec<Vec3> =
                        read.iter().map(|v| Vec3::new(v.position[0], v.position[1], v.position[2])).collect();
                    let gn: Vec<Vec3> = read.iter().map(|v| Vec3::new(v.normal[0], v.normal[1], v.normal[2])).collect();
                    let (dp, dn, diag) = (max_diff(&gp, &cp), max_diff(&gn, &cn), diagonal(&cp));
                    assert!(dp <= 1e-5 * diag && dn < 1e-4, "{name}, {active} active: {dp} (diagonal {diag}), {dn}");
                    assert!(matches!(r.compute_skinned(1, &mut read), Err(RenderError::Input(_))));
                }
                let d = diff_fraction(&gpu, &cpu, 2);
                assert!(d < 0.002, "{name} {path:?}, {active} active: {:.3}% of pixels differ", d * 100.0);
                // The morph shows (the comparison is not vacuous); none: the plain image.
                let m = diff_fraction(&gpu, &plain, 2);
                if active == 0 {
                    assert!(m < 0.002, "{name} {path:?}: weights all zero change the image");
                } else {
                    assert!(m > 0.01, "{name} {path:?}, {active} active: the morph does not show ({m})");
                }
                vertex_image = Some(gpu);
            }
        }
    }
    // One more than the limit: refused when added, and when the frame is rendered.
    let over: Vec<f32> = (0..count).map(|t| if t <= MAX_ACTIVE_MORPH_TARGETS { 0.1 } else { 0.0 }).collect();
    let mut f = FrameData::default();
    let e = f.add_skinned_morphed(id, model, SkinPath::VertexShader, &lbs, &over);
    assert!(matches!(e, Err(RenderError::TooManyMorphTargets { active: 65, max: 64, .. })), "{e:?}");
    assert!(f.instances.is_empty() && f.morph_weights.is_empty());
    f.add_skinned_morphed(id, model, SkinPath::Compute, &lbs, &vec![0.0; count]).unwrap();
    f.morph_weights.copy_from_slice(&over);
    let e = target.render(&mut r, &f);
    assert!(
        matches!(&e, Err(RenderError::TooManyMorphTargets { what, active: 65, max: 64 }) if what == "instance 0"),
        "{e:?}"
    );
    // Weights for another target count, and a non-finite weight.
    f.clear();
    f.add_skinned_morphed(id, model, SkinPath::VertexShader, &lbs, &[0.5; 3]).unwrap();
    assert!(matches!(target.render(&mut r, &f), Err(RenderError::Input(m)) if m.contains("instance 0")));
    assert!(matches!(
        f.add_skinned_morphed(id, model, SkinPath::VertexShader, &lbs, &[f32::NAN]),
        Err(RenderError::Input(_))
    ));
    // The bone texture does not morph: a typed error for non-zero weights.
    let mut one = vec![0.0; count];
    one[1] = 1.0;
    assert!(matches!(
        f.add_skinned_morphed(id, model, SkinPath::BoneTexture, &lbs, &one),
        Err(RenderError::MorphUnsupported { path: SkinPath::BoneTexture })
    ));
    common::assert_clean(&ctx);
}
