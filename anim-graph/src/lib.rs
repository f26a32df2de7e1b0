//! Animation graphs for the anim runtime: what a game drives a character with.
//!
//! A [`Graph`](graph::Graph) is built once per character type from a description (a JSON
//! file, [`file`](mod@file), or code, [`builder`]) and shared; every character plays it through its
//! own [`GraphInstance`](instance::GraphInstance), whose `update` allocates nothing.
//!
//! - [`param`]: named floats, bools and triggers, set through typed handles.
//! - Nodes ([`desc`]): clips with their `Playback`, 1D blend spaces, 2D blend spaces by
//!   gradient band interpolation ([`blend_space`], Cartesian and polar), blends, additive
//!   and masked layers, two-bone / aim / foot-grounding IK, and state machines, which nest.
//! - [`sync`]: sync groups keep clips at one phase, or at the same place between foot
//!   markers, so blended gaits do not slide.
//! - State machines: conditions on parameters, exit times, priorities, interruption,
//!   triggers consumed once, any-state transitions, enter and exit events; crossfades and
//!   [`inertial`]ization (Bollo 2018), which evaluates only the target state.
//! - Root motion flows through the graph, mixed with the poses' weights.
//!
//! ```
//! use anim_core::clip::{Clip, Interpolation, JointTracks, Track};
//! use anim_core::pose::{JointDesc, Skeleton};
//! use anim_graph::builder::GraphBuilder;
//! use anim_graph::clips::ClipSet;
//! use anim_graph::instance::GraphInstance;
//! use anim_math::{Transform, Vec3};
//! use std::sync::Arc;
//!
//! // One joint; "idle" holds it at x = 0, "walk" slides it from 0 to 1 in a second.
//! let skeleton = Skeleton::new(vec![JointDesc::new("root", None, Transform::IDENTITY)])?;
//! let slide = |name: &str, to: f32| -> Result<Arc<Clip>, Box<dyn std::error::Error>> {
//!     let mut t = JointTracks::new(0);
//!     t.translation = Some(Track::new(Interpolation::Linear, vec![0.0, 1.0], vec![Vec3::zeros(), Vec3::new(to, 0.0, 0.0)])?);
//!     Ok(Arc::new(Clip::new(name, vec![t], vec![])?))
//! };
//! let clips = ClipSet::from_clips([slide("idle", 0.0)?, slide("walk", 1.0)?]);
//!
//! // speed 0 → idle, speed 1 → walk, blended linearly between.
//! let mut b = GraphBuilder::new();
//! b.float("speed", 0.0);
//! b.clip("idle", "idle");
//! b.clip("walk", "walk");
//! b.blend_space_1d("move", "speed", &[("idle", 0.0), ("walk", 1.0)]);
//! let graph = Arc::new(b.build("move", &skeleton, &clips)?);
//!
//! let speed = graph.float_param("speed")?; // looked up once
//! let mut character = GraphInstance::new(graph.clone());
//! let (mut pose, mut motion, mut events) = (skeleton.rest_pose().clone(), Transform::IDENTITY, Vec::new());
//! character.set_float(speed, 0.5)?;
//! character.update(0.5, &mut pose, &mut motion, &mut events)?;
//! // Both clips at 0.5 s: idle at 0, walk at 0.5, mixed half and half.
//! assert!((pose.locals()[0].translation.x - 0.25).abs() < 1e-6);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

pub mod blend_space;
pub mod builder;
pub mod clips;
mod compile;
pub mod desc;
pub mod error;
pub mod event;
pub mod file;
pub mod graph;
pub mod inertial;
pub mod instance;
pub mod limits;
mod node;
pub mod param;
pub mod sync;

pub use anim_core;
pub use anim_ik;

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
