//! The viewer as a tool, driven through its panel and windows headless with validation
//! on: egui pointer and text events at the widgets' positions (read from egui's layout
//! through the tags the viewer puts on them, never fixed pixels) open a file, pause,
//! select a clip, scrub, switch to DQ and the compute backend and hold a morph weight; the
//! scene's state is checked after each, and the pose drawn is checked against `animtool
//! skin` (the binary) and the library path it calls. Files dropped onto the window: one
//! that fails to import shows its error and keeps the model drawn, a valid one replaces
//! it. And the windows' default layout leaves each other and the character alone.

use anim_core::clip::TimePolicy;
use anim_core::skin::SkinMethod;
use anim_graph::event::GraphEvent;
use anim_graph::param::ParamKind;
use anim_math::{Mat4, Vec3};
use anim_render_vk::RgbaImage;
use anim_render_vk::ui::egui;
use demos::app::HEADLESS_DT;
use demos::scenes::viewer::Viewer;
use demos::{Backend, Headless, Scene, Session, Windowed};
use std::path::{Path, PathBuf};
use ui_driver::{click, ctx, drag, frames, rect};

mod ui_driver;

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

/// Where this process's tests write: the runs inside `xvfb-run` (another process, at the
/// same time) have their own folder.
fn work_dir() -> PathBuf {
    tmp_dir(if ui_driver::in_xvfb() { "viewer_ui-window" } else { "viewer_ui" })
}

/// A headless viewer with its panel, `extra` arguments added, after three frames (egui's
/// windows are laid out by then).
fn start(extra: &[&str], w: u32, h: u32) -> Headless<Viewer> {
    let mut run = Headless::<Viewer>::new(&ui_driver::args(extra, true, w, h)).unwrap();
    frames(&mut run, 3);
    run
}

/// The viewer in a window (this process runs inside `xvfb-run`), as [`start`] leaves it.
fn start_window(extra: &[&str], w: u32, h: u32) -> Windowed<Viewer> {
    let mut run = Windowed::<Viewer>::new(&ui_driver::args(extra, false, w, h)).unwrap();
    assert_eq!(run.size(), (w, h), "the window has the size asked for");
    frames(&mut run, 3);
    run
}

/// Skinned positions of every primitive from `animtool skin FILE --clip CLIP --times T
/// --method METHOD` (the binary), flattened.
fn animtool_skin(file: &Path, clip: &str, time: f32, method: &str) -> Vec<Vec<Vec3>> {
    let out = work_dir().join(format!("skin-{clip}-{method}.json"));
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
fn viewer_cpu(run: &mut impl Session<Viewer>, method: SkinMethod) -> Vec<Vec3> {
    let stage = &mut run.app_mut().scene.stage;
    stage.posed.skin_cpu(&stage.character, method).unwrap();
    stage.posed.positions[0].clone()
}

/// The vertices the compute pass of the last frame wrote for instance 0, read back.
fn viewer_gpu(run: &impl Session<Viewer>) -> Vec<Vec3> {
    let mut out = Vec::new();
    run.renderer().compute_skinned(0, &mut out).unwrap();
    out.iter().map(|v| Vec3::new(v.position[0], v.position[1], v.position[2])).collect()
}

#[test]
fn panel_events_drive_the_viewer_and_the_pose_matches_animtool() {
    let fox = shared("Fox/Fox.glb");
    let mut run = start(&["--model", &fox.display().to_string()], W, H);
    drive_the_viewer(&mut run);
    let done = run.finish().unwrap();
    assert_eq!(done.context.validation_count(), 0);
}

/// The same events in a window, under `xvfb-run` with validation on.
#[test]
fn panel_events_drive_the_viewer_in_a_window_under_xvfb() {
    if !ui_driver::in_xvfb() {
        ui_driver::under_xvfb("panel_events_drive_the_viewer_in_a_window_under_xvfb");
        return;
    }
    let fox = shared("Fox/Fox.glb");
    let mut run = start_window(&["--model", &fox.display().to_string()], W, H);
    drive_the_viewer(&mut run);
    assert_eq!(run.context().validation_count(), 0);
    run.finish().unwrap();
}

/// The viewer showing Fox: open the mannequin from the file field, pause, select the walk,
/// scrub, switch to DQ and compare the pose with `animtool skin`'s, hold a morph weight
/// and let it go.
fn drive_the_viewer(run: &mut impl Session<Viewer>) {
    // The mannequin as a file: skinned, with morph targets, clips with foot-contact curves
    // and the foot events they imply (its clips as a graph plays them).
    let glb = work_dir().join("mannequin.glb");
    let m = anim_mannequin::build();
    let skin = anim_core::skin::Skin::from_skeleton(&m.skeleton);
    let mesh = anim_gltf::ExportMesh { name: "mannequin", mesh: &m.mesh, skin: Some(&skin) };
    let bytes = anim_gltf::export_glb_with_morphs(&m.skeleton, &[mesh], &[Some(&m.morph)], &m.root_motion_clips());
    std::fs::write(&glb, bytes.unwrap()).unwrap();
    assert_eq!(run.app().scene.info.clips.len(), 3, "Fox to start with");

    // Open the mannequin from the file field: click it, type the path, click Open.
    ui_driver::type_into(run, "file", &glb.display().to_string());
    assert_eq!(run.app().scene.file_field, glb.display().to_string());
    click(run, "open");
    let model = anim_gltf::load(&glb).unwrap();
    let v = &run.app().scene;
    assert_eq!(v.load_error, None);
    assert_eq!(v.source.as_deref(), Some(glb.as_path()));
    assert_eq!(v.info.joints, model.skeleton.len());
    assert_eq!(v.info.morph_targets(), 2, "breathe and brow_raise");
    assert_eq!(v.info.clips.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), {
        model.clips.iter().map(|c| c.name()).collect::<Vec<_>>()
    });
    // The camera framed the new model.
    assert!((run.app().orbit.target - v.stage.centre).norm() < 1e-5 * v.stage.radius);
    frames(run, 2);

    // Pause.
    assert!(!run.app().scene.paused);
    click(run, "play");
    assert!(run.app().scene.paused);
    let t = run.app().scene.time;
    frames(run, 2);
    assert_eq!(run.app().scene.time, t, "paused time stands");

    // Select the walk.
    let walk = model.find_clip("walk").unwrap();
    click(run, &format!("clip:{walk}"));
    let v = &run.app().scene;
    assert_eq!((v.clip, v.time), (Some(walk), 0.0));
    let duration = model.clips[walk].duration();
    assert_eq!(v.marks.duration, duration);
    assert_eq!(v.marks.contacts.len(), 2, "both feet's contact curves on the timeline");
    assert_eq!(v.marks.events, model.clips[walk].events(), "the walk's events on the timeline");
    assert!(v.marks.events.iter().any(|e| e.name.starts_with("foot_down")), "{:?}", v.marks.events);

    // Scrub: drag the timeline's bar to 62 % of its width; the time is what that x maps to.
    let bar = rect(run, "timeline");
    let (from, to) = (bar.left() + 0.1 * bar.width(), bar.left() + 0.62 * bar.width());
    drag(run, egui::pos2(from, bar.center().y), egui::pos2(to, bar.center().y));
    let want = (to - bar.left()) / bar.width() * duration;
    let step = duration / bar.width();
    let t = run.app().scene.time;
    assert!((t - want).abs() <= step, "scrubbed to {t}, the bar's x maps to {want} (step {step})");
    assert!(t > 0.3 * duration, "{t}");

    // DQ.
    click(run, "method:dq");
    assert_eq!(run.app().scene.stage.method, SkinMethod::Dq);
    assert_eq!(run.app().scene.time, t, "still paused at the scrubbed time");

    // The pose drawn is animtool's at that clip and time: the CPU-skinned posed character...
    let expected = animtool_skin(&glb, "walk", t, "dq");
    assert_eq!(expected.len(), 1);
    let cpu = viewer_cpu(run, SkinMethod::Dq);
    assert_close("CPU skinning, DQ", &cpu, &expected[0]);
    // ... and what the compute backend skinned on the GPU.
    click(run, "backend:GPU compute");
    assert_eq!(run.app().scene.stage.backend, Backend::Compute);
    assert_close("GPU compute skinning, DQ", &viewer_gpu(run), &expected[0]);
    // The selected clip, time and method are animtool's: LBS would differ.
    let lbs = animtool_skin(&glb, "walk", t, "lbs");
    let apart = lbs[0].iter().zip(&expected[0]).map(|(a, b)| (a - b).norm()).fold(0.0f32, f32::max);
    assert!(apart > 1e-3 * size(&expected[0]), "LBS and DQ differ by only {apart}");

    // Hold brow_raise at 1 with its slider (dragged past its right end).
    let brow = 1;
    let slider = rect(run, &format!("morph:0:{brow}"));
    let clip_weight = run.app().scene.stage.posed.weights[0][brow];
    assert!(clip_weight < 0.9, "the walk's brow_raise is {clip_weight}: the slider must move it");
    drag(run, slider.center(), egui::pos2(slider.right() + 20.0, slider.center().y));
    let v = &run.app().scene;
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
    assert_close("CPU skinning, brow raised", &viewer_cpu(run, SkinMethod::Dq), &held);
    assert_close("GPU compute skinning, brow raised", &viewer_gpu(run), &held);
    let moved = held.iter().zip(&expected[0]).filter(|(a, b)| (*a - *b).norm() > 1e-4).count();
    assert!(moved > 10, "the brow moved {moved} vertices");

    // Back to the clip's weight.
    click(run, &format!("morph-reset:0:{brow}"));
    assert_eq!(run.app().scene.morph_override[0], vec![None, None]);
    assert!((run.app().scene.stage.posed.weights[0][brow] - clip_weight).abs() < 1e-6);
    assert_close("GPU compute skinning, back to the clip", &viewer_gpu(run), &expected[0]);
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
fn egui_areas(run: &impl Session<Viewer>) -> Vec<egui::Rect> {
    let shadow = ctx(run).style().visuals.window_shadow;
    let reach = f32::from(shadow.blur) + f32::from(shadow.spread) + 2.0;
    let offset = egui::vec2(f32::from(shadow.offset[0]), f32::from(shadow.offset[1]));
    window_rects(run).into_iter().map(|(_, r)| r.expand(reach).union(r.translate(offset).expand(reach))).collect()
}

/// The windows' rectangles (the panel and the viewer's four).
fn window_rects(run: &impl Session<Viewer>) -> Vec<(&'static str, egui::Rect)> {
    ["panel", "timeline-window", "model-window", "joints-window", "timings-window"]
        .into_iter()
        .map(|n| (n, rect(run, n)))
        .collect()
}

/// The CPU-projected box `[x0, y0, x1, y1]` of the character's skinned vertices.
fn character_box(run: &mut impl Session<Viewer>) -> [f32; 4] {
    let camera = run.app().frame.camera;
    let stage = &mut run.app_mut().scene.stage;
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
    drop_files(&mut run, |r: &Headless<Viewer>| Some(r.image().unwrap()));
}

/// The same drops onto the window, under `xvfb-run` with validation on (the window's
/// image is not read back: the pixel checks are the headless test's).
#[test]
fn files_dropped_onto_the_window_under_xvfb() {
    if !ui_driver::in_xvfb() {
        ui_driver::under_xvfb("files_dropped_onto_the_window_under_xvfb");
        return;
    }
    let mut run = start_window(&[], W, H);
    drop_files(&mut run, |_| None);
    assert_eq!(run.context().validation_count(), 0);
    run.finish().unwrap();
}

/// Drops a broken glTF onto the viewer showing the mannequin (the error is shown, the
/// mannequin stays and, where `image` reads the frame, is drawn as before), then Fox (it
/// replaces the mannequin and is framed).
fn drop_files<R: Session<Viewer>>(run: &mut R, image: impl Fn(&R) -> Option<RgbaImage>) {
    click(run, "play");
    assert!(run.app().scene.paused);
    frames(run, 1);
    let before = image(run);
    let joints = run.app().scene.info.joints;
    let model_box = character_box(run);

    // A glTF whose mesh names an accessor that does not exist.
    let broken = work_dir().join("broken.gltf");
    std::fs::write(
        &broken,
        r#"{"asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0]}], "nodes": [{"mesh": 0}],
            "meshes": [{"primitives": [{"attributes": {"POSITION": 7}}]}]}"#,
    )
    .unwrap();
    run.drop_file(&broken).unwrap();
    frames(run, 2);
    let v = &run.app().scene;
    let error = v.load_error.clone().expect("the import failed");
    assert!(error.contains("broken.gltf"), "{error}");
    assert!(error.contains("/meshes/0/primitives/0/attributes/POSITION"), "the JSON pointer: {error}");
    let label = rect(run, "load-error");
    assert!(rect(run, "panel").contains_rect(label), "the error is shown in the panel: {label:?}");
    assert_eq!((v.info.joints, v.source.as_deref()), (joints, None), "the mannequin stays");
    // The character is drawn as before: every pixel outside egui's areas, over its box.
    let mut skip = egui_areas(run);
    skip.extend(window_rects(run).into_iter().map(|(_, r)| r));
    if let (Some(before), Some(after)) = (&before, image(run)) {
        let (compared, differ) = differing_outside(before, &after, model_box, &skip);
        assert!(compared > 2000, "only {compared} character pixels outside the windows");
        assert_eq!(differ, 0, "{differ} of {compared} pixels of the character changed");
    }

    // A valid file replaces the model and the camera frames it.
    let fox = shared("Fox/Fox.glb");
    let fox_model = anim_gltf::load(&fox).unwrap();
    run.drop_file(&fox).unwrap();
    frames(run, 2);
    let v = &run.app().scene;
    assert_eq!(v.load_error, None);
    assert_eq!(v.source.as_deref(), Some(fox.as_path()));
    assert_eq!(v.info.joints, fox_model.skeleton.len());
    assert_ne!(v.info.joints, joints);
    assert_eq!(v.info.meshes.len(), fox_model.meshes.len());
    assert_eq!(v.info.vertices(), 1728);
    assert_eq!(v.info.clips.len(), 3);
    assert!(v.clip.is_some(), "a clip of the new model plays");
    assert!((run.app().orbit.target - v.stage.centre).norm() < 1e-4 * v.stage.radius);
    assert!(v.stage.radius > 50.0, "framed on Fox's size: {}", v.stage.radius);
    if let (Some(before), Some(fox_img)) = (&before, image(run)) {
        let (compared, differ) = differing_outside(before, &fox_img, model_box, &skip);
        assert!(differ > compared / 4, "the image changed in only {differ} of {compared} pixels");
    }
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
        let centre = run.app().scene.stage.centre;
        let [x, y] = run.app().frame.camera.project(&centre, w, h).unwrap();
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
    img.save_png(&work_dir().join("joint_normals_bounds.png")).unwrap();
    run.finish().unwrap();
}

/// What one frame of a graph left: the graph's time after it, its float and bool
/// parameters, and the triggers whose transitions fired in it.
#[derive(Clone, Debug, PartialEq)]
struct GraphFrame {
    time: f32,
    values: Vec<(String, serde_json::Value)>,
    triggered: Vec<&'static str>,
}

/// A session that logs every frame's [`GraphFrame`], so that `animtool graph` can be handed
/// the same parameter changes.
struct Recorder<'a, R> {
    run: &'a mut R,
    log: Vec<GraphFrame>,
}

impl<R: Session<Viewer>> Session<Viewer> for Recorder<'_, R> {
    fn frame(&mut self) -> Result<(), demos::DemoError> {
        self.run.frame()?;
        let g = self.run.app().scene.graph.as_ref().expect("a graph plays");
        let mut values = Vec::new();
        for info in g.graph.params().infos() {
            let v = match info.kind {
                ParamKind::Float => {
                    serde_json::json!(g.instance.float(g.graph.float_param(&info.name).unwrap()).unwrap())
                }
                ParamKind::Bool => serde_json::json!(g.instance.bool(g.graph.bool_param(&info.name).unwrap()).unwrap()),
                ParamKind::Trigger => continue,
            };
            values.push((info.name.clone(), v));
        }
        // The locomotion graph's triggers each start one transition, in the update of the
        // frame whose panel fired them.
        let body = g.graph.node("body").unwrap();
        let upper = g.graph.node("upper").unwrap();
        let triggered = g
            .events
            .iter()
            .filter_map(|e| match *e {
                GraphEvent::Transition { machine, to, .. }
                    if machine == body && Some(to) == g.graph.state(body, "takeoff") =>
                {
                    Some("jump")
                }
                GraphEvent::Transition { machine, to, .. }
                    if machine == upper && Some(to) == g.graph.state(upper, "punch") =>
                {
                    Some("punch")
                }
                _ => None,
            })
            .collect();
        self.log.push(GraphFrame { time: g.time, values, triggered });
        Ok(())
    }
    fn app(&self) -> &demos::App<Viewer> {
        self.run.app()
    }
    fn app_mut(&mut self) -> &mut demos::App<Viewer> {
        self.run.app_mut()
    }
    fn renderer(&self) -> &anim_render_vk::Renderer {
        self.run.renderer()
    }
    fn context(&self) -> &std::sync::Arc<anim_render_vk::Context> {
        self.run.context()
    }
    fn ui(&self) -> Option<&demos::ui::DemoUi> {
        self.run.ui()
    }
    fn ui_mut(&mut self) -> Option<&mut demos::ui::DemoUi> {
        self.run.ui_mut()
    }
    fn drop_file(&mut self, path: &Path) -> Result<(), demos::DemoError> {
        self.run.drop_file(path)
    }
}

/// `animtool graph`'s inputs for the changes `log` saw (each at a little before the time of
/// the frame that made it, so it applies to that frame), and the duration that gives as
/// many frames as the log.
fn animtool_inputs(log: &[GraphFrame], first: &[(String, serde_json::Value)]) -> (serde_json::Value, f32) {
    let mut changes = Vec::new();
    let mut before = first.to_vec();
    for f in log {
        let set: serde_json::Map<String, serde_json::Value> =
            f.values.iter().filter(|(n, v)| before.iter().all(|(m, w)| m != n || w != v)).cloned().collect();
        let t = (f.time - 0.25 * HEADLESS_DT).max(0.0);
        if !set.is_empty() {
            changes.push(serde_json::json!({"t": t, "set": set}));
        }
        if !f.triggered.is_empty() {
            changes.push(serde_json::json!({"t": t, "trigger": f.triggered}));
        }
        before.clone_from(&f.values);
    }
    let last = log.last().expect("frames were logged").time;
    (serde_json::Value::Array(changes), last + 0.25 * HEADLESS_DT)
}

#[test]
fn a_graph_plays_with_its_parameters_as_controls() {
    let file = graph_file();
    let mut run = start(&["--graph", &file.display().to_string()], GRAPH_W, GRAPH_H);
    drive_the_graph(&mut run, &file);
    let done = run.finish().unwrap();
    assert_eq!(done.context.validation_count(), 0);
}

/// The same in a window, under `xvfb-run` with validation on.
#[test]
fn a_graph_plays_in_a_window_under_xvfb() {
    if !ui_driver::in_xvfb() {
        ui_driver::under_xvfb("a_graph_plays_in_a_window_under_xvfb");
        return;
    }
    let file = graph_file();
    let mut run = start_window(&["--graph", &file.display().to_string()], GRAPH_W, GRAPH_H);
    drive_the_graph(&mut run, &file);
    assert_eq!(run.context().validation_count(), 0);
    run.finish().unwrap();
}

/// The screen the graph tests use: the panel has room for every parameter's row.
const GRAPH_W: u32 = 1280;
/// See [`GRAPH_W`].
const GRAPH_H: u32 = 720;

/// The mannequin's locomotion graph as a file.
fn graph_file() -> PathBuf {
    let file = work_dir().join("locomotion.json");
    std::fs::write(&file, anim_mannequin::LOCOMOTION_GRAPH).unwrap();
    file
}

/// The viewer playing the locomotion graph on the mannequin: the floor off, `move_z`
/// dragged to a walk-run, `jump` fired, `punch` fired; the states, blend weights, root
/// motion and pose after each, and at the end the pose, states and root motion of
/// `animtool graph` given the same changes at the same frames.
fn drive_the_graph(run: &mut impl Session<Viewer>, file: &Path) {
    let v = &run.app().scene;
    let g = v.graph.as_ref().expect("--graph plays the graph");
    assert_eq!(g.file, file);
    assert_eq!(g.machine_lines(), ["body: locomotion", "upper: none"]);
    assert_eq!(g.time, 2.0 * HEADLESS_DT, "three frames, the first of 0 s");
    // Every parameter has its control in the panel, and the panel stays clear of the
    // timeline.
    for name in ["move_x", "move_z", "jump", "punch", "grounded", "foot_ik"] {
        assert!(rect(run, "panel").contains_rect(rect(run, &format!("param:{name}"))), "{name}");
    }
    let (panel, timeline) = (rect(run, "panel"), rect(run, "timeline-window"));
    assert!(!panel.intersects(timeline), "the panel {panel:?} runs into the timeline {timeline:?}");
    click(run, "graph-floor");
    assert!(!run.app().scene.graph.as_ref().unwrap().on_floor, "foot IK off the floor, as animtool graph plays it");
    // Restart: the graph shows its time 0 in the frame the button was released in, as
    // animtool graph's frame 0; the recording starts after it.
    click(run, "graph-restart");
    let g = run.app().scene.graph.as_ref().unwrap();
    assert_eq!((g.time, g.world.translation), (0.0, Vec3::zeros()));
    let first: Vec<(String, serde_json::Value)> = g
        .graph
        .params()
        .infos()
        .iter()
        .filter(|i| i.kind != ParamKind::Trigger)
        .map(|i| {
            (
                i.name.clone(),
                if i.kind == ParamKind::Bool {
                    serde_json::json!(i.default != 0.0)
                } else {
                    serde_json::json!(i.default)
                },
            )
        })
        .collect();
    let mut rec = Recorder { run, log: Vec::new() };
    let run = &mut rec;

    // move_z: the rail spans -3 to 3 m/s; drag from its middle to 75 %, about 1.5 m/s.
    let rail = ui_driver::Rail::of(run, "param:move_z");
    drag(run, rail.at(0.5), rail.at(0.75));
    let g = run.app().scene.graph.as_ref().unwrap();
    let move_z = g.instance.float(g.graph.float_param("move_z").unwrap()).unwrap();
    assert!((move_z - 1.5).abs() <= 6.0 * rail.step(), "move_z is {move_z}, the rail's 75 % is 1.5");
    frames(run, 20);
    let g = run.app().scene.graph.as_ref().unwrap();
    let space = g.graph.node("move").unwrap();
    let weights = g.instance.blend_weights(space);
    assert!((weights.iter().sum::<f32>() - 1.0).abs() < 1e-4, "{weights:?}");
    let weight = |name: &str| {
        let kids = g.graph.blend_children(space);
        kids.iter().zip(weights).find(|(c, _)| g.graph.node_name(**c) == Some(name)).map_or(0.0, |(_, w)| *w)
    };
    // Between the walk (0.85 m/s) and the run (2.21 m/s), by speed.
    let (walk, run_w) = (weight("walk"), weight("run"));
    // (the polar form gives the sideways walks a little too).
    assert!(walk + run_w > 0.9 && walk > 0.2 && run_w > 0.2, "walk {walk}, run {run_w} of {weights:?}");
    assert!(g.world.translation.z > 0.2, "root motion carried it forwards: {:?}", g.world.translation);

    // Fire jump: the body machine leaves locomotion for takeoff in that frame.
    click(run, "param:jump");
    let g = run.app().scene.graph.as_ref().unwrap();
    assert!(g.machine_lines()[0].starts_with("body: locomotion > takeoff inertialize"), "{:?}", g.machine_lines());
    frames(run, 12);
    // Punch on the upper body while the legs land.
    click(run, "param:punch");
    let g = run.app().scene.graph.as_ref().unwrap();
    assert!(
        g.machine_lines().iter().any(|l| l.starts_with("upper: none > punch crossfade")),
        "{:?}",
        g.machine_lines()
    );
    frames(run, 8);
    let log = std::mem::take(&mut rec.log);
    assert_eq!(log.iter().filter(|f| !f.triggered.is_empty()).count(), 2, "jump and punch each in one frame");

    // animtool graph, given the same changes at the same frames.
    let (inputs, duration) = animtool_inputs(&log, &first);
    let dir = work_dir();
    let (inputs_file, trace_file) = (dir.join("graph-inputs.json"), dir.join("graph-trace.json"));
    std::fs::write(&inputs_file, serde_json::to_vec(&inputs).unwrap()).unwrap();
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_animtool"))
        .args(["graph", &file.display().to_string(), "--inputs", &inputs_file.display().to_string()])
        .args(["--rate", "30", "--duration", &duration.to_string(), "--out", &trace_file.display().to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "animtool graph failed");
    let trace: serde_json::Value = serde_json::from_slice(&std::fs::read(&trace_file).unwrap()).unwrap();
    let frames_out = trace["frames"].as_array().unwrap();
    // The recording started at the restart's frame: the trace's frame 0 is that frame.
    assert_eq!(frames_out.len(), log.len() + 1, "one trace frame per viewer frame since the restart");
    let last = frames_out.last().unwrap();
    let v = &rec.run.app().scene;
    let g = v.graph.as_ref().unwrap();
    assert!((last["time"].as_f64().unwrap() as f32 - g.time).abs() < 1e-3);
    let states: Vec<String> = last["states"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| format!("{}: {}", s["machine"].as_str().unwrap(), s["state"].as_str().unwrap()))
        .collect();
    let shown: Vec<String> = g
        .instance
        .active_states()
        .map(|(m, s)| format!("{}: {}", g.graph.node_name(m).unwrap(), g.graph.state_name(m, s).unwrap()))
        .collect();
    assert_eq!(shown, states);
    let sk = &v.stage.character.skeleton;
    let size = v.stage.radius;
    let mut worst = 0.0f32;
    for (j, name) in sk.names().iter().enumerate() {
        let want = &last["joints"][name];
        let want = Vec3::new(
            want[0].as_f64().unwrap() as f32,
            want[1].as_f64().unwrap() as f32,
            want[2].as_f64().unwrap() as f32,
        );
        let got = v.stage.posed.world[j].column(3).xyz();
        worst = worst.max((got - want).norm());
    }
    assert!(worst < 1e-4 * size, "a joint is {worst} from animtool graph's");
    let root = &last["root"]["translation"];
    let root =
        Vec3::new(root[0].as_f64().unwrap() as f32, root[1].as_f64().unwrap() as f32, root[2].as_f64().unwrap() as f32);
    assert!(
        (g.world.translation - root).norm() < 1e-4 * size.max(root.norm()),
        "{:?} vs {root:?}",
        g.world.translation
    );
}
