//! How far animation-atlas playback is from the source clips, on the shared test models and
//! the mannequin: every clip baked at 30 and 60 Hz in each layout, the largest vertex
//! error (LBS) as a fraction of the bind-pose bounding-box diagonal, against the bounds
//! documented in `docs/bake-error.md`.
//!
//! `cargo test -p anim-gltf --test bake_error -- --nocapture` prints the table.

use anim_core::clip::Clip;
use anim_core::pose::Skeleton;
use anim_core::skin::{Mesh, Skin};
use anim_crowd::atlas::{AnimAtlas, AtlasSource, BakeSettings, TexelFormat, TextureLayout};
use anim_crowd::atlas::{AtlasError, bake_error};

fn asset(rel: &str) -> String {
    format!("{}/../../shared/assets/{rel}", env!("CARGO_MANIFEST_DIR"))
}

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
    Character { name, skeleton: m.skeleton, skin: m.skins[0].skin.clone(), meshes, clips: m.clips }
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
