//! How an import treats untrusted input ([`LoadOptions`]).

use std::path::PathBuf;

/// The default of [`LoadOptions::memory_budget`]: 1 GiB.
pub const DEFAULT_MEMORY_BUDGET: usize = 1 << 30;

/// How [`load_with`](crate::load_with) and [`load_from_bytes_with`](crate::load_from_bytes_with) treat untrusted input.
///
/// The defaults ([`load`](crate::load), [`load_from_bytes`](crate::load_from_bytes)) are safe for hostile files: buffer URIs are
/// resolved only inside the document's folder, only regular files are read (at most their
/// declared `byteLength`), and decoded data is limited to [`DEFAULT_MEMORY_BUDGET`].
#[derive(Clone, Debug)]
pub struct LoadOptions {
    /// Folders, besides the document's own, that external buffer URIs may resolve into
    /// (after percent-decoding, `..` and symbolic links are resolved). Relative URIs are
    /// still resolved against the document's folder; a trusted caller lists here the shared
    /// folders such a URI may lead to (`../shared/anim.bin`). Empty by default.
    pub allowed_roots: Vec<PathBuf>,
    /// The most bytes the import may allocate for buffers and decoded accessor data,
    /// summed over the document; checked before anything is allocated, so a small file
    /// that declares huge accessors is refused with [`GltfError::Budget`](crate::GltfError::Budget).
    pub memory_budget: usize,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions { allowed_roots: Vec::new(), memory_budget: DEFAULT_MEMORY_BUDGET }
    }
}
