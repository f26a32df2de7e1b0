//! Instanced GPU crowds (chapter 15) on lavapipe with validation on; every test asserts
//! zero validation messages.
//!
//! - The palette pass equals the CPU atlas reader (`AnimAtlas::palette`) for characters
//!   playing different clips, times and blends, in every atlas layout and both texel
//!   formats, LBS and (rigid atlas) DQ: skinned bind positions agree to 1e-5 of the mesh's
//!   bounding-box diagonal. DQ palettes are compared in full (the reader's bind-space
//!   scales included), and the reader's DQ palette is rigid, as the GPU's is.
//! - The shader's two-clip blend (weight 0.3) equals the CPU reader's.
//! - The book path's images equal those of both palette paths (an independent check of the
//!   book shader), and different clips or times give different images.
//! - Culling reports exactly the characters inside the frustum and draws them; LOD changes
//!   far characters only.
//! - Typed errors: capacity, DQ on a non-rigid atlas, unskinned mesh, joints beyond the
//!   atlas, a crowd drawn twice, a bad LOD distance, frames beyond the atlas, a capacity
//!   beyond the device.
//! - Frame stats after an offscreen render name the passes with finite times.
//! - Two crowds in one frame; `anim_crowd::crowd::Crowd` records drive the renderer.

mod common;

use anim_core::clip::{Clip, Interpolation, JointTracks, Track};

use anim_core::pose::{JointDesc, Skeleton};

use anim_core::skin::{Influences, Mesh, Palette, Skin, SkinMethod};

use anim_crowd::atlas::{AnimAtlas, AtlasSource, BakeSettings, FramePair, TexelFormat, TextureLayout};

use anim_crowd::crowd::CrowdInstance;
use anim_math::{Mat4, Quat, Transform, Vec3};
use anim_render_vk::{
    Camera, Coloring, CrowdDraw, CrowdError, CrowdId, CrowdPath, FrameData, MeshId, OFFSCREEN_FORMAT, Offscreen,
    RenderError, Renderer, RgbaImage,
};

/// Three joints in a chain up the y axis, one unit apart; the root at (0.5, 0, 0).
fn skeleton() -> Skeleton {
    Skeleton::new(vec![
        JointDesc::new("root", None, Transform::from_translation(Vec3::new(0.5, 0.0, 0.0))),
        JointDesc::new("mid", Some(0), Transform::from_translation(Vec3::new(0.0, 1.0, 0.0))),
        JointDesc::new("tip", Some(1), Transform::from_translation(Vec3::new(0.0, 1.0, 0.0))),
    ])
    .unwrap()
}

fn rot_z(a: f32) -> Quat {
    Quat::from_axis_angle(&Vec3::z_axis(), a)
}

/// Joint 0 turns about z by `a0·t`, joint 1 by `a1·t` over `duration`; with `scale`, joint 1
/// also stretches non-uniformly (a non-rigid atlas).
fn turn_clip(name: &str, duration: f32, a0: f32, a1: f32, scale: bool) -> Clip {
    let times = vec![0.0, duration];
    let mut j0 = JointTracks::new(0);
    j0.rotation = Some(
        Track::new(Interpolation::Linear, times.clone(), vec![rot_z(0.0).into_inner(), rot_z(a0).into_inner()])
            .unwrap(),
    );
    let mut j1 = JointTracks::new(1);
    j1.rotation = Some(
        Track::new(Interpolation::Linear, times.clone(), vec![rot_z(0.0).into_inner(), rot_z(a1).into_inner()])
            .unwrap(),
    );
    if scale {
        j1.scale = Some(
            Track::new(Interpolation::Linear, times, vec![Vec3::new(1.0, 1.0, 1.0), Vec3::new(1.6, 0.8, 1.0)]).unwrap(),
        );
    }
    Clip::new(name, vec![j0, j1], vec![]).unwrap()
}

/// A tube of 8-vertex rings up the chain (radius 0.25 around x = 0.5), each vertex bound to
/// the two nearest joints.
fn tube() -> Mesh {
    const SIDES: u32 = 8;
    const RINGS: u32 = 9;
    let mut positions = Vec::new();
    let mut joints = Vec::new();
    let mut weights = Vec::new();
    for k in 0..RINGS {
        let y = k as f32 * 0.25;
        for s in 0..SIDES {
            let a = s as f32 / SIDES as f32 * std::f32::consts::TAU;
            positions.push(Vec3::new(0.5 + 0.25 * a.cos(), y, 0.25 * a.sin()));
            let j = ((y.floor() as u16).min(1), (y.floor() as u16 + 1).min(2));
            let f = y - y.floor();
            joints.extend_from_slice(&[j.0, j.1]);
            weights.extend_from_slice(&[1.0 - f, f]);
        }
    }
    let mut indices = Vec::new();
    for k in 0..RINGS - 1 {
        for s in 0..SIDES {
            let (a, b) = (k * SIDES + s, k * SIDES + (s + 1) % SIDES);
            let (c, d) = (a + SIDES, b + SIDES);
            indices.extend_from_slice(&[a, c, b, b, c, d]);
        }
    }
    let influences = Influences::new(2, joints, weights, 3).unwrap();
    Mesh { positions, influences: Some(influences), indices, ..Mesh::default() }
}

struct Fixture {
    mesh: Mesh,
    clips: Vec<Clip>,
}

impl Fixture {
    fn new() -> Self {
        Self {
            mesh: tube(),
            clips: vec![
                turn_clip("sway", 1.0, 1.2, -0.8, false),
                turn_clip("bend", 0.8, -0.9, 1.4, false),
                turn_clip("stretch", 1.2, 0.5, 0.9, true),
            ],
        }
    }

    /// An atlas of the first `clips` clips.
    fn atlas(&self, clips: usize, layout: TextureLayout, format: TexelFormat) -> AnimAtlas {
        let sk = skeleton();
        let skin = Skin::from_skeleton(&sk);
        let src: Vec<_> = self.clips[..clips].iter().map(|clip| AtlasSource { clip, looping: true }).collect();
        AnimAtlas::bake(&sk, &skin, &[&self.mesh], &src, &BakeSettings { rate: 15.0, layout, format }).unwrap()
    }

    fn diagonal(&self) -> f32 {
        let p = &self.mesh.positions;
        let (lo, hi) = p.iter().fold((p[0], p[0]), |(lo, hi), q| (lo.inf(q), hi.sup(q)));
        (hi - lo).norm()
    }
}

/// A character: where it stands and what it plays.
#[derive(Clone, Copy, Debug)]
struct Character {
    position: Vec3,
    yaw: f32,
    scale: f32,
    clip: usize,
    time: f32,
    /// Clip B, its time and weight.
    blend: Option<(usize, f32, f32)>,
}

impl Character {
    fn at(position: Vec3, clip: usize, time: f32) -> Self {
        Self { position, yaw: 0.0, scale: 0.5, clip, time, blend: None }
    }

    fn pairs(&self, atlas: &AnimAtlas) -> (FramePair, Option<(FramePair, f32)>) {
        let a = atlas.clips()[self.clip].frame_pair(self.time);
        let b = self.blend.map(|(c, t, w)| (atlas.clips()[c].frame_pair(t), w));
        (a, b)
    }

    fn instance(&self, atlas: &AnimAtlas) -> CrowdInstance {
        let (a, b) = self.pairs(atlas);
        let q = Quat::from_axis_angle(&Vec3::y_axis(), self.yaw);
        let (fb, w) = b.unwrap_or((FramePair::default(), 0.0));
        CrowdInstance {
            position_scale: [self.position.x, self.position.y, self.position.z, self.scale],
            rotation: [q.i, q.j, q.k, q.w],
            frames: [a.frame0, a.frame1, fb.frame0, fb.frame1],
            factors: [a.t, fb.t, w, self.clip as f32],
        }
    }
}

/// Nine characters in a 3 × 3 grid in front of the default camera, playing different clips,
/// times and blends of the first `clips` clips.
fn grid(clips: usize, time_offset: f32) -> Vec<Character> {
    (0..9)
        .map(|i| {
            let (x, z) = ((i % 3) as f32 - 1.0, (i / 3) as f32 - 1.0);
            let mut c =
                Character::at(Vec3::new(x * 1.1 - 0.25, 0.2, z * 1.1), i % clips, 0.07 * i as f32 + time_offset);
            c.yaw = 0.3 * i as f32;
            c.scale = 0.45 + 0.02 * i as f32;
            if i % 3 == 1 {
                c.blend = Some(((i + 1) % clips, 0.11 * i as f32, 0.3));
            }
            c
        })
        .collect()
}

struct Scene {
    ctx: std::sync::Arc<anim_render_vk::Context>,
    renderer: Renderer,
    target: Offscreen,
    mesh: MeshId,
}

impl Scene {
    fn new(f: &Fixture, size: u32) -> Self {
        let ctx = common::context();
        let mut renderer = Renderer::new(&ctx, OFFSCREEN_FORMAT).unwrap();
        let mesh = renderer.add_mesh(&f.mesh, &Coloring::Uniform([0.9, 0.7, 0.5])).unwrap();
        let target = Offscreen::new(&ctx, size, size).unwrap();
        Self { ctx, renderer, target, mesh }
    }

    fn render(&mut self, draws: &[CrowdDraw]) -> Result<RgbaImage, RenderError> {
        let mut frame = FrameData {
            camera: Camera { eye: Vec3::new(0.0, 2.5, 4.5), target: Vec3::new(0.0, 0.6, 0.0), ..Camera::default() },
            ..FrameData::default()
        };
        for d in draws {
            frame.add_crowd(*d);
        }
        self.target.render(&mut self.renderer, &frame)?;
        self.target.image()
    }
}

fn draw(crowd: CrowdId, path: CrowdPath, method: SkinMethod) -> CrowdDraw {
    CrowdDraw { path, method, ..CrowdDraw::new(crowd) }
}

/// The CPU reader's palette for a character, as matrices. A DQ palette in full: each
/// entry's rigid part times its bind-space scale, `[R·S | t]`, so a scale the reader kept
/// (which the GPU's DQ palette cannot carry) shows up as a difference.
fn cpu_palette(atlas: &AnimAtlas, c: &Character, method: SkinMethod) -> Vec<Mat4> {
    let (a, b) = c.pairs(atlas);
    let mut out = Palette::new(method);
    atlas.palette(a, b, method, &mut out).unwrap();
    match &out {
        Palette::Matrices(m) => m.clone(),
        Palette::DualQuats(d) => d
            .dual_quats()
            .iter()
            .zip(d.scales())
            .map(|(q, s)| q.to_isometry().to_homogeneous() * s.to_homogeneous())
            .collect(),
    }
}

/// Largest distance between the mesh's bind positions skinned (LBS) by two palettes.
fn skinned_diff(mesh: &Mesh, a: &[Mat4], b: &[Mat4]) -> f32 {
    let inf = mesh.influences.as_ref().unwrap();
    let per = inf.per_vertex();
    let skin = |pal: &[Mat4], v: usize| {
        let mut p = Vec3::zeros();
        for k in 0..per {
            let j = usize::from(inf.joints()[v * per + k]);
            let w = inf.weights()[v * per + k];
            p += w * pal[j].transform_point(&mesh.positions[v].into()).coords;
        }
        p
    };
    (0..mesh.positions.len()).map(|v| (skin(a, v) - skin(b, v)).norm()).fold(0.0, f32::max)
}

/// Pixels whose largest channel difference exceeds `tol`.
fn differing(a: &RgbaImage, b: &RgbaImage, tol: u8) -> usize {
    a.pixels
        .chunks_exact(4)
        .zip(b.pixels.chunks_exact(4))
        .filter(|(p, q)| p.iter().zip(*q).any(|(x, y)| x.abs_diff(*y) > tol))
        .count()
}

/// Pixels that are not the clear colour.
fn covered(img: &RgbaImage) -> usize {
    let bg = img.pixel(0, 0);
    img.pixels.chunks_exact(4).filter(|p| p.iter().zip(bg).any(|(x, y)| x.abs_diff(y) > 2)).count()
}

#[test]
fn palette_pass_equals_the_cpu_reader_in_every_layout_and_format() {
    let f = Fixture::new();
    let mut scene = Scene::new(&f, 64);
    let tol = 1e-5 * f.diagonal();
    let chars = grid(2, 0.0);
    for layout in TextureLayout::ALL {
        for format in TexelFormat::ALL {
            let atlas = f.atlas(2, layout, format);
            assert!(atlas.is_rigid());
            let id = scene.renderer.add_crowd(scene.mesh, &atlas, 16).unwrap();
            let inst: Vec<_> = chars.iter().map(|c| c.instance(&atlas)).collect();
            scene.renderer.set_crowd_instances(id, &inst).unwrap();
            for method in [SkinMethod::Lbs, SkinMethod::Dq] {
                for path in [CrowdPath::PaletteVertex, CrowdPath::PaletteCompute] {
                    let img = scene.render(&[draw(id, path, method)]).unwrap();
                    assert!(covered(&img) > 50, "{layout} {format:?} {method:?} {path}: blank image");
                    let gpu = scene.renderer.crowd_palettes(id).unwrap();
                    let joints = atlas.joint_count();
                    assert_eq!(gpu.len(), chars.len() * joints);
                    for (i, c) in chars.iter().enumerate() {
                        if method == SkinMethod::Dq {
                            let (a, b) = c.pairs(&atlas);
                            let mut dq = Palette::new(method);
                            atlas.palette(a, b, method, &mut dq).unwrap();
                            assert!(dq.dual_quats().unwrap().is_rigid(), "{layout} {format:?} character {i}");
                        }
                        let want = cpu_palette(&atlas, c, method);
                        let got = &gpu[i * joints..(i + 1) * joints];
                        let d = skinned_diff(&f.mesh, got, &want);
                        assert!(d <= tol, "{layout} {format:?} {method:?} {path} character {i}: {d} > {tol}");
                    }
                }
            }
        }
    }
    common::assert_clean(&scene.ctx);
}

#[test]
fn shader_blend_equals_the_cpu_blend() {
    let f = Fixture::new();
    let mut scene = Scene::new(&f, 64);
    let atlas = f.atlas(2, TextureLayout::ModelTrs, TexelFormat::F32);
    let id = scene.renderer.add_crowd(scene.mesh, &atlas, 4).unwrap();
    let mut blended = Character::at(Vec3::zeros(), 0, 0.43);
    blended.blend = Some((1, 0.61, 0.3));
    let alone = Character { blend: None, ..blended };
    scene.renderer.set_crowd_instances(id, &[blended.instance(&atlas), alone.instance(&atlas)]).unwrap();
    scene.render(&[draw(id, CrowdPath::PaletteVertex, SkinMethod::Lbs)]).unwrap();
    let gpu = scene.renderer.crowd_palettes(id).unwrap();
    let j = atlas.joint_count();
    let tol = 1e-5 * f.diagonal();
    let want = cpu_palette(&atlas, &blended, SkinMethod::Lbs);
    assert!(skinned_diff(&f.mesh, &gpu[..j], &want) <= tol);
    // The blend matters: clip A alone is far from it, and is what the second character got.
    assert!(skinned_diff(&f.mesh, &gpu[j..], &want) > 100.0 * tol);
    assert!(skinned_diff(&f.mesh, &gpu[j..], &cpu_palette(&atlas, &alone, SkinMethod::Lbs)) <= tol);
    common::assert_clean(&scene.ctx);
}

#[test]
fn book_path_draws_what_the_palette_paths_draw() {
    let f = Fixture::new();
    let mut scene = Scene::new(&f, 128);
    for (layout, format) in [
        (TextureLayout::ModelTrs, TexelFormat::F32),
        (TextureLayout::SkinMatrix, TexelFormat::F16),
        (TextureLayout::SkinDualQuat, TexelFormat::F32),
    ] {
        let atlas = f.atlas(2, layout, format);
        let id = scene.renderer.add_crowd(scene.mesh, &atlas, 9).unwrap();
        let inst: Vec<_> = grid(2, 0.0).iter().map(|c| c.instance(&atlas)).collect();
        scene.renderer.set_crowd_instances(id, &inst).unwrap();
        for method in [SkinMethod::Lbs, SkinMethod::Dq] {
            let book = scene.render(&[draw(id, CrowdPath::Book, method)]).unwrap();
            assert!(covered(&book) > 500, "{layout} {method:?}: {} pixels covered", covered(&book));
            for path in [CrowdPath::PaletteVertex, CrowdPath::PaletteCompute] {
                let other = scene.render(&[draw(id, path, method)]).unwrap();
                let n = differing(&book, &other, 8);
                assert!(n <= 20, "{layout} {format:?} {method:?}: book and {path} differ in {n} pixels");
            }
        }
        // Other times and clips draw another image.
        let later: Vec<_> = grid(2, 0.35).iter().map(|c| c.instance(&atlas)).collect();
        let before = scene.render(&[draw(id, CrowdPath::Book, SkinMethod::Lbs)]).unwrap();
        scene.renderer.set_crowd_instances(id, &later).unwrap();
        let after = scene.render(&[draw(id, CrowdPath::Book, SkinMethod::Lbs)]).unwrap();
        assert!(differing(&before, &after, 8) > 100, "{layout}: other times, same image");
    }
    common::assert_clean(&scene.ctx);
}

/// Characters inside the frustum, and four outside it (behind the eye, far left, far right,
/// beyond the far plane).
fn inside_and_outside() -> (Vec<Character>, u32) {
    let mut chars = grid(2, 0.1);
    let inside = chars.len() as u32;
    for p in
        [Vec3::new(0.0, 1.0, 12.0), Vec3::new(-40.0, 0.0, 0.0), Vec3::new(40.0, 0.0, 0.0), Vec3::new(0.0, 0.0, -900.0)]
    {
        chars.insert(3, Character::at(p, 1, 0.2));
    }
    (chars, inside)
}

#[test]
fn culling_counts_and_draws_the_visible_characters() {
    let f = Fixture::new();
    let mut scene = Scene::new(&f, 96);
    let atlas = f.atlas(2, TextureLayout::SkinMatrix, TexelFormat::F32);
    let id = scene.renderer.add_crowd(scene.mesh, &atlas, 32).unwrap();
    let (chars, inside) = inside_and_outside();
    let inst: Vec<_> = chars.iter().map(|c| c.instance(&atlas)).collect();
    scene.renderer.set_crowd_instances(id, &inst).unwrap();
    for path in CrowdPath::ALL {
        let all = scene.render(&[draw(id, path, SkinMethod::Lbs)]).unwrap();
        assert_eq!(scene.renderer.crowd_visible(id), None, "no list pass without culling");
        let culled = scene.render(&[CrowdDraw { cull: true, ..draw(id, path, SkinMethod::Lbs) }]).unwrap();
        assert_eq!(scene.renderer.crowd_visible(id), Some(inside), "{path}");
        let stats = scene.renderer.frame_stats().unwrap();
        assert_eq!((stats.instances, stats.visible), (chars.len() as u32, Some(inside)));
        assert!(covered(&culled) > 300, "{path}: culled image nearly blank");
        // The culled characters were off screen anyway: the same image.
        assert!(differing(&all, &culled, 8) <= 10, "{path}: culling changed the visible characters");
        if path.has_palette() {
            // Listed characters' palettes are evaluated (indexed by instance).
            let gpu = scene.renderer.crowd_palettes(id).unwrap();
            let j = atlas.joint_count();
            let want = cpu_palette(&atlas, &chars[0], SkinMethod::Lbs);
            assert!(skinned_diff(&f.mesh, &gpu[..j], &want) <= 1e-5 * f.diagonal());
        }
    }
    // Everything outside: nothing visible, nothing drawn.
    let away: Vec<_> = chars[3..7].iter().map(|c| c.instance(&atlas)).collect();
    scene.renderer.set_crowd_instances(id, &away).unwrap();
    let img = scene.render(&[CrowdDraw { cull: true, ..draw(id, CrowdPath::Book, SkinMethod::Lbs) }]).unwrap();
    assert_eq!(scene.renderer.crowd_visible(id), Some(0));
    assert_eq!(covered(&img), 0);
    common::assert_clean(&scene.ctx);
}

#[test]
fn lod_changes_far_characters_only() {
    let f = Fixture::new();
    let mut scene = Scene::new(&f, 96);
    let atlas = f.atlas(2, TextureLayout::ModelTrs, TexelFormat::F32);
    let id = scene.renderer.add_crowd(scene.mesh, &atlas, 9).unwrap();
    let inst: Vec<_> = grid(2, 0.2).iter().map(|c| c.instance(&atlas)).collect();
    scene.renderer.set_crowd_instances(id, &inst).unwrap();
    for path in CrowdPath::ALL {
        let full = scene.render(&[draw(id, path, SkinMethod::Lbs)]).unwrap();
        let near_lod = CrowdDraw { lod_distance: Some(1000.0), ..draw(id, path, SkinMethod::Lbs) };
        let same = scene.render(&[near_lod]).unwrap();
        assert_eq!(scene.renderer.crowd_visible(id), Some(9), "LOD alone lists every character");
        assert!(differing(&full, &same, 8) <= 10, "{path}: LOD beyond every character changed the image");
        let all_lod = scene.render(&[CrowdDraw { lod_distance: Some(0.01), ..near_lod }]).unwrap();
        assert!(differing(&full, &all_lod, 8) > 20, "{path}: one influence drew the same image");
    }
    common::assert_clean(&scene.ctx);
}

#[test]
fn typed_errors() {
    let f = Fixture::new();
    let mut scene = Scene::new(&f, 32);
    let non_rigid = f.atlas(3, TextureLayout::ModelTrs, TexelFormat::F32);
    assert!(!non_rigid.is_rigid());
    let id = scene.renderer.add_crowd(scene.mesh, &non_rigid, 2).unwrap();
    let c = Character::at(Vec3::zeros(), 2, 0.3).instance(&non_rigid);
    // Capacity.
    assert!(matches!(
        scene.renderer.set_crowd_instances(id, &[c; 3]),
        Err(RenderError::Crowd(CrowdError::CapacityExceeded { len: 3, capacity: 2 }))
    ));
    scene.renderer.set_crowd_instances(id, &[c; 2]).unwrap();
    // Frames beyond the atlas.
    let mut bad = c;
    bad.frames[1] = non_rigid.width();
    let err = scene.renderer.set_crowd_instances(id, &[c, bad]);
    assert!(matches!(err, Err(RenderError::Crowd(CrowdError::InvalidInstance { index: 1, .. }))), "{err:?}");
    assert!(err.unwrap_err().to_string().contains("frames[1] (clip A frame1)"));
    // A non-finite field is named.
    let mut bad = c;
    bad.rotation[2] = f32::NAN;
    let err = scene.renderer.set_crowd_instances(id, &[bad]).unwrap_err();
    assert!(err.to_string().contains("rotation[2] is NaN"), "{err}");
    // DQ on a non-rigid atlas, at plan time.
    for path in CrowdPath::ALL {
        assert!(matches!(
            scene.render(&[draw(id, path, SkinMethod::Dq)]),
            Err(RenderError::Crowd(CrowdError::DqNeedsRigidAtlas))
        ));
    }
    // The same crowd twice in a frame, a bad LOD distance, an unknown crowd.
    let lbs = draw(id, CrowdPath::Book, SkinMethod::Lbs);
    assert!(matches!(scene.render(&[lbs, lbs]), Err(RenderError::Crowd(CrowdError::DrawnTwice(_)))));
    assert!(matches!(
        scene.render(&[CrowdDraw { lod_distance: Some(-1.0), ..lbs }]),
        Err(RenderError::Crowd(CrowdError::InvalidLod(_)))
    ));
    // Unskinned mesh; a mesh naming more joints than the atlas has.
    let quad = scene.renderer.add_mesh(&common::quad(1.0), &Coloring::Uniform([1.0; 3])).unwrap();
    assert!(matches!(
        scene.renderer.add_crowd(quad, &non_rigid, 4),
        Err(RenderError::Crowd(CrowdError::NotSkinned(_)))
    ));
    let mut wide = tube();
    let inf = wide.influences.as_ref().unwrap();
    let mut joints = inf.joints().to_vec();
    joints[0] = 5;
    wide.influences = Some(Influences::new(2, joints, inf.weights().to_vec(), 6).unwrap());
    let wide = scene.renderer.add_mesh(&wide, &Coloring::Uniform([1.0; 3])).unwrap();
    assert!(matches!(
        scene.renderer.add_crowd(wide, &non_rigid, 4),
        Err(RenderError::Crowd(CrowdError::JointsExceedAtlas { mesh: 6, atlas: 3 }))
    ));
    // Beyond the device: an instance buffer past maxStorageBufferRange. (An atlas wider than
    // maxImageDimension2D cannot be baked where that limit is 16384 or more: `bake` refuses
    // widths beyond 16384 itself.)
    let too_many = (u64::from(scene.ctx.limits().max_storage_buffer_range) / 64 + 1).min(u64::from(u32::MAX)) as u32;
    assert!(matches!(
        scene.renderer.add_crowd(scene.mesh, &non_rigid, too_many),
        Err(RenderError::Crowd(CrowdError::DeviceLimit { .. }))
    ));
    // The LBS draw of the non-rigid atlas works.
    let img = scene.render(&[lbs]).unwrap();
    assert!(covered(&img) > 0);
    // Path names.
    for p in CrowdPath::ALL {
        assert_eq!(p.to_string().parse::<CrowdPath>().unwrap(), p);
    }
    assert_eq!("compute".parse::<CrowdPath>().unwrap(), CrowdPath::PaletteCompute);
    assert!("gpu".parse::<CrowdPath>().is_err());
    common::assert_clean(&scene.ctx);
}

#[test]
fn frame_stats_name_the_passes() {
    let f = Fixture::new();
    let mut scene = Scene::new(&f, 64);
    assert!(scene.renderer.frame_stats().is_none());
    let atlas = f.atlas(2, TextureLayout::ModelTrs, TexelFormat::F16);
    let id = scene.renderer.add_crowd(scene.mesh, &atlas, 9).unwrap();
    let inst: Vec<_> = grid(2, 0.0).iter().map(|c| c.instance(&atlas)).collect();
    scene.renderer.set_crowd_instances(id, &inst).unwrap();
    let cases: [(CrowdPath, bool, &[&str]); 3] = [
        (CrowdPath::Book, false, &["upload", "draw"]),
        (CrowdPath::PaletteVertex, true, &["upload", "cull", "palette", "draw"]),
        (CrowdPath::PaletteCompute, true, &["upload", "cull", "palette", "skin", "draw"]),
    ];
    for (path, cull, names) in cases {
        scene.render(&[CrowdDraw { cull, ..draw(id, path, SkinMethod::Lbs) }]).unwrap();
        let stats = scene.renderer.frame_stats().expect("stats after an offscreen render");
        let got: Vec<_> = stats.passes.iter().map(|p| p.name).collect();
        assert_eq!(got, names, "{path}");
        assert!(stats.passes.iter().all(|p| p.ms.is_finite() && p.ms >= 0.0), "{stats}");
        assert_eq!(stats.instances, 9);
        assert_eq!(stats.visible, cull.then_some(9));
    }
    common::assert_clean(&scene.ctx);
}

#[test]
fn two_crowds_in_one_frame() {
    let f = Fixture::new();
    let mut scene = Scene::new(&f, 96);
    let rigid = f.atlas(2, TextureLayout::SkinDualQuat, TexelFormat::F16);
    let stretchy = f.atlas(3, TextureLayout::ModelTrs, TexelFormat::F32);
    let a = scene.renderer.add_crowd(scene.mesh, &rigid, 16).unwrap();
    let b = scene.renderer.add_crowd(scene.mesh, &stretchy, 4).unwrap();
    let (chars, inside) = inside_and_outside();
    let inst: Vec<_> = chars.iter().map(|c| c.instance(&rigid)).collect();
    scene.renderer.set_crowd_instances(a, &inst).unwrap();
    let far: Vec<_> = (0..4)
        .map(|i| Character::at(Vec3::new(i as f32 - 1.5, 0.0, -3.0), 2, 0.2 * i as f32).instance(&stretchy))
        .collect();
    scene.renderer.set_crowd_instances(b, &far).unwrap();
    let first = CrowdDraw { cull: true, ..draw(a, CrowdPath::Book, SkinMethod::Dq) };
    let second = draw(b, CrowdPath::PaletteCompute, SkinMethod::Lbs);
    let only_a = scene.render(&[first]).unwrap();
    let only_b = scene.render(&[second]).unwrap();
    let both = scene.render(&[first, second]).unwrap();
    assert!(covered(&both) > covered(&only_a) && covered(&both) > covered(&only_b));
    assert_eq!(scene.renderer.crowd_visible(a), Some(inside));
    assert_eq!(scene.renderer.crowd_visible(b), None);
    let stats = scene.renderer.frame_stats().unwrap();
    assert_eq!((stats.instances, stats.visible), ((chars.len() + far.len()) as u32, Some(inside)));
    // Crowd b's palettes are its own.
    let gpu = scene.renderer.crowd_palettes(b).unwrap();
    let c = Character::at(Vec3::zeros(), 2, 0.6);
    let j = stretchy.joint_count();
    assert!(skinned_diff(&f.mesh, &gpu[3 * j..], &cpu_palette(&stretchy, &c, SkinMethod::Lbs)) <= 1e-5 * f.diagonal());
    assert!(scene.renderer.crowd_palettes(a).is_err(), "the book path has no palette buffer");
    common::assert_clean(&scene.ctx);
}

/// `anim_crowd::crowd::Crowd` packs the records the renderer reads: its characters draw, and the
/// GPU palette of each equals the CPU reader's at the record's frames.
#[test]
fn anim_core_crowd_feeds_the_renderer() {
    use anim_crowd::crowd::{CharacterDesc, Crowd};
    let f = Fixture::new();
    let mut scene = Scene::new(&f, 64);
    let atlas = f.atlas(2, TextureLayout::SkinMatrix, TexelFormat::F32);
    let id = scene.renderer.add_crowd(scene.mesh, &atlas, 8).unwrap();
    let mut crowd = Crowd::new(atlas.clips());
    for i in 0..6 {
        let desc = CharacterDesc {
            position: Vec3::new(i as f32 * 0.5 - 1.5, 0.2, 0.0),
            rotation: Quat::identity(),
            scale: 0.5,
            clip: (i % 2) as u32,
            time: 0.1 * i as f32,
            speed: 1.0 + 0.1 * i as f32,
        };
        crowd.add(desc).unwrap();
    }
    for _ in 0..3 {
        crowd.update(0.13);
        scene.renderer.set_crowd_instances(id, crowd.instances()).unwrap();
        let img = scene.render(&[draw(id, CrowdPath::PaletteVertex, SkinMethod::Lbs)]).unwrap();
        assert!(covered(&img) > 50);
        let gpu = scene.renderer.crowd_palettes(id).unwrap();
        let j = atlas.joint_count();
        for (i, c) in crowd.instances().iter().enumerate() {
            let a = FramePair { frame0: c.frames[0], frame1: c.frames[1], t: c.factors[0] };
            let b = (c.factors[2] > 0.0)
                .then_some((FramePair { frame0: c.frames[2], frame1: c.frames[3], t: c.factors[1] }, c.factors[2]));
            let mut want = Palette::new(SkinMethod::Lbs);
            atlas.palette(a, b, SkinMethod::Lbs, &mut want).unwrap();
            let d = skinned_diff(&f.mesh, &gpu[i * j..(i + 1) * j], want.matrices().unwrap());
            assert!(d <= 1e-5 * f.diagonal(), "character {i}: {d}");
        }
    }
    common::assert_clean(&scene.ctx);
}

/// More characters than one dispatch row of 65,535 workgroups holds: the palette and
/// skinning passes fold their workgroups into rows, and the last characters get the right
/// palettes on both palette paths, listed (culled) and not.
#[test]
fn crowds_beyond_one_dispatch_row() {
    let f = Fixture::new();
    let mut scene = Scene::new(&f, 32);
    let atlas = f.atlas(2, TextureLayout::SkinMatrix, TexelFormat::F32);
    let n = 70_000usize;
    let tol = 1e-5 * f.diagonal();
    let id = scene.renderer.add_crowd(scene.mesh, &atlas, n as u32).unwrap();
    // All stand in view (tiny, on top of each other) so culling lists them all.
    let chars: Vec<Character> = (0..n)
        .map(|i| {
            let mut c = Character::at(Vec3::new(0.0, 0.2, 0.0), i % 2, (i % 97) as f32 * 0.013);
            c.scale = 0.05;
            c
        })
        .collect();
    let inst: Vec<_> = chars.iter().map(|c| c.instance(&atlas)).collect();
    scene.renderer.set_crowd_instances(id, &inst).unwrap();
    let joints = atlas.joint_count();
    for path in [CrowdPath::PaletteVertex, CrowdPath::PaletteCompute] {
        for cull in [false, true] {
            scene.render(&[CrowdDraw { cull, ..draw(id, path, SkinMethod::Lbs) }]).unwrap();
            if cull {
                assert_eq!(scene.renderer.crowd_visible(id), Some(n as u32), "{path}");
            }
            let gpu = scene.renderer.crowd_palettes(id).unwrap();
            for i in [0, 1, 65_535, 65_536, n - 2, n - 1] {
                let want = cpu_palette(&atlas, &chars[i], SkinMethod::Lbs);
                let d = skinned_diff(&f.mesh, &gpu[i * joints..(i + 1) * joints], &want);
                assert!(d <= tol, "{path} cull {cull} character {i}: {d} > {tol}");
            }
        }
    }
    common::assert_clean(&scene.ctx);
}
