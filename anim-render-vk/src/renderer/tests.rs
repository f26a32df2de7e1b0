//! The renderer's own tests: a lost device at submit, and a steady frame loop that reuses
//! its plan and alternates the frame slots.

use super::*;
use crate::context::ContextDesc;
use crate::frame::FrameData;
use crate::frame::SkinPath;
use crate::offscreen::{OFFSCREEN_FORMAT, Offscreen};
use anim_core::skin::{Influences, Palette};
use anim_math::{Mat4, Vec3};

/// A submission failing with `VK_ERROR_DEVICE_LOST` (injected: lavapipe cannot lose its
/// device) is a typed error from `Offscreen::render` and from an upload; the renderer is
/// left consistent (the slot's fence signalled again, nothing read back from the frame
/// that never ran), and renderer, target and context drop without a panic or a
/// validation message, teardown included.
#[test]
fn a_lost_device_at_submit_is_typed_and_everything_stays_droppable() {
    use crate::context::FAIL_NEXT_SUBMIT;
    let ctx = Context::new(&ContextDesc::headless(true)).unwrap();
    let log = ctx.validation_log();
    let mut r = Renderer::new(&ctx, OFFSCREEN_FORMAT).unwrap();
    let mut target = Offscreen::new(&ctx, 16, 16).unwrap();
    let mut frame = FrameData::default();
    crate::lines::grid(&mut frame, 2, 1.0, 0.0);
    target.render(&mut r, &frame).unwrap();
    FAIL_NEXT_SUBMIT.with(|f| f.set(Some(vk::Result::ERROR_DEVICE_LOST)));
    let e = target.render(&mut r, &frame).unwrap_err();
    assert!(matches!(e, RenderError::DeviceLost { call: "vkQueueSubmit2" }), "{e:?}");
    assert!(e.is_device_lost());
    // The slot that failed is waitable (its fence was signalled by an empty submission).
    r.wait_idle().unwrap();
    // (The injected loss left the device working: the renderer's state is consistent
    // enough to render again, with the frame stats of a frame that ran.)
    target.render(&mut r, &frame).unwrap();
    assert!(r.frame_stats().is_some_and(|s| s.instances == 0));
    // Uploads go through the same submission.
    FAIL_NEXT_SUBMIT.with(|f| f.set(Some(vk::Result::ERROR_DEVICE_LOST)));
    let e = r.add_mesh(
        &Mesh { positions: vec![Vec3::zeros(); 3], indices: vec![0, 1, 2], ..Mesh::default() },
        &Coloring::Uniform([1.0; 3]),
    );
    assert!(matches!(e, Err(RenderError::DeviceLost { .. })), "{e:?}");
    // Out of device memory at submit is typed too.
    FAIL_NEXT_SUBMIT.with(|f| f.set(Some(vk::Result::ERROR_OUT_OF_DEVICE_MEMORY)));
    let e = target.render(&mut r, &frame).unwrap_err();
    assert!(matches!(&e, RenderError::OutOfDeviceMemory { what } if what == "vkQueueSubmit2"), "{e:?}");
    drop(target);
    drop(r);
    drop(ctx);
    assert_eq!(log.count(), 0, "{}", log.messages().join("\n"));
}

/// A steady frame loop rebuilds the plan in place (no reallocation) and alternates the
/// frame slots, with every deformation kind in the frame and validation clean.
#[test]
fn steady_frames_reuse_the_plan_and_alternate_slots() {
    let ctx = Context::new(&ContextDesc::headless(true)).unwrap();
    let mut r = Renderer::new(&ctx, OFFSCREEN_FORMAT).unwrap();
    let mut target = Offscreen::new(&ctx, 32, 32).unwrap();
    let mesh = Mesh {
        positions: vec![Vec3::zeros(), Vec3::x(), Vec3::y()],
        influences: Some(Influences::new(1, vec![0; 3], vec![1.0; 3], 1).unwrap()),
        indices: vec![0, 1, 2],
        ..Mesh::default()
    };
    let id = r.add_mesh(&mesh, &Coloring::Uniform([1.0; 3])).unwrap();
    let targets = anim_core::skin::MorphTargets::new(3, 3).with_positions(vec![vec![Vec3::x(); 3]; 3]).unwrap();
    r.add_morph_targets(id, &targets).unwrap();
    let lbs = Palette::Matrices(vec![Mat4::identity()]);
    let dq = Palette::from_matrices(anim_core::skin::SkinMethod::Dq, &[Mat4::new_scaling(2.0)]);
    // A crowd of a one-joint atlas (a clip without tracks: the rest pose), culled and not.
    let skeleton = anim_core::pose::Skeleton::new(vec![anim_core::pose::JointDesc::new(
        "root",
        None,
        anim_math::Transform::IDENTITY,
    )])
    .unwrap();
    let clip = anim_core::clip::Clip::new("rest", vec![], vec![]).unwrap();
    let settings = anim_crowd::atlas::BakeSettings {
        rate: 10.0,
        layout: anim_crowd::atlas::TextureLayout::ModelTrs,
        format: anim_crowd::atlas::TexelFormat::F32,
    };
    let atlas = anim_crowd::atlas::AnimAtlas::bake(
        &skeleton,
        &anim_core::skin::Skin::from_skeleton(&skeleton),
        &[&mesh],
        &[anim_crowd::atlas::AtlasSource { clip: &clip, looping: true }],
        &settings,
    )
    .unwrap();
    let crowd = r.add_crowd(id, &atlas, 4).unwrap();
    let one = anim_crowd::crowd::CrowdInstance {
        position_scale: [0.0, 0.0, 0.0, 1.0],
        rotation: [0.0, 0.0, 0.0, 1.0],
        ..Default::default()
    };
    r.set_crowd_instances(crowd, &[one; 3]).unwrap();
    // Mesh levels (one: the triangle) and skinned-vertex chunks of one character (48 bytes).
    let lods = anim_crowd::lod::MeshLods::build(&mesh.positions, &mesh.indices, &[]).unwrap();
    r.set_crowd_lods(crowd, &lods).unwrap();
    r.set_crowd_chunk_bytes(Some(48));
    let mut frame = FrameData::default();
    let fill = |f: &mut FrameData| {
        f.clear();
        f.add_static(id, Mat4::identity(), [1.0; 3]);
        for path in [SkinPath::VertexShader, SkinPath::Compute, SkinPath::BoneTexture] {
            f.add_skinned(id, Mat4::identity(), path, &lbs).unwrap();
        }
        for path in [SkinPath::VertexShader, SkinPath::Compute] {
            f.add_skinned(id, Mat4::identity(), path, &dq).unwrap();
            f.add_skinned_morphed(id, Mat4::identity(), path, &lbs, &[0.5, 0.0, -1.0]).unwrap();
            f.add_skinned_morphed(id, Mat4::identity(), path, &dq, &[0.0, 0.25, 0.0]).unwrap();
        }
        f.add_cpu(id, Mat4::identity(), &mesh.positions, &[Vec3::z(); 3]).unwrap();
        f.line(Vec3::zeros(), Vec3::x(), [1.0; 4]);
        f.overlay_line(Vec3::zeros(), Vec3::y(), [1.0; 4]);
        let path = crate::crowd::CrowdPath::PaletteCompute;
        let lod_pixels = Some(1.0);
        f.add_crowd(crate::crowd::CrowdDraw { path, cull: true, lod_pixels, ..crate::crowd::CrowdDraw::new(crowd) });
    };
    // The chunks of every slot, once each slot has drawn the crowd: never re-created.
    let chunks = |r: &Renderer| -> Vec<Vec<ash::vk::Buffer>> {
        r.crowds[crowd.0].slots.iter().map(|s| s.skinned.iter().map(|b| b.raw()).collect()).collect()
    };
    fill(&mut frame);
    target.render(&mut r, &frame).unwrap();
    let items = (r.plan.items.as_ptr(), r.plan.items.capacity());
    let compute = r.plan.compute_bytes.as_ptr();
    let morph = (r.plan.morph_list.as_ptr(), r.plan.morph_list.capacity());
    let crowds = (r.crowd_plan.as_ptr(), r.crowd_plan.capacity());
    let first = r.slot();
    let mut settled = None;
    for k in 1..6 {
        fill(&mut frame);
        target.render(&mut r, &frame).unwrap();
        assert_eq!((r.plan.items.as_ptr(), r.plan.items.capacity()), items);
        assert_eq!(r.plan.compute_bytes.as_ptr(), compute);
        assert_eq!((r.plan.morph_list.as_ptr(), r.plan.morph_list.capacity()), morph);
        assert_eq!((r.crowd_plan.as_ptr(), r.crowd_plan.capacity()), crowds);
        assert_eq!(r.crowd_visible(crowd), Some(3));
        assert_eq!(r.crowd_level_counts(crowd), Some(vec![3]));
        assert_eq!(r.slot(), (first + k) % FRAMES_IN_FLIGHT);
        if k >= FRAMES_IN_FLIGHT {
            let now = chunks(&r);
            assert!(now.iter().all(|s| s.len() == 4), "four chunks of one character a slot");
            assert_eq!(settled.get_or_insert_with(|| now.clone()), &now);
        }
    }
    assert_eq!(r.plan.items.len(), 11);
    assert_eq!(r.plan.compute_slots, 4);
    assert!(r.slots.iter().all(|s| s.compute_out.len() == 4));
    // Four morphed items, each list at its own aligned offset: two or one active targets.
    let morphed: Vec<_> = r.plan.items.iter().filter_map(|i| i.morph).collect();
    assert_eq!(morphed.len(), 4);
    let align = ctx.limits().min_storage_buffer_offset_alignment.max(16);
    assert!(morphed.iter().all(|(offset, _)| offset % align == 0));
    assert_eq!(morphed.iter().map(|(_, len)| *len).collect::<Vec<_>>(), [32, 24, 32, 24]);
    assert_eq!(ctx.validation_count(), 0, "{}", ctx.validation_messages().join("\n"));
}
