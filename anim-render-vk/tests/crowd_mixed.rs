//! A crowd of three character types (different meshes, colours and atlases) played by one
//! `anim_crowd::crowd::Crowd` over the mixed clip list, on lavapipe with validation on:
//! culled together, each type's visible count is exact and each type is drawn (its colour
//! covers pixels); a type with no characters draws nothing; a clip index beyond every type
//! is a typed error.

mod common;

use anim_core::clip::{Clip, Interpolation, JointTracks, Track};
use anim_core::pose::{JointDesc, Skeleton};
use anim_core::skin::{Influences, Mesh, Skin};
use anim_crowd::atlas::{AnimAtlas, AtlasClip, AtlasSource, BakeSettings, TexelFormat, TextureLayout};
use anim_crowd::crowd::{CharacterDesc, Crowd};
use anim_math::{Quat, Transform, Vec3};
use anim_render_vk::{
    Camera, Coloring, CrowdDraw, CrowdError, CrowdType, FrameData, OFFSCREEN_FORMAT, Offscreen, RenderError, Renderer,
    RgbaImage,
};

fn skeleton() -> Skeleton {
    Skeleton::new(vec![
        JointDesc::new("root", None, Transform::from_translation(Vec3::zeros())),
        JointDesc::new("top", Some(0), Transform::from_translation(Vec3::new(0.0, 1.0, 0.0))),
    ])
    .unwrap()
}

fn lean(name: &str, angle: f32) -> Clip {
    let q = |a: f32| Quat::from_axis_angle(&Vec3::z_axis(), a).into_inner();
    let mut j1 = JointTracks::new(1);
    j1.rotation = Some(Track::new(Interpolation::Linear, vec![0.0, 1.0], vec![q(0.0), q(angle)]).unwrap());
    Clip::new(name, vec![j1], vec![]).unwrap()
}

/// A sphere of `radius` around (0, 1, 0) with `segments` around, weighted by height.
fn sphere(radius: f32, segments: u32) -> Mesh {
    let rings = 6u32;
    let mut positions = Vec::new();
    let (mut joints, mut weights) = (Vec::new(), Vec::new());
    for r in 0..=rings {
        let theta = std::f32::consts::PI * r as f32 / rings as f32;
        for s in 0..segments {
            let phi = std::f32::consts::TAU * s as f32 / segments as f32;
            let p = Vec3::new(
                radius * theta.sin() * phi.cos(),
                1.0 + radius * theta.cos(),
                radius * theta.sin() * phi.sin(),
            );
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

/// Pixels whose channel `k` exceeds both others by 40.
fn dominant(img: &RgbaImage, k: usize) -> usize {
    img.pixels
        .chunks_exact(4)
        .filter(|p| (0..3).filter(|&j| j != k).all(|j| i32::from(p[k]) > i32::from(p[j]) + 40))
        .count()
}

#[test]
fn a_crowd_of_three_types_draws_each_type() {
    let ctx = common::context();
    let mut renderer = Renderer::new(&ctx, OFFSCREEN_FORMAT).unwrap();
    let sk = skeleton();
    let settings = BakeSettings { rate: 15.0, layout: TextureLayout::SkinMatrix, format: TexelFormat::F32 };
    // Red round characters (one clip), green narrow ones (two clips), blue wide ones (one).
    let kinds = [
        (sphere(0.8, 12), [0.9, 0.1, 0.1], vec![lean("a", 0.5)]),
        (sphere(0.5, 5), [0.1, 0.9, 0.1], vec![lean("b0", -0.4), lean("b1", 0.9)]),
        (sphere(1.0, 4), [0.1, 0.1, 0.9], vec![lean("c", 0.2)]),
    ];
    let mut meshes = Vec::new();
    let mut atlases = Vec::new();
    for (mesh, color, clips) in &kinds {
        meshes.push(renderer.add_mesh(mesh, &Coloring::Uniform(*color)).unwrap());
        let src: Vec<_> = clips.iter().map(|clip| AtlasSource { clip, looping: true }).collect();
        atlases.push(AnimAtlas::bake(&sk, &Skin::from_skeleton(&sk), &[mesh], &src, &settings).unwrap());
    }
    let types: Vec<_> =
        meshes.iter().zip(&atlases).map(|(&mesh, atlas)| CrowdType { mesh, atlas, capacity: 8 }).collect();
    let id = renderer.add_mixed_crowd(&types).unwrap();
    let per_type = renderer.mixed_crowd_types(id).unwrap().to_vec();
    assert_eq!(per_type.len(), 3);
    // One Crowd over the mixed clip list: clips 0 (red), 1 and 2 (green), 3 (blue).
    let clips: Vec<AtlasClip> = atlases.iter().flat_map(|a| a.clips().iter().cloned()).collect();
    let mut crowd = Crowd::new(&clips);
    // In view: 4 red, 3 green (both clips), 2 blue, interleaved; out of view: one of each.
    let visible_clips = [0, 1, 3, 0, 2, 0, 3, 1, 0];
    for (i, &clip) in visible_clips.iter().enumerate() {
        let position = Vec3::new((i % 3) as f32 * 2.6 - 2.6, 0.0, (i / 3) as f32 * 2.6 - 2.6);
        let desc =
            CharacterDesc { position, rotation: Quat::identity(), scale: 1.0, clip, time: 0.1 * i as f32, speed: 1.0 };
        crowd.add(desc).unwrap();
    }
    for clip in [0, 2, 3] {
        let position = Vec3::new(0.0, 0.0, 200.0 + clip as f32);
        crowd
            .add(CharacterDesc { position, rotation: Quat::identity(), scale: 1.0, clip, time: 0.0, speed: 1.0 })
            .unwrap();
    }
    crowd.update(0.25);
    let camera = Camera { eye: Vec3::new(0.0, 8.0, 9.0), target: Vec3::new(0.0, 0.5, 0.0), ..Camera::default() };
    let mut target = Offscreen::new(&ctx, 128, 128).unwrap();
    let mut render = |renderer: &mut Renderer| {
        let mut frame = FrameData { camera, ..FrameData::default() };
        let template = CrowdDraw { cull: true, ..CrowdDraw::new(per_type[0]) };
        for d in renderer.mixed_crowd_draws(id, template) {
            frame.add_crowd(d);
        }
        target.render(renderer, &frame).unwrap();
        target.image().unwrap()
    };
    renderer.set_mixed_crowd_instances(id, crowd.instances()).unwrap();
    let img = render(&mut renderer);
    let visible: Vec<_> = per_type.iter().map(|&c| renderer.crowd_visible(c)).collect();
    assert_eq!(visible, vec![Some(4), Some(3), Some(2)]);
    for k in 0..3 {
        assert!(dominant(&img, k) > 100, "type {k} drawn: {} pixels", dominant(&img, k));
    }
    // Without the green characters: no green pixels, the others unchanged in count.
    let no_green: Vec<_> =
        crowd.instances().iter().filter(|r| !matches!(r.factors[3] as u32, 1 | 2)).copied().collect();
    renderer.set_mixed_crowd_instances(id, &no_green).unwrap();
    let img = render(&mut renderer);
    let visible: Vec<_> = per_type.iter().map(|&c| renderer.crowd_visible(c)).collect();
    assert_eq!(visible, vec![Some(4), Some(0), Some(2)]);
    assert_eq!(dominant(&img, 1), 0);
    assert!(dominant(&img, 0) > 100 && dominant(&img, 2) > 100);
    // A clip index beyond every type's clips.
    let mut bad = crowd.instances().to_vec();
    bad[2].factors[3] = 4.0;
    match renderer.set_mixed_crowd_instances(id, &bad) {
        Err(RenderError::Crowd(CrowdError::InvalidInstance { index: 2, .. })) => {}
        other => panic!("{other:?}"),
    }
    common::assert_clean(&ctx);
}
