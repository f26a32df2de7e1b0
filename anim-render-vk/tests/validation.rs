//! The validation plumbing itself: a deliberate synchronization hazard is reported and
//! counted (so a zero count in the other tests means something), and a context without
//! validation counts nothing.

mod common;

use anim_render_vk::resources::{Buffer, copy_buffer};
use anim_render_vk::{Context, ContextDesc};
use ash::vk;
use gpu_allocator::MemoryLocation;

#[test]
fn synchronization_hazard_is_counted() {
    let ctx = common::context();
    let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
    let a = Buffer::new(&ctx, 256, usage, MemoryLocation::GpuOnly, "a").unwrap();
    let b = Buffer::new(&ctx, 256, usage, MemoryLocation::GpuOnly, "b").unwrap();
    assert_eq!(ctx.validation_count(), 0);
    // Two copies writing `b` with no barrier between them: a write-after-write hazard.
    ctx.run_once(|cmd| {
        copy_buffer(ctx.device(), cmd, &a, &b, 256);
        copy_buffer(ctx.device(), cmd, &a, &b, 256);
    })
    .unwrap();
    assert!(ctx.validation_count() > 0, "synchronization validation did not report the hazard");
    let messages = ctx.validation_messages().join("\n");
    assert!(messages.contains("SYNC-HAZARD-WRITE-AFTER-WRITE"), "{messages}");
}

#[test]
fn teardown_leaves_no_object_alive() {
    let ctx = common::context();
    let log = ctx.validation_log();
    {
        let mut r = anim_render_vk::Renderer::new(&ctx, anim_render_vk::OFFSCREEN_FORMAT).unwrap();
        let mut t = anim_render_vk::Offscreen::new(&ctx, 32, 32).unwrap();
        let id = r.add_mesh(&common::quad(1.0), &anim_render_vk::Coloring::Uniform([1.0; 3])).unwrap();
        let mut f = anim_render_vk::FrameData::default();
        f.add_static(id, anim_math::Mat4::identity(), [1.0; 3]);
        anim_render_vk::lines::grid(&mut f, 2, 1.0, 0.0);
        t.render(&mut r, &f).unwrap();
        let _skinner = anim_render_vk::GpuSkinner::new(&ctx).unwrap();
    }
    drop(ctx);
    // vkDestroyDevice reports every object still alive; nothing was.
    assert_eq!(log.count(), 0, "{}", log.messages().join("\n"));
}

#[test]
fn a_leaked_object_is_reported_at_teardown() {
    let ctx = common::context();
    let log = ctx.validation_log();
    let info = vk::BufferCreateInfo::default().size(64).usage(vk::BufferUsageFlags::STORAGE_BUFFER);
    // SAFETY: a valid device; the buffer is leaked on purpose.
    let _leaked = unsafe { ctx.device().create_buffer(&info, None) }.unwrap();
    assert_eq!(log.count(), 0);
    drop(ctx);
    assert!(log.count() > 0, "the leak at vkDestroyDevice went unreported");
}

#[test]
fn without_validation_nothing_is_counted() {
    let ctx = Context::new(&ContextDesc { validation: false, window: None }).unwrap();
    assert!(!ctx.validation_enabled());
    assert_eq!(ctx.validation_count(), 0);
    assert!(!ctx.device_name().is_empty());
}
