//! Fuzzing support for the anim workspace (see FUZZING.md at the repository root).
//!
//! [`check`] is the path one glTF fuzz input takes (import, sample, skin) and what counts
//! as a bug; the regression test of `anim-gltf` runs the same file. [`graph_check`] is the
//! same for animation-graph files (load, update), shared with `anim-graph`'s hostile-input
//! test, and [`map_file`] for the humanoid map-file target (parse, rig, retarget), run by a
//! test of `anim-retarget`. The seeds are made by the `anim-fuzz-seeds` package beside this
//! one (`seedgen/`), which needs only `serde_json`.

pub mod check;
pub mod graph_check;
pub mod map_file;
