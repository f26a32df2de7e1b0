//! Crowds: many characters of one skin playing clips of one [`AnimAtlas`], stored as
//! structure-of-arrays so that [`Crowd::update`] is one pass over flat arrays, and packed
//! each update into [`CrowdInstance`] records that a GPU reads as they are.
//!
//! [`AnimAtlas`]: crate::anim_texture::AnimAtlas

use crate::anim_texture::AtlasClip;
use anim_math::{Quat, Vec3};

/// One character as the GPU reads it: 64 bytes, `std430`-compatible.
///
/// GLSL:
/// ```glsl
/// struct CrowdInstance {
///     vec4 position_scale; // xyz position, w uniform scale
///     vec4 rotation;       // unit quaternion (i, j, k, w)
///     uvec4 frames;        // clip A frame0, frame1; clip B frame0, frame1 (atlas columns)
///     vec4 factors;        // t of A, t of B, weight of B (0 = A only), clip A index
/// };
/// ```
/// `factors.w` holds clip A's index (as a float, exact below 2²⁴) so culling can read
/// that clip's bounds.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct CrowdInstance {
    /// Position `xyz` and uniform scale `w`.
    pub position_scale: [f32; 4],
    /// Rotation quaternion `(i, j, k, w)`.
    pub rotation: [f32; 4],
    /// Atlas columns: clip A `frame0`, `frame1`, clip B `frame0`, `frame1`.
    pub frames: [u32; 4],
    /// Clip A factor, clip B factor, clip B weight, clip A index.
    pub factors: [f32; 4],
}

/// A character to add to a [`Crowd`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CharacterDesc {
    /// World position.
    pub position: Vec3,
    /// World rotation.
    pub rotation: Quat,
    /// Uniform scale.
    pub scale: f32,
    /// Clip index in the atlas's clip table.
    pub clip: u32,
    /// Playback time in seconds.
    pub time: f32,
    /// Playback speed (1 = normal; negative plays backwards).
    pub speed: f32,
}

/// Characters in structure-of-arrays form (see the [module docs](self)).
#[derive(Clone, Debug, Default)]
pub struct Crowd {
    clips: Vec<AtlasClip>,
    // Per character, one array per field (filled in by the implementation).
    instances: Vec<CrowdInstance>,
}

impl Crowd {
    /// An empty crowd playing clips of this table (usually [`AnimAtlas::clips`]).
    ///
    /// [`AnimAtlas::clips`]: crate::anim_texture::AnimAtlas::clips
    pub fn new(clips: &[AtlasClip]) -> Self {
        Self { clips: clips.to_vec(), instances: Vec::new() }
    }

    /// Packed GPU records, one per character, as of the last [`Crowd::update`].
    pub fn instances(&self) -> &[CrowdInstance] {
        &self.instances
    }
}
