//! Hostile input: documents built here (mutations of the small valid document of
//! `common`) that once panicked, read files outside the model's folder, allocated without
//! bound or were accepted against the specification. Each gives a typed error naming the
//! element at fault, with the Khronos glTF-Validator's issue code where it has one.
//!
//! Set `HOSTILE_DUMP=<folder>` to write every malformed document there, to check the codes
//! with `scripts/validate-gltf.sh`.

mod common;

use anim_gltf::{GltfError, LoadOptions, Model, load_from_bytes, load_from_bytes_with, load_with};
use common::{Data, base64, doc};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

fn load(v: &Value) -> Result<Model, GltfError> {
    load_from_bytes(&serde_json::to_vec(v).unwrap(), None)
}

/// Loads `v`, which must fail; the error must name `path` and contain `code`.
fn expect_issue(name: &str, v: &Value, path: &str, code: &str) -> GltfError {
    if let Ok(dir) = std::env::var("HOSTILE_DUMP") {
        let file = format!("{}.gltf", name.trim_start_matches('/').replace('/', "_"));
        std::fs::write(Path::new(&dir).join(file), serde_json::to_vec_pretty(v).unwrap()).unwrap();
    }
    let e = match load(v) {
        Ok(_) => panic!("{name}: expected an error"),
        Err(e) => e,
    };
    assert_eq!(e.path(), Some(path), "{name}: {e}");
    assert!(e.to_string().contains(code), "{name}: {e}");
    e
}

/// A fresh, empty folder under the system's temporary folder.
fn temp_dir(tag: &str) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "anim-gltf-hostile-{}-{tag}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The binary data of the base document, as a separate file's content.
fn base_bin() -> Vec<u8> {
    let v = doc(&Data::default());
    let uri = v["buffers"][0]["uri"].as_str().unwrap();
    let b64 = uri.split_once(',').unwrap().1;
    // A tiny decoder, checked by encoding back with `common::base64`.
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0);
    for c in b64.bytes().take_while(|&c| c != b'=') {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            _ => 63,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    assert_eq!(base64(&out), b64);
    out
}

/// `root/model/model.gltf` whose buffer 0 is `uri`, and `root/outside/x.bin` holding the
/// buffer's bytes. Returns (root, model file).
fn layout(uri: &str) -> (PathBuf, PathBuf) {
    let root = temp_dir("uri");
    std::fs::create_dir_all(root.join("model")).unwrap();
    std::fs::create_dir_all(root.join("outside")).unwrap();
    std::fs::write(root.join("outside/x.bin"), base_bin()).unwrap();
    let mut v = doc(&Data::default());
    v["buffers"][0]["uri"] = json!(uri);
    let file = root.join("model/model.gltf");
    std::fs::write(&file, serde_json::to_vec(&v).unwrap()).unwrap();
    (root, file)
}

fn buffer_error(file: &Path, options: &LoadOptions) -> GltfError {
    let e = load_with(file, options).expect_err("the buffer must be refused");
    assert!(matches!(e, GltfError::Buffer { .. }), "{e}");
    assert_eq!(e.path(), Some("/buffers/0"), "{e}");
    e
}

// ---------------------------------------------------------------------------------------------
// 1. No panic: every enumerated value and index the `gltf` crate would unwrap.

#[test]
fn unknown_enumerated_values_are_errors_not_panics() {
    let cases: [(&str, &str, Value, &str); 8] = [
        ("channel-path", "/animations/0/channels/0/target/path", json!("skew"), "/animations/0/channels/0/target/path"),
        (
            "interpolation",
            "/animations/0/samplers/0/interpolation",
            json!("CUBIC"),
            "/animations/0/samplers/0/interpolation",
        ),
        ("component-type", "/accessors/0/componentType", json!(5127), "/accessors/0/componentType"),
        ("accessor-type", "/accessors/0/type", json!("VEC5"), "/accessors/0/type"),
        ("view-target", "/bufferViews/0/target", json!(1), "/bufferViews/0/target"),
        ("index-type", "/accessors/6/componentType", json!(5127), "/accessors/6/componentType"),
        ("sampler-input-type", "/accessors/4/type", json!("vec2"), "/accessors/4/type"),
        ("joints-type", "/accessors/1/componentType", json!(0), "/accessors/1/componentType"),
    ];
    for (name, ptr, value, path) in cases {
        let mut v = doc(&Data::default());
        let (parent, key) = ptr.rsplit_once('/').unwrap();
        v.pointer_mut(parent).unwrap()[key] = value;
        expect_issue(name, &v, path, "VALUE_NOT_IN_LIST");
    }
    let mut v = doc(&Data::default());
    v["meshes"][0]["primitives"][0]["mode"] = json!(9);
    expect_issue("mode", &v, "/meshes/0/primitives/0/mode", "VALUE_NOT_IN_RANGE");
    // A sparse accessor whose indices are FLOAT.
    let mut v = doc(&Data::default());
    v["accessors"][0]["sparse"] =
        json!({"count": 1, "indices": {"bufferView": 6, "componentType": 5126}, "values": {"bufferView": 0}});
    expect_issue("sparse-index-type", &v, "/accessors/0/sparse/indices/componentType", "VALUE_NOT_IN_LIST");
    // An attribute name that is no semantic.
    let mut v = doc(&Data::default());
    v["meshes"][0]["primitives"][0]["attributes"]["SKEW"] = json!(0);
    expect_issue("attribute-name", &v, "/meshes/0/primitives/0/attributes", "MESH_PRIMITIVE_INVALID_ATTRIBUTE");
}

#[test]
fn dangling_indices_are_errors_not_panics() {
    let cases = [
        ("/nodes/1/children/0", "/nodes/1/children/0"),
        ("/nodes/0/mesh", "/nodes/0/mesh"),
        ("/nodes/0/skin", "/nodes/0/skin"),
        ("/scene", "/scene"),
        ("/scenes/0/nodes/0", "/scenes/0/nodes/0"),
        ("/skins/0/joints/1", "/skins/0/joints/1"),
        ("/skins/0/inverseBindMatrices", "/skins/0/inverseBindMatrices"),
        ("/animations/0/samplers/0/input", "/animations/0/samplers/0/input"),
        ("/animations/0/samplers/0/output", "/animations/0/samplers/0/output"),
        ("/animations/0/channels/0/sampler", "/animations/0/channels/0/sampler"),
        ("/animations/0/channels/0/target/node", "/animations/0/channels/0/target/node"),
        ("/meshes/0/primitives/0/indices", "/meshes/0/primitives/0/indices"),
        ("/meshes/0/primitives/0/attributes/POSITION", "/meshes/0/primitives/0/attributes/POSITION"),
        ("/accessors/2/bufferView", "/accessors/2/bufferView"),
        ("/bufferViews/2/buffer", "/bufferViews/2/buffer"),
    ];
    for (ptr, path) in cases {
        let mut v = doc(&Data::default());
        *v.pointer_mut(ptr).unwrap() = json!(4000);
        expect_issue(ptr, &v, path, "UNRESOLVED_REFERENCE");
    }
    let mut v = doc(&Data::default());
    v["meshes"][0]["primitives"][0]["targets"] = json!([{"POSITION": 99}]);
    expect_issue("morph-target", &v, "/meshes/0/primitives/0/targets/0/POSITION", "UNRESOLVED_REFERENCE");
}

/// Every leaf and every object of the valid document replaced in turn by values of the
/// wrong type or range: whatever the outcome, it is not a panic.
#[test]
fn no_single_value_mutation_panics() {
    fn pointers(v: &Value, at: String, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => m.iter().for_each(|(k, x)| pointers(x, format!("{at}/{k}"), out)),
            Value::Array(a) if a.iter().all(Value::is_number) && !a.is_empty() => out.push(at.clone()),
            Value::Array(a) => a.iter().enumerate().for_each(|(i, x)| pointers(x, format!("{at}/{i}"), out)),
            _ => {}
        }
        out.push(at);
    }
    let base = doc(&Data::default());
    let mut all = Vec::new();
    pointers(&base, String::new(), &mut all);
    all.retain(|p| !p.is_empty());
    let hostile = [
        json!(-1),
        json!(0),
        json!(3),
        json!(4_294_967_295u64),
        json!(1e300),
        json!(-0.5),
        json!("skew"),
        json!(null),
        json!([]),
        json!({}),
        json!([1e39, 0, 0, 0]),
    ];
    let mut loaded = 0;
    for p in &all {
        for h in &hostile {
            let mut v = base.clone();
            *v.pointer_mut(p).unwrap() = h.clone();
            let bytes = serde_json::to_vec(&v).unwrap();
            match std::panic::catch_unwind(|| load_from_bytes(&bytes, None).map(|_| ())) {
                Ok(Ok(())) => loaded += 1,
                Ok(Err(e)) => assert!(!e.to_string().is_empty()),
                Err(_) => panic!("setting {p} to {h} panicked"),
            }
        }
    }
    // Some mutations are harmless (a name, a min/max bound): the sweep reached the importer.
    assert!(loaded > 0 && loaded < all.len() * hostile.len(), "{loaded}");
}

/// Bytes of a GLB's header, chunk headers and the start of its JSON replaced in turn: no
/// panic, whatever the container says.
#[test]
fn no_glb_header_mutation_panics() {
    let good = glb(&doc(&Data::default()));
    let mut failed = 0;
    for i in 0..good.len().min(200) {
        for f in [|_: u8| 0u8, |_: u8| 0xFF, |b: u8| b ^ 0x80, |b: u8| b.wrapping_add(1)] {
            let mut b = good.clone();
            b[i] = f(b[i]);
            match std::panic::catch_unwind(|| load_from_bytes(&b, None).map(|_| ())) {
                Ok(r) => failed += usize::from(r.is_err()),
                Err(_) => panic!("byte {i} changed to {:#x} panicked", b[i]),
            }
        }
    }
    assert!(failed > 0);
}

// ---------------------------------------------------------------------------------------------
// 2. Buffer URIs stay inside the model's folder; only regular files, at most byteLength.

#[test]
fn a_relative_uri_inside_the_folder_loads() {
    let (root, file) = layout("x.bin");
    std::fs::copy(root.join("outside/x.bin"), root.join("model/x.bin")).unwrap();
    let m = anim_gltf::load(&file).unwrap();
    assert_eq!(m.meshes[0].data.positions.len(), 3);
    // And through a subfolder with a `..` that stays inside, percent-encoded.
    std::fs::create_dir_all(root.join("model/sub")).unwrap();
    let mut v: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    v["buffers"][0]["uri"] = json!("sub/%2e%2e/x%2Ebin");
    std::fs::write(&file, serde_json::to_vec(&v).unwrap()).unwrap();
    assert_eq!(anim_gltf::load(&file).unwrap().meshes[0].data.positions.len(), 3);
    std::fs::remove_dir_all(root).unwrap();
}

#[test]
fn uris_that_leave_the_folder_are_refused() {
    for uri in ["../outside/x.bin", "%2e%2e%2foutside%2fx.bin", "sub/../../outside/x.bin", "..%5coutside%5cx.bin"] {
        let (root, file) = layout(uri);
        let e = buffer_error(&file, &LoadOptions::default());
        assert!(
            e.to_string().contains("outside the document's folder") || e.to_string().contains("cannot be opened"),
            "{uri}: {e}"
        );
        std::fs::remove_dir_all(root).unwrap();
    }
    // Absolute paths, in every spelling.
    let (root, file) = layout("");
    let outside = root.join("outside/x.bin");
    let abs = outside.to_str().unwrap().to_owned();
    for uri in [abs.clone(), abs.replace('/', "%2f"), format!("file://{abs}"), "/etc/passwd".into(), "/dev/zero".into()]
    {
        let mut v = doc(&Data::default());
        v["buffers"][0]["uri"] = json!(uri);
        std::fs::write(&file, serde_json::to_vec(&v).unwrap()).unwrap();
        let e = buffer_error(&file, &LoadOptions::default());
        assert!(!e.to_string().contains("root:"), "{e}");
    }
    std::fs::remove_dir_all(root).unwrap();
}

#[cfg(unix)]
#[test]
fn a_symlink_out_of_the_folder_is_refused_unless_its_root_is_allowed() {
    let (root, file) = layout("link.bin");
    std::os::unix::fs::symlink(root.join("outside/x.bin"), root.join("model/link.bin")).unwrap();
    let e = buffer_error(&file, &LoadOptions::default());
    assert!(e.to_string().contains("symbolic link"), "{e}");
    // A trusted caller allows the other folder.
    let options = LoadOptions { allowed_roots: vec![root.join("outside")], ..LoadOptions::default() };
    assert_eq!(load_with(&file, &options).unwrap().meshes[0].data.positions.len(), 3);
    // `..` into an allowed root also works then; without it, it does not.
    let (root2, file2) = layout("../outside/x.bin");
    let options = LoadOptions { allowed_roots: vec![root2.join("outside")], ..LoadOptions::default() };
    assert_eq!(load_with(&file2, &options).unwrap().meshes[0].data.positions.len(), 3);
    buffer_error(&file2, &LoadOptions::default());
    std::fs::remove_dir_all(root).unwrap();
    std::fs::remove_dir_all(root2).unwrap();
}

#[cfg(unix)]
#[test]
fn devices_and_fifos_are_not_regular_files() {
    // /dev/zero would be read until memory runs out; allowed as a root, it is still
    // refused (not a regular file), for a buffer nothing uses as much as for one in use.
    let (root, file) = layout("zero.bin");
    std::os::unix::fs::symlink("/dev/zero", root.join("model/zero.bin")).unwrap();
    let options = LoadOptions { allowed_roots: vec!["/dev".into()], ..LoadOptions::default() };
    let e = buffer_error(&file, &options);
    assert!(e.to_string().contains("not a regular file"), "{e}");
    let mut v = doc(&Data::default());
    v["buffers"].as_array_mut().unwrap().push(json!({"byteLength": 1_000_000, "uri": "zero.bin"}));
    std::fs::write(&file, serde_json::to_vec(&v).unwrap()).unwrap();
    let e = load_with(&file, &options).unwrap_err();
    assert_eq!(e.path(), Some("/buffers/1"), "{e}");
    assert!(e.to_string().contains("not a regular file"), "{e}");
    // A FIFO would block the open forever.
    let status = std::process::Command::new("mkfifo").arg(root.join("model/fifo.bin")).status().unwrap();
    assert!(status.success());
    v["buffers"][1]["uri"] = json!("fifo.bin");
    std::fs::write(&file, serde_json::to_vec(&v).unwrap()).unwrap();
    let e = load_with(&file, &LoadOptions::default()).unwrap_err();
    assert_eq!(e.path(), Some("/buffers/1"), "{e}");
    assert!(e.to_string().contains("not a regular file"), "{e}");
    // The document itself must be a regular file too.
    let e = anim_gltf::load(root.join("model/fifo.bin")).unwrap_err();
    assert!(matches!(e, GltfError::Io { .. }), "{e}");
    std::fs::remove_dir_all(root).unwrap();
}

#[cfg(unix)]
#[test]
fn file_contents_never_reach_an_error_message() {
    // /etc/passwd (through an allowed root) as the index buffer: its bytes are far out of
    // range as indices, and the message says so without quoting them.
    let Ok(passwd) = std::fs::read("/etc/passwd") else { return };
    if passwd.len() < 64 {
        return;
    }
    let (root, file) = layout("x.bin");
    std::fs::copy(root.join("outside/x.bin"), root.join("model/x.bin")).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", root.join("model/passwd.bin")).unwrap();
    let mut v = doc(&Data::default());
    v["buffers"][0]["uri"] = json!("x.bin");
    v["buffers"].as_array_mut().unwrap().push(json!({"byteLength": 64, "uri": "passwd.bin"}));
    v["bufferViews"].as_array_mut().unwrap().push(json!({"buffer": 1, "byteLength": 64}));
    v["accessors"][6] = json!({"bufferView": 7, "componentType": 5125, "count": 3, "type": "SCALAR"});
    std::fs::write(&file, serde_json::to_vec(&v).unwrap()).unwrap();
    let options = LoadOptions { allowed_roots: vec!["/etc".into()], ..LoadOptions::default() };
    let e = load_with(&file, &options).unwrap_err();
    assert_eq!(e.path(), Some("/accessors/6"), "{e}");
    let text = e.to_string();
    let first = u32::from_le_bytes([passwd[0], passwd[1], passwd[2], passwd[3]]);
    assert!(
        !text.contains(&first.to_string()) && !text.contains(std::str::from_utf8(&passwd[..4]).unwrap_or("root")),
        "{e}"
    );

    // A file shorter than its byteLength is an error, which does not quote it either.
    std::fs::write(root.join("model/short.bin"), b"SECRET-SECRET-SECRET").unwrap();
    v["buffers"][1] = json!({"byteLength": 64, "uri": "short.bin"});
    std::fs::write(&file, serde_json::to_vec(&v).unwrap()).unwrap();
    let e = load_with(&file, &LoadOptions::default()).unwrap_err();
    assert_eq!(e.path(), Some("/buffers/1"), "{e}");
    assert!(e.to_string().contains("byteLength is 64") && !e.to_string().contains("SECRET"), "{e}");
    std::fs::remove_dir_all(root).unwrap();
}

#[test]
fn a_longer_file_is_read_up_to_byte_length_only() {
    // A buffer file may be longer than its byteLength; only byteLength bytes are read, so
    // a budget far below the file's size suffices.
    let (root, file) = layout("x.bin");
    let mut bin = base_bin();
    bin.extend(std::iter::repeat_n(0xAB, 1 << 20));
    std::fs::write(root.join("model/x.bin"), bin).unwrap();
    let options = LoadOptions { memory_budget: 64 << 10, ..LoadOptions::default() };
    let m = load_with(&file, &options).unwrap();
    assert_eq!(m.meshes[0].data.positions.len(), 3);
    std::fs::remove_dir_all(root).unwrap();
}

// ---------------------------------------------------------------------------------------------
// 5. Memory and time: a budget checked before allocating, no recursion over the hierarchy.

#[test]
fn declared_sizes_are_charged_to_the_budget_before_allocation() {
    // 2²⁴ vertices without data, with 16 influence sets: gigabytes from a small file.
    let mut v = doc(&Data::default());
    let n = 1u64 << 24;
    let accessors = v["accessors"].as_array_mut().unwrap();
    accessors[0] = json!({"componentType": 5126, "count": n, "type": "VEC3", "min": [0, 0, 0], "max": [0, 0, 0]});
    accessors.push(json!({"componentType": 5121, "count": n, "type": "VEC4"}));
    accessors.push(json!({"componentType": 5126, "count": n, "type": "VEC4"}));
    let attrs = &mut v["meshes"][0]["primitives"][0]["attributes"];
    for set in 0..16 {
        attrs[format!("JOINTS_{set}")] = json!(7);
        attrs[format!("WEIGHTS_{set}")] = json!(8);
    }
    v["meshes"][0]["primitives"][0].as_object_mut().unwrap().remove("indices");
    let bytes = serde_json::to_vec(&v).unwrap();
    assert!(bytes.len() < 16_000);
    let e = load_from_bytes(&bytes, None).unwrap_err();
    let GltfError::Budget { path, needed, used, budget } = &e else { panic!("{e}") };
    assert_eq!(*budget, anim_gltf::DEFAULT_MEMORY_BUDGET as u64);
    assert!(used + needed > *budget, "{e}");
    assert!(path.starts_with("accessors[") || path.contains("JOINTS"), "{e}");

    // A small budget refuses the valid document; the default loads it.
    let v = doc(&Data::default());
    let bytes = serde_json::to_vec(&v).unwrap();
    let e =
        load_from_bytes_with(&bytes, None, &LoadOptions { memory_budget: 100, ..LoadOptions::default() }).unwrap_err();
    assert_eq!(e.path(), Some("/buffers/0"), "{e}");
    assert!(load_from_bytes(&bytes, None).is_ok());

    // A declared buffer of a terabyte is refused before it is decoded or read.
    let mut v = doc(&Data::default());
    v["buffers"].as_array_mut().unwrap().push(json!({"byteLength": 1u64 << 40, "uri": "data:;base64,AAAA"}));
    let e = load(&v).unwrap_err();
    assert!(matches!(e, GltfError::Budget { .. }), "{e}");
    assert_eq!(e.path(), Some("/buffers/1"), "{e}");
}

#[test]
fn many_skins_over_many_nodes_are_charged_to_the_budget() {
    // Each skin gets a bind pose over every node: 2,000 skins × 20,000 nodes from a file
    // of about 100 KB would be gigabytes.
    let mut v = doc(&Data::default());
    let nodes = v["nodes"].as_array_mut().unwrap();
    nodes.extend(std::iter::repeat_n(json!({}), 20_000));
    let skins = v["skins"].as_array_mut().unwrap();
    skins.extend(std::iter::repeat_n(json!({"joints": [3]}), 2_000));
    let bytes = serde_json::to_vec(&v).unwrap();
    assert!(bytes.len() < 200_000);
    let e = load_from_bytes(&bytes, None).unwrap_err();
    assert!(matches!(e, GltfError::Budget { .. }), "{e}");
    assert!(e.path().unwrap().starts_with("/skins/"), "{e}");
    // With a tenth of the skins it fits.
    v["skins"].as_array_mut().unwrap().truncate(200);
    let m = load_from_bytes(&serde_json::to_vec(&v).unwrap(), None).unwrap();
    assert_eq!(m.skins.len(), 200);
}

#[test]
fn a_65000_deep_node_chain_loads_without_recursion() {
    const N: usize = 65_000;
    let mut v = doc(&Data::default());
    let nodes = v["nodes"].as_array_mut().unwrap();
    let first = nodes.len();
    nodes[2]["children"] = json!([first]);
    for i in 0..N {
        let mut node = json!({"translation": [0.0, 1.0, 0.0]});
        if i + 1 < N {
            node["children"] = json!([first + i + 1]);
        }
        nodes.push(node);
    }
    let bytes = serde_json::to_vec(&v).unwrap();
    // On a small stack, so that any recursion over the chain overflows here.
    let m = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(move || load_from_bytes(&bytes, None).unwrap())
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(m.skeleton.len(), first + N);
    let mut world = vec![anim_math::Mat4::identity(); m.skeleton.len()];
    m.world_matrices(m.skeleton.rest_pose(), &mut world).unwrap();
    // Node 1 at the origin, node 2 at y = 1, then N more steps of 1.
    assert_eq!(world[m.nodes[first + N - 1].joint][(1, 3)], (N + 1) as f32);

    // Closing the chain into a cycle is a clean hierarchy error.
    v["nodes"][first + N - 1]["children"] = json!([1]);
    let bytes = serde_json::to_vec(&v).unwrap();
    let e = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(move || load_from_bytes(&bytes, None).unwrap_err())
        .unwrap()
        .join()
        .unwrap();
    assert!(matches!(e, GltfError::Hierarchy { .. }), "{e}");
}

#[test]
fn deeply_nested_json_is_a_syntax_error() {
    let mut v = doc(&Data::default());
    v["extras"] = json!(null);
    let text = serde_json::to_string(&v).unwrap();
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let text = text.replace("\"extras\":null", &format!("\"extras\":{deep}"));
    let e = load_from_bytes(text.as_bytes(), None).unwrap_err();
    assert!(matches!(e, GltfError::Syntax(_)), "{e}");
}

// ---------------------------------------------------------------------------------------------
// 8. What the specification (and the validator) calls an error.

fn glb(json_doc: &Value) -> Vec<u8> {
    let mut text = serde_json::to_vec(json_doc).unwrap();
    while !text.len().is_multiple_of(4) {
        text.push(b' ');
    }
    let mut out = Vec::new();
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&((20 + text.len()) as u32).to_le_bytes());
    out.extend_from_slice(&(text.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&text);
    out
}

#[test]
fn glb_length_must_match_the_file() {
    let good = glb(&doc(&Data::default()));
    assert!(load_from_bytes(&good, None).is_ok());
    let mannequin = anim_gltf::mannequin_glb();
    assert!(load_from_bytes(&mannequin, None).is_ok());
    for bytes in [good, mannequin] {
        for delta in [-4i64, 4] {
            let mut b = bytes.clone();
            let len = (b.len() as i64 + delta) as u32;
            b[8..12].copy_from_slice(&len.to_le_bytes());
            let e = load_from_bytes(&b, None).unwrap_err();
            assert!(matches!(e, GltfError::Syntax(_)), "{e}");
            assert!(e.to_string().contains("GLB_LENGTH_MISMATCH"), "{e}");
        }
        // Trailing bytes the header does not count.
        let mut b = bytes.clone();
        b.extend_from_slice(&[0; 8]);
        assert!(load_from_bytes(&b, None).unwrap_err().to_string().contains("GLB_LENGTH_MISMATCH"));
    }
}

#[test]
fn asset_versions() {
    let mut v = doc(&Data::default());
    v["asset"]["version"] = json!("3.0");
    expect_issue("version-3", &v, "/asset/version", "UNKNOWN_ASSET_MAJOR_VERSION");
    v["asset"]["version"] = json!("1.0");
    expect_issue("version-1", &v, "/asset/version", "UNKNOWN_ASSET_MAJOR_VERSION");
    v["asset"]["version"] = json!("2.0");
    v["asset"]["minVersion"] = json!("2.1");
    expect_issue("min-version-greater", &v, "/asset/minVersion", "ASSET_MIN_VERSION_GREATER_THAN_VERSION");
    v["asset"]["version"] = json!("2.1");
    let e = expect_issue("min-version-2.1", &v, "/asset/minVersion", "UNKNOWN_ASSET_MINOR_VERSION");
    assert!(matches!(e, GltfError::Unsupported { .. }), "{e}");
    // A later minor version without minVersion is readable (the spec's forward
    // compatibility), and minVersion 2.0 is fine.
    v["asset"]["minVersion"] = json!("2.0");
    assert!(load(&v).is_ok());
}

#[test]
fn required_properties_and_empty_arrays() {
    let mut v = doc(&Data::default());
    v["buffers"][0].as_object_mut().unwrap().remove("byteLength");
    expect_issue("no-byte-length", &v, "/buffers/0/byteLength", "UNDEFINED_PROPERTY");
    let mut v = doc(&Data::default());
    v["meshes"][0]["primitives"] = json!([]);
    expect_issue("no-primitives", &v, "/meshes/0/primitives", "EMPTY_ENTITY");
}

#[test]
fn normalized_float_or_unsigned_int_is_invalid() {
    for (ct, name) in [(5126, "float"), (5125, "uint")] {
        let mut v = doc(&Data::default());
        v["accessors"][2]["normalized"] = json!(true);
        v["accessors"][2]["componentType"] = json!(ct);
        expect_issue(&format!("normalized-{name}"), &v, "/accessors/2/normalized", "ACCESSOR_NORMALIZED_INVALID");
    }
}

#[test]
fn node_matrices_must_be_trs_and_exclusive() {
    let identity = json!([1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0]);
    let mut v = doc(&Data::default());
    v["nodes"][2]["matrix"] = identity.clone();
    expect_issue("matrix-and-trs", &v, "/nodes/2", "NODE_MATRIX_TRS");
    // Projective: the last row is not (0, 0, 0, 1).
    let mut v = doc(&Data::default());
    let mut m = identity.clone();
    m[3] = json!(0.5);
    v["nodes"][1]["matrix"] = m;
    expect_issue("matrix-projective", &v, "/nodes/1/matrix", "NODE_MATRIX_NON_TRS");
    // Shear: affine, but not rotation · scale.
    let mut v = doc(&Data::default());
    let mut m = identity.clone();
    m[4] = json!(0.5);
    v["nodes"][1]["matrix"] = m;
    expect_issue("matrix-shear", &v, "/nodes/1/matrix", "NODE_MATRIX_NON_TRS");
    // A TRS matrix loads, decomposed.
    let mut v = doc(&Data::default());
    let mut m = identity;
    m[0] = json!(2.0);
    m[13] = json!(3.0);
    v["nodes"][1]["matrix"] = m;
    let model = load(&v).unwrap();
    let rest = model.skeleton.rest_pose().locals()[model.nodes[1].joint];
    assert_eq!((rest.scale.x, rest.translation.y), (2.0, 3.0));
}

#[test]
fn attribute_sets_are_contiguous_and_paired() {
    let mut v = doc(&Data::default());
    v["meshes"][0]["primitives"][0]["attributes"]["JOINTS_2"] = json!(1);
    v["meshes"][0]["primitives"][0]["attributes"]["WEIGHTS_2"] = json!(2);
    let e = expect_issue(
        "joints-gap",
        &v,
        "/meshes/0/primitives/0/attributes/JOINTS_2",
        "MESH_PRIMITIVE_INDEXED_SEMANTIC_CONTINUITY",
    );
    assert!(e.to_string().contains("JOINTS_1"), "{e}");
    let mut v = doc(&Data::default());
    v["meshes"][0]["primitives"][0]["attributes"]["TEXCOORD_1"] = json!(0);
    expect_issue(
        "texcoord-gap",
        &v,
        "/meshes/0/primitives/0/attributes/TEXCOORD_1",
        "MESH_PRIMITIVE_INDEXED_SEMANTIC_CONTINUITY",
    );
    let mut v = doc(&Data::default());
    v["meshes"][0]["primitives"][0]["attributes"]["JOINTS_1"] = json!(1);
    expect_issue(
        "joints-unpaired",
        &v,
        "/meshes/0/primitives/0/attributes/JOINTS_1",
        "MESH_PRIMITIVE_JOINTS_WEIGHTS_MISMATCH",
    );
}

#[test]
fn material_problems_are_all_errors() {
    // Materials are never read, but the validator reports these as errors, and so does the
    // importer: an index out of range and an invalid material are the same class.
    let mut v = doc(&Data::default());
    v["meshes"][0]["primitives"][0]["material"] = json!(5);
    expect_issue("material-index", &v, "/meshes/0/primitives/0/material", "UNRESOLVED_REFERENCE");
    let mut v = doc(&Data::default());
    v["materials"] = json!([{"alphaMode": "SOMETIMES"}]);
    v["meshes"][0]["primitives"][0]["material"] = json!(0);
    expect_issue("material-alpha-mode", &v, "/materials/0/alphaMode", "VALUE_NOT_IN_LIST");
    let mut v = doc(&Data::default());
    v["materials"] = json!([{"pbrMetallicRoughness": {"baseColorTexture": {"index": 3}}}]);
    v["meshes"][0]["primitives"][0]["material"] = json!(0);
    expect_issue(
        "material-texture",
        &v,
        "/materials/0/pbrMetallicRoughness/baseColorTexture/index",
        "UNRESOLVED_REFERENCE",
    );
}

// ---------------------------------------------------------------------------------------------
// 9. Messages name the JSON path; a zero quaternion is not "non-finite".

#[test]
fn degenerate_values_are_named_for_what_they_are() {
    let mut v = doc(&Data::default());
    v["nodes"][2]["rotation"] = json!([0.0, 0.0, 0.0, 1e-30]);
    let e = load(&v).unwrap_err();
    assert!(matches!(e, GltfError::Degenerate { .. }), "{e}");
    assert_eq!(e.path(), Some("/nodes/2/rotation"));
    assert!(e.to_string().contains("zero-length") && !e.to_string().contains("non-finite"), "{e}");

    // Inverse bind matrices whose bind pose overflows: the error names the skin and the node.
    let mut d = Data::default();
    d.ibm[12] = -3e38;
    d.ibm[16 + 12] = 3e38;
    let e = load(&doc(&d)).unwrap_err();
    assert!(matches!(e, GltfError::NonFinite { .. }), "{e}");
    assert_eq!(e.path(), Some("/skins/0/inverseBindMatrices"));
    assert!(e.to_string().contains("/nodes/2"), "{e}");
}
