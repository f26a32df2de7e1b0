//! Steady frames of the issue-12 features allocate nothing: playback, event queries,
//! root-motion deltas, the layered blend and a crossfade with root motion.

use anim_core::blend::crossfade::CrossFadeController;
use anim_core::blend::layered::{AdditiveLayer, Layer, blend_layers};
use anim_core::clip::events::{ClipEvent, crossed_into};
use anim_core::clip::playback::{LoopMode, Playback};
use anim_core::clip::{Clip, Interpolation, JointTracks, TimePolicy, Track};
use anim_core::offline::root_motion::{RootMotionSettings, extract};
use anim_core::pose::{JointDesc, Skeleton};
use anim_math::{Transform, Vec3};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;

static ALLOCS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator unchanged, only counting calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn walk(travel: f32) -> Clip {
    let mut jt = JointTracks::new(0);
    jt.translation = Some(
        Track::new(Interpolation::Linear, vec![0.0, 0.5, 1.0], vec![Vec3::zeros(), Vec3::y(), Vec3::z() * travel])
            .unwrap(),
    );
    Clip::new("walk", vec![jt], vec![])
        .unwrap()
        .with_events(vec![ClipEvent::new("a", 0.1), ClipEvent::new("b", 0.6)])
        .unwrap()
}

#[test]
fn steady_frames_allocate_nothing() {
    let s = Skeleton::new(vec![
        JointDesc::new("hips", None, Transform::IDENTITY),
        JointDesc::new("chest", Some(0), Transform::IDENTITY),
    ])
    .unwrap();
    let a = Arc::new(extract(&walk(1.0), &s, &RootMotionSettings::new(0)).unwrap());
    let b = Arc::new(extract(&walk(3.0), &s, &RootMotionSettings::new(0)).unwrap());
    let mut fader = CrossFadeController::new(&s, 2);
    fader.play(a.clone(), TimePolicy::Wrap).unwrap();
    fader.fade_to(b.clone(), 1.0, TimePolicy::Wrap).unwrap();
    let mut p = Playback::new(a.duration(), LoopMode::PingPong).with_speed(-1.3);
    let mut fired = Vec::with_capacity(64);
    let pose_a = s.rest_pose().clone();
    let mut pose_b = s.rest_pose().clone();
    pose_b.locals_mut()[1].translation = Vec3::x();
    let mask = [0.0, 1.0];
    let mut out = s.rest_pose().clone();
    let motion = a.root_motion().unwrap();
    let mut world = Transform::IDENTITY;
    let before = ALLOCS.load(Ordering::Relaxed);
    for _ in 0..200 {
        let step = p.advance(1.0 / 30.0);
        crossed_into(a.events(), &p, step.from, step.to, &mut fired);
        world = world.combine(&motion.delta(&p, step.from, step.to));
        fader.update(1.0 / 30.0).unwrap();
        world = world.combine(fader.root_motion_delta());
        fader.current_events(&mut fired);
        let layers = [Layer::new(&pose_a, 1.0), Layer::new(&pose_b, 0.5).with_mask(&mask)];
        let add = [AdditiveLayer::new(&pose_b, &pose_a, 0.3)];
        blend_layers(&mut out, &s, &layers, &add, 0.1).unwrap();
    }
    let after = ALLOCS.load(Ordering::Relaxed);
    assert_eq!(after - before, 0, "allocations in steady frames");
    assert!(world.is_finite());
}
