//! The crossfade controller's timeline against hand-computed weights.

use anim_core::blend::crossfade::{CrossFadeController, CrossFadeError};
use anim_core::clip::{Clip, Interpolation, JointTracks, TimePolicy, Track};
use anim_core::pose::{JointDesc, Skeleton};
use anim_math::{Transform, Vec3};
use std::sync::Arc;

fn skeleton() -> Skeleton {
    Skeleton::new(vec![JointDesc::new("root", None, Transform::IDENTITY)]).unwrap()
}

/// A clip whose root translation is `from + t·rate` over `[0, length]`.
fn ramp(name: &str, from: Vec3, rate: Vec3, length: f32) -> Arc<Clip> {
    let mut jt = JointTracks::new(0);
    jt.translation =
        Some(Track::new(Interpolation::Linear, vec![0.0, length], vec![from, from + rate * length]).unwrap());
    Arc::new(Clip::new(name, vec![jt], vec![]).unwrap())
}

fn pos(c: &CrossFadeController) -> Vec3 {
    c.pose().locals()[0].translation
}

fn near(a: Vec3, b: Vec3) -> bool {
    (a - b).norm() < 1e-5
}

#[test]
fn timeline_matches_hand_computed_weights() {
    // A: y = t; B: x = t; C: z = 5 for one second.
    let a = ramp("a", Vec3::zeros(), Vec3::y(), 10.0);
    let b = ramp("b", Vec3::zeros(), Vec3::x(), 10.0);
    let c = ramp("c", Vec3::new(0.0, 0.0, 5.0), Vec3::zeros(), 1.0);
    let mut f = CrossFadeController::new(&skeleton(), 2);
    f.update(0.25).unwrap(); // nothing plays yet: rest pose
    assert!(near(pos(&f), Vec3::zeros()));
    f.play(a.clone(), TimePolicy::Clamp).unwrap();
    f.update(0.25).unwrap();
    assert!(near(pos(&f), Vec3::new(0.0, 0.25, 0.0)));

    assert!(f.fade_to(b.clone(), 1.0, TimePolicy::Clamp).unwrap());
    assert!(!f.fade_to(b.clone(), 1.0, TimePolicy::Clamp).unwrap(), "already the last target");
    // tA = 0.5, tB = 0.25, wB = 0.25: mix((0, .5, 0), (.25, 0, 0), .25)
    f.update(0.25).unwrap();
    assert!(near(pos(&f), Vec3::new(0.0625, 0.375, 0.0)), "{}", pos(&f));
    // tA = 0.75, tB = 0.5, wB = 0.5
    f.update(0.25).unwrap();
    assert!(near(pos(&f), Vec3::new(0.25, 0.375, 0.0)), "{}", pos(&f));

    assert!(f.fade_to(c.clone(), 0.5, TimePolicy::Clamp).unwrap());
    // tA = 1, tB = .75 (wB = .75), tC = .25 (wC = .5):
    // mix(mix((0,1,0), (.75,0,0), .75), (0,0,5), .5) = mix((.5625,.25,0), (0,0,5), .5)
    f.update(0.25).unwrap();
    assert!(near(pos(&f), Vec3::new(0.28125, 0.125, 2.5)), "{}", pos(&f));
    let w: Vec<f32> = f.targets().map(|t| t.weight).collect();
    assert_eq!(w, vec![0.75, 0.5]);
    // Both fades reach weight 1 now; C, the last, hides everything.
    f.update(0.25).unwrap();
    assert!(near(pos(&f), Vec3::new(0.0, 0.0, 5.0)), "{}", pos(&f));
    assert!(Arc::ptr_eq(f.current_clip().unwrap(), &a));
    // The next update promotes C (keeping its play time 0.5) and drops B with it.
    f.update(0.25).unwrap();
    assert!(Arc::ptr_eq(f.current_clip().unwrap(), &c));
    assert!(!f.is_fading());
    assert_eq!(f.current_time(), Some(0.75));
    assert!(near(pos(&f), Vec3::new(0.0, 0.0, 5.0)));

    // The current clip with nothing queued is ignored; a zero-length fade is a cut.
    assert!(!f.fade_to(c.clone(), 0.3, TimePolicy::Clamp).unwrap());
    assert!(f.fade_to(a.clone(), 0.0, TimePolicy::Clamp).unwrap());
    f.update(0.25).unwrap();
    assert!(near(pos(&f), Vec3::new(0.0, 0.25, 0.0)), "{}", pos(&f));
    f.update(0.25).unwrap();
    assert!(Arc::ptr_eq(f.current_clip().unwrap(), &a));
    assert!(near(pos(&f), Vec3::new(0.0, 0.5, 0.0)));

    // `play` clears fades and restarts from the clip's start.
    f.fade_to(b.clone(), 1.0, TimePolicy::Clamp).unwrap();
    f.play(b.clone(), TimePolicy::Clamp).unwrap();
    assert!(!f.is_fading());
    f.update(0.5).unwrap();
    assert!(near(pos(&f), Vec3::new(0.5, 0.0, 0.0)));
}

#[test]
fn looping_and_clamped_clips() {
    let a = ramp("a", Vec3::zeros(), Vec3::x(), 2.0);
    let mut f = CrossFadeController::new(&skeleton(), 1);
    f.play(a.clone(), TimePolicy::Wrap).unwrap();
    f.update(1.5).unwrap();
    f.update(1.0).unwrap(); // 2.5 wraps to 0.5
    assert!(near(pos(&f), Vec3::new(0.5, 0.0, 0.0)));
    assert_eq!(f.current_time(), Some(0.5));
    f.play(a, TimePolicy::Clamp).unwrap();
    f.update(1.5).unwrap();
    f.update(1.0).unwrap(); // held at the end
    assert!(near(pos(&f), Vec3::new(2.0, 0.0, 0.0)));
}

#[test]
fn overflowing_the_pool_still_works_and_errors_are_typed() {
    let clips: Vec<_> = (0..5).map(|i| ramp("c", Vec3::new(i as f32, 0.0, 0.0), Vec3::zeros(), 1.0)).collect();
    let mut f = CrossFadeController::new(&skeleton(), 1);
    // With no current clip, fade_to plays.
    f.fade_to(clips[0].clone(), 1.0, TimePolicy::Wrap).unwrap();
    for c in &clips[1..] {
        f.fade_to(c.clone(), 1.0, TimePolicy::Wrap).unwrap();
    }
    assert_eq!(f.targets().len(), 4);
    for _ in 0..5 {
        f.update(0.25).unwrap();
    }
    assert!(Arc::ptr_eq(f.current_clip().unwrap(), &clips[4]));
    assert!(near(pos(&f), Vec3::new(4.0, 0.0, 0.0)));
    assert!(matches!(f.update(f32::NAN), Err(CrossFadeError::NonFiniteDelta(_))));
    assert!(matches!(f.fade_to(clips[1].clone(), -1.0, TimePolicy::Wrap), Err(CrossFadeError::BadDuration(_))));
    let mut jt = JointTracks::new(3);
    jt.translation = Some(Track::constant(Vec3::zeros()));
    let bad = Arc::new(Clip::new("bad", vec![jt], vec![]).unwrap());
    assert!(matches!(f.play(bad, TimePolicy::Wrap), Err(CrossFadeError::Clip(_))));
}

/// The crossfade blends through the layered job: after each update its pose equals the
/// general N-layer blend of the current clip's pose (weight `1 − w`) and the target's
/// (weight `w`), within 1e-6.
#[test]
fn crossfade_equals_the_layered_job() {
    use anim_core::blend::layered::{Layer, blend_layers};
    let s = skeleton();
    let a = ramp("a", Vec3::new(0.0, 1.0, 0.0), Vec3::new(0.0, 1.0, 0.3), 2.0);
    let b = ramp("b", Vec3::new(4.0, 0.0, -1.0), Vec3::new(1.0, 0.0, 0.0), 2.0);
    let mut c = CrossFadeController::new(&s, 2);
    c.play(a.clone(), TimePolicy::Wrap).unwrap();
    c.fade_to(b.clone(), 0.5, TimePolicy::Wrap).unwrap();
    let (mut pa, mut pb, mut out) = (s.rest_pose().clone(), s.rest_pose().clone(), s.rest_pose().clone());
    let zero = s.rest_pose().clone();
    let mut t = 0.0;
    for _ in 0..5 {
        c.update(0.1).unwrap();
        t += 0.1;
        let w = c.targets().next().map_or(1.0, |f| f.weight);
        a.sample(t, TimePolicy::Wrap, &mut pa).unwrap();
        b.sample(t, TimePolicy::Wrap, &mut pb).unwrap();
        let layers = [Layer::new(&pa, 1.0 - w), Layer::new(&pb, w), Layer::new(&zero, 0.0)];
        blend_layers(&mut out, &s, &layers, &[], 0.1).unwrap();
        let (x, y) = (&c.pose().locals()[0], &out.locals()[0]);
        assert!((x.translation - y.translation).amax() < 1e-6, "t {t}: {x:?} {y:?}");
        assert!((x.rotation.coords - y.rotation.coords).amax() < 1e-6);
    }
}

/// A negative step runs a fade back towards its source: half-way in, a step back of the
/// same length returns to the source's pose (both clips are constant, so only the weight
/// moves), further steps back stay there (weight 0, the fade still queued), and forward
/// steps finish it as usual.
#[test]
fn negative_steps_run_a_fade_backwards_and_stop_at_its_source() {
    let a = ramp("a", Vec3::zeros(), Vec3::zeros(), 1.0);
    let b = ramp("b", Vec3::new(4.0, 0.0, 0.0), Vec3::zeros(), 1.0);
    let mut f = CrossFadeController::new(&skeleton(), 2);
    f.play(a, TimePolicy::Wrap).unwrap();
    f.fade_to(b, 0.5, TimePolicy::Wrap).unwrap();
    f.update(0.25).unwrap();
    assert!(near(pos(&f), Vec3::new(2.0, 0.0, 0.0)));
    f.update(-0.125).unwrap();
    assert!(near(pos(&f), Vec3::new(1.0, 0.0, 0.0)));
    assert_eq!(f.targets().next().map(|t| t.weight), Some(0.25));
    f.update(-0.5).unwrap();
    assert!(near(pos(&f), Vec3::zeros()), "{:?}", pos(&f));
    assert_eq!(f.targets().next().map(|t| (t.weight, t.elapsed)), Some((0.0, 0.0)));
    f.update(0.0).unwrap();
    assert!(near(pos(&f), Vec3::zeros()));
    f.update(0.5).unwrap();
    assert!(near(pos(&f), Vec3::new(4.0, 0.0, 0.0)));
    f.update(0.1).unwrap();
    assert!(!f.is_fading(), "the finished fade became the current clip");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    /// Any sequence of steps, positive, negative or zero, with fades started along the way,
    /// keeps every fade weight in [0, 1] and the pose finite.
    #[test]
    fn any_steps_keep_weights_in_range_and_poses_finite(
        steps in proptest::collection::vec((-1.0f32..1.0, proptest::bool::ANY, 0u8..3, 0.0f32..0.7), 1..60)
    ) {
        let clips = [
            ramp("a", Vec3::zeros(), Vec3::y(), 1.3),
            ramp("b", Vec3::new(1.0, 0.0, 0.0), Vec3::x(), 0.4),
            ramp("c", Vec3::new(0.0, 0.0, 5.0), Vec3::new(0.0, -3.0, 1.0), 2.0),
        ];
        let mut f = CrossFadeController::new(&skeleton(), 2);
        f.play(clips[0].clone(), TimePolicy::Wrap).unwrap();
        for (dt, fade, which, duration) in steps {
            let dt = if dt.abs() < 0.05 { 0.0 } else { dt };
            if fade {
                let policy = if which == 1 { TimePolicy::Clamp } else { TimePolicy::Wrap };
                f.fade_to(clips[which as usize].clone(), duration, policy).unwrap();
            }
            f.update(dt).unwrap();
            for t in f.targets() {
                proptest::prop_assert!((0.0..=1.0).contains(&t.weight), "weight {}", t.weight);
                proptest::prop_assert!(t.elapsed >= 0.0);
            }
            proptest::prop_assert!(f.pose().locals().iter().all(Transform::is_finite));
            proptest::prop_assert!(f.root_motion_delta().is_finite());
        }
    }
}
