//! Why a graph file was refused. Every error says where: a line and column for what the
//! JSON parser refuses, a JSON pointer (RFC 6901) for everything after it.

use crate::error::BuildError;
use thiserror::Error;

/// Why [`crate::file::load`] or [`crate::file::parse`] refused a file.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum LoadError {
    /// The file is larger than [`crate::limits::MAX_FILE_BYTES`].
    #[error("the file has {bytes} bytes, a graph file has at most {max}")]
    TooLarge {
        /// Its size.
        bytes: usize,
        /// The cap.
        max: usize,
    },
    /// Arrays and objects nest deeper than [`crate::limits::MAX_JSON_DEPTH`].
    #[error("line {line}, column {column}: arrays and objects nest deeper than {max} levels")]
    TooDeep {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// The cap.
        max: usize,
    },
    /// Not JSON (or not UTF-8).
    #[error("line {line}, column {column}: {message}")]
    Syntax {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// The parser's message.
        message: String,
    },
    /// JSON, but not the graph format.
    #[error("{pointer}: {kind}")]
    Format {
        /// Where.
        pointer: String,
        /// What.
        kind: FormatErrorKind,
    },
    /// The format is right, the graph is not (unknown names, bad numbers, cycles…).
    #[error(transparent)]
    Build(#[from] BuildError),
}

impl LoadError {
    /// The JSON pointer of the value at fault, for the errors that have one.
    pub fn pointer(&self) -> Option<&str> {
        match self {
            LoadError::Format { pointer, .. } => Some(pointer),
            LoadError::Build(e) => Some(&e.pointer),
            _ => None,
        }
    }
}

/// The classes of [`LoadError::Format`].
#[derive(Debug, Error, Clone, PartialEq)]
pub enum FormatErrorKind {
    /// A value of another JSON type.
    #[error("expected {expected}")]
    WrongType {
        /// What was expected ("an object", "a number", …).
        expected: &'static str,
    },
    /// A required member is missing.
    #[error("missing member {field:?}")]
    Missing {
        /// Its name.
        field: &'static str,
    },
    /// A member the format does not have (a typo, usually).
    #[error("unknown member {field:?} (members here: {allowed})")]
    UnknownField {
        /// Its name.
        field: String,
        /// The members allowed here.
        allowed: String,
    },
    /// A string that is none of the names allowed here.
    #[error("{found:?} is not one of {allowed}")]
    BadValue {
        /// The string.
        found: String,
        /// The names allowed.
        allowed: &'static str,
    },
    /// An array longer than allowed.
    #[error("{count} {what}, at most {max} are allowed")]
    TooMany {
        /// What.
        what: &'static str,
        /// How many.
        count: usize,
        /// The cap.
        max: usize,
    },
    /// A format version this crate does not read.
    #[error("format version {found}, this reader reads version 1")]
    Version {
        /// The version found.
        found: String,
    },
}
