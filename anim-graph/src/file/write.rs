//! A [`GraphDesc`] as a JSON document of the file format, every member written (defaults
//! included), so reading it back gives the same description.

use crate::desc::{Condition, GraphDesc, NodeDesc, NodeKind, Scalar, TransitionDesc};
use serde_json::{Map, Value, json};

/// `v` written as its shortest decimal (which reads back to the same `f32`), not as the
/// longer decimal of the `f64` it widens to.
fn num(v: f32) -> Value {
    v.to_string().parse::<f64>().ok().and_then(serde_json::Number::from_f64).map_or(Value::Null, Value::Number)
}

fn nums<const N: usize>(v: &[f32; N]) -> Value {
    Value::Array(v.iter().map(|x| num(*x)).collect())
}

fn scalar(s: &Scalar) -> Value {
    match s {
        Scalar::Const(v) => num(*v),
        Scalar::Param(p) => json!(p),
    }
}

fn condition(c: &Condition) -> Value {
    match c {
        Condition::Always => json!({ "all": [] }),
        Condition::Float { param, op, value } => json!({ "float": param, "op": op.symbol(), "value": num(*value) }),
        Condition::Bool { param, value } => json!({ "bool": param, "value": value }),
        Condition::Trigger(p) => json!({ "trigger": p }),
        Condition::ClipEnded => json!({ "clip_ended": true }),
        Condition::ExitTime(x) => json!({ "exit_time": num(*x) }),
        Condition::All(cs) => json!({ "all": cs.iter().map(condition).collect::<Vec<_>>() }),
        Condition::Any(cs) => json!({ "any": cs.iter().map(condition).collect::<Vec<_>>() }),
        Condition::Not(c) => json!({ "not": condition(c) }),
    }
}

fn transition(t: &TransitionDesc) -> Value {
    let mut m = Map::new();
    m.insert("to".into(), json!(t.to));
    if t.condition != Condition::Always {
        m.insert("condition".into(), condition(&t.condition));
    }
    m.insert("duration".into(), num(t.duration));
    m.insert("mode".into(), json!(t.mode.name()));
    m.insert("priority".into(), json!(t.priority));
    m.insert("interruptible".into(), json!(t.interruptible));
    Value::Object(m)
}

fn node(n: &NodeDesc) -> Value {
    let mut m = Map::new();
    m.insert("name".into(), json!(n.name));
    m.insert("type".into(), json!(n.kind.type_name()));
    let mut put = |k: &str, v: Value| {
        m.insert(k.to_owned(), v);
    };
    match &n.kind {
        NodeKind::Clip(c) => {
            put("clip", json!(c.clip));
            put("speed", scalar(&c.speed));
            put("loop", json!(c.mode.name()));
            if let Some(s) = &c.sync {
                put("sync", json!(s));
            }
        }
        NodeKind::BlendSpace1d(s) => {
            put("param", json!(s.param));
            put("points", s.points.iter().map(|p| json!({ "node": p.node, "at": num(p.at) })).collect());
        }
        NodeKind::BlendSpace2d(s) => {
            put("x", json!(s.x));
            put("y", json!(s.y));
            put("form", json!(s.form.name()));
            put("points", s.points.iter().map(|p| json!({ "node": p.node, "at": nums(&p.at) })).collect());
        }
        NodeKind::Blend(b) => {
            put("a", json!(b.a));
            put("b", json!(b.b));
            put("weight", scalar(&b.weight));
        }
        NodeKind::Additive(a) => {
            put("base", json!(a.base));
            put("additive", json!(a.additive));
            put("reference", json!({ "clip": a.reference.clip, "time": num(a.reference.time) }));
            put("weight", scalar(&a.weight));
        }
        NodeKind::Layer(l) => {
            put("base", json!(l.base));
            put("layer", json!(l.layer));
            if let Some(mask) = &l.mask {
                put("mask", json!(mask));
            }
            put("weight", scalar(&l.weight));
        }
        NodeKind::TwoBoneIk(k) => {
            put("input", json!(k.input));
            put("joints", json!(k.joints));
            put("target", json!(k.target));
            if let Some(p) = k.pole {
                put("pole", nums(&p));
            }
            put("weight", scalar(&k.weight));
        }
        NodeKind::Aim(k) => {
            put("input", json!(k.input));
            put("joint", json!(k.joint));
            put("forward", nums(&k.forward));
            put("up", nums(&k.up));
            put("world_up", nums(&k.world_up));
            put("target", json!(k.target));
            put("weight", scalar(&k.weight));
        }
        NodeKind::FootIk(k) => {
            put("input", json!(k.input));
            put(
                "legs",
                k.legs
                    .iter()
                    .map(|l| json!({ "hip": l.hip, "knee": l.knee, "ankle": l.ankle, "toe": l.toe, "contact": l.contact }))
                    .collect(),
            );
            put("ankle_height", num(k.ankle_height));
            put("toe_height", num(k.toe_height));
            put("search_below", num(k.search_below));
            put("adjust_root", json!(k.adjust_root));
            put("align_toes", json!(k.align_toes));
            put("weight", scalar(&k.weight));
        }
        NodeKind::StateMachine(sm) => {
            put("entry", json!(sm.entry));
            put(
                "states",
                sm.states
                    .iter()
                    .map(|s| {
                        json!({
                            "name": s.name,
                            "node": s.node,
                            "transitions": s.transitions.iter().map(transition).collect::<Vec<_>>(),
                        })
                    })
                    .collect(),
            );
            put("any_state", sm.any_state.iter().map(transition).collect());
        }
    }
    Value::Object(m)
}

/// The document of `desc`.
pub(crate) fn document(desc: &GraphDesc) -> Value {
    let params: Vec<Value> = desc
        .parameters
        .iter()
        .map(|p| {
            let mut m = Map::new();
            m.insert("name".into(), json!(p.name));
            m.insert("type".into(), json!(p.kind.name()));
            m.insert(
                "default".into(),
                match p.kind {
                    crate::param::ParamKind::Float => num(p.default),
                    _ => json!(p.default > 0.5),
                },
            );
            if let Some((lo, hi)) = p.range {
                m.insert("min".into(), num(lo));
                m.insert("max".into(), num(hi));
            }
            Value::Object(m)
        })
        .collect();
    let masks: Vec<Value> = desc
        .masks
        .iter()
        .map(|m| {
            let joints: Vec<Value> = m
                .joints
                .iter()
                .map(|j| json!({ "joint": j.joint, "subtree": j.subtree, "weight": num(j.weight) }))
                .collect();
            json!({ "name": m.name, "joints": joints })
        })
        .collect();
    let groups: Vec<Value> =
        desc.sync_groups.iter().map(|g| json!({ "name": g.name, "mode": g.mode.name() })).collect();
    json!({
        "version": 1,
        "parameters": params,
        "masks": masks,
        "sync_groups": groups,
        "nodes": desc.nodes.iter().map(node).collect::<Vec<_>>(),
        "root": desc.root,
    })
}
