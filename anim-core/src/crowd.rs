//! Crowds: many characters of one skin playing clips of one [`AnimAtlas`], stored as
//! structure-of-arrays so that [`Crowd::update`] is one pass over flat arrays, and packed
//! each update into [`CrowdInstance`] records that a GPU reads as they are.
//!
//! # Playback
//! Each character plays clip **A** and optionally a second clip **B** blended over it with
//! a weight (the book's in-shader blend). Both slots advance by `dt · speed` each update
//! and follow their clip's rule exactly as [`AtlasClip::advance`] and
//! [`AtlasClip::frame_pair`] do: looping clips wrap into `[0, duration)`, the others clamp
//! to `[0, duration]`.
//!
//! - [`Crowd::set_clip`] crossfades: the playing clip moves to slot B at weight 1, which
//!   falls linearly to 0 over the fade while the new clip plays in A from time 0. When
//!   the weight reaches 0, B is cleared. A fade of 0 switches at once.
//! - [`Crowd::set_blend`] sets a steady blend: B keeps its weight until changed.
//!
//! # Records
//! [`Crowd::instances`] holds one [`CrowdInstance`] per character, in character order,
//! always as long as the crowd. Every method that changes a character repacks its record
//! (without advancing time), and [`Crowd::update`] repacks them all.
//!
//! [`AnimAtlas`]: crate::anim_texture::AnimAtlas

use crate::anim_texture::AtlasClip;
use anim_math::{Quat, Vec3};
use thiserror::Error;

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

/// Why a [`Crowd`] refused a change.
#[derive(Clone, Debug, Error, PartialEq)]
pub enum CrowdError {
    /// The character index is not below the crowd's length.
    #[error("character {character} does not exist (the crowd has {len})")]
    NoCharacter {
        /// The index asked for.
        character: usize,
        /// Number of characters.
        len: usize,
    },
    /// The clip index is not below the clip table's length.
    #[error("character {character}: clip {clip} does not exist (the clip table has {clips})")]
    NoClip {
        /// The character (for [`Crowd::add`], the index it would have had).
        character: usize,
        /// The clip index asked for.
        clip: u32,
        /// Number of clips.
        clips: usize,
    },
    /// A value is NaN or infinite.
    #[error("character {character}: {what} is not finite")]
    NonFinite {
        /// The character (for [`Crowd::add`], the index it would have had).
        character: usize,
        /// Which value.
        what: &'static str,
    },
    /// A fade duration is negative (or not finite).
    #[error("character {character}: fade of {seconds} s is negative or not finite")]
    BadFade {
        /// The character.
        character: usize,
        /// The duration given.
        seconds: f32,
    },
    /// A blend weight is outside `[0, 1]` (or not finite).
    #[error("character {character}: blend weight {weight} is outside [0, 1]")]
    BadWeight {
        /// The character.
        character: usize,
        /// The weight given.
        weight: f32,
    },
}

/// A fading clip B is cleared once its weight is at most this (it is then invisible; the
/// slack absorbs the rounding of `weight + rate · dt` summed over the fade).
const FADE_DONE: f32 = 1e-5;

/// Below this many characters [`Crowd::update_parallel`] runs [`Crowd::update`].
const PARALLEL_MIN: usize = 4096;

/// Fewest characters a thread of [`Crowd::update_parallel`] is given.
const PER_THREAD_MIN: usize = 1024;

/// One clip's playback constants, in the form the update loop reads.
#[derive(Clone, Copy, Debug, Default)]
struct ClipParams {
    /// A time `t` in `[lo, hi)` advances to `t` clamped to `[0, duration]` (the common
    /// case of both rules); any other goes through [`AtlasClip::advance`] itself.
    /// Looping: `[0, duration)`. Clamped: every finite time (all but `+∞`). A clip
    /// without a finite, non-negative clamped duration: none.
    lo: f32,
    hi: f32,
    duration: f32,
    rate: f32,
    first: u32,
    last: u32,
}

impl ClipParams {
    fn new(c: &AtlasClip) -> Self {
        let (lo, hi) = if c.looping {
            (0.0, c.duration)
        } else if c.duration.is_finite() && c.duration >= 0.0 {
            (f32::NEG_INFINITY, f32::INFINITY)
        } else {
            (f32::INFINITY, f32::NEG_INFINITY)
        };
        Self { lo, hi, duration: c.duration, rate: c.rate, first: c.first_frame, last: c.frame_count.saturating_sub(1) }
    }

    /// [`AtlasClip::advance`] of `clips[clip]` (whose constants `self` are), exactly:
    /// inside `[lo, hi)` both rules come down to a clamp (looping times there are already
    /// in range; clamped finite times are clamped and stay finite); the rest, looping
    /// times crossing an end or non-finite ones, go to `advance` itself.
    #[inline(always)]
    fn advance(&self, clips: &[AtlasClip], clip: u32, time: f32, dt: f32) -> f32 {
        let t = time + dt;
        if !((t >= self.lo) & (t < self.hi)) {
            return Self::advance_slow(clips, clip, time, dt);
        }
        // `t.clamp(0, duration)` as `max` and `min` (no NaN here), which compile to
        // branch-free instructions; only a zero's sign may differ, which no column or
        // factor depends on.
        t.max(0.0).min(self.duration)
    }

    #[cold]
    #[inline(never)]
    fn advance_slow(clips: &[AtlasClip], clip: u32, time: f32, dt: f32) -> f32 {
        clips[clip as usize].advance(time, dt)
    }

    /// [`AtlasClip::frame_pair`] of a time `advance` returned, same results without
    /// branches: columns `frame0`, `frame1` and the factor.
    #[inline(always)]
    fn frames(&self, time: f32) -> (u32, u32, f32) {
        // `frame_pair` advances by 0 first; on an advanced time that only turns -0 into +0.
        let t = time + 0.0;
        let pos = (t * self.rate).max(0.0);
        // `pos ≥ 0`, so truncation is `floor` (and saturates alike); below `last` the
        // column is exact as a float, so `pos − k` is `pos − floor(pos)`.
        let k = pos as u32;
        let at_end = k >= self.last;
        let frame0 = self.first + k.min(self.last);
        let frame1 = self.first + k.saturating_add(1).min(self.last);
        let f = (pos - k as f32).clamp(0.0, 1.0);
        // Characters at a clamped end mix with playing ones: a select, not a branch.
        (frame0, frame1, std::hint::select_unpredictable(at_end, 0.0, f))
    }
}

/// Characters in structure-of-arrays form (see the [module docs](self)).
///
/// ```
/// use anim_core::{AtlasClip, CharacterDesc, Crowd};
/// use anim_math::{Quat, Vec3};
///
/// // One looping clip of 31 columns: one second at 30 frames a second.
/// let walk = AtlasClip {
///     name: "walk".into(),
///     first_frame: 0,
///     frame_count: 31,
///     rate: 30.0,
///     duration: 1.0,
///     looping: true,
///     bounds: (Vec3::zeros(), Vec3::zeros()),
/// };
/// let mut crowd = Crowd::new(&[walk]);
/// for i in 0..100 {
///     crowd
///         .add(CharacterDesc {
///             position: Vec3::new(i as f32, 0.0, 0.0),
///             rotation: Quat::identity(),
///             scale: 1.0,
///             clip: 0,
///             time: i as f32 * 0.01,
///             speed: 1.0,
///         })
///         .unwrap();
/// }
/// crowd.update(0.25);
/// let first = crowd.instances()[0];
/// // 0.25 s into the clip is frame 7.5: columns 7 and 8, halfway.
/// assert_eq!(first.frames, [7, 8, 7, 8]);
/// assert!((first.factors[0] - 0.5).abs() < 1e-4);
/// assert_eq!(first.factors[2], 0.0); // no second clip
/// // Ready for upload: 64 bytes a character.
/// let bytes: &[u8] = bytemuck::cast_slice(crowd.instances());
/// assert_eq!(bytes.len(), 64 * 100);
/// ```
#[derive(Clone, Debug, Default)]
pub struct Crowd {
    clips: Vec<AtlasClip>,
    params: Vec<ClipParams>,
    position: Vec<Vec3>,
    rotation: Vec<Quat>,
    scale: Vec<f32>,
    clip_a: Vec<u32>,
    time_a: Vec<f32>,
    speed_a: Vec<f32>,
    clip_b: Vec<u32>,
    time_b: Vec<f32>,
    speed_b: Vec<f32>,
    weight_b: Vec<f32>,
    weight_rate: Vec<f32>,
    /// Whether slot B is in use (when not, the record repeats A in B's place).
    blending: Vec<bool>,
    instances: Vec<CrowdInstance>,
}

/// Mutable views of a run of characters: what one update pass reads and writes.
struct Lanes<'a> {
    position: &'a [Vec3],
    rotation: &'a [Quat],
    scale: &'a [f32],
    clip_a: &'a [u32],
    time_a: &'a mut [f32],
    speed_a: &'a [f32],
    clip_b: &'a mut [u32],
    time_b: &'a mut [f32],
    speed_b: &'a mut [f32],
    weight_b: &'a mut [f32],
    weight_rate: &'a mut [f32],
    blending: &'a mut [bool],
    out: &'a mut [CrowdInstance],
}

impl<'a> Lanes<'a> {
    fn len(&self) -> usize {
        self.out.len()
    }

    /// Characters `..mid` and `mid..`.
    fn split_at(self, mid: usize) -> (Self, Self) {
        let (position, position2) = self.position.split_at(mid);
        let (rotation, rotation2) = self.rotation.split_at(mid);
        let (scale, scale2) = self.scale.split_at(mid);
        let (clip_a, clip_a2) = self.clip_a.split_at(mid);
        let (time_a, time_a2) = self.time_a.split_at_mut(mid);
        let (speed_a, speed_a2) = self.speed_a.split_at(mid);
        let (clip_b, clip_b2) = self.clip_b.split_at_mut(mid);
        let (time_b, time_b2) = self.time_b.split_at_mut(mid);
        let (speed_b, speed_b2) = self.speed_b.split_at_mut(mid);
        let (weight_b, weight_b2) = self.weight_b.split_at_mut(mid);
        let (weight_rate, weight_rate2) = self.weight_rate.split_at_mut(mid);
        let (blending, blending2) = self.blending.split_at_mut(mid);
        let (out, out2) = self.out.split_at_mut(mid);
        (
            Lanes {
                position,
                rotation,
                scale,
                clip_a,
                time_a,
                speed_a,
                clip_b,
                time_b,
                speed_b,
                weight_b,
                weight_rate,
                blending,
                out,
            },
            Lanes {
                position: position2,
                rotation: rotation2,
                scale: scale2,
                clip_a: clip_a2,
                time_a: time_a2,
                speed_a: speed_a2,
                clip_b: clip_b2,
                time_b: time_b2,
                speed_b: speed_b2,
                weight_b: weight_b2,
                weight_rate: weight_rate2,
                blending: blending2,
                out: out2,
            },
        )
    }

    /// Advances every character by `dt` and packs its record. `dt` is finite.
    fn run(self, clips: &[AtlasClip], params: &[ClipParams], dt: f32) {
        let n = self.out.len();
        // Re-slicing every array to `n` lets the compiler drop the per-field bounds checks.
        let position = &self.position[..n];
        let rotation = &self.rotation[..n];
        let scale = &self.scale[..n];
        let clip_a = &self.clip_a[..n];
        let time_a = &mut self.time_a[..n];
        let speed_a = &self.speed_a[..n];
        let clip_b = &mut self.clip_b[..n];
        let time_b = &mut self.time_b[..n];
        let speed_b = &mut self.speed_b[..n];
        let weight_b = &mut self.weight_b[..n];
        let weight_rate = &mut self.weight_rate[..n];
        let blending = &mut self.blending[..n];
        let out = &mut self.out[..n];
        for i in 0..n {
            let ca = clip_a[i];
            let pa = &params[ca as usize];
            let ta = pa.advance(clips, ca, time_a[i], dt * speed_a[i]);
            time_a[i] = ta;
            let (a0, a1, fa) = pa.frames(ta);
            let (mut b0, mut b1, mut fb, mut w) = (a0, a1, fa, 0.0);
            if blending[i] {
                // Steady blends have rate 0: `w + 0` is `w`, already in [0, 1].
                let rate = weight_rate[i];
                w = (weight_b[i] + rate * dt).clamp(0.0, 1.0);
                if (rate != 0.0) & (w <= FADE_DONE) {
                    // The fade is over: B goes back to mirroring A.
                    clip_b[i] = ca;
                    time_b[i] = ta;
                    speed_b[i] = speed_a[i];
                    weight_b[i] = 0.0;
                    weight_rate[i] = 0.0;
                    blending[i] = false;
                    w = 0.0;
                } else {
                    weight_b[i] = w;
                    let cb = clip_b[i];
                    let pb = &params[cb as usize];
                    let tb = pb.advance(clips, cb, time_b[i], dt * speed_b[i]);
                    time_b[i] = tb;
                    (b0, b1, fb) = pb.frames(tb);
                }
            }
            let p = position[i];
            let q = rotation[i].coords;
            out[i] = CrowdInstance {
                position_scale: [p.x, p.y, p.z, scale[i]],
                rotation: [q.x, q.y, q.z, q.w],
                frames: [a0, a1, b0, b1],
                factors: [fa, fb, w, ca as f32],
            };
        }
    }
}

impl Crowd {
    /// An empty crowd playing clips of this table (usually [`AnimAtlas::clips`]).
    ///
    /// [`AnimAtlas::clips`]: crate::anim_texture::AnimAtlas::clips
    pub fn new(clips: &[AtlasClip]) -> Self {
        Self::with_capacity(clips, 0)
    }

    /// An empty crowd with room for `capacity` characters before it reallocates.
    pub fn with_capacity(clips: &[AtlasClip], capacity: usize) -> Self {
        Self {
            clips: clips.to_vec(),
            params: clips.iter().map(ClipParams::new).collect(),
            position: Vec::with_capacity(capacity),
            rotation: Vec::with_capacity(capacity),
            scale: Vec::with_capacity(capacity),
            clip_a: Vec::with_capacity(capacity),
            time_a: Vec::with_capacity(capacity),
            speed_a: Vec::with_capacity(capacity),
            clip_b: Vec::with_capacity(capacity),
            time_b: Vec::with_capacity(capacity),
            speed_b: Vec::with_capacity(capacity),
            weight_b: Vec::with_capacity(capacity),
            weight_rate: Vec::with_capacity(capacity),
            blending: Vec::with_capacity(capacity),
            instances: Vec::with_capacity(capacity),
        }
    }

    /// Number of characters.
    pub fn len(&self) -> usize {
        self.instances.len()
    }

    /// Whether the crowd has no characters.
    pub fn is_empty(&self) -> bool {
        self.instances.is_empty()
    }

    /// The clip table.
    pub fn clips(&self) -> &[AtlasClip] {
        &self.clips
    }

    /// Packed GPU records, one per character in character order, as of the last
    /// [`Crowd::update`] or change.
    pub fn instances(&self) -> &[CrowdInstance] {
        &self.instances
    }

    /// Adds a character and returns its index (the previous length). Its time is wrapped
    /// or clamped by its clip's rule and its record packed at once.
    ///
    /// # Errors
    /// An unknown clip, or a non-finite position, rotation, scale, time or speed.
    pub fn add(&mut self, desc: CharacterDesc) -> Result<usize, CrowdError> {
        let character = self.len();
        self.check_clip(character, desc.clip)?;
        let finite = |ok: bool, what| if ok { Ok(()) } else { Err(CrowdError::NonFinite { character, what }) };
        finite(desc.position.iter().all(|v| v.is_finite()), "position")?;
        finite(desc.rotation.coords.iter().all(|v| v.is_finite()), "rotation")?;
        finite(desc.scale.is_finite(), "scale")?;
        finite(desc.time.is_finite(), "time")?;
        finite(desc.speed.is_finite(), "speed")?;
        self.position.push(desc.position);
        self.rotation.push(desc.rotation);
        self.scale.push(desc.scale);
        self.clip_a.push(desc.clip);
        let time = self.clips[desc.clip as usize].advance(desc.time, 0.0);
        self.time_a.push(time);
        self.speed_a.push(desc.speed);
        self.clip_b.push(desc.clip);
        self.time_b.push(time);
        self.speed_b.push(desc.speed);
        self.weight_b.push(0.0);
        self.weight_rate.push(0.0);
        self.blending.push(false);
        self.instances.push(CrowdInstance::default());
        self.repack(character);
        Ok(character)
    }

    /// Removes character `index` by moving the last character into its place. Returns the
    /// old index of the character that moved (now `index`), or `None` when `index` was
    /// the last one.
    ///
    /// # Errors
    /// `index` out of range.
    pub fn remove(&mut self, index: usize) -> Result<Option<usize>, CrowdError> {
        self.check_character(index)?;
        let last = self.len() - 1;
        self.position.swap_remove(index);
        self.rotation.swap_remove(index);
        self.scale.swap_remove(index);
        self.clip_a.swap_remove(index);
        self.time_a.swap_remove(index);
        self.speed_a.swap_remove(index);
        self.clip_b.swap_remove(index);
        self.time_b.swap_remove(index);
        self.speed_b.swap_remove(index);
        self.weight_b.swap_remove(index);
        self.weight_rate.swap_remove(index);
        self.blending.swap_remove(index);
        self.instances.swap_remove(index);
        Ok((index != last).then_some(last))
    }

    /// Moves, turns and scales character `index`.
    ///
    /// # Errors
    /// `index` out of range, or a non-finite value.
    pub fn set_transform(
        &mut self,
        index: usize,
        position: Vec3,
        rotation: Quat,
        scale: f32,
    ) -> Result<(), CrowdError> {
        self.check_character(index)?;
        let finite = |ok: bool, what| if ok { Ok(()) } else { Err(CrowdError::NonFinite { character: index, what }) };
        finite(position.iter().all(|v| v.is_finite()), "position")?;
        finite(rotation.coords.iter().all(|v| v.is_finite()), "rotation")?;
        finite(scale.is_finite(), "scale")?;
        self.position[index] = position;
        self.rotation[index] = rotation;
        self.scale[index] = scale;
        self.repack(index);
        Ok(())
    }

    /// Sets the playback speed of character `index`, for both clip slots (1 = normal,
    /// negative plays backwards).
    ///
    /// # Errors
    /// `index` out of range, or a non-finite speed.
    pub fn set_speed(&mut self, index: usize, speed: f32) -> Result<(), CrowdError> {
        self.check_character(index)?;
        if !speed.is_finite() {
            return Err(CrowdError::NonFinite { character: index, what: "speed" });
        }
        self.speed_a[index] = speed;
        self.speed_b[index] = speed;
        Ok(())
    }

    /// Sets the playback time of character `index`'s clip A (wrapped or clamped by its
    /// clip's rule).
    ///
    /// # Errors
    /// `index` out of range, or a non-finite time.
    pub fn set_time(&mut self, index: usize, time: f32) -> Result<(), CrowdError> {
        self.check_character(index)?;
        if !time.is_finite() {
            return Err(CrowdError::NonFinite { character: index, what: "time" });
        }
        self.time_a[index] = self.clips[self.clip_a[index] as usize].advance(time, 0.0);
        if !self.blending[index] {
            self.time_b[index] = self.time_a[index];
        }
        self.repack(index);
        Ok(())
    }

    /// Crossfades character `index` to `clip`, which starts at time 0 in slot A: the clip
    /// that was playing in A moves to slot B (with its time and speed) at weight 1, which
    /// falls linearly to 0 over `fade_seconds`; then B is cleared. A clip B that was
    /// already there (an earlier fade or a [`Self::set_blend`]) is dropped. A fade of 0
    /// switches at once and clears B.
    ///
    /// Returns `false` and changes nothing when `clip` already plays in A (so calling this
    /// every frame with the same clip does not restart it).
    ///
    /// # Errors
    /// `index` or `clip` out of range, or a negative or non-finite fade.
    pub fn set_clip(&mut self, index: usize, clip: u32, fade_seconds: f32) -> Result<bool, CrowdError> {
        self.check_character(index)?;
        self.check_clip(index, clip)?;
        if !fade_seconds.is_finite() || fade_seconds < 0.0 {
            return Err(CrowdError::BadFade { character: index, seconds: fade_seconds });
        }
        if self.clip_a[index] == clip {
            return Ok(false);
        }
        let rate = -1.0 / fade_seconds;
        let fade = fade_seconds > 0.0 && rate.is_finite();
        if fade {
            self.clip_b[index] = self.clip_a[index];
            self.time_b[index] = self.time_a[index];
            self.speed_b[index] = self.speed_a[index];
            self.weight_b[index] = 1.0;
            self.weight_rate[index] = rate;
            self.blending[index] = true;
        }
        self.clip_a[index] = clip;
        self.time_a[index] = self.clips[clip as usize].advance(0.0, 0.0);
        if !fade {
            self.clear_b(index);
        }
        self.repack(index);
        Ok(true)
    }

    /// Blends `clip_b` at `time_b` over character `index`'s clip A with a steady
    /// `weight` (the book's in-shader blend; 0 shows A only, 1 B only). B plays at the
    /// character's speed and keeps its weight until changed. Replaces any fade.
    ///
    /// # Errors
    /// `index` or `clip_b` out of range, a non-finite time, or a weight outside `[0, 1]`.
    pub fn set_blend(&mut self, index: usize, clip_b: u32, time_b: f32, weight: f32) -> Result<(), CrowdError> {
        self.check_character(index)?;
        self.check_clip(index, clip_b)?;
        if !time_b.is_finite() {
            return Err(CrowdError::NonFinite { character: index, what: "blend time" });
        }
        if !(0.0..=1.0).contains(&weight) {
            return Err(CrowdError::BadWeight { character: index, weight });
        }
        self.clip_b[index] = clip_b;
        self.time_b[index] = self.clips[clip_b as usize].advance(time_b, 0.0);
        self.speed_b[index] = self.speed_a[index];
        self.weight_b[index] = weight;
        self.weight_rate[index] = 0.0;
        self.blending[index] = true;
        self.repack(index);
        Ok(())
    }

    /// Removes character `index`'s clip B (a blend or a fade in progress).
    ///
    /// # Errors
    /// `index` out of range.
    pub fn clear_blend(&mut self, index: usize) -> Result<(), CrowdError> {
        self.check_character(index)?;
        self.clear_b(index);
        self.repack(index);
        Ok(())
    }

    /// Clip A's playback time of character `index`.
    pub fn time(&self, index: usize) -> Option<f32> {
        self.time_a.get(index).copied()
    }

    /// Clip A of character `index`.
    pub fn clip(&self, index: usize) -> Option<u32> {
        self.clip_a.get(index).copied()
    }

    /// Playback speed of character `index`'s clip A.
    pub fn speed(&self, index: usize) -> Option<f32> {
        self.speed_a.get(index).copied()
    }

    /// Position, rotation and scale of character `index`.
    pub fn transform(&self, index: usize) -> Option<(Vec3, Quat, f32)> {
        Some((*self.position.get(index)?, self.rotation[index], self.scale[index]))
    }

    /// Clip B of character `index`, its time and its weight; `None` without one (or
    /// for an index out of range).
    pub fn blend(&self, index: usize) -> Option<(u32, f32, f32)> {
        let blending = *self.blending.get(index)?;
        blending.then(|| (self.clip_b[index], self.time_b[index], self.weight_b[index]))
    }

    /// Whether character `index` is fading out a previous clip (see [`Self::set_clip`]).
    pub fn is_fading(&self, index: usize) -> bool {
        self.blending.get(index).is_some_and(|&b| b) && self.weight_rate[index] != 0.0
    }

    /// Advances every character by `dt` seconds (times `dt · speed`, fades `dt`) and packs
    /// every [`CrowdInstance`]. One pass over the arrays; allocates nothing. A non-finite
    /// `dt` counts as 0.
    pub fn update(&mut self, dt: f32) {
        let dt = if dt.is_finite() { dt } else { 0.0 };
        let (lanes, clips, params) = self.lanes();
        lanes.run(clips, params, dt);
    }

    /// [`Self::update`] on `threads` threads (the calling thread included), each
    /// advancing an equal run of characters; the results are identical to `update`'s.
    /// Runs `update` on the calling thread when `threads ≤ 1` or the crowd has fewer
    /// than a few thousand characters, and gives each thread at least a thousand.
    ///
    /// It spawns `threads − 1` scoped threads ([`std::thread::scope`]) every call, and the
    /// standard library allocates a little for each spawn (a thread handle and its
    /// result slot), so unlike `update` this is not allocation-free; the spawns cost some
    /// tens of microseconds, worth it from some ten thousand characters on.
    pub fn update_parallel(&mut self, dt: f32, threads: usize) {
        let n = self.len();
        let threads = threads.min(n / PER_THREAD_MIN);
        if threads <= 1 || n < PARALLEL_MIN {
            self.update(dt);
            return;
        }
        let dt = if dt.is_finite() { dt } else { 0.0 };
        let chunk = n.div_ceil(threads);
        let (mut rest, clips, params) = self.lanes();
        std::thread::scope(|s| {
            while rest.len() > chunk {
                let (head, tail) = rest.split_at(chunk);
                rest = tail;
                s.spawn(move || head.run(clips, params, dt));
            }
            rest.run(clips, params, dt);
        });
    }

    fn lanes(&mut self) -> (Lanes<'_>, &[AtlasClip], &[ClipParams]) {
        (
            Lanes {
                position: &self.position,
                rotation: &self.rotation,
                scale: &self.scale,
                clip_a: &self.clip_a,
                time_a: &mut self.time_a,
                speed_a: &self.speed_a,
                clip_b: &mut self.clip_b,
                time_b: &mut self.time_b,
                speed_b: &mut self.speed_b,
                weight_b: &mut self.weight_b,
                weight_rate: &mut self.weight_rate,
                blending: &mut self.blending,
                out: &mut self.instances,
            },
            &self.clips,
            &self.params,
        )
    }

    /// Packs character `index`'s record without advancing time.
    fn repack(&mut self, index: usize) {
        let (lanes, clips, params) = self.lanes();
        let (_, tail) = lanes.split_at(index);
        let (one, _) = tail.split_at(1);
        one.run(clips, params, 0.0);
    }

    /// Frees slot B: it mirrors slot A again.
    fn clear_b(&mut self, index: usize) {
        self.clip_b[index] = self.clip_a[index];
        self.time_b[index] = self.time_a[index];
        self.speed_b[index] = self.speed_a[index];
        self.weight_b[index] = 0.0;
        self.weight_rate[index] = 0.0;
        self.blending[index] = false;
    }

    fn check_character(&self, character: usize) -> Result<(), CrowdError> {
        if character < self.len() { Ok(()) } else { Err(CrowdError::NoCharacter { character, len: self.len() }) }
    }

    fn check_clip(&self, character: usize, clip: u32) -> Result<(), CrowdError> {
        if (clip as usize) < self.params.len() {
            Ok(())
        } else {
            Err(CrowdError::NoClip { character, clip, clips: self.params.len() })
        }
    }
}
