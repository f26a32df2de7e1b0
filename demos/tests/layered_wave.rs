//! ch12_blend's layered wave: with the wave fully faded in, the upper body is the wave
//! clip and the lower body the walk/run blend, joint for joint; rendered headless.

use anim_core::clip::TimePolicy;
use anim_render_vk::{Context, ContextDesc, OFFSCREEN_FORMAT, Offscreen, Renderer};
use demos::app::HEADLESS_DT;
use demos::scenes::ch12_blend::{self, BlendDemo, UPPER_BODY_ROOT, WAVE_FADE};
use demos::{App, CommonArgs, Key, Scene};

#[test]
fn wave_layer_replaces_the_upper_body_only() {
    let ctx = Context::new(&ContextDesc { validation: true, window: None }).unwrap();
    let mut renderer = Renderer::new(&ctx, OFFSCREEN_FORMAT).unwrap();
    let (w, h) = (320, 200);
    let mut target = Offscreen::new(&ctx, w, h).unwrap();
    let mut app = App::<BlendDemo>::new(&mut renderer, &CommonArgs::headless(1, w, h)).unwrap();
    app.scene.key(Key::Char('w'));
    let frames = (WAVE_FADE / HEADLESS_DT) as usize + 20;
    for i in 0..frames {
        app.step(&mut renderer, if i == 0 { 0.0 } else { HEADLESS_DT }).unwrap();
        target.render(&mut renderer, &app.frame).unwrap();
    }
    let s = &app.scene;
    assert_eq!(s.wave_weight, 1.0);
    // The independent path: locomotion by sample_blend, wave by sampling the clip.
    let ch = &s.stage.character;
    let rest = ch.skeleton.rest_pose().clone();
    let (mut a, mut b, mut loco) = (rest.clone(), rest.clone(), rest.clone());
    ch12_blend::sample_blend(ch, s.clip_a, s.clip_b, s.phase, s.weight, &mut a, &mut b, &mut loco).unwrap();
    let mut wave = rest.clone();
    ch12_blend::wave_clip(&ch.skeleton).unwrap().sample(s.wave_time, TimePolicy::Wrap, &mut wave).unwrap();
    let upper = ch.skeleton.subtree(ch.skeleton.find(UPPER_BODY_ROOT).unwrap());
    let got = s.stage.posed.pose.locals();
    for (j, got) in got.iter().enumerate() {
        let want = if upper.contains(&j) { &wave.locals()[j] } else { &loco.locals()[j] };
        assert!((got.translation - want.translation).norm() < 1e-5, "joint {j}");
        assert!(got.rotation.angle_to(&want.rotation) < 1e-4, "joint {j}");
    }
    // The right hand is raised above the head.
    let hand = s.stage.posed.pose.global(&ch.skeleton, ch.skeleton.find("hand_r").unwrap()).unwrap();
    let head = s.stage.posed.pose.global(&ch.skeleton, ch.skeleton.find("head").unwrap()).unwrap();
    assert!(hand.translation.y > head.translation.y, "hand {:?} head {:?}", hand.translation, head.translation);
    let img = target.image().unwrap();
    img.save_png(&std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("ch12_blend_wave.png")).unwrap();
    assert_eq!(ctx.validation_count(), 0, "{}", ctx.validation_messages().join("\n"));
}
