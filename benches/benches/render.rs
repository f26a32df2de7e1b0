//! Renderer throughput on whatever Vulkan device is present (lavapipe on CI: the figures
//! only guard against regressions there; record GPU figures in BENCHMARKS.md with the
//! device name, which this bench prints).
//!
//! - `compute_skinning`: a frame whose only work is one compute-skinning dispatch over a
//!   mesh of N vertices (4 influences; the draw covers one triangle), LBS and DQ;
//!   throughput in vertices.
//! - `one_shot_skinning`: `GpuSkinner::skin` with uploads and readback, for tools.
//! - `frame`: N mannequins, each with its own palette, skinned in the vertex shader and
//!   drawn into a 640×360 offscreen image with readback; throughput in characters.
//!
//! Run: `cargo bench -p benches --bench render`.

use anim_core::skin::skinning::NormalMode;
use anim_core::skin::{DqPalette, Mesh, Palette, Skin, palette};
use anim_math::{DualQuat, Mat4, Vec3};
use anim_render_vk::{
    Coloring, Context, ContextDesc, FrameData, GpuSkinner, OFFSCREEN_FORMAT, Offscreen, Renderer, SkinPath,
};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::time::Duration;

const JOINTS: usize = 64;

fn context() -> std::sync::Arc<Context> {
    let ctx = Context::new(&ContextDesc { validation: false, window: None }).expect("a Vulkan device");
    eprintln!("render benches on: {}", ctx.device_name());
    ctx
}

fn palettes() -> (Palette, Palette) {
    let skeleton = benches::skeleton(JOINTS);
    let clip = benches::clip(&skeleton, 4.0, 30.0);
    let mut pose = skeleton.rest_pose().clone();
    clip.sample(1.3, anim_core::clip::TimePolicy::Wrap, &mut pose).expect("pose fits the clip");
    let mut model = vec![Mat4::identity(); JOINTS];
    pose.local_to_model(&skeleton, &mut model).expect("pose fits the skeleton");
    let skin = Skin::from_skeleton(&skeleton);
    let mut m = vec![Mat4::identity(); JOINTS];
    let mut d = vec![DualQuat::identity(); JOINTS];
    palette::skinning_matrices(&model, &skin, &mut m).expect("palette");
    palette::skinning_dual_quats(&model, &skin, &mut d).expect("palette");
    (Palette::Matrices(m), Palette::DualQuats(DqPalette::from_rigid(&d)))
}

fn compute_skinning(c: &mut Criterion) {
    let ctx = context();
    let mut renderer = Renderer::new(&ctx, OFFSCREEN_FORMAT).expect("renderer");
    let mut target = Offscreen::new(&ctx, 16, 16).expect("target");
    let (m, d) = palettes();
    let mut g = c.benchmark_group("compute_skinning");
    g.sample_size(10).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    for n in [65_536usize, 262_144] {
        let (positions, normals, influences) = benches::mesh(n, 4, JOINTS);
        let mesh = Mesh { positions, normals, uvs: Vec::new(), influences: Some(influences), indices: vec![0, 1, 2] };
        let id = renderer.add_mesh(&mesh, &Coloring::Uniform([1.0; 3])).expect("upload");
        g.throughput(Throughput::Elements(n as u64));
        let mut frame = FrameData::default();
        g.bench_with_input(BenchmarkId::new("lbs", n), &n, |b, _| {
            b.iter(|| {
                frame.clear();
                frame.add_skinned(id, Mat4::identity(), SkinPath::Compute, &m).expect("palette fits");
                target.render(&mut renderer, &frame).expect("frame");
            })
        });
        g.bench_with_input(BenchmarkId::new("dq", n), &n, |b, _| {
            b.iter(|| {
                frame.clear();
                frame.add_skinned(id, Mat4::identity(), SkinPath::Compute, &d).expect("palette fits");
                target.render(&mut renderer, &frame).expect("frame");
            })
        });
    }
    g.finish();
}

fn one_shot_skinning(c: &mut Criterion) {
    let ctx = context();
    let skinner = GpuSkinner::new(&ctx).expect("skinner");
    let (m, _) = palettes();
    let n = 16_384;
    let (positions, normals, influences) = benches::mesh(n, 4, JOINTS);
    let mut out_p = vec![Vec3::zeros(); n];
    let mut out_n = vec![Vec3::zeros(); n];
    let mut g = c.benchmark_group("one_shot_skinning");
    g.sample_size(10).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    g.throughput(Throughput::Elements(n as u64));
    g.bench_function("lbs_with_normals_16k", |b| {
        b.iter(|| {
            skinner
                .skin(&positions, Some(&normals), &influences, &m, NormalMode::Direct, &mut out_p, Some(&mut out_n))
                .expect("skinning")
        })
    });
    g.finish();
}

fn frame(c: &mut Criterion) {
    let ctx = context();
    let mut renderer = Renderer::new(&ctx, OFFSCREEN_FORMAT).expect("renderer");
    let mut target = Offscreen::new(&ctx, 640, 360).expect("target");
    let man = anim_mannequin::build();
    let id = renderer.add_mesh(&man.mesh, &Coloring::Uniform([0.8, 0.7, 0.6])).expect("upload");
    let skin = Skin::from_skeleton(&man.skeleton);
    let clip = man.clip("walk").or(man.clips.first()).expect("the mannequin has clips");
    let joints = man.skeleton.len();
    let mut pose = man.skeleton.rest_pose().clone();
    let mut model = vec![Mat4::identity(); joints];
    let mut pal = Palette::Matrices(vec![Mat4::identity(); joints]);
    let mut g = c.benchmark_group("frame");
    g.sample_size(10).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    for count in [1usize, 8, 32] {
        g.throughput(Throughput::Elements(count as u64));
        let mut frame = FrameData::default();
        frame.camera.eye = Vec3::new(0.0, 8.0, 22.0);
        frame.camera.target = Vec3::new(0.0, 1.0, 0.0);
        g.bench_with_input(BenchmarkId::new("mannequins_vertex_lbs", count), &count, |b, &count| {
            b.iter(|| {
                frame.clear();
                for i in 0..count {
                    clip.sample(i as f32 * 0.13, anim_core::clip::TimePolicy::Wrap, &mut pose).expect("pose fits");
                    pose.local_to_model(&man.skeleton, &mut model).expect("pose fits");
                    pal.update(&model, &skin).expect("palette");
                    let at = Vec3::new((i % 8) as f32 * 1.5 - 5.25, 0.0, -((i / 8) as f32) * 1.5);
                    frame
                        .add_skinned(id, Mat4::new_translation(&at), SkinPath::VertexShader, &pal)
                        .expect("palette fits");
                }
                target.render(&mut renderer, &frame).expect("frame");
            })
        });
    }
    g.finish();
}

criterion_group!(benches_render, compute_skinning, one_shot_skinning, frame);
criterion_main!(benches_render);
