//! `ch15_crowd --models A,B,C`: a crowd of the mannequin, CesiumMan and the Woman sharing
//! the mannequin's clips (retargeted onto each), one GPU crowd and one instanced draw per
//! character type, renders headless on lavapipe with zero validation messages and draws
//! every character of every type where the CPU puts it.

use anim_crowd::atlas::BakeSettings;
use demos::mixed_crowd::mixed_types;
use demos::scenes::ch15_crowd::CrowdScene;
use demos::{CommonArgs, run_headless};

mod common;

const W: u32 = 320;
const H: u32 = 200;

fn asset(rel: &str) -> String {
    format!("{}/../../shared/assets/{rel}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn mixed_crowd_renders_clean_and_where_the_cpu_puts_it() {
    let models = format!("default,{},{}", asset("CesiumMan/CesiumMan.glb"), asset("Woman/Woman.gltf"));
    let args: Vec<String> = [
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
        "--count",
        "90",
        "--models",
        &models,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let args = <CommonArgs as clap::Parser>::parse_from(args);
    let mut run = run_headless::<CrowdScene>(&args).expect("the mixed crowd runs");
    assert!(run.context.validation_enabled());
    assert_eq!(run.context.validation_count(), 0, "{}", run.context.validation_messages().join("\n"));

    let scene = &run.app.scene;
    let names: Vec<&str> = scene.others.iter().map(|g| g.name.as_str()).collect();
    assert_eq!(names, ["CesiumMan", "Woman"]);
    let counts: Vec<usize> =
        std::iter::once(&scene.crowd).chain(scene.others.iter().map(|g| &g.crowd)).map(|c| c.len()).collect();
    assert_eq!(counts, [30, 30, 30], "the field is shared out between the types");
    assert!(scene.stats_line().contains("90 characters of 3 types"), "{}", scene.stats_line());
    assert_eq!(run.app.frame.crowds.len(), 3, "one instanced crowd draw per character type");

    // Every type drawn as the CPU poses it from the atlas the demo baked (baked again here
    // the same way), skinned and placed.
    let types = mixed_types(None, &models.split(',').map(str::to_owned).collect::<Vec<_>>(), 60.0).unwrap();
    let settings = BakeSettings {
        rate: args.crowd.rate,
        layout: args.crowd.layout().unwrap(),
        format: args.crowd.texel_format().unwrap(),
    };
    run.renderer.set_crowd_instances(scene.id, scene.crowd.instances()).unwrap();
    for g in &scene.others {
        run.renderer.set_crowd_instances(g.id, g.crowd.instances()).unwrap();
    }
    let drawn = common::drawn_crowds(&run.context, &mut run.renderer, &run.app.frame, W, H);
    let crowds = std::iter::once(&scene.crowd).chain(scene.others.iter().map(|g| &g.crowd));
    let mut triangles = Vec::new();
    for (t, crowd) in types.iter().zip(crowds) {
        let atlas = t.character.bake(&settings).unwrap();
        let tri = common::crowd_triangles(crowd, &atlas, t.character.mesh(), scene.method);
        assert!(!tri.is_empty(), "{} is drawn", t.character.character.name);
        triangles.extend(tri);
    }
    let predicted = common::silhouette(&run.app.frame.camera, W, H, &triangles);
    common::assert_matches("mixed crowd", &drawn, &predicted);
    assert_eq!(run.context.validation_count(), 0, "{}", run.context.validation_messages().join("\n"));
    let log = run.context.validation_log();
    drop(run);
    assert_eq!(log.count(), 0, "{}", log.messages().join("\n"));
}
