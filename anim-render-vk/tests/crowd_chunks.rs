//! The PaletteCompute path's skinned-vertex buffer in chunks (no cap at one storage-buffer
//! range), on lavapipe with validation on (every test asserts zero validation messages).
//! `Renderer::set_crowd_chunk_bytes` caps the chunks so that chunking happens at small
//! counts:
//!
//! - Nine large characters in chunks of 1, 2 and 4 characters draw exactly the image of the
//!   unchunked buffer, with and without culling and with mesh levels of detail.
//! - 160,000 characters (more than the ~155,000 Fox-size characters one 4 GiB range holds)
//!   in four uneven chunks draw exactly the unchunked image, culled and not.
//! - Typed errors: a chunk smaller than one character, more chunks than the binding holds.

mod common;

use anim_core::clip::{Clip, Interpolation, JointTracks, Track};
use anim_core::pose::{JointDesc, Skeleton};
use anim_core::skin::{Influences, Mesh, Skin};
use anim_crowd::atlas::{AnimAtlas, AtlasSource, BakeSettings, TexelFormat, TextureLayout};
use anim_crowd::crowd::CrowdInstance;
use anim_crowd::lod::MeshLods;
use anim_math::{Quat, Transform, Vec3};
use anim_render_vk::{
    Camera, Coloring, CrowdDraw, CrowdError, CrowdId, CrowdPath, FrameData, MeshId, OFFSCREEN_FORMAT, Offscreen,
    RenderError, Renderer, RgbaImage,
};

fn skeleton() -> Skeleton {
    Skeleton::new(vec![
        JointDesc::new("root", None, Transform::from_translation(Vec3::zeros())),
        JointDesc::new("top", Some(0), Transform::from_translation(Vec3::new(0.0, 1.0, 0.0))),
    ])
    .unwrap()
}

fn lean() -> Clip {
    let q = |a: f32| Quat::from_axis_angle(&Vec3::z_axis(), a).into_inner();
    let mut j1 = JointTracks::new(1);
    j1.rotation = Some(Track::new(Interpolation::Linear, vec![0.0, 1.0], vec![q(0.0), q(0.8)]).unwrap());
    Clip::new("lean", vec![j1], vec![]).unwrap()
}

/// A low sphere of radius 1 around (0, 1, 0) (5 rings of 6 vertices), weighted between the
/// two joints by height.
fn sphere() -> Mesh {
    let (rings, segments) = (4u32, 6u32);
    let mut positions = Vec::new();
    let (mut joints, mut weights) = (Vec::new(), Vec::new());
    for r in 0..=rings {
        let theta = std::f32::consts::PI * r as f32 / rings as f32;
        for s in 0..segments {
            let phi = std::f32::consts::TAU * (s as f32 + 0.5 * r as f32) / segments as f32;
            let p = Vec3::new(theta.sin() * phi.cos(), 1.0 + theta.cos(), theta.sin() * phi.sin());
            positions.push(p);
            joints.extend_from_slice(&[0u16, 1]);
            let w = (p.y / 2.0).clamp(0.0, 1.0);
            weights.extend_from_slice(&[1.0 - w, w]);
        }
    }
    let mut indices = Vec::new();
    for r in 0..rings {
        for s in 0..segments {
            let (a, b) = (r * segments + s, r * segments + (s + 1) % segments);
            let (c, d) = (a + segments, b + segments);
            indices.extend_from_slice(&[a, b, c, b, d, c]);
        }
    }
    let influences = Influences::new(2, joints, weights, 2).unwrap();
    Mesh { positions, influences: Some(influences), indices, ..Mesh::default() }
}

/// Bytes of one character's skinned vertices (16 a vertex).
const CHARACTER_BYTES: u64 = 30 * 16;

struct Scene {
    ctx: std::sync::Arc<anim_render_vk::Context>,
    renderer: Renderer,
    mesh: MeshId,
    atlas: AnimAtlas,
    source: Mesh,
}

impl Scene {
    fn new() -> Self {
        let ctx = common::context();
        let mut renderer = Renderer::new(&ctx, OFFSCREEN_FORMAT).unwrap();
        let source = sphere();
        assert_eq!(source.positions.len() as u64 * 16, CHARACTER_BYTES);
        let mesh = renderer.add_mesh(&source, &Coloring::Uniform([0.9, 0.7, 0.5])).unwrap();
        let sk = skeleton();
        let clip = lean();
        let settings = BakeSettings { rate: 15.0, layout: TextureLayout::SkinMatrix, format: TexelFormat::F32 };
        let src = [AtlasSource { clip: &clip, looping: true }];
        let atlas = AnimAtlas::bake(&sk, &Skin::from_skeleton(&sk), &[&source], &src, &settings).unwrap();
        Self { ctx, renderer, mesh, atlas, source }
    }

    /// A character at `position`, turned by `yaw`, scaled by `scale`, at `time` of the clip.
    fn instance(&self, position: Vec3, yaw: f32, scale: f32, time: f32) -> CrowdInstance {
        let pair = self.atlas.clips()[0].frame_pair(time);
        let q = Quat::from_axis_angle(&Vec3::y_axis(), yaw);
        CrowdInstance {
            position_scale: [position.x, position.y, position.z, scale],
            rotation: [q.i, q.j, q.k, q.w],
            frames: [pair.frame0, pair.frame1, 0, 0],
            factors: [pair.t, 0.0, 0.0, 0.0],
        }
    }

    fn render(&mut self, size: u32, camera: Camera, draw: CrowdDraw) -> Result<RgbaImage, RenderError> {
        let mut frame = FrameData { camera, ..FrameData::default() };
        frame.add_crowd(draw);
        let mut target = Offscreen::new(&self.ctx, size, size).unwrap();
        target.render(&mut self.renderer, &frame)?;
        target.image()
    }
}

fn compute(id: CrowdId, cull: bool) -> CrowdDraw {
    CrowdDraw { path: CrowdPath::PaletteCompute, cull, ..CrowdDraw::new(id) }
}

fn differing(a: &RgbaImage, b: &RgbaImage) -> usize {
    a.pixels.chunks_exact(4).zip(b.pixels.chunks_exact(4)).filter(|(p, q)| p != q).count()
}

fn covered(img: &RgbaImage) -> usize {
    let bg = img.pixel(0, 0);
    img.pixels.chunks_exact(4).filter(|p| p.iter().zip(bg).any(|(x, y)| x.abs_diff(y) > 2)).count()
}

#[test]
fn small_chunks_draw_what_one_buffer_draws() {
    let mut scene = Scene::new();
    let chars: Vec<_> = (0..9)
        .map(|i| {
            let p = Vec3::new((i % 3) as f32 * 2.4 - 2.4, 0.0, (i / 3) as f32 * 2.4 - 2.4);
            scene.instance(p, 0.4 * i as f32, 0.8 + 0.02 * i as f32, 0.1 * i as f32)
        })
        .collect();
    let id = scene.renderer.add_crowd(scene.mesh, &scene.atlas, 9).unwrap();
    scene.renderer.set_crowd_instances(id, &chars).unwrap();
    let lods = MeshLods::from_mesh(&scene.source, &[0.5]).unwrap();
    scene.renderer.set_crowd_lods(id, &lods).unwrap();
    let camera = Camera { eye: Vec3::new(0.0, 7.0, 8.0), target: Vec3::new(0.0, 0.5, 0.0), ..Camera::default() };
    let lod = |cull| CrowdDraw { lod_pixels: Some(4.0), ..compute(id, cull) };
    for draw in [compute(id, false), compute(id, true), lod(false), lod(true)] {
        scene.renderer.set_crowd_chunk_bytes(None);
        let whole = scene.render(96, camera, draw).unwrap();
        assert!(covered(&whole) > 1000, "the characters fill the image");
        for chars_per_chunk in [1, 2, 4] {
            scene.renderer.set_crowd_chunk_bytes(Some(chars_per_chunk * CHARACTER_BYTES + 7));
            let chunked = scene.render(96, camera, draw).unwrap();
            assert_eq!(differing(&whole, &chunked), 0, "{chars_per_chunk} characters a chunk, {draw:?}");
        }
    }
    common::assert_clean(&scene.ctx);
}

#[test]
fn more_than_155000_characters_in_chunks_draw_what_one_buffer_draws() {
    let mut scene = Scene::new();
    const N: u32 = 160_000;
    let side = 400;
    let chars: Vec<_> = (0..N)
        .map(|i| {
            let p = Vec3::new((i % side) as f32 * 2.5 - 500.0, 0.0, (i / side) as f32 * 2.5 - 500.0);
            scene.instance(p, 0.37 * i as f32, 1.0, (i % 15) as f32 / 15.0)
        })
        .collect();
    let id = scene.renderer.add_crowd(scene.mesh, &scene.atlas, N).unwrap();
    scene.renderer.set_crowd_instances(id, &chars).unwrap();
    // From above one corner, so culling drops part of the field.
    let camera = Camera {
        eye: Vec3::new(-560.0, 160.0, -560.0),
        target: Vec3::new(-300.0, 0.0, -300.0),
        far: 3000.0,
        ..Camera::default()
    };
    for cull in [false, true] {
        scene.renderer.set_crowd_chunk_bytes(None);
        let whole = scene.render(128, camera, compute(id, cull)).unwrap();
        assert!(covered(&whole) > 2000, "the field fills the image");
        let visible = scene.renderer.crowd_visible(id);
        // Four chunks: 47,000 characters each, then 19,000.
        scene.renderer.set_crowd_chunk_bytes(Some(47_000 * CHARACTER_BYTES));
        let chunked = scene.render(128, camera, compute(id, cull)).unwrap();
        assert_eq!(scene.renderer.crowd_visible(id), visible);
        if cull {
            assert!(visible.is_some_and(|v| v > 47_000 && v < N), "culling keeps more than a chunk: {visible:?}");
        }
        assert_eq!(differing(&whole, &chunked), 0, "cull {cull}");
    }
    common::assert_clean(&scene.ctx);
}

#[test]
fn chunk_limits_are_typed_errors() {
    let mut scene = Scene::new();
    let id = scene.renderer.add_crowd(scene.mesh, &scene.atlas, 40).unwrap();
    let one = [scene.instance(Vec3::zeros(), 0.0, 1.0, 0.0)];
    scene.renderer.set_crowd_instances(id, &one).unwrap();
    let camera = Camera::default();
    let limit = |r: Result<RgbaImage, RenderError>| match r {
        Err(RenderError::Crowd(CrowdError::DeviceLimit { what, size, max })) => (what, size, max),
        other => panic!("expected a device limit, got {:?}", other.map(|_| ())),
    };
    scene.renderer.set_crowd_chunk_bytes(Some(CHARACTER_BYTES - 1));
    let (what, size, max) = limit(scene.render(32, camera, compute(id, false)));
    assert!(what.contains("one character"), "{what}");
    assert_eq!((size, max), (CHARACTER_BYTES, CHARACTER_BYTES - 1));
    // 40 characters in chunks of 2: 20 chunks, more than the 15 the binding holds.
    scene.renderer.set_crowd_chunk_bytes(Some(2 * CHARACTER_BYTES));
    let (what, size, max) = limit(scene.render(32, camera, compute(id, false)));
    assert!(what.contains("chunks"), "{what}");
    assert_eq!((size, max), (20, 15));
    // Chunks of 3: 14 chunks, drawn.
    scene.renderer.set_crowd_chunk_bytes(Some(3 * CHARACTER_BYTES));
    scene.render(32, camera, compute(id, false)).unwrap();
    common::assert_clean(&scene.ctx);
}
