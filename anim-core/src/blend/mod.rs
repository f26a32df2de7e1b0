//! Blending poses (the book's chapter 12): two poses mixed by a weight, additive layers,
//! N weighted layers with per-joint masks, and the crossfade controller that plays one
//! clip and fades to the next.
//!
//! - [`mix`]: [`blend`], [`blend_into`] and [`blend_masked`], a joint-local mix of two
//!   poses (optionally one subtree, or per-joint weights).
//! - [`additive`]: a pose minus a reference pose, added on top of another
//!   ([`additive::add`], [`additive::make_additive_base`]).
//! - [`layered`]: [`blend_layers`] over any number of [`Layer`]s and [`AdditiveLayer`]s.
//! - [`crossfade`]: [`CrossFadeController`], the book's fade between clips.
//!
//! Every function writes into a caller-owned pose and allocates nothing.

pub mod additive;
pub mod crossfade;
pub mod layered;
pub mod mix;

pub use crossfade::{CrossFadeController, CrossFadeError, FadeInfo};
pub use layered::{AdditiveLayer, Layer, blend_layers};
pub use mix::{BlendError, blend, blend_into, blend_masked, subtree_mask};
