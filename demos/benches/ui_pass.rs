//! The CPU cost of the viewer's UI a frame: one egui frame of the viewer with every one of
//! its windows open (panel, timeline, model facts, joint tree with a joint selected and
//! its transforms, timings with full plots) and a model loaded: `Context::run` (layout)
//! plus `Context::tessellate`. Issue 24's aim: under 0.5 ms.
//!
//! The scene is built once, outside the timed loop, on a headless renderer (lavapipe
//! without a GPU), played a few frames, and its timing plots filled; the timed loop runs
//! egui alone (no GPU work).
//!
//! Run: `cargo bench -p demos --bench ui_pass`.

use criterion::{Criterion, criterion_group, criterion_main};
use demos::app::HEADLESS_DT;
use demos::scenes::viewer::Viewer;
use demos::{CommonArgs, Headless};
use std::hint::black_box;
use std::path::Path;

const W: u32 = 1280;
const H: u32 = 720;

/// A headless viewer with its panel, `model` loaded (`None`: the mannequin), a joint
/// selected, after a few frames; the timing plots then filled to [`demos::ui::HISTORY`]
/// frames with the last frame's figures (a full plot without rendering that many frames,
/// so the set-up stays short under callgrind too).
fn viewer(model: Option<&Path>) -> Headless<Viewer> {
    let mut argv: Vec<String> =
        ["viewer", "--headless", "--width", &W.to_string(), "--height", &H.to_string()].map(String::from).to_vec();
    if let Some(m) = model {
        argv.extend(["--model".into(), m.display().to_string()]);
    }
    let args = <CommonArgs as clap::Parser>::parse_from(argv);
    let mut run = Headless::<Viewer>::new(&args).expect("a headless viewer (lavapipe without a GPU)");
    run.frame().expect("a frame");
    // The skeleton's last joint: the joint tree opens to it and its transforms are shown.
    let joints = run.app.scene.stage.character.skeleton.len();
    run.app.scene.select_joint(Some(joints - 1));
    for _ in 0..3 {
        run.frame().expect("a frame");
    }
    let stats = run.renderer.frame_stats().cloned();
    let ui = run.ui.as_mut().expect("the panel is on");
    let cpu: Vec<(&'static str, f32)> = ui.timings.cpu.iter().map(|s| (s.name, s.last())).collect();
    for _ in 0..demos::ui::HISTORY {
        for (name, ms) in &cpu {
            ui.timings.cpu(name, *ms);
        }
        if let Some(stats) = &stats {
            ui.timings.gpu(stats);
        }
    }
    run
}

fn ui_pass(c: &mut Criterion) {
    let mut g = c.benchmark_group("viewer_ui");
    let woman = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/assets/Woman/Woman.gltf"));
    let models: [(&str, Option<&Path>); 2] = [("mannequin", None), ("woman", Some(woman).filter(|p| p.exists()))];
    for (name, model) in models {
        if name != "mannequin" && model.is_none() {
            continue;
        }
        let mut run = viewer(model);
        let Headless { app, ui, .. } = &mut run;
        let ui = ui.as_mut().expect("the panel is on");
        let orbit = app.orbit;
        g.bench_function(format!("frame_{name}_{W}x{H}"), |b| {
            b.iter(|| {
                let input = ui.headless_input(W, H, HEADLESS_DT);
                let output = ui.run(&mut app.scene, &orbit, (W, H), input);
                let meshes = ui.ctx.tessellate(output.shapes, output.pixels_per_point);
                black_box(meshes.len())
            });
        });
    }
    g.finish();
}

criterion_group!(benches, ui_pass);
criterion_main!(benches);
