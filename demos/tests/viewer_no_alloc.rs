//! The viewer's frame update allocates nothing once warm, with everything the tool adds
//! turned on: the timeline's playback looping backwards in ping-pong, a morph weight held
//! over the clip's, a joint selected, the normals and bounds overlays, on every skinning
//! backend and method (the frame's lists keep their capacity between frames).

use anim_core::skin::SkinMethod;
use anim_render_vk::{Context, ContextDesc, OFFSCREEN_FORMAT, Renderer};
use anim_testkit::alloc::{Counting, counted};
use demos::scenes::viewer::{Looping, Viewer};
use demos::{App, Backend, CommonArgs, Scene};

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn the_viewer_update_allocates_nothing_per_frame() {
    let ctx = Context::new(&ContextDesc { validation: false, window: None }).unwrap();
    let mut renderer = Renderer::new(&ctx, OFFSCREEN_FORMAT).unwrap();
    let mut app = App::<Viewer>::new(&mut renderer, &CommonArgs::headless(1, 64, 48)).unwrap();
    let v = &mut app.scene;
    v.select_clip(v.stage.character.find_clip("walk"));
    v.set_looping(Looping::PingPong);
    v.playback.speed = -1.5;
    v.set_morph(0, 1, Some(0.75));
    v.select_joint(Some(3));
    v.show_normals = true;
    v.show_bounds = true;
    for backend in Backend::ALL {
        for method in SkinMethod::ALL {
            app.scene.stage.backend = backend;
            app.scene.stage.method = method;
            let camera = app.orbit.camera();
            let (allocations, bytes) = counted(3, 60, |_| {
                app.frame.clear();
                app.frame.camera = camera;
                app.scene.update(1.0 / 30.0, &mut app.frame).unwrap();
            });
            assert_eq!(
                allocations, 0,
                "{backend:?} {method:?}: {allocations} allocations ({bytes} bytes) in 60 frames"
            );
            assert_eq!(app.scene.stage.posed.weights[0][1], 0.75);
        }
    }
}

/// The same with the mannequin's locomotion graph playing in place of the clip: parameters
/// moving every frame, a jump and a punch fired on the way, foot IK on the floor, root
/// motion carrying the character (each frame's events and the timeline's recent events
/// keep their buffers).
#[test]
fn the_viewer_playing_a_graph_allocates_nothing_per_frame() {
    let file = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("viewer_no_alloc-locomotion.json");
    std::fs::write(&file, anim_mannequin::LOCOMOTION_GRAPH).unwrap();
    let ctx = Context::new(&ContextDesc { validation: false, window: None }).unwrap();
    let mut renderer = Renderer::new(&ctx, OFFSCREEN_FORMAT).unwrap();
    let mut args = CommonArgs::headless(1, 64, 48);
    args.graph = Some(file);
    let mut app = App::<Viewer>::new(&mut renderer, &args).unwrap();
    app.scene.toggle_root_motion();
    app.scene.show_normals = true;
    let g = app.scene.graph.as_ref().expect("--graph plays the graph");
    let (move_z, jump, punch) = (
        g.graph.float_param("move_z").unwrap(),
        g.graph.trigger_param("jump").unwrap(),
        g.graph.trigger_param("punch").unwrap(),
    );
    for backend in Backend::ALL {
        app.scene.stage.backend = backend;
        let camera = app.orbit.camera();
        let (allocations, bytes) = counted(60, 90, |k| {
            let g = app.scene.graph.as_mut().unwrap();
            g.instance.set_float(move_z, 2.0 * (k as f32 * 0.05).sin()).unwrap();
            if k % 45 == 10 {
                g.instance.set_trigger(jump).unwrap();
            }
            if k % 45 == 30 {
                g.instance.set_trigger(punch).unwrap();
            }
            app.frame.clear();
            app.frame.camera = camera;
            app.scene.update(1.0 / 30.0, &mut app.frame).unwrap();
        });
        assert_eq!(allocations, 0, "{backend:?}: {allocations} allocations ({bytes} bytes) in 90 frames");
    }
    let g = app.scene.graph.as_ref().unwrap();
    assert!(g.recent.len() == demos::scenes::viewer::RECENT_EVENTS, "the recent events filled up: {}", g.recent.len());
}
