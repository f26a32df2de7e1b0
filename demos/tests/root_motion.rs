//! The viewer's root motion: the mannequin's in-place walk gets the travel its planted foot
//! implies, so under the accumulated root-motion transform the planted foot stays put; and
//! the viewer renders it headless with the camera following.

use anim_core::clip::TimePolicy;
use anim_core::clip::playback::{LoopMode, Playback};
use anim_core::pose::Pose;
use anim_math::{Transform, Vec3};
use anim_render_vk::{Context, ContextDesc, OFFSCREEN_FORMAT, Offscreen, Renderer};
use demos::app::HEADLESS_DT;
use demos::root_motion::{foot_slide_velocity, root_motion_clip};
use demos::scenes::viewer;
use demos::{App, Character, CommonArgs, Key, Scene};

#[test]
fn planted_foot_does_not_slide_in_the_world() {
    let ch = Character::mannequin();
    let walk = ch.find_clip("walk").expect("the mannequin walks");
    let v = foot_slide_velocity(&ch, &ch.clips[walk]).unwrap().expect("walk carries a contact curve");
    // The mannequin faces +Z: the planted foot slides back, so the travel is forwards.
    assert!(v.z > 0.3 && v.x.abs() < 1e-3, "{v:?}");
    let clip = root_motion_clip(&ch, walk).unwrap();
    let motion = clip.root_motion().expect("extracted");
    let contact = clip.curve_index("foot_contact_l").unwrap();
    let ankle = ch.skeleton.find("foot_l").unwrap();
    let mut p = Playback::new(clip.duration(), LoopMode::Repeat);
    let mut world = Transform::IDENTITY;
    let mut pose: Pose = ch.skeleton.rest_pose().clone();
    // Over three loops, track the world-space ankle through each planted window.
    let (mut planted_at, mut worst) = (None::<Vec3>, 0.0f32);
    let mut windows = 0;
    for _ in 0..(3.0 * clip.duration() / 0.01) as usize {
        let s = p.advance(0.01);
        world = world.combine(&motion.delta(&p, s.from, s.to));
        let t = p.time();
        pose.locals_mut().copy_from_slice(ch.skeleton.rest_pose().locals());
        clip.sample(t, TimePolicy::Clamp, &mut pose).unwrap();
        let a = world.transform_point(&pose.global(&ch.skeleton, ankle).unwrap().translation);
        // Stay clear of the window's edges, where the step curve flips.
        let c = |dt: f32| clip.sample_curve(contact, t + dt, TimePolicy::Wrap).unwrap();
        if c(0.0) >= 0.5 && c(-0.03) >= 0.5 && c(0.03) >= 0.5 {
            match planted_at {
                None => {
                    planted_at = Some(a);
                    windows += 1;
                }
                Some(at) => worst = worst.max(Vec3::new(a.x - at.x, 0.0, a.z - at.z).norm()),
            }
        } else {
            planted_at = None;
        }
    }
    assert!(windows >= 3, "{windows} planted windows");
    assert!(worst < 0.01, "the planted ankle slid {worst} m");
    // Three loops travel three cycles' worth.
    assert!((world.translation - motion.cycle().translation * 3.0).norm() < 1e-3);
}

#[test]
fn viewer_walks_with_root_motion_headless() {
    let ctx = Context::new(&ContextDesc { validation: true, window: None }).unwrap();
    let mut renderer = Renderer::new(&ctx, OFFSCREEN_FORMAT).unwrap();
    let (w, h) = (320, 200);
    let mut target = Offscreen::new(&ctx, w, h).unwrap();
    let args = CommonArgs::headless(1, w, h);
    let mut app = App::<viewer::Viewer>::new(&mut renderer, &args).unwrap();
    let walk = app.scene.stage.character.find_clip("walk").unwrap();
    app.scene.clip = Some(walk);
    app.scene.key(Key::Char('o'));
    let frames = 90;
    for i in 0..frames {
        app.step(&mut renderer, if i == 0 { 0.0 } else { HEADLESS_DT }).unwrap();
        target.render(&mut renderer, &app.frame).unwrap();
    }
    let rm = app.scene.root_motion.as_ref().expect("root motion on");
    // The character travelled forwards by the walk's speed for the time played, and the
    // camera follows it.
    let played = (frames - 1) as f32 * HEADLESS_DT;
    let speed = rm.clip.root_motion().unwrap().cycle().translation.z / rm.clip.duration();
    assert!((rm.world.translation.z - speed * played).abs() < 0.02, "{:?}", rm.world.translation);
    assert!((app.frame.camera.target.z - rm.world.translation.z).abs() < 1.0);
    let img = target.image().unwrap();
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("viewer_root_motion.png");
    img.save_png(&out).unwrap();
    assert_eq!(ctx.validation_count(), 0, "{}", ctx.validation_messages().join("\n"));
}
