use std::path::PathBuf;
use thiserror::Error;

/// Why a glTF file could not be loaded or written.
///
/// Every variant about the document's content carries `path`, the JSON path of the element
/// at fault (`skins[0].joints[3]`, `accessors[7]`, `animations[1].samplers[2].input`), which
/// [`GltfError::path`] returns.
#[derive(Debug, Error)]
pub enum GltfError {
    /// A file could not be read or written.
    #[error("{file}: {source}")]
    Io {
        /// The file.
        file: PathBuf,
        /// The system error.
        source: std::io::Error,
    },
    /// The bytes are not a glTF JSON document or GLB container.
    #[error("not a glTF 2.0 document: {0}")]
    Syntax(String),
    /// The document breaks the glTF schema (an index out of range, a missing property):
    /// reported by the `gltf` crate's validation.
    #[error("{path}: {message}")]
    Schema {
        /// Element at fault.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// A buffer is missing, too short, or its URI cannot be resolved.
    #[error("{path}: {message}")]
    Buffer {
        /// Element at fault (`buffers[i]`).
        path: String,
        /// What is wrong.
        message: String,
    },
    /// An accessor reads outside its buffer view, has the wrong type or count.
    #[error("{path}: {message}")]
    Accessor {
        /// Element at fault (`accessors[i]`, or the attribute naming it).
        path: String,
        /// What is wrong.
        message: String,
    },
    /// A joint index (in a skin or in `JOINTS_n` data) is out of range.
    #[error("{path}: {message}")]
    JointOutOfRange {
        /// Element at fault.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// A NaN or infinite number where a finite one is required.
    #[error("{path}: non-finite {what}")]
    NonFinite {
        /// Element at fault.
        path: String,
        /// Which value ("translation", "key time 3", "inverse bind matrix 2", …).
        what: String,
    },
    /// A finite value that cannot be used: a zero-length (not normalizable) quaternion, a
    /// matrix that is not a TRS transform.
    #[error("{path}: {what}")]
    Degenerate {
        /// Element at fault.
        path: String,
        /// What is wrong with it.
        what: String,
    },
    /// Animation key times are not strictly increasing.
    /// (The message leaves the time out: error messages never quote buffer contents.)
    #[error("{path}: key time {index} is not greater than the previous key time")]
    KeysNotIncreasing {
        /// The sampler input accessor at fault.
        path: String,
        /// Index of the offending key.
        index: usize,
        /// Its time.
        time: f32,
    },
    /// The node hierarchy is not a forest (a cycle, or a node with two parents).
    #[error("{path}: {message}")]
    Hierarchy {
        /// Element at fault (`nodes[i]`).
        path: String,
        /// What is wrong.
        message: String,
    },
    /// Valid glTF that this runtime does not support (too many joints, …).
    #[error("{path}: unsupported: {message}")]
    Unsupported {
        /// Element at fault.
        path: String,
        /// What is not supported.
        message: String,
    },
    /// Decoding the document would need more memory than [`crate::LoadOptions::memory_budget`]
    /// allows; nothing was allocated for the element at fault.
    #[error(
        "{path}: needs {needed} more bytes, which exceeds the memory budget of {budget} bytes ({used} already used)"
    )]
    Budget {
        /// Element at fault (`accessors[i]`, `buffers[i]`, or the use naming it).
        path: String,
        /// Bytes this element needs.
        needed: u64,
        /// Bytes already charged to the budget.
        used: u64,
        /// The budget.
        budget: u64,
    },
    /// A caller-side argument is wrong (buffer lengths, an instance index, …).
    #[error("{0}")]
    Argument(String),
    /// The data handed to the exporter cannot be written.
    #[error("export: {0}")]
    Export(String),
    /// Finite values that could take the model out of the runtime's documented numeric
    /// range ([`anim_core::range`]): a node's translation or scale, an animation channel's
    /// keys, a skin's inverse bind matrices or a mesh's positions, alone or down the
    /// hierarchy.
    #[error("{path}: out of range: {source}")]
    OutOfRange {
        /// Element at fault (`/nodes/5/translation`, `/animations/0/channels/3`, …).
        path: String,
        /// What the range check found.
        source: anim_core::range::RangeError,
    },
}

impl GltfError {
    /// JSON path of the element at fault, where the error is about one.
    pub fn path(&self) -> Option<&str> {
        match self {
            GltfError::Schema { path, .. }
            | GltfError::Buffer { path, .. }
            | GltfError::Accessor { path, .. }
            | GltfError::JointOutOfRange { path, .. }
            | GltfError::NonFinite { path, .. }
            | GltfError::Degenerate { path, .. }
            | GltfError::KeysNotIncreasing { path, .. }
            | GltfError::Hierarchy { path, .. }
            | GltfError::Unsupported { path, .. }
            | GltfError::Budget { path, .. }
            | GltfError::OutOfRange { path, .. } => Some(path),
            _ => None,
        }
    }

    pub(crate) fn accessor(path: impl Into<String>, message: impl Into<String>) -> Self {
        GltfError::Accessor { path: path.into(), message: message.into() }
    }
}
