//! The viewer as a tool, driven through its panel and windows headless with validation
//! on: egui pointer and text events at the widgets' positions (read from egui's layout
//! through the tags the viewer puts on them, never fixed pixels) open a file, pause,
//! select a clip, scrub, switch to DQ and the compute backend and hold a morph weight; the
//! scene's state is checked after each, and the pose drawn is checked against `animtool
//! skin` (the binary) and the library path it calls. Files dropped onto the window: one
//! that fails to import shows its error and keeps the model drawn, a valid one replaces
//! it. And the windows' default layout leaves each other and the character alone.

#![cfg(feature = "ui")]

use anim_core::clip::TimePolicy;
use anim_core::skin::SkinMethod;
use anim_math::{Mat4, Vec3};
use anim_render_vk::RgbaImage;
use anim_render_vk::ui::egui;
use demos::scenes::viewer::Viewer;
use demos::ui::widget_rect;
use demos::{Backend, CommonArgs, Headless, Scene};
use std::path::{Path, PathBuf};

const W: u32 = 960;
const H: u32 = 540;

fn shared(rel: &str) -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/assets")).join(rel)
}

fn tmp_dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A headless viewer with its panel, `extra` arguments added, after three frames (egui's
/// windows are laid out by then).
fn start(extra: &[&str], w: u32, h: u32) -> Headless<Viewer> {
    let mut argv: Vec<String> =
        ["viewer", "--headless", "--validation", "--frames", "1", "--width"].into_iter().map(String::from).collect();
    argv.extend([w.to_string(), "--height".into(), h.to_string()]);
    argv.extend(extra.iter().map(|s| s.to_string()));
    let args = <CommonArgs as clap::Parser>::parse_from(argv);
    assert!(args.ui_on() && args.validation);
    let mut run = Headless::<Viewer>::new(&args).unwrap();
    frames(&mut run, 3);
    run
}

fn frames(run: &mut Headless<Viewer>, n: usize) {
    for _ in 0..n {
        run.frame().unwrap();
    }
}

fn ctx(run: &Headless<Viewer>) -> &egui::Context {
    &run.ui.as_ref().expect("the panel is on").ctx
}

fn rect(run: &Headless<Viewer>, name: &str) -> egui::Rect {
    widget_rect(ctx(run), name).unwrap_or_else(|| panic!("no widget tagged {name:?}"))
}

fn push(run: &mut Headless<Viewer>, e: egui::Event) {
    run.ui.as_mut().expect("the panel is on").push_event(e);
}

fn button(pos: egui::Pos2, pressed: bool) -> egui::Event {
    egui::Event::PointerButton { pos, button: egui::PointerButton::Primary, pressed, modifiers: Default::default() }
}

/// Presses at `pos` in one frame and releases in the next.
fn click_at(run: &mut Headless<Viewer>, pos: egui::Pos2) {
    push(run, egui::Event::PointerMoved(pos));
    push(run, button(pos, true));
    run.frame().unwrap();
    push(run, button(pos, false));
    run.frame().unwrap();
}

/// Clicks the middle of the widget tagged `name`.
fn click(run: &mut Headless<Viewer>, name: &str) {
    let p = rect(run, name).center();
    click_at(run, p);
}

/// Presses at `from`, moves to `to` over three frames and releases there.
fn drag(run: &mut Headless<Viewer>, from: egui::Pos2, to: egui::Pos2) {
    push(run, egui::Event::PointerMoved(from));
    push(run, button(from, true));
    run.frame().unwrap();
    for k in 1..=3 {
        push(run, egui::Event::PointerMoved(from + (to - from) * (k as f32 / 3.0)));
        run.frame().unwrap();
    }
    push(run, button(to, false));
    run.frame().unwrap();
}

/// Skinned positions of every primitive from `animtool skin FILE --clip CLIP --times T
/// --method METHOD` (the binary), flattened.
fn animtool_skin(file: &Path, clip: &str, time: f32, method: &str) -> Vec<Vec<Vec3>> {
    let out = tmp_dir("viewer_ui").join(format!("skin-{clip}-{method}.json"));
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_animtool"))
        .args(["skin", &file.display().to_string(), "--clip", clip, "--times", &time.to_string(), "--method", method])
        .args(["--out", &out.display().to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "animtool skin failed");
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let sample = &json["samples"][0];
    assert_eq!(sample["time"].as_f64().unwrap() as f32, time);
    sample["primitives"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let xs: Vec<f32> = p["positions"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap() as f32).collect();
            xs.chunks_exact(3).map(|c| Vec3::new(c[0], c[1], c[2])).collect()
        })
        .collect()
}

/// Size of a set of points: the diagonal of their bounds.
fn size(points: &[Vec3]) -> f32 {
    let lo = points.iter().fold(Vec3::repeat(f32::MAX), |a, p| a.inf(p));
    let hi = points.iter().fold(Vec3::repeat(f32::MIN), |a, p| a.sup(p));
    (hi - lo).norm()
}

fn assert_close(what: &str, got: &[Vec3], want: &[Vec3]) {
    assert_eq!(got.len(), want.len(), "{what}: vertex counts");
    let tol = 1e-4 * size(want);
    let worst = got.iter().zip(want).map(|(a, b)| (a - b).norm()).fold(0.0f32, f32::max);
    assert!(worst <= tol, "{what}: a vertex is {worst} from the expected (tolerance {tol})");
}

/// The viewer's posed character skinned on the CPU with `method` (its first part).
fn viewer_cpu(run: &mut Headless<Viewer>, method: SkinMethod) -> Vec<Vec3> {
    let stage = &mut run.app.scene.stage;
    stage.posed.skin_cpu(&stage.character, method).unwrap();
    stage.posed.positions[0].clone()
}

/// The vertices the compute pass of the last frame wrote for instance 0, read back.
fn viewer_gpu(run: &Headless<Viewer>) -> Vec<Vec3> {
    let mut out = Vec::new();
    run.renderer.compute_skinned(0, &mut out).unwrap();
    out.iter().map(|v| Vec3::new(v.position[0], v.position[1], v.position[2])).collect()
}

#[test]
fn panel_events_drive_the_viewer_and_the_pose_matches_animtool() {
    // The mannequin as a file: skinned, with morph targets, clips with foot-contact curves
    // and the foot events they imply (its clips as a graph plays them).
    let glb = tmp_dir("viewer_ui").join("mannequin.glb");
    let m = anim_mannequin::build();
    let skin = anim_core::skin::Skin::from_skeleton(&m.skeleton);
    let mesh = anim_gltf::ExportMesh { name: "mannequin", mesh: &m.mesh, skin: Some(&skin) };
    let bytes = anim_gltf::export_glb_with_morphs(&m.skeleton, &[mesh], &[Some(&m.morph)], &m.root_motion_clips());
    std::fs::write(&glb, bytes.unwrap()).unwrap();
    let fox = shared("Fox/Fox.glb");
    let mut run = start(&["--model", &fox.display().to_string()], W, H);
    assert_eq!(run.app.scene.info.clips.len(), 3, "Fox to start with");

    // Open the mannequin from the file field: click it, type the path, click Open.
    click(&mut run, "file");
    let select_all = egui::Modifiers { ctrl: true, command: true, ..Default::default() };
    push(
        &mut run,
        egui::Event::Key { key: egui::Key::A, physical_key: None, pressed: true, repeat: false, modifiers: select_all },
    );
    push(&mut run, egui::Event::Text(glb.display().to_string()));
    run.frame().unwrap();
    assert_eq!(run.app.scene.file_field, glb.display().to_string());
    click(&mut run, "open");
    let model = anim_gltf::load(&glb).unwrap();
    let v = &run.app.scene;
    assert_eq!(v.load_error, None);
    assert_eq!(v.source.as_deref(), Some(glb.as_path()));
    assert_eq!(v.info.joints, model.skeleton.len());
    assert_eq!(v.info.morph_targets(), 2, "breathe and brow_raise");
    assert_eq!(v.info.clips.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), {
        model.clips.iter().map(|c| c.name()).collect::<Vec<_>>()
    });
    // The camera framed the new model.
    assert!((run.app.orbit.target - v.stage.centre).norm() < 1e-5 * v.stage.radius);
    frames(&mut run, 2);

    // Pause.
    assert!(!run.app.scene.paused);
    click(&mut run, "play");
    assert!(run.app.scene.paused);
    let t = run.app.scene.time;
    frames(&mut run, 2);
    assert_eq!(run.app.scene.time, t, "paused time stands");

    // Select the walk.
    let walk = model.find_clip("walk").unwrap();
    click(&mut run, &format!("clip:{walk}"));
    let v = &run.app.scene;
    assert_eq!((v.clip, v.time), (Some(walk), 0.0));
    let duration = model.clips[walk].duration();
    assert_eq!(v.marks.duration, duration);
    assert_eq!(v.marks.contacts.len(), 2, "both feet's contact curves on the timeline");
    assert_eq!(v.marks.events, model.clips[walk].events(), "the walk's events on the timeline");
    assert!(v.marks.events.iter().any(|e| e.name.starts_with("foot_down")), "{:?}", v.marks.events);

    // Scrub: drag the timeline's bar to 62 % of its width; the time is what that x maps to.
    let bar = rect(&run, "timeline");
    let (from, to) = (bar.left() + 0.1 * bar.width(), bar.left() + 0.62 * bar.width());
    drag(&mut run, egui::pos2(from, bar.center().y), egui::pos2(to, bar.center().y));
    let want = (to - bar.left()) / bar.width() * duration;
    let step = duration / bar.width();
    let t = run.app.scene.time;
    assert!((t - want).abs() <= step, "scrubbed to {t}, the bar's x maps to {want} (step {step})");
    assert!(t > 0.3 * duration, "{t}");

    // DQ.
    click(&mut run, "method:dq");
    assert_eq!(run.app.scene.stage.method, SkinMethod::Dq);
    assert_eq!(run.app.scene.time, t, "still paused at the scrubbed time");

    // The pose drawn is animtool's at that clip and time: the CPU-skinned posed character...
    let expected = animtool_skin(&glb, "walk", t, "dq");
    assert_eq!(expected.len(), 1);
    let cpu = viewer_cpu(&mut run, SkinMethod::Dq);
    assert_close("CPU skinning, DQ", &cpu, &expected[0]);
    // ... and what the compute backend skinned on the GPU.
    click(&mut run, "backend:GPU compute");
    assert_eq!(run.app.scene.stage.backend, Backend::Compute);
    assert_close("GPU compute skinning, DQ", &viewer_gpu(&run), &expected[0]);
    // The selected clip, time and method are animtool's: LBS would differ.
    let lbs = animtool_skin(&glb, "walk", t, "lbs");
    let apart = lbs[0].iter().zip(&expected[0]).map(|(a, b)| (a - b).norm()).fold(0.0f32, f32::max);
    assert!(apart > 1e-3 * size(&expected[0]), "LBS and DQ differ by only {apart}");

    // Hold brow_raise at 1 with its slider (dragged past its right end).
    let brow = 1;
    let slider = rect(&run, &format!("morph:0:{brow}"));
    let clip_weight = run.app.scene.stage.posed.weights[0][brow];
    assert!(clip_weight < 0.9, "the walk's brow_raise is {clip_weight}: the slider must move it");
    drag(&mut run, slider.center(), egui::pos2(slider.right() + 20.0, slider.center().y));
    let v = &run.app.scene;
    assert_eq!(v.morph_override[0], vec![None, Some(1.0)]);
    assert_eq!(v.stage.posed.weights[0][brow], 1.0);
    // The pose with that weight is the library's (the path animtool skin calls) with it.
    let mut pose = model.skeleton.rest_pose().clone();
    model.sample_pose(walk, t, TimePolicy::Clamp, &mut pose).unwrap();
    let mut world = vec![Mat4::identity(); model.skeleton.len()];
    model.world_matrices(&pose, &mut world).unwrap();
    let mut weights = vec![0.0; 2];
    model.sample_weights(walk, 0, t, TimePolicy::Clamp, &mut weights).unwrap();
    assert!((weights[0] - v.stage.posed.weights[0][0]).abs() < 1e-6, "breathe follows the clip");
    weights[brow] = 1.0;
    let mut held = vec![Vec3::zeros(); model.meshes[0].data.vertex_count()];
    let mut scratch = anim_gltf::SkinScratch::new();
    model.skin_instance_weighted(0, &world, Some(&weights), SkinMethod::Dq, &mut scratch, &mut held, None).unwrap();
    assert_close("CPU skinning, brow raised", &viewer_cpu(&mut run, SkinMethod::Dq), &held);
    assert_close("GPU compute skinning, brow raised", &viewer_gpu(&run), &held);
    let moved = held.iter().zip(&expected[0]).filter(|(a, b)| (*a - *b).norm() > 1e-4).count();
    assert!(moved > 10, "the brow moved {moved} vertices");

    // Back to the clip's weight.
    click(&mut run, &format!("morph-reset:0:{brow}"));
    assert_eq!(run.app.scene.morph_override[0], vec![None, None]);
    assert!((run.app.scene.stage.posed.weights[0][brow] - clip_weight).abs() < 1e-6);
    assert_close("GPU compute skinning, back to the clip", &viewer_gpu(&run), &expected[0]);

    let done = run.finish().unwrap();
    assert_eq!(done.context.validation_count(), 0);
}

/// Pixels of `a` and `b` that differ outside every rectangle of `skip`, among those inside
/// `region`; and how many pixels were compared.
fn differing_outside(a: &RgbaImage, b: &RgbaImage, region: [f32; 4], skip: &[egui::Rect]) -> (usize, usize) {
    let (mut compared, mut differ) = (0, 0);
    for y in 0..a.height {
        for x in 0..a.width {
            let p = egui::pos2(x as f32 + 0.5, y as f32 + 0.5);
            let inside = p.x >= region[0] && p.x <= region[2] && p.y >= region[1] && p.y <= region[3];
            if !inside || skip.iter().any(|r| r.contains(p)) {
                continue;
            }
            compared += 1;
            differ += usize::from(a.pixel(x, y) != b.pixel(x, y));
        }
    }
    (compared, differ)
}

/// The windows' rectangles with their shadows.
fn egui_areas(run: &Headless<Viewer>) -> Vec<egui::Rect> {
    let shadow = ctx(run).style().visuals.window_shadow;
    let reach = f32::from(shadow.blur) + f32::from(shadow.spread) + 2.0;
    let offset = egui::vec2(f32::from(shadow.offset[0]), f32::from(shadow.offset[1]));
    window_rects(run).into_iter().map(|(_, r)| r.expand(reach).union(r.translate(offset).expand(reach))).collect()
}

/// The windows' rectangles (the panel and the viewer's four).
fn window_rects(run: &Headless<Viewer>) -> Vec<(&'static str, egui::Rect)> {
    ["panel", "timeline-window", "model-window", "joints-window", "timings-window"]
        .into_iter()
        .map(|n| (n, rect(run, n)))
        .collect()
}

/// The CPU-projected box `[x0, y0, x1, y1]` of the character's skinned vertices.
fn character_box(run: &mut Headless<Viewer>) -> [f32; 4] {
    let camera = run.app.frame.camera;
    let stage = &mut run.app.scene.stage;
    stage.posed.skin_cpu(&stage.character, stage.method).unwrap();
    let mut b = [f32::MAX, f32::MAX, f32::MIN, f32::MIN];
    for p in stage.posed.positions.iter().flatten() {
        let [x, y] = camera.project(p, W, H).expect("in front of the camera");
        b = [b[0].min(x), b[1].min(y), b[2].max(x), b[3].max(y)];
    }
    b
}

#[test]
fn a_failed_drop_keeps_the_model_and_a_valid_one_replaces_it() {
    let mut run = start(&[], W, H);
    click(&mut run, "play");
    assert!(run.app.scene.paused);
    frames(&mut run, 1);
    let before = run.image().unwrap();
    let joints = run.app.scene.info.joints;
    let model_box = character_box(&mut run);

    // A glTF whose mesh names an accessor that does not exist.
    let broken = tmp_dir("viewer_ui").join("broken.gltf");
    std::fs::write(
        &broken,
        r#"{"asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0]}], "nodes": [{"mesh": 0}],
            "meshes": [{"primitives": [{"attributes": {"POSITION": 7}}]}]}"#,
    )
    .unwrap();
    run.app.scene.file_dropped(&broken);
    frames(&mut run, 2);
    let v = &run.app.scene;
    let error = v.load_error.clone().expect("the import failed");
    assert!(error.contains("broken.gltf"), "{error}");
    assert!(error.contains("/meshes/0/primitives/0/attributes/POSITION"), "the JSON pointer: {error}");
    let label = rect(&run, "load-error");
    assert!(rect(&run, "panel").contains_rect(label), "the error is shown in the panel: {label:?}");
    assert_eq!((v.info.joints, v.source.as_deref()), (joints, None), "the mannequin stays");
    // The character is drawn as before: every pixel outside egui's areas, over its box.
    let after = run.image().unwrap();
    let mut skip = egui_areas(&run);
    skip.extend(window_rects(&run).into_iter().map(|(_, r)| r));
    let (compared, differ) = differing_outside(&before, &after, model_box, &skip);
    assert!(compared > 2000, "only {compared} character pixels outside the windows");
    assert_eq!(differ, 0, "{differ} of {compared} pixels of the character changed");

    // A valid file replaces the model and the camera frames it.
    let fox = shared("Fox/Fox.glb");
    let fox_model = anim_gltf::load(&fox).unwrap();
    run.app.scene.file_dropped(&fox);
    frames(&mut run, 2);
    let v = &run.app.scene;
    assert_eq!(v.load_error, None);
    assert_eq!(v.source.as_deref(), Some(fox.as_path()));
    assert_eq!(v.info.joints, fox_model.skeleton.len());
    assert_ne!(v.info.joints, joints);
    assert_eq!(v.info.meshes.len(), fox_model.meshes.len());
    assert_eq!(v.info.vertices(), 1728);
    assert_eq!(v.info.clips.len(), 3);
    assert!(v.clip.is_some(), "a clip of the new model plays");
    assert!((run.app.orbit.target - v.stage.centre).norm() < 1e-4 * v.stage.radius);
    assert!(v.stage.radius > 50.0, "framed on Fox's size: {}", v.stage.radius);
    let fox_img = run.image().unwrap();
    let (compared, differ) = differing_outside(&before, &fox_img, model_box, &skip);
    assert!(differ > compared / 4, "the image changed in only {differ} of {compared} pixels");
    let done = run.finish().unwrap();
    assert_eq!(done.context.validation_count(), 0);
}

#[test]
fn windows_leave_each_other_and_the_character_alone() {
    for (w, h) in [(960, 540), (1280, 720)] {
        let run = start(&[], w, h);
        let rects = window_rects(&run);
        let screen = egui::Rect::from_min_size(egui::Pos2::ZERO, egui::vec2(w as f32, h as f32));
        for (i, (a, ra)) in rects.iter().enumerate() {
            assert!(screen.contains_rect(*ra), "{w}x{h}: {a} {ra:?} leaves the screen");
            for (b, rb) in &rects[i + 1..] {
                let overlap = ra.intersect(*rb);
                assert!(!overlap.is_positive(), "{w}x{h}: {a} {ra:?} overlaps {b} {rb:?}");
            }
        }
        // The character's middle is in view, under no window.
        let centre = run.app.scene.stage.centre;
        let [x, y] = run.app.frame.camera.project(&centre, w, h).unwrap();
        for (name, r) in &rects {
            assert!(!r.contains(egui::pos2(x, y)), "{w}x{h}: {name} {r:?} covers the character at ({x}, {y})");
        }
        run.finish().unwrap();
    }
}

#[test]
fn timeline_controls_and_joint_tree() {
    use anim_core::clip::playback::LoopMode;
    use demos::scenes::viewer::{BOUNDS_COLOR, FRAME_STEP, Looping, MAX_NORMALS, NORMALS_COLOR, SELECTED_COLOR};
    let mut run = start(&["--clip", "walk"], W, H);
    click(&mut run, "play");
    assert!(run.app.scene.paused);
    let t0 = run.app.scene.time;
    click(&mut run, "step-forward");
    assert!((run.app.scene.time - (t0 + FRAME_STEP)).abs() < 1e-5, "{} after {t0}", run.app.scene.time);
    click(&mut run, "step-back");
    assert!((run.app.scene.time - t0).abs() < 1e-5);
    run.app.scene.key(demos::Key::Char('.'));
    run.app.scene.key(demos::Key::Char('.'));
    frames(&mut run, 1);
    assert!((run.app.scene.time - (t0 + 2.0 * FRAME_STEP)).abs() < 1e-5);

    // Loop modes.
    click(&mut run, "loop:ping-pong");
    assert_eq!((run.app.scene.looping, run.app.scene.playback.mode), (Looping::PingPong, LoopMode::PingPong));
    click(&mut run, "loop:once");
    assert_eq!((run.app.scene.looping, run.app.scene.playback.repetitions), (Looping::Once, Some(1)));

    // Speed: the slider dragged past its left end plays backwards at double speed,
    // looping.
    click(&mut run, "loop:repeat");
    let speed = rect(&run, "speed");
    drag(&mut run, speed.left_center() + egui::vec2(20.0, 0.0), speed.left_center() - egui::vec2(30.0, 0.0));
    assert_eq!(run.app.scene.playback.speed, -2.0);
    let t = run.app.scene.time;
    click(&mut run, "play");
    assert!(!run.app.scene.paused);
    frames(&mut run, 2);
    // Three frames played (the release frame and two more), backwards, twice as fast.
    let played = 3.0 * demos::app::HEADLESS_DT * 2.0;
    let duration = run.app.scene.playback.duration();
    let want = (t - played).rem_euclid(duration);
    assert!((run.app.scene.time - want).abs() < 1e-4, "{} from {t}, want {want}", run.app.scene.time);

    // The joint tree: select the joint under the root.
    let j = 1;
    click(&mut run, &format!("joint:{j}"));
    let v = &run.app.scene;
    assert_eq!(v.selected_joint, Some(j));
    assert_eq!(v.weight_joint, Some(j as u16), "its weights on the mesh (the mannequin's skin is its skeleton)");
    let highlighted = run.app.frame.overlay_lines.iter().filter(|l| l.color == SELECTED_COLOR).count();
    assert!(highlighted >= 2, "{highlighted} highlighted bone lines");
    click(&mut run, "joint-weights");
    assert_eq!((run.app.scene.selected_joint, run.app.scene.weight_joint), (Some(j), None));

    // Normals and bounds overlays: lines from the CPU-skinned mesh, the normals of every
    // k-th vertex (at most MAX_NORMALS) and the box's 12 edges.
    click(&mut run, "normals");
    click(&mut run, "bounds");
    let v = &run.app.scene;
    assert!(v.show_normals && v.show_bounds);
    let lines = |c: [f32; 4]| run.app.frame.lines.iter().filter(|l| l.color == c).count() / 2;
    let n = v.info.vertices();
    assert_eq!(lines(NORMALS_COLOR), n.div_ceil(n.div_ceil(MAX_NORMALS)));
    assert_eq!(lines(BOUNDS_COLOR), 12);
    let img = run.image().unwrap();
    img.save_png(&tmp_dir("viewer_ui").join("joint_normals_bounds.png")).unwrap();
    run.finish().unwrap();
}
