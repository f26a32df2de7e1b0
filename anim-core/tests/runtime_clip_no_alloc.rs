//! Runtime-clip playback allocates nothing in steady frames: forward playback across the
//! loop's wrap (which rescans from the first key), seeks, and the `Pose` convenience.
//! A counting global allocator with a thread-local switch, one `#[test]` in this binary.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

use anim_core::clip::runtime::RuntimeClip;

use anim_core::clip::SoaSampler;
use anim_core::clip::{Clip, Interpolation, JointTracks, TimePolicy, Track};
use anim_core::offline::JointRadii;
use anim_core::pose::soa::SoaPose;
use anim_core::pose::{JointDesc, Skeleton};
use anim_math::{Quat, Transform, Vec3};

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
}

// SAFETY: every call is forwarded unchanged to the system allocator; counting only
// touches an atomic and a const-initialized thread-local.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.try_with(Cell::get).unwrap_or(false) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: forwarded with the caller's layout.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded with the caller's pointer and layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if COUNTING.try_with(Cell::get).unwrap_or(false) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: forwarded with the caller's arguments.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn counted(f: impl FnOnce()) -> usize {
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    COUNTING.with(|c| c.set(true));
    f();
    COUNTING.with(|c| c.set(false));
    ALLOCATIONS.load(Ordering::Relaxed) - before
}

#[test]
fn steady_frames_allocate_nothing() {
    let joints: Vec<JointDesc> = (0..9usize)
        .map(|i| {
            JointDesc::new(format!("j{i}"), i.checked_sub(1), Transform::from_translation(Vec3::new(0.0, 0.5, 0.0)))
        })
        .collect();
    let skeleton = Skeleton::new(joints).unwrap();
    let times: Vec<f32> = (0..31).map(|k| k as f32 / 30.0).collect();
    let tracks = (0..9)
        .map(|j| {
            let mut jt = JointTracks::new(j);
            let f = j as f32 + 1.0;
            let rot = times.iter().map(|t| Quat::from_euler_angles((t * f).sin(), 0.3 * t, 0.0).into_inner()).collect();
            jt.rotation = Some(Track::new(Interpolation::Linear, times.clone(), rot).unwrap());
            let tr = times.iter().map(|t| Vec3::new((t * 3.0 * f).cos(), 0.0, 0.0)).collect();
            jt.translation = Some(Track::new(Interpolation::Step, times.clone(), tr).unwrap());
            jt
        })
        .collect();
    let clip = Clip::new("c", tracks, vec![]).unwrap();
    let rc = RuntimeClip::compile(&clip, &skeleton, &JointRadii::from_skeleton(&skeleton), 0.001).unwrap();
    let mut ctx = rc.new_context();
    let mut soa = SoaPose::identity(9);
    let mut pose = skeleton.rest_pose().clone();
    // Warm-up: one pass.
    rc.sample_soa(&mut ctx, 0.5, TimePolicy::Clamp, &mut soa).unwrap();
    rc.sample_pose(&mut ctx, 0.5, TimePolicy::Wrap, &mut pose).unwrap();
    let n = counted(|| {
        let mut t = 0.0f32;
        for i in 0..600 {
            t = TimePolicy::Wrap.apply(t + 1.0 / 60.0, rc.duration());
            rc.sample_soa(&mut ctx, t, TimePolicy::Clamp, &mut soa).unwrap();
            if i % 7 == 0 {
                rc.sample_soa(&mut ctx, (i % 13) as f32 * 0.07, TimePolicy::Clamp, &mut soa).unwrap();
            }
            rc.sample_pose(&mut ctx, t, TimePolicy::Wrap, &mut pose).unwrap();
        }
    });
    assert_eq!(n, 0, "allocations in steady frames");
    // The counter works: an allocation is seen.
    assert_eq!(counted(|| drop(std::hint::black_box(vec![1u8; 16]))), 1);
}
