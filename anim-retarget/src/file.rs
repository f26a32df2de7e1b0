//! The humanoid map file: a character's roles named in JSON, for rigs whose names
//! automatic mapping cannot read.
//!
//! ```json
//! {
//!   "version": 1,
//!   "roles": {
//!     "hips": "pelvis",
//!     "spine": ["spine_01", "spine_02"],
//!     "chest": "spine_03",
//!     "neck": "neck",
//!     "head": "head",
//!     "left_shoulder": "clavicle_l",
//!     "left_upper_arm": "upperarm_l",
//!     "left_lower_arm": "lowerarm_l",
//!     "left_hand": "hand_l",
//!     "left_upper_leg": "thigh_l",
//!     "left_lower_leg": "calf_l",
//!     "left_foot": "foot_l",
//!     "left_toes": "ball_l",
//!     "right_shoulder": null,
//!     "…": "the right_ roles alike"
//!   }
//! }
//! ```
//!
//! - `version` is 1. `roles` maps role names ([`Role::name`]) to joint names (exactly as
//!   in the skeleton, which must have exactly one joint of that name); `spine` is an array
//!   of joint names from the hips up (the joints strictly between the hips and the chest;
//!   it may be empty or absent). An optional role may be absent or `null`; the required
//!   ones ([`Role::is_required`]) must be there. A `"name"` string may say whose map it is.
//!   Nothing else is allowed.
//! - The map is then checked as [`HumanoidMap::validate_with_rest`] checks it: every joint
//!   plays one role, each role lies below the one it hangs from, the upper legs hang from
//!   the hips (or beside them, from their parent), left is on the left.
//!
//! Every error is a [`MapFileError`] with the JSON pointer (RFC 6901) of the value at
//! fault (`/roles/left_upper_leg`, `/roles/spine/1`); a file that is not JSON gives the
//! line and column. A role given twice in the object is an error, not "the last one wins".

use crate::map::{HumanoidMap, MapError, Slot};
use crate::profile::Role;
use anim_core::pose::Skeleton;
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use std::fmt;
use thiserror::Error;

/// Why a map file was refused. Every variant but [`MapFileError::Syntax`] carries the JSON
/// pointer of the value at fault.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum MapFileError {
    /// Not JSON.
    #[error("map file: not JSON at line {line}, column {column}: {message}")]
    Syntax {
        /// Line (1-based).
        line: usize,
        /// Column (1-based).
        column: usize,
        /// What the parser said.
        message: String,
    },
    /// A value of the wrong type.
    #[error("map file {pointer}: expected {expected}")]
    WrongType {
        /// Where.
        pointer: String,
        /// What was expected.
        expected: &'static str,
    },
    /// A key that must be there is not.
    #[error("map file {pointer}: missing key {key:?}")]
    MissingKey {
        /// The object that lacks it.
        pointer: String,
        /// The key.
        key: &'static str,
    },
    /// A key the format does not have.
    #[error("map file {pointer}: unknown key (allowed: version, name, roles)")]
    UnknownKey {
        /// The key's pointer.
        pointer: String,
    },
    /// A version other than 1.
    #[error("map file {pointer}: version {version} is not supported (1 is)")]
    UnsupportedVersion {
        /// Where.
        pointer: String,
        /// The version found.
        version: String,
    },
    /// A role name the profile does not have.
    #[error(
        "map file {pointer}: {name:?} is not a role (roles: hips, spine, chest, neck, head, left_/right_ + shoulder, upper_arm, lower_arm, hand, upper_leg, lower_leg, foot, toes)"
    )]
    UnknownRole {
        /// Where.
        pointer: String,
        /// The name found.
        name: String,
    },
    /// A key given twice in one object (a role named twice).
    #[error("map file {pointer}: given twice")]
    DuplicateKey {
        /// The second occurrence.
        pointer: String,
    },
    /// A joint name the skeleton does not have.
    #[error("map file {pointer}: the skeleton has no joint named {name:?}")]
    UnknownJoint {
        /// Where.
        pointer: String,
        /// The name.
        name: String,
    },
    /// A joint name several joints of the skeleton have.
    #[error("map file {pointer}: {count} joints are named {name:?}; a map file names joints that are unique")]
    AmbiguousJoint {
        /// Where.
        pointer: String,
        /// The name.
        name: String,
        /// How many joints have it.
        count: usize,
    },
    /// The map does not fit the skeleton (hierarchy, a joint twice, a missing role, sides).
    #[error("map file {pointer}: {source}")]
    Map {
        /// The slot at fault.
        pointer: String,
        /// The check that failed.
        source: MapError,
    },
}

impl MapFileError {
    /// The JSON pointer of the value at fault (empty for a syntax error: the document).
    pub fn pointer(&self) -> &str {
        match self {
            MapFileError::Syntax { .. } => "",
            MapFileError::WrongType { pointer, .. }
            | MapFileError::MissingKey { pointer, .. }
            | MapFileError::UnknownKey { pointer }
            | MapFileError::UnsupportedVersion { pointer, .. }
            | MapFileError::UnknownRole { pointer, .. }
            | MapFileError::DuplicateKey { pointer }
            | MapFileError::UnknownJoint { pointer, .. }
            | MapFileError::AmbiguousJoint { pointer, .. }
            | MapFileError::Map { pointer, .. } => pointer,
        }
    }
}

/// A JSON value that keeps an object's keys in order, duplicates included.
#[derive(Debug)]
enum Json {
    Null,
    Bool,
    Number(f64),
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Json, E> {
        Ok(Json::Bool)
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Json, E> {
        Ok(Json::Number(v as f64))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Json, E> {
        Ok(Json::Number(v as f64))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Json, E> {
        Ok(Json::Number(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Json, E> {
        Ok(Json::String(v.to_owned()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Json, E> {
        Ok(Json::String(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut out = Vec::new();
        while let Some(v) = seq.next_element()? {
            out.push(v);
        }
        Ok(Json::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut out = Vec::new();
        while let Some((k, v)) = map.next_entry::<String, Json>()? {
            out.push((k, v));
        }
        Ok(Json::Object(out))
    }
}

/// `parent/key` with the key escaped as RFC 6901 says (`~` → `~0`, `/` → `~1`).
fn child(parent: &str, key: &str) -> String {
    format!("{parent}/{}", key.replace('~', "~0").replace('/', "~1"))
}

/// Reads a map file (module docs) for `skeleton` and checks the map.
///
/// # Errors
/// A [`MapFileError`] naming the value at fault by its JSON pointer.
pub fn parse_map_file(text: &str, skeleton: &Skeleton) -> Result<HumanoidMap, MapFileError> {
    let doc: Json = serde_json::from_str(text).map_err(|e| MapFileError::Syntax {
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })?;
    let Json::Object(top) = doc else {
        return Err(MapFileError::WrongType { pointer: String::new(), expected: "an object" });
    };
    let mut seen: Vec<&str> = Vec::new();
    let (mut version, mut roles) = (None, None);
    for (key, value) in &top {
        let pointer = child("", key);
        if seen.contains(&key.as_str()) {
            return Err(MapFileError::DuplicateKey { pointer });
        }
        seen.push(key);
        match key.as_str() {
            "version" => version = Some((pointer, value)),
            "roles" => roles = Some((pointer, value)),
            "name" => {
                if !matches!(value, Json::String(_)) {
                    return Err(MapFileError::WrongType { pointer, expected: "a string" });
                }
            }
            _ => return Err(MapFileError::UnknownKey { pointer }),
        }
    }
    let (pointer, version) = version.ok_or(MapFileError::MissingKey { pointer: String::new(), key: "version" })?;
    match version {
        Json::Number(v) if *v == 1.0 => {}
        Json::Number(v) => return Err(MapFileError::UnsupportedVersion { pointer, version: v.to_string() }),
        _ => return Err(MapFileError::WrongType { pointer, expected: "a number" }),
    }
    let (roles_pointer, roles) = roles.ok_or(MapFileError::MissingKey { pointer: String::new(), key: "roles" })?;
    let Json::Object(entries) = roles else {
        return Err(MapFileError::WrongType { pointer: roles_pointer, expected: "an object" });
    };
    let joint = |pointer: &str, value: &Json| -> Result<Option<usize>, MapFileError> {
        match value {
            Json::Null => Ok(None),
            Json::String(name) => find_unique(skeleton, name, pointer).map(Some),
            _ => Err(MapFileError::WrongType { pointer: pointer.to_owned(), expected: "a joint name or null" }),
        }
    };
    let mut map = HumanoidMap::new();
    let mut seen: Vec<&str> = Vec::new();
    for (key, value) in entries {
        let pointer = child(&roles_pointer, key);
        if seen.contains(&key.as_str()) {
            return Err(MapFileError::DuplicateKey { pointer });
        }
        seen.push(key);
        if key == "spine" {
            let spine = match value {
                Json::Null => Vec::new(),
                Json::Array(items) => items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| {
                        let p = child(&pointer, &i.to_string());
                        match v {
                            Json::String(name) => find_unique(skeleton, name, &p),
                            _ => Err(MapFileError::WrongType { pointer: p, expected: "a joint name" }),
                        }
                    })
                    .collect::<Result<_, _>>()?,
                _ => return Err(MapFileError::WrongType { pointer, expected: "an array of joint names" }),
            };
            map.set_spine(spine);
            continue;
        }
        let role = Role::from_name(key)
            .ok_or_else(|| MapFileError::UnknownRole { pointer: pointer.clone(), name: key.clone() })?;
        map.set(role, joint(&pointer, value)?);
    }
    map.validate_with_rest(skeleton).map_err(|source| {
        let pointer = match (&source, source.slot()) {
            // A role that is not there: the object that lacks it.
            (MapError::MissingRole { .. }, _) => roles_pointer.clone(),
            (_, Slot::Role(r)) => child(&roles_pointer, r.name()),
            (_, Slot::Spine(i)) => child(&child(&roles_pointer, "spine"), &i.to_string()),
        };
        MapFileError::Map { pointer, source }
    })?;
    Ok(map)
}

fn find_unique(skeleton: &Skeleton, name: &str, pointer: &str) -> Result<usize, MapFileError> {
    let count = skeleton.names().iter().filter(|n| *n == name).count();
    match count {
        0 => Err(MapFileError::UnknownJoint { pointer: pointer.to_owned(), name: name.to_owned() }),
        1 => Ok(skeleton.find(name).expect("a name counted once is found")),
        _ => Err(MapFileError::AmbiguousJoint { pointer: pointer.to_owned(), name: name.to_owned(), count }),
    }
}

/// Writes `map` as a map file (the format of the module docs) naming `skeleton`'s joints:
/// a starting point to edit for a rig automatic mapping gets wrong.
pub fn write_map_file(map: &HumanoidMap, skeleton: &Skeleton) -> String {
    let name = |j: usize| serde_json::Value::String(skeleton.name(j).unwrap_or("").to_owned());
    let mut roles = serde_json::Map::new();
    for role in Role::ALL {
        roles.insert(role.name().to_owned(), map.get(role).map_or(serde_json::Value::Null, name));
    }
    roles.insert("spine".into(), serde_json::Value::Array(map.spine().iter().map(|&j| name(j)).collect()));
    let mut top = serde_json::Map::new();
    top.insert("version".into(), 1.into());
    top.insert("roles".into(), serde_json::Value::Object(roles));
    serde_json::to_string_pretty(&serde_json::Value::Object(top)).expect("a JSON value serializes")
}
