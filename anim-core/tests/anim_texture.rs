//! Animation atlas: baking, the CPU reader (what the shaders compute), the file format.

use anim_core::{
    AnimAtlas, AtlasSource, BakeSettings, Clip, FramePair, Influences, Interpolation, JointDesc, JointTracks, Mesh,
    Palette, Pose, Skeleton, Skin, SkinMethod, TexelFormat, TextureLayout, TimePolicy, Track, palette,
};
use anim_math::{Mat4, Quat, Transform, Vec3};

/// Three joints in a chain up the y axis, one unit apart; the root sits at (0.5, 0, 0).
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

/// Joint 0 turns about z by `a0·t`, joint 1 by `a1·t`, over `duration` seconds (two keys:
/// linear slerp between them is a uniform turn).
fn turn_clip(name: &str, duration: f32, a0: f32, a1: f32) -> Clip {
    let times = vec![0.0, duration];
    let mut j0 = JointTracks::new(0);
    j0.rotation = Some(
        Track::new(Interpolation::Linear, times.clone(), vec![rot_z(0.0).into_inner(), rot_z(a0).into_inner()])
            .unwrap(),
    );
    let mut j1 = JointTracks::new(1);
    j1.rotation =
        Some(Track::new(Interpolation::Linear, times, vec![rot_z(0.0).into_inner(), rot_z(a1).into_inner()]).unwrap());
    Clip::new(name, vec![j0, j1], vec![]).unwrap()
}

/// A strip of vertices up the chain, each bound to the two nearest joints.
fn mesh() -> Mesh {
    let mut positions = Vec::new();
    let mut joints = Vec::new();
    let mut weights = Vec::new();
    for k in 0..=8 {
        let y = k as f32 * 0.25;
        for x in [0.3f32, 0.7] {
            positions.push(Vec3::new(x, y, 0.1));
            let j = ((y.floor() as u16).min(1), (y.floor() as u16 + 1).min(2));
            let f = y - y.floor();
            joints.extend_from_slice(&[j.0, j.1]);
            weights.extend_from_slice(&[1.0 - f, f]);
        }
    }
    let influences = Influences::new(2, joints, weights, 3).unwrap();
    Mesh { positions, influences: Some(influences), ..Mesh::default() }
}

fn settings(rate: f32, layout: TextureLayout, format: TexelFormat) -> BakeSettings {
    BakeSettings { rate, layout, format }
}

fn bake(clips: &[&Clip], s: BakeSettings) -> AnimAtlas {
    let sk = skeleton();
    let skin = Skin::from_skeleton(&sk);
    let m = mesh();
    let src: Vec<_> = clips.iter().map(|c| AtlasSource { clip: c, looping: true }).collect();
    AnimAtlas::bake(&sk, &skin, &[&m], &src, &s).unwrap()
}

/// The exact skinning matrices of `clip` at `time` (clamped), from the rest pose.
fn exact(clip: &Clip, time: f32) -> Vec<Mat4> {
    let sk = skeleton();
    let skin = Skin::from_skeleton(&sk);
    let mut pose: Pose = sk.rest_pose().clone();
    clip.sample(time, TimePolicy::Clamp, &mut pose).unwrap();
    let mut model = vec![Mat4::identity(); sk.len()];
    pose.local_to_model(&sk, &mut model).unwrap();
    let mut pal = vec![Mat4::identity(); skin.len()];
    palette::skinning_matrices(&model, &skin, &mut pal).unwrap();
    pal
}

fn read(atlas: &AnimAtlas, a: FramePair, b: Option<(FramePair, f32)>) -> Vec<Mat4> {
    let mut out = Palette::new(SkinMethod::Lbs);
    atlas.palette(a, b, SkinMethod::Lbs, &mut out).unwrap();
    out.matrices().unwrap().to_vec()
}

fn max_diff(a: &[Mat4], b: &[Mat4]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| (x - y).abs().max()).fold(0.0, f32::max)
}

fn at_frame(atlas: &AnimAtlas, clip: usize, f: u32) -> FramePair {
    let c = &atlas.clips()[clip];
    FramePair { frame0: c.first_frame + f, frame1: c.first_frame + f, t: 0.0 }
}

#[test]
fn frames_equal_the_exact_palette_in_every_layout() {
    let clip = turn_clip("turn", 1.0, 1.2, -0.8);
    for layout in TextureLayout::ALL {
        let atlas = bake(&[&clip], settings(10.0, layout, TexelFormat::F32));
        assert_eq!(atlas.height(), 3 * layout.texels_per_joint());
        let c = &atlas.clips()[0];
        assert_eq!(c.frame_count, 11);
        assert!((c.rate - 10.0).abs() < 1e-5);
        assert!(atlas.is_rigid());
        for f in 0..c.frame_count {
            let time = (f as f32 / c.rate).min(c.duration);
            let got = read(&atlas, at_frame(&atlas, 0, f), None);
            let want = exact(&clip, time);
            assert!(max_diff(&got, &want) < 1e-5, "{layout} frame {f}: {}", max_diff(&got, &want));
            // Through frame_pair at the frame time as well (a looping clip's end wraps to 0).
            if f + 1 < c.frame_count {
                let got = read(&atlas, atlas.frame_pair(0, time).unwrap(), None);
                assert!(max_diff(&got, &want) < 1e-5, "{layout} frame {f} via frame_pair");
            }
        }
    }
}
