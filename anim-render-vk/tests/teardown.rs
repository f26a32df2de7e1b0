//! Headless runs end with no live Vulkan object. The validation layer's object tracker
//! reports every object still alive when `vkDestroyDevice` / `vkDestroyInstance` run; the
//! context chains its debug messenger into `VkInstanceCreateInfo`, so the messages of the
//! instance's own destruction are counted too, into a log that outlives the context.
//!
//! One test creates every kind of resource the renderer has (static, skinned on every path
//! and method, CPU-deformed meshes, recoloured meshes, crowds on every path with and without
//! culling and LOD, two offscreen targets, per-slot GPU timers with their stats read, the
//! one-shot compute skinner, the bandwidth probes with their timers and pipelines, and
//! creations that fail half-way), renders, drops everything and asserts zero messages. The
//! other shows the check works: one deliberately leaked object is reported.

mod common;

use anim_core::clip::Clip;
use anim_core::pose::{JointDesc, Skeleton};
use anim_core::skin::skinning::NormalMode;
use anim_core::skin::{Influences, Mesh, Palette, Skin, SkinMethod};
use anim_crowd::atlas::{AnimAtlas, AtlasSource, BakeSettings, TexelFormat, TextureLayout};
use anim_crowd::crowd::CrowdInstance;
use anim_math::{Mat4, Transform, Vec3};
use anim_render_vk::{
    Coloring, CrowdDraw, CrowdPath, FrameData, GpuSkinner, OFFSCREEN_FORMAT, Offscreen, RenderError, Renderer, SkinPath,
};

/// A one-joint atlas of the rest pose (rigid, so DQ crowds are allowed) for `mesh`.
fn rest_atlas(mesh: &Mesh) -> AnimAtlas {
    let skeleton = Skeleton::new(vec![JointDesc::new("root", None, Transform::IDENTITY)]).unwrap();
    let clip = Clip::new("rest", vec![], vec![]).unwrap();
    let settings = BakeSettings { rate: 10.0, layout: TextureLayout::ModelTrs, format: TexelFormat::F32 };
    let sources = [AtlasSource { clip: &clip, looping: true }];
    AnimAtlas::bake(&skeleton, &Skin::from_skeleton(&skeleton), &[mesh], &sources, &settings).unwrap()
}

/// A triangle bound to joint 0.
fn skinned_triangle() -> Mesh {
    Mesh {
        positions: vec![Vec3::zeros(), Vec3::x(), Vec3::y()],
        normals: vec![Vec3::z(); 3],
        influences: Some(Influences::new(1, vec![0; 3], vec![1.0; 3], 1).unwrap()),
        indices: vec![0, 1, 2],
        ..Mesh::default()
    }
}

#[test]
fn every_resource_kind_is_released_at_teardown() {
    let ctx = common::context();
    let log = ctx.validation_log();
    let mut frames_with_stats = 0;
    {
        let mut r = Renderer::new(&ctx, OFFSCREEN_FORMAT).unwrap();
        let mut small = Offscreen::new(&ctx, 24, 16).unwrap();
        let mut large = Offscreen::new(&ctx, 64, 48).unwrap();
        let quad = r.add_mesh(&common::quad(1.0), &Coloring::Uniform([0.8; 3])).unwrap();
        let tri_mesh = skinned_triangle();
        let tri = r.add_mesh(&tri_mesh, &Coloring::Uniform([1.0; 3])).unwrap();
        r.recolor(tri, &Coloring::Uniform([0.5, 0.6, 0.7])).unwrap();
        let (positions, normals, influences) = common::random_skin(200, 4, 6, 7);
        let skin_mesh = Mesh {
            positions: positions.clone(),
            normals: normals.clone(),
            influences: Some(influences.clone()),
            indices: (0..198).collect(),
            ..Mesh::default()
        };
        let big = r.add_mesh(&skin_mesh, &Coloring::Uniform([0.3; 3])).unwrap();
        let (mats, _) = common::random_palette(6, 3, false);
        let lbs = Palette::Matrices(mats.clone());
        let dq = Palette::from_matrices(SkinMethod::Dq, &mats);

        // Crowds: one per path, each drawn with culling and LOD, LBS and DQ.
        let atlas = rest_atlas(&tri_mesh);
        let one = CrowdInstance {
            position_scale: [0.0, 0.0, -3.0, 1.0],
            rotation: [0.0, 0.0, 0.0, 1.0],
            ..Default::default()
        };
        let mut crowds = Vec::new();
        for (k, path) in CrowdPath::ALL.into_iter().enumerate() {
            let c = r.add_crowd(tri, &atlas, 64).unwrap();
            r.set_crowd_instances(c, &vec![one; 3 + k]).unwrap();
            crowds.push((c, path));
        }
        // Creations that fail half-way release what they had made.
        assert!(matches!(r.add_crowd(tri, &atlas, u32::MAX), Err(RenderError::Crowd(_))));
        assert!(matches!(Offscreen::new(&ctx, u32::MAX, 4), Err(RenderError::DeviceLimit { .. })));

        let fill = |f: &mut FrameData, i: usize| {
            f.clear();
            anim_render_vk::lines::grid(f, 3, 1.0, 0.0);
            f.overlay_line(Vec3::zeros(), Vec3::y(), [1.0; 4]);
            f.add_static(quad, Mat4::identity(), [1.0; 3]);
            for path in [SkinPath::VertexShader, SkinPath::Compute, SkinPath::BoneTexture] {
                f.add_skinned(big, Mat4::identity(), path, &lbs).unwrap();
            }
            for path in [SkinPath::VertexShader, SkinPath::Compute] {
                f.add_skinned(big, Mat4::identity(), path, &dq).unwrap();
            }
            f.add_cpu(tri, Mat4::identity(), &tri_mesh.positions, &tri_mesh.normals).unwrap();
            for &(crowd, path) in &crowds {
                let method = if i.is_multiple_of(2) { SkinMethod::Lbs } else { SkinMethod::Dq };
                let lod_distance = (i % 3 == 1).then_some(2.0);
                f.add_crowd(CrowdDraw { path, method, cull: i % 2 == 1, lod_distance, ..CrowdDraw::new(crowd) });
            }
        };
        let mut frame = FrameData::default();
        for i in 0..4 {
            fill(&mut frame, i);
            let target = if i % 2 == 0 { &mut small } else { &mut large };
            target.render(&mut r, &frame).unwrap();
            if r.frame_stats().is_some_and(|s| s.gpu_ms().is_finite() && !s.passes.is_empty()) {
                frames_with_stats += 1;
            }
        }
        let image = large.image().unwrap();
        assert_eq!((image.width, image.height), (64, 48));

        // The one-shot compute skinner, LBS and DQ.
        let skinner = GpuSkinner::new(&ctx).unwrap();
        let mut out_p = vec![Vec3::zeros(); positions.len()];
        let mut out_n = vec![Vec3::zeros(); positions.len()];
        for palette in [&lbs, &dq] {
            skinner
                .skin(
                    &positions,
                    Some(&normals),
                    &influences,
                    palette,
                    NormalMode::InverseTranspose,
                    &mut out_p,
                    Some(&mut out_n),
                )
                .unwrap();
        }
        // The bandwidth probes: their own buffers, timers and (compute) pipeline.
        assert!(anim_render_vk::measure_copy_bandwidth(&ctx, 1 << 16, 2).unwrap() > 0.0);
        assert!(anim_render_vk::measure_compute_copy_bandwidth(&ctx, 1 << 16, 2).unwrap() > 0.0);
        r.wait_idle().unwrap();
        assert_eq!(ctx.validation_count(), 0, "before teardown:\n{}", ctx.validation_messages().join("\n"));
    }
    assert!(frames_with_stats >= 3, "the per-slot timers ran ({frames_with_stats} frames with stats)");
    drop(ctx);
    // vkDestroyDevice and vkDestroyInstance have run: the object tracker reported nothing alive.
    assert_eq!(log.count(), 0, "at teardown:\n{}", log.messages().join("\n"));
}
