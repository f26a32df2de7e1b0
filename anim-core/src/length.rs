//! The runtime's one length-mismatch error, at the bottom of every module's errors.

use thiserror::Error;

/// A slice or array whose length is not the one it must have: the runtime's one
/// length-mismatch error. The error enums of this crate and of `anim-ik` wrap it in their
/// `WrongLength` variant (each converts from it with `?`), so every caller reads the same
/// three fields whichever operation failed.
///
/// ```
/// use anim_core::LengthMismatch;
///
/// assert_eq!(LengthMismatch::check("pose", 3, 3), Ok(()));
/// let e = LengthMismatch::check("output positions", 9, 10).unwrap_err();
/// assert_eq!(e, LengthMismatch::new("output positions", 9, 10));
/// assert_eq!(e.to_string(), "output positions has 9 entries, expected 10");
/// ```
#[derive(Debug, Error, Clone, Copy, PartialEq, Eq, Hash)]
#[error("{what} has {got} entries, expected {expected}")]
pub struct LengthMismatch {
    /// Which slice or array ("pose", "output positions", "contact weights", …).
    pub what: &'static str,
    /// Its length.
    pub got: usize,
    /// The length it must have.
    pub expected: usize,
}

impl LengthMismatch {
    /// `what` has `got` entries where `expected` are needed.
    pub const fn new(what: &'static str, got: usize, expected: usize) -> Self {
        Self { what, got, expected }
    }

    /// `Ok` when `got == expected`, otherwise the mismatch (which `?` converts into any
    /// error enum with a `WrongLength` variant).
    ///
    /// # Errors
    /// The mismatch, when the lengths differ.
    pub const fn check(what: &'static str, got: usize, expected: usize) -> Result<(), Self> {
        if got == expected { Ok(()) } else { Err(Self::new(what, got, expected)) }
    }
}
