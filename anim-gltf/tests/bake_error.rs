//! How far animation-atlas playback is from the source clips, on the shared test models and
//! the mannequin: every clip baked at 30 and 60 Hz in each layout, the largest vertex
//! error (LBS) as a fraction of the bind-pose bounding-box diagonal, against the bounds
//! documented in `docs/bake-error.md`; and the metric itself, on synthetic clips whose
//! error is known in closed form, within tight bounds on both sides.
//!
//! `cargo test -p anim-gltf --test bake_error -- --nocapture` prints the table.

use anim_core::clip::Clip;
use anim_core::clip::{Interpolation, JointTracks, Track};
use anim_core::pose::JointDesc;
use anim_core::pose::Skeleton;
use anim_core::skin::Influences;
use anim_core::skin::{Mesh, Skin};
use anim_crowd::atlas::{AnimAtlas, AtlasSource, BakeSettings, TexelFormat, TextureLayout};
use anim_crowd::atlas::{AtlasError, bake_error};
use anim_math::{Quat, Transform, Vec3};
use anim_testkit::assets::path_str as asset;

/// A character: skeleton, the skin, the meshes it skins, the clips.
struct Character {
    name: &'static str,
    skeleton: Skeleton,
    skin: Skin,
    meshes: Vec<Mesh>,
    clips: Vec<Clip>,
}

fn gltf(name: &'static str, rel: &str) -> Character {
    let m = anim_gltf::load(asset(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    assert!(!m.skins.is_empty(), "{rel}: no skin");
    let meshes: Vec<Mesh> = m.meshes.iter().filter(|i| i.skin == Some(0)).map(|i| i.data.clone()).collect();
    assert!(!meshes.is_empty(), "{rel}: no mesh skinned by skin 0");
    Character {
        name,
        skeleton: m.skeleton,
        skin: m.skins[0].skin.clone(),
        meshes,
        clips: m.clips.iter().map(|c| anim_core::clip::Clip::clone(c)).collect(),
    }
}

fn mannequin() -> Character {
    let m = anim_mannequin::build();
    let skin = Skin::from_skeleton(&m.skeleton);
    Character { name: "mannequin", skeleton: m.skeleton, skin, meshes: vec![m.mesh], clips: m.clips }
}

/// The four atlas variants measured.
const VARIANTS: [(TextureLayout, TexelFormat); 4] = [
    (TextureLayout::ModelTrs, TexelFormat::F32),
    (TextureLayout::SkinMatrix, TexelFormat::F32),
    (TextureLayout::SkinDualQuat, TexelFormat::F32),
    (TextureLayout::ModelTrs, TexelFormat::F16),
];

/// Documented bounds (fraction of the bind-pose diagonal), about twice the measured value
/// (`docs/bake-error.md`): `(character, rate, layout, format, bound)`.
const BOUNDS: &[(&str, u32, TextureLayout, TexelFormat, f32)] = &[
    ("Fox", 30, TextureLayout::ModelTrs, TexelFormat::F32, 2.3e-2),
    ("Fox", 30, TextureLayout::SkinMatrix, TexelFormat::F32, 2.2e-2),
    ("Fox", 30, TextureLayout::SkinDualQuat, TexelFormat::F32, 2.4e-2),
    ("Fox", 30, TextureLayout::ModelTrs, TexelFormat::F16, 2.3e-2),
    ("Fox", 60, TextureLayout::ModelTrs, TexelFormat::F32, 1.4e-2),
    ("Fox", 60, TextureLayout::SkinMatrix, TexelFormat::F32, 1.4e-2),
    ("Fox", 60, TextureLayout::SkinDualQuat, TexelFormat::F32, 1.4e-2),
    ("Fox", 60, TextureLayout::ModelTrs, TexelFormat::F16, 1.4e-2),
    ("CesiumMan", 30, TextureLayout::ModelTrs, TexelFormat::F32, 7.9e-3),
    ("CesiumMan", 30, TextureLayout::SkinMatrix, TexelFormat::F32, 7.9e-3),
    ("CesiumMan", 30, TextureLayout::SkinDualQuat, TexelFormat::F32, 7.9e-3),
    ("CesiumMan", 30, TextureLayout::ModelTrs, TexelFormat::F16, 7.9e-3),
    ("CesiumMan", 60, TextureLayout::ModelTrs, TexelFormat::F32, 4.7e-3),
    ("CesiumMan", 60, TextureLayout::SkinMatrix, TexelFormat::F32, 4.7e-3),
    ("CesiumMan", 60, TextureLayout::SkinDualQuat, TexelFormat::F32, 4.7e-3),
    ("CesiumMan", 60, TextureLayout::ModelTrs, TexelFormat::F16, 4.9e-3),
    ("Woman", 30, TextureLayout::ModelTrs, TexelFormat::F32, 1.2e-2),
    ("Woman", 30, TextureLayout::SkinMatrix, TexelFormat::F32, 1.2e-2),
    ("Woman", 30, TextureLayout::ModelTrs, TexelFormat::F16, 1.2e-2),
    ("Woman", 60, TextureLayout::ModelTrs, TexelFormat::F32, 5.6e-3),
    ("Woman", 60, TextureLayout::SkinMatrix, TexelFormat::F32, 5.6e-3),
    ("Woman", 60, TextureLayout::ModelTrs, TexelFormat::F16, 5.6e-3),
    ("mannequin", 30, TextureLayout::ModelTrs, TexelFormat::F32, 3.4e-2),
    ("mannequin", 30, TextureLayout::SkinMatrix, TexelFormat::F32, 3.4e-2),
    ("mannequin", 30, TextureLayout::SkinDualQuat, TexelFormat::F32, 3.4e-2),
    ("mannequin", 30, TextureLayout::ModelTrs, TexelFormat::F16, 3.4e-2),
    ("mannequin", 60, TextureLayout::ModelTrs, TexelFormat::F32, 8.5e-3),
    ("mannequin", 60, TextureLayout::SkinMatrix, TexelFormat::F32, 8.4e-3),
    ("mannequin", 60, TextureLayout::SkinDualQuat, TexelFormat::F32, 8.3e-3),
    ("mannequin", 60, TextureLayout::ModelTrs, TexelFormat::F16, 8.4e-3),
];

fn bound(name: &str, rate: u32, layout: TextureLayout, format: TexelFormat) -> Option<f32> {
    BOUNDS.iter().find(|b| b.0 == name && b.1 == rate && b.2 == layout && b.3 == format).map(|b| b.4)
}

#[test]
fn atlas_playback_stays_within_the_documented_error() {
    let characters = [
        gltf("Fox", "Fox/Fox.glb"),
        gltf("CesiumMan", "CesiumMan/CesiumMan.glb"),
        gltf("Woman", "Woman/Woman.gltf"),
        mannequin(),
    ];
    println!("| model | rate | layout | format | clips | frames | max error / diagonal | worst clip |");
    println!("|---|---|---|---|---|---|---|---|");
    let mut failures = Vec::new();
    for c in &characters {
        let meshes: Vec<&Mesh> = c.meshes.iter().collect();
        let clips: Vec<&Clip> = c.clips.iter().collect();
        let sources: Vec<AtlasSource> = c.clips.iter().map(|clip| AtlasSource { clip, looping: true }).collect();
        for rate in [30u32, 60] {
            let mut rigid = None;
            for (layout, format) in VARIANTS {
                let settings = BakeSettings { rate: rate as f32, layout, format };
                let atlas = match AnimAtlas::bake(&c.skeleton, &c.skin, &meshes, &sources, &settings) {
                    Ok(a) => a,
                    Err(AtlasError::NotRigid { .. }) if layout == TextureLayout::SkinDualQuat => {
                        // Only allowed when the other layouts found the skin non-rigid.
                        assert_eq!(rigid, Some(false), "{}: dq bake refused a rigid skin", c.name);
                        println!("| {} | {rate} | {layout} | {format} | – | – | not rigid | – |", c.name);
                        continue;
                    }
                    Err(e) => panic!("{} at {rate} Hz, {layout} {format}: {e}", c.name),
                };
                if layout == TextureLayout::ModelTrs && format == TexelFormat::F32 {
                    rigid = Some(atlas.is_rigid());
                }
                let report = bake_error(&atlas, &c.skeleton, &c.skin, &meshes, &clips, 4)
                    .unwrap_or_else(|e| panic!("{}: {e}", c.name));
                let worst = report.clips.iter().max_by(|a, b| a.max_fraction.total_cmp(&b.max_fraction));
                println!(
                    "| {} | {rate} | {layout} | {format} | {} | {} | {:.3e} | {} |",
                    c.name,
                    atlas.clips().len(),
                    atlas.width(),
                    report.max_fraction,
                    worst.map_or(String::new(), |w| if w.name.is_empty() {
                        format!("#{}", report.clips.iter().position(|x| std::ptr::eq(x, w)).unwrap_or(0))
                    } else {
                        w.name.clone()
                    })
                );
                assert!(report.max_fraction.is_finite());
                match bound(c.name, rate, layout, format) {
                    Some(b) if report.max_fraction <= b => {}
                    b => failures.push(format!(
                        "{} {rate} Hz {layout} {format}: {:.3e} over the bound {b:?}",
                        c.name, report.max_fraction
                    )),
                }
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// One joint at the origin with a vertex at distance 1 from it on the x axis and one on it,
/// so the bind-pose diagonal is exactly 1 and `max_fraction` equals `max_distance`.
fn one_joint() -> (Skeleton, Skin, Mesh) {
    let skeleton = Skeleton::new(vec![JointDesc::new("root", None, Transform::IDENTITY)]).unwrap();
    let skin = Skin::from_skeleton(&skeleton);
    let influences = Influences::new(1, vec![0, 0], vec![1.0, 1.0], 1).unwrap();
    let mesh = Mesh { positions: vec![Vec3::zeros(), Vec3::x()], influences: Some(influences), ..Mesh::default() };
    (skeleton, skin, mesh)
}

/// The bake error of `clip` baked at 30 Hz (frames at `k/30`; its duration a whole number of
/// frames) into `layout`, with the four samples a frame that `bake_error` places at
/// `(f + (s + ½)/4)/30`: the largest distance, the fraction and the time it was found at.
fn synthetic_error(clip: &Clip, layout: TextureLayout) -> (f32, f32, f32) {
    let (skeleton, skin, mesh) = one_joint();
    let settings = BakeSettings { rate: 30.0, layout, format: TexelFormat::F32 };
    let sources = [AtlasSource { clip, looping: false }];
    let atlas = AnimAtlas::bake(&skeleton, &skin, &[&mesh], &sources, &settings).unwrap();
    let frames = (clip.duration() * 30.0).round() as u32 + 1;
    assert_eq!((atlas.clips()[0].frame_count, atlas.clips()[0].rate), (frames, 30.0));
    let report = bake_error(&atlas, &skeleton, &skin, &[&mesh], &[clip], 4).unwrap();
    assert_eq!(report.diagonal, 1.0);
    (report.max_distance, report.max_fraction, report.clips[0].at_time)
}

/// The metric against errors known in closed form, from below and above: a translation
/// "tent" whose peak lies between two frames, and a turn at constant angular velocity.
///
/// Tent: `x(t)` rises linearly from 0 at `t = 0` to 1 at `t_p` and falls back to 0 at
/// `t = 1`. Baked frames lie on the tent; between frames `t_f < t_p < t_f + h` (`h = 1/30`)
/// playback follows the chord, which cuts the peak by `(s₁ + s₂)·a·b/h`, with the slopes
/// `s₁ = 1/t_p`, `s₂ = 1/(1 − t_p)` and `a = t_p − t_f`, `b = h − a`; everywhere else the
/// tent is linear and the chord exact. The peak sits on a sample (`a = 3h/8`), so the
/// metric must find that maximum. A translation blends linearly in every layout (the dual
/// quaternion of a pure translation keeps a unit real part), so all three agree.
///
/// Turn: for half a second the joint turns about z at ω = 30 rad/s (slerp between keys
/// 0.05 s apart is a uniform turn), so consecutive frames are θ = ω·h = 1 rad apart. At fraction `u` of a
/// frame the exact vertex (radius 1) is at angle `uθ`. The TRS and dual-quaternion layouts
/// nlerp the rotation, which turns by `φ = 2·atan2(u·sin(θ/2), (1 − u) + u·cos(θ/2))`, so
/// the vertex is `2·sin(|uθ − φ|/2)` off; the matrix layout blends the matrices, which puts
/// the vertex on the chord, `|(1 − u) + u·e^{iθ} − e^{iuθ}|` off. The metric's maximum is
/// the largest over its samples `u ∈ {1/8, 3/8, 5/8, 7/8}`.
///
/// Bounds: 2e-6 either side. f32 rounding of coordinates of size 1 is a few 1e-7, and the
/// playback's frame position `t·30` is rounded to its ulp (up to 9.5e-7 of a frame below
/// frame 16, which moves the turn by θ times that); a metric that missed the peak, sampled
/// elsewhere or blended otherwise would be off by 1e-4 or more.
#[test]
fn bake_error_matches_closed_forms() {
    const TOL: f64 = 2e-6;
    let h = 1.0 / 30.0f64;
    // The tent, its peak on the second sample of frame 12: the time bake_error computes.
    let t_p = (12.0f32 + 0.375) / 30.0;
    let times = vec![0.0, t_p, 1.0];
    let keys = vec![Vec3::zeros(), Vec3::x(), Vec3::zeros()];
    let mut tent = JointTracks::new(0);
    tent.translation = Some(Track::new(Interpolation::Linear, times, keys).unwrap());
    let tent = Clip::new("tent", vec![tent], vec![]).unwrap();
    let tp = f64::from(t_p);
    let (a, b) = (0.375 * h, 0.625 * h);
    let want = (1.0 / tp + 1.0 / (1.0 - tp)) * a * b / h;
    for layout in [TextureLayout::ModelTrs, TextureLayout::SkinMatrix, TextureLayout::SkinDualQuat] {
        let (distance, fraction, at) = synthetic_error(&tent, layout);
        println!("tent, {layout}: {distance:.7} (closed form {want:.7}) at {at}");
        assert!((f64::from(distance) - want).abs() < TOL, "tent, {layout}: {distance} vs {want}");
        assert_eq!(fraction, distance, "the diagonal is 1");
        assert_eq!(at, t_p, "tent, {layout}: the largest error is at the peak");
    }
    // The turn.
    let omega = 30.0f32;
    let times: Vec<f32> = (0..=10).map(|k| k as f32 * 0.05).collect();
    let keys = times.iter().map(|t| Quat::from_axis_angle(&Vec3::z_axis(), omega * t).into_inner()).collect();
    let mut turn = JointTracks::new(0);
    turn.rotation = Some(Track::new(Interpolation::Linear, times, keys).unwrap());
    let turn = Clip::new("turn", vec![turn], vec![]).unwrap();
    let theta = f64::from(omega) * h;
    let samples = [0.125, 0.375, 0.625, 0.875];
    let nlerp = samples
        .iter()
        .map(|&u: &f64| {
            let phi = 2.0 * (u * (theta / 2.0).sin()).atan2((1.0 - u) + u * (theta / 2.0).cos());
            2.0 * ((u * theta - phi).abs() / 2.0).sin()
        })
        .fold(0.0, f64::max);
    let chord = samples
        .iter()
        .map(|&u: &f64| {
            let (x, y) = ((1.0 - u) + u * theta.cos() - (u * theta).cos(), u * theta.sin() - (u * theta).sin());
            x.hypot(y)
        })
        .fold(0.0, f64::max);
    for (layout, want) in
        [(TextureLayout::ModelTrs, nlerp), (TextureLayout::SkinDualQuat, nlerp), (TextureLayout::SkinMatrix, chord)]
    {
        let (distance, ..) = synthetic_error(&turn, layout);
        println!("turn, {layout}: {distance:.7} (closed form {want:.7})");
        assert!((f64::from(distance) - want).abs() < TOL, "turn, {layout}: {distance} vs {want}");
    }
}
