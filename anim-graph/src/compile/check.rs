//! The small checks every part of a description goes through (names, counts, numbers),
//! and the name tables the compiler resolves references with. Each check returns the
//! error with the JSON pointer of the value it looked at.

use crate::desc::{GraphDesc, MaskDesc, ParamDesc, Scalar};
use crate::error::{BuildError, BuildErrorKind};
use crate::limits::{MAX_MASKS, MAX_NAME, MAX_PARAMS, MAX_SYNC_GROUPS};
use crate::node::ScalarIn;
use crate::param::{ParamInfo, ParamKind};
use anim_core::pose::Skeleton;
use std::collections::HashMap;
use std::fmt::Display;

pub(crate) type Result<T> = std::result::Result<T, BuildError>;

/// `base/segment`.
pub(crate) fn at(base: &str, segment: impl Display) -> String {
    format!("{base}/{segment}")
}

pub(crate) fn err<T>(pointer: impl Into<String>, kind: BuildErrorKind) -> Result<T> {
    Err(BuildError::new(pointer, kind))
}

/// A name of 1 to [`MAX_NAME`] bytes.
pub(crate) fn name(pointer: &str, s: &str) -> Result<()> {
    if s.is_empty() || s.len() > MAX_NAME {
        return err(pointer, BuildErrorKind::BadName { len: s.len(), max: MAX_NAME });
    }
    Ok(())
}

/// At most `max` entries.
pub(crate) fn count(pointer: &str, what: &'static str, n: usize, max: usize) -> Result<()> {
    if n > max {
        return err(pointer, BuildErrorKind::TooMany { what, count: n, max });
    }
    Ok(())
}

/// A finite number in `[lo, hi]`.
pub(crate) fn number(pointer: &str, v: f32, lo: f32, hi: f32) -> Result<f32> {
    if !v.is_finite() {
        return err(pointer, BuildErrorKind::NotFinite);
    }
    if !(lo..=hi).contains(&v) {
        return err(
            pointer,
            BuildErrorKind::OutOfRange { value: f64::from(v), min: f64::from(lo), max: f64::from(hi) },
        );
    }
    Ok(v)
}

/// Three finite numbers, each in `[-limit, limit]`.
pub(crate) fn vector(pointer: &str, v: &[f32; 3], limit: f32) -> Result<anim_math::Vec3> {
    for (i, c) in v.iter().enumerate() {
        number(&at(pointer, i), *c, -limit, limit)?;
    }
    Ok(anim_math::Vec3::new(v[0], v[1], v[2]))
}

/// Names resolved to indices, for everything but nodes and states.
pub(crate) struct Tables<'a> {
    pub(crate) skeleton: &'a Skeleton,
    params: HashMap<&'a str, usize>,
    kinds: Vec<ParamKind>,
    masks: HashMap<&'a str, usize>,
    sync: HashMap<&'a str, usize>,
}

impl<'a> Tables<'a> {
    /// Checks parameters, masks and sync groups, and indexes them.
    pub(crate) fn new(desc: &'a GraphDesc, skeleton: &'a Skeleton) -> Result<(Self, Vec<ParamInfo>)> {
        count("/parameters", "parameters", desc.parameters.len(), MAX_PARAMS)?;
        count("/masks", "masks", desc.masks.len(), MAX_MASKS)?;
        count("/sync_groups", "sync groups", desc.sync_groups.len(), MAX_SYNC_GROUPS)?;
        let mut t =
            Self { skeleton, params: HashMap::new(), kinds: Vec::new(), masks: HashMap::new(), sync: HashMap::new() };
        let mut infos = Vec::with_capacity(desc.parameters.len());
        for (i, p) in desc.parameters.iter().enumerate() {
            let ptr = at("/parameters", i);
            infos.push(param(&ptr, p)?);
            if t.params.insert(&p.name, i).is_some() {
                return err(at(&ptr, "name"), BuildErrorKind::Duplicate { what: "parameter", name: p.name.clone() });
            }
            t.kinds.push(p.kind);
        }
        for (i, m) in desc.masks.iter().enumerate() {
            let ptr = at("/masks", i);
            name(&at(&ptr, "name"), &m.name)?;
            if t.masks.insert(&m.name, i).is_some() {
                return err(at(&ptr, "name"), BuildErrorKind::Duplicate { what: "mask", name: m.name.clone() });
            }
        }
        for (i, g) in desc.sync_groups.iter().enumerate() {
            let ptr = at("/sync_groups", i);
            name(&at(&ptr, "name"), &g.name)?;
            if t.sync.insert(&g.name, i).is_some() {
                return err(at(&ptr, "name"), BuildErrorKind::Duplicate { what: "sync group", name: g.name.clone() });
            }
        }
        Ok((t, infos))
    }

    /// The index of parameter `name`, which must be of `kind`.
    pub(crate) fn param(&self, pointer: &str, name: &str, kind: ParamKind) -> Result<usize> {
        let Some(&i) = self.params.get(name) else {
            return err(pointer, BuildErrorKind::UnknownParameter { name: name.to_owned() });
        };
        if self.kinds[i] != kind {
            return err(
                pointer,
                BuildErrorKind::WrongParameterType {
                    name: name.to_owned(),
                    expected: kind.name(),
                    found: self.kinds[i].name(),
                },
            );
        }
        Ok(i)
    }

    /// A scalar: a number in `[lo, hi]` or a float parameter.
    pub(crate) fn scalar(&self, pointer: &str, s: &Scalar, lo: f32, hi: f32) -> Result<ScalarIn> {
        match s {
            Scalar::Const(v) => Ok(ScalarIn::Const(number(pointer, *v, lo, hi)?)),
            Scalar::Param(p) => Ok(ScalarIn::Param(self.param(pointer, p, ParamKind::Float)?)),
        }
    }

    /// The skeleton index of joint `name`.
    pub(crate) fn joint(&self, pointer: &str, name: &str) -> Result<usize> {
        self.skeleton
            .find(name)
            .map_or_else(|| err(pointer, BuildErrorKind::UnknownJoint { name: name.to_owned() }), Ok)
    }

    /// The index of mask `name`.
    pub(crate) fn mask(&self, pointer: &str, name: &str) -> Result<usize> {
        self.masks
            .get(name)
            .copied()
            .map_or_else(|| err(pointer, BuildErrorKind::Unknown { what: "mask", name: name.to_owned() }), Ok)
    }

    /// The index of sync group `name`.
    pub(crate) fn sync_group(&self, pointer: &str, name: &str) -> Result<usize> {
        self.sync
            .get(name)
            .copied()
            .map_or_else(|| err(pointer, BuildErrorKind::Unknown { what: "sync group", name: name.to_owned() }), Ok)
    }
}

fn param(ptr: &str, p: &ParamDesc) -> Result<ParamInfo> {
    name(&at(ptr, "name"), &p.name)?;
    let default = number(&at(ptr, "default"), p.default, -f32::MAX, f32::MAX)?;
    let (min, max) = match (p.kind, p.range) {
        (ParamKind::Float, Some((lo, hi))) => {
            let lo = number(&at(ptr, "min"), lo, -f32::MAX, f32::MAX)?;
            let hi = number(&at(ptr, "max"), hi, -f32::MAX, f32::MAX)?;
            if lo > hi || !(lo..=hi).contains(&default) {
                return err(ptr, BuildErrorKind::BadRange { min: lo, max: hi, default });
            }
            (lo, hi)
        }
        (ParamKind::Float, None) => (f32::NEG_INFINITY, f32::INFINITY),
        (_, _) => {
            if default != 0.0 && default != 1.0 {
                return err(
                    at(ptr, "default"),
                    BuildErrorKind::OutOfRange { value: f64::from(default), min: 0.0, max: 1.0 },
                );
            }
            (0.0, 1.0)
        }
    };
    Ok(ParamInfo { name: p.name.clone(), kind: p.kind, default, min, max })
}

/// The per-joint weights of mask `m` (at `pointer`).
pub(crate) fn mask_weights(pointer: &str, m: &MaskDesc, t: &Tables<'_>) -> Result<Vec<f32>> {
    let n = t.skeleton.len();
    count(&at(pointer, "joints"), "mask entries", m.joints.len(), n.max(1))?;
    let mut w = vec![0.0; n];
    for (i, e) in m.joints.iter().enumerate() {
        let ptr = at(&at(pointer, "joints"), i);
        let j = t.joint(&at(&ptr, "joint"), &e.joint)?;
        let v = number(&at(&ptr, "weight"), e.weight, 0.0, 1.0)?;
        let range = if e.subtree { t.skeleton.subtree(j) } else { j..j + 1 };
        w[range].iter_mut().for_each(|x| *x = v);
    }
    Ok(w)
}
