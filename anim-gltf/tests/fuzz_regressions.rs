//! Every input the fuzzer ever crashed on (fuzz/regressions/, see FUZZING.md) goes through
//! the fuzz target's own path (fuzz/src/check.rs, included below): import, sample every
//! clip, world and joint matrices, LBS and DQ skinning. None may panic, and an accepted
//! one must give finite output (the check panics otherwise).

#[path = "../../fuzz/src/check.rs"]
mod check;

use check::Outcome;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("readable directory entry").path())
        .filter(|p| p.is_file() && p.file_name().is_some_and(|n| !n.to_string_lossy().starts_with('.')))
        .collect();
    out.sort();
    out
}

/// The panic message of a caught panic.
fn message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_else(|| "non-string panic".to_owned())
}

#[test]
fn fuzz_regressions_neither_panic_nor_give_non_finite_output() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/regressions");
    let inputs = files(&dir);
    assert!(!inputs.is_empty(), "no regression inputs in {}", dir.display());
    let mut failures = Vec::new();
    for path in &inputs {
        let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        match catch_unwind(AssertUnwindSafe(|| check::import_and_skin(&bytes))) {
            Ok(Outcome::Rejected(e)) => eprintln!("{}: rejected: {e}", path.display()),
            Ok(Outcome::Skinned { poses, vertices }) => {
                eprintln!("{}: {poses} poses, {vertices} vertices skinned", path.display())
            }
            Err(p) => failures.push(format!("{}: {}", path.file_name().unwrap().to_string_lossy(), message(&*p))),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} regression inputs failed:\n{}",
        failures.len(),
        inputs.len(),
        failures.join("\n")
    );
}

/// The check itself is not vacuous: the shared assets import and are posed and skinned at
/// every sample (the rest pose plus 4 per clip), every vertex of every instance by both
/// methods.
#[test]
fn shared_assets_pass_the_fuzz_check_and_skin_every_vertex() {
    // Clip and vertex counts from shared/assets/MODELS.md.
    for (file, clips, per_pose) in
        [("SimpleSkin/SimpleSkin.gltf", 1, 10), ("Fox/Fox.glb", 3, 1728), ("CesiumMan/CesiumMan.glb", 1, 3273)]
    {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/assets").join(file);
        let model = anim_gltf::load(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(model.clips.len(), clips, "{file}");
        assert_eq!(model.meshes.iter().map(|m| m.data.vertex_count()).sum::<usize>(), per_pose, "{file}");
        let want = Outcome::Skinned { poses: 1 + 4 * clips, vertices: (1 + 4 * clips) * per_pose * 2 };
        assert_eq!(check::skin_model(&model), want, "{file}");
        let bytes = std::fs::read(&path).unwrap();
        if file.ends_with(".glb") {
            assert_eq!(check::import_and_skin(&bytes), want, "{file} from bytes");
        }
    }
}

/// A non-glTF input is rejected, not skinned.
#[test]
fn garbage_is_rejected() {
    assert!(matches!(check::import_and_skin(b"glTF\x02\0\0\0garbage"), Outcome::Rejected(_)));
    assert!(matches!(check::import_and_skin(b"{\"asset\":"), Outcome::Rejected(_)));
}
