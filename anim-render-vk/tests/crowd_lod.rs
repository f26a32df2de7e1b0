//! Mesh levels of detail of GPU crowds on lavapipe with validation on (every test asserts
//! zero validation messages).
//!
//! - Under a known camera and render-target height, the list pass puts exactly the
//!   characters the CPU rule (`anim_crowd::lod::select_level`, from each character's
//!   bounding-sphere centre, scale and distance) predicts in each level, on every path, with
//!   and without frustum culling; the counts differ per level (1, 2, 3, 4 characters), so
//!   a level mix-up fails. Doubling the height (or the threshold) moves the levels as the
//!   projection says.
//! - The triangles drawn are each level's characters times its triangles.
//! - Drawn at a sub-pixel threshold the image equals full detail's; at a huge threshold
//!   (every character at the coarsest level) it differs, so the level draws use the
//!   simplified indices.
//! - Typed errors: a threshold without levels, a bad threshold, levels naming vertices the
//!   mesh does not have.

mod common;

use anim_core::clip::{Clip, Interpolation, JointTracks, Track};
use anim_core::pose::{JointDesc, Skeleton};
use anim_core::skin::{Influences, Mesh, Skin};
use anim_crowd::atlas::{AnimAtlas, AtlasSource, BakeSettings, TexelFormat, TextureLayout};
use anim_crowd::crowd::CrowdInstance;
use anim_crowd::lod::{MeshLods, select_level};
use anim_math::{Quat, Transform, Vec3};
use anim_render_vk::{
    Camera, Coloring, CrowdDraw, CrowdError, CrowdId, CrowdPath, FrameData, MeshId, OFFSCREEN_FORMAT, Offscreen,
    RenderError, Renderer, RgbaImage,
};

/// Two joints up the y axis, one unit apart.
fn skeleton() -> Skeleton {
    Skeleton::new(vec![
        JointDesc::new("root", None, Transform::from_translation(Vec3::zeros())),
        JointDesc::new("top", Some(0), Transform::from_translation(Vec3::new(0.0, 1.0, 0.0))),
    ])
    .unwrap()
}

/// Joint 1 leans about z over one second.
fn lean() -> Clip {
    let q = |a: f32| Quat::from_axis_angle(&Vec3::z_axis(), a).into_inner();
    let mut j1 = JointTracks::new(1);
    j1.rotation = Some(Track::new(Interpolation::Linear, vec![0.0, 1.0], vec![q(0.0), q(0.6)]).unwrap());
    Clip::new("lean", vec![j1], vec![]).unwrap()
}

/// A UV sphere of radius 1 around (0, 1, 0), each vertex weighted between the two joints
/// by its height.
fn sphere() -> Mesh {
    let (rings, segments) = (14u32, 20u32);
    let mut positions = Vec::new();
    let (mut joints, mut weights) = (Vec::new(), Vec::new());
    for r in 0..=rings {
        let theta = std::f32::consts::PI * r as f32 / rings as f32;
        for s in 0..segments {
            let phi = std::f32::consts::TAU * s as f32 / segments as f32;
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
            if r > 0 {
                indices.extend_from_slice(&[a, b, c]);
            }
            if r + 1 < rings {
                indices.extend_from_slice(&[b, d, c]);
            }
        }
    }
    let influences = Influences::new(2, joints, weights, 2).unwrap();
    Mesh { positions, influences: Some(influences), indices, ..Mesh::default() }
}

const HEIGHT: u32 = 96;
const EYE: [f32; 3] = [0.0, 1.0, 12.0];

fn camera() -> Camera {
    Camera { eye: Vec3::from(EYE), target: Vec3::new(0.0, 1.0, 0.0), ..Camera::default() }
}

/// Pixels an object-space unit covers at distance 1 on a target `height` pixels high.
fn pixels_per_unit(height: u32) -> f32 {
    height as f32 / (2.0 * (0.5 * camera().fov_y).tan())
}

struct Scene {
    ctx: std::sync::Arc<anim_render_vk::Context>,
    renderer: Renderer,
    mesh: MeshId,
    atlas: AnimAtlas,
    lods: MeshLods,
    source: Mesh,
}

impl Scene {
    fn new() -> Self {
        let ctx = common::context();
        let mut renderer = Renderer::new(&ctx, OFFSCREEN_FORMAT).unwrap();
        let source = sphere();
        let mesh = renderer.add_mesh(&source, &Coloring::Uniform([0.9, 0.7, 0.5])).unwrap();
        let sk = skeleton();
        let clip = lean();
        let settings = BakeSettings { rate: 15.0, layout: TextureLayout::SkinMatrix, format: TexelFormat::F32 };
        let src = [AtlasSource { clip: &clip, looping: true }];
        let atlas = AnimAtlas::bake(&sk, &Skin::from_skeleton(&sk), &[&source], &src, &settings).unwrap();
        let lods = MeshLods::build(&source.positions, &source.indices, &[0.5, 0.25, 0.1]).unwrap();
        Self { ctx, renderer, mesh, atlas, lods, source }
    }

    fn render(&mut self, height: u32, draw: CrowdDraw) -> Result<RgbaImage, RenderError> {
        let mut frame = FrameData { camera: camera(), ..FrameData::default() };
        frame.add_crowd(draw);
        let mut target = Offscreen::new(&self.ctx, height, height).unwrap();
        target.render(&mut self.renderer, &frame)?;
        target.image()
    }

    /// A character of scale `scale` at `position` (yaw 0, clip 0 at 0.3 s).
    fn instance(&self, position: Vec3, scale: f32) -> CrowdInstance {
        let pair = self.atlas.clips()[0].frame_pair(0.3);
        CrowdInstance {
            position_scale: [position.x, position.y, position.z, scale],
            rotation: [0.0, 0.0, 0.0, 1.0],
            frames: [pair.frame0, pair.frame1, 0, 0],
            factors: [pair.t, 0.0, 0.0, 0.0],
        }
    }

    /// The distance from the eye of the centre of the character's clip bounds, as the list
    /// pass computes it.
    fn distance(&self, c: &CrowdInstance) -> f32 {
        let (lo, hi) = self.atlas.clips()[0].bounds;
        let p = Vec3::new(c.position_scale[0], c.position_scale[1], c.position_scale[2]);
        let center = p + c.position_scale[3] * 0.5 * (lo + hi);
        (center - Vec3::from(EYE)).norm()
    }
}

/// Characters in front of the camera, `k + 1` of them in level `k` at `height` and a
/// one-pixel threshold: placed between the distances where the levels change.
fn placed(scene: &Scene, scale: f32) -> Vec<CrowdInstance> {
    let errors = scene.lods.errors();
    let ppu = pixels_per_unit(HEIGHT);
    // Distance at which level l becomes the choice.
    let at = |l: usize| errors[l] * scale * ppu;
    let mut out = Vec::new();
    for level in 0..errors.len() {
        let (near, far) =
            (if level == 0 { 0.5 * at(1) } else { at(level) }, errors.get(level + 1).map(|_| at(level + 1)));
        let far = far.unwrap_or(near * 4.0);
        for k in 0..=level {
            // Spread between the bounds, away from both.
            let f = (k as f32 + 1.0) / (level as f32 + 2.0);
            let d = near + f * (far - near);
            let x = (k as f32 - 1.0) * 0.05 * d;
            out.push(scene.instance(Vec3::new(x, 0.0, EYE[2] - d), scale));
        }
    }
    out
}

/// Per-level counts the CPU rule predicts, checking every character lies at least 0.5 % of
/// its distance away from a level boundary (so float rounding cannot flip it).
fn expected(scene: &Scene, chars: &[CrowdInstance], height: u32, threshold: f32) -> Vec<u32> {
    let errors = scene.lods.errors();
    let ppu = pixels_per_unit(height) / threshold;
    let mut counts = vec![0u32; errors.len()];
    for c in chars {
        let (d, s) = (scene.distance(c), c.position_scale[3]);
        for e in &errors[1..] {
            assert!((e * s * ppu - d).abs() > 0.005 * d, "a character at {d} lies on a level boundary");
        }
        counts[select_level(&errors, s, d, ppu)] += 1;
    }
    counts
}

fn lod_draw(id: CrowdId, path: CrowdPath, cull: bool, pixels: f32) -> CrowdDraw {
    CrowdDraw { path, cull, lod_pixels: Some(pixels), ..CrowdDraw::new(id) }
}

#[test]
fn each_level_draws_exactly_the_characters_the_projection_picks() {
    let mut scene = Scene::new();
    let errors = scene.lods.errors();
    assert!(errors.windows(2).all(|w| w[0] < w[1]), "distinct, growing errors: {errors:?}");
    let chars = placed(&scene, 0.5);
    assert_eq!(expected(&scene, &chars, HEIGHT, 1.0), vec![1, 2, 3, 4]);
    let id = scene.renderer.add_crowd(scene.mesh, &scene.atlas, chars.len() as u32).unwrap();
    scene.renderer.set_crowd_lods(id, &scene.lods).unwrap();
    scene.renderer.set_crowd_instances(id, &chars).unwrap();
    let tris: Vec<u64> = scene.lods.levels().iter().map(|l| l.indices.len() as u64 / 3).collect();
    for path in CrowdPath::ALL {
        for cull in [false, true] {
            scene.render(HEIGHT, lod_draw(id, path, cull, 1.0)).unwrap();
            let counts = scene.renderer.crowd_level_counts(id).unwrap();
            assert_eq!(counts, vec![1, 2, 3, 4], "{path}, cull {cull}");
            let want: u64 = counts.iter().zip(&tris).map(|(&n, t)| u64::from(n) * t).sum();
            assert_eq!(scene.renderer.crowd_triangles(id), Some(want), "{path}");
            assert_eq!(scene.renderer.crowd_visible(id), Some(chars.len() as u32));
        }
    }
    // Twice the pixels (twice the height, or a threshold of half a pixel): every level
    // boundary twice as far, as the CPU rule says.
    for (height, threshold) in [(2 * HEIGHT, 1.0), (HEIGHT, 0.5)] {
        let want = expected(&scene, &chars, height, threshold);
        assert_ne!(want, vec![1, 2, 3, 4]);
        scene.render(height, lod_draw(id, CrowdPath::PaletteVertex, false, threshold)).unwrap();
        assert_eq!(scene.renderer.crowd_level_counts(id).unwrap(), want, "height {height}, threshold {threshold}");
    }
    // Without a threshold: no level counts, the full mesh drawn.
    scene.render(HEIGHT, CrowdDraw::new(id)).unwrap();
    assert_eq!(scene.renderer.crowd_level_counts(id), None);
    assert_eq!(scene.renderer.crowd_triangles(id), Some(chars.len() as u64 * tris[0]));
    common::assert_clean(&scene.ctx);
}

/// Pixels whose largest channel difference exceeds `tol`.
fn differing(a: &RgbaImage, b: &RgbaImage, tol: u8) -> usize {
    a.pixels
        .chunks_exact(4)
        .zip(b.pixels.chunks_exact(4))
        .filter(|(p, q)| p.iter().zip(*q).any(|(x, y)| x.abs_diff(*y) > tol))
        .count()
}

#[test]
fn levels_draw_their_simplified_indices() {
    let mut scene = Scene::new();
    // Three characters near the camera, large on screen.
    let chars: Vec<_> = (0..3).map(|i| scene.instance(Vec3::new(i as f32 * 2.5 - 2.5, 0.0, 0.0), 1.0)).collect();
    let id = scene.renderer.add_crowd(scene.mesh, &scene.atlas, 3).unwrap();
    scene.renderer.set_crowd_lods(id, &scene.lods).unwrap();
    scene.renderer.set_crowd_instances(id, &chars).unwrap();
    let coarsest = scene.lods.levels().len() - 1;
    for path in CrowdPath::ALL {
        let full = scene.render(HEIGHT, CrowdDraw { path, ..CrowdDraw::new(id) }).unwrap();
        // A threshold far below the finest level's error: full detail, the same image.
        let fine = scene.render(HEIGHT, lod_draw(id, path, false, 1e-3)).unwrap();
        assert_eq!(scene.renderer.crowd_level_counts(id).unwrap()[0], 3);
        assert_eq!(differing(&full, &fine, 0), 0, "{path}: full detail through the level draw");
        // A huge threshold: everyone at the coarsest level, visibly coarser.
        let coarse = scene.render(HEIGHT, lod_draw(id, path, false, 1e6)).unwrap();
        assert_eq!(scene.renderer.crowd_level_counts(id).unwrap()[coarsest], 3);
        assert!(differing(&full, &coarse, 8) > 20, "{path}: the coarsest level looks like full detail");
    }
    common::assert_clean(&scene.ctx);
}

#[test]
fn typed_errors() {
    let mut scene = Scene::new();
    let id = scene.renderer.add_crowd(scene.mesh, &scene.atlas, 4).unwrap();
    let one = [scene.instance(Vec3::zeros(), 1.0)];
    scene.renderer.set_crowd_instances(id, &one).unwrap();
    let err = |r: Result<RgbaImage, RenderError>| match r {
        Err(RenderError::Crowd(e)) => e,
        other => panic!("expected a crowd error, got {:?}", other.map(|_| ())),
    };
    assert_eq!(
        err(scene.render(HEIGHT, lod_draw(id, CrowdPath::Book, false, 1.0))),
        CrowdError::NoMeshLods(0),
        "the first crowd is number 0"
    );
    scene.renderer.set_crowd_lods(id, &scene.lods).unwrap();
    for bad in [0.0, -1.0, f32::NAN, f32::INFINITY] {
        let e = err(scene.render(HEIGHT, lod_draw(id, CrowdPath::Book, false, bad)));
        assert!(matches!(e, CrowdError::InvalidLodPixels(_)), "{bad}: {e:?}");
    }
    // Levels over another mesh's vertices.
    let n = scene.source.positions.len() as u32;
    let mut other = scene.source.clone();
    other.indices.extend_from_slice(&[n, n + 1, n + 2]);
    other.positions.extend_from_slice(&[Vec3::x(), Vec3::y(), Vec3::z()]);
    let lods = MeshLods::build(&other.positions, &other.indices, &[]).unwrap();
    match scene.renderer.set_crowd_lods(id, &lods) {
        Err(RenderError::Crowd(CrowdError::InvalidMeshLods(m))) => assert!(m.contains(&format!("vertex {n}")), "{m}"),
        other => panic!("{other:?}"),
    }
    common::assert_clean(&scene.ctx);
}
