//! The demos' panels drive their scenes: headless runs with the panel drawn and Vulkan
//! validation on, egui pointer events at widget positions read from egui's layout (the
//! widgets' tags, `demos::ui::widget_rect`), never fixed pixels. After each gesture the
//! scene's state is what the control says, and what is drawn matches an independent
//! computation: the blended pose from anim-core's blend of the two sampled clips, the
//! twisted bar's vertices from the twist's own LBS and DQ formulas, the IK target at the
//! point the pointer's ray meets the plane facing the camera, the crowd's size.

use anim_core::blend::blend;
use anim_core::clip::TimePolicy;
use anim_ik::FabrikSolver;
use anim_math::{Mat4, Vec3};
use anim_render_vk::Deform;
use anim_render_vk::ui::egui;
use demos::scenes::ch13_ccd::{CcdDemo, JOINTS, SolverKind};
use demos::scenes::{ch12_blend, ch14_dq_vs_lbs, ch15_crowd};
use demos::{CommonArgs, Headless, Scene};
use ui_driver::{Rail, click, drag_steps as drag, rect};

mod common;
mod ui_driver;

const W: u32 = 960;
const H: u32 = 540;

/// A headless run of `S` with its panel at `W × H`, validation on, `extra` arguments, three
/// frames rendered (egui lays a new window out in a sizing pass first).
fn start<S: Scene>(extra: &[&str]) -> Headless<S> {
    let mut v: Vec<String> =
        ["demo", "--headless", "--validation", "--width", &W.to_string(), "--height", &H.to_string()]
            .map(String::from)
            .to_vec();
    v.extend(extra.iter().map(|s| s.to_string()));
    let args = <CommonArgs as clap::Parser>::parse_from(v);
    assert!(args.ui_on());
    let mut run = Headless::<S>::new(&args).unwrap_or_else(|e| panic!("{}: {e}", S::NAME));
    for _ in 0..3 {
        run.frame().unwrap();
    }
    run
}

fn ui<S: Scene>(run: &mut Headless<S>) -> &mut demos::ui::DemoUi {
    run.ui.as_mut().expect("the panel is on")
}

#[test]
fn ch12_blend_weight_slider_sets_the_blend() {
    let mut run = start::<ch12_blend::BlendDemo>(&[]);
    assert!(!run.app.scene.hold, "the timer runs at start");
    let rail = Rail::of(&run, "blend");
    assert!(rail.rect.width() > 50.0, "the rail alone is tagged: {rail:?}");
    drag(&mut run, rail.at(0.2), rail.at(0.75), 4);
    let s = &run.app.scene;
    assert!(s.hold, "moving the weight holds the timer");
    assert!((s.weight - 0.75).abs() <= 0.01 + 1e-6, "weight {}", s.weight);
    // A frame later the timer still holds the weight.
    run.frame().unwrap();
    let s = &run.app.scene;
    assert!((s.weight - 0.75).abs() <= 0.01 + 1e-6, "weight {}", s.weight);
    // The drawn pose: both clips sampled at the shared phase, blended by anim-core.
    let ch = &s.stage.character;
    let sampled = |clip: usize| {
        let c = &ch.clips[clip];
        let mut p = ch.skeleton.rest_pose().clone();
        c.sample(s.phase * c.duration(), TimePolicy::Wrap, &mut p).unwrap();
        p
    };
    let (a, b) = (sampled(s.clip_a), sampled(s.clip_b));
    let mut want = ch.skeleton.rest_pose().clone();
    blend(&mut want, &a, &b, s.weight, None, &ch.skeleton).unwrap();
    for (j, (x, y)) in s.stage.posed.pose.locals().iter().zip(want.locals()).enumerate() {
        assert!((x.translation - y.translation).norm() < 1e-6, "joint {j} translation");
        assert!(x.rotation.angle_to(&y.rotation) < 1e-5, "joint {j} rotation");
    }
    let mut world = vec![Mat4::identity(); ch.skeleton.len()];
    want.local_to_model(&ch.skeleton, &mut world).unwrap();
    for (x, y) in s.stage.posed.world.iter().zip(&world) {
        assert!((x - y).abs().max() < 1e-5);
    }
    // ... and the GPU drew that pose where the CPU puts it (the panel left out).
    run.renderer.clear_ui();
    let frame = run.app.frame.clone();
    common::assert_stage_drawn(
        "ch12_blend at 0.75",
        &run.context,
        &mut run.renderer,
        &frame,
        &mut run.app.scene.stage,
        (W, H),
    );
    // The timer check box starts the timer again from the weight held.
    click(&mut run, "timer");
    let s = &run.app.scene;
    assert!(!s.hold);
    assert!((s.weight - 0.75).abs() < 0.05, "resumed from the weight held: {}", s.weight);
    drop(run.finish().unwrap());
}

/// The bar of ch14 twisted by `angle` about its axis, skinned by `dq` (else LBS), straight
/// from the twist: the child joint turns the bar about the x axis (it sits on that axis),
/// LBS mixes the turned and the unturned position, DQ turns by the normalized mix of the
/// two rotations.
fn twisted_bar(angle: f32, dq: bool) -> Vec<Vec3> {
    let (_, mesh) = ch14_dq_vs_lbs::bar().unwrap();
    let inf = mesh.influences.as_ref().unwrap();
    let per = inf.per_vertex();
    mesh.positions
        .iter()
        .enumerate()
        .map(|(v, p)| {
            let slots = v * per..(v + 1) * per;
            let (joints, weights) = (&inf.joints()[slots.clone()], &inf.weights()[slots]);
            let w1: f32 = joints.iter().zip(weights).filter(|(j, _)| **j == 1).map(|(_, w)| *w).sum();
            let turn = |a: f32, p: &Vec3| {
                let (s, c) = a.sin_cos();
                Vec3::new(p.x, c * p.y - s * p.z, s * p.y + c * p.z)
            };
            if dq {
                // (1 − w)·(1, 0) + w·(cos θ/2, sin θ/2): a rotation about x by twice its angle.
                let (qw, qx) = ((1.0 - w1) + w1 * (angle * 0.5).cos(), w1 * (angle * 0.5).sin());
                turn(2.0 * qx.atan2(qw), p)
            } else {
                p * (1.0 - w1) + turn(angle, p) * w1
            }
        })
        .collect()
}

/// The CPU-skinned positions of the frame's `k`-th instance.
fn cpu_positions(frame: &anim_render_vk::FrameData, k: usize, n: usize) -> Vec<Vec3> {
    let Deform::Cpu { vertex_offset } = frame.instances[k].deform else { panic!("instance {k} is not CPU-skinned") };
    let o = vertex_offset as usize;
    frame.cpu_vertices[o..o + n].iter().map(|v| Vec3::new(v.position[0], v.position[1], v.position[2])).collect()
}

fn assert_bar(frame: &anim_render_vk::FrameData, k: usize, angle: f32, dq: bool) {
    let want = twisted_bar(angle, dq);
    let got = cpu_positions(frame, k, want.len());
    let worst = got.iter().zip(&want).map(|(a, b)| (a - b).norm()).fold(0.0f32, f32::max);
    assert!(worst < 1e-4, "copy {k} ({}): off by {worst}", if dq { "DQ" } else { "LBS" });
}

#[test]
fn ch14_twist_slider_and_methods_per_side() {
    let mut run = start::<ch14_dq_vs_lbs::DqVsLbs>(&["--backend", "cpu"]);
    assert!(run.app.scene.animate);
    let rail = Rail::of(&run, "twist");
    let to = rail.at(150.0 / 180.0);
    drag(&mut run, rail.at(0.1), to, 3);
    let s = &run.app.scene;
    assert!(!s.animate, "moving the twist stops the animation");
    let want = (rail.fraction(to.x) * 180.0).round();
    assert!((s.angle.to_degrees() - want).abs() < 1e-3, "angle {} for {want}", s.angle.to_degrees());
    assert!((s.angle.to_degrees() - 150.0).abs() <= 1.0 + 1e-3);
    let angle = s.angle;
    // Left LBS, right DQ: each copy's vertices as the twist's own formulas give them.
    assert_eq!(run.app.frame.instances.len(), 2);
    assert_bar(&run.app.frame, 0, angle, false);
    assert_bar(&run.app.frame, 1, angle, true);
    // LBS pinches the middle of the bar at 150°, DQ keeps its radius.
    let mid =
        |ps: &[Vec3]| ps.iter().filter(|p| (p.x - 2.0).abs() < 0.05).map(|p| p.yz().norm()).fold(f32::MAX, f32::min);
    let n = twisted_bar(0.0, false).len();
    let (lbs, dq) = (cpu_positions(&run.app.frame, 0, n), cpu_positions(&run.app.frame, 1, n));
    assert!(mid(&lbs) < 0.2 && (mid(&dq) - ch14_dq_vs_lbs::BAR_RADIUS).abs() < 1e-3, "{} {}", mid(&lbs), mid(&dq));
    // DQ on the left too.
    click(&mut run, "left:dq");
    assert_eq!(run.app.scene.methods, [anim_core::skin::SkinMethod::Dq; 2]);
    assert_bar(&run.app.frame, 0, angle, true);
    assert_bar(&run.app.frame, 1, angle, true);
    drop(run.finish().unwrap());
}

/// Where the ray through pixel `p` of the `W × H` view of `camera` meets the plane through
/// `on` with normal `n`, by inverting the camera's view-projection.
fn unproject(camera: &anim_render_vk::Camera, p: egui::Pos2, on: &Vec3, n: &Vec3) -> Vec3 {
    let inv = camera.view_proj(W as f32 / H as f32).try_inverse().unwrap();
    let ndc = |z: f32| {
        let c = inv * nalgebra::Vector4::new(p.x / W as f32 * 2.0 - 1.0, p.y / H as f32 * 2.0 - 1.0, z, 1.0);
        c.xyz() / c.w
    };
    let (a, b) = (ndc(0.0), ndc(1.0));
    let t = (on - a).dot(n) / (b - a).dot(n);
    a + (b - a) * t
}

#[test]
fn ch13_target_drags_in_the_view_and_the_solver_switches() {
    let mut run = start::<CcdDemo>(&[]);
    // Stop the target on its path (the check box space toggles), so the handle stays put.
    click(&mut run, "follow");
    assert!(run.app.scene.tentacle.paused);
    let camera = run.app.orbit.camera();
    let target = run.app.scene.tentacle.target;
    let at = camera.project(&target, W, H).unwrap();
    let handle = rect(&run, "target");
    // egui places areas on whole pixels.
    assert!(
        (handle.center() - egui::pos2(at[0], at[1])).length() < 1.0,
        "the handle {handle:?} sits on the target {at:?}"
    );
    let to = egui::pos2(at[0] + 70.0, at[1] - 45.0);
    drag(&mut run, egui::pos2(at[0], at[1]), to, 5);
    let t = &run.app.scene.tentacle;
    assert!(t.paused, "a dragged target leaves its path");
    let normal = (camera.target - camera.eye).normalize();
    let want = unproject(&camera, to, &target, &normal);
    assert!((t.target - want).norm() < 1e-3, "target {:?}, the pointer's ray meets the plane at {want:?}", t.target);
    assert!((t.target - target).dot(&normal).abs() < 1e-4, "it moved in the plane facing the camera");
    assert!((t.target - target).norm() > 0.2, "it moved");
    assert_eq!(run.app.orbit.camera().eye, camera.eye, "the camera stayed");
    // The chain solved towards the dragged target.
    assert!((t.chain.end_position() - t.target).norm() - t.result.distance < 1e-5);

    // Switch to FABRIK: the next solve is FABRIK's from the chain as it was.
    assert_eq!(t.kind, SolverKind::Ccd);
    let mut chain = t.chain.clone();
    let (iterations, threshold, goal) = (t.iterations, t.threshold, t.target);
    let fabrik = rect(&run, "solver:fabrik").center();
    let u = ui(&mut run);
    u.push_event(egui::Event::PointerMoved(fabrik));
    u.push_event(ui_driver::button(fabrik, true));
    u.push_event(ui_driver::button(fabrik, false));
    run.frame().unwrap();
    let t = &run.app.scene.tentacle;
    assert_eq!(t.kind, SolverKind::Fabrik);
    assert!(run.app.scene.status().starts_with("FABRIK"), "{}", run.app.scene.status());
    for i in 0..JOINTS {
        let l = chain.locals()[i];
        chain.set_local(i, l).unwrap();
    }
    let r = FabrikSolver::new(iterations, threshold).solve(&mut chain, &goal).unwrap();
    assert_eq!(r, t.result);
    for (a, b) in chain.worlds().iter().zip(t.chain.worlds()) {
        assert!((a.translation - b.translation).norm() < 1e-6);
    }
    // The iterations slider: at its left end one iteration.
    let rail = Rail::of(&run, "iterations");
    drag(&mut run, rail.at(0.5), rail.at(0.0), 2);
    assert_eq!(run.app.scene.tentacle.iterations, 1);
    assert!(run.app.scene.tentacle.result.iterations <= 1);
    drop(run.finish().unwrap());
}

#[test]
fn ch15_count_slider_repopulates_and_plots_the_gpu_passes() {
    let mut run = start::<ch15_crowd::CrowdScene>(&["--count", "64"]);
    run.frame().unwrap();
    assert_eq!(run.app.scene.len(), 64);
    let rail = Rail::of(&run, "count");
    let to = rail.at(0.5);
    drag(&mut run, rail.at(0.3), to, 3);
    // The slider is logarithmic over 1 ..= MAX_COUNT: value = MAX^t, within a pixel.
    let value = |x: f32| (ch15_crowd::MAX_COUNT as f32).powf(rail.fraction(x));
    let (lo, hi) = (value(to.x - 1.0).floor() as usize, value(to.x + 1.0).ceil() as usize);
    let s = &run.app.scene;
    assert!((lo..=hi).contains(&s.count), "count {} outside {lo}..={hi}", s.count);
    assert_ne!(s.count, 64);
    assert_eq!(s.len(), s.count, "the crowd was repopulated in prepare");
    assert_eq!(s.crowd.instances().len(), s.count);
    run.frame().unwrap();
    let s = &run.app.scene;
    assert!(s.stats_line().starts_with(&format!("{} characters", s.count)), "{}", s.stats_line());
    // The GPU time of each pass, plotted in the panel.
    let plot = rect(&run, "gpu");
    assert!(plot.height() > 60.0, "plot {plot:?}");
    let gpu = &ui(&mut run).timings.gpu;
    let names: Vec<&str> = gpu.iter().map(|s| s.name).collect();
    for pass in ["cull", "palette", "draw", "ui"] {
        assert!(names.contains(&pass), "no {pass} in {names:?}");
    }
    assert!(gpu.iter().all(|s| s.ms.len() >= 8 && s.ms.iter().all(|ms| ms.is_finite() && *ms >= 0.0)));
    // Back to fewer characters than the GPU crowd holds: no new registration needed.
    let rail = Rail::of(&run, "count");
    drag(&mut run, rail.at(0.5), rail.at(0.0), 2);
    assert_eq!(run.app.scene.count, 1);
    assert_eq!(run.app.scene.len(), 1);
    drop(run.finish().unwrap());
}

/// Every joint of `worlds` placed by `model` projects right of the panel and inside the
/// view.
fn right_of_panel(what: &str, camera: &anim_render_vk::Camera, panel: egui::Rect, model: &Mat4, worlds: &[Mat4]) {
    for (j, w) in worlds.iter().enumerate() {
        let p = (model * w.column(3)).xyz();
        let [x, y] = camera.project(&p, W, H).unwrap();
        assert!(x > panel.right() && x < W as f32 && (0.0..H as f32).contains(&y), "{what}: joint {j} at ({x}, {y})");
    }
}

#[test]
fn side_by_side_scenes_frame_clear_of_the_panel() {
    let run = start::<demos::scenes::retarget::Retarget>(&[]);
    let panel = rect(&run, "panel");
    let s = &run.app.scene;
    assert_eq!(s.players.len(), 4);
    for (i, p) in s.players.iter().enumerate() {
        let name = &p.stage.character.name;
        right_of_panel(name, &run.app.frame.camera, panel, &s.placement(i), &p.stage.posed.world);
    }
    drop(run.finish().unwrap());
    // The rest pose, drawn leftmost of the three skeletons.
    let run = start::<demos::scenes::ch10_poses::Poses>(&[]);
    let panel = rect(&run, "panel");
    let s = &run.app.scene;
    right_of_panel("ch10 rest pose", &run.app.frame.camera, panel, &s.placement(0), &s.stage.posed.world);
    drop(run.finish().unwrap());
}
