//! Animation atlas: baking, the CPU reader (what the shaders compute), the file format.

use anim_core::clip::{Clip, Interpolation, JointTracks, TimePolicy, Track};
use anim_core::pose::{JointDesc, Pose, Skeleton};
use anim_core::skin::{Influences, Mesh, Palette, Skin, SkinMethod, palette};
use anim_crowd::atlas::{AnimAtlas, AtlasError, AtlasSource, BakeSettings, FramePair, TexelFormat, TextureLayout};
use anim_crowd::atlas::{MAX_WIDTH, Texels, UnknownTexelFormat, UnknownTextureLayout};
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

/// Model-space transform of joints 0 and 1 under `turn_clip` angles `(b0, b1)` (already
/// multiplied by the time), as `(translation, rotation)`.
fn model_trs(b0: f32, b1: f32) -> [(Vec3, Quat); 2] {
    let r0 = rot_z(b0);
    let t0 = Vec3::new(0.5, 0.0, 0.0);
    let t1 = t0 + r0 * Vec3::new(0.0, 1.0, 0.0);
    [(t0, r0), (t1, rot_z(b0 + b1))]
}

/// `T·R·S` of a model transform times the joint's inverse bind.
fn skinning(t: Vec3, r: Quat, ib: &Mat4) -> Mat4 {
    Transform::new(t, r, Vec3::new(1.0, 1.0, 1.0)).to_matrix() * ib
}

#[test]
fn model_trs_between_frames_is_lerp_and_nlerp_of_the_frames() {
    let (a0, a1) = (1.2f32, -0.8f32);
    let clip = turn_clip("turn", 1.0, a0, a1);
    let atlas = bake(&[&clip], settings(10.0, TextureLayout::ModelTrs, TexelFormat::F32));
    let ib = Skin::from_skeleton(&skeleton()).inverse_bind().to_vec();
    for (f, t) in [(0u32, 0.5f32), (3, 0.25), (9, 0.9)] {
        let pair = FramePair { frame0: f, frame1: f + 1, t };
        let got = read(&atlas, pair, None);
        let (ta, tb) = (f as f32 / 10.0, (f + 1) as f32 / 10.0);
        let (m0, m1) = (model_trs(a0 * ta, a1 * ta), model_trs(a0 * tb, a1 * tb));
        for j in 0..2 {
            let tr = m0[j].0 * (1.0 - t) + m1[j].0 * t;
            let q = anim_math::quat::nlerp(&m0[j].1, &m1[j].1, t);
            let want = skinning(tr, q, &ib[j]);
            assert!((got[j] - want).abs().max() < 1e-5, "frame {f} t {t} joint {j}");
        }
        // Meaningful: the chord differs from the arc the exact clip follows.
        let exact_mid = exact(&clip, (f as f32 + t) / 10.0);
        assert!(max_diff(&got, &exact_mid) > 1e-4, "the interpolation should not be exact at frame {f}");
        assert!(max_diff(&got, &exact_mid) < 1e-2);
    }
}

#[test]
fn half_floats_round_but_stay_close() {
    let clip = turn_clip("turn", 1.0, 1.2, -0.8);
    for layout in TextureLayout::ALL {
        let full = bake(&[&clip], settings(10.0, layout, TexelFormat::F32));
        let half = bake(&[&clip], settings(10.0, layout, TexelFormat::F16));
        assert_eq!(half.format(), TexelFormat::F16);
        assert!(matches!(half.texels(), Texels::F16(_)));
        assert_eq!(half.texel_bytes().len(), full.texel_bytes().len() / 2);
        let mut worst = 0.0f32;
        for y in 0..full.height() {
            for x in 0..full.width() {
                let (a, b) = (full.texel(x, y).unwrap(), half.texel(x, y).unwrap());
                for c in 0..4 {
                    // Half floats keep 11 significant bits: relative error at most 2⁻¹¹.
                    assert!((a[c] - b[c]).abs() <= a[c].abs() * 4.9e-4 + 1e-7, "{layout} texel ({x}, {y})");
                }
            }
        }
        for f in 0..full.width() {
            let p = FramePair { frame0: f, frame1: f, t: 0.0 };
            worst = worst.max(max_diff(&read(&full, p, None), &read(&half, p, None)));
        }
        assert!(worst > 0.0, "{layout}: f16 should round something");
        assert!(worst < 3e-3, "{layout}: f16 palette error {worst}");
        assert!(full.texel(full.width(), 0).is_none() && full.texel(0, full.height()).is_none());
    }
}

#[test]
fn two_clip_blend_weights() {
    let (a, b) = (turn_clip("a", 1.0, 1.0, 0.5), turn_clip("b", 2.0, -1.0, 1.5));
    let ib = Skin::from_skeleton(&skeleton()).inverse_bind().to_vec();
    for layout in TextureLayout::ALL {
        let atlas = bake(&[&a, &b], settings(10.0, layout, TexelFormat::F32));
        // Clip A at 0.3 s (between frames), clip B at 1.2 s.
        let (pa, pb) = (atlas.frame_pair(0, 0.35).unwrap(), atlas.frame_pair(1, 1.25).unwrap());
        let only_a = read(&atlas, pa, None);
        let only_b = read(&atlas, pb, None);
        assert!(max_diff(&only_a, &only_b) > 0.1);
        assert!(max_diff(&read(&atlas, pa, Some((pb, 0.0))), &only_a) < 1e-6, "{layout} weight 0");
        assert!(max_diff(&read(&atlas, pa, Some((pb, 1.0))), &only_b) < 1e-5, "{layout} weight 1");
        // Half way, at frame times: A at 0.3 s (angles 0.3, 0.15), B at 1.2 s (−0.6, 0.9).
        let fa = FramePair { frame0: 3, frame1: 3, t: 0.0 };
        let fb =
            FramePair { frame0: atlas.clips()[1].first_frame + 12, frame1: atlas.clips()[1].first_frame + 12, t: 0.0 };
        let got = read(&atlas, fa, Some((fb, 0.5)));
        let (ma, mb) = (model_trs(0.3, 0.15), model_trs(-0.6, 0.9));
        for j in 0..2 {
            let want = match layout {
                // Translations average; nlerp half way between two turns about z is the
                // turn by the mean angle.
                TextureLayout::ModelTrs => {
                    let angle = if j == 0 { (0.3 - 0.6) / 2.0 } else { (0.45 + 0.3) / 2.0 };
                    skinning((ma[j].0 + mb[j].0) / 2.0, rot_z(angle), &ib[j])
                }
                // Matrix rows average.
                TextureLayout::SkinMatrix => {
                    (skinning(ma[j].0, ma[j].1, &ib[j]) + skinning(mb[j].0, mb[j].1, &ib[j])) / 2.0
                }
                // The normalized mean of the two dual quaternions.
                TextureLayout::SkinDualQuat => {
                    let q = anim_math::dual::blend([
                        (&anim_math::dual::from_rigid_matrix(&skinning(ma[j].0, ma[j].1, &ib[j])), 0.5),
                        (&anim_math::dual::from_rigid_matrix(&skinning(mb[j].0, mb[j].1, &ib[j])), 0.5),
                    ]);
                    q.to_homogeneous()
                }
            };
            assert!((got[j] - want).abs().max() < 1e-5, "{layout} joint {j}: {got:?} vs {want:?}", got = got[j]);
        }
    }
}

#[test]
fn looping_and_clamped_frame_pairs_at_and_past_the_end() {
    let clip = turn_clip("turn", 1.0, 1.0, 0.0);
    let sk = skeleton();
    let skin = Skin::from_skeleton(&sk);
    let m = mesh();
    let src = [AtlasSource { clip: &clip, looping: false }, AtlasSource { clip: &clip, looping: true }];
    let atlas =
        AnimAtlas::bake(&sk, &skin, &[&m], &src, &settings(10.0, TextureLayout::ModelTrs, TexelFormat::F32)).unwrap();
    let (clamped, looping) = (&atlas.clips()[0], &atlas.clips()[1]);
    assert_eq!((clamped.first_frame, looping.first_frame), (0, 11));
    let fp = |c: usize, t: f32| atlas.frame_pair(c, t).unwrap();
    let near = |p: FramePair, f0: u32, f1: u32, t: f32| p.frame0 == f0 && p.frame1 == f1 && (p.t - t).abs() < 1e-4;
    // Before the end both interpolate the last interval.
    assert!(near(fp(0, 0.95), 9, 10, 0.5), "{:?}", fp(0, 0.95));
    assert!(near(fp(1, 0.95), 20, 21, 0.5), "{:?}", fp(1, 0.95));
    // At and past the end: clamped holds the last frame, looping wraps.
    assert!(near(fp(0, 1.0), 10, 10, 0.0));
    assert!(near(fp(0, 1.25), 10, 10, 0.0));
    assert!(near(fp(1, 1.0), 11, 12, 0.0), "{:?}", fp(1, 1.0));
    assert!(near(fp(1, 1.25), 13, 14, 0.5), "{:?}", fp(1, 1.25));
    assert!(atlas.frame_pair(2, 0.0).is_none());
    // The clamped end reads the clip's last pose.
    assert!(max_diff(&read(&atlas, fp(0, 7.0), None), &exact(&clip, 1.0)) < 1e-5);
}

#[test]
fn three_clips_are_laid_out_one_after_another() {
    let (a, b) = (turn_clip("a", 1.0, 1.0, 0.0), turn_clip("b", 0.5, 0.0, 1.0));
    // A clip of one key a channel lasts zero seconds.
    let mut jt = JointTracks::new(1);
    jt.rotation = Some(Track::new(Interpolation::Linear, vec![0.0], vec![rot_z(0.7).into_inner()]).unwrap());
    let still = Clip::new("still", vec![jt], vec![]).unwrap();
    assert_eq!(still.duration(), 0.0);
    let atlas = bake(&[&a, &b, &still], settings(10.0, TextureLayout::SkinMatrix, TexelFormat::F32));
    let layout: Vec<_> = atlas.clips().iter().map(|c| (c.name.as_str(), c.first_frame, c.frame_count)).collect();
    assert_eq!(layout, [("a", 0, 11), ("b", 11, 6), ("still", 17, 2)]);
    assert_eq!(atlas.width(), 19);
    assert_eq!(atlas.height(), 9);
    assert_eq!(atlas.texels().len(), 19 * 9);
    assert_eq!(atlas.clips()[2].rate, 10.0);
    // The still clip's two frames are identical and hold its pose.
    for y in 0..atlas.height() {
        assert_eq!(atlas.texel(17, y), atlas.texel(18, y));
    }
    let p = atlas.frame_pair(2, 0.3).unwrap();
    assert!(max_diff(&read(&atlas, p, None), &exact(&still, 0.0)) < 1e-5);
    // Clip b's first column is its own start, not clip a's end.
    assert!(max_diff(&read(&atlas, at_frame(&atlas, 1, 0), None), &exact(&b, 0.0)) < 1e-5);
    assert!(max_diff(&read(&atlas, at_frame(&atlas, 1, 5), None), &exact(&b, 0.5)) < 1e-5);
}

#[test]
fn bounds_cover_every_frame() {
    let clip = turn_clip("turn", 1.0, 2.0, 1.0);
    let atlas = bake(&[&clip], settings(10.0, TextureLayout::ModelTrs, TexelFormat::F32));
    let m = mesh();
    let (mut lo, mut hi) = (Vec3::repeat(f32::MAX), Vec3::repeat(f32::MIN));
    for f in 0..=10 {
        let pal = exact(&clip, f as f32 / 10.0);
        let mut out = vec![Vec3::zeros(); m.positions.len()];
        let input = anim_core::skin::skinning::SkinningInput {
            influences: m.influences.as_ref().unwrap(),
            positions: &m.positions,
            normals: None,
        };
        let mut o = anim_core::skin::skinning::SkinningOutput { positions: &mut out, normals: None };
        anim_core::skin::skinning::linear_blend(&input, &pal, Default::default(), &mut o).unwrap();
        for p in &out {
            lo = lo.inf(p);
            hi = hi.sup(p);
        }
    }
    let (blo, bhi) = atlas.clips()[0].bounds;
    assert!((blo - lo).norm() < 1e-5 && (bhi - hi).norm() < 1e-5, "{blo:?} {bhi:?} vs {lo:?} {hi:?}");
    // The turn sweeps the strip to negative x, beyond its bind-pose extent.
    assert!(blo.x < -0.5);
}

#[test]
fn dual_quaternion_layout_refuses_scale() {
    let mut jt = JointTracks::new(1);
    jt.scale = Some(
        Track::new(Interpolation::Linear, vec![0.0, 1.0], vec![Vec3::new(1.0, 1.0, 1.0), Vec3::new(1.5, 1.0, 1.0)])
            .unwrap(),
    );
    let scaled = Clip::new("grow", vec![jt], vec![]).unwrap();
    let ok = turn_clip("turn", 1.0, 1.0, 0.5);
    let sk = skeleton();
    let skin = Skin::from_skeleton(&sk);
    let m = mesh();
    let src = [AtlasSource { clip: &ok, looping: true }, AtlasSource { clip: &scaled, looping: true }];
    let err = AnimAtlas::bake(&sk, &skin, &[&m], &src, &settings(10.0, TextureLayout::SkinDualQuat, TexelFormat::F32))
        .unwrap_err();
    match &err {
        AtlasError::NotRigid { clip, name, frame, joint, joint_name } => {
            assert_eq!((*clip, name.as_str(), *frame, *joint, joint_name.as_str()), (1, "grow", 1, 1, "mid"));
        }
        e => panic!("expected NotRigid, got {e:?}"),
    }
    assert!(err.to_string().contains("grow") && err.to_string().contains("mid"));
    // Other layouts bake it, marked not rigid, and refuse dual-quaternion skinning.
    let atlas =
        AnimAtlas::bake(&sk, &skin, &[&m], &src, &settings(10.0, TextureLayout::ModelTrs, TexelFormat::F32)).unwrap();
    assert!(!atlas.is_rigid());
    let mut out = Palette::default();
    assert!(matches!(
        atlas.palette(FramePair::default(), None, SkinMethod::Dq, &mut out),
        Err(AtlasError::DqNeedsRigid)
    ));
    // The scale is stored and read back.
    let p = at_frame(&atlas, 1, 10);
    assert!(max_diff(&read(&atlas, p, None), &exact(&scaled, 1.0)) < 1e-5);
}

#[test]
fn dual_quaternion_palettes_match_the_exact_ones() {
    let clip = turn_clip("turn", 1.0, 1.2, -0.8);
    for layout in TextureLayout::ALL {
        let atlas = bake(&[&clip], settings(10.0, layout, TexelFormat::F32));
        let mut out = Palette::new(SkinMethod::Lbs);
        let mut scratch = Vec::new();
        atlas.palette_with_scratch(at_frame(&atlas, 0, 4), None, SkinMethod::Dq, &mut out, &mut scratch).unwrap();
        let dq = out.dual_quats().expect("a dual-quaternion palette");
        assert!(dq.is_rigid());
        let want = exact(&clip, 0.4);
        for (q, m) in dq.dual_quats().iter().zip(&want) {
            let p = Vec3::new(0.3, 1.7, -0.2);
            let a = q.transform_point(&p.into()).coords;
            let b = m.transform_point(&p.into()).coords;
            assert!((a - b).norm() < 1e-5, "{layout}");
        }
    }
}

#[test]
fn palettes_reuse_their_storage() {
    let (a, b) = (turn_clip("a", 1.0, 1.0, 0.5), turn_clip("b", 2.0, -1.0, 1.5));
    let atlas = bake(&[&a, &b], settings(30.0, TextureLayout::ModelTrs, TexelFormat::F16));
    let mut out = Palette::new(SkinMethod::Lbs);
    let mut scratch = Vec::new();
    let pb = Some((atlas.frame_pair(1, 0.2).unwrap(), 0.3));
    atlas.palette_with_scratch(atlas.frame_pair(0, 0.1).unwrap(), pb, SkinMethod::Lbs, &mut out, &mut scratch).unwrap();
    let ptr = out.matrices().unwrap().as_ptr();
    for k in 0..50 {
        let pa = atlas.frame_pair(0, k as f32 * 0.03).unwrap();
        atlas.palette_with_scratch(pa, pb, SkinMethod::Lbs, &mut out, &mut scratch).unwrap();
        assert_eq!(out.matrices().unwrap().as_ptr(), ptr, "the matrix palette was reallocated");
    }
    atlas.palette_with_scratch(atlas.frame_pair(0, 0.1).unwrap(), pb, SkinMethod::Dq, &mut out, &mut scratch).unwrap();
    let (p1, p2) = (out.dual_quats().unwrap().dual_quats().as_ptr(), scratch.as_ptr());
    for k in 0..50 {
        let pa = atlas.frame_pair(0, k as f32 * 0.03).unwrap();
        atlas.palette_with_scratch(pa, pb, SkinMethod::Dq, &mut out, &mut scratch).unwrap();
        assert_eq!((out.dual_quats().unwrap().dual_quats().as_ptr(), scratch.as_ptr()), (p1, p2));
    }
}

#[test]
fn reader_rejects_bad_samples() {
    let clip = turn_clip("turn", 1.0, 1.0, 0.5);
    let atlas = bake(&[&clip], settings(10.0, TextureLayout::SkinMatrix, TexelFormat::F32));
    let mut out = Palette::default();
    let w = atlas.width();
    let bad = FramePair { frame0: 0, frame1: w, t: 0.5 };
    assert!(matches!(
        atlas.palette(bad, None, SkinMethod::Lbs, &mut out),
        Err(AtlasError::ColumnOutOfRange { which: "clip A frame1", column, width }) if column == w && width == w
    ));
    let ok = FramePair { frame0: 0, frame1: 1, t: 0.5 };
    assert!(matches!(
        atlas.palette(ok, Some((FramePair { frame0: w + 5, ..ok }, 0.5)), SkinMethod::Lbs, &mut out),
        Err(AtlasError::ColumnOutOfRange { which: "clip B frame0", .. })
    ));
    assert!(matches!(
        atlas.palette(ok, Some((ok, f32::NAN)), SkinMethod::Lbs, &mut out),
        Err(AtlasError::NonFiniteFactor { which: "clip B weight", .. })
    ));
    assert!(matches!(
        atlas.palette(FramePair { t: f32::INFINITY, ..ok }, None, SkinMethod::Lbs, &mut out),
        Err(AtlasError::NonFiniteFactor { which: "clip A factor", .. })
    ));
}

#[test]
fn bake_errors_name_what_is_wrong() {
    let sk = skeleton();
    let skin = Skin::from_skeleton(&sk);
    let m = mesh();
    let clip = turn_clip("turn", 1.0, 1.0, 0.5);
    let src = [AtlasSource { clip: &clip, looping: true }];
    let s = settings(30.0, TextureLayout::ModelTrs, TexelFormat::F32);
    assert!(matches!(AnimAtlas::bake(&sk, &skin, &[&m], &[], &s), Err(AtlasError::NoClips)));
    for rate in [0.0, -1.0, f32::NAN, f32::INFINITY] {
        let r = AnimAtlas::bake(&sk, &skin, &[&m], &src, &BakeSettings { rate, ..s });
        assert!(matches!(r, Err(AtlasError::BadRate(_))), "rate {rate}");
    }
    // 1000 s at 30 Hz is 30 001 columns.
    let long = turn_clip("long", 1000.0, 1.0, 0.5);
    let r = AnimAtlas::bake(&sk, &skin, &[&m], &[AtlasSource { clip: &long, looping: true }], &s);
    assert!(matches!(r, Err(AtlasError::TooWide { width, max: MAX_WIDTH }) if width > 16384), "{r:?}");
    // Two clips that fit alone but not together.
    let half = turn_clip("half", 300.0, 1.0, 0.5);
    let two = [AtlasSource { clip: &half, looping: true }, AtlasSource { clip: &half, looping: true }];
    assert!(AnimAtlas::bake(&sk, &skin, &[&m], &two[..1], &s).is_ok());
    assert!(matches!(AnimAtlas::bake(&sk, &skin, &[&m], &two, &s), Err(AtlasError::TooWide { .. })));
    // A clip animating joint 7 of a 3-joint skeleton.
    let mut jt = JointTracks::new(7);
    jt.translation = Some(Track::new(Interpolation::Linear, vec![0.0], vec![Vec3::zeros()]).unwrap());
    let far = Clip::new("far", vec![jt], vec![]).unwrap();
    let r = AnimAtlas::bake(&sk, &skin, &[&m], &[src[0], AtlasSource { clip: &far, looping: true }], &s);
    assert!(matches!(&r, Err(AtlasError::Clip { index: 1, name, .. }) if name == "far"), "{r:?}");
    // A skin made for a bigger skeleton.
    let big = Skeleton::new(vec![
        JointDesc::new("a", None, Transform::IDENTITY),
        JointDesc::new("b", Some(0), Transform::IDENTITY),
        JointDesc::new("c", Some(1), Transform::IDENTITY),
        JointDesc::new("d", Some(2), Transform::IDENTITY),
    ])
    .unwrap();
    let big_skin = Skin::from_skeleton(&big);
    assert!(matches!(AnimAtlas::bake(&sk, &big_skin, &[&m], &src, &s), Err(AtlasError::Pose(_))));
    // A mesh using skin joint 2 with a 2-joint skin.
    let small_skin = Skin::new(vec![0, 1], sk.inverse_bind()[..2].to_vec(), &sk).unwrap();
    assert!(matches!(
        AnimAtlas::bake(&sk, &small_skin, &[&m], &src, &s),
        Err(AtlasError::MeshJoints { mesh: 0, needed: 3, joints: 2 })
    ));
}

#[test]
fn names_parse_and_print() {
    for l in TextureLayout::ALL {
        assert_eq!(l.name().parse::<TextureLayout>(), Ok(l));
        assert_eq!(l.to_string(), l.name());
    }
    assert_eq!("book".parse::<TextureLayout>(), Ok(TextureLayout::ModelTrs));
    assert_eq!("DQ".parse::<TextureLayout>(), Ok(TextureLayout::SkinDualQuat));
    assert_eq!("trs".parse::<TextureLayout>(), Err(UnknownTextureLayout("trs".into())));
    assert_eq!([3, 3, 2], TextureLayout::ALL.map(TextureLayout::texels_per_joint));
    for f in TexelFormat::ALL {
        assert_eq!(f.name().parse::<TexelFormat>(), Ok(f));
        assert_eq!(f.to_string(), f.name());
    }
    assert_eq!("f64".parse::<TexelFormat>(), Err(UnknownTexelFormat("f64".into())));
}

#[test]
fn check_joints_compares_count_and_names() {
    let atlas = bake(&[&turn_clip("t", 1.0, 1.0, 0.0)], settings(10.0, TextureLayout::ModelTrs, TexelFormat::F32));
    let names: Vec<String> = ["root", "mid", "tip"].map(String::from).to_vec();
    atlas.check_joints(&names).unwrap();
    assert!(matches!(atlas.check_joints(&names[..2]), Err(AtlasError::JointCount { atlas: 3, model: 2 })));
    let mut other = names.clone();
    other[2] = "hand".into();
    assert!(matches!(
        atlas.check_joints(&other),
        Err(AtlasError::JointName { index: 2, atlas, model }) if atlas == "tip" && model == "hand"
    ));
}

fn file_of(atlas: &AnimAtlas) -> Vec<u8> {
    let mut bytes = Vec::new();
    atlas.write_to(&mut bytes).unwrap();
    bytes
}

fn read_bytes(bytes: &[u8]) -> Result<AnimAtlas, AtlasError> {
    AnimAtlas::read_from(&mut &bytes[..])
}

/// A one-clip atlas ("turn", 11 frames) whose file layout the corruption tests rely on.
fn small_atlas(format: TexelFormat) -> AnimAtlas {
    bake(&[&turn_clip("turn", 1.0, 1.0, 0.5)], settings(10.0, TextureLayout::ModelTrs, format))
}

#[test]
fn files_round_trip() {
    let (a, b) = (turn_clip("walk", 1.0, 1.0, 0.5), turn_clip("ünïcode", 0.7, -1.0, 1.5));
    for layout in TextureLayout::ALL {
        for format in TexelFormat::ALL {
            let atlas = bake(&[&a, &b], settings(24.0, layout, format));
            let bytes = file_of(&atlas);
            assert_eq!(&bytes[..8], b"ANIMATLS");
            let back = read_bytes(&bytes).unwrap();
            assert_eq!(back, atlas, "{layout} {format}");
            assert_eq!(back.texel_bytes(), atlas.texel_bytes());
        }
    }
    let atlas = bake(&[&a, &b], settings(24.0, TextureLayout::SkinDualQuat, TexelFormat::F16));
    let path = std::env::temp_dir().join(format!("anim-atlas-test-{}.atlas", std::process::id()));
    atlas.save(&path).unwrap();
    let back = AnimAtlas::load(&path);
    let _ = std::fs::remove_file(&path);
    assert_eq!(back.unwrap(), atlas);
    let missing = AnimAtlas::load(std::env::temp_dir().join("no-such-dir-for-atlas/none.atlas"));
    assert!(matches!(missing, Err(AtlasError::File { .. })));
}

#[test]
fn every_truncation_is_reported() {
    for format in TexelFormat::ALL {
        let bytes = file_of(&small_atlas(format));
        for n in 0..bytes.len() {
            match read_bytes(&bytes[..n]) {
                Err(AtlasError::Truncated { .. }) => {}
                other => panic!("{format}: {n} of {} bytes gave {other:?}", bytes.len()),
            }
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(matches!(read_bytes(&longer), Err(AtlasError::TrailingBytes)));
    }
}

/// The file with the 4 bytes at `at` replaced by `v`.
fn patch(bytes: &[u8], at: usize, v: &[u8]) -> Vec<u8> {
    let mut b = bytes.to_vec();
    b[at..at + v.len()].copy_from_slice(v);
    b
}

#[test]
fn corrupted_fields_are_typed_errors() {
    let bytes = file_of(&small_atlas(TexelFormat::F32));
    // Offsets: magic 0, version 8, layout 12, format 16, joints 20, width 24, rigid 28,
    // clip count 29, clip 0: name length 33, "turn" 37, first 41, count 45, rate 49,
    // duration 53, looping 57, bounds 58..82; joint 0 name length 82.
    assert_eq!(&bytes[37..41], b"turn");
    let r = |at: usize, v: &[u8]| read_bytes(&patch(&bytes, at, v));
    let field = |e: Result<AnimAtlas, AtlasError>| match e {
        Err(AtlasError::BadField { what, .. }) => what,
        other => panic!("expected BadField, got {other:?}"),
    };
    assert!(matches!(r(0, b"ANIMATLZ"), Err(AtlasError::BadMagic(m)) if &m == b"ANIMATLZ"));
    assert!(matches!(r(8, &2u32.to_le_bytes()), Err(AtlasError::UnsupportedVersion(2))));
    assert_eq!(field(r(12, &7u32.to_le_bytes())), "layout");
    assert_eq!(field(r(16, &2u32.to_le_bytes())), "format");
    assert_eq!(field(r(20, &u32::MAX.to_le_bytes())), "joint count");
    assert_eq!(field(r(20, &70_000u32.to_le_bytes())), "joint count");
    assert_eq!(field(r(24, &100_000u32.to_le_bytes())), "width");
    assert_eq!(field(r(28, &[2])), "rigid flag");
    assert_eq!(field(r(29, &1_000_000u32.to_le_bytes())), "clip count");
    assert_eq!(field(r(29, &0u32.to_le_bytes())), "clip count");
    assert!(matches!(r(33, &0xFFFF_FFF0u32.to_le_bytes()), Err(AtlasError::NameTooLong { len: 0xFFFF_FFF0, .. })));
    // A length under the cap that the stream cannot satisfy.
    assert!(matches!(r(33, &60_000u32.to_le_bytes()), Err(AtlasError::Truncated { .. })));
    assert!(matches!(r(37, &[0xFF]), Err(AtlasError::NotUtf8 { .. })));
    assert!(matches!(
        r(41, &10u32.to_le_bytes()),
        Err(AtlasError::ClipRange { clip: 0, first: 10, end: 21, width: 11, .. })
    ));
    assert!(field(r(45, &1u32.to_le_bytes())).contains("frame count"));
    assert!(matches!(r(45, &u32::MAX.to_le_bytes()), Err(AtlasError::ClipRange { .. })));
    assert!(matches!(r(49, &f32::NAN.to_le_bytes()), Err(AtlasError::NonFinite { what, .. }) if what.contains("rate")));
    assert!(field(r(49, &(-3.0f32).to_le_bytes())).contains("rate"));
    assert!(field(r(53, &(-1.0f32).to_le_bytes())).contains("duration"));
    assert!(field(r(57, &[9])).contains("looping"));
    assert!(
        matches!(r(58, &f32::INFINITY.to_le_bytes()), Err(AtlasError::NonFinite { what, .. }) if what.contains("bounds"))
    );
    // The last texel's last channel.
    let n = bytes.len();
    assert!(
        matches!(r(n - 4, &f32::NAN.to_le_bytes()), Err(AtlasError::NonFinite { what, .. }) if what == "texel (10, 8)")
    );
    // A half-float infinity.
    let half = file_of(&small_atlas(TexelFormat::F16));
    let n = half.len();
    assert!(matches!(read_bytes(&patch(&half, n - 2, &0x7C00u16.to_le_bytes())), Err(AtlasError::NonFinite { .. })));
    // The dq layout must be marked rigid.
    let dq = file_of(&bake(
        &[&turn_clip("turn", 1.0, 1.0, 0.5)],
        settings(10.0, TextureLayout::SkinDualQuat, TexelFormat::F32),
    ));
    assert_eq!(field(read_bytes(&patch(&dq, 28, &[0]))), "rigid flag");
}

#[test]
fn a_huge_declared_image_fails_on_the_missing_bytes() {
    // A valid header declaring 16384 × 16383 texels (4 GiB) followed by no texel at all.
    let mut b = Vec::new();
    b.extend_from_slice(b"ANIMATLS");
    for v in [1u32, 0, 0, 5461, 16384] {
        b.extend_from_slice(&v.to_le_bytes());
    }
    b.push(1);
    b.extend_from_slice(&1u32.to_le_bytes());
    b.extend_from_slice(&0u32.to_le_bytes()); // clip name ""
    for v in [0u32, 16384] {
        b.extend_from_slice(&v.to_le_bytes());
    }
    for v in [30.0f32, 1.0] {
        b.extend_from_slice(&v.to_le_bytes());
    }
    b.push(1);
    b.extend_from_slice(&[0; 24]);
    for _ in 0..5461 {
        b.extend_from_slice(&0u32.to_le_bytes());
    }
    for _ in 0..5461 {
        for v in Mat4::identity().as_slice() {
            b.extend_from_slice(&v.to_le_bytes());
        }
    }
    match read_bytes(&b) {
        Err(AtlasError::Truncated { what }) => assert_eq!(what, "texel (0, 0)"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn garbage_never_panics() {
    let good = file_of(&small_atlas(TexelFormat::F16));
    // A tiny deterministic generator (xorshift).
    let mut s = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    for round in 0..2000 {
        let bytes: Vec<u8> = if round % 2 == 0 {
            // Pure noise, sometimes behind a valid magic and version.
            let n = (next() % 200) as usize;
            let mut v: Vec<u8> = (0..n).map(|_| next() as u8).collect();
            if round % 4 == 0 && v.len() >= 12 {
                v[..8].copy_from_slice(b"ANIMATLS");
                v[8..12].copy_from_slice(&1u32.to_le_bytes());
            }
            v
        } else {
            // The good file with a few bytes flipped.
            let mut v = good.clone();
            for _ in 0..1 + next() % 4 {
                let i = (next() as usize) % v.len();
                v[i] ^= (next() as u8) | 1;
            }
            v
        };
        // Any result is fine as long as it is a result; a success must round-trip.
        if let Ok(a) = read_bytes(&bytes) {
            assert_eq!(read_bytes(&file_of(&a)).unwrap(), a);
        }
    }
}

#[test]
fn matrix_and_dual_quaternion_layouts_between_frames() {
    let clip = turn_clip("turn", 1.0, 1.2, -0.8);
    let (f, t) = (4u32, 0.3f32);
    let (m0, m1) = (exact(&clip, 0.4), exact(&clip, 0.5));
    let pair = FramePair { frame0: f, frame1: f + 1, t };
    // Matrix rows: lerp.
    let atlas = bake(&[&clip], settings(10.0, TextureLayout::SkinMatrix, TexelFormat::F32));
    let got = read(&atlas, pair, None);
    for j in 0..3 {
        assert!((got[j] - (m0[j] * (1.0 - t) + m1[j] * t)).abs().max() < 1e-5, "matrix joint {j}");
    }
    // Dual quaternions: normalized linear blend.
    let atlas = bake(&[&clip], settings(10.0, TextureLayout::SkinDualQuat, TexelFormat::F32));
    let got = read(&atlas, pair, None);
    for j in 0..3 {
        let (q0, q1) = (anim_math::dual::from_rigid_matrix(&m0[j]), anim_math::dual::from_rigid_matrix(&m1[j]));
        let want = anim_math::dual::blend([(&q0, 1.0 - t), (&q1, t)]).to_homogeneous();
        assert!((got[j] - want).abs().max() < 1e-5, "dq joint {j}");
        // The blend is rigid (not a lerp of matrices, which shrinks).
        let a = got[j].fixed_view::<3, 3>(0, 0);
        assert!((a.transpose() * a - anim_math::Mat3::identity()).abs().max() < 1e-5);
    }
}

/// The DQ reference is what the shaders compute: a rigid palette holding the rigid part
/// (`dual::from_rigid_matrix`) of the interpolated matrix on the matrix layouts, whose slight
/// shrink between frames is dropped, and the interpolated dual quaternion on the DQ layout.
#[test]
fn dual_quaternion_palettes_between_frames_are_rigid() {
    let (a, b) = (turn_clip("a", 1.0, 1.2, -0.8), turn_clip("b", 2.0, -1.0, 1.5));
    for layout in TextureLayout::ALL {
        let atlas = bake(&[&a, &b], settings(10.0, layout, TexelFormat::F32));
        let pa = FramePair { frame0: 4, frame1: 5, t: 0.4 };
        let pb = Some((atlas.frame_pair(1, 0.77).unwrap(), 0.35));
        let lbs = read(&atlas, pa, pb);
        let mut out = Palette::new(SkinMethod::Dq);
        atlas.palette(pa, pb, SkinMethod::Dq, &mut out).unwrap();
        let dq = out.dual_quats().unwrap();
        assert!(dq.is_rigid(), "{layout}");
        assert!(dq.scales().iter().all(|s| *s == anim_math::Mat3::identity()), "{layout}");
        let mut shrink = 0.0f32;
        for (j, (q, m)) in dq.dual_quats().iter().zip(&lbs).enumerate() {
            let want = anim_math::dual::from_rigid_matrix(m).to_homogeneous();
            let got = q.to_homogeneous();
            assert!((got - want).abs().max() < 2e-6, "{layout} joint {j}: {got} vs {want}");
            shrink = shrink.max(1.0 - m.fixed_view::<3, 1>(0, 0).norm());
        }
        if layout == TextureLayout::SkinMatrix {
            // Lerped matrix rows do shrink: the reference drops that, it keeps no scale.
            assert!(shrink > 1e-4, "{shrink}");
        }
    }
}

/// The progress hooks see every clip once, in order, and change nothing: the same atlas and
/// the same error report as without them.
#[test]
fn progress_hooks_see_every_clip_in_order() {
    use anim_crowd::atlas::{bake_error, bake_error_with_progress};
    let clips = [turn_clip("a", 1.0, 0.5, 0.2), turn_clip("b", 0.5, -0.3, 0.9), turn_clip("c", 2.0, 1.0, 1.0)];
    let refs: Vec<&Clip> = clips.iter().collect();
    let (sk, m) = (skeleton(), mesh());
    let skin = Skin::from_skeleton(&sk);
    let src: Vec<_> = refs.iter().map(|c| AtlasSource { clip: c, looping: true }).collect();
    let s = settings(10.0, TextureLayout::ModelTrs, TexelFormat::F32);
    let mut seen = Vec::new();
    let atlas = AnimAtlas::bake_with_progress(&sk, &skin, &[&m], &src, &s, &mut |i| seen.push(i)).unwrap();
    assert_eq!(seen, [0, 1, 2]);
    assert_eq!(atlas, bake(&refs, s));
    let mut seen = Vec::new();
    let report = bake_error_with_progress(&atlas, &sk, &skin, &[&m], &refs, 2, &mut |i| seen.push(i)).unwrap();
    assert_eq!(seen, [0, 1, 2]);
    assert_eq!(report, bake_error(&atlas, &sk, &skin, &[&m], &refs, 2).unwrap());
    assert_eq!(report.clips.len(), 3);
}
