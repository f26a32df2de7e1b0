//! Crowds for the anim runtime: many characters of one skin, animated together.
//!
//! - [`atlas`]: [`AnimAtlas`], clips of one skin baked at a fixed rate into one RGBA
//!   texture (the book's chapter 15), with a CPU reader of exactly what the shaders
//!   compute and a file format.
//! - [`crowd`]: [`Crowd`], per-character clip and [`Playback`](anim_core::clip::Playback)
//!   state as structure-of-arrays, packed each update into 64-byte [`CrowdInstance`]
//!   records a GPU reads as they are.
//! - [`job`]: [`CrowdJob`], which samples N characters' clips (exact, baked or runtime),
//!   builds their model matrices and skinning palettes, on one thread or every core.
//!
//! Both threaded paths ([`Crowd::update_parallel`], [`CrowdJob::run`]) share one
//! persistent worker pool design: parked threads, contiguous chunks of characters, panics
//! resumed on the caller, nothing allocated per update, the same bits for any thread count.
//!
//! ```
//! use anim_crowd::atlas::AtlasClip;
//! use anim_crowd::crowd::{CharacterDesc, Crowd};
//! use anim_math::{Quat, Vec3};
//!
//! // One looping clip of 31 atlas columns: one second at 30 frames a second.
//! let walk = AtlasClip {
//!     name: "walk".into(),
//!     first_frame: 0,
//!     frame_count: 31,
//!     rate: 30.0,
//!     duration: 1.0,
//!     looping: true,
//!     bounds: (Vec3::zeros(), Vec3::zeros()),
//! };
//! let mut crowd = Crowd::new(&[walk]);
//! for i in 0..100 {
//!     let position = Vec3::new(i as f32, 0.0, 0.0);
//!     let desc = CharacterDesc { position, rotation: Quat::identity(), scale: 1.0, clip: 0, time: 0.0, speed: 1.0 };
//!     crowd.add(desc)?;
//! }
//! crowd.update(0.5);
//! // Half a second in: atlas column 15 of every character's record.
//! assert_eq!(crowd.instances()[99].frames[0], 15);
//! # Ok::<(), anim_crowd::crowd::CrowdError>(())
//! ```

#![warn(missing_docs)]

pub mod atlas;
pub mod crowd;
pub mod job;
mod pool;
pub mod prelude;

pub use atlas::{AnimAtlas, AtlasClip, AtlasError, AtlasSource, BakeSettings, TexelFormat, TextureLayout};
pub use crowd::{CharacterDesc, Crowd, CrowdError, CrowdInstance};
pub use job::{CrowdCharacter, CrowdJob, CrowdJobError, PaletteOutput};

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
