//! Shared code of the demo binaries: the framework ([`app`]: command line, [`Scene`]
//! trait, window and headless loops), characters ([`character`]: the default mannequin or a
//! glTF file, posed and drawn with any skinning backend), the scenes of the demos
//! ([`scenes`]), each run by a small binary in `src/bin/`, and [`gpu_skin`] (GPU skinning of
//! glTF instances for `animtool skin --backend gpu`).

#![warn(missing_docs)]

pub mod app;
pub mod character;
mod error;
pub mod gpu_skin;
pub mod scenes;

pub use app::{App, CommonArgs, HeadlessRun, Key, Orbit, Scene, main, method_parser, run_headless, run_window};
pub use character::{Backend, Character, Posed};
pub use error::DemoError;
pub use gpu_skin::GpuInstanceSkinner;
