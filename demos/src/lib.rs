//! Shared code of the demo binaries: the framework ([`app`]: command line, [`Scene`]
//! trait, window and headless loops), characters ([`character`]: the default mannequin or a
//! glTF file, posed and drawn with any skinning backend), the scenes of the demos
//! ([`scenes`]), each run by a small binary in `src/bin/`, and [`gpu_skin`] (GPU skinning of
//! glTF instances for `animtool skin --backend gpu`), the [`stage`] the character scenes
//! share (character, meshes, pose, method, backend, framing, shared keys), the [`chain`]
//! demo of the IK scenes, the [`hud`] (text and diagrams over the scene),
//! [`graph_tool`] (`animtool graph`), [`graph_view`] (what the demos show of a graph
//! playing, and its parameters as panel rows), [`surfaces`], which hands a glTF model's materials
//! and textures to the renderer, and [`retarget`] (humanoids rigged and clips carried
//! between them for `animtool retarget`, the `retarget` demo and the mixed crowd).

#![warn(missing_docs)]

pub mod app;
pub mod chain;
pub mod character;
pub mod crowd;
mod error;
pub mod gpu_skin;
pub mod graph_tool;
pub mod graph_view;
pub mod hud;
pub mod mixed_crowd;
pub mod progress;
pub mod retarget;
pub mod root_motion;
pub mod scenes;
pub mod stage;
pub mod surfaces;
#[cfg(feature = "ui")]
pub mod ui;
pub mod widgets;

#[cfg(target_os = "linux")]
pub use app::Windowed;
pub use app::{
    App, CommonArgs, CrowdArgs, Headless, HeadlessRun, Key, Orbit, Scene, Session, main, method_parser, run_headless,
    run_window,
};
pub use character::{Backend, Character, Posed};
pub use error::DemoError;
pub use gpu_skin::GpuInstanceSkinner;
pub use stage::Stage;
