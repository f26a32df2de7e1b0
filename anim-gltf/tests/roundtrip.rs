//! Export → import round trip of the default character, and the Khronos validator on it.

use anim_core::clip::TimePolicy;

use anim_core::skin::Skin;
use anim_gltf::{ExportMesh, export_glb_with_morphs, load_from_bytes};
use std::path::{Path, PathBuf};
use std::process::Command;

fn export_default() -> (anim_mannequin::Mannequin, Vec<u8>) {
    let m = anim_mannequin::build();
    let skin = Skin::from_skeleton(&m.skeleton);
    let mesh = ExportMesh { name: "mannequin", mesh: &m.mesh, skin: Some(&skin) };
    let bytes =
        export_glb_with_morphs(&m.skeleton, &[mesh], &[Some(&m.morph)], &m.clips).expect("the mannequin exports");
    (m, bytes)
}

#[test]
fn mannequin_round_trip() {
    let (m, bytes) = export_default();
    assert_eq!(&bytes[..4], b"glTF");
    let back = load_from_bytes(&bytes, None).unwrap();
    assert!(back.warnings.is_empty(), "{:?}", back.warnings);
    // Skeleton: node i is joint i; one more node holds the mesh.
    assert_eq!(back.nodes.len(), m.skeleton.len() + 1);
    for i in 0..m.skeleton.len() {
        let j = back.nodes[i].joint;
        assert_eq!(back.skeleton.name(j), m.skeleton.name(i));
        assert_eq!(back.nodes[i].parent, m.skeleton.parent(i));
        let (a, b) = (back.skeleton.rest_pose().locals()[j], m.skeleton.rest_pose().locals()[i]);
        assert!((a.to_matrix() - b.to_matrix()).abs().max() < 1e-6);
    }
    // Mesh: same vertices in the same order, same influences (skin joints = nodes 0..22).
    assert_eq!(back.meshes.len(), 1);
    let inst = &back.meshes[0];
    assert_eq!(inst.skin, Some(0));
    assert_eq!(back.skins[0].nodes, (0..m.skeleton.len()).collect::<Vec<_>>());
    assert_eq!(inst.data.positions, m.mesh.positions);
    assert_eq!(inst.data.indices, m.mesh.indices);
    assert_eq!(inst.data.uvs, m.mesh.uvs);
    for (a, b) in inst.data.normals.iter().zip(&m.mesh.normals) {
        assert!((a - b).norm() < 1e-6);
    }
    assert_eq!(inst.data.influences, m.mesh.influences);
    // Clips: names, durations, curves, and sampled poses.
    assert_eq!(back.clips.len(), m.clips.len());
    for (c, o) in back.clips.iter().zip(&m.clips) {
        assert_eq!(c.name(), o.name());
        assert_eq!(c.duration(), o.duration());
        assert_eq!(c.curves(), o.curves(), "{}", c.name());
        for k in 0..=20 {
            let t = o.duration() * k as f32 / 20.0 + 0.013;
            let mut a = back.skeleton.rest_pose().clone();
            back.sample_pose(back.find_clip(o.name()).unwrap(), t, TimePolicy::Wrap, &mut a).unwrap();
            let mut b = m.skeleton.rest_pose().clone();
            o.sample(t, TimePolicy::Wrap, &mut b).unwrap();
            for i in 0..m.skeleton.len() {
                let (x, y) = (a.locals()[back.nodes[i].joint], b.locals()[i]);
                assert!((x.to_matrix() - y.to_matrix()).abs().max() < 1e-5, "{} t={t} joint {i}", o.name());
            }
        }
    }
    // Exporting is deterministic, and the crate's helpers give the same file and model.
    assert_eq!(export_default().1, bytes);
    assert_eq!(anim_gltf::mannequin_glb(), bytes);
    assert_eq!(anim_gltf::mannequin_model().meshes[0].data.positions, m.mesh.positions);
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("crate lies in the workspace").to_owned()
}

/// Runs `scripts/validate-gltf.sh` on `file`; `None` when the validator is not installed
/// and `ANIM_SKIP_GLTF_VALIDATOR=1` allows skipping.
fn validate(file: &Path) -> Option<(bool, String)> {
    let root = repo_root();
    let installed = root.join(".deps/node/node_modules/gltf-validator/package.json").is_file();
    let node = Command::new("node").arg("--version").output().is_ok_and(|o| o.status.success());
    if !(installed && node) {
        if std::env::var("ANIM_SKIP_GLTF_VALIDATOR").as_deref() == Ok("1") {
            eprintln!("note: glTF-Validator not installed; skipped (ANIM_SKIP_GLTF_VALIDATOR=1)");
            return None;
        }
        panic!(
            "the Khronos glTF-Validator is not installed (node: {node}, package: {installed}); run \
             `scripts/validate-gltf.sh --install-only`, or set ANIM_SKIP_GLTF_VALIDATOR=1 to skip"
        );
    }
    let out = Command::new(root.join("scripts/validate-gltf.sh")).arg(file).output().expect("the script runs");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    Some((out.status.success(), text))
}

#[test]
fn exported_mannequin_passes_the_khronos_validator() {
    let (_, bytes) = export_default();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let good = dir.join("anim-gltf-mannequin.glb");
    std::fs::write(&good, &bytes).unwrap();
    let Some((ok, text)) = validate(&good) else { return };
    assert!(ok, "validator reported errors:\n{text}");
    assert!(text.contains("errors=0"), "{text}");

    // The check is not a no-op: patch one vertex's weights in the binary chunk so that they
    // no longer sum to one (an error for the validator).
    let mut bad = bytes.clone();
    // Find the first vertex's weights (normalized back to [1, 0, 0, 0]) and make them [0.25, 0, 0, 0].
    let pattern: Vec<u8> = [1.0f32, 0.0, 0.0, 0.0].iter().flat_map(|f| f.to_le_bytes()).collect();
    let json_len = u32::from_le_bytes(bad[12..16].try_into().unwrap()) as usize;
    let bin_start = 20 + json_len + 8;
    let at = bad[bin_start..].windows(16).position(|s| s == pattern.as_slice()).expect("a unit weight") + bin_start;
    bad[at..at + 4].copy_from_slice(&0.25f32.to_le_bytes());
    let bad_path = dir.join("anim-gltf-bad-weights.glb");
    std::fs::write(&bad_path, &bad).unwrap();
    let (ok, text) = validate(&bad_path).expect("installed above");
    assert!(!ok, "the validator should reject non-normalized weights:\n{text}");
}
