//! `animtool graph`: the trace of the mannequin's locomotion graph over an input timeline
//! agrees with the same timeline played through `anim_graph` in the test (joint positions
//! bit for bit, states, events, root motion), and malformed inputs and graphs fail with
//! messages that say where.

use anim_graph::clips::ClipSet;
use anim_graph::instance::GraphInstance;
use anim_math::Transform;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

fn dir(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("animtool-graph-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write(d: &Path, name: &str, text: &str) -> PathBuf {
    let p = d.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn animtool(args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_animtool")).args(args).output().unwrap();
    (out.status.success(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

const INPUTS: &str = r#"[
  {"t": 0.2, "set": {"move_z": 2.2}},
  {"t": 1.0, "trigger": "jump", "set": {"grounded": false}},
  {"t": 1.9, "set": {"grounded": true}},
  {"t": 2.5, "trigger": ["punch"], "set": {"move_z": 0.0, "move_x": 0.5}}
]"#;

#[test]
fn the_trace_is_the_graph_played_in_process() {
    let d = dir("trace");
    let graph = write(&d, "locomotion.json", anim_mannequin::LOCOMOTION_GRAPH);
    let inputs = write(&d, "inputs.json", INPUTS);
    let out = d.join("trace.json");
    let (ok, log) = animtool(&[
        "graph",
        graph.to_str().unwrap(),
        "--model",
        "default",
        "--inputs",
        inputs.to_str().unwrap(),
        "--rate",
        "30",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(ok, "{log}");
    let trace: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let frames = trace["frames"].as_array().unwrap();
    // One second past the last change, at 30 Hz, frame 0 at time 0.
    assert_eq!(frames.len(), (3.5f32 * 30.0).floor() as usize + 1);
    // The same timeline in process.
    let m = anim_mannequin::build();
    let clips = ClipSet::from_clips(m.root_motion_clips().into_iter().map(Arc::new));
    let g = Arc::new(anim_graph::file::load(anim_mannequin::LOCOMOTION_GRAPH.as_bytes(), &m.skeleton, &clips).unwrap());
    let mut i = GraphInstance::new(g.clone());
    let (mut pose, mut step, mut events, mut world) =
        (m.skeleton.rest_pose().clone(), Transform::IDENTITY, Vec::new(), Transform::IDENTITY);
    let mut globals = vec![Transform::IDENTITY; m.skeleton.len()];
    let mut states_seen = Vec::new();
    for (k, f) in frames.iter().enumerate() {
        let t = k as f32 / 30.0;
        assert_eq!(f["time"].as_f64().unwrap() as f32, t);
        let at = |x: f32| (t - x).abs() < 1e-6 || (k > 0 && (k - 1) as f32 / 30.0 < x && x <= t);
        if at(0.2) {
            i.set_float(g.float_param("move_z").unwrap(), 2.2).unwrap();
        }
        if at(1.0) {
            i.set_trigger(g.trigger_param("jump").unwrap()).unwrap();
            i.set_bool(g.bool_param("grounded").unwrap(), false).unwrap();
        }
        if at(1.9) {
            i.set_bool(g.bool_param("grounded").unwrap(), true).unwrap();
        }
        if at(2.5) {
            i.set_trigger(g.trigger_param("punch").unwrap()).unwrap();
            i.set_float(g.float_param("move_z").unwrap(), 0.0).unwrap();
            i.set_float(g.float_param("move_x").unwrap(), 0.5).unwrap();
        }
        i.update(if k == 0 { 0.0 } else { 1.0 / 30.0 }, &mut pose, &mut step, &mut events).unwrap();
        world = world.combine(&step);
        pose.globals(&m.skeleton, &mut globals).unwrap();
        for (name, gl) in m.skeleton.names().iter().zip(&globals) {
            let p: Vec<f32> =
                f["joints"][name].as_array().unwrap().iter().map(|x| x.as_f64().unwrap() as f32).collect();
            assert_eq!(p, [gl.translation.x, gl.translation.y, gl.translation.z], "frame {k} joint {name}");
        }
        let root: Vec<f32> =
            f["root"]["translation"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap() as f32).collect();
        assert_eq!(root, [world.translation.x, world.translation.y, world.translation.z], "frame {k}");
        assert_eq!(f["events"].as_array().unwrap().len(), events.len(), "frame {k}");
        for s in f["states"].as_array().unwrap() {
            let pair = (s["machine"].as_str().unwrap().to_owned(), s["state"].as_str().unwrap().to_owned());
            if !states_seen.contains(&pair) {
                states_seen.push(pair);
            }
        }
    }
    let names: Vec<&str> = states_seen.iter().map(|(_, s)| s.as_str()).collect();
    for s in ["locomotion", "takeoff", "air", "land", "none", "punch"] {
        assert!(names.contains(&s), "{s} not in {names:?}");
    }
    assert!(world.translation.z > 1.5, "ran forwards: {:?}", world.translation);
    let enters: Vec<&str> = frames
        .iter()
        .flat_map(|f| f["events"].as_array().unwrap().iter())
        .filter(|e| e["kind"] == "enter")
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(enters, ["takeoff", "air", "land", "locomotion", "punch", "none"]);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn malformed_inputs_and_graphs_say_where() {
    let d = dir("malformed");
    let graph = write(&d, "locomotion.json", anim_mannequin::LOCOMOTION_GRAPH);
    let run = |inputs: &str, graph: &Path| {
        let p = write(&d, "bad.json", inputs);
        let out = d.join("out.json");
        animtool(&["graph", graph.to_str().unwrap(), "--inputs", p.to_str().unwrap(), "--out", out.to_str().unwrap()])
    };
    for (inputs, expect) in [
        (
            r#"[{"t": 0.0, "set": {"move_z": 1}}, {"t": 0.5, "set": {"sped": 2}}]"#,
            "/1/set/sped: the graph has no parameter \"sped\"",
        ),
        (r#"[{"t": 1.0}, {"t": 0.5}]"#, "/1/t"),
        (r#"[{"t": 0.0, "set": {"grounded": 2}}]"#, "/0/set/grounded: expected true or false"),
        (r#"[{"t": 0.0, "trigger": "move_x"}]"#, "/0/trigger: \"move_x\" is not a trigger"),
        (r#"[{"t": 0.0, "when": 1}]"#, "/0/when: unknown member"),
        (r#"{"t": 0.0}"#, "expected an array"),
        ("[{", "not JSON"),
    ] {
        let (ok, log) = run(inputs, &graph);
        assert!(!ok && log.contains(expect), "{inputs}: {log}");
    }
    let broken = write(&d, "broken.json", &anim_mannequin::LOCOMOTION_GRAPH.replace("\"jump_air\"", "\"jump_aria\""));
    let (ok, log) = run("[]", &broken);
    assert!(!ok && log.contains("/nodes/") && log.contains("jump_aria"), "{log}");
    std::fs::remove_dir_all(&d).unwrap();
}
