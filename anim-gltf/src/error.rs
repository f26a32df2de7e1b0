use std::path::PathBuf;
use thiserror::Error;

/// Why a glTF file could not be loaded or written.
///
/// Every variant about the document's content carries `path`, the JSON path of the element
/// at fault as a JSON pointer, as the Khronos glTF-Validator writes it (`/skins/0/joints/3`, `/accessors/7`, `/animations/1/samplers/2/input`), which
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
        /// Element at fault (`/buffers/i`).
        path: String,
        /// What is wrong.
        message: String,
    },
    /// An accessor reads outside its buffer view, has the wrong type or count.
    #[error("{path}: {message}")]
    Accessor {
        /// Element at fault (`/accessors/i`, or the attribute naming it).
        path: String,
        /// What is wrong.
        message: String,
    },
    /// An image cannot be read or decoded: truncated or corrupt data, neither PNG nor
    /// JPEG, an empty image, or bytes outside its buffer (`/images/i`).
    #[error("{path}: {message}")]
    Image {
        /// Element at fault (`/images/i`).
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
        /// Element at fault (`/nodes/i`).
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
    /// Decoding the document would need more memory than [`crate::options::LoadOptions::memory_budget`]
    /// allows; nothing was allocated for the element at fault.
    #[error(
        "{path}: needs {needed} more bytes, which exceeds the memory budget of {budget} bytes ({used} already used)"
    )]
    Budget {
        /// Element at fault (`/accessors/i`, `/buffers/i`, or the use naming it).
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
    /// No clip has this name ([`Model::clip_index`](crate::Model::clip_index)); the
    /// model's clip names are listed, and a name that differs only in case is suggested.
    #[error("no clip named {name:?}{hint}; the model's clips: {available:?}")]
    NoClip {
        /// The name asked for.
        name: String,
        /// Every clip name of the model, in order.
        available: Vec<String>,
        /// `", did you mean \"Walk\"?"` when a name matches but for case, else empty.
        hint: String,
    },
    /// Sampling a clip failed (a non-finite time, a pose of another skeleton, …).
    #[error(transparent)]
    Clip(#[from] anim_core::clip::ClipError),
    /// A pose, skin or set of model matrices does not fit the model's skeleton.
    #[error(transparent)]
    Pose(#[from] anim_core::pose::PoseError),
    /// Skinning was refused (a mesh without normals asked for normals, wrong buffer
    /// lengths, …).
    #[error(transparent)]
    Skinning(#[from] anim_core::skin::SkinningError),
    /// Morphing was refused (weights of the wrong count, non-finite weights).
    #[error(transparent)]
    Morph(#[from] anim_core::skin::MorphError),
    /// The data handed to the exporter cannot be written.
    #[error("export: {0}")]
    Export(String),
    /// Finite values that could take the model out of the runtime's documented numeric
    /// range ([`anim_core::offline::range`]): a node's translation or scale, an animation channel's
    /// keys, a skin's inverse bind matrices or a mesh's positions, alone or down the
    /// hierarchy.
    #[error("{path}: out of range: {source}")]
    OutOfRange {
        /// Element at fault (`/nodes/5/translation`, `/animations/0/channels/3`, …).
        path: String,
        /// What the range check found.
        source: anim_core::offline::range::RangeError,
    },
}

/// `Some(body)` with `path` bound to the `path` field of every variant that has one, else
/// `None`: the one list of those variants, for [`GltfError::path`] and its `&mut` twin.
macro_rules! with_path {
    ($error:expr, $path:ident => $body:expr) => {
        match $error {
            GltfError::Schema { $path, .. }
            | GltfError::Buffer { $path, .. }
            | GltfError::Accessor { $path, .. }
            | GltfError::Image { $path, .. }
            | GltfError::JointOutOfRange { $path, .. }
            | GltfError::NonFinite { $path, .. }
            | GltfError::Degenerate { $path, .. }
            | GltfError::KeysNotIncreasing { $path, .. }
            | GltfError::Hierarchy { $path, .. }
            | GltfError::Unsupported { $path, .. }
            | GltfError::Budget { $path, .. }
            | GltfError::OutOfRange { $path, .. } => Some($body),
            _ => None,
        }
    };
}

impl GltfError {
    /// The same error with its path written as a JSON pointer (RFC 6901): `nodes[2].matrix`
    /// becomes `/nodes/2/matrix`. A path that already is one stays as it is.
    /// Element references inside the message (`used as animations[0].samplers[1].output`)
    /// are rewritten the same way.
    pub(crate) fn into_json_pointer(mut self) -> Self {
        if let Some(path) = self.path_mut()
            && !path.starts_with('/')
        {
            *path = json_pointer(path);
        }
        if let Some(text) = self.text_mut() {
            *text = pointers_in_text(text);
        }
        self
    }

    fn text_mut(&mut self) -> Option<&mut String> {
        match self {
            GltfError::Schema { message, .. }
            | GltfError::Buffer { message, .. }
            | GltfError::Accessor { message, .. }
            | GltfError::Image { message, .. }
            | GltfError::JointOutOfRange { message, .. }
            | GltfError::Hierarchy { message, .. }
            | GltfError::Unsupported { message, .. } => Some(message),
            GltfError::NonFinite { what, .. } | GltfError::Degenerate { what, .. } => Some(what),
            _ => None,
        }
    }

    fn path_mut(&mut self) -> Option<&mut String> {
        with_path!(self, path => path)
    }

    /// JSON path of the element at fault, where the error is about one.
    pub fn path(&self) -> Option<&str> {
        with_path!(self, path => path.as_str())
    }

    pub(crate) fn accessor(path: impl Into<String>, message: impl Into<String>) -> Self {
        GltfError::Accessor { path: path.into(), message: message.into() }
    }
}

/// `a[0].b.c[1]` as the JSON pointer `/a/0/b/c/1`, with `~` and `/` inside a name escaped
/// as RFC 6901 asks (`~0`, `~1`).
fn json_pointer(dotted: &str) -> String {
    let mut out = String::with_capacity(dotted.len() + 8);
    for part in dotted.split('.').filter(|p| !p.is_empty()) {
        let (name, indices) = match part.find('[') {
            Some(i) => part.split_at(i),
            None => (part, ""),
        };
        out.push('/');
        for c in name.chars() {
            match c {
                '~' => out.push_str("~0"),
                '/' => out.push_str("~1"),
                c => out.push(c),
            }
        }
        for index in indices.split(['[', ']']).filter(|i| !i.is_empty()) {
            out.push('/');
            out.push_str(index);
        }
    }
    out
}

/// `text` with every element reference written as glTF paths are inside this crate
/// (`nodes[2]`, `skins[0].joints[3]`: a name, then at least one `[index]`, then more
/// `.name` or `[index]` parts) replaced by its JSON pointer. Anything else is kept.
fn pointers_in_text(text: &str) -> String {
    let bytes = text.as_bytes();
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut out = String::with_capacity(text.len() + 8);
    let mut i = 0;
    while i < bytes.len() {
        let starts_word = bytes[i].is_ascii_alphabetic() && (i == 0 || !(word(bytes[i - 1]) || bytes[i - 1] == b'/'));
        if starts_word && let Some(end) = reference_end(bytes, i) {
            out.push_str(&json_pointer(&text[i..end]));
            i = end;
            continue;
        }
        let c = text[i..].chars().next().expect("i is on a character boundary");
        out.push(c);
        i += c.len_utf8();
    }
    out
}

/// Where the element reference starting at `start` ends: a name followed by one or more
/// `[digits]`, then any `.name` and `[digits]` parts. `None` when there is none there.
fn reference_end(bytes: &[u8], start: usize) -> Option<usize> {
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let name_end = |mut j: usize| {
        while j < bytes.len() && word(bytes[j]) {
            j += 1;
        }
        j
    };
    let index_end = |j: usize| {
        if bytes.get(j) != Some(&b'[') {
            return None;
        }
        let mut k = j + 1;
        while k < bytes.len() && bytes[k].is_ascii_digit() {
            k += 1;
        }
        (k > j + 1 && bytes.get(k) == Some(&b']')).then_some(k + 1)
    };
    let mut j = index_end(name_end(start))?;
    loop {
        if let Some(k) = index_end(j) {
            j = k;
        } else if bytes.get(j) == Some(&b'.') && bytes.get(j + 1).is_some_and(|b| b.is_ascii_alphabetic()) {
            j = name_end(j + 1);
        } else {
            return Some(j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{json_pointer, pointers_in_text};

    #[test]
    fn references_in_messages_become_json_pointers() {
        assert_eq!(
            pointers_in_text("used as animations[0].samplers[1].output: count 4 is more than 3"),
            "used as /animations/0/samplers/1/output: count 4 is more than 3"
        );
        assert_eq!(pointers_in_text("below skins[0]'s joint count"), "below /skins/0's joint count");
        assert_eq!(pointers_in_text("at nodes[2]. Then"), "at /nodes/2. Then");
        assert_eq!(
            pointers_in_text("JOINTS_0 and a[b] and x[1a] stay; é nodes[3]"),
            "JOINTS_0 and a[b] and x[1a] stay; é /nodes/3"
        );
        assert_eq!(pointers_in_text("/nodes/2 already"), "/nodes/2 already");
    }

    #[test]
    fn dotted_paths_become_json_pointers() {
        assert_eq!(json_pointer("nodes[2].matrix"), "/nodes/2/matrix");
        assert_eq!(
            json_pointer("meshes[0].primitives[1].attributes.JOINTS_0"),
            "/meshes/0/primitives/1/attributes/JOINTS_0"
        );
        assert_eq!(json_pointer("buffers[0]"), "/buffers/0");
        assert_eq!(json_pointer("extensionsRequired"), "/extensionsRequired");
        assert_eq!(json_pointer("a~b/c"), "/a~0b~1c");
    }
}
