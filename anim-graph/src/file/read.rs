//! JSON values to a [`GraphDesc`], member by member, each error with its pointer. Members
//! that are not in the format are errors (a misspelt `"duration"` does not silently
//! become the default), except `"comment"`, allowed everywhere. An explicit `null` is the
//! same as a missing optional member.

use super::error::{FormatErrorKind, LoadError};
use crate::desc::{
    AdditiveDesc, AimDesc, BlendDesc, BlendPoint1d, BlendPoint2d, BlendSpace1dDesc, BlendSpace2dDesc, ClipNodeDesc,
    CompareOp, Condition, FootIkDesc, GraphDesc, LayerDesc, LegDesc, MachineDesc, MaskDesc, MaskJoint, NodeDesc,
    NodeKind, ParamDesc, PlayMode, ReferenceDesc, Scalar, SpaceForm, StateDesc, SyncGroupDesc, SyncMode,
    TransitionDesc, TransitionMode, TwoBoneIkDesc,
};
use crate::limits::{
    MAX_CONDITION_DEPTH, MAX_CONDITION_TERMS, MAX_LEGS, MAX_MASKS, MAX_NODES, MAX_PARAMS, MAX_POINTS, MAX_STATES,
    MAX_SYNC_GROUPS, MAX_TRANSITIONS,
};
use crate::param::ParamKind;
use serde_json::{Map, Value};

type Result<T> = std::result::Result<T, LoadError>;

static NULL: Value = Value::Null;

fn at(base: &str, segment: impl std::fmt::Display) -> String {
    format!("{base}/{segment}")
}

fn fail<T>(pointer: impl Into<String>, kind: FormatErrorKind) -> Result<T> {
    Err(LoadError::Format { pointer: pointer.into(), kind })
}

/// An object with only the members in `allowed` (and `"comment"`).
fn object<'v>(v: &'v Value, ptr: &str, allowed: &[&str]) -> Result<&'v Map<String, Value>> {
    let Value::Object(m) = v else {
        return fail(ptr, FormatErrorKind::WrongType { expected: "an object" });
    };
    for k in m.keys() {
        if k != "comment" && !allowed.contains(&k.as_str()) {
            return fail(
                at(ptr, escape(k)),
                FormatErrorKind::UnknownField { field: k.clone(), allowed: allowed.join(", ") },
            );
        }
    }
    Ok(m)
}

/// A member name as a JSON pointer segment (`~` → `~0`, `/` → `~1`).
fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

fn opt<'v>(m: &'v Map<String, Value>, key: &str) -> Option<&'v Value> {
    m.get(key).filter(|v| !v.is_null())
}

fn req<'v>(m: &'v Map<String, Value>, key: &'static str, ptr: &str) -> Result<&'v Value> {
    opt(m, key).map_or_else(|| fail(ptr, FormatErrorKind::Missing { field: key }), Ok)
}

fn string(v: &Value, ptr: &str) -> Result<String> {
    v.as_str().map_or_else(|| fail(ptr, FormatErrorKind::WrongType { expected: "a string" }), |s| Ok(s.to_owned()))
}

/// A number as `f32` (a value beyond the `f32` range becomes infinite, which the graph
/// checks refuse at the same pointer).
fn number(v: &Value, ptr: &str) -> Result<f32> {
    v.as_f64().map_or_else(|| fail(ptr, FormatErrorKind::WrongType { expected: "a number" }), |x| Ok(x as f32))
}

fn boolean(v: &Value, ptr: &str) -> Result<bool> {
    v.as_bool().map_or_else(|| fail(ptr, FormatErrorKind::WrongType { expected: "true or false" }), Ok)
}

fn array<'v>(v: &'v Value, ptr: &str, what: &'static str, max: usize) -> Result<&'v [Value]> {
    let Value::Array(a) = v else {
        return fail(ptr, FormatErrorKind::WrongType { expected: "an array" });
    };
    if a.len() > max {
        return fail(ptr, FormatErrorKind::TooMany { what, count: a.len(), max });
    }
    Ok(a)
}

/// `key` read by `f`, or `default` when absent.
fn or<T>(m: &Map<String, Value>, key: &str, ptr: &str, default: T, f: fn(&Value, &str) -> Result<T>) -> Result<T> {
    opt(m, key).map_or(Ok(default), |v| f(v, &at(ptr, key)))
}

fn field<T>(m: &Map<String, Value>, key: &'static str, ptr: &str, f: fn(&Value, &str) -> Result<T>) -> Result<T> {
    f(req(m, key, ptr)?, &at(ptr, key))
}

fn scalar(v: &Value, ptr: &str) -> Result<Scalar> {
    match v {
        Value::String(s) => Ok(Scalar::Param(s.clone())),
        Value::Number(_) => Ok(Scalar::Const(number(v, ptr)?)),
        _ => fail(ptr, FormatErrorKind::WrongType { expected: "a number or a float parameter's name" }),
    }
}

fn fixed<const N: usize, T: Default + Copy>(v: &Value, ptr: &str, f: fn(&Value, &str) -> Result<T>) -> Result<[T; N]> {
    let a = array(v, ptr, "entries", N)?;
    if a.len() != N {
        return fail(ptr, FormatErrorKind::WrongType { expected: ["", "1 value", "2 values", "3 values"][N.min(3)] });
    }
    let mut out = [T::default(); N];
    for (i, x) in a.iter().enumerate() {
        out[i] = f(x, &at(ptr, i))?;
    }
    Ok(out)
}

fn vec3(v: &Value, ptr: &str) -> Result<[f32; 3]> {
    fixed::<3, f32>(v, ptr, number)
}

fn names3(v: &Value, ptr: &str) -> Result<[String; 3]> {
    let a = array(v, ptr, "names", 3)?;
    if a.len() != 3 {
        return fail(ptr, FormatErrorKind::WrongType { expected: "3 names" });
    }
    Ok([string(&a[0], &at(ptr, 0))?, string(&a[1], &at(ptr, 1))?, string(&a[2], &at(ptr, 2))?])
}

fn choice<T: Copy>(v: &Value, ptr: &str, options: &[(&str, T)], allowed: &'static str) -> Result<T> {
    let s = string(v, ptr)?;
    options
        .iter()
        .find(|(n, _)| *n == s)
        .map_or_else(|| fail(ptr, FormatErrorKind::BadValue { found: s.clone(), allowed }), |(_, t)| Ok(*t))
}

/// The whole document.
pub(crate) fn graph(v: &Value) -> Result<GraphDesc> {
    let m = object(v, "", &["version", "parameters", "masks", "sync_groups", "nodes", "root"])?;
    if let Some(version) = opt(m, "version")
        && version.as_u64() != Some(1)
    {
        return fail("/version", FormatErrorKind::Version { found: version.to_string() });
    }
    let list = |key: &'static str, what: &'static str, max: usize| -> Result<&[Value]> {
        opt(m, key).map_or(Ok(&[][..]), |v| array(v, &at("", key), what, max))
    };
    let parameters = list("parameters", "parameters", MAX_PARAMS)?
        .iter()
        .enumerate()
        .map(|(i, v)| param(v, &at("/parameters", i)))
        .collect::<Result<_>>()?;
    let masks = list("masks", "masks", MAX_MASKS)?
        .iter()
        .enumerate()
        .map(|(i, v)| mask(v, &at("/masks", i)))
        .collect::<Result<_>>()?;
    let sync_groups = list("sync_groups", "sync groups", MAX_SYNC_GROUPS)?
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let ptr = at("/sync_groups", i);
            let g = object(v, &ptr, &["name", "mode"])?;
            let mode = match opt(g, "mode") {
                Some(mv) => choice(
                    mv,
                    &at(&ptr, "mode"),
                    &[("phase", SyncMode::Phase), ("markers", SyncMode::Markers)],
                    "\"phase\", \"markers\"",
                )?,
                None => SyncMode::Markers,
            };
            Ok(SyncGroupDesc { name: field(g, "name", &ptr, string)?, mode })
        })
        .collect::<Result<_>>()?;
    let nodes = array(req(m, "nodes", "")?, "/nodes", "nodes", MAX_NODES)?
        .iter()
        .enumerate()
        .map(|(i, v)| node(v, &at("/nodes", i)))
        .collect::<Result<_>>()?;
    Ok(GraphDesc { parameters, masks, sync_groups, nodes, root: field(m, "root", "", string)? })
}

fn param(v: &Value, ptr: &str) -> Result<ParamDesc> {
    let m = object(v, ptr, &["name", "type", "default", "min", "max"])?;
    let kind = choice(
        req(m, "type", ptr)?,
        &at(ptr, "type"),
        &[("float", ParamKind::Float), ("bool", ParamKind::Bool), ("trigger", ParamKind::Trigger)],
        "\"float\", \"bool\", \"trigger\"",
    )?;
    let default = match (kind, opt(m, "default")) {
        (_, None) => 0.0,
        (ParamKind::Float, Some(d)) => number(d, &at(ptr, "default"))?,
        (_, Some(d)) => f32::from(u8::from(boolean(d, &at(ptr, "default"))?)),
    };
    let range = match (opt(m, "min"), opt(m, "max")) {
        (None, None) => None,
        (lo, hi) => Some((
            lo.map_or(Ok(f32::MIN), |v| number(v, &at(ptr, "min")))?,
            hi.map_or(Ok(f32::MAX), |v| number(v, &at(ptr, "max")))?,
        )),
    };
    Ok(ParamDesc { name: field(m, "name", ptr, string)?, kind, default, range })
}

fn mask(v: &Value, ptr: &str) -> Result<MaskDesc> {
    let m = object(v, ptr, &["name", "joints"])?;
    let jp = at(ptr, "joints");
    let joints = array(req(m, "joints", ptr)?, &jp, "mask entries", 4096)?
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let p = at(&jp, i);
            let e = object(v, &p, &["joint", "subtree", "weight"])?;
            Ok(MaskJoint {
                joint: field(e, "joint", &p, string)?,
                subtree: or(e, "subtree", &p, true, boolean)?,
                weight: or(e, "weight", &p, 1.0, number)?,
            })
        })
        .collect::<Result<_>>()?;
    Ok(MaskDesc { name: field(m, "name", ptr, string)?, joints })
}

const NODE_TYPES: &str = "\"clip\", \"blend_space_1d\", \"blend_space_2d\", \"blend\", \"additive\", \"layer\", \
                          \"two_bone_ik\", \"aim\", \"foot_ik\", \"state_machine\"";

fn node(v: &Value, ptr: &str) -> Result<NodeDesc> {
    let Value::Object(raw) = v else {
        return fail(ptr, FormatErrorKind::WrongType { expected: "an object" });
    };
    let ty = string(req(raw, "type", ptr)?, &at(ptr, "type"))?;
    let fields: &[&str] = match ty.as_str() {
        "clip" => &["clip", "speed", "loop", "sync"],
        "blend_space_1d" => &["param", "points"],
        "blend_space_2d" => &["x", "y", "form", "points"],
        "blend" => &["a", "b", "weight"],
        "additive" => &["base", "additive", "reference", "weight"],
        "layer" => &["base", "layer", "mask", "weight"],
        "two_bone_ik" => &["input", "joints", "target", "pole", "weight"],
        "aim" => &["input", "joint", "forward", "up", "world_up", "target", "weight"],
        "foot_ik" => {
            &["input", "legs", "ankle_height", "toe_height", "search_below", "adjust_root", "align_toes", "weight"]
        }
        "state_machine" => &["entry", "states", "any_state"],
        _ => return fail(at(ptr, "type"), FormatErrorKind::BadValue { found: ty, allowed: NODE_TYPES }),
    };
    let mut allowed = vec!["name", "type"];
    allowed.extend_from_slice(fields);
    let m = object(v, ptr, &allowed)?;
    let s = |key: &'static str| field(m, key, ptr, string);
    let weight = |default: f32| or(m, "weight", ptr, Scalar::Const(default), scalar);
    let kind = match ty.as_str() {
        "clip" => NodeKind::Clip(ClipNodeDesc {
            clip: s("clip")?,
            speed: or(m, "speed", ptr, Scalar::Const(1.0), scalar)?,
            mode: match opt(m, "loop") {
                Some(l) => choice(
                    l,
                    &at(ptr, "loop"),
                    &[("repeat", PlayMode::Repeat), ("ping_pong", PlayMode::PingPong), ("once", PlayMode::Once)],
                    "\"repeat\", \"ping_pong\", \"once\"",
                )?,
                None => PlayMode::Repeat,
            },
            sync: opt(m, "sync").map(|v| string(v, &at(ptr, "sync"))).transpose()?,
        }),
        "blend_space_1d" => {
            let pp = at(ptr, "points");
            let points = array(req(m, "points", ptr)?, &pp, "points", MAX_POINTS)?
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    let p = at(&pp, i);
                    let e = object(v, &p, &["node", "at"])?;
                    Ok(BlendPoint1d { node: field(e, "node", &p, string)?, at: field(e, "at", &p, number)? })
                })
                .collect::<Result<_>>()?;
            NodeKind::BlendSpace1d(BlendSpace1dDesc { param: s("param")?, points })
        }
        "blend_space_2d" => {
            let pp = at(ptr, "points");
            let points = array(req(m, "points", ptr)?, &pp, "points", MAX_POINTS)?
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    let p = at(&pp, i);
                    let e = object(v, &p, &["node", "at"])?;
                    let xy = fixed::<2, f32>(req(e, "at", &p)?, &at(&p, "at"), number)?;
                    Ok(BlendPoint2d { node: field(e, "node", &p, string)?, at: xy })
                })
                .collect::<Result<_>>()?;
            let form = match opt(m, "form") {
                Some(f) => choice(
                    f,
                    &at(ptr, "form"),
                    &[("cartesian", SpaceForm::Cartesian), ("polar", SpaceForm::Polar)],
                    "\"cartesian\", \"polar\"",
                )?,
                None => SpaceForm::Cartesian,
            };
            NodeKind::BlendSpace2d(BlendSpace2dDesc { x: s("x")?, y: s("y")?, form, points })
        }
        "blend" => NodeKind::Blend(BlendDesc { a: s("a")?, b: s("b")?, weight: field(m, "weight", ptr, scalar)? }),
        "additive" => {
            let rp = at(ptr, "reference");
            let r = object(req(m, "reference", ptr)?, &rp, &["clip", "time"])?;
            NodeKind::Additive(AdditiveDesc {
                base: s("base")?,
                additive: s("additive")?,
                reference: ReferenceDesc {
                    clip: field(r, "clip", &rp, string)?,
                    time: or(r, "time", &rp, 0.0, number)?,
                },
                weight: weight(1.0)?,
            })
        }
        "layer" => NodeKind::Layer(LayerDesc {
            base: s("base")?,
            layer: s("layer")?,
            mask: opt(m, "mask").map(|v| string(v, &at(ptr, "mask"))).transpose()?,
            weight: weight(1.0)?,
        }),
        "two_bone_ik" => NodeKind::TwoBoneIk(TwoBoneIkDesc {
            input: s("input")?,
            joints: field(m, "joints", ptr, names3)?,
            target: field(m, "target", ptr, names3)?,
            pole: opt(m, "pole").map(|v| vec3(v, &at(ptr, "pole"))).transpose()?,
            weight: weight(1.0)?,
        }),
        "aim" => NodeKind::Aim(AimDesc {
            input: s("input")?,
            joint: s("joint")?,
            forward: field(m, "forward", ptr, vec3)?,
            up: field(m, "up", ptr, vec3)?,
            world_up: or(m, "world_up", ptr, [0.0, 1.0, 0.0], vec3)?,
            target: field(m, "target", ptr, names3)?,
            weight: weight(1.0)?,
        }),
        "foot_ik" => foot(m, ptr)?,
        _ => NodeKind::StateMachine(machine(m, ptr)?),
    };
    Ok(NodeDesc { name: s("name")?, kind })
}

fn foot(m: &Map<String, Value>, ptr: &str) -> Result<NodeKind> {
    let lp = at(ptr, "legs");
    let legs = array(req(m, "legs", ptr)?, &lp, "legs", MAX_LEGS)?
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let p = at(&lp, i);
            let l = object(v, &p, &["hip", "knee", "ankle", "toe", "contact"])?;
            Ok(LegDesc {
                hip: field(l, "hip", &p, string)?,
                knee: field(l, "knee", &p, string)?,
                ankle: field(l, "ankle", &p, string)?,
                toe: field(l, "toe", &p, string)?,
                contact: field(l, "contact", &p, string)?,
            })
        })
        .collect::<Result<_>>()?;
    let d = anim_ik::FootSettings::default();
    Ok(NodeKind::FootIk(FootIkDesc {
        input: field(m, "input", ptr, string)?,
        legs,
        ankle_height: or(m, "ankle_height", ptr, d.ankle_height, number)?,
        toe_height: or(m, "toe_height", ptr, d.toe_height, number)?,
        search_below: or(m, "search_below", ptr, d.search_below, number)?,
        adjust_root: or(m, "adjust_root", ptr, d.adjust_root, boolean)?,
        align_toes: or(m, "align_toes", ptr, d.align_toes, boolean)?,
        weight: or(m, "weight", ptr, Scalar::Const(1.0), scalar)?,
    }))
}

fn machine(m: &Map<String, Value>, ptr: &str) -> Result<MachineDesc> {
    let sp = at(ptr, "states");
    let states = array(req(m, "states", ptr)?, &sp, "states", MAX_STATES)?
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let p = at(&sp, i);
            let s = object(v, &p, &["name", "node", "transitions"])?;
            Ok(StateDesc {
                name: field(s, "name", &p, string)?,
                node: opt(s, "node").map(|v| string(v, &at(&p, "node"))).transpose()?,
                transitions: transitions(s, "transitions", &p)?,
            })
        })
        .collect::<Result<_>>()?;
    Ok(MachineDesc { entry: field(m, "entry", ptr, string)?, states, any_state: transitions(m, "any_state", ptr)? })
}

fn transitions(m: &Map<String, Value>, key: &'static str, ptr: &str) -> Result<Vec<TransitionDesc>> {
    let tp = at(ptr, key);
    let Some(list) = opt(m, key) else { return Ok(Vec::new()) };
    array(list, &tp, "transitions", MAX_TRANSITIONS)?
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let p = at(&tp, i);
            let t = object(v, &p, &["to", "condition", "duration", "mode", "priority", "interruptible"])?;
            let priority = match opt(t, "priority") {
                Some(v) => match v.as_i64().and_then(|x| i32::try_from(x).ok()) {
                    Some(x) => x,
                    None => return fail(at(&p, "priority"), FormatErrorKind::WrongType { expected: "an integer" }),
                },
                None => 0,
            };
            let mut terms = 0;
            Ok(TransitionDesc {
                to: field(t, "to", &p, string)?,
                condition: match opt(t, "condition") {
                    Some(c) => condition(c, &at(&p, "condition"), 0, &mut terms)?,
                    None => Condition::Always,
                },
                duration: or(t, "duration", &p, 0.2, number)?,
                mode: match opt(t, "mode") {
                    Some(v) => choice(
                        v,
                        &at(&p, "mode"),
                        &[("crossfade", TransitionMode::Crossfade), ("inertialize", TransitionMode::Inertialize)],
                        "\"crossfade\", \"inertialize\"",
                    )?,
                    None => TransitionMode::Crossfade,
                },
                priority,
                interruptible: or(t, "interruptible", &p, false, boolean)?,
            })
        })
        .collect()
}

const CONDITIONS: &str = "\"float\", \"bool\", \"trigger\", \"clip_ended\", \"exit_time\", \"all\", \"any\", \"not\"";

fn condition(v: &Value, ptr: &str, depth: usize, terms: &mut usize) -> Result<Condition> {
    *terms += 1;
    if *terms > MAX_CONDITION_TERMS || depth > MAX_CONDITION_DEPTH {
        return fail(
            ptr,
            FormatErrorKind::TooMany { what: "nested condition terms", count: *terms, max: MAX_CONDITION_TERMS },
        );
    }
    let Value::Object(raw) = v else {
        return fail(ptr, FormatErrorKind::WrongType { expected: "an object" });
    };
    let kind = ["float", "bool", "trigger", "clip_ended", "exit_time", "all", "any", "not"]
        .into_iter()
        .find(|k| raw.contains_key(*k));
    let Some(kind) = kind else {
        return fail(
            ptr,
            FormatErrorKind::BadValue { found: "an object without a condition".into(), allowed: CONDITIONS },
        );
    };
    let m = match kind {
        "float" => object(v, ptr, &["float", "op", "value"])?,
        "bool" => object(v, ptr, &["bool", "value"])?,
        _ => object(v, ptr, &[kind])?,
    };
    let list = |key: &str, terms: &mut usize| -> Result<Vec<Condition>> {
        let lp = at(ptr, key);
        array(m.get(key).unwrap_or(&NULL), &lp, "condition terms", MAX_CONDITION_TERMS)?
            .iter()
            .enumerate()
            .map(|(i, c)| condition(c, &at(&lp, i), depth + 1, terms))
            .collect()
    };
    Ok(match kind {
        "float" => {
            let op = string(req(m, "op", ptr)?, &at(ptr, "op"))?;
            let Some(op) = CompareOp::from_symbol(&op) else {
                return fail(
                    at(ptr, "op"),
                    FormatErrorKind::BadValue { found: op, allowed: "\"<\", \"<=\", \">\", \">=\", \"==\", \"!=\"" },
                );
            };
            Condition::Float { param: field(m, "float", ptr, string)?, op, value: field(m, "value", ptr, number)? }
        }
        "bool" => Condition::Bool { param: field(m, "bool", ptr, string)?, value: or(m, "value", ptr, true, boolean)? },
        "trigger" => Condition::Trigger(field(m, "trigger", ptr, string)?),
        "clip_ended" => {
            if !field(m, "clip_ended", ptr, boolean)? {
                return fail(
                    at(ptr, "clip_ended"),
                    FormatErrorKind::BadValue {
                        found: "false".into(),
                        allowed: "true (leave the condition out instead)",
                    },
                );
            }
            Condition::ClipEnded
        }
        "exit_time" => Condition::ExitTime(field(m, "exit_time", ptr, number)?),
        "all" => Condition::All(list("all", terms)?),
        "any" => Condition::Any(list("any", terms)?),
        _ => Condition::Not(Box::new(condition(m.get("not").unwrap_or(&NULL), &at(ptr, "not"), depth + 1, terms)?)),
    })
}
