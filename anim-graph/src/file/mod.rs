//! The graph file format: a documented JSON file (`docs/graph-format.md`) read into a
//! [`GraphDesc`], and written back.
//!
//! [`load`] checks everything before it builds: the size of the file and the nesting of
//! its arrays and objects (before parsing), the JSON syntax, the format (member names and
//! types, enum strings, array lengths against [`crate::limits`]), then the graph itself
//! ([`Graph::build`]: names, numbers, cycles, blend-space points, machines). Every error
//! says where: a line and column, or the JSON pointer of the value at fault. Nothing a
//! file says can make the loader panic or allocate more than a bounded multiple of the
//! file's size (itself capped).
//!
//! ```
//! use anim_core::pose::{JointDesc, Skeleton};
//! use anim_graph::clips::ClipSet;
//! use anim_graph::file::{LoadError, load};
//! use anim_math::Transform;
//!
//! let skeleton = Skeleton::new(vec![JointDesc::new("root", None, Transform::IDENTITY)]).unwrap();
//! let json = br#"{
//!     "parameters": [{"name": "jump", "type": "trigger"}],
//!     "nodes": [{"name": "main", "type": "state_machine", "entry": "idle", "states": [
//!         {"name": "idle", "node": null, "transitions": [{"to": "air", "condition": {"trigger": "jmup"}}]},
//!         {"name": "air", "node": null}
//!     ]}],
//!     "root": "main"
//! }"#;
//! let err = load(json, &skeleton, &ClipSet::new()).unwrap_err();
//! assert_eq!(err.pointer(), Some("/nodes/0/states/0/transitions/0/condition/trigger"));
//! assert!(err.to_string().contains("unknown parameter \"jmup\""));
//! ```

mod error;
mod read;
mod write;

pub use error::{FormatErrorKind, LoadError};

use crate::clips::ClipSet;
use crate::desc::GraphDesc;
use crate::graph::Graph;
use crate::limits::{MAX_FILE_BYTES, MAX_JSON_DEPTH};
use anim_core::pose::Skeleton;

/// The first place where `bytes` nest arrays and objects deeper than `max`, as a 1-based
/// line and column (strings and their escapes skipped).
fn too_deep(bytes: &[u8], max: usize) -> Option<(usize, usize)> {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    let (mut line, mut column) = (1usize, 0usize);
    for &b in bytes {
        if b == b'\n' {
            (line, column) = (line + 1, 0);
        } else {
            column += 1;
        }
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > max {
                    return Some((line, column));
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

/// Reads a graph file into a description (no graph built: see [`load`]).
///
/// # Errors
/// The file is too large or too deep, not JSON, or not the format.
pub fn parse(bytes: &[u8]) -> Result<GraphDesc, LoadError> {
    if bytes.len() > MAX_FILE_BYTES {
        return Err(LoadError::TooLarge { bytes: bytes.len(), max: MAX_FILE_BYTES });
    }
    if let Some((line, column)) = too_deep(bytes, MAX_JSON_DEPTH) {
        return Err(LoadError::TooDeep { line, column, max: MAX_JSON_DEPTH });
    }
    let value: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| LoadError::Syntax {
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })?;
    read::graph(&value)
}

/// Reads a graph file and builds the graph for `skeleton`, playing the clips of `clips`
/// (see the [module docs](self)). Warnings are in [`Graph::warnings`].
///
/// # Errors
/// As [`parse`], then as [`Graph::build`].
pub fn load(bytes: &[u8], skeleton: &Skeleton, clips: &ClipSet) -> Result<Graph, LoadError> {
    Ok(Graph::build(&parse(bytes)?, skeleton, clips)?)
}

/// `desc` as a graph file (pretty-printed JSON, every member written).
pub fn to_json(desc: &GraphDesc) -> String {
    serde_json::to_string_pretty(&write::document(desc)).expect("a JSON value always serializes")
}
