//! Every demo runs headless on lavapipe with validation and synchronization validation on
//! (any message fails the run); the viewer's image is checked against the CPU-projected
//! skinned vertices; one windowed run under `xvfb-run`.

use anim_core::skin::SkinMethod;
use anim_math::Mat4;
use anim_render_vk::{Context, ContextDesc, Deform, FrameData, OFFSCREEN_FORMAT, Offscreen, Renderer, RgbaImage};
use demos::app::HEADLESS_DT;
use demos::scenes::{ch10_cpu_gpu, ch10_poses, ch14_dq_vs_lbs, seed_bone_texture, seed_rigid_box, viewer};
use demos::{App, Backend, CommonArgs, HeadlessRun, Key, Scene, run_headless};

mod common;

const W: u32 = 240;
const H: u32 = 160;

/// Pixels that differ from the clear colour (±1) of the top-left corner.
fn foreground(img: &RgbaImage) -> Vec<(u32, u32)> {
    let bg = img.pixel(0, 0);
    let mut v = Vec::new();
    for y in 0..img.height {
        for x in 0..img.width {
            if img.pixel(x, y).iter().zip(&bg).any(|(a, b)| a.abs_diff(*b) > 1) {
                v.push((x, y));
            }
        }
    }
    v
}

/// Runs `S` headless (4 frames) with validation on; `drawn_as_predicted` then checks that
/// the last frame drew what the CPU predicts for it (see `common`); no validation message,
/// teardown included.
fn runs_clean<S: Scene>(drawn_as_predicted: impl FnOnce(&mut HeadlessRun<S>)) {
    let mut run = run_headless::<S>(&CommonArgs::headless(4, W, H)).unwrap_or_else(|e| panic!("{}: {e}", S::NAME));
    assert!(run.context.validation_enabled());
    assert_eq!(run.context.validation_count(), 0, "{}", run.context.validation_messages().join("\n"));
    drawn_as_predicted(&mut run);
    assert_eq!(run.context.validation_count(), 0, "{}", run.context.validation_messages().join("\n"));
    // Tearing everything down leaves no Vulkan object alive (reported at vkDestroyDevice).
    let log = run.context.validation_log();
    drop(run);
    assert_eq!(log.count(), 0, "{}: {}", S::NAME, log.messages().join("\n"));
}

#[test]
fn viewer_runs_clean() {
    runs_clean::<viewer::Viewer>(|r| {
        common::assert_stage_drawn("viewer", &r.context, &mut r.renderer, &r.app.frame, &mut r.app.scene.stage, (W, H))
    });
}

#[test]
fn ch10_poses_runs_clean() {
    runs_clean::<ch10_poses::Poses>(|r| {
        let drawn = common::drawn_overlay_lines(&r.context, &mut r.renderer, &r.app.frame, W, H);
        let segments = common::assert_lines_match("ch10_poses", &drawn, &r.app.frame.camera, &r.app.frame);
        assert!(segments > 3 * 20, "{segments} segments: three skeletons and their joint axes");
    });
}

#[test]
fn ch10_cpu_gpu_runs_clean() {
    runs_clean::<ch10_cpu_gpu::CpuGpu>(|r| {
        let frame = &r.app.frame;
        assert_eq!(frame.instances.len(), 2, "one copy skinned on the CPU, one on the GPU");
        common::assert_stage_drawn("ch10_cpu_gpu", &r.context, &mut r.renderer, frame, &mut r.app.scene.stage, (W, H))
    });
}

#[test]
fn ch14_dq_vs_lbs_runs_clean() {
    runs_clean::<ch14_dq_vs_lbs::DqVsLbs>(|r| {
        common::assert_stage_drawn(
            "ch14_dq_vs_lbs",
            &r.context,
            &mut r.renderer,
            &r.app.frame,
            &mut r.app.scene.stage,
            (W, H),
        )
    });
}

#[test]
fn seed_bone_texture_runs_clean() {
    runs_clean::<seed_bone_texture::BoneTexture>(|r| {
        let (_, grid) = seed_bone_texture::grid().unwrap();
        let frame = &r.app.frame;
        assert_eq!(frame.instances.len(), 1);
        let drawn = common::drawn_instances(&r.context, &mut r.renderer, frame, W, H, |_| true);
        let predicted = common::silhouette(&frame.camera, W, H, &common::frame_triangles(frame, |_| Some(&grid)));
        common::assert_matches("seed_bone_texture", &drawn, &predicted);
    });
}

#[test]
fn seed_rigid_box_runs_clean() {
    runs_clean::<seed_rigid_box::RigidBox>(|r| {
        let (_, boxes, _) = seed_rigid_box::two_bone_box().unwrap();
        let frame = &r.app.frame;
        assert_eq!(frame.instances.len(), 1);
        let drawn = common::drawn_instances(&r.context, &mut r.renderer, frame, W, H, |_| true);
        let predicted = common::silhouette(&frame.camera, W, H, &common::frame_triangles(frame, |_| Some(&boxes)));
        common::assert_matches("seed_rigid_box", &drawn, &predicted);
    });
}

/// ch10_cpu_gpu draws the character skinned on the CPU (left) and on the GPU (right): the
/// two halves are one image once the offset between them is taken out. Under perspective a
/// sideways offset also turns a copy in view, so it is taken out where it was put in, in
/// world space: each copy is drawn alone at the centre with the demo's camera, untinted
/// (the demo tints the sides warm and cool). CPU and GPU skinning differ by float rounding
/// only, which flips a pixel only where its centre lies within rounding of the silhouette
/// and moves a shade by a level or two: at most 10 pixels differ by more than 2 levels, on
/// every GPU path and method. The halves of the demo's own image are each checked against
/// the CPU's silhouette in `ch10_cpu_gpu_runs_clean`.
#[test]
fn ch10_cpu_gpu_halves_agree() {
    for (backend, method) in [(Backend::Vertex, SkinMethod::Lbs), (Backend::Compute, SkinMethod::Dq)] {
        let ctx = Context::new(&ContextDesc { validation: true, window: None }).unwrap();
        let mut renderer = Renderer::new(&ctx, OFFSCREEN_FORMAT).unwrap();
        let mut args = CommonArgs::headless(1, W, H);
        args.start = 0.3;
        let mut app = App::<ch10_cpu_gpu::CpuGpu>::new(&mut renderer, &args).unwrap();
        app.scene.stage.backend = backend;
        app.scene.stage.method = method;
        app.step(&mut renderer, 0.0).unwrap();
        let frame = &app.frame;
        assert_eq!(frame.instances.len(), 2);
        let mut half = |i: usize| {
            let mut f = frame.clone();
            f.lines.clear();
            f.overlay_lines.clear();
            let mut inst = frame.instances[i];
            inst.model = Mat4::identity();
            inst.tint = [1.0; 3];
            f.instances = vec![inst];
            common::render(&ctx, &mut renderer, &f, W, H)
        };
        let (cpu, gpu) = (half(0), half(1));
        assert!(matches!(frame.instances[0].deform, Deform::Cpu { .. }), "the left copy is skinned on the CPU");
        assert!(matches!(frame.instances[1].deform, Deform::Gpu { .. }), "the right copy is skinned on the GPU");
        let shown = common::differing(
            &cpu,
            &common::render(&ctx, &mut renderer, &FrameData { instances: vec![], ..frame.clone() }, W, H),
        );
        assert!(shown.count() > 1000, "{backend:?}: the character covers only {} pixels", shown.count());
        let differ = cpu
            .pixels
            .chunks_exact(4)
            .zip(gpu.pixels.chunks_exact(4))
            .filter(|(p, q)| p.iter().zip(q.iter()).any(|(x, y)| x.abs_diff(*y) > 2))
            .count();
        eprintln!("ch10_cpu_gpu {backend:?} {method:?}: {differ} of {} pixels differ", shown.count());
        assert!(differ <= 10, "{backend:?} {method:?}: {differ} pixels differ between the CPU and GPU halves");
        assert_eq!(ctx.validation_count(), 0, "{}", ctx.validation_messages().join("\n"));
    }
}

/// Renders the viewer (grid and skeleton off) at `time` with `backend`/`method`; returns
/// the image and the CPU-projected bounding box of the skinned vertices.
fn viewer_shot(time: f32, backend: Backend, method: SkinMethod) -> (RgbaImage, [f32; 4]) {
    let ctx = Context::new(&ContextDesc { validation: true, window: None }).unwrap();
    let mut renderer = Renderer::new(&ctx, OFFSCREEN_FORMAT).unwrap();
    let mut target = Offscreen::new(&ctx, W, H).unwrap();
    let mut args = CommonArgs::headless(1, W, H);
    args.start = time;
    let mut app = App::<viewer::Viewer>::new(&mut renderer, &args).unwrap();
    app.scene.show_grid = false;
    app.scene.stage.show_skeleton = false;
    app.scene.stage.backend = backend;
    app.scene.stage.method = method;
    app.step(&mut renderer, 0.0).unwrap();
    target.render(&mut renderer, &app.frame).unwrap();
    let img = target.image().unwrap();
    // The independent prediction: skin on the CPU, project every vertex with the camera.
    let v = &mut app.scene.stage;
    v.posed.skin_cpu(&v.character, method).unwrap();
    let mut b = [f32::MAX, f32::MAX, f32::MIN, f32::MIN];
    for p in v.posed.positions.iter().flatten() {
        let [x, y] = app.frame.camera.project(p, W, H).expect("character in front of the camera");
        b = [b[0].min(x), b[1].min(y), b[2].max(x), b[3].max(y)];
    }
    assert_eq!(ctx.validation_count(), 0, "{}", ctx.validation_messages().join("\n"));
    (img, b)
}

#[test]
fn viewer_image_matches_cpu_projection_and_animates() {
    for (backend, method) in
        [(Backend::Vertex, SkinMethod::Lbs), (Backend::Compute, SkinMethod::Dq), (Backend::Cpu, SkinMethod::Lbs)]
    {
        let (img, b) = viewer_shot(0.25, backend, method);
        let fg = foreground(&img);
        assert!(fg.len() > 500, "{backend:?}: {} character pixels", fg.len());
        // Every character pixel lies inside the predicted box (one pixel of rasterization slack).
        for &(x, y) in &fg {
            let (x, y) = (x as f32 + 0.5, y as f32 + 0.5);
            assert!(
                x >= b[0] - 1.0 && x <= b[2] + 1.0 && y >= b[1] - 1.0 && y <= b[3] + 1.0,
                "{backend:?}: pixel ({x}, {y}) outside {b:?}"
            );
        }
        // And the box is filled out to its edges (within 2 pixels on each side).
        let lo_x = fg.iter().map(|p| p.0).min().unwrap() as f32;
        let hi_x = fg.iter().map(|p| p.0).max().unwrap() as f32 + 1.0;
        let lo_y = fg.iter().map(|p| p.1).min().unwrap() as f32;
        let hi_y = fg.iter().map(|p| p.1).max().unwrap() as f32 + 1.0;
        for (got, want) in [(lo_x, b[0]), (hi_x, b[2]), (lo_y, b[1]), (hi_y, b[3])] {
            assert!(
                (got - want).abs() <= 2.0,
                "{backend:?}: image bounds {:?} vs predicted {b:?}",
                [lo_x, lo_y, hi_x, hi_y]
            );
        }
    }
    // Two animation times give different images.
    let (a, _) = viewer_shot(0.0, Backend::Vertex, SkinMethod::Lbs);
    let (b, _) = viewer_shot(0.5, Backend::Vertex, SkinMethod::Lbs);
    let differing = a
        .pixels
        .chunks_exact(4)
        .zip(b.pixels.chunks_exact(4))
        .filter(|(p, q)| p.iter().zip(q.iter()).any(|(x, y)| x.abs_diff(*y) > 2))
        .count();
    assert!(differing > 200, "only {differing} pixels changed between t = 0 and t = 0.5 s");
}

#[test]
fn headless_time_advances_by_the_fixed_step() {
    let mut args = CommonArgs::headless(10, 64, 48);
    args.start = 0.1;
    let run = run_headless::<viewer::Viewer>(&args).unwrap();
    assert!((run.app.scene.time - (0.1 + 9.0 * HEADLESS_DT)).abs() < 1e-5);
}

#[test]
fn lbs_collapses_and_dq_keeps_the_bar_round_at_180_degrees() {
    use anim_core::skin::skinning;
    use anim_core::skin::skinning::{NormalMode, SkinningInput, SkinningOutput};
    use anim_core::skin::{Skin, palette};
    use anim_math::{Mat4, Quat, Vec3};
    let (skeleton, mesh) = ch14_dq_vs_lbs::bar().unwrap();
    assert!((ch14_dq_vs_lbs::twist_angle(2.0) - std::f32::consts::PI).abs() < 1e-5);
    let mut pose = skeleton.rest_pose().clone();
    pose.locals_mut()[1].rotation = Quat::from_axis_angle(&Vec3::x_axis(), std::f32::consts::PI);
    let mut model = vec![Mat4::identity(); 2];
    pose.local_to_model(&skeleton, &mut model).unwrap();
    let skin = Skin::from_skeleton(&skeleton);
    let mut m = vec![Mat4::identity(); 2];
    let mut d = vec![anim_math::DualQuat::identity(); 2];
    palette::skinning_matrices(&model, &skin, &mut m).unwrap();
    palette::skinning_dual_quats(&model, &skin, &mut d).unwrap();
    let inf = mesh.influences.as_ref().unwrap();
    let input = SkinningInput { influences: inf, positions: &mesh.positions, normals: None };
    let n = mesh.positions.len();
    let (mut l, mut q) = (vec![Vec3::zeros(); n], vec![Vec3::zeros(); n]);
    skinning::linear_blend(&input, &m, NormalMode::Direct, &mut SkinningOutput { positions: &mut l, normals: None })
        .unwrap();
    skinning::dual_quaternion(
        &input,
        &anim_core::skin::DqPalette::from_rigid(&d),
        &mut SkinningOutput { positions: &mut q, normals: None },
    )
    .unwrap();
    // Vertices of the middle ring (weights 0.5 / 0.5).
    let mid: Vec<usize> = (0..n).filter(|&v| (inf.weights()[2 * v] - 0.5).abs() < 1e-4).collect();
    assert!(!mid.is_empty());
    for v in mid {
        let radial = |p: &Vec3| (p.y * p.y + p.z * p.z).sqrt();
        assert!(radial(&l[v]) < 1e-4, "LBS keeps radius {}", radial(&l[v]));
        assert!((radial(&q[v]) - ch14_dq_vs_lbs::BAR_RADIUS).abs() < 1e-4, "DQ radius {}", radial(&q[v]));
    }
}

#[test]
fn seed_grid_weights_follow_the_seed_table() {
    assert_eq!(seed_bone_texture::seed_weights(0.0), [1.0, 0.0, 0.0]);
    assert_eq!(seed_bone_texture::seed_weights(2.0), [0.5, 0.5, 0.0]);
    assert_eq!(seed_bone_texture::seed_weights(4.0), [0.0, 1.0, 0.0]);
    assert_eq!(seed_bone_texture::seed_weights(6.0), [0.0, 0.5, 0.5]);
    assert_eq!(seed_bone_texture::seed_weights(8.0), [0.0, 0.0, 1.0]);
    assert_eq!(seed_bone_texture::seed_weights(3.0), [0.25, 0.75, 0.0]);
    let (_, box_mesh, colors) = seed_rigid_box::two_bone_box().unwrap();
    assert_eq!(box_mesh.positions.len(), 48);
    assert_eq!(colors.len(), 48);
    // The seam: both parts have their own vertices at y = 2.
    let inf = box_mesh.influences.as_ref().unwrap();
    let seam: Vec<u16> =
        (0..48).filter(|&v| (box_mesh.positions[v].y - 2.0).abs() < 1e-6).map(|v| inf.joints()[v]).collect();
    assert!(seam.contains(&0) && seam.contains(&1));
}

/// The viewer in a window under `xvfb-run`. A machine without `xvfb-run` fails this test
/// unless `ANIM_SKIP_WINDOW=1` names the skip.
#[test]
fn windowed_smoke_under_xvfb() {
    let Ok(xvfb) = which("xvfb-run") else {
        if std::env::var("ANIM_SKIP_WINDOW").as_deref() == Ok("1") {
            eprintln!("skipped: windowed_smoke_under_xvfb, xvfb-run is not installed (ANIM_SKIP_WINDOW)");
            return;
        }
        panic!(
            "xvfb-run is not installed, so the windowed viewer cannot run: install it (apt install xvfb, or \
             scripts/setup.sh), or set ANIM_SKIP_WINDOW=1 to skip"
        );
    };
    let out = std::process::Command::new(xvfb)
        .args(["-a", "-s", "-screen 0 1280x720x24", env!("CARGO_BIN_EXE_viewer"), "--frames", "12", "--validation"])
        .args(["--width", "320", "--height", "240", "--exercise-resize"])
        .output()
        .expect("xvfb-run starts");
    assert!(
        out.status.success(),
        "windowed viewer failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // The window was shrunk and restored: the swapchain was created three times and ends at
    // the original size.
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("presented 12 frame(s)") && stdout.contains("created 3 time(s), last 320x240"), "{stdout}");
    // The panel was drawn over the window's frames (feature `ui`, on by default).
    let triangles: usize = stdout
        .split("panel of ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no panel count in {stdout}"));
    if cfg!(feature = "ui") {
        assert!(triangles > 100, "{triangles} panel triangles: {stdout}");
    }
}

fn which(name: &str) -> Result<std::path::PathBuf, ()> {
    std::env::var_os("PATH")
        .and_then(|p| std::env::split_paths(&p).map(|d| d.join(name)).find(|c| c.is_file()))
        .ok_or(())
}

#[test]
fn viewer_keys_switch_modes() {
    let ctx = Context::new(&ContextDesc { validation: true, window: None }).unwrap();
    let mut renderer = Renderer::new(&ctx, OFFSCREEN_FORMAT).unwrap();
    let mut target = Offscreen::new(&ctx, W, H).unwrap();
    let mut app = App::<viewer::Viewer>::new(&mut renderer, &CommonArgs::headless(1, W, H)).unwrap();
    app.scene.key(Key::Char('g'));
    app.scene.key(Key::Char('k'));
    assert!(!app.scene.show_grid && !app.scene.stage.show_skeleton);
    let mut shot = |app: &mut App<viewer::Viewer>, renderer: &mut Renderer| {
        app.step(renderer, 0.0).unwrap();
        target.render(renderer, &app.frame).unwrap();
        target.image().unwrap()
    };
    let plain = shot(&mut app, &mut renderer);
    let clip = app.scene.clip;
    app.scene.key(Key::Char('c'));
    assert_ne!(app.scene.clip, clip);
    app.scene.key(Key::Char('m'));
    assert_eq!(app.scene.stage.method, SkinMethod::Dq);
    app.scene.key(Key::Char('b'));
    assert_eq!(app.scene.stage.backend, Backend::Compute);
    app.scene.key(Key::Char('x'));
    assert_eq!(app.scene.clip, clip);
    // Weights of joint 0 as a heat map: the colours change, the silhouette does not.
    app.scene.key(Key::Char('m'));
    app.scene.key(Key::Char('b'));
    app.scene.key(Key::Char('b'));
    assert_eq!(app.scene.stage.backend, Backend::Vertex);
    app.scene.key(Key::Char('w'));
    assert_eq!(app.scene.weight_joint, Some(0));
    let heat = shot(&mut app, &mut renderer);
    let fg_plain = foreground(&plain);
    assert_eq!(fg_plain, foreground(&heat));
    let recoloured = fg_plain.iter().filter(|&&(x, y)| plain.pixel(x, y) != heat.pixel(x, y)).count();
    assert!(recoloured > fg_plain.len() * 9 / 10, "{recoloured} of {} pixels recoloured", fg_plain.len());
    assert!(app.scene.status().contains("weights of pelvis"), "{}", app.scene.status());
    // `j` cycles the debug colourings (by joint, normals, joint indices) and back; each
    // covers the same silhouette in other colours.
    for view in [viewer::ColorView::ByJoint, viewer::ColorView::Normals, viewer::ColorView::JointIndices] {
        app.scene.key(Key::Char('j'));
        assert_eq!(app.scene.view, view);
        let img = shot(&mut app, &mut renderer);
        assert_eq!(foreground(&img), fg_plain, "{view:?}");
        let differ = fg_plain.iter().filter(|&&(x, y)| img.pixel(x, y) != heat.pixel(x, y)).count();
        assert!(differ > fg_plain.len() / 2, "{view:?}: {differ} of {} pixels recoloured", fg_plain.len());
        assert!(app.scene.status().ends_with(view.label()), "{}", app.scene.status());
    }
    app.scene.key(Key::Char('j'));
    assert_eq!(app.scene.view, viewer::ColorView::Shaded);
    assert_eq!(ctx.validation_count(), 0, "{}", ctx.validation_messages().join("\n"));
}

/// The pixel (RGB) where `p` projects in `img`, seen by `camera`.
fn pixel_at(img: &RgbaImage, camera: &anim_render_vk::Camera, p: anim_math::Vec3) -> [u8; 3] {
    let [x, y] = camera.project(&p, img.width, img.height).expect("in front of the camera");
    let px = img.pixel(x as u32, y as u32);
    [px[0], px[1], px[2]]
}

fn assert_rgb(got: [u8; 3], want: [f32; 3], what: &str) {
    let want = want.map(|c| c * 255.0);
    assert!(got.iter().zip(want).all(|(g, w)| (f32::from(*g) - w).abs() <= 2.0), "{what}: {got:?}, want {want:?}");
}

#[test]
fn seed_bone_texture_views_colour_weights_normals_and_joint_indices() {
    use anim_math::Vec3;
    use seed_bone_texture::{BoneTexture, View, seed_weights};
    let ctx = Context::new(&ContextDesc { validation: true, window: None }).unwrap();
    let mut renderer = Renderer::new(&ctx, OFFSCREEN_FORMAT).unwrap();
    let mut target = Offscreen::new(&ctx, W, H).unwrap();
    // Time 0: every bone at angle 0, so the grid is at rest (x in 0..8, y in -1..1, z = 0).
    let mut app = App::<BoneTexture>::new(&mut renderer, &CommonArgs::headless(1, W, H)).unwrap();
    // Points on grid columns (x = 1 and x = 5), off the bone lines (y = 0).
    let (p1, p5) = (Vec3::new(1.0, 0.6, 0.0), Vec3::new(5.0, -0.6, 0.0));
    let mut shots = Vec::new();
    for view in View::ALL {
        assert_eq!(app.scene.view, view);
        app.step(&mut renderer, 0.0).unwrap();
        target.render(&mut renderer, &app.frame).unwrap();
        let img = target.image().unwrap();
        let (a, b) = (pixel_at(&img, &app.frame.camera, p1), pixel_at(&img, &app.frame.camera, p5));
        match view {
            // Weights of b0, b1, b2 as red, green, blue (unlit).
            View::Weights => {
                assert_rgb(a, seed_weights(1.0), "weights at x = 1");
                assert_rgb(b, seed_weights(5.0), "weights at x = 5");
            }
            // The flat grid faces +z everywhere: n * 0.5 + 0.5 = (0.5, 0.5, 1).
            View::Normals => {
                assert_rgb(a, [0.5, 0.5, 1.0], "normals at x = 1");
                assert_rgb(b, [0.5, 0.5, 1.0], "normals at x = 5");
            }
            // The grid names joints 0, 1, 2 in its first three slots, (0, 1, 2) / 2; a slot
            // with weight 0 is joint 0 once validated (x = 1 has no weight on b2).
            View::JointIndices => {
                assert_rgb(a, [0.0, 0.5, 0.0], "joint indices at x = 1");
                assert_rgb(b, [0.0, 0.5, 1.0], "joint indices at x = 5");
            }
        }
        assert!(app.scene.status().ends_with(view.label()), "{}", app.scene.status());
        shots.push(img);
        app.scene.key(Key::Char('v'));
    }
    assert_eq!(app.scene.view, View::Weights, "`v` cycles back to the weights");
    // The three views cover the same pixels in different colours.
    let fg = foreground(&shots[0]);
    assert!(fg.len() > 2000, "{} grid pixels", fg.len());
    for (i, j) in [(0, 1), (1, 2), (0, 2)] {
        assert_eq!(foreground(&shots[i]), fg);
        let differ = fg.iter().filter(|&&(x, y)| shots[i].pixel(x, y) != shots[j].pixel(x, y)).count();
        assert!(differ > fg.len() * 9 / 10, "views {i} and {j}: {differ} of {} pixels differ", fg.len());
    }
    assert_eq!(ctx.validation_count(), 0, "{}", ctx.validation_messages().join("\n"));
}

#[test]
fn bone_texture_leaves_a_vertex_without_weights_at_rest() {
    use anim_core::skin::{Influences, Mesh};
    use anim_math::{Mat4, Vec3};
    use anim_render_vk::{Coloring, FrameData};
    let ctx = Context::new(&ContextDesc { validation: true, window: None }).unwrap();
    let mut renderer = Renderer::new(&ctx, OFFSCREEN_FORMAT).unwrap();
    let mut target = Offscreen::new(&ctx, W, H).unwrap();
    // A unit quad facing +z, four influences a vertex: all zero, or all on bone 1.
    let quad = |weights: [f32; 4]| {
        let positions = vec![
            Vec3::new(0.0, 0.0, 0.0),
            Vec3::new(1.0, 0.0, 0.0),
            Vec3::new(1.0, 1.0, 0.0),
            Vec3::new(0.0, 1.0, 0.0),
        ];
        let influences = Influences::new(4, [0u16, 1, 2, 0].repeat(4), weights.repeat(4), 3).unwrap();
        Mesh {
            positions,
            normals: vec![Vec3::z(); 4],
            uvs: Vec::new(),
            influences: Some(influences),
            indices: vec![0, 1, 2, 0, 2, 3],
        }
    };
    let color = [0.2, 0.9, 0.3];
    let unweighted = renderer.add_mesh(&quad([0.0; 4]), &Coloring::Uniform(color)).unwrap();
    let weighted = renderer.add_mesh(&quad([0.0, 1.0, 0.0, 0.0]), &Coloring::Uniform(color)).unwrap();
    // Bones far from the identity: every one moves 5 m up and turns.
    let moved = Mat4::new_translation(&Vec3::new(0.0, 5.0, 0.0)) * Mat4::new_rotation(Vec3::z() * 0.7);
    let mut frame = FrameData::default();
    frame.camera.eye = Vec3::new(0.5, 0.5, 4.0);
    frame.camera.target = Vec3::new(0.5, 0.5, 0.0);
    frame.clear_color = [0.0, 0.0, 0.0, 1.0];
    let centre = Vec3::new(0.5, 0.5, 0.0);
    let palette = anim_core::skin::Palette::Matrices(vec![moved; 3]);
    let mut shot = |mesh| {
        frame.clear();
        frame.add_skinned(mesh, Mat4::identity(), anim_render_vk::SkinPath::BoneTexture, &palette).unwrap();
        target.render(&mut renderer, &frame).unwrap();
        let img = target.image().unwrap();
        (pixel_at(&img, &frame.camera, centre), foreground(&img).len())
    };
    // No weights: the quad stays where it was bound, unlit in its colour.
    let (px, n) = shot(unweighted);
    assert_rgb(px, color, "zero-weight quad at rest");
    assert!(n > 1000, "{n} quad pixels");
    // Weighted: the same quad follows bone 1 out of view.
    let (px, n) = shot(weighted);
    assert_eq!(px, [0, 0, 0], "the weighted quad moved away");
    assert_eq!(n, 0);
    assert_eq!(ctx.validation_count(), 0, "{}", ctx.validation_messages().join("\n"));
}

/// The viewer's mannequin at the top of the idle's breath (t = 1 s: `breathe` and
/// `brow_raise` at weight 1): the GPU vertex-shader and compute backends draw the image of
/// the CPU backend (morph, then skin), LBS and DQ; and the breath shows: the same frame with
/// its morph weights zeroed draws a different image.
#[test]
fn viewer_mannequin_breathes_on_every_backend() {
    let shot = |backend: Backend, method: SkinMethod, unmorphed: bool| {
        let ctx = Context::new(&ContextDesc { validation: true, window: None }).unwrap();
        let mut renderer = Renderer::new(&ctx, OFFSCREEN_FORMAT).unwrap();
        let mut target = Offscreen::new(&ctx, W, H).unwrap();
        let mut args = CommonArgs::headless(1, W, H);
        args.clip = Some("idle".into());
        args.start = 1.0;
        let mut app = App::<viewer::Viewer>::new(&mut renderer, &args).unwrap();
        app.scene.show_grid = false;
        app.scene.stage.show_skeleton = false;
        app.scene.stage.backend = backend;
        app.scene.stage.method = method;
        app.step(&mut renderer, 0.0).unwrap();
        let w = &app.scene.stage.posed.weights[0];
        assert!((w[0] - 1.0).abs() < 1e-6 && (w[1] - 1.0).abs() < 1e-6, "idle weights at 1 s: {w:?}");
        if unmorphed {
            app.frame.morph_weights.fill(0.0);
        }
        target.render(&mut renderer, &app.frame).unwrap();
        assert_eq!(ctx.validation_count(), 0, "{}", ctx.validation_messages().join("\n"));
        target.image().unwrap()
    };
    let differing = |a: &RgbaImage, b: &RgbaImage| {
        a.pixels
            .chunks_exact(4)
            .zip(b.pixels.chunks_exact(4))
            .filter(|(p, q)| p.iter().zip(q.iter()).any(|(x, y)| x.abs_diff(*y) > 2))
            .count()
    };
    for method in [SkinMethod::Lbs, SkinMethod::Dq] {
        let cpu = shot(Backend::Cpu, method, false);
        for backend in [Backend::Vertex, Backend::Compute] {
            let gpu = shot(backend, method, false);
            let d = differing(&gpu, &cpu);
            assert!(d <= 10, "{backend:?} {method:?}: {d} pixels differ from the CPU backend");
        }
        let still = shot(Backend::Vertex, method, true);
        let d = differing(&still, &cpu);
        assert!(d > 20, "{method:?}: the breath changes only {d} pixels");
    }
}

/// A glTF model whose unskinned primitive has animated morph targets (SimpleMorph) is
/// morphed in the viewer on every backend: the image changes with the clip's weights and
/// the GPU backends draw the CPU backend's image.
#[test]
fn viewer_morphs_an_unskinned_gltf_primitive() {
    let path = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/assets"))
        .join("SimpleMorph/SimpleMorph.gltf");
    let shot = |backend: Backend, time: f32| {
        let ctx = Context::new(&ContextDesc { validation: true, window: None }).unwrap();
        let mut renderer = Renderer::new(&ctx, OFFSCREEN_FORMAT).unwrap();
        let mut target = Offscreen::new(&ctx, W, H).unwrap();
        let mut args = CommonArgs::headless(1, W, H);
        args.model = Some(path.clone());
        args.start = time;
        let mut app = App::<viewer::Viewer>::new(&mut renderer, &args).unwrap();
        app.scene.show_grid = false;
        app.scene.stage.show_skeleton = false;
        app.scene.stage.backend = backend;
        app.step(&mut renderer, 0.0).unwrap();
        target.render(&mut renderer, &app.frame).unwrap();
        assert_eq!(ctx.validation_count(), 0, "{}", ctx.validation_messages().join("\n"));
        (target.image().unwrap(), app.scene.stage.posed.weights[0].clone())
    };
    let differing = |a: &RgbaImage, b: &RgbaImage| {
        a.pixels
            .chunks_exact(4)
            .zip(b.pixels.chunks_exact(4))
            .filter(|(p, q)| p.iter().zip(q.iter()).any(|(x, y)| x.abs_diff(*y) > 2))
            .count()
    };
    let (rest, w0) = shot(Backend::Vertex, 0.0);
    let (moved, w1) = shot(Backend::Vertex, 1.5);
    assert_ne!(w0, w1, "the clip animates the weights");
    assert!(differing(&rest, &moved) > 100, "the morph does not show");
    for backend in [Backend::Cpu, Backend::Compute] {
        let (img, _) = shot(backend, 1.5);
        assert!(differing(&img, &moved) <= 10, "{backend:?} differs from the vertex backend");
    }
}
