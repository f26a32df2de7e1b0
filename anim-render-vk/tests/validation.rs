//! The validation plumbing itself, through the public API: a renderer, target and skinner
//! leave nothing alive at teardown, objects of different contexts are not mixed, and a
//! context without validation counts nothing. (That a deliberate synchronization hazard and
//! a leaked object are reported, so that a zero count means something, is checked by unit
//! tests inside the crate, which can reach raw Vulkan.)

mod common;

use anim_render_vk::{Context, ContextDesc};

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
fn without_validation_nothing_is_counted() {
    let ctx = Context::new(&ContextDesc::headless(false)).unwrap();
    assert!(!ctx.validation_enabled());
    assert_eq!(ctx.validation_count(), 0);
    assert!(!ctx.device_name().is_empty());
}

#[test]
fn objects_of_another_context_are_rejected() {
    let a = common::context();
    let b = common::context();
    let mut r = anim_render_vk::Renderer::new(&a, anim_render_vk::OFFSCREEN_FORMAT).unwrap();
    let mut t = anim_render_vk::Offscreen::new(&b, 16, 16).unwrap();
    let e = t.render(&mut r, &anim_render_vk::FrameData::default()).unwrap_err().to_string();
    assert!(e.contains("different contexts"), "{e}");
    common::assert_clean(&a);
    common::assert_clean(&b);
}
