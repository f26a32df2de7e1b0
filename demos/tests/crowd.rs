//! `ch15_crowd`, `animtool bake` and `crowd_report` on lavapipe with validation on: a crowd
//! of 1,000 characters draws where the CPU puts every character (atlas read, skinned and
//! placed on the CPU), culling removes the characters out of view, an atlas file
//! written by `animtool bake` loads in the demo and one of another skin is refused.

use anim_crowd::atlas::AnimAtlas;
use demos::crowd::CrowdCharacter;
use demos::scenes::ch15_crowd::CrowdScene;
use demos::{Character, CommonArgs, HeadlessRun, run_headless};

mod common;
use anim_testkit::assets::path_str as asset;
use std::path::PathBuf;
use std::process::Command;

const W: u32 = 320;
const H: u32 = 200;

fn tmp(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name)
}

/// Checks that the crowd of `run` is drawn where the CPU puts it (`common`): every
/// character posed from `atlas` as the shaders read it, skinned and placed on the CPU. The
/// renderer gets the crowd's records as they are after the last update first (the demo
/// uploads them before each update).
fn crowd_drawn(what: &str, run: &mut HeadlessRun<CrowdScene>, atlas: &AnimAtlas, model: Option<&str>) {
    let scene = &run.app.scene;
    run.renderer.set_crowd_instances(scene.id, scene.crowd.instances()).unwrap();
    let (cc, _) = CrowdCharacter::new(Character::load(model.map(std::path::Path::new)).unwrap()).unwrap();
    let drawn = common::drawn_crowds(&run.context, &mut run.renderer, &run.app.frame, W, H);
    let triangles = common::crowd_triangles(&scene.crowd, atlas, cc.mesh(), scene.method);
    let predicted = common::silhouette(&run.app.frame.camera, W, H, &triangles);
    common::assert_matches(what, &drawn, &predicted);
}

/// The atlas the demo bakes for `model` with its default settings.
fn baked_atlas(model: Option<&str>) -> AnimAtlas {
    let a = args(&[]);
    let (cc, _) = CrowdCharacter::new(Character::load(model.map(std::path::Path::new)).unwrap()).unwrap();
    let settings = anim_crowd::atlas::BakeSettings {
        rate: a.crowd.rate,
        layout: a.crowd.layout().unwrap(),
        format: a.crowd.texel_format().unwrap(),
    };
    cc.bake(&settings).unwrap()
}

fn args(extra: &[&str]) -> CommonArgs {
    let mut v: Vec<String> = [
        "ch15_crowd",
        "--headless",
        "--validation",
        "--no-ui",
        "--frames",
        "3",
        "--width",
        &W.to_string(),
        "--height",
        &H.to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    v.extend(extra.iter().map(|s| s.to_string()));
    <CommonArgs as clap::Parser>::parse_from(v)
}

#[test]
fn thousand_characters_draw_and_culling_counts_what_is_in_view() {
    // Fox (1,728 vertices) keeps lavapipe's time in check.
    let fox = asset("Fox/Fox.glb");
    let atlas = baked_atlas(Some(&fox));
    for path in ["book", "palette-vertex", "palette-compute"] {
        let mut run = run_headless::<CrowdScene>(&args(&["--count", "1000", "--path", path, "--model", &fox]))
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        assert_eq!(run.context.validation_count(), 0, "{}", run.context.validation_messages().join("\n"));
        let framed = run.renderer.crowd_visible(run.app.scene.id).unwrap();
        crowd_drawn(&format!("1,000 Foxes, {path}"), &mut run, &atlas, Some(&fox));
        let mut target = anim_render_vk::Offscreen::new(&run.context, W, H).unwrap();
        let mut visible_at = |zoom: f32, run: &mut demos::HeadlessRun<CrowdScene>| {
            run.app.orbit.reset();
            run.app.orbit.zoom(zoom);
            run.app.step(&mut run.renderer, 1.0 / 30.0).unwrap();
            target.render(&mut run.renderer, &run.app.frame).unwrap();
            run.renderer.crowd_visible(run.app.scene.id).unwrap()
        };
        // From far away every character is in view; close up, most are culled.
        assert_eq!(visible_at(12.0, &mut run), 1000, "{path}: from far away all are visible");
        let near = visible_at(0.15, &mut run);
        assert!(near > 0 && near < framed && framed <= 1000, "{path}: {near} visible close up, {framed} framed");
        assert!(run.app.scene.stats_line().contains("1000 characters"), "{}", run.app.scene.stats_line());
        drop(target);
        assert_eq!(run.context.validation_count(), 0, "{}", run.context.validation_messages().join("\n"));
    }
}

/// `--lod-pixels`: the stats line names each level's characters (all of the crowd between
/// them) and draws fewer triangles than the full mesh would.
#[test]
fn mesh_lods_pick_levels_and_draw_fewer_triangles() {
    let full = run_headless::<CrowdScene>(&args(&["--count", "400"])).unwrap();
    let lod = run_headless::<CrowdScene>(&args(&["--count", "400", "--lod-pixels", "1"])).unwrap();
    for run in [&full, &lod] {
        assert_eq!(run.context.validation_count(), 0, "{}", run.context.validation_messages().join("\n"));
    }
    let id = lod.app.scene.id;
    let levels = lod.renderer.crowd_level_counts(id).expect("level counts");
    assert_eq!(levels.len(), 4);
    assert_eq!(Some(levels.iter().sum::<u32>()), lod.renderer.crowd_visible(id));
    let (f, l) = (full.renderer.crowd_triangles(full.app.scene.id).unwrap(), lod.renderer.crowd_triangles(id).unwrap());
    assert!(l < f, "{l} triangles with levels, {f} without");
    assert!(lod.app.scene.stats_line().contains("levels ["), "{}", lod.app.scene.stats_line());
}

#[test]
fn different_clips_and_times_differ_on_screen() {
    // Two seeds give the same positions but other clips, phases and headings.
    let a = run_headless::<CrowdScene>(&args(&["--count", "16", "--seed", "1"])).unwrap();
    let b = run_headless::<CrowdScene>(&args(&["--count", "16", "--seed", "2"])).unwrap();
    let differing = (0..H)
        .flat_map(|y| (0..W).map(move |x| (x, y)))
        .filter(|&(x, y)| a.image.pixel(x, y) != b.image.pixel(x, y))
        .count();
    assert!(differing > 200, "only {differing} pixels differ between two crowds");
}

#[test]
fn animtool_bake_writes_an_atlas_the_demo_loads() {
    let out = tmp("fox.atlas");
    let fox = asset("Fox/Fox.glb");
    let res = Command::new(env!("CARGO_BIN_EXE_animtool"))
        .args(["bake", &fox, "--rate", "30", "--layout", "matrix", "--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(res.status.success(), "{}", String::from_utf8_lossy(&res.stderr));
    let text = String::from_utf8_lossy(&res.stdout);
    assert!(text.contains("3 clip(s)") && text.contains("Survey") && text.contains("bake error"), "{text}");

    let mut run =
        run_headless::<CrowdScene>(&args(&["--count", "64", "--model", &fox, "--anim-texture", out.to_str().unwrap()]))
            .unwrap();
    let atlas = AnimAtlas::load(&out).unwrap();
    crowd_drawn("64 Foxes from the baked file", &mut run, &atlas, Some(&fox));
    drop(run);

    // The mannequin's skin is not Fox's.
    let err = run_headless::<CrowdScene>(&args(&["--count", "8", "--anim-texture", out.to_str().unwrap()]))
        .err()
        .expect("an atlas of another skin is refused");
    assert!(err.to_string().contains("joint"), "{err}");

    // A file that is not an atlas.
    let bad = tmp("not.atlas");
    std::fs::write(&bad, b"hello, not an atlas").unwrap();
    let err = run_headless::<CrowdScene>(&args(&["--count", "8", "--anim-texture", bad.to_str().unwrap()]))
        .err()
        .expect("garbage is refused");
    assert!(!err.to_string().is_empty());
}

#[test]
fn crowd_report_runs_on_lavapipe() {
    let res = Command::new(env!("CARGO_BIN_EXE_crowd_report"))
        .args([
            "--counts",
            "50",
            "--frames",
            "1",
            "--width",
            "64",
            "--height",
            "64",
            "--copy-mib",
            "8",
            "--layouts",
            "model-trs,dq",
            "--validation",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&res.stdout);
    assert!(res.status.success(), "{text}\n{}", String::from_utf8_lossy(&res.stderr));
    assert!(text.contains("device:") && text.contains("copy bandwidth"), "{text}");
    for path in ["book", "palette-vertex", "palette-compute"] {
        assert!(text.lines().any(|l| l.contains(path) && l.contains(" 50 ")), "{path} missing:\n{text}");
    }
}

/// With `--lod-pixels` over a field seen from its edge, every path gets a `+lod` row that
/// draws fewer triangles than its full-detail row, with an image difference.
#[test]
fn crowd_report_measures_mesh_lods_on_lavapipe() {
    let res = Command::new(env!("CARGO_BIN_EXE_crowd_report"))
        .args(["--counts", "400", "--frames", "1", "--width", "96", "--height", "64", "--copy-mib", "8"])
        .args(["--layouts", "matrix", "--view", "field", "--lod-pixels", "1", "--validation"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&res.stdout);
    assert!(res.status.success(), "{text}\n{}", String::from_utf8_lossy(&res.stderr));
    assert!(text.contains("mesh levels: "), "{text}");
    // The triangles column (second to last) of a path's row.
    let tris = |name: &str| -> u64 {
        let line = text
            .lines()
            .find(|l| l.split_whitespace().nth(1) == Some(name))
            .unwrap_or_else(|| panic!("{name} missing:\n{text}"));
        let cols: Vec<&str> = line.split_whitespace().collect();
        cols[cols.len() - 2].parse().unwrap_or_else(|_| panic!("no triangle count in {line}"))
    };
    for path in ["book", "palette-vertex", "palette-compute"] {
        let (full, lod) = (tris(path), tris(&format!("{path}+lod")));
        assert!(lod < full && lod > 0, "{path}: {lod} triangles with LODs, {full} without\n{text}");
    }
}
