//! Headless rendering on lavapipe with validation and synchronization validation on: pixels
//! checked against analytic expectations, and the four skinning paths (vertex shader,
//! compute, CPU, bone texture) checked against each other image by image.

mod common;

use anim_core::skin::skinning;

use anim_core::skin::skinning::{NormalMode, SkinningInput, SkinningOutput};
use anim_core::skin::{Influences, Mesh, Palette, SkinMethod};
use anim_math::{Mat4, Quat, Vec3};
use anim_render_vk::{
    Camera, Coloring, FrameData, MeshId, OFFSCREEN_FORMAT, Offscreen, RenderError, Renderer, RgbaImage, SkinPath, lines,
};

const W: u32 = 160;
const H: u32 = 120;

fn near(a: [u8; 4], b: [u8; 4], tol: u8) -> bool {
    a.iter().zip(&b).all(|(x, y)| x.abs_diff(*y) <= tol)
}

fn camera_front(distance: f32) -> Camera {
    Camera { eye: Vec3::new(0.0, 0.0, distance), target: Vec3::zeros(), ..Camera::default() }
}

/// A bar along +x from 0 to 4, `segments` rings of 4 vertices, two joints (at x = 0 and
/// x = 2); weights blend linearly between x = 1.5 and x = 2.5.
fn bar(segments: usize) -> Mesh {
    let mut positions = Vec::new();
    let mut joints = Vec::new();
    let mut weights = Vec::new();
    let corners = [(-0.3f32, -0.3f32), (0.3, -0.3), (0.3, 0.3), (-0.3, 0.3)];
    for s in 0..=segments {
        let x = 4.0 * s as f32 / segments as f32;
        let w1 = ((x - 1.5) / 1.0).clamp(0.0, 1.0);
        for (y, z) in corners {
            positions.push(Vec3::new(x, y, z));
            joints.extend_from_slice(&[0u16, 1]);
            weights.extend_from_slice(&[1.0 - w1, w1]);
        }
    }
    let mut indices = Vec::new();
    for s in 0..segments as u32 {
        for c in 0..4u32 {
            let (a, b) = (s * 4 + c, s * 4 + (c + 1) % 4);
            let (a2, b2) = (a + 4, b + 4);
            indices.extend_from_slice(&[a, b, b2, a, b2, a2]);
        }
    }
    Mesh {
        positions,
        normals: Vec::new(),
        uvs: Vec::new(),
        influences: Some(Influences::new(2, joints, weights, 2).expect("valid bar influences")),
        indices,
    }
}

/// Palette of the bar: the child joint (at x = 2) bent by `angle` about z.
fn bar_palette(angle: f32) -> Vec<Mat4> {
    let pivot = Mat4::new_translation(&Vec3::new(2.0, 0.0, 0.0));
    let bend = pivot * Quat::from_euler_angles(0.0, 0.0, angle).to_homogeneous() * pivot.try_inverse().unwrap();
    vec![Mat4::identity(), bend]
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

#[test]
fn static_quad_and_clear_colour() {
    let ctx = common::context();
    let mut r = Renderer::new(&ctx, OFFSCREEN_FORMAT).unwrap();
    let mut target = Offscreen::new(&ctx, W, H).unwrap();
    let quad = r.add_mesh(&common::quad(1.0), &Coloring::Uniform([1.0, 0.0, 0.0])).unwrap();
    let mut frame = FrameData { camera: camera_front(4.0), clear_color: [0.2, 0.4, 0.6, 1.0], ..FrameData::default() };
    frame.add_static(quad, Mat4::identity(), [1.0, 1.0, 1.0]);
    frame.style_last([1.0, 1.0, 1.0], false);
    target.render(&mut r, &frame).unwrap();
    let img = target.image().unwrap();
    assert!(near(img.pixel(W / 2, H / 2), [255, 0, 0, 255], 1), "centre {:?}", img.pixel(W / 2, H / 2));
    assert!(near(img.pixel(2, 2), [51, 102, 153, 255], 1), "corner {:?}", img.pixel(2, 2));
    // The quad spans ±0.5 at distance 4: its right edge projects to this column.
    let edge = frame.camera.project(&Vec3::new(0.5, 0.0, 0.0), W, H).unwrap();
    let inside = (edge[0] - 2.0) as u32;
    let outside = (edge[0] + 2.0) as u32;
    assert!(near(img.pixel(inside, H / 2), [255, 0, 0, 255], 1));
    assert!(near(img.pixel(outside, H / 2), [51, 102, 153, 255], 1));
    // Lit: half-Lambert with the normal facing the light direction l gives 0.5 + 0.5 (n · l).
    frame.style_last([1.0, 1.0, 1.0], true);
    target.render(&mut r, &frame).unwrap();
    let lit = target.image().unwrap().pixel(W / 2, H / 2);
    let expected = ((0.5 + 0.5 * frame.camera.light_dir.z) * 255.0).round() as u8;
    assert!(near(lit, [expected, 0, 0, 255], 1), "lit {lit:?} expected red {expected}");
    common::assert_clean(&ctx);
}

/// The skinned vertices of `palette` on the CPU (the reference the GPU paths must match).
fn cpu_skin(r: &Renderer, id: MeshId, inf: &Influences, palette: &Palette) -> (Vec<Vec3>, Vec<Vec3>) {
    let gpu = r.mesh(id).unwrap();
    let (bind_p, bind_n) = (gpu.bind_positions(), gpu.bind_normals());
    let input = SkinningInput { influences: inf, positions: bind_p, normals: Some(bind_n) };
    let (mut p, mut n) = (vec![Vec3::zeros(); bind_p.len()], vec![Vec3::zeros(); bind_p.len()]);
    skinning::skin(
        &input,
        palette,
        NormalMode::Direct,
        &mut SkinningOutput { positions: &mut p, normals: Some(&mut n) },
    )
    .unwrap();
    (p, n)
}

#[test]
fn skinning_paths_draw_the_same_image() {
    let ctx = common::context();
    let mut r = Renderer::new(&ctx, OFFSCREEN_FORMAT).unwrap();
    let mut target = Offscreen::new(&ctx, W, H).unwrap();
    let mesh = bar(16);
    let id = r.add_mesh(&mesh, &Coloring::ByJoint).unwrap();
    let inf = mesh.influences.as_ref().unwrap();
    let matrices = bar_palette(1.2);
    let lbs = Palette::Matrices(matrices.clone());
    let dq = Palette::from_matrices(SkinMethod::Dq, &matrices);
    assert!(dq.dual_quats().unwrap().is_rigid());
    // The bent joint also grows non-uniformly about its pivot: a DQ palette with scale.
    let pivot = Mat4::new_translation(&Vec3::new(2.0, 0.0, 0.0));
    let grow = pivot * Mat4::new_nonuniform_scaling(&Vec3::new(1.4, 1.8, 0.7)) * pivot.try_inverse().unwrap();
    let dq_scaled = Palette::from_matrices(SkinMethod::Dq, &[matrices[0], matrices[1] * grow]);
    assert!(!dq_scaled.dual_quats().unwrap().is_rigid());
    let (lp, ln) = cpu_skin(&r, id, inf, &lbs);
    let (dp, dn) = cpu_skin(&r, id, inf, &dq);
    let (sp, sn) = cpu_skin(&r, id, inf, &dq_scaled);
    let model = Mat4::new_translation(&Vec3::new(-2.0, -0.5, 0.0));
    let mut frame = FrameData { camera: camera_front(7.0), ..FrameData::default() };
    let mut shot = |fill: &dyn Fn(&mut FrameData)| {
        frame.clear();
        fill(&mut frame);
        target.render(&mut r, &frame).unwrap();
        target.image().unwrap()
    };
    fn gpu(id: MeshId, model: Mat4, path: SkinPath, palette: &Palette) -> impl Fn(&mut FrameData) + '_ {
        move |f| f.add_skinned(id, model, path, palette).unwrap()
    }
    let lbs_vs = shot(&gpu(id, model, SkinPath::VertexShader, &lbs));
    let lbs_cs = shot(&gpu(id, model, SkinPath::Compute, &lbs));
    let lbs_cpu = shot(&|f| f.add_cpu(id, model, &lp, &ln).unwrap());
    let lbs_tex = shot(&|f| {
        f.add_skinned(id, model, SkinPath::BoneTexture, &lbs).unwrap();
        f.style_last([1.0; 3], true);
    });
    let dq_vs = shot(&gpu(id, model, SkinPath::VertexShader, &dq));
    let dq_cs = shot(&gpu(id, model, SkinPath::Compute, &dq));
    let dq_cpu = shot(&|f| f.add_cpu(id, model, &dp, &dn).unwrap());
    let scaled_vs = shot(&gpu(id, model, SkinPath::VertexShader, &dq_scaled));
    let scaled_cs = shot(&gpu(id, model, SkinPath::Compute, &dq_scaled));
    let scaled_cpu = shot(&|f| f.add_cpu(id, model, &sp, &sn).unwrap());
    let rest = shot(&gpu(id, model, SkinPath::VertexShader, &Palette::Matrices(bar_palette(0.0))));
    for (name, a, b) in [
        ("LBS vertex vs compute", &lbs_vs, &lbs_cs),
        ("LBS vertex vs CPU", &lbs_vs, &lbs_cpu),
        ("LBS vertex vs bone texture", &lbs_vs, &lbs_tex),
        ("DQ vertex vs compute", &dq_vs, &dq_cs),
        ("DQ vertex vs CPU", &dq_vs, &dq_cpu),
        ("scaled DQ vertex vs compute", &scaled_vs, &scaled_cs),
        ("scaled DQ vertex vs CPU", &scaled_vs, &scaled_cpu),
    ] {
        let f = diff_fraction(a, b, 2);
        assert!(f < 0.002, "{name}: {:.3}% of pixels differ", f * 100.0);
    }
    // The bend shows (the palette is used), LBS and DQ differ (the bend is large), and the
    // scale shows (it is not dropped).
    assert!(diff_fraction(&lbs_vs, &rest, 2) > 0.01);
    assert!(diff_fraction(&lbs_vs, &dq_vs, 2) > 0.001);
    assert!(diff_fraction(&dq_vs, &scaled_vs, 2) > 0.01);
    // A DQ palette cannot go through the bone texture.
    let mut f = FrameData::default();
    assert!(matches!(
        f.add_skinned(id, model, SkinPath::BoneTexture, &dq),
        Err(RenderError::Unsupported { path: SkinPath::BoneTexture, method: SkinMethod::Dq })
    ));
    common::assert_clean(&ctx);
}

#[test]
fn several_instances_each_with_its_own_palette() {
    let ctx = common::context();
    let mut r = Renderer::new(&ctx, OFFSCREEN_FORMAT).unwrap();
    let mut target = Offscreen::new(&ctx, W, H).unwrap();
    // A one-joint quad: its palette alone places it.
    let mut q = common::quad(0.6);
    q.influences = Some(Influences::new(1, vec![0; 4], vec![1.0; 4], 1).unwrap());
    let id = r.add_mesh(&q, &Coloring::Uniform([0.0, 1.0, 0.0])).unwrap();
    let mut frame = FrameData { camera: camera_front(5.0), clear_color: [0.0, 0.0, 0.0, 1.0], ..FrameData::default() };
    let places =
        [Vec3::new(-1.5, 0.8, 0.0), Vec3::new(1.5, 0.8, 0.0), Vec3::new(-1.5, -0.8, 0.0), Vec3::new(1.5, -0.8, 0.0)];
    let paths = [SkinPath::VertexShader, SkinPath::Compute, SkinPath::VertexShader, SkinPath::Compute];
    for (i, (p, path)) in places.iter().zip(paths).enumerate() {
        let palette = [Mat4::new_translation(p)];
        if i < 2 {
            frame.add_skinned(id, Mat4::identity(), path, &Palette::Matrices(palette.to_vec())).unwrap();
        } else {
            frame.add_skinned(id, Mat4::identity(), path, &Palette::from_matrices(SkinMethod::Dq, &palette)).unwrap();
        }
        frame.style_last([1.0; 3], false);
    }
    target.render(&mut r, &frame).unwrap();
    let img = target.image().unwrap();
    for p in &places {
        let [x, y] = frame.camera.project(p, W, H).unwrap();
        assert!(near(img.pixel(x as u32, y as u32), [0, 255, 0, 255], 1), "no quad at {p:?}");
    }
    // Nothing at the centre, where the untransformed quad would be.
    assert!(near(img.pixel(W / 2, H / 2), [0, 0, 0, 255], 1));
    common::assert_clean(&ctx);
}

#[test]
fn lines_and_overlay() {
    let ctx = common::context();
    let mut r = Renderer::new(&ctx, OFFSCREEN_FORMAT).unwrap();
    let mut target = Offscreen::new(&ctx, W, H).unwrap();
    let quad = r.add_mesh(&common::quad(2.0), &Coloring::Uniform([0.0, 0.0, 1.0])).unwrap();
    let mut frame = FrameData { camera: camera_front(4.0), clear_color: [0.0, 0.0, 0.0, 1.0], ..FrameData::default() };
    frame.add_static(quad, Mat4::identity(), [1.0; 3]);
    frame.style_last([1.0; 3], false);
    // A depth-tested line behind the quad is hidden; an overlay line behind it shows.
    frame.line(Vec3::new(-0.8, 0.3, -1.0), Vec3::new(0.8, 0.3, -1.0), [1.0, 0.0, 0.0, 1.0]);
    frame.overlay_line(Vec3::new(-0.8, -0.3, -1.0), Vec3::new(0.8, -0.3, -1.0), [1.0, 1.0, 0.0, 1.0]);
    target.render(&mut r, &frame).unwrap();
    let img = target.image().unwrap();
    // The rows around the projected line (rasterization may land on either neighbour).
    let row = |y: f32| {
        let [_, py] = frame.camera.project(&Vec3::new(0.0, y, -1.0), W, H).unwrap();
        let py = py as u32;
        (0..W).flat_map(|x| [img.pixel(x, py - 1), img.pixel(x, py), img.pixel(x, py + 1)]).collect::<Vec<_>>()
    };
    assert!(row(0.3).iter().all(|p| p[0] < 2), "hidden line visible");
    assert!(row(-0.3).iter().filter(|p| near(**p, [255, 255, 0, 255], 1)).count() > 20, "overlay line missing");
    lines::grid(&mut frame, 4, 0.5, -1.0);
    target.render(&mut r, &frame).unwrap();
    common::assert_clean(&ctx);
}

#[test]
fn frame_errors_name_the_instance() {
    let ctx = common::context();
    let mut r = Renderer::new(&ctx, OFFSCREEN_FORMAT).unwrap();
    let mut target = Offscreen::new(&ctx, W, H).unwrap();
    let id = r.add_mesh(&bar(4), &Coloring::ByJoint).unwrap();
    let stat = r.add_mesh(&common::quad(1.0), &Coloring::Uniform([1.0; 3])).unwrap();
    let mut frame = FrameData::default();
    let one = Palette::Matrices(vec![Mat4::identity()]);
    frame.add_skinned(id, Mat4::identity(), SkinPath::Compute, &one).unwrap();
    let e = target.render(&mut r, &frame).unwrap_err().to_string();
    assert!(e.contains("instance 0") && e.contains("palette"), "{e}");
    frame.clear();
    frame.add_skinned(stat, Mat4::identity(), SkinPath::VertexShader, &one).unwrap();
    let e = target.render(&mut r, &frame).unwrap_err().to_string();
    assert!(e.contains("without influences"), "{e}");
    frame.clear();
    frame.add_cpu(id, Mat4::identity(), &[Vec3::zeros()], &[Vec3::zeros()]).unwrap();
    assert!(target.render(&mut r, &frame).is_err());
    assert!(
        r.add_mesh(
            &Mesh { positions: vec![Vec3::zeros()], indices: vec![0, 0, 1], ..Mesh::default() },
            &Coloring::Uniform([1.0; 3])
        )
        .is_err()
    );
    assert!(Offscreen::new(&ctx, 0, 10).is_err());
    // The renderer still works after rejected frames.
    frame.clear();
    target.render(&mut r, &frame).unwrap();
    common::assert_clean(&ctx);
}
