//! Animation textures (the book's chapter 15): clips of one skin baked at a fixed rate
//! into one RGBA texture, the *atlas*, that a GPU samples per character.
//!
//! # Layout
//! The atlas is an image `width × height` texels of 4 channels, stored row-major
//! (texel `(x, y)` is element `y · width + x` of [`AnimAtlas::texels`];
//! [`AnimAtlas::texel`] decodes one):
//! - **x is the frame.** Clip `c` occupies columns `first_frame .. first_frame + frame_count`
//!   ([`AtlasClip`]); its frame `f` is the clip sampled at `min(f / rate, duration)`, so
//!   the last frame is exactly the clip's end. `frame_count = ceil(duration · bake rate) + 1`
//!   (at least 2) and the clip's own `rate = (frame_count − 1) / duration`, a little above
//!   the bake rate so that the frames divide the clip evenly. A clip of zero duration has
//!   2 identical frames and `rate` = the bake rate. Clips follow each other in bake order
//!   from column 0; the width is at most [`MAX_WIDTH`].
//! - **y is `joint · texels_per_joint + k`**, `joint` being the *skin* joint (the index
//!   mesh influences use), `k` a texel of the [`TextureLayout`]:
//!   - [`TextureLayout::ModelTrs`] (the book's layout, 3 texels): the joint's model-space
//!     translation `(x, y, z, 0)`, rotation `(i, j, k, w)` and scale `(x, y, z, 0)` (the
//!     model matrix decomposed by [`Transform::from_matrix`](anim_math::Transform::from_matrix); shear is dropped). The
//!     shader builds `T·R·S` and multiplies by the joint's inverse bind matrix
//!     ([`AnimAtlas::inverse_bind`]). 4 influences × 2 frames × 3 texels = 24 fetches a
//!     vertex.
//!   - [`TextureLayout::SkinMatrix`] (3 texels): rows 0, 1 and 2 of the skinning matrix
//!     `model · inverse_bind` (the fourth row is `0 0 0 1`).
//!   - [`TextureLayout::SkinDualQuat`] (2 texels): the skinning dual quaternion's real
//!     part `(i, j, k, w)` and dual part `(i, j, k, w)`. Rigid skins only.
//! - Texels are 32-bit floats or half floats ([`TexelFormat`]; converted with
//!   `half::f16::from_f32`, round to nearest; a value beyond ±65504 is an error).
//!
//! Rotations and dual quaternions are sign-aligned with the previous frame of their clip,
//! so interpolating neighbours always takes the short way.
//!
//! # Interpolation (CPU reader and shaders do exactly this)
//! A character samples its clip at a [`FramePair`] `(frame0, frame1, t)`; an optional
//! second clip is blended in with weight `w` (the book's in-shader blend). Below,
//! `mix(a, b, t) = a·(1 − t) + b·t` (GLSL's `mix`) on all four channels, and
//! `nlerp(a, b, t) = normalize(mix(a, ±b, t))` with `b` negated when `dot(a, b) < 0`.
//! Per joint:
//! - `ModelTrs`: translation and scale `mix`, rotation `nlerp` — first between the two
//!   frames of each clip (by `t`), then between the clips (by `w`; the rotation is
//!   normalized after each of the two steps); then `M = T·R·S · inverse_bind`, `R` the
//!   matrix of the unit quaternion.
//! - `SkinMatrix`: the three rows are `mix`ed the same way (frames, then clips).
//! - `SkinDualQuat`: both parts are blended linearly (the second dual quaternion negated
//!   when the real parts' dot product is negative) and divided by the real part's length;
//!   again first between the frames, then between the clips, normalizing after each step.
//!   The matrix is the rotation of the real part `r` with translation
//!   `2 · vec(d · conj(r))`.
//!
//! The resulting palette skins with either [`anim_core::skin::SkinMethod`]. For
//! [`anim_core::skin::SkinMethod::Lbs`] it holds the matrices `M` above. Dual quaternion skinning
//! needs a rigid atlas ([`AnimAtlas::is_rigid`]: every skinning matrix of every frame is
//! orthonormal within [`RIGID_TOLERANCE`](anim_core::skin::palette::RIGID_TOLERANCE)), and its palette is a *rigid*
//! [`anim_core::skin::DqPalette`] (every bind-space scale the identity, as the shaders, which carry
//! no scale for DQ, assume):
//! - `SkinDualQuat`: the interpolated dual quaternion `(r, d)` itself, not renormalized
//!   further.
//! - `ModelTrs` and `SkinMatrix`: the rigid part of `M` as [`anim_math::dual::from_rigid_matrix`]
//!   reads it: the rotation of `M`'s column-normalized 3×3 basis, and `M`'s translation.
//!   Interpolation between rigid frames shrinks `M` slightly (a lerped rotation is a little
//!   shorter than a rotation); that shrink is dropped, not kept as a scale.
//!
//! [`AnimAtlas::palette`] is this computation on the CPU, and [`bake_error`] measures how
//! far it is from the source clips.
//!
//! # File format
//! [`AnimAtlas::write_to`] and [`AnimAtlas::read_from`] write and read one little-endian
//! binary layout, described field by field in [`file`](mod@file).

mod bake;
mod error;
pub mod file;
mod limits;
mod read;
mod types;

pub use bake::{BakeErrorReport, ClipBakeError, bake_error, bake_error_with_progress};
pub use error::{AtlasError, UnknownTexelFormat, UnknownTextureLayout};
pub use file::{FILE_MAGIC, MAX_FILE_JOINTS};
pub use limits::{FILE_VERSION, MAX_HEIGHT, MAX_NAME_BYTES, MAX_WIDTH};
pub use types::{AnimAtlas, AtlasClip, AtlasSource, BakeSettings, FramePair, TexelFormat, Texels, TextureLayout};
