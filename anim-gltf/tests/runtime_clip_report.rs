//! Runtime clips on every shared asset with a skin and animations, and on the mannequin:
//! bytes next to the glTF source, and the largest skinned-position deviation from exact
//! glTF sampling, which must stay within the tolerance asked for.
//!
//! `cargo test -p anim-gltf --test runtime_clip_report -- --nocapture` prints the table;
//! with `RUNTIME_CLIP_REPORT=docs/runtime-clips.md` (relative to the workspace root) it is
//! also written there.

use anim_core::clip::SoaSampler;
use anim_core::clip::{Clip, RuntimeClip, TimePolicy};
use anim_core::offline::JointRadii;
use anim_core::pose::{Pose, Skeleton};
use anim_core::skin::skinning::{NormalMode, SkinningInput, SkinningOutput, linear_blend};
use anim_core::skin::{Mesh, Skin, palette};
use anim_math::{Mat4, Vec3};
use anim_testkit::assets::path_str as asset;

/// Float allowance on top of the tolerance: the skinned positions themselves are computed
/// in `f32` through a chain of matrix products, so two samplings that agree exactly still
/// differ by a few ulps of the model's coordinates. 4·10⁻⁷ of the bounding-box diagonal
/// (about 3 ulps at the diagonal's magnitude).
const FLOAT_ALLOWANCE: f32 = 4e-7;

/// Tolerances reported, metres.
const TOLERANCES: [f32; 3] = [0.0001, 0.001, 0.01];

struct Character {
    name: String,
    skeleton: Skeleton,
    skin: Skin,
    meshes: Vec<Mesh>,
    clips: Vec<Clip>,
    /// glTF bytes of each clip's sampler accessors (input and output), when from a file.
    source_bytes: Vec<Option<usize>>,
}

fn gltf(rel: &str) -> Option<Character> {
    let path = asset(rel);
    let m = anim_gltf::load(&path).unwrap_or_else(|e| panic!("{rel}: {e}"));
    if m.skins.is_empty() || m.clips.is_empty() {
        return None;
    }
    let meshes: Vec<Mesh> = m.meshes.iter().filter(|i| i.skin == Some(0)).map(|i| i.data.clone()).collect();
    if meshes.is_empty() {
        return None;
    }
    let doc = gltf::Gltf::open(&path).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let mut source_bytes = Vec::new();
    for anim in doc.animations() {
        let mut accessors: Vec<usize> = Vec::new();
        let mut bytes = 0;
        for s in anim.samplers() {
            for a in [s.input(), s.output()] {
                if !accessors.contains(&a.index()) {
                    accessors.push(a.index());
                    bytes += a.count() * a.size();
                }
            }
        }
        source_bytes.push(Some(bytes));
    }
    // The importer may skip animations it cannot use; report bytes only when counts agree.
    if source_bytes.len() != m.clips.len() {
        source_bytes = vec![None; m.clips.len()];
    }
    Some(Character {
        name: rel.to_owned(),
        skeleton: m.skeleton,
        skin: m.skins[0].skin.clone(),
        meshes,
        clips: m.clips.iter().map(|c| Clip::clone(c)).collect(),
        source_bytes,
    })
}

fn mannequin() -> Character {
    let m = anim_mannequin::build();
    let skin = Skin::from_skeleton(&m.skeleton);
    let n = m.clips.len();
    Character {
        name: "mannequin".into(),
        skeleton: m.skeleton,
        skin,
        meshes: vec![m.mesh],
        clips: m.clips,
        source_bytes: vec![None; n],
    }
}

/// Skins `pose` into `out` (one buffer a mesh).
fn skin_pose(c: &Character, pose: &Pose, model: &mut [Mat4], pal: &mut [Mat4], out: &mut [Vec<Vec3>]) {
    pose.local_to_model(&c.skeleton, model).expect("pose sized for the skeleton");
    palette::skinning_matrices(model, &c.skin, pal).expect("skin fits the skeleton");
    for (mesh, o) in c.meshes.iter().zip(out.iter_mut()) {
        let influences = mesh.influences.as_ref().expect("skinned mesh");
        let input = SkinningInput { influences, positions: &mesh.positions, normals: None };
        let mut output = SkinningOutput { positions: o, normals: None };
        linear_blend(&input, pal, NormalMode::Direct, &mut output).expect("mesh fits the skin");
    }
}

struct Row {
    character: String,
    clip: String,
    source: Option<usize>,
    bytes: [usize; 3],
    error_m: [f32; 3],
    fraction: [f32; 3],
}

fn measure(c: &Character) -> (Vec<Row>, Vec<String>) {
    let meshes: Vec<&Mesh> = c.meshes.iter().collect();
    let radii = JointRadii::from_skin(&c.skeleton, &c.skin, &meshes).expect("invertible binds");
    let diagonal = c
        .meshes
        .iter()
        .filter_map(Mesh::bounds)
        .fold(None, |acc: Option<(Vec3, Vec3)>, (lo, hi)| Some(acc.map_or((lo, hi), |(a, b)| (a.inf(&lo), b.sup(&hi)))))
        .map_or(1.0, |(lo, hi)| (hi - lo).norm());
    let n = c.skeleton.len();
    let mut model = vec![Mat4::identity(); n];
    let mut pal = vec![Mat4::identity(); c.skin.len()];
    let mut exact: Vec<Vec<Vec3>> = c.meshes.iter().map(|m| vec![Vec3::zeros(); m.vertex_count()]).collect();
    let mut approx = exact.clone();
    let mut rows = Vec::new();
    let mut failures = Vec::new();
    for (ci, clip) in c.clips.iter().enumerate() {
        let name = if clip.name().is_empty() { format!("#{ci}") } else { clip.name().to_owned() };
        let mut times: Vec<f32> = clip.key_times();
        let steps = (clip.duration() * 120.0).ceil() as usize;
        times.extend((0..=steps).map(|i| (i as f32 / 120.0).min(clip.duration())));
        times.sort_by(f32::total_cmp);
        times.dedup();
        let mut row = Row {
            character: c.name.clone(),
            clip: name.clone(),
            source: c.source_bytes[ci],
            bytes: [0; 3],
            error_m: [0.0; 3],
            fraction: [0.0; 3],
        };
        for (k, &tol) in TOLERANCES.iter().enumerate() {
            let rc = RuntimeClip::compile(clip, &c.skeleton, &radii, tol).expect("clip fits the skeleton");
            let mut ctx = rc.new_context();
            let mut worst = 0.0f32;
            let mut pose_a = c.skeleton.rest_pose().clone();
            let mut pose_b = c.skeleton.rest_pose().clone();
            for &t in &times {
                pose_a.locals_mut().copy_from_slice(c.skeleton.rest_pose().locals());
                clip.sample(t, TimePolicy::Clamp, &mut pose_a).expect("clip fits");
                rc.sample_pose(&mut ctx, t, TimePolicy::Clamp, &mut pose_b).expect("clip fits");
                skin_pose(c, &pose_a, &mut model, &mut pal, &mut exact);
                skin_pose(c, &pose_b, &mut model, &mut pal, &mut approx);
                for (e, a) in exact.iter().zip(&approx) {
                    for (p, q) in e.iter().zip(a) {
                        worst = worst.max((p - q).norm());
                    }
                }
            }
            row.bytes[k] = rc.byte_size();
            row.error_m[k] = worst;
            row.fraction[k] = worst / diagonal;
            if worst > tol + FLOAT_ALLOWANCE * diagonal {
                failures.push(format!(
                    "{} {name} at {} mm: {:.4} mm (diagonal {diagonal:.3})",
                    c.name,
                    tol * 1000.0,
                    worst * 1000.0
                ));
            }
        }
        rows.push(row);
    }
    (rows, failures)
}

#[test]
fn runtime_clips_stay_within_the_tolerance_at_the_skin() {
    let mut characters: Vec<Character> = [
        "Fox/Fox.glb",
        "CesiumMan/CesiumMan.glb",
        "Woman/Woman.gltf",
        "RiggedFigure/RiggedFigure.glb",
        "RiggedSimple/RiggedSimple.glb",
        "SimpleSkin/SimpleSkin.gltf",
        "DQ/dq.gltf",
    ]
    .iter()
    .filter_map(|r| gltf(r))
    .collect();
    characters.push(mannequin());
    let mut table = String::new();
    table.push_str(
        "| model | clip | glTF bytes | bytes @0.1 mm | bytes @1 mm | bytes @10 mm | error @0.1 mm (mm / diag) | error @1 mm (mm / diag) | error @10 mm (mm / diag) |\n",
    );
    table.push_str("|---|---|---|---|---|---|---|---|---|\n");
    let mut failures = Vec::new();
    for c in &characters {
        let (rows, f) = measure(c);
        failures.extend(f);
        for r in rows {
            let src = r.source.map_or("–".to_owned(), |b| b.to_string());
            let err: Vec<String> =
                (0..3).map(|k| format!("{:.4} / {:.2e}", r.error_m[k] * 1000.0, r.fraction[k])).collect();
            table.push_str(&format!(
                "| {} | {} | {src} | {} | {} | {} | {} | {} | {} |\n",
                r.character, r.clip, r.bytes[0], r.bytes[1], r.bytes[2], err[0], err[1], err[2]
            ));
        }
    }
    println!("{table}");
    if let Ok(path) = std::env::var("RUNTIME_CLIP_REPORT") {
        let full = format!("{}/../{path}", env!("CARGO_MANIFEST_DIR"));
        let doc = std::fs::read_to_string(&full).unwrap_or_default();
        let marker = "<!-- table -->";
        let head = doc.split(marker).next().unwrap_or("").to_owned();
        std::fs::write(&full, format!("{head}{marker}\n{table}")).expect("report path writable");
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
