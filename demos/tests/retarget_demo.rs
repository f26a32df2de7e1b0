//! The `retarget` demo runs headless on lavapipe with validation on (no message), draws
//! its four characters where the CPU puts them, and keeps their feet on the floor over a
//! second of every clip.

use demos::scenes::retarget::Retarget;
use demos::{CommonArgs, run_headless};

mod common;

const W: u32 = 320;
const H: u32 = 180;

#[test]
fn retarget_demo_runs_clean_and_keeps_feet_on_the_floor() {
    let mut run = run_headless::<Retarget>(&CommonArgs::headless(4, W, H)).expect("the demo runs");
    assert!(run.context.validation_enabled());
    assert_eq!(run.context.validation_count(), 0, "{}", run.context.validation_messages().join("\n"));
    let names: Vec<&str> = run.app.scene.players.iter().map(|p| p.stage.character.name.as_str()).collect();
    assert_eq!(names, ["mannequin", "CesiumMan", "RiggedFigure", "Woman"]);
    {
        // The four characters are drawn where the CPU puts them.
        let r = &mut run;
        let frame = &r.app.frame;
        let keep = |i: &anim_render_vk::Instance| r.app.scene.players.iter().any(|p| common::of_stage(&p.stage, i));
        let drawn = common::drawn_instances(&r.context, &mut r.renderer, frame, W, H, keep);
        let mut triangles = Vec::new();
        for p in &mut r.app.scene.players {
            let t = common::stage_triangles(&mut p.stage, frame);
            assert!(!t.is_empty(), "{} is drawn", p.stage.character.name);
            triangles.extend(t);
        }
        let predicted = common::silhouette(&frame.camera, W, H, &triangles);
        common::assert_matches("retarget", &drawn, &predicted);
    }
    // Feet on the floor: over a second of every clip at 60 Hz, no foot or toe joint of any
    // character goes below it, and while the mannequin stands (idle) every character's
    // lowest foot joint is within a few centimetres of it.
    let scene = &mut run.app.scene;
    let clips = scene.players[0].stage.character.clips.len();
    for clip in 0..clips {
        scene.clip = clip;
        let mut highest_lowest = f32::NEG_INFINITY;
        for f in 0..60 {
            scene.time = f as f32 / 60.0;
            for p in &mut scene.players {
                p.stage.sample(Some(clip), scene.time).unwrap();
            }
            let lowest = scene.lowest_foot();
            assert!(lowest >= -1e-3, "clip {clip} at frame {f}: a foot {lowest} below the floor");
            highest_lowest = highest_lowest.max(lowest);
        }
        let name = scene.players[0].stage.character.clips[clip].name().to_owned();
        if name == "idle" {
            assert!(highest_lowest < 0.06, "idle: feet {highest_lowest} above the floor");
        }
    }
    assert_eq!(run.context.validation_count(), 0, "{}", run.context.validation_messages().join("\n"));
    let log = run.context.validation_log();
    drop(run);
    assert_eq!(log.count(), 0, "{}", log.messages().join("\n"));
}
