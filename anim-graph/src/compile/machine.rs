//! State machines: states, transitions and their conditions, checked and compiled; states
//! no transition reaches are reported as warnings.

use super::check::{Result, Tables, at, count, err, name, number};
use crate::desc::{Condition, MachineDesc, TransitionDesc, TransitionMode};
use crate::error::{BuildErrorKind, Warning, WarningKind};
use crate::limits::{MAX_CONDITION_DEPTH, MAX_CONDITION_TERMS, MAX_DURATION, MAX_STATES, MAX_TRANSITIONS};
use crate::node::{Cond, Machine, State, Transition};
use crate::param::ParamKind;
use std::collections::HashMap;

/// Compiles the machine at `pointer`; `node_of(pointer, name)` resolves a state's node
/// name to its index. States' nodes keep the indices `node_of` gave.
pub(crate) fn machine(
    pointer: &str,
    m: &MachineDesc,
    t: &Tables<'_>,
    node_of: &mut dyn FnMut(&str, &str) -> Result<usize>,
    warnings: &mut Vec<Warning>,
) -> Result<Machine> {
    let states_ptr = at(pointer, "states");
    count(&states_ptr, "states", m.states.len(), MAX_STATES)?;
    if m.states.is_empty() {
        return err(&states_ptr, BuildErrorKind::Empty { what: "a state machine", needs: "a state" });
    }
    let mut index: HashMap<&str, usize> = HashMap::new();
    for (i, s) in m.states.iter().enumerate() {
        let ptr = at(&at(&states_ptr, i), "name");
        name(&ptr, &s.name)?;
        if index.insert(&s.name, i).is_some() {
            return err(ptr, BuildErrorKind::Duplicate { what: "state", name: s.name.clone() });
        }
    }
    let state = |ptr: &str, n: &str| {
        index
            .get(n)
            .copied()
            .map_or_else(|| err(ptr, BuildErrorKind::Unknown { what: "state", name: n.to_owned() }), Ok)
    };
    let entry = state(&at(pointer, "entry"), &m.entry)?;
    let mut states = Vec::with_capacity(m.states.len());
    for (i, s) in m.states.iter().enumerate() {
        let ptr = at(&states_ptr, i);
        let node = match &s.node {
            Some(n) => Some(node_of(&at(&ptr, "node"), n)?),
            None => None,
        };
        let tr_ptr = at(&ptr, "transitions");
        count(&tr_ptr, "transitions", s.transitions.len(), MAX_TRANSITIONS)?;
        let mut transitions = Vec::with_capacity(s.transitions.len());
        for (k, d) in s.transitions.iter().enumerate() {
            let tp = at(&tr_ptr, k);
            let tr = transition(&tp, d, t, &state)?;
            if tr.to == i && tr.mode == TransitionMode::Crossfade && tr.duration > 0.0 {
                return err(at(&tp, "mode"), BuildErrorKind::CrossfadeToSelf { state: s.name.clone() });
            }
            transitions.push(tr);
        }
        states.push(State { name: s.name.clone(), node, transitions, timed: false });
    }
    let any_ptr = at(pointer, "any_state");
    count(&any_ptr, "transitions", m.any_state.len(), MAX_TRANSITIONS)?;
    let mut any = Vec::with_capacity(m.any_state.len());
    for (k, d) in m.any_state.iter().enumerate() {
        any.push(transition(&at(&any_ptr, k), d, t, &state)?);
    }
    for (i, st) in states.iter_mut().enumerate() {
        st.timed = st.transitions.iter().chain(any.iter().filter(|t| t.to != i)).any(|t| t.cond.is_timed());
    }
    // Reachability from the entry; an any-state transition reaches its target from anywhere.
    let mut reached = vec![false; states.len()];
    reached[entry] = true;
    for tr in &any {
        reached[tr.to] = true;
    }
    let mut stack: Vec<usize> = (0..states.len()).filter(|&s| reached[s]).collect();
    while let Some(s) = stack.pop() {
        for tr in &states[s].transitions {
            if !reached[tr.to] {
                reached[tr.to] = true;
                stack.push(tr.to);
            }
        }
    }
    for (i, r) in reached.iter().enumerate() {
        if !r {
            warnings.push(Warning {
                pointer: at(&states_ptr, i),
                kind: WarningKind::UnreachableState { name: states[i].name.clone() },
            });
        }
    }
    // An inertialized transition into a state with a tree, or an interruptible one (an
    // interruption inertializes from the pose shown); a little more than needed is only
    // the cost of keeping two poses.
    let inertial = |t: &Transition| {
        t.interruptible || (t.mode == TransitionMode::Inertialize && t.duration > 0.0 && states[t.to].node.is_some())
    };
    let inertializes = states.iter().flat_map(|s| &s.transitions).chain(&any).any(inertial);
    Ok(Machine { node: usize::MAX, entry, states, any, inertializes })
}

fn transition(
    ptr: &str,
    d: &TransitionDesc,
    t: &Tables<'_>,
    state: &dyn Fn(&str, &str) -> Result<usize>,
) -> Result<Transition> {
    let to = state(&at(ptr, "to"), &d.to)?;
    let duration = number(&at(ptr, "duration"), d.duration, 0.0, MAX_DURATION)?;
    let mut terms = 0;
    let mut triggers = Vec::new();
    let cond = condition(&at(ptr, "condition"), &d.condition, t, 0, &mut terms, &mut triggers)?;
    Ok(Transition { to, cond, triggers, duration, mode: d.mode, priority: d.priority, interruptible: d.interruptible })
}

fn condition(
    ptr: &str,
    c: &Condition,
    t: &Tables<'_>,
    depth: usize,
    terms: &mut usize,
    triggers: &mut Vec<usize>,
) -> Result<Cond> {
    *terms += 1;
    if *terms > MAX_CONDITION_TERMS {
        return err(ptr, BuildErrorKind::TooMany { what: "condition terms", count: *terms, max: MAX_CONDITION_TERMS });
    }
    if depth > MAX_CONDITION_DEPTH {
        return err(ptr, BuildErrorKind::TooDeep { max: MAX_CONDITION_DEPTH });
    }
    let list = |key: &str, cs: &[Condition], terms: &mut usize, triggers: &mut Vec<usize>| -> Result<Vec<Cond>> {
        let lp = at(ptr, key);
        count(&lp, "condition terms", cs.len(), MAX_CONDITION_TERMS)?;
        cs.iter().enumerate().map(|(i, c)| condition(&at(&lp, i), c, t, depth + 1, terms, triggers)).collect()
    };
    Ok(match c {
        Condition::Always => Cond::Always,
        Condition::Float { param, op, value } => Cond::Float {
            param: t.param(&at(ptr, "float"), param, ParamKind::Float)?,
            op: *op,
            value: number(&at(ptr, "value"), *value, -f32::MAX, f32::MAX)?,
        },
        Condition::Bool { param, value } => {
            Cond::Bool { param: t.param(&at(ptr, "bool"), param, ParamKind::Bool)?, value: *value }
        }
        Condition::Trigger(param) => {
            let p = t.param(&at(ptr, "trigger"), param, ParamKind::Trigger)?;
            if !triggers.contains(&p) {
                triggers.push(p);
            }
            Cond::Trigger(p)
        }
        Condition::ClipEnded => Cond::ClipEnded,
        Condition::ExitTime(x) => Cond::ExitTime(number(&at(ptr, "exit_time"), *x, 0.0, 1.0)?),
        Condition::All(cs) => Cond::All(list("all", cs, terms, triggers)?),
        Condition::Any(cs) => Cond::Any(list("any", cs, terms, triggers)?),
        Condition::Not(c) => Cond::Not(Box::new(condition(&at(ptr, "not"), c, t, depth + 1, terms, triggers)?)),
    })
}
