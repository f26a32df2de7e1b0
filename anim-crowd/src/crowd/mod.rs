//! Crowds: many characters of one skin playing clips of one [`AnimAtlas`], stored as
//! structure-of-arrays so that [`Crowd::update`] is one pass over flat arrays, and packed
//! each update into [`CrowdInstance`] records that a GPU reads as they are.
//!
//! # Playback
//! Each character plays clip **A** and optionally a second clip **B** blended over it with
//! a weight (the book's in-shader blend). Each slot's playback state is a [`Playback`]'s
//! (cycle index and local time, speed, repetitions, loop mode, clamp and finished flags)
//! and advanced by the same arithmetic as [`Playback::advance`] (one shared
//! function): time scale (negative included), ping-pong, loop counts and
//! clamp-when-finished all reach the crowd, and a character's columns and factor are
//! exactly [`AtlasClip::frame_pair`] of [`Playback::time`]. The playback's duration is
//! its clip's. [`Crowd::set_playback`] and [`Crowd::playback`] write and read clip A's
//! state as a `Playback`; without one, a character plays by its clip's rule: a looping
//! clip repeats forever, any other plays once and holds its last frame
//! ([`default_playback`]).
//!
//! - [`Crowd::set_clip`] crossfades: the playing clip moves to slot B at weight 1, which
//!   falls linearly to 0 over the fade while the new clip plays in A from time 0. When
//!   the weight reaches 0, B is cleared. A fade of 0 switches at once.
//! - [`Crowd::set_blend`] sets a steady blend: B keeps its weight until changed.
//!
//! # Records
//! [`Crowd::instances`] holds one [`CrowdInstance`] per character, in character order,
//! always as long as the crowd. The records are persistent and are the only copy of the
//! transforms: [`Crowd::add`] and [`Crowd::set_transform`] write `position_scale` and
//! `rotation` (and [`Crowd::remove`] moves the last record into the gap), while
//! [`Crowd::update`] writes only `frames` and `factors`. Every method that changes a
//! character's playback rewrites its frames and factors at once (without advancing time).
//!
//! # Update
//! Clip A of every character is advanced in one lean branch-free loop over dense arrays
//! (its clip's constants are copied per character, so nothing is gathered), in blocks of
//! 64 records, as a plain endless `Repeat` playback: the step of [`Playback::advance`]
//! with no count and no flags (a local-time wrap and a cycle increment). Characters whose
//! clip A playback is anything else (ping-pong, counted, not clamped, finished) are kept
//! in a separate list, in character order, with their state; after each block's loop
//! they are advanced by the full shared arithmetic and their records rewritten (a finished
//! one, whose state no longer changes, rewrites its held columns only). Characters of hand-built clips the fast column rule does not cover (huge or
//! degenerate clips) take [`AtlasClip::frame_pair`] itself in a second look at the block. The characters with a
//! clip B are listed apart, in character order, and each block's are advanced after it.
//! On x86-64 CPUs with AVX2 the same loop runs compiled for AVX2, with identical results.
//!
//! [`AnimAtlas`]: crate::atlas::AnimAtlas

mod columns;
mod lanes;
#[cfg(test)]
mod tests;

use crate::atlas::AtlasClip;
use crate::pool::PoolSlot;
use anim_core::clip::playback::{FOREVER, LoopMode, Playback};
use anim_math::{Quat, Vec3};
use columns::*;
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
    /// Start position in seconds (unwrapped, as [`Playback::seek`] takes it: a clip
    /// played once clamps it into `[0, duration]`).
    pub time: f32,
    /// Playback speed (1 = normal; negative plays backwards).
    pub speed: f32,
}

impl CharacterDesc {
    /// Sets `time` and `speed` from a [`Playback`]: the time it shows and its speed. The
    /// character then plays by its clip's rule ([`default_playback`]); to keep the loop
    /// mode, repetitions and clamping too, use [`Crowd::add_with_playback`].
    #[must_use]
    pub fn with_playback(mut self, playback: &Playback) -> Self {
        self.time = playback.time();
        self.speed = playback.speed;
        self
    }
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
    /// The crowd already holds the most characters it can index (`u32::MAX − 1`: GPU
    /// records and visible lists index characters with 32 bits).
    #[error("the crowd is full: it holds {len} characters, the most a 32-bit index allows")]
    Full {
        /// Characters held.
        len: usize,
    },
}

/// The playback a character gets without an explicit one: a looping clip repeats
/// forever, any other plays once and holds its last frame. Its position is 0.
pub fn default_playback(clip: &AtlasClip) -> Playback {
    if clip.looping { Playback::new(clip.duration, LoopMode::Repeat) } else { Playback::once(clip.duration) }
}

/// Characters in structure-of-arrays form (see the [module docs](self)).
///
/// ```
/// use anim_crowd::{AtlasClip, CharacterDesc, Crowd};
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
    // Clip A, one entry per character.
    clip: Vec<u32>,
    // Clip A's playback (a `Playback` as columns, see `Play`).
    cycle: Vec<i32>,
    local: Vec<f32>,
    speed: Vec<f32>,
    /// Per character: index into `specials`, or [`NO_SPECIAL`].
    special_of: Vec<u32>,
    /// Clip A playback state of the characters whose playback is not plain.
    specials: Vec<Special>,
    /// Whether `specials` is in character order (restored by sorting before an update).
    specials_sorted: bool,
    // Clip A's constants copied per character (from `params`), so that the update loop
    // reads dense arrays only and no gathers.
    duration: Vec<f32>,
    span: Vec<f32>,
    rate: Vec<f32>,
    first: Vec<u32>,
    cap: Vec<f32>,
    /// Per character: index into `blends`, or [`NO_BLEND`].
    blend_of: Vec<u32>,
    /// Clip B of the (usually few) characters that have one.
    blends: Vec<Blend>,
    /// Whether `blends` is in character order (restored by sorting before an update).
    blends_sorted: bool,
    /// Persistent records: transforms written by edits, frames and factors by updates.
    instances: Vec<CrowdInstance>,
    /// Worker threads of [`Crowd::update_parallel`], started by its first threaded call.
    pool: PoolSlot,
    /// Split points of the last threaded update (kept to reuse the storage).
    splits: Vec<[usize; 3]>,
}
impl Crowd {
    /// An empty crowd playing clips of this table (usually [`AnimAtlas::clips`]).
    ///
    /// [`AnimAtlas::clips`]: crate::atlas::AnimAtlas::clips
    pub fn new(clips: &[AtlasClip]) -> Self {
        Self::with_capacity(clips, 0)
    }

    /// An empty crowd with room for `capacity` characters before it reallocates.
    pub fn with_capacity(clips: &[AtlasClip], capacity: usize) -> Self {
        Self {
            clips: clips.to_vec(),
            params: clips.iter().map(ClipParams::new).collect(),
            clip: Vec::with_capacity(capacity),
            cycle: Vec::with_capacity(capacity),
            local: Vec::with_capacity(capacity),
            speed: Vec::with_capacity(capacity),
            special_of: Vec::with_capacity(capacity),
            specials: Vec::new(),
            specials_sorted: true,
            duration: Vec::with_capacity(capacity),
            span: Vec::with_capacity(capacity),
            rate: Vec::with_capacity(capacity),
            first: Vec::with_capacity(capacity),
            cap: Vec::with_capacity(capacity),
            blend_of: Vec::with_capacity(capacity),
            blends: Vec::new(),
            blends_sorted: true,
            instances: Vec::with_capacity(capacity),
            pool: PoolSlot::default(),
            splits: Vec::new(),
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
    /// [`Crowd::update`] or change (see the [module docs](self#records)).
    pub fn instances(&self) -> &[CrowdInstance] {
        &self.instances
    }

    /// Adds a character and returns its index (the previous length). It plays by its
    /// clip's rule ([`default_playback`]) from `desc.time` (as [`Playback::seek`] puts
    /// it) at `desc.speed`; its record is packed at once.
    ///
    /// # Errors
    /// An unknown clip, a non-finite position, rotation, scale, time or speed, or a crowd
    /// that already holds `u32::MAX − 1` characters ([`CrowdError::Full`]).
    pub fn add(&mut self, desc: CharacterDesc) -> Result<usize, CrowdError> {
        self.add_inner(desc, None)
    }

    /// [`Self::add`] with clip A's whole playback state: `playback`'s position, speed,
    /// loop mode, repetitions, clamping and finished flag (its duration is the clip's).
    /// `desc.time` and `desc.speed` are not read.
    ///
    /// # Errors
    /// As [`Self::add`].
    pub fn add_with_playback(&mut self, desc: CharacterDesc, playback: &Playback) -> Result<usize, CrowdError> {
        self.add_inner(desc, Some(playback))
    }

    fn add_inner(&mut self, desc: CharacterDesc, playback: Option<&Playback>) -> Result<usize, CrowdError> {
        let character = self.len();
        if character >= u32::MAX as usize - 1 {
            return Err(CrowdError::Full { len: character });
        }
        self.check_clip(character, desc.clip)?;
        let finite = |ok: bool, what| if ok { Ok(()) } else { Err(CrowdError::NonFinite { character, what }) };
        finite(desc.position.iter().all(|v| v.is_finite()), "position")?;
        finite(desc.rotation.coords.iter().all(|v| v.is_finite()), "rotation")?;
        finite(desc.scale.is_finite(), "scale")?;
        let play = match playback {
            Some(pb) => {
                finite(pb.speed.is_finite(), "speed")?;
                Play::of(pb)
            }
            None => {
                finite(desc.time.is_finite(), "time")?;
                finite(desc.speed.is_finite(), "speed")?;
                let mut pb = default_playback(&self.clips[desc.clip as usize]).with_speed(desc.speed);
                pb.seek(f64::from(desc.time));
                Play::of(&pb)
            }
        };
        let p = self.params[desc.clip as usize];
        self.clip.push(desc.clip);
        self.cycle.push(play.cycle);
        self.local.push(play.local);
        self.speed.push(play.speed);
        self.special_of.push(NO_SPECIAL);
        self.duration.push(p.duration);
        self.span.push(p.span);
        self.rate.push(p.rate);
        self.first.push(p.first);
        self.cap.push(p.cap);
        self.blend_of.push(NO_BLEND);
        self.put_play(character, play);
        let (pos, q) = (desc.position, desc.rotation.coords);
        self.instances.push(CrowdInstance {
            position_scale: [pos.x, pos.y, pos.z, desc.scale],
            rotation: [q.x, q.y, q.z, q.w],
            ..CrowdInstance::default()
        });
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
        self.drop_blend(index);
        self.drop_special(index);
        self.clip.swap_remove(index);
        self.cycle.swap_remove(index);
        self.local.swap_remove(index);
        self.speed.swap_remove(index);
        self.special_of.swap_remove(index);
        self.duration.swap_remove(index);
        self.span.swap_remove(index);
        self.rate.swap_remove(index);
        self.first.swap_remove(index);
        self.cap.swap_remove(index);
        self.blend_of.swap_remove(index);
        self.instances.swap_remove(index);
        if index == last {
            return Ok(None);
        }
        if let Some(&slot) = self.blend_of.get(index).filter(|&&s| s != NO_BLEND) {
            self.blends[slot as usize].character = index as u32;
            self.blends_sorted = false;
        }
        if let Some(&slot) = self.special_of.get(index).filter(|&&s| s != NO_SPECIAL) {
            self.specials[slot as usize].character = index as u32;
            self.specials_sorted = false;
        }
        Ok(Some(last))
    }

    /// Moves, turns and scales character `index` (written into its record at once).
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
        let q = rotation.coords;
        let r = &mut self.instances[index];
        r.position_scale = [position.x, position.y, position.z, scale];
        r.rotation = [q.x, q.y, q.z, q.w];
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
        self.speed[index] = speed;
        if let Some(b) = self.blend_mut(index) {
            b.play.speed = speed;
        }
        Ok(())
    }

    /// Moves character `index`'s clip A to unwrapped position `time` as
    /// [`Playback::seek`] does (clamped into a finite playback's span; clears finished).
    ///
    /// # Errors
    /// `index` out of range, or a non-finite time.
    pub fn set_time(&mut self, index: usize, time: f32) -> Result<(), CrowdError> {
        self.check_character(index)?;
        if !time.is_finite() {
            return Err(CrowdError::NonFinite { character: index, what: "time" });
        }
        let mut p = self.play_of(index).playback(self.duration[index]);
        p.seek(f64::from(time));
        self.put_play(index, Play::of(&p));
        self.repack(index);
        Ok(())
    }

    /// Sets character `index`'s clip A playback state: `playback`'s position, speed, loop
    /// mode, repetitions, clamping and finished flag (its duration is the clip's). The
    /// record is repacked at once, without advancing.
    ///
    /// # Errors
    /// `index` out of range, or a non-finite speed.
    pub fn set_playback(&mut self, index: usize, playback: &Playback) -> Result<(), CrowdError> {
        self.check_character(index)?;
        if !playback.speed.is_finite() {
            return Err(CrowdError::NonFinite { character: index, what: "speed" });
        }
        self.put_play(index, Play::of(playback));
        self.repack(index);
        Ok(())
    }

    /// Character `index`'s clip A playback state as a [`Playback`] (duration: the clip's;
    /// last step: the empty step at its position).
    pub fn playback(&self, index: usize) -> Option<Playback> {
        (index < self.len()).then(|| self.play_of(index).playback(self.duration[index]))
    }

    /// Whether character `index`'s clip A finished a finite playback (see
    /// [`Playback::is_finished`]); `false` for an index out of range.
    pub fn is_finished(&self, index: usize) -> bool {
        self.special_ref(index).is_some_and(|s| s.flags & FINISHED != 0)
    }

    /// Clip B's playback state of character `index` (duration: clip B's), if it has one.
    pub fn blend_playback(&self, index: usize) -> Option<Playback> {
        let b = self.blend_ref(index)?;
        Some(b.play.playback(self.params[b.clip as usize].duration))
    }

    fn play_of(&self, index: usize) -> Play {
        let speed = self.speed[index];
        match self.special_ref(index) {
            Some(s) => Play { cycle: s.cycle, local: s.local, speed, cycles: s.cycles, flags: s.flags },
            None => {
                Play { cycle: self.cycle[index], local: self.local[index], speed, cycles: FOREVER, flags: PLAIN_FLAGS }
            }
        }
    }

    /// Sets character `index`'s clip A playback: in the columns when plain, else in the
    /// special list (joined or left as needed).
    fn put_play(&mut self, index: usize, play: Play) {
        self.cycle[index] = play.cycle;
        self.local[index] = play.local;
        self.speed[index] = play.speed;
        if play.is_plain() {
            self.drop_special(index);
            return;
        }
        let s = Special {
            character: index as u32,
            cycle: play.cycle,
            local: play.local,
            cycles: play.cycles,
            flags: play.flags,
            held: None,
        };
        let slot = self.special_of[index];
        if slot != NO_SPECIAL {
            self.specials[slot as usize] = s;
            return;
        }
        if self.specials.last().is_some_and(|l| l.character > s.character) {
            self.specials_sorted = false;
        }
        self.special_of[index] = self.specials.len() as u32;
        self.specials.push(s);
    }

    fn special_ref(&self, index: usize) -> Option<&Special> {
        let slot = *self.special_of.get(index)?;
        self.specials.get(slot as usize)
    }

    /// Takes character `index` off the special list (its playback is plain again).
    fn drop_special(&mut self, index: usize) {
        let slot = self.special_of[index];
        if slot == NO_SPECIAL {
            return;
        }
        self.special_of[index] = NO_SPECIAL;
        self.specials.swap_remove(slot as usize);
        if let Some(moved) = self.specials.get(slot as usize) {
            self.special_of[moved.character as usize] = slot;
            self.specials_sorted = false;
        }
    }

    /// Puts the special list in character order, as the update's blocks read it.
    fn sort_specials(&mut self) {
        if !self.specials_sorted {
            self.specials.sort_unstable_by_key(|s| s.character);
            for (slot, s) in self.specials.iter().enumerate() {
                self.special_of[s.character as usize] = slot as u32;
            }
            self.specials_sorted = true;
        }
    }

    /// Crossfades character `index` to `clip`, which starts at time 0 in slot A, by its
    /// clip's rule ([`default_playback`]) at the character's speed: the clip
    /// that was playing in A moves to slot B (with its playback state) at weight 1, which
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
        if self.clip[index] == clip {
            return Ok(false);
        }
        let rate = -1.0 / fade_seconds;
        if fade_seconds > 0.0 && rate.is_finite() {
            let b =
                Blend { character: index as u32, clip: self.clip[index], play: self.play_of(index), weight: 1.0, rate };
            self.put_blend(b);
        } else {
            self.drop_blend(index);
        }
        let p = self.params[clip as usize];
        self.clip[index] = clip;
        let play = Play::of(&default_playback(&self.clips[clip as usize]).with_speed(self.speed[index]));
        self.put_play(index, play);
        self.duration[index] = p.duration;
        self.span[index] = p.span;
        self.rate[index] = p.rate;
        self.first[index] = p.first;
        self.cap[index] = p.cap;
        self.repack(index);
        Ok(true)
    }

    /// Blends `clip_b` at `time_b` over character `index`'s clip A with a steady
    /// `weight` (the book's in-shader blend; 0 shows A only, 1 B only). B plays by its
    /// clip's rule ([`default_playback`], from `time_b` as [`Playback::seek`] puts it) at
    /// the character's speed and keeps its weight until changed. Replaces any fade.
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
        let mut pb = default_playback(&self.clips[clip_b as usize]).with_speed(self.speed[index]);
        pb.seek(f64::from(time_b));
        let b = Blend { character: index as u32, clip: clip_b, play: Play::of(&pb), weight, rate: 0.0 };
        self.put_blend(b);
        self.repack(index);
        Ok(())
    }

    /// Removes character `index`'s clip B (a blend or a fade in progress).
    ///
    /// # Errors
    /// `index` out of range.
    pub fn clear_blend(&mut self, index: usize) -> Result<(), CrowdError> {
        self.check_character(index)?;
        self.drop_blend(index);
        self.repack(index);
        Ok(())
    }

    /// The clip time character `index`'s clip A shows ([`Playback::time`]).
    pub fn time(&self, index: usize) -> Option<f32> {
        self.playback(index).map(|p| p.time())
    }

    /// Clip A of character `index`.
    pub fn clip(&self, index: usize) -> Option<u32> {
        self.clip.get(index).copied()
    }

    /// Playback speed of character `index`'s clip A.
    pub fn speed(&self, index: usize) -> Option<f32> {
        self.speed.get(index).copied()
    }

    /// Position, rotation and scale of character `index` (read back from its record).
    pub fn transform(&self, index: usize) -> Option<(Vec3, Quat, f32)> {
        let r = self.instances.get(index)?;
        let [x, y, z, scale] = r.position_scale;
        let [i, j, k, w] = r.rotation;
        let q = Quat::new_unchecked(anim_math::nalgebra::Quaternion::new(w, i, j, k));
        Some((Vec3::new(x, y, z), q, scale))
    }

    /// Clip B of character `index`, the time it shows and its weight; `None` without
    /// one (or for an index out of range).
    pub fn blend(&self, index: usize) -> Option<(u32, f32, f32)> {
        let b = self.blend_ref(index)?;
        Some((b.clip, b.play.playback(self.params[b.clip as usize].duration).time(), b.weight))
    }

    /// Whether character `index` is fading out a previous clip (see [`Self::set_clip`]).
    pub fn is_fading(&self, index: usize) -> bool {
        self.blend_ref(index).is_some_and(|b| b.rate != 0.0)
    }
}

impl Crowd {
    fn blend_ref(&self, index: usize) -> Option<&Blend> {
        let slot = *self.blend_of.get(index)?;
        self.blends.get(slot as usize)
    }

    fn blend_mut(&mut self, index: usize) -> Option<&mut Blend> {
        let slot = *self.blend_of.get(index)?;
        self.blends.get_mut(slot as usize)
    }

    /// Sets (or replaces) the clip B of character `b.character`.
    fn put_blend(&mut self, b: Blend) {
        let index = b.character as usize;
        if let Some(old) = self.blend_mut(index) {
            *old = b;
            return;
        }
        if self.blends.last().is_some_and(|l| l.character > b.character) {
            self.blends_sorted = false;
        }
        self.blend_of[index] = self.blends.len() as u32;
        self.blends.push(b);
    }

    /// Frees character `index`'s slot B: its record will show A alone again.
    fn drop_blend(&mut self, index: usize) {
        let slot = self.blend_of[index];
        if slot == NO_BLEND {
            return;
        }
        self.blend_of[index] = NO_BLEND;
        self.blends.swap_remove(slot as usize);
        if let Some(moved) = self.blends.get(slot as usize) {
            self.blend_of[moved.character as usize] = slot;
            self.blends_sorted = false;
        }
    }

    /// Puts the blend list in character order, as the update's blocks read it.
    fn sort_blends(&mut self) {
        if !self.blends_sorted {
            self.blends.sort_unstable_by_key(|b| b.character);
            for (slot, b) in self.blends.iter().enumerate() {
                self.blend_of[b.character as usize] = slot as u32;
            }
            self.blends_sorted = true;
        }
    }

    /// Drops the entries whose fade ended (`ended` of them), keeping the order.
    fn drop_ended(&mut self, ended: usize) {
        if ended == 0 {
            return;
        }
        for b in self.blends.iter().filter(|b| b.clip == ENDED) {
            self.blend_of[b.character as usize] = NO_BLEND;
        }
        self.blends.retain(|b| b.clip != ENDED);
        for (slot, b) in self.blends.iter().enumerate() {
            self.blend_of[b.character as usize] = slot as u32;
        }
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
