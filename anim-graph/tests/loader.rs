//! The graph file loader: a file with every node kind loads and matches the builder's
//! description; writing a description and reading it back gives it again; and every class
//! of error the loader reports comes with the JSON pointer (or line and column) of the
//! value at fault.

mod common;

use anim_graph::builder::GraphBuilder;
use anim_graph::clips::ClipSet;
use anim_graph::error::{BuildErrorKind, WarningKind};
use anim_graph::file::{FormatErrorKind, LoadError, load, parse, to_json};
use anim_graph::limits::{MAX_FILE_BYTES, MAX_JSON_DEPTH, MAX_NODES};
use common::{chain, hold};
use serde_json::{Value, json};

const ALL: &str = include_str!("files/all_nodes.json");

fn clips() -> ClipSet {
    ClipSet::from_clips([hold("a", 1.0, 1.0, &[]), hold("b", 2.0, 0.5, &[]), hold("c", 3.0, 2.0, &[])])
}

fn doc() -> Value {
    serde_json::from_str(ALL).unwrap()
}

/// `doc` with the value at `pointer` replaced by `value` (added when the member is new).
fn with(mut doc: Value, pointer: &str, value: Value) -> Vec<u8> {
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    match doc.pointer_mut(parent).unwrap_or_else(|| panic!("no {parent}")) {
        Value::Object(m) => {
            m.insert(key.to_owned(), value);
        }
        Value::Array(a) => a[key.parse::<usize>().unwrap()] = value,
        _ => panic!("{parent} is not a container"),
    }
    serde_json::to_vec(&doc).unwrap()
}

/// `doc` without the member at `pointer`.
fn without(mut doc: Value, pointer: &str) -> Vec<u8> {
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    doc.pointer_mut(parent).unwrap().as_object_mut().unwrap().remove(key);
    serde_json::to_vec(&doc).unwrap()
}

fn error(bytes: &[u8]) -> LoadError {
    load(bytes, &chain(5), &clips()).map(|_| ()).unwrap_err()
}

/// The error's pointer and kind, for a build error.
fn build_error(bytes: &[u8]) -> (String, BuildErrorKind) {
    match error(bytes) {
        LoadError::Build(e) => (e.pointer, e.kind),
        other => panic!("not a build error: {other}"),
    }
}

fn format_error(bytes: &[u8]) -> (String, FormatErrorKind) {
    match error(bytes) {
        LoadError::Format { pointer, kind } => (pointer, kind),
        other => panic!("not a format error: {other}"),
    }
}

#[test]
fn the_file_with_every_node_loads_and_runs() {
    let g = load(ALL.as_bytes(), &chain(5), &clips()).unwrap();
    assert!(g.warnings().is_empty(), "{:?}", g.warnings());
    assert_eq!(g.node_count(), 18);
    // Every node listed once, the root first, each found again by its name.
    let nodes: Vec<_> = g.nodes().collect();
    assert_eq!((nodes.len(), nodes[0]), (18, g.root()));
    for &n in &nodes {
        assert_eq!(g.node(g.node_name(n).unwrap()), Some(n));
    }
    let g = std::sync::Arc::new(g);
    let mut r = common::Run::new(&g);
    r.instance.set_trigger(g.trigger_param("jump").unwrap()).unwrap();
    for _ in 0..120 {
        r.step(1.0 / 60.0);
        assert!(r.pose.locals().iter().all(|t| t.is_finite()));
    }
}

#[test]
fn written_descriptions_read_back_the_same() {
    let d = parse(ALL.as_bytes()).unwrap();
    let again = parse(to_json(&d).as_bytes()).unwrap();
    assert_eq!(again, d);
    // A builder's description goes through a file unchanged, and builds the same graph.
    let mut b = GraphBuilder::new();
    b.float_range("speed", 0.5, 0.0, 2.0).trigger("go").bool("on", true);
    b.clip("na", "a").speed("speed");
    b.clip("nb", "b").once();
    let mut m = b.machine("m", "A");
    m.state("A", "na").state("B", "nb").empty_state("C");
    m.transition("A", "B", anim_graph::desc::Condition::trigger("go")).inertialize(0.25).priority(3).interruptible();
    m.any_state("C", anim_graph::desc::Condition::bool("on", false)).crossfade(0.5);
    let desc = b.into_desc("m");
    assert_eq!(parse(to_json(&desc).as_bytes()).unwrap(), desc);
}

#[test]
fn size_depth_and_syntax_errors_say_where() {
    let big = vec![b' '; MAX_FILE_BYTES + 1];
    assert!(matches!(error(&big), LoadError::TooLarge { .. }));
    let deep = format!("{{\"nodes\": {}{}}}", "[".repeat(MAX_JSON_DEPTH + 1), "]".repeat(MAX_JSON_DEPTH + 1));
    match error(deep.as_bytes()) {
        LoadError::TooDeep { line: 1, column, .. } => assert_eq!(column, 10 + MAX_JSON_DEPTH),
        other => panic!("{other}"),
    }
    // Brackets inside strings do not count.
    let quoted = format!("{{\"root\": \"{}\", \"nodes\": []}}", "[".repeat(200));
    assert!(matches!(error(quoted.as_bytes()), LoadError::Build(_)));
    match error(b"{\n  \"nodes\": [}\n") {
        LoadError::Syntax { line: 2, column: 13, .. } => {}
        other => panic!("{other}"),
    }
    assert!(matches!(error(b"\xff\xfe"), LoadError::Syntax { .. }));
}

#[test]
fn format_errors_name_their_pointer() {
    let d = doc();
    assert_eq!(
        format_error(&with(d.clone(), "/nodes", json!({}))),
        ("/nodes".into(), FormatErrorKind::WrongType { expected: "an array" })
    );
    assert_eq!(format_error(&without(d.clone(), "/root")), ("".into(), FormatErrorKind::Missing { field: "root" }));
    let (p, k) = format_error(&with(d.clone(), "/nodes/11/states/0/transitions/0/duraton", json!(0.2)));
    assert_eq!(p, "/nodes/11/states/0/transitions/0/duraton");
    assert!(matches!(k, FormatErrorKind::UnknownField { .. }), "{k}");
    let (p, k) = format_error(&with(d.clone(), "/nodes/2/loop", json!("forever")));
    assert_eq!(p, "/nodes/2/loop");
    assert!(matches!(k, FormatErrorKind::BadValue { .. }));
    let (p, k) = format_error(&with(d.clone(), "/nodes/0/type", json!("sprite")));
    assert_eq!(p, "/nodes/0/type");
    assert!(matches!(k, FormatErrorKind::BadValue { .. }));
    let (p, _) = format_error(&with(d.clone(), "/version", json!(2)));
    assert_eq!(p, "/version");
    let many: Vec<Value> =
        (0..=MAX_NODES).map(|i| json!({"name": format!("n{i}"), "type": "clip", "clip": "a"})).collect();
    let (p, k) = format_error(&with(d.clone(), "/nodes", Value::Array(many)));
    assert_eq!(p, "/nodes");
    assert!(matches!(k, FormatErrorKind::TooMany { .. }));
    let (p, _) = format_error(&with(d.clone(), "/nodes/15/joints", json!(["j0", "j1"])));
    assert_eq!(p, "/nodes/15/joints");
    let (p, _) = format_error(&with(d.clone(), "/nodes/11/states/0/transitions/0/priority", json!(1.5)));
    assert_eq!(p, "/nodes/11/states/0/transitions/0/priority");
    let (p, _) = format_error(&with(d, "/nodes/11/states/0/transitions/0/condition", json!({"when": 1})));
    assert_eq!(p, "/nodes/11/states/0/transitions/0/condition");
}

/// An edited file, the pointer its error must name, and a test of the error's kind.
type Case = (Vec<u8>, &'static str, fn(&BuildErrorKind) -> bool);

#[test]
fn graph_errors_name_their_pointer() {
    let d = doc();
    let cases: Vec<Case> = vec![
        (with(d.clone(), "/nodes/0/clip", json!("walk")), "/nodes/0/clip", |k| {
            matches!(k, BuildErrorKind::UnknownClip { .. })
        }),
        (
            with(d.clone(), "/nodes/11/states/0/transitions/0/condition/all/0/trigger", json!("jmup")),
            "/nodes/11/states/0/transitions/0/condition/all/0/trigger",
            |k| matches!(k, BuildErrorKind::UnknownParameter { .. }),
        ),
        (with(d.clone(), "/masks/0/joints/0/joint", json!("spine")), "/masks/0/joints/0/joint", |k| {
            matches!(k, BuildErrorKind::UnknownJoint { .. })
        }),
        (with(d.clone(), "/nodes/15/joints/2", json!("j9")), "/nodes/15/joints/2", |k| {
            matches!(k, BuildErrorKind::UnknownJoint { .. })
        }),
        (with(d.clone(), "/nodes/0/speed", json!("jump")), "/nodes/0/speed", |k| {
            matches!(k, BuildErrorKind::WrongParameterType { expected: "float", found: "trigger", .. })
        }),
        (
            with(d.clone(), "/nodes/11/any_state/0/condition/float", json!("on")),
            "/nodes/11/any_state/0/condition/float",
            |k| matches!(k, BuildErrorKind::WrongParameterType { expected: "float", found: "bool", .. }),
        ),
        (with(d.clone(), "/parameters/1/name", json!("speed")), "/parameters/1/name", |k| {
            matches!(k, BuildErrorKind::Duplicate { what: "parameter", .. })
        }),
        (with(d.clone(), "/nodes/1/name", json!("na")), "/nodes/1/name", |k| {
            matches!(k, BuildErrorKind::Duplicate { what: "node", .. })
        }),
        (with(d.clone(), "/nodes/11/states/1/name", json!("ground")), "/nodes/11/states/1/name", |k| {
            matches!(k, BuildErrorKind::Duplicate { what: "state", .. })
        }),
        (with(d.clone(), "/nodes/6/points", json!([{"node": "na", "at": 0.0}])), "/nodes/6/points", |k| {
            matches!(k, BuildErrorKind::TooFewPoints { count: 1 })
        }),
        (with(d.clone(), "/nodes/7/points/2/at", json!([0.0, 1.0])), "/nodes/7/points/2/at", |k| {
            matches!(k, BuildErrorKind::CoincidentPoints { first: 1, second: 2 })
        }),
        (with(d.clone(), "/nodes/6/points/1/at", json!(0.0)), "/nodes/6/points/1/at", |k| {
            matches!(k, BuildErrorKind::CoincidentPoints { first: 0, second: 1 })
        }),
        // "layered" layers over "main", whose air state would play "layered": a cycle.
        (
            with(d.clone(), "/nodes/11/states/1/node", json!("layered")),
            "/nodes/11",
            |k| matches!(k, BuildErrorKind::Cycle { path } if path == "main → layered → main"),
        ),
        // Declared first, the upper machine's use of "main" is its one use; the layer's
        // comes second.
        (
            with(d.clone(), "/nodes/13/states/1/node", json!("main")),
            "/nodes/14/base",
            |k| matches!(k, BuildErrorKind::NodeReused { first, .. } if first == "/nodes/13/states/1/node"),
        ),
        (
            with(d.clone(), "/nodes/8/b", json!("na")),
            "/nodes/8/b",
            |k| matches!(k, BuildErrorKind::NodeReused { first, .. } if first == "/nodes/6/points/0/node"),
        ),
        (with(d.clone(), "/nodes/1/speed", json!(1e39)), "/nodes/1/speed", |k| matches!(k, BuildErrorKind::NotFinite)),
        (
            with(d.clone(), "/nodes/11/states/0/transitions/0/duration", json!(100.0)),
            "/nodes/11/states/0/transitions/0/duration",
            |k| matches!(k, BuildErrorKind::OutOfRange { .. }),
        ),
        (with(d.clone(), "/nodes/8/weight", json!(1.5)), "/nodes/8/weight", |k| {
            matches!(k, BuildErrorKind::OutOfRange { .. })
        }),
        (with(d.clone(), "/parameters/0/default", json!(3.0)), "/parameters/0", |k| {
            matches!(k, BuildErrorKind::BadRange { .. })
        }),
        (with(d.clone(), "/nodes/0/loop", json!("once")), "/nodes/0/loop", |k| {
            matches!(k, BuildErrorKind::SyncedClipMode { .. })
        }),
        (with(d.clone(), "/nodes/11/entry", json!("flying")), "/nodes/11/entry", |k| {
            matches!(k, BuildErrorKind::Unknown { what: "state", .. })
        }),
        (with(d.clone(), "/nodes/11/states", json!([])), "/nodes/11/states", |k| {
            matches!(k, BuildErrorKind::Empty { .. })
        }),
        (with(d.clone(), "/nodes/14/mask", json!("bottom")), "/nodes/14/mask", |k| {
            matches!(k, BuildErrorKind::Unknown { what: "mask", .. })
        }),
        (with(d.clone(), "/nodes/0/sync", json!("legs")), "/nodes/0/sync", |k| {
            matches!(k, BuildErrorKind::Unknown { what: "sync group", .. })
        }),
        (with(d.clone(), "/root", json!("nowhere")), "/root", |k| {
            matches!(k, BuildErrorKind::Unknown { what: "node", .. })
        }),
        (with(d.clone(), "/nodes/16/up", json!([0.0, 2.0, 0.0])), "/nodes/16/up", |k| {
            matches!(k, BuildErrorKind::BadAxes)
        }),
        (with(d.clone(), "/nodes/17/legs/0/toe", json!("j0")), "/nodes/17/legs/0/toe", |k| {
            matches!(k, BuildErrorKind::NotAChain { .. })
        }),
        (with(d.clone(), "/nodes/3/name", json!("")), "/nodes/3/name", |k| matches!(k, BuildErrorKind::BadName { .. })),
        (
            with(d.clone(), "/nodes/11/states/1/transitions/1/condition/exit_time", json!(1.5)),
            "/nodes/11/states/1/transitions/1/condition/exit_time",
            |k| matches!(k, BuildErrorKind::OutOfRange { .. }),
        ),
        (with(d.clone(), "/nodes/9/reference/time", json!(0.6)), "/nodes/9/reference/time", |k| {
            matches!(k, BuildErrorKind::OutOfRange { .. })
        }),
    ];
    for (i, (bytes, pointer, kind)) in cases.into_iter().enumerate() {
        let (p, k) = build_error(&bytes);
        assert_eq!(p, pointer, "case {i}: {k}");
        assert!(kind(&k), "case {i} at {p}: {k}");
    }
    // A crossfade from a state to itself (an inertialized one is fine: it restarts it).
    let mut d2 = doc();
    let t = d2.pointer_mut("/nodes/11/states/1/transitions/1").unwrap();
    (t["to"], t["duration"]) = (json!("air"), json!(0.2));
    let (p, k) = build_error(&serde_json::to_vec(&d2).unwrap());
    assert_eq!(p, "/nodes/11/states/1/transitions/1/mode");
    assert!(matches!(k, BuildErrorKind::CrossfadeToSelf { .. }), "{k}");
    d2.pointer_mut("/nodes/11/states/1/transitions/1").unwrap()["mode"] = json!("inertialize");
    assert!(load(&serde_json::to_vec(&d2).unwrap(), &chain(5), &clips()).is_ok());
}

#[test]
fn unreachable_states_and_unused_nodes_are_warnings() {
    let mut d = doc();
    d.pointer_mut("/nodes/13/states").unwrap().as_array_mut().unwrap().push(json!({"name": "lost", "node": null}));
    d.pointer_mut("/nodes")
        .unwrap()
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "spare", "type": "clip", "clip": "a"}));
    let g = load(&serde_json::to_vec(&d).unwrap(), &chain(5), &clips()).unwrap();
    let w: Vec<(&str, &WarningKind)> = g.warnings().iter().map(|w| (w.pointer.as_str(), &w.kind)).collect();
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(w.contains(&("/nodes/13/states/2", &WarningKind::UnreachableState { name: "lost".into() })), "{w:?}");
    assert!(w.contains(&("/nodes/18", &WarningKind::UnusedNode { name: "spare".into() })), "{w:?}");
}
