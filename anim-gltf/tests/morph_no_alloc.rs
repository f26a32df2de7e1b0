//! Steady frames of morph + skin allocate nothing: after one warm-up call (which sizes the
//! scratch buffers), sampling the weights and morphing and skinning the mannequin's
//! breathing idle performs no heap allocation. Counted with a global allocator; this file
//! holds one test so that no other test allocates meanwhile.

use anim_core::clip::TimePolicy;

use anim_core::skin::SkinMethod;
use anim_gltf::SkinScratch;
use anim_math::{Mat4, Vec3};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator, only counting calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn steady_morph_and_skin_frames_allocate_nothing() {
    let model = anim_gltf::mannequin_model();
    let idle = model.find_clip("idle").unwrap();
    let n = model.meshes[0].data.vertex_count();
    let mut pose = model.skeleton.rest_pose().clone();
    let mut world = vec![Mat4::identity(); model.skeleton.len()];
    let (mut positions, mut normals) = (vec![Vec3::zeros(); n], vec![Vec3::zeros(); n]);
    let mut weights = vec![0.0f32; 2];
    let mut scratch = SkinScratch::new();
    let mut frame = |t: f32, scratch: &mut SkinScratch| {
        // (`Model::sample_pose` is not used: its `Pose::clone_from` allocates.)
        pose.locals_mut().copy_from_slice(model.skeleton.rest_pose().locals());
        model.clips[idle].sample(t, TimePolicy::Wrap, &mut pose).unwrap();
        model.world_matrices(&pose, &mut world).unwrap();
        model.sample_weights(idle, 0, t, TimePolicy::Wrap, &mut weights).unwrap();
        model
            .skin_instance_weighted(
                0,
                &world,
                Some(&weights),
                SkinMethod::Lbs,
                scratch,
                &mut positions,
                Some(&mut normals),
            )
            .unwrap();
        positions[0]
    };
    frame(1.0, &mut scratch);
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    let mut moved = 0.0f32;
    let mut last = Vec3::zeros();
    for k in 0..40 {
        let p = frame(0.05 * k as f32, &mut scratch);
        moved = moved.max((p - last).norm());
        last = p;
    }
    assert_eq!(ALLOCATIONS.load(Ordering::Relaxed) - before, 0);
    assert!(moved > 0.0);
}
