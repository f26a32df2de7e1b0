//! Every input the fuzzer ever crashed on (fuzz/regressions/, or rebuilt on the mannequin
//! where the original was a mutated shared model; see FUZZING.md) goes through
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

/// A GLB split into its JSON document and its binary chunk.
fn split_glb(glb: &[u8]) -> (serde_json::Value, Vec<u8>) {
    let u32_at = |o: usize| u32::from_le_bytes(glb[o..o + 4].try_into().expect("4 bytes")) as usize;
    let json_len = u32_at(12);
    let json = serde_json::from_slice(&glb[20..20 + json_len]).expect("the writer's JSON chunk");
    let bin_at = 20 + json_len;
    let bin = glb[bin_at + 8..bin_at + 8 + u32_at(bin_at)].to_vec();
    (json, bin)
}

/// `json` and `bin` packed into a GLB again (chunks padded to 4 bytes).
fn join_glb(json: &serde_json::Value, bin: &[u8]) -> Vec<u8> {
    let mut j = serde_json::to_vec(json).expect("serializable");
    while !j.len().is_multiple_of(4) {
        j.push(b' ');
    }
    let mut b = bin.to_vec();
    while !b.len().is_multiple_of(4) {
        b.push(0);
    }
    let mut out = Vec::with_capacity(28 + j.len() + b.len());
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&((28 + j.len() + b.len()) as u32).to_le_bytes());
    out.extend_from_slice(&(j.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&j);
    out.extend_from_slice(&(b.len() as u32).to_le_bytes());
    out.extend_from_slice(b"BIN\0");
    out.extend_from_slice(&b);
    out
}

/// Where accessor `a`'s element `i` starts in the binary chunk (tightly packed views).
fn element_offset(json: &serde_json::Value, a: usize, i: usize, size: usize) -> usize {
    let acc = &json["accessors"][a];
    let view = &json["bufferViews"][acc["bufferView"].as_u64().expect("a view") as usize];
    let base = view["byteOffset"].as_u64().unwrap_or(0) + acc["byteOffset"].as_u64().unwrap_or(0);
    base as usize + i * view["byteStride"].as_u64().map_or(size, |s| s as usize)
}

fn write_f32s(bin: &mut [u8], at: usize, values: &[f32]) {
    for (k, v) in values.iter().enumerate() {
        bin[at + 4 * k..at + 4 * k + 4].copy_from_slice(&v.to_le_bytes());
    }
}

/// The fuzzer's crashes were mutations of shared models, which this repository does not
/// carry (only the 12-byte GLB header is kept in fuzz/regressions/). Each is rebuilt here
/// on the project's own mannequin, with the mutation that made it crash, and must neither
/// panic nor give non-finite output (see FUZZING.md for the originals).
#[test]
fn the_fuzz_crashes_rebuilt_on_the_mannequin() {
    let (json, bin) = split_glb(&anim_gltf::mannequin_glb());
    let attribute = |name: &str| json["meshes"][0]["primitives"][0]["attributes"][name].as_u64().expect(name) as usize;
    let weights = attribute("WEIGHTS_0");
    let ibm = json["skins"][0]["inverseBindMatrices"].as_u64().expect("inverse binds") as usize;
    type Mutation = Box<dyn Fn(&mut serde_json::Value, &mut Vec<u8>)>;
    let cases: Vec<(&str, Mutation)> = vec![
        (
            "an unknown channel target.path",
            Box::new(|j, _| j["animations"][0]["channels"][0]["target"]["path"] = "ratotion".into()),
        ),
        (
            "weights summing to a denormal",
            Box::new(move |j, b| write_f32s(b, element_offset(j, weights, 0, 16), &[6.5e-43, 0.0, 0.0, 0.0])),
        ),
        ("a zero scale on a joint", Box::new(|j, _| j["nodes"][2]["scale"] = serde_json::json!([0.0, 0.0, 0.0]))),
        (
            "a denormal scale on a joint",
            Box::new(|j, _| j["nodes"][2]["scale"] = serde_json::json!([1e-40, 1e-40, 1e-40])),
        ),
        (
            "a finite but huge translation",
            Box::new(|j, _| j["nodes"][1]["translation"] = serde_json::json!([3e38, -3e38, 0.0])),
        ),
        (
            "inverse bind matrix entries of 1.8e25",
            Box::new(move |j, b| write_f32s(b, element_offset(j, ibm, 1, 64), &[1.8e25; 16])),
        ),
    ];
    let mut failures = Vec::new();
    for (name, mutate) in &cases {
        let (mut j, mut b) = (json.clone(), bin.clone());
        mutate(&mut j, &mut b);
        let glb = join_glb(&j, &b);
        match catch_unwind(AssertUnwindSafe(|| check::import_and_skin(&glb))) {
            Ok(Outcome::Rejected(e)) => eprintln!("{name}: rejected: {e}"),
            Ok(Outcome::Skinned { poses, vertices }) => eprintln!("{name}: {poses} poses, {vertices} vertices skinned"),
            Err(p) => failures.push(format!("{name}: {}", message(&*p))),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The unmutated character goes all the way through.
    assert!(matches!(check::import_and_skin(&join_glb(&json, &bin)), Outcome::Skinned { .. }));
}
