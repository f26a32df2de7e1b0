//! Hostile graph files: every value of two valid files (one with every node kind, and the
//! mannequin's locomotion graph) replaced, one at a time, by each of a list of hostile
//! values (wrong types, huge and tiny numbers, numbers beyond `f32`, empty, long and
//! existing names, empty and deep containers), every member removed, every array entry
//! doubled. Each file goes through the fuzz target's own path (`fuzz/src/graph_check.rs`,
//! included below): load against two characters, then 100 updates with random parameters
//! for each graph that loads. Nothing may panic, and no update of an accepted graph may
//! fail or produce a non-finite pose or root motion.

#[path = "../../fuzz/src/graph_check.rs"]
mod graph_check;

use graph_check::Outcome;
use serde_json::{Value, json};
use std::panic::{AssertUnwindSafe, catch_unwind};

fn hostile_values() -> Vec<Value> {
    let nested = (0..60).fold(json!(0), |v, _| json!([v]));
    vec![
        Value::Null,
        json!(true),
        json!(0),
        json!(-1),
        json!(1.5),
        json!(1e39),
        json!(-1e39),
        json!(1e-45),
        json!(4294967296u64),
        json!(-9223372036854775808i64),
        json!(""),
        json!("x".repeat(300)),
        json!("j2"),
        json!("walk"),
        json!("speed"),
        json!([]),
        json!([1e38, -1e38, 0]),
        json!({}),
        json!({"name": "n", "type": "clip", "clip": "a"}),
        nested,
        Value::Array(vec![json!(0.25); 2000]),
    ]
}

/// The pointer of every value in `v` (the root excluded).
fn pointers(v: &Value, at: &str, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let p = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
                out.push(p.clone());
                pointers(x, &p, out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                let p = format!("{at}/{i}");
                out.push(p.clone());
                pointers(x, &p, out);
            }
        }
        _ => {}
    }
}

enum Edit<'a> {
    Replace(&'a Value),
    Remove,
    Double,
}

fn edited(doc: &Value, pointer: &str, edit: &Edit<'_>) -> Option<Vec<u8>> {
    let mut d = doc.clone();
    let (parent, key) = pointer.rsplit_once('/')?;
    let key = key.replace("~1", "/").replace("~0", "~");
    match (d.pointer_mut(parent)?, edit) {
        (Value::Object(m), Edit::Replace(v)) => {
            m.insert(key, (*v).clone());
        }
        (Value::Object(m), Edit::Remove) => {
            m.remove(&key);
        }
        (Value::Array(a), Edit::Replace(v)) => a[key.parse::<usize>().ok()?] = (*v).clone(),
        (Value::Array(a), Edit::Remove) => {
            a.remove(key.parse::<usize>().ok()?);
        }
        (Value::Array(a), Edit::Double) => {
            let i = key.parse::<usize>().ok()?;
            let x = a[i].clone();
            a.insert(i, x);
        }
        _ => return None,
    }
    serde_json::to_vec(&d).ok()
}

#[test]
fn hostile_values_everywhere_panic_nowhere() {
    let files = [
        ("all_nodes.json", include_str!("files/all_nodes.json")),
        ("locomotion.json", anim_mannequin::LOCOMOTION_GRAPH),
    ];
    graph_check::fixtures();
    let hostile = hostile_values();
    let (mut runs, mut played, mut failures) = (0usize, 0usize, Vec::new());
    let quiet = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    for (name, text) in files {
        let doc: Value = serde_json::from_str(text).unwrap();
        // The unedited file loads for its character.
        let base = graph_check::load_and_play(text.as_bytes());
        assert!(base.iter().any(|o| matches!(o, Outcome::Played(_))), "{name}: {base:?}");
        let mut ptrs = Vec::new();
        pointers(&doc, "", &mut ptrs);
        for p in &ptrs {
            let edits = hostile.iter().map(Edit::Replace).chain([Edit::Remove, Edit::Double]);
            for (k, e) in edits.enumerate() {
                let Some(bytes) = edited(&doc, p, &e) else { continue };
                runs += 1;
                match catch_unwind(AssertUnwindSafe(|| graph_check::load_and_play(&bytes))) {
                    Ok(outcomes) => played += outcomes.iter().filter(|o| matches!(o, Outcome::Played(_))).count(),
                    Err(e) => {
                        let msg = e
                            .downcast_ref::<String>()
                            .cloned()
                            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                            .unwrap_or_default();
                        failures.push(format!("{name} {p} edit {k}: {msg}"));
                    }
                }
            }
        }
    }
    std::panic::set_hook(quiet);
    println!("{runs} hostile files, {played} loads played 100 updates each, {} panics", failures.len());
    assert!(failures.is_empty(), "{} panics, first: {:#?}", failures.len(), &failures[..failures.len().min(10)]);
    assert!(runs > 10_000 && played > 500, "{runs} files, {played} played");
}
