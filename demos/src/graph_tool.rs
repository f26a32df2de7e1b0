//! `animtool graph`: plays an animation graph over a timeline of parameter changes and
//! writes what it did, frame by frame, as JSON.
//!
//! ```text
//! animtool graph GRAPH.json --model FILE|default --inputs INPUTS.json --rate HZ --out TRACE.json [--duration S]
//! ```
//!
//! `INPUTS.json` is an array of changes, in time order:
//! `[{"t": 0.5, "set": {"move_z": 2.0, "grounded": false}}, {"t": 1.0, "trigger": "jump"}]`
//! (`set` takes numbers for float parameters and `true`/`false` for bools; `trigger` one
//! name or an array of names). A change at time `t` is applied before the first frame at or
//! after `t`. Frames are `1 / HZ` apart, frame 0 at time 0 (an update of 0 s); the timeline
//! ends `--duration` seconds in (default: one second after the last change).
//!
//! `TRACE.json` is `{"graph", "model", "rate", "frames": [{"time", "states": [{"machine",
//! "state"}], "joints": {NAME: [x, y, z]}, "root": {"translation": [x, y, z], "rotation":
//! [x, y, z, w]}, "events": [{"kind", "name", …}]}]}`: the machines taking part and their
//! states, every joint's model-space position, the root motion accumulated since time 0
//! (`world = world · step`), and the events the frame fired. Foot-grounding nodes have no
//! ground here and leave the pose as it is. `default` is the mannequin with its root-motion
//! clips; a glTF model's clips get their root motion extracted as the locomotion demo does.

use crate::DemoError;
use crate::character::Character;
use crate::scenes::locomotion::graph_clips;
use anim_graph::event::GraphEvent;
use anim_graph::graph::Graph;
use anim_graph::instance::GraphInstance;
use anim_graph::param::ParamKind;
use anim_math::{Transform, Vec3};
use serde_json::{Value, json};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The arguments of `animtool graph`.
#[derive(Clone, Debug, clap::Args)]
pub struct GraphArgs {
    /// The graph file (JSON, see docs/graph-format.md).
    pub graph: PathBuf,
    /// A .gltf or .glb file, or `default` for the mannequin.
    #[arg(long, default_value = "default")]
    pub model: String,
    /// The timeline of parameter changes (JSON).
    #[arg(long)]
    pub inputs: PathBuf,
    /// Frames a second.
    #[arg(long, default_value_t = 30.0)]
    pub rate: f32,
    /// Seconds to play (default: one second after the last change).
    #[arg(long)]
    pub duration: Option<f32>,
    /// Output trace (JSON).
    #[arg(long)]
    pub out: PathBuf,
}

/// A value a change sets.
#[derive(Clone, Debug, PartialEq)]
enum SetValue {
    Float(f32),
    Bool(bool),
}

/// One change of the timeline.
#[derive(Clone, Debug, PartialEq)]
struct Change {
    t: f32,
    set: Vec<(String, SetValue)>,
    triggers: Vec<String>,
}

fn input_error(path: &Path, pointer: &str, what: impl std::fmt::Display) -> DemoError {
    DemoError::Args(format!("{}: {pointer}: {what}", path.display()))
}

/// Reads and checks the inputs file against the graph's parameters.
fn read_inputs(path: &Path, graph: &Graph) -> Result<Vec<Change>, DemoError> {
    let bytes = std::fs::read(path).map_err(|e| DemoError::Args(format!("{}: {e}", path.display())))?;
    let doc: Value = serde_json::from_slice(&bytes).map_err(|e| input_error(path, "", format!("not JSON: {e}")))?;
    let Value::Array(items) = doc else {
        return Err(input_error(path, "", "expected an array of changes"));
    };
    let known = || graph.params().infos().iter().map(|p| p.name.as_str()).collect::<Vec<_>>().join(", ");
    let kind =
        |name: &str, ptr: &str| {
            graph.params().index(name).map(|i| graph.params().infos()[i].kind).ok_or_else(|| {
                input_error(path, ptr, format!("the graph has no parameter {name:?} (it has: {})", known()))
            })
        };
    let mut out = Vec::with_capacity(items.len());
    let mut last = 0.0f32;
    for (i, item) in items.iter().enumerate() {
        let at = format!("/{i}");
        let Value::Object(m) = item else { return Err(input_error(path, &at, "expected an object")) };
        if let Some(k) = m.keys().find(|k| !["t", "set", "trigger"].contains(&k.as_str())) {
            return Err(input_error(path, &format!("{at}/{k}"), "unknown member (members: t, set, trigger)"));
        }
        let t = m
            .get("t")
            .and_then(Value::as_f64)
            .ok_or_else(|| input_error(path, &format!("{at}/t"), "expected a number"))? as f32;
        if !(t.is_finite() && t >= last) {
            return Err(input_error(
                path,
                &format!("{at}/t"),
                format!("{t} is not finite, ≥ 0 and ≥ the time before it"),
            ));
        }
        last = t;
        let mut change = Change { t, set: Vec::new(), triggers: Vec::new() };
        if let Some(set) = m.get("set") {
            let Value::Object(set) = set else {
                return Err(input_error(path, &format!("{at}/set"), "expected an object"));
            };
            for (name, v) in set {
                let ptr = format!("{at}/set/{name}");
                let value = match (kind(name, &ptr)?, v) {
                    (ParamKind::Float, Value::Number(n)) => {
                        let x = n.as_f64().unwrap_or(f64::NAN) as f32;
                        if !x.is_finite() {
                            return Err(input_error(path, &ptr, "not a finite number"));
                        }
                        SetValue::Float(x)
                    }
                    (ParamKind::Bool, Value::Bool(b)) => SetValue::Bool(*b),
                    (ParamKind::Trigger, _) => {
                        return Err(input_error(path, &ptr, "a trigger is set with \"trigger\", not \"set\""));
                    }
                    (k, _) => {
                        return Err(input_error(
                            path,
                            &ptr,
                            format!(
                                "expected {} for a {} parameter",
                                if k == ParamKind::Float { "a number" } else { "true or false" },
                                k.name()
                            ),
                        ));
                    }
                };
                change.set.push((name.clone(), value));
            }
        }
        if let Some(tr) = m.get("trigger") {
            let names: Vec<(String, &Value)> = match tr {
                Value::Array(a) => a.iter().enumerate().map(|(k, v)| (format!("{at}/trigger/{k}"), v)).collect(),
                v => vec![(format!("{at}/trigger"), v)],
            };
            for (ptr, v) in names {
                let name = v.as_str().ok_or_else(|| input_error(path, &ptr, "expected a trigger's name"))?;
                if kind(name, &ptr)? != ParamKind::Trigger {
                    return Err(input_error(path, &ptr, format!("{name:?} is not a trigger")));
                }
                change.triggers.push(name.to_owned());
            }
        }
        out.push(change);
    }
    Ok(out)
}

fn apply(instance: &mut GraphInstance, graph: &Graph, change: &Change) -> Result<(), DemoError> {
    let err = |e: anim_graph::param::ParamError| DemoError::Args(e.to_string());
    for (name, v) in &change.set {
        match v {
            SetValue::Float(x) => instance.set_float(graph.float_param(name).map_err(err)?, *x).map_err(err)?,
            SetValue::Bool(b) => instance.set_bool(graph.bool_param(name).map_err(err)?, *b).map_err(err)?,
        }
    }
    for name in &change.triggers {
        instance.set_trigger(graph.trigger_param(name).map_err(err)?).map_err(err)?;
    }
    Ok(())
}

fn event_json(graph: &Graph, e: &GraphEvent) -> Value {
    let name = graph.event_name(e).unwrap_or("");
    match *e {
        GraphEvent::Clip { node, clip, weight, .. } => json!({
            "kind": "clip", "name": name, "node": graph.node_name(node), "clip": graph.clip_name(clip), "weight": weight
        }),
        GraphEvent::Enter { machine, .. } => {
            json!({"kind": "enter", "name": name, "machine": graph.node_name(machine)})
        }
        GraphEvent::Exit { machine, .. } => json!({"kind": "exit", "name": name, "machine": graph.node_name(machine)}),
        GraphEvent::Transition { machine, from, .. } => json!({
            "kind": "transition", "name": name, "machine": graph.node_name(machine), "from": graph.state_name(machine, from)
        }),
    }
}

/// Runs `animtool graph` (see the [module docs](self)).
///
/// # Errors
/// Unreadable or refused files (the graph's and the inputs' errors name the JSON pointer at
/// fault), a bad rate or duration, or an unwritable output.
pub fn run(args: &GraphArgs) -> Result<(), DemoError> {
    if !(args.rate.is_finite() && args.rate > 0.0 && args.rate <= 10_000.0) {
        return Err(DemoError::Args(format!("--rate {}: expected a rate in (0, 10000] Hz", args.rate)));
    }
    let character =
        if args.model == "default" { Character::mannequin() } else { Character::from_gltf(Path::new(&args.model))? };
    let clips = graph_clips(&character)?;
    let text = std::fs::read(&args.graph).map_err(|e| DemoError::Args(format!("{}: {e}", args.graph.display())))?;
    let graph = anim_graph::file::load(&text, &character.skeleton, &clips)
        .map_err(|e| DemoError::Args(format!("{}: {e}", args.graph.display())))?;
    for w in graph.warnings() {
        eprintln!("animtool: {}: warning: {w}", args.graph.display());
    }
    let graph = Arc::new(graph);
    let changes = read_inputs(&args.inputs, &graph)?;
    let duration = args.duration.unwrap_or_else(|| changes.last().map_or(0.0, |c| c.t) + 1.0);
    if !(duration.is_finite() && duration >= 0.0 && duration * args.rate <= 1.0e6) {
        return Err(DemoError::Args(format!("--duration {duration}: expected at most a million frames")));
    }
    let sk = &character.skeleton;
    let mut instance = GraphInstance::new(graph.clone());
    let (mut pose, mut step, mut events) = (sk.rest_pose().clone(), Transform::IDENTITY, Vec::new());
    let mut world = Transform::IDENTITY;
    let mut model = vec![Transform::IDENTITY; sk.len()];
    let file = std::fs::File::create(&args.out).map_err(|e| DemoError::Args(format!("{}: {e}", args.out.display())))?;
    let mut w = BufWriter::new(file);
    let io = |e: std::io::Error| DemoError::Args(format!("{}: {e}", args.out.display()));
    let head = json!({"graph": args.graph.display().to_string(), "model": args.model, "rate": args.rate});
    let head = serde_json::to_string(&head).expect("a JSON value always serializes");
    write!(w, "{},\"frames\":[", &head[..head.len() - 1]).map_err(io)?;
    let frames = (duration * args.rate).floor() as usize + 1;
    let mut next = 0;
    for k in 0..frames {
        let time = k as f32 / args.rate;
        while next < changes.len() && changes[next].t <= time + 1e-6 {
            apply(&mut instance, &graph, &changes[next])?;
            next += 1;
        }
        let dt = if k == 0 { 0.0 } else { 1.0 / args.rate };
        instance
            .update(dt, &mut pose, &mut step, &mut events)
            .map_err(|e| DemoError::Args(format!("update at {time} s: {e}")))?;
        world = world.combine(&step);
        pose.globals(sk, &mut model)?;
        let joints: serde_json::Map<String, Value> = sk
            .names()
            .iter()
            .zip(&model)
            .map(|(n, g)| (n.clone(), json!([g.translation.x, g.translation.y, g.translation.z])))
            .collect();
        let states: Vec<Value> = instance
            .active_states()
            .map(|(m, s)| json!({"machine": graph.node_name(m), "state": graph.state_name(m, s)}))
            .collect();
        let q = world.rotation.quaternion();
        let t: Vec3 = world.translation;
        let frame = json!({
            "time": time,
            "states": states,
            "joints": joints,
            "root": {"translation": [t.x, t.y, t.z], "rotation": [q.i, q.j, q.k, q.w]},
            "events": events.iter().map(|e| event_json(&graph, e)).collect::<Vec<_>>(),
        });
        if k > 0 {
            w.write_all(b",").map_err(io)?;
        }
        serde_json::to_writer(&mut w, &frame).map_err(|e| DemoError::Args(e.to_string()))?;
    }
    w.write_all(b"]}\n").map_err(io)?;
    w.flush().map_err(io)?;
    println!("animtool graph: {frames} frames at {} Hz written to {}", args.rate, args.out.display());
    Ok(())
}
