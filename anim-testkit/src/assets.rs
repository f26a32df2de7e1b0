//! The shared test models (`../shared/assets` beside the repository, described in its
//! `MODELS.md`), found and loaded in one place. Tests read them in place; they are never
//! copied into the repository.

use std::path::PathBuf;

/// The folder holding the shared models.
pub fn dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/assets"))
}

/// The path of a shared model, `rel` relative to the shared folder (`"Fox/Fox.glb"`).
pub fn path(rel: &str) -> PathBuf {
    dir().join(rel)
}

/// The path of a shared model as a string (for command lines).
pub fn path_str(rel: &str) -> String {
    path(rel).to_string_lossy().into_owned()
}

/// Loads a shared model.
///
/// # Panics
/// When the model is missing or does not load: a test cannot go on without it, and the
/// message names the file and the error.
pub fn load(rel: &str) -> anim_gltf::Model {
    let p = path(rel);
    anim_gltf::load(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}
