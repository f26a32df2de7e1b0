//! Runs the `animtool` binary and checks its JSON.

use anim_testkit::assets::path_str as asset;
use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Output};

fn tmp(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name)
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_animtool")).args(args).output().expect("animtool runs")
}

fn run_ok(args: &[&str]) -> String {
    let out = run(args);
    assert!(out.status.success(), "animtool {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn skin_json(name: &str, args: &[&str]) -> Value {
    let out = tmp(name);
    let mut all: Vec<&str> = args.to_vec();
    let out_s = out.to_str().unwrap().to_owned();
    all.extend(["--out", &out_s]);
    run_ok(&all);
    serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap()
}

fn floats(v: &Value) -> Vec<f32> {
    v.as_array().unwrap().iter().map(|x| x.as_f64().unwrap() as f32).collect()
}

#[test]
fn skin_json_shape_and_values() {
    let file = asset("SimpleSkin/SimpleSkin.gltf");
    let j = skin_json("simple.json", &["skin", &file, "--clip", "0", "--times", "1.0,6.5", "--time-policy", "wrap"]);
    assert_eq!(j["model"], file.as_str());
    assert_eq!(j["clip"]["index"], 0);
    assert!(j["clip"]["name"].is_null());
    assert_eq!(j["clip"]["duration"].as_f64().unwrap(), 5.5);
    assert_eq!(j["method"], "lbs");
    assert_eq!(j["backend"], "cpu");
    let samples = j["samples"].as_array().unwrap();
    assert_eq!(samples.len(), 2);
    assert_eq!(samples[1]["time"].as_f64().unwrap(), 6.5, "the requested time is reported");
    for s in samples {
        let skins = s["skins"].as_array().unwrap();
        assert_eq!(skins.len(), 1);
        assert_eq!(skins[0]["skin"], 0);
        let jw = skins[0]["jointWorld"].as_array().unwrap();
        assert_eq!(jw.len(), 2);
        // Joint 1 at t = 1 s (6.5 wraps to 1): 90° about Z at (0, 1, 0), column-major.
        let m = floats(&jw[1]);
        assert_eq!(m.len(), 16);
        let expect = [0.0, 1.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 1.0];
        for (a, b) in m.iter().zip(expect) {
            assert!((a - b).abs() < 1e-5, "{m:?}");
        }
        let prims = s["primitives"].as_array().unwrap();
        assert_eq!(prims.len(), 1);
        assert_eq!(
            (prims[0]["node"].as_u64(), prims[0]["mesh"].as_u64(), prims[0]["primitive"].as_u64()),
            (Some(0), Some(0), Some(0))
        );
        assert_eq!(prims[0]["skinned"], true);
        assert!(prims[0].get("normals").is_none());
        let p = floats(&prims[0]["positions"]);
        assert_eq!(p.len(), 30);
        // Vertex 8 (-0.5, 2, 0) follows joint 1: R(90°)·(-0.5, 1, 0) + (0, 1, 0) = (-1, 0.5, 0).
        assert!((p[24] + 1.0).abs() < 1e-5 && (p[25] - 0.5).abs() < 1e-5 && p[26].abs() < 1e-5, "{p:?}");
    }
}

#[test]
fn keys_mid_rest_and_bin() {
    let file = asset("SimpleSkin/SimpleSkin.gltf");
    let keys = skin_json("keys.json", &["skin", &file, "--times", "keys"]);
    let times: Vec<f32> =
        keys["samples"].as_array().unwrap().iter().map(|s| s["time"].as_f64().unwrap() as f32).collect();
    assert_eq!(times, (0..12).map(|k| k as f32 * 0.5).collect::<Vec<_>>());
    let mid = skin_json("mid.json", &["skin", &file, "--times", "mid"]);
    let times: Vec<f32> =
        mid["samples"].as_array().unwrap().iter().map(|s| s["time"].as_f64().unwrap() as f32).collect();
    assert_eq!(times, (0..11).map(|k| k as f32 * 0.5 + 0.25).collect::<Vec<_>>());

    // --rest: the authored TRS, here equal to the bind pose, gives back POSITION.
    let rest = skin_json("rest.json", &["skin", &file, "--rest", "--times", "3"]);
    assert!(rest["clip"].is_null());
    let p = floats(&rest["samples"][0]["primitives"][0]["positions"]);
    assert!((p[24] + 0.5).abs() < 1e-6 && (p[25] - 2.0).abs() < 1e-6);
    assert!(!run(&["skin", &file, "--rest", "--times", "keys", "--out", "/dev/null"]).status.success());

    // --bin: the same numbers, in a little-endian f32 file, with normals (CesiumMan has them).
    let cesium = asset("CesiumMan/CesiumMan.glb");
    let inline = skin_json("cesium.json", &["skin", &cesium, "--times", "0.5", "--normals", "--method", "dq"]);
    let bin_path = tmp("cesium.bin");
    let binj = skin_json(
        "cesium-bin.json",
        &["skin", &cesium, "--times", "0.5", "--normals", "--method", "dq", "--bin", bin_path.to_str().unwrap()],
    );
    assert_eq!(binj["method"], "dq");
    let bin = std::fs::read(&bin_path).unwrap();
    let all: Vec<f32> = bin.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect();
    for key in ["positions", "normals"] {
        let r = &binj["samples"][0]["primitives"][0][key];
        let (off, len) = (r["binOffset"].as_u64().unwrap() as usize, r["length"].as_u64().unwrap() as usize);
        assert_eq!(len, 3 * 3273);
        let want = floats(&inline["samples"][0]["primitives"][0][key]);
        assert_eq!(&all[off / 4..off / 4 + len], want.as_slice(), "{key}");
    }
    // Fox has no normals: `normals` is null.
    let fox = skin_json("fox.json", &["skin", &asset("Fox/Fox.glb"), "--clip", "Walk", "--times", "0.1", "--normals"]);
    assert!(fox["samples"][0]["primitives"][0]["normals"].is_null());
    assert_eq!(fox["clip"]["name"], "Walk");
}

#[test]
fn gpu_backend_matches_cpu_backend() {
    // The compute-shader path (lavapipe here) must give the CPU path's numbers.
    let file = asset("RiggedSimple/RiggedSimple.glb");
    for method in ["lbs", "dq"] {
        let mut outs = Vec::new();
        for backend in ["cpu", "gpu"] {
            let out = tmp(&format!("rs_{method}_{backend}.json"));
            let args =
                ["skin", &file, "--clip", "0", "--times", "mid", "--normals", "--method", method, "--backend", backend];
            run_ok(&[&args[..], &["--out", out.to_str().unwrap()]].concat());
            let j: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
            assert_eq!(j["backend"], backend);
            outs.push(j);
        }
        let (cpu, gpu) = (&outs[0]["samples"], &outs[1]["samples"]);
        assert_eq!(cpu.as_array().unwrap().len(), gpu.as_array().unwrap().len());
        for (a, b) in cpu.as_array().unwrap().iter().zip(gpu.as_array().unwrap()) {
            let (pa, pb) = (floats(&a["primitives"][0]["positions"]), floats(&b["primitives"][0]["positions"]));
            assert_eq!(pa.len(), pb.len());
            let worst = pa.iter().zip(&pb).map(|(x, y)| (x - y).abs()).fold(0.0f32, f32::max);
            // RiggedSimple is about 11 units tall: 1e-5 of its diagonal is ~1e-4.
            assert!(worst < 1e-4, "{method}: worst difference {worst}");
            let (na, nb) = (floats(&a["primitives"][0]["normals"]), floats(&b["primitives"][0]["normals"]));
            let worst_n = na.iter().zip(&nb).map(|(x, y)| (x - y).abs()).fold(0.0f32, f32::max);
            assert!(worst_n < 1e-4, "{method}: worst normal difference {worst_n}");
        }
    }
}

#[test]
fn bad_input_is_a_clear_error() {
    let file = asset("SimpleSkin/SimpleSkin.gltf");
    for args in [
        vec!["skin", "/nonexistent.glb", "--out", "/dev/null"],
        vec!["skin", &file, "--clip", "nope", "--out", "/dev/null"],
        vec!["skin", &file, "--times", "1,x", "--out", "/dev/null"],
        vec!["sample", &file, "--clip", "0", "--time", "nan"],
        vec!["inspect", "/nonexistent.glb"],
    ] {
        let out = run(&args);
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(!err.trim().is_empty());
    }
}

#[test]
fn sample_inspect_and_export_default() {
    let file = asset("SimpleSkin/SimpleSkin.gltf");
    let j: Value = serde_json::from_str(&run_ok(&["sample", &file, "--clip", "0", "--time", "1"])).unwrap();
    let nodes = j["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 3);
    let w = floats(&nodes[2]["world"]);
    assert!((w[1] - 1.0).abs() < 1e-5 && (w[13] - 1.0).abs() < 1e-6, "{w:?}");
    assert_eq!(nodes[2]["skinJoint"], true);

    let text = run_ok(&["inspect", &asset("Woman/Woman.gltf")]);
    assert!(text.contains("41 joints"), "{text}");
    assert!(text.contains("5718 vertices"), "{text}");
    assert!(text.contains("\"Lean_Left\""), "{text}");

    let out = tmp("default.glb");
    run_ok(&["export-default", out.to_str().unwrap()]);
    let text = run_ok(&["inspect", out.to_str().unwrap()]);
    for needle in ["\"pelvis\"", "\"ball_r\"", "\"walk\"", "\"lean_left\"", "curve \"foot_contact_l\""] {
        assert!(text.contains(needle), "{needle} missing:\n{text}");
    }
    for sub in ["inspect", "sample", "skin", "export-default"] {
        let help = run_ok(&[sub, "--help"]);
        assert!(help.contains("Usage"), "{sub}");
    }
}

#[test]
fn gpu_dq_keeps_palette_scale() {
    // dq.gltf's TwistingWithScale scales a joint, so its DQ palettes carry scale: both
    // backends follow anim-core's scale-aware SkinMethod::Dq and agree on every vertex.
    let file = asset("DQ/dq.gltf");
    let base = ["skin", &file, "--clip", "TwistingWithScale", "--times", "0.5,1.5,2.5", "--method", "dq", "--normals"];
    let cpu = skin_json("dq_scaled_cpu.json", &[&base[..], &["--backend", "cpu"]].concat());
    let out_file = tmp("dq_scaled_gpu.json");
    let out = run(&[&base[..], &["--backend", "gpu", "--out", out_file.to_str().unwrap()]].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stderr.is_empty(), "no note or warning: {}", String::from_utf8_lossy(&out.stderr));
    let gpu: Value = serde_json::from_str(&std::fs::read_to_string(&out_file).unwrap()).unwrap();
    let all = |j: &Value, key: &str| -> Vec<f32> {
        j["samples"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|s| s["primitives"].as_array().unwrap().iter().flat_map(|p| floats(&p[key])))
            .collect()
    };
    let (cp, gp) = (all(&cpu, "positions"), all(&gpu, "positions"));
    assert!(!cp.is_empty() && cp.len() == gp.len());
    let (lo, hi) = cp.chunks(3).fold(([f32::MAX; 3], [f32::MIN; 3]), |(lo, hi), p| {
        (std::array::from_fn(|i| lo[i].min(p[i])), std::array::from_fn(|i| hi[i].max(p[i])))
    });
    let diagonal = (0..3).map(|i| (hi[i] - lo[i]).powi(2)).sum::<f32>().sqrt();
    let worst = cp.iter().zip(&gp).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
    assert!(worst <= 1e-5 * diagonal, "worst {worst} of diagonal {diagonal}");
    let (cn, gn) = (all(&cpu, "normals"), all(&gpu, "normals"));
    assert!(cn.iter().zip(&gn).all(|(a, b)| (a - b).abs() < 1e-4));
}

/// Standard base64 of `bytes` (for a data URI).
fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::new();
    for c in bytes.chunks(3) {
        let n =
            (u32::from(c[0]) << 16) | (u32::from(*c.get(1).unwrap_or(&0)) << 8) | u32::from(*c.get(2).unwrap_or(&0));
        for k in 0..4 {
            s.push(if k <= c.len() { A[(n >> (18 - 6 * k) & 63) as usize] as char } else { '=' });
        }
    }
    s
}

/// A chain of `depth` nodes, each the only child of the one before: `inspect` output must
/// grow linearly with the depth (it used to indent quadratically), and the deepest node
/// still shows its depth.
#[test]
fn inspect_deep_chain_is_linear() {
    let lens: Vec<usize> = [5_000usize, 20_000]
        .into_iter()
        .map(|depth| {
            let nodes: Vec<Value> = (0..depth)
                .map(|i| if i + 1 < depth { serde_json::json!({"children": [i + 1]}) } else { serde_json::json!({}) })
                .collect();
            let doc = serde_json::json!({"asset": {"version": "2.0"}, "nodes": nodes});
            let file = tmp(&format!("chain{depth}.gltf"));
            std::fs::write(&file, serde_json::to_vec(&doc).unwrap()).unwrap();
            let text = run_ok(&["inspect", file.to_str().unwrap()]);
            assert!(text.contains(&format!("[depth {}] - {} ", depth - 1, depth - 1)), "deepest node missing");
            let longest = text.lines().map(str::len).max().unwrap();
            assert!(longest < 120, "a line of {longest} bytes");
            text.len()
        })
        .collect();
    // Four times the depth, about four times the output (quadratic would be sixteen).
    let ratio = lens[1] as f64 / lens[0] as f64;
    assert!((3.5..4.6).contains(&ratio), "{lens:?}");
}

/// A small file declaring many zero-filled vertices: `skin` streams its output, which
/// parses as JSON with every vertex (unweighted vertices keep their rest position, the
/// origin) and the joint following its animation; `--bin` streams the same values.
#[test]
fn skin_streams_many_vertices() {
    let n = 150_000usize;
    let mut bin: Vec<u8> = Vec::new();
    let f = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let mut ibm = [0.0f32; 16];
    for d in 0..4 {
        ibm[d * 5] = 1.0;
    }
    bin.extend(f(&ibm)); // 0..64
    bin.extend(f(&[0.0, 1.0])); // 64..72 key times
    bin.extend(f(&[0.0, 0.0, 0.0, 2.0, 3.0, 4.0])); // 72..96 translations
    let doc = serde_json::json!({
        "asset": {"version": "2.0"},
        "scene": 0,
        "scenes": [{"nodes": [0, 1]}],
        "nodes": [{"mesh": 0, "skin": 0}, {"name": "bone"}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0, "JOINTS_0": 1, "WEIGHTS_0": 2}}]}],
        "skins": [{"joints": [1], "inverseBindMatrices": 3}],
        "animations": [{
            "samplers": [{"input": 4, "output": 5}],
            "channels": [{"sampler": 0, "target": {"node": 1, "path": "translation"}}]
        }],
        "buffers": [{"byteLength": bin.len(), "uri": format!("data:application/octet-stream;base64,{}", base64(&bin))}],
        "bufferViews": [
            {"buffer": 0, "byteOffset": 0, "byteLength": 64},
            {"buffer": 0, "byteOffset": 64, "byteLength": 8},
            {"buffer": 0, "byteOffset": 72, "byteLength": 24}
        ],
        "accessors": [
            {"componentType": 5126, "count": n, "type": "VEC3", "min": [0.0, 0.0, 0.0], "max": [0.0, 0.0, 0.0]},
            {"componentType": 5121, "count": n, "type": "VEC4"},
            {"componentType": 5126, "count": n, "type": "VEC4"},
            {"bufferView": 0, "componentType": 5126, "count": 1, "type": "MAT4"},
            {"bufferView": 1, "componentType": 5126, "count": 2, "type": "SCALAR", "min": [0.0], "max": [1.0]},
            {"bufferView": 2, "componentType": 5126, "count": 2, "type": "VEC3"}
        ]
    });
    let file = tmp("many_vertices.gltf");
    std::fs::write(&file, serde_json::to_vec(&doc).unwrap()).unwrap();
    let file = file.to_str().unwrap().to_owned();
    let j = skin_json("many_vertices.json", &["skin", &file, "--times", "keys"]);
    let samples = j["samples"].as_array().unwrap();
    assert_eq!(samples.len(), 2);
    for (s, want) in samples.iter().zip([[0.0f32, 0.0, 0.0], [2.0, 3.0, 4.0]]) {
        let world = floats(&s["skins"][0]["jointWorld"][0]);
        assert_eq!(&world[12..15], &want);
        let p = floats(&s["primitives"][0]["positions"]);
        assert_eq!(p.len(), 3 * n);
        assert!(p.iter().all(|x| *x == 0.0));
    }
    let (out, bin_out) = (tmp("many_vertices_bin.json"), tmp("many_vertices.bin"));
    run_ok(&["skin", &file, "--times", "keys", "--out", out.to_str().unwrap(), "--bin", bin_out.to_str().unwrap()]);
    let j: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let second = &j["samples"][1]["primitives"][0]["positions"];
    assert_eq!(second["binOffset"].as_u64(), Some((n * 12) as u64));
    assert_eq!(second["length"].as_u64(), Some((n * 3) as u64));
    let bytes = std::fs::read(&bin_out).unwrap();
    assert_eq!(bytes.len(), 2 * n * 12);
    assert!(bytes.iter().all(|b| *b == 0));
}
