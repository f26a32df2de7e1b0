//! Every input the fuzzer ever crashed on (fuzz/regressions/, or rebuilt on the mannequin
//! where the original was a mutated shared model; see FUZZING.md) goes through
//! the fuzz target's own path (fuzz/src/check.rs, included below): import, sample every
//! clip, world and joint matrices, LBS and DQ skinning. None may panic, and each must end
//! as its fix makes it end: refused with one typed error naming its JSON pointer (or its
//! GLB validator code), or imported and skinned to specific finite output.
//!
//! Each rebuild uses the kind of mutation that crashed (animation keys, weights, inverse
//! bind matrices, a channel path, a GLB header), so it still reaches the code that crashed:
//! replayed through `check.rs` at b53e7f2 (the tree the exploratory campaigns ran on, before
//! the fixes), every rebuilt crash here panics as its original did. Where a rebuild is
//! refused by a range limit, a control with the same mutation inside the limit loads,
//! showing that the refusal comes from that limit and not from an earlier check.

#[path = "../../fuzz/src/check.rs"]
mod check;

use anim_core::clip::TimePolicy;
use anim_core::offline::range::{Origin, Quantity, RangeError};
use anim_core::skin::SkinMethod;
use anim_gltf::{GltfError, Model, SkinScratch};
use anim_math::{Mat4, Vec3};
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

/// A test of the error an input must be refused with.
type Accepts = Box<dyn Fn(&GltfError) -> bool>;

/// The expected outcome of each file in fuzz/regressions/: the error its fix gives. A new
/// file fails the test until it is listed here.
fn expected_for_file(name: &str) -> Option<Accepts> {
    match name {
        // 12 bytes: "glTF", container version 26572, total length 0. gltf 1.4.1 computed
        // `length − 12` before reading the version (binary.rs:252) and overflowed; since
        // 905cbb6 the container is checked first (import/validate.rs, glb_json), the
        // version before the length. The version-2 twin of this header, which reaches the
        // length check, is rebuilt in `the_fuzz_crashes_rebuilt_on_the_mannequin`.
        "glb-length-subtract-overflow-31b17324.glb" => Some(Box::new(|e| {
            matches!(e, GltfError::Syntax(m)
                if m == "GLB header: GLB_UNKNOWN_VERSION: container version 26572, only 2 is supported")
        })),
        _ => None,
    }
}

#[test]
fn fuzz_regressions_end_as_their_fixes_say() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/regressions");
    let inputs = files(&dir);
    assert!(!inputs.is_empty(), "no regression inputs in {}", dir.display());
    let mut failures = Vec::new();
    for path in &inputs {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let Some(expected) = expected_for_file(&name) else {
            failures.push(format!("{name}: no expected outcome (add it to expected_for_file)"));
            continue;
        };
        let run = || (anim_gltf::load_from_bytes(&bytes, None).err(), check::import_and_skin(&bytes));
        match catch_unwind(AssertUnwindSafe(run)) {
            Ok((Some(e), Outcome::Rejected(m))) if expected(&e) && m == e.to_string() => {
                eprintln!("{name}: rejected: {e}")
            }
            Ok(other) => failures.push(format!("{name}: {other:?}")),
            Err(p) => failures.push(format!("{name}: {}", message(&*p))),
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

/// The 16 floats of accessor `a`'s matrix `i`.
fn read_mat(json: &serde_json::Value, bin: &[u8], a: usize, i: usize) -> [f32; 16] {
    let at = element_offset(json, a, i, 64);
    std::array::from_fn(|k| f32::from_le_bytes(bin[at + 4 * k..at + 4 * k + 4].try_into().expect("4 bytes")))
}

/// Animates `path` of `node` in animation 0 with `key` at every key time of the
/// animation's first channel: the mannequin's clips have no scale channels, so the
/// fuzzer's scale keys get a channel of their own (a new sampler and output accessor,
/// appended after the animation's channels).
fn add_channel(json: &mut serde_json::Value, bin: &mut Vec<u8>, node: usize, path: &str, key: [f32; 3]) {
    let anim = &json["animations"][0];
    let input = anim["samplers"][anim["channels"][0]["sampler"].as_u64().expect("a sampler") as usize]["input"].clone();
    let count =
        json["accessors"][input.as_u64().expect("an input accessor") as usize]["count"].as_u64().expect("a count");
    while !bin.len().is_multiple_of(4) {
        bin.push(0);
    }
    let offset = bin.len();
    for _ in 0..count {
        bin.extend(key.iter().flat_map(|v| v.to_le_bytes()));
    }
    let push = |array: &mut serde_json::Value, item: serde_json::Value| {
        let a = array.as_array_mut().expect("an array");
        a.push(item);
        a.len() - 1
    };
    let view = push(
        &mut json["bufferViews"],
        serde_json::json!({"buffer": 0, "byteOffset": offset, "byteLength": bin.len() - offset}),
    );
    let output = push(
        &mut json["accessors"],
        serde_json::json!({"bufferView": view, "componentType": 5126, "count": count, "type": "VEC3"}),
    );
    json["buffers"][0]["byteLength"] = bin.len().into();
    let anim = &mut json["animations"][0];
    let sampler =
        push(&mut anim["samplers"], serde_json::json!({"input": input, "output": output, "interpolation": "LINEAR"}));
    push(&mut anim["channels"], serde_json::json!({"sampler": sampler, "target": {"node": node, "path": path}}));
}

/// The mannequin with `mutate` applied, as a GLB.
fn mutated(mutate: impl FnOnce(&mut serde_json::Value, &mut Vec<u8>)) -> Vec<u8> {
    let (mut json, mut bin) = split_glb(&anim_gltf::mannequin_glb());
    mutate(&mut json, &mut bin);
    join_glb(&json, &bin)
}

/// World matrices, and the LBS-skinned positions and normals of mesh instance 0, at `time`
/// of `clip`.
fn skinned(model: &Model, clip: usize, time: f32) -> (Vec<Mat4>, Vec<Vec3>, Vec<Vec3>) {
    let mut pose = model.skeleton.rest_pose().clone();
    model.sample_pose(clip, time, TimePolicy::Clamp, &mut pose).expect("a valid sample");
    let mut world = vec![Mat4::identity(); model.skeleton.len()];
    model.world_matrices(&pose, &mut world).expect("world matrices");
    let n = model.meshes[0].data.vertex_count();
    let (mut p, mut nrm) = (vec![Vec3::zeros(); n], vec![Vec3::zeros(); n]);
    let mut scratch = SkinScratch::new();
    model.skin_instance(0, &world, SkinMethod::Lbs, &mut scratch, &mut p, Some(&mut nrm)).expect("skinned");
    (world, p, nrm)
}

/// What a rebuilt crash must do today.
enum Expect {
    /// Refused by the importer with an error the predicate accepts (the one the fuzz check
    /// reports too).
    Rejected(Accepts),
    /// Imported, and the fuzz check evaluates every pose (the rest pose and four samples of
    /// each clip) and skins every vertex by both methods with finite output; then the
    /// function checks specific output, panicking on a mismatch.
    Skinned(Box<dyn Fn(&Model)>),
}

/// Refused at `/animations/0/channels/{channel}` because joint `joint` could reach a
/// model-space scale beyond the range, from the keys of clip 0.
fn scale_keys_out_of_range(channel: usize, joint: &'static str) -> Expect {
    Expect::Rejected(Box::new(move |e| {
        matches!(e, GltfError::OutOfRange {
            path,
            source: RangeError::Joint { name, quantity: Quantity::Scale, origin: Origin::Clip { clip: 0 }, .. },
        } if *path == format!("/animations/0/channels/{channel}") && name == joint)
    }))
}

/// The fuzzer's crashes were mutations of shared models, which this repository does not
/// carry (only the 12-byte GLB header is kept in fuzz/regressions/). Each is rebuilt here
/// on the project's own mannequin with the kind of mutation that made it crash (FUZZING.md
/// has the originals) and must end exactly as its fix makes it end. The comment of each
/// case names the fix and what the rebuild does at b53e7f2, before it.
#[test]
fn the_fuzz_crashes_rebuilt_on_the_mannequin() {
    let (json, bin) = split_glb(&anim_gltf::mannequin_glb());
    let weights = json["meshes"][0]["primitives"][0]["attributes"]["WEIGHTS_0"].as_u64().expect("weights") as usize;
    let ibm = json["skins"][0]["inverseBindMatrices"].as_u64().expect("inverse binds") as usize;
    // A scale channel added to the idle clip (animation 0) comes after its own channels.
    let added = json["animations"][0]["channels"].as_array().expect("channels").len();
    // Node indices of the mannequin's joints (node i is joint i).
    let (spine_01, upperarm_l, lowerarm_l) = (1, 7, 8);
    let plain = anim_gltf::load_from_bytes(&join_glb(&json, &bin), None).expect("the mannequin loads");
    for (node, name) in [(spine_01, "spine_01"), (upperarm_l, "upperarm_l"), (lowerarm_l, "lowerarm_l")] {
        assert_eq!(plain.skeleton.find(name), Some(node));
    }
    // A vertex weighted to two joints in its first two slots, for the weights case.
    let inf = plain.meshes[0].data.influences.as_ref().expect("a skinned mesh");
    assert_eq!(inf.per_vertex(), 4);
    let two = (0..inf.vertex_count())
        .find(|&v| inf.joints()[4 * v] != inf.joints()[4 * v + 1] && inf.weights()[4 * v + 1] > 0.0)
        .expect("a vertex with two joints");

    let cases: Vec<(&str, Vec<u8>, Expect)> = vec![
        // Fix 905cbb6 (the GLB container checked before the gltf crate reads it). Before,
        // gltf's `Glb::from_slice` subtracted the header size from the declared length:
        // "attempt to subtract with overflow" (gltf-1.4.1 binary.rs:252). The committed
        // file has version 26572 and stops at the version check; this is its version-2
        // twin, which reaches the length check.
        (
            "a GLB header of version 2 declaring a total length of 0",
            [b"glTF".as_slice(), &2u32.to_le_bytes(), &0u32.to_le_bytes()].concat(),
            Expect::Rejected(Box::new(|e| {
                matches!(e, GltfError::Syntax(m)
                    if m == "GLB header: GLB_LENGTH_MISMATCH: declared length 0 does not match the actual length 12")
            })),
        ),
        // Fix 905cbb6 (every enum the gltf crate unwraps is checked in the raw JSON first).
        // At b53e7f2: "attempted to unwrap an invalid item" (gltf-json-1.4.1 validation.rs:65).
        (
            "an unknown channel target.path",
            mutated(|j, _| j["animations"][0]["channels"][0]["target"]["path"] = "ratotion".into()),
            Expect::Rejected(Box::new(|e| {
                matches!(e, GltfError::Schema { path, message }
                    if path == "/animations/0/channels/0/target/path" && message.starts_with("VALUE_NOT_IN_LIST:"))
            })),
        ),
        // Fix 027f8ab (weights rescaled by a power of two before summing). The original's
        // two denormal weights, 452 and 8 units of 2⁻¹⁴⁹: their sum's reciprocal overflows,
        // and at b53e7f2 the rest pose gives "non-finite position of vertex 336" (`two`). Now the
        // weights normalize to their ratio and the vertex skins with it.
        (
            "weights summing to a denormal",
            mutated(|j, b| {
                write_f32s(b, element_offset(j, weights, two, 16), &[f32::from_bits(452), f32::from_bits(8), 0.0, 0.0])
            }),
            Expect::Skinned(Box::new(move |m| {
                let inf = m.meshes[0].data.influences.as_ref().expect("influences");
                let (w, js) = (&inf.weights()[4 * two..4 * two + 4], &inf.joints()[4 * two..4 * two + 2]);
                let want = [452.0 / 460.0, 8.0 / 460.0, 0.0, 0.0];
                assert!(w.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-6), "weights {w:?}, want {want:?}");
                // Walk, half way: the two joints' palette matrices move the vertex apart.
                let time = 0.5 * m.clips[1].duration();
                let (world, positions, _) = skinned(m, 1, time);
                let skin = &m.skins[0].skin;
                let p = m.meshes[0].data.positions[two].push(1.0);
                let by = |k: usize| {
                    let j = usize::from(js[k]);
                    (world[skin.joints()[j]] * skin.inverse_bind()[j] * p).xyz()
                };
                assert!((by(0) - by(1)).norm() > 1e-3, "the pose does not tell the joints apart");
                let want = by(0) * want[0] + by(1) * want[1];
                assert!((positions[two] - want).norm() < 1e-5, "vertex {two}: {} vs {want}", positions[two]);
            })),
        ),
        // Fix 77985e7 (import refuses what could leave anim_core::offline::range); df707e6 (normals
        // recomputed from the rescaled matrix when their length overflows) would keep the
        // normals finite even without it. The original's scale key (0, −2.91e21, …), with
        // two huge components so that the normal matrix's cofactors overflow as the
        // original's rotations made them: at b53e7f2 "clip 0 at 0 (Clamp): mesh instance 0
        // (Lbs): non-finite normal of vertex 1658".
        (
            "scale keys of zero and 2.9e21 (a singular joint matrix whose normals overflow)",
            mutated(|j, b| add_channel(j, b, upperarm_l, "scale", [0.0, -2.910_144_5e21, 2.910_144_5e21])),
            scale_keys_out_of_range(added, "upperarm_l"),
        ),
        // The control: the same keys with 100 for 2.9e21 load, and the singular joint skins
        // to finite, exact output. Joint scale (0, −100, 100) maps everything onto one plane
        // through the joint, whose normal `u` is the joint's world x axis: every vertex
        // bound only to the arm (upper arm, forearm, hand) lies in that plane, and its
        // normal (the inverse transpose's cofactors, all along `u`) is ±u or zero.
        (
            "scale keys of zero and 100 (control: inside the range)",
            mutated(|j, b| {
                add_channel(j, b, upperarm_l, "scale", [0.0, -100.0, 100.0]);
            }),
            Expect::Skinned(Box::new(move |m| {
                let (world, positions, normals) = skinned(m, 0, 0.5 * m.clips[0].duration());
                let w = &world[upperarm_l];
                let u = w.column(1).xyz().cross(&w.column(2).xyz()).normalize();
                let origin = w.column(3).xyz();
                let inf = m.meshes[0].data.influences.as_ref().expect("influences");
                let arm = [upperarm_l, lowerarm_l, lowerarm_l + 1];
                let skin_joints = m.skins[0].skin.joints();
                let mut count = 0;
                for v in 0..inf.vertex_count() {
                    let slots = (4 * v..4 * v + 4).filter(|&k| inf.weights()[k] > 0.0);
                    if !slots.clone().all(|k| arm.contains(&skin_joints[usize::from(inf.joints()[k])])) {
                        continue;
                    }
                    count += 1;
                    let off_plane = (positions[v] - origin).dot(&u);
                    // Rounding of coordinates up to 100 · 0.3; a collapsed axis left at scale 1
                    // would put the arm's vertices centimetres off the plane.
                    assert!(
                        off_plane.abs() < 1e-5 * (1.0 + positions[v].norm()),
                        "vertex {v}: {off_plane} off the plane"
                    );
                    let n = normals[v];
                    assert!(n == Vec3::zeros() || n.cross(&u).norm() < 1e-5, "vertex {v}: normal {n} is not ±{u}");
                }
                assert!(count > 100, "only {count} vertices on the arm");
            })),
        ),
        // Fix 77985e7 with 686d813 (the range analysis down the hierarchy). Two joints in a
        // chain scaled by 2e19: their product, 4e38, passes f32::MAX; at b53e7f2 "clip 0 at 0
        // (Clamp): non-finite world matrix of node 8". Refused at the first joint past the
        // limit, the upper arm (2e19 > 1e8).
        (
            "finite but huge scale keys down a chain (their product overflows the world matrix)",
            mutated(|j, b| {
                add_channel(j, b, upperarm_l, "scale", [2e19; 3]);
                add_channel(j, b, lowerarm_l, "scale", [2e19; 3]);
            }),
            scale_keys_out_of_range(added, "upperarm_l"),
        ),
        // The control: 5e3 on each (the product, 2.5e7, keeps the palette matrices within
        // the range's 1e8 for linear parts) loads; the forearm's world matrix has columns of
        // length 2.5e7 and the hand sits 0.26 · 2.5e7 from the forearm.
        (
            "scale keys of 5e3 down a chain (control: inside the range)",
            mutated(|j, b| {
                add_channel(j, b, upperarm_l, "scale", [5e3; 3]);
                add_channel(j, b, lowerarm_l, "scale", [5e3; 3]);
            }),
            Expect::Skinned(Box::new(move |m| {
                let (world, ..) = skinned(m, 0, 0.5 * m.clips[0].duration());
                let w = &world[lowerarm_l];
                for c in 0..3 {
                    let len = w.column(c).xyz().norm();
                    assert!((len / 2.5e7 - 1.0).abs() < 1e-5, "forearm column {c}: {len}");
                }
                let hand = (world[lowerarm_l + 1].column(3) - w.column(3)).xyz().norm();
                assert!((hand / (0.26 * 2.5e7) - 1.0).abs() < 1e-5, "hand at {hand} from the forearm");
            })),
        ),
        // Fix 77985e7. The original's inverse bind matrix of joint 1 had translation entries
        // of 1.8e25 and its joint scale keys of up to 3e29: at b53e7f2 world · IBM overflows,
        // "clip 0 at 0 (Clamp): non-finite joint matrix 1 of skin 0". The keys are refused
        // first (joints are checked before the inverse bind matrices).
        (
            "inverse bind translation of 1.8e25 with scale keys of 3e29 (world · IBM overflows)",
            mutated(|j, b| {
                let mut m = read_mat(j, b, ibm, spine_01);
                m[12..14].copy_from_slice(&[1.8e25, 1.8e25]);
                write_f32s(b, element_offset(j, ibm, spine_01, 64), &m);
                add_channel(j, b, spine_01, "scale", [3e29; 3]);
            }),
            scale_keys_out_of_range(added, "spine_01"),
        ),
        // The inverse bind half alone (at b53e7f2 it loads and skins: only the product with
        // the huge keys overflowed) is refused too, by the bind pose it implies.
        (
            "inverse bind translation of 1.8e25 alone",
            mutated(|j, b| {
                let mut m = read_mat(j, b, ibm, spine_01);
                m[12..14].copy_from_slice(&[1.8e25, 1.8e25]);
                write_f32s(b, element_offset(j, ibm, spine_01, 64), &m);
            }),
            Expect::Rejected(Box::new(|e| {
                matches!(e, GltfError::OutOfRange {
                    path,
                    source: RangeError::Joint { name, quantity: Quantity::Translation, origin: Origin::Bind, .. },
                } if path == "/skins/0/inverseBindMatrices" && name == "spine_01")
            })),
        ),
    ];
    let mut failures = Vec::new();
    for (name, glb, expect) in &cases {
        let run = catch_unwind(AssertUnwindSafe(|| {
            let outcome = check::import_and_skin(glb);
            match (anim_gltf::load_from_bytes(glb, None), expect) {
                (Err(e), Expect::Rejected(accepts)) => {
                    assert!(accepts(&e), "rejected with another error: {e:?}");
                    assert_eq!(outcome, Outcome::Rejected(e.to_string()));
                    eprintln!("{name}: rejected: {e}");
                }
                (Ok(model), Expect::Skinned(check_output)) => {
                    let poses = 1 + 4 * model.clips.len();
                    let vertices = poses * 2 * model.meshes.iter().map(|i| i.data.vertex_count()).sum::<usize>();
                    assert_eq!(outcome, Outcome::Skinned { poses, vertices });
                    check_output(&model);
                    eprintln!("{name}: {poses} poses, {vertices} vertices skinned");
                }
                (Err(e), Expect::Skinned(_)) => panic!("rejected, but should load: {e}"),
                (Ok(_), Expect::Rejected(_)) => panic!("loaded, but should be rejected ({outcome:?})"),
            }
        }));
        if let Err(p) = run {
            failures.push(format!("{name}: {}", message(&*p)));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The unmutated character goes all the way through.
    assert!(matches!(check::import_and_skin(&join_glb(&json, &bin)), Outcome::Skinned { .. }));
}
