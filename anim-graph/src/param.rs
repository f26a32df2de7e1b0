//! Parameters: the named floats, bools and triggers a game sets to drive a graph.
//!
//! A graph declares its parameters by name and kind. A game looks a name up once
//! ([`crate::graph::Graph::float_param`], …) and gets a typed handle; every frame it sets
//! the value through the handle ([`crate::instance::GraphInstance::set_float`], …): an
//! index into an array, no string comparison. A handle remembers the graph it came from,
//! so a handle of another graph is an error rather than a write to the wrong parameter.
//!
//! - **float**: any finite value, clamped into the parameter's range when it has one.
//! - **bool**: true or false.
//! - **trigger**: a bool that stays set until a transition whose condition tests it fires;
//!   that transition consumes it (resets it to false), so one trigger fires one transition.

use std::sync::atomic::{AtomicU32, Ordering};
use thiserror::Error;

/// What kind of value a parameter holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParamKind {
    /// A finite `f32`.
    Float,
    /// A bool.
    Bool,
    /// A bool consumed by the transition that tests it.
    Trigger,
}

impl ParamKind {
    /// The name the file format uses: `float`, `bool` or `trigger`.
    pub fn name(self) -> &'static str {
        match self {
            ParamKind::Float => "float",
            ParamKind::Bool => "bool",
            ParamKind::Trigger => "trigger",
        }
    }

    /// The kind named `name` in the file format.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "float" => Some(ParamKind::Float),
            "bool" => Some(ParamKind::Bool),
            "trigger" => Some(ParamKind::Trigger),
            _ => None,
        }
    }
}

/// Handle of a float parameter (see the [module docs](self)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FloatParam {
    pub(crate) graph: u32,
    pub(crate) index: u16,
}

/// Handle of a bool parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BoolParam {
    pub(crate) graph: u32,
    pub(crate) index: u16,
}

/// Handle of a trigger parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TriggerParam {
    pub(crate) graph: u32,
    pub(crate) index: u16,
}

/// Why a parameter could not be found or set.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum ParamError {
    /// No parameter has this name.
    #[error("the graph has no parameter {name:?} (it has: {known})")]
    Unknown {
        /// The name asked for.
        name: String,
        /// The graph's parameter names, comma-separated.
        known: String,
    },
    /// The parameter exists with another kind.
    #[error("parameter {name:?} is a {found}, not a {expected}")]
    WrongKind {
        /// Its name.
        name: String,
        /// The kind asked for.
        expected: &'static str,
        /// Its kind.
        found: &'static str,
    },
    /// The handle was made by another graph.
    #[error("the parameter handle belongs to another graph")]
    ForeignHandle,
    /// A float value is NaN or infinite.
    #[error("parameter {name:?}: value {value} is not finite")]
    NonFinite {
        /// The parameter's name.
        name: String,
        /// The value.
        value: f32,
    },
}

/// One declared parameter, as a graph keeps it.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamInfo {
    /// Name.
    pub name: String,
    /// Kind.
    pub kind: ParamKind,
    /// Value at start (bools and triggers: 0 or 1).
    pub default: f32,
    /// Smallest value a float takes (`-inf` without a range).
    pub min: f32,
    /// Largest value a float takes (`+inf` without a range).
    pub max: f32,
}

/// The parameters of one graph and the identity its handles carry.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamTable {
    graph: u32,
    infos: Vec<ParamInfo>,
}

static NEXT_GRAPH: AtomicU32 = AtomicU32::new(1);

impl ParamTable {
    /// A table of `infos`, with a fresh graph identity.
    pub(crate) fn new(infos: Vec<ParamInfo>) -> Self {
        Self { graph: NEXT_GRAPH.fetch_add(1, Ordering::Relaxed), infos }
    }

    /// The declared parameters, in declaration order.
    pub fn infos(&self) -> &[ParamInfo] {
        &self.infos
    }

    /// The index of the parameter `name`.
    pub fn index(&self, name: &str) -> Option<usize> {
        self.infos.iter().position(|p| p.name == name)
    }

    fn lookup(&self, name: &str, kind: ParamKind) -> Result<u16, ParamError> {
        let Some(i) = self.index(name) else {
            let known = self.infos.iter().map(|p| p.name.as_str()).collect::<Vec<_>>().join(", ");
            return Err(ParamError::Unknown { name: name.to_owned(), known });
        };
        let found = self.infos[i].kind;
        if found != kind {
            return Err(ParamError::WrongKind { name: name.to_owned(), expected: kind.name(), found: found.name() });
        }
        // The loader caps the parameter count far below u16::MAX.
        Ok(i as u16)
    }

    /// The handle of float parameter `name`.
    ///
    /// # Errors
    /// No such parameter, or not a float.
    pub fn float(&self, name: &str) -> Result<FloatParam, ParamError> {
        Ok(FloatParam { graph: self.graph, index: self.lookup(name, ParamKind::Float)? })
    }

    /// The handle of bool parameter `name`.
    ///
    /// # Errors
    /// No such parameter, or not a bool.
    pub fn bool(&self, name: &str) -> Result<BoolParam, ParamError> {
        Ok(BoolParam { graph: self.graph, index: self.lookup(name, ParamKind::Bool)? })
    }

    /// The handle of trigger parameter `name`.
    ///
    /// # Errors
    /// No such parameter, or not a trigger.
    pub fn trigger(&self, name: &str) -> Result<TriggerParam, ParamError> {
        Ok(TriggerParam { graph: self.graph, index: self.lookup(name, ParamKind::Trigger)? })
    }

    /// The default values, one per parameter.
    pub(crate) fn defaults(&self) -> Vec<f32> {
        self.infos.iter().map(|p| p.default).collect()
    }

    fn own(&self, graph: u32, index: u16) -> Result<usize, ParamError> {
        if graph != self.graph || usize::from(index) >= self.infos.len() {
            return Err(ParamError::ForeignHandle);
        }
        Ok(usize::from(index))
    }

    /// Writes float `value` (clamped into the range) into `values`.
    pub(crate) fn set_float(&self, values: &mut [f32], p: FloatParam, value: f32) -> Result<(), ParamError> {
        let i = self.own(p.graph, p.index)?;
        if !value.is_finite() {
            return Err(ParamError::NonFinite { name: self.infos[i].name.clone(), value });
        }
        values[i] = value.clamp(self.infos[i].min, self.infos[i].max);
        Ok(())
    }

    /// Writes bool `value` into `values`.
    pub(crate) fn set_bool(&self, values: &mut [f32], p: BoolParam, value: bool) -> Result<(), ParamError> {
        let i = self.own(p.graph, p.index)?;
        values[i] = f32::from(u8::from(value));
        Ok(())
    }

    /// Sets trigger `p` in `values`.
    pub(crate) fn set_trigger(&self, values: &mut [f32], p: TriggerParam) -> Result<(), ParamError> {
        let i = self.own(p.graph, p.index)?;
        values[i] = 1.0;
        Ok(())
    }

    /// The index of float handle `p`.
    pub(crate) fn float_index(&self, p: FloatParam) -> Result<usize, ParamError> {
        self.own(p.graph, p.index)
    }

    /// The index of bool handle `p`.
    pub(crate) fn bool_index(&self, p: BoolParam) -> Result<usize, ParamError> {
        self.own(p.graph, p.index)
    }

    /// The index of trigger handle `p`.
    pub(crate) fn trigger_index(&self, p: TriggerParam) -> Result<usize, ParamError> {
        self.own(p.graph, p.index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> ParamTable {
        ParamTable::new(vec![
            ParamInfo { name: "speed".into(), kind: ParamKind::Float, default: 0.5, min: 0.0, max: 2.0 },
            ParamInfo { name: "jump".into(), kind: ParamKind::Trigger, default: 0.0, min: 0.0, max: 1.0 },
        ])
    }

    #[test]
    fn handles_are_typed_clamped_and_tied_to_their_graph() {
        let t = table();
        let other = table();
        let speed = t.float("speed").unwrap();
        let mut values = t.defaults();
        t.set_float(&mut values, speed, 7.0).unwrap();
        assert_eq!(values[0], 2.0);
        assert!(matches!(t.set_float(&mut values, speed, f32::NAN), Err(ParamError::NonFinite { .. })));
        assert_eq!(other.set_float(&mut values, speed, 1.0), Err(ParamError::ForeignHandle));
        assert!(matches!(t.bool("speed"), Err(ParamError::WrongKind { expected: "bool", found: "float", .. })));
        assert!(matches!(t.float("sped"), Err(ParamError::Unknown { .. })));
        t.set_trigger(&mut values, t.trigger("jump").unwrap()).unwrap();
        assert_eq!(values[1], 1.0);
    }
}
