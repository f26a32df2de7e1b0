//! Fuzzing support for the anim workspace (see FUZZING.md at the repository root).
//!
//! [`check`] is the path one glTF fuzz input takes (import, sample, skin) and what counts
//! as a bug; the regression test of `anim-gltf` runs the same file. [`graph_check`] is the
//! same for animation-graph files (load, update), shared with `anim-graph`'s hostile-input
//! test. The seeds are made by the
//! `anim-fuzz-seeds` package beside this one (`seedgen/`), which needs only `serde_json`.

pub mod check;
pub mod graph_check;
