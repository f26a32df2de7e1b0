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

use crate::atlas::AtlasClip;
use crate::pool::PoolSlot;
use anim_core::clip::playback::{FOREVER, LoopMode, Playback, advance_local, advance_local_near, shown_time};
use anim_math::{Quat, Vec3};
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
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

/// Flag bits of a playback column: odd cycles run backwards.
const PING_PONG: u32 = 1;
/// Flag bit: hold the last frame when finished.
const CLAMP: u32 = 2;
/// Flag bit: the playback reached an end.
const FINISHED: u32 = 4;
/// The flags of a plain playback (see [`Play::is_plain`]): those of [`Playback::new`].
const PLAIN_FLAGS: u32 = CLAMP;

/// One playback as the crowd's columns hold it (see [`Playback`]).
#[derive(Clone, Copy, Debug, Default)]
struct Play {
    cycle: i32,
    local: f32,
    speed: f32,
    cycles: i32,
    flags: u32,
}

impl Play {
    fn of(p: &Playback) -> Self {
        let mut flags = if p.mode == LoopMode::PingPong { PING_PONG } else { 0 };
        flags |= if p.clamp_when_finished { CLAMP } else { 0 };
        flags |= if p.is_finished() { FINISHED } else { 0 };
        let (cycle, local) = p.cycle_local();
        Self { cycle, local, speed: p.speed, cycles: p.cycles(), flags }
    }

    fn playback(&self, duration: f32) -> Playback {
        let mode = if self.flags & PING_PONG != 0 { LoopMode::PingPong } else { LoopMode::Repeat };
        Playback::from_parts(
            duration,
            mode,
            self.speed,
            self.cycles,
            self.flags & CLAMP != 0,
            (self.cycle, self.local),
            self.flags & FINISHED != 0,
        )
    }
}

impl Play {
    /// Whether this is a plain endless [`LoopMode::Repeat`] playback (no ping-pong, no
    /// repetition count, not finished, and the default `clamp_when_finished`, which an
    /// endless playback never reads): the update's lean path.
    fn is_plain(&self) -> bool {
        self.cycles < 0 && self.flags == PLAIN_FLAGS
    }
}

/// The clip A playback of a character that is not plain (see [`Play::is_plain`]):
/// ping-pong, counted, clamped or finished. Its state lives here, not in the columns
/// (whose `cycle` and `local` for it are scratch); it is advanced after the lean pass.
#[derive(Clone, Copy, Debug)]
struct Special {
    /// The character's index.
    character: u32,
    cycle: i32,
    local: f32,
    cycles: i32,
    flags: u32,
    /// Once finished (the state no longer changes): the record's clip A columns and
    /// factor, written again each update without redoing the step.
    held: Option<(u32, u32, f32)>,
}

/// `Crowd::special_of` of a character whose clip A playback is plain.
const NO_SPECIAL: u32 = u32::MAX;

/// One [`Playback::advance`] and [`Playback::time`] on column values: from cycle
/// `cycle` at local time `local` by `step = dt · speed` (in `f32`, as `advance` computes
/// it); returns the new cycle, local time, flags and the clip time shown.
#[inline(always)]
fn step_lane(cycle: i32, local: f32, step: f32, duration: f32, cycles: i32, flags: u32) -> (i32, f32, u32, f32) {
    let (c, l, now) = advance_local(cycle, local, step, duration, cycles, flags & FINISHED != 0);
    finish_lane(c, l, now, duration, flags)
}

/// [`step_lane`] for the update's branch-free loop: [`advance_local_near`], with its
/// flag (false: the lane is left as it was and must be redone by [`step_lane`]).
#[inline(always)]
fn step_lane_near(
    cycle: i32,
    local: f32,
    step: f32,
    duration: f32,
    cycles: i32,
    flags: u32,
) -> (i32, f32, u32, f32, bool) {
    let (c, l, now, near) = advance_local_near(cycle, local, step, duration, cycles, flags & FINISHED != 0);
    let (c, l, fl, t) = finish_lane(c, l, now, duration, flags);
    if near { (c, l, fl, t, true) } else { (cycle, local, flags, 0.0, false) }
}

/// New flags and the clip time shown after a step to cycle `c`, local time `l`.
#[inline(always)]
fn finish_lane(c: i32, l: f32, now: bool, duration: f32, flags: u32) -> (i32, f32, u32, f32) {
    let flags = flags | if now { FINISHED } else { 0 };
    let rewound = flags & (FINISHED | CLAMP) == FINISHED;
    (c, l, flags, shown_time(c, l, duration, flags & PING_PONG != 0, rewound))
}

/// `late` bit: the clip's columns come from [`AtlasClip::frame_pair`].
const LATE_CLIP: u32 = 1;
/// `late` bit: the step crossed more than one cycle and is redone by [`step_lane`].
const LATE_STEP: u32 = 2;

/// A fading clip B is cleared once its weight is at most this (it is then invisible; the
/// slack absorbs the rounding of `weight + rate · dt` summed over the fade).
const FADE_DONE: f32 = 1e-5;

/// Below this many characters [`Crowd::update_parallel`] runs [`Crowd::update`].
const PARALLEL_MIN: usize = 4096;

/// Fewest characters a thread of [`Crowd::update_parallel`] is given.
const PER_THREAD_MIN: usize = 1024;

/// Characters in one block of the update: their clip A is advanced in one branch-free
/// loop, then the block's blends are applied while its records (4 KiB) are still in L1.
const BLOCK: usize = 64;

/// `Crowd::blend_of` of a character without clip B.
const NO_BLEND: u32 = u32::MAX;

/// `Blend::clip` of an entry whose fade ended in the update under way (dropped after it).
const ENDED: u32 = u32::MAX;

/// One clip's playback constants, in the form the update loop reads.
#[derive(Clone, Copy, Debug, Default)]
struct ClipParams {
    duration: f32,
    /// Which rule [`wrap_shown`] applies: a looping clip (positive, finite duration)
    /// gives its duration (its end wraps to 0), a clamped one (finite, non-negative
    /// duration) `+∞`, any other clip NaN (its characters' columns come from
    /// [`AtlasClip::frame_pair`]).
    span: f32,
    rate: f32,
    first: u32,
    /// `last` as a float, for [`frames_fast`] (clips of 2²³ columns or more get a NaN
    /// span instead, so their characters all take the exact path).
    cap: f32,
}

impl ClipParams {
    fn new(c: &AtlasClip) -> Self {
        let d = c.duration;
        let span = if c.looping {
            if d.is_finite() && d > 0.0 { d } else { f32::NAN }
        } else if d.is_finite() && d >= 0.0 {
            f32::INFINITY
        } else {
            f32::NAN
        };
        let last = c.frame_count.saturating_sub(1);
        let span = if last < 1 << 23 { span } else { f32::NAN };
        // The duration a `Playback` of this clip has (negative and non-finite ones are 0).
        let duration = if d.is_finite() && d > 0.0 { d } else { 0.0 };
        Self { duration, span, rate: c.rate, first: c.first_frame, cap: last as f32 }
    }
}

/// [`AtlasClip::frame_pair`] of a clip the fast rule does not cover.
#[cold]
#[inline(never)]
fn frames_slow(clips: &[AtlasClip], clip: u32, time: f32) -> (u32, u32, f32) {
    let p = clips[clip as usize].frame_pair(time);
    (p.frame0, p.frame1, p.t)
}

/// [`AtlasClip::advance`]`(t, 0)` without branches for a time `t ∈ [0, duration]` (the
/// time a [`Playback`] shows) of a clip of this `duration` and `span` (see
/// [`ClipParams::span`]): a looping clip wraps its end `t = duration` to 0 (as
/// `rem_euclid` does), a clamped one keeps every such `t`. The flag is set for a clip
/// outside the fast rule (NaN span), whose columns must come from
/// [`AtlasClip::frame_pair`].
#[inline(always)]
fn wrap_shown(t: f32, duration: f32, span: f32) -> (f32, bool) {
    let w = if (t >= duration) & (span < f32::INFINITY) { 0.0 } else { t };
    (w, span.is_nan())
}

/// [`AtlasClip::frame_pair`] of a time `wrap_shown` or `advance` returned, same
/// results without branches: columns `frame0`, `frame1` and the factor.
#[cfg(test)]
fn frames(time: f32, rate: f32, first: u32, last: u32) -> (u32, u32, f32) {
    // `frame_pair` advances by 0 first; on an advanced time that only turns -0 into +0.
    let t = time + 0.0;
    let pos = (t * rate).max(0.0);
    // `pos ≥ 0`, so truncation is `floor` (and saturates alike); below `last` the
    // column is exact as a float, so `pos − k` is `pos − floor(pos)`.
    let k = pos as u32;
    let at_end = k >= last;
    let frame0 = first.wrapping_add(k.min(last));
    let frame1 = first.wrapping_add(k.saturating_add(1).min(last));
    let f = (pos - k as f32).clamp(0.0, 1.0);
    // Characters at a clamped end mix with playing ones: a select, not a branch.
    (frame0, frame1, if at_end { 0.0 } else { f })
}

/// 2²³: adding it to a float in `[0, 2²³)` rounds that float to an integer, which then
/// sits in the low bits of the sum's mantissa.
const MAGIC: f32 = 8_388_608.0;

/// [`frames`] for a clip of fewer than 2²³ columns, whose last column index is `cap`
/// (as a float), in operations that vectorize (Rust's saturating float-to-int casts do
/// not, on AVX2): `pos` is capped at `cap` first, which changes nothing below `last` and
/// gives the same clamped end above it; its floor is then found with float adds of 2²³
/// (round to nearest, minus 1 where that rounded up) and read from the sum's bits.
#[inline(always)]
fn frames_fast(time: f32, rate: f32, first: u32, cap: f32) -> (u32, u32, f32) {
    let t = time + 0.0;
    let pos = (t * rate).max(0.0).min(cap);
    let near = (pos + MAGIC) - MAGIC;
    let floor = if near > pos { near - 1.0 } else { near };
    let k = (floor + MAGIC).to_bits().wrapping_sub(MAGIC.to_bits());
    let last = (cap + MAGIC).to_bits().wrapping_sub(MAGIC.to_bits());
    let at_end = k >= last;
    let frame0 = first.wrapping_add(k);
    let frame1 = first.wrapping_add((k + 1).min(last));
    let f = (pos - floor).clamp(0.0, 1.0);
    (frame0, frame1, if at_end { 0.0 } else { f })
}

/// A character's clip B (a steady blend or a fade under way).
#[derive(Clone, Copy, Debug)]
struct Blend {
    /// The character's index.
    character: u32,
    /// Clip index ([`ENDED`] once the fade has ended during an update).
    clip: u32,
    play: Play,
    weight: f32,
    /// Weight change per second: 0 for a steady blend, negative for a fade.
    rate: f32,
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

/// A run of characters, as one update pass reads and writes them.
struct Lanes<'a> {
    /// Crowd index of the run's first character.
    base: usize,
    clip: &'a [u32],
    cycle: &'a mut [i32],
    local: &'a mut [f32],
    speed: &'a [f32],
    duration: &'a [f32],
    span: &'a [f32],
    rate: &'a [f32],
    first: &'a [u32],
    cap: &'a [f32],
    out: &'a mut [CrowdInstance],
    /// The blends of this run's characters, in character order.
    blends: &'a mut [Blend],
    /// The special playbacks of this run's characters, in character order.
    specials: &'a mut [Special],
}

impl<'a> Lanes<'a> {
    /// Advances every character by `dt` (finite) and writes its frames and factors;
    /// returns how many fades ended (their entries are marked [`ENDED`]).
    ///
    /// Block by block: clip A of every character in one branch-free loop, which also
    /// writes the record as if there were no clip B (B mirroring A, weight 0); then the
    /// rare clips outside the fast rule again through [`AtlasClip::frame_pair`]; then the
    /// block's blends overwrite their B half.
    #[inline(always)]
    fn run(self, clips: &[AtlasClip], params: &[ClipParams], dt: f32) -> usize {
        self.run_as::<false>(clips, params, dt)
    }

    /// [`Lanes::run`]; with `AVX2` (only inside [`run_avx2`]) the records are written by
    /// [`records_avx2`] (the same bytes).
    #[inline(always)]
    fn run_as<const AVX2: bool>(self, clips: &[AtlasClip], params: &[ClipParams], dt: f32) -> usize {
        let n = self.out.len();
        let clip = &self.clip[..n];
        let cycle = &mut self.cycle[..n];
        let local = &mut self.local[..n];
        let speed = &self.speed[..n];
        let duration = &self.duration[..n];
        let span = &self.span[..n];
        let rate = &self.rate[..n];
        let first = &self.first[..n];
        let cap = &self.cap[..n];
        let out = &mut self.out[..n];
        let blends = self.blends;
        let specials = self.specials;
        let mut next_special = 0;
        let mut f0 = [0u32; BLOCK];
        let mut f1 = [0u32; BLOCK];
        let mut fa = [0f32; BLOCK];
        let mut late = [0u32; BLOCK];
        let mut shown = [0f32; BLOCK];
        let mut scratch = BlendScratch::default();
        let mut next_blend = 0;
        let mut ended = 0;
        let mut start = 0;
        while start < n {
            let end = (start + BLOCK).min(n);
            let m = end - start;
            let (f0, f1, fa, late) = (&mut f0[..m], &mut f1[..m], &mut fa[..m], &mut late[..m]);
            let shown = &mut shown[..m];
            let cycle = &mut cycle[start..end];
            let local = &mut local[start..end];
            let speed = &speed[start..end];
            let duration = &duration[start..end];
            let span = &span[start..end];
            let rate = &rate[start..end];
            let first = &first[start..end];
            let cap = &cap[start..end];
            let clip = &clip[start..end];
            let out = &mut out[start..end];
            let mut slow = 0u32;
            // Every lane as a plain endless `Repeat` playback (the step and time of
            // `Playback::advance` / `time` with no count and no flags, which fold away);
            // the special lanes' results are scratch, redone from their own state below.
            for i in 0..m {
                let (c, l, _, t, near) =
                    step_lane_near(cycle[i], local[i], dt * speed[i], duration[i], FOREVER, PLAIN_FLAGS);
                cycle[i] = c;
                local[i] = l;
                shown[i] = t;
                // `t ∈ [0, d]`: inside the fast span of every clip that has one.
                let (w, s) = wrap_shown(t, duration[i], span[i]);
                let lt = if s { LATE_CLIP } else { 0 } | if near { 0 } else { LATE_STEP };
                slow |= lt;
                late[i] = lt;
                (f0[i], f1[i], fa[i]) = frames_fast(w, rate[i], first[i], cap[i]);
            }
            #[allow(unused_mut)]
            let mut done = 0;
            #[cfg(target_arch = "x86_64")]
            if AVX2 {
                // SAFETY: `AVX2` is true only in `run_avx2`, which runs on AVX2 CPUs only.
                done = unsafe { records_avx2(out, f0, f1, fa, clip) };
            }
            for i in done..m {
                let r = &mut out[i];
                r.frames = [f0[i], f1[i], f0[i], f1[i]];
                r.factors = [fa[i], fa[i], 0.0, clip[i] as f32];
            }
            if slow != 0 {
                for i in 0..m {
                    if late[i] & LATE_STEP != 0 {
                        let (c, l, _, t) =
                            step_lane(cycle[i], local[i], dt * speed[i], duration[i], FOREVER, PLAIN_FLAGS);
                        (cycle[i], local[i], shown[i]) = (c, l, t);
                    }
                    if late[i] != 0 {
                        let (a0, a1, f) = frames_slow(clips, clip[i], shown[i]);
                        out[i].frames = [a0, a1, a0, a1];
                        out[i].factors = [f, f, 0.0, clip[i] as f32];
                    }
                }
            }
            let first_out = self.base + start;
            let mut stop = next_special;
            while specials.get(stop).is_some_and(|s| (s.character as usize).wrapping_sub(first_out) < m) {
                stop += 1;
            }
            for s in &mut specials[next_special..stop] {
                let i = s.character as usize - first_out;
                let (a0, a1, f) = match s.held {
                    Some(held) => held,
                    None => {
                        let (c, l, fl, t) = step_lane(s.cycle, s.local, dt * speed[i], duration[i], s.cycles, s.flags);
                        (s.cycle, s.local, s.flags) = (c, l, fl);
                        let (w, slow) = wrap_shown(t, duration[i], span[i]);
                        let r = if slow {
                            frames_slow(clips, clip[i], t)
                        } else {
                            frames_fast(w, rate[i], first[i], cap[i])
                        };
                        // A finished playback's steps change nothing (see `Playback::advance`).
                        if fl & FINISHED != 0 {
                            s.held = Some(r);
                        }
                        r
                    }
                };
                out[i].frames = [a0, a1, a0, a1];
                out[i].factors = [f, f, 0.0, clip[i] as f32];
            }
            next_special = stop;
            let mut stop = next_blend;
            while blends.get(stop).is_some_and(|b| (b.character as usize).wrapping_sub(first_out) < m) {
                stop += 1;
            }
            if stop > next_blend {
                let block = &mut blends[next_blend..stop];
                ended += scratch.blends(block, first_out, clips, params, dt, out);
                next_blend = stop;
            }
            start = end;
        }
        ended
    }
}

/// One block's clip B entries (at most [`BLOCK`]) copied into arrays, so that their
/// advance also runs as one branch-free loop.
struct BlendScratch {
    cycle: [i32; BLOCK],
    local: [f32; BLOCK],
    step: [f32; BLOCK],
    cycles: [i32; BLOCK],
    flags: [u32; BLOCK],
    shown: [f32; BLOCK],
    weight: [f32; BLOCK],
    weight_rate: [f32; BLOCK],
    duration: [f32; BLOCK],
    span: [f32; BLOCK],
    rate: [f32; BLOCK],
    first: [u32; BLOCK],
    cap: [f32; BLOCK],
    f0: [u32; BLOCK],
    f1: [u32; BLOCK],
    factor: [f32; BLOCK],
    late: [u32; BLOCK],
    done: [u32; BLOCK],
}

impl Default for BlendScratch {
    fn default() -> Self {
        Self {
            cycle: [0; BLOCK],
            local: [0.0; BLOCK],
            step: [0.0; BLOCK],
            cycles: [0; BLOCK],
            flags: [0; BLOCK],
            shown: [0.0; BLOCK],
            weight: [0.0; BLOCK],
            weight_rate: [0.0; BLOCK],
            duration: [0.0; BLOCK],
            span: [0.0; BLOCK],
            rate: [0.0; BLOCK],
            first: [0; BLOCK],
            cap: [0.0; BLOCK],
            f0: [0; BLOCK],
            f1: [0; BLOCK],
            factor: [0.0; BLOCK],
            late: [0; BLOCK],
            done: [0; BLOCK],
        }
    }
}

impl BlendScratch {
    /// Advances the clips B of one block (`block`, whose characters' records are
    /// `out[character − first_out]`, their A half with B mirroring A already written) by
    /// `dt` and writes their B half; returns how many fades ended (those entries are
    /// marked [`ENDED`] and their records left showing A only).
    #[inline(always)]
    fn blends(
        &mut self,
        block: &mut [Blend],
        first_out: usize,
        clips: &[AtlasClip],
        params: &[ClipParams],
        dt: f32,
        out: &mut [CrowdInstance],
    ) -> usize {
        let n = block.len().min(BLOCK);
        let block = &mut block[..n];
        for (k, b) in block.iter().enumerate() {
            let p = &params[b.clip as usize];
            self.cycle[k] = b.play.cycle;
            self.local[k] = b.play.local;
            self.step[k] = dt * b.play.speed;
            self.cycles[k] = b.play.cycles;
            self.flags[k] = b.play.flags;
            self.weight[k] = b.weight;
            self.weight_rate[k] = b.rate;
            self.duration[k] = p.duration;
            self.span[k] = p.span;
            self.rate[k] = p.rate;
            self.first[k] = p.first;
            self.cap[k] = p.cap;
        }
        for k in 0..n {
            let (c, l, fl, t, near) = step_lane_near(
                self.cycle[k],
                self.local[k],
                self.step[k],
                self.duration[k],
                self.cycles[k],
                self.flags[k],
            );
            self.cycle[k] = c;
            self.local[k] = l;
            self.flags[k] = fl;
            self.shown[k] = t;
            let (t, slow) = wrap_shown(t, self.duration[k], self.span[k]);
            let slow = if slow { LATE_CLIP } else { 0 } | if near { 0 } else { LATE_STEP };
            // Steady blends have rate 0: `w + 0` is `w`, already in [0, 1].
            let rate = self.weight_rate[k];
            let w = (self.weight[k] + rate * dt).clamp(0.0, 1.0);
            self.done[k] = ((rate != 0.0) & (w <= FADE_DONE)) as u32;
            self.late[k] = slow;
            self.weight[k] = w;
            (self.f0[k], self.f1[k], self.factor[k]) = frames_fast(t, self.rate[k], self.first[k], self.cap[k]);
        }
        let mut ended = 0;
        for (k, b) in block.iter_mut().enumerate() {
            if self.done[k] != 0 {
                b.clip = ENDED;
                ended += 1;
                continue;
            }
            let (mut f0, mut f1, mut factor) = (self.f0[k], self.f1[k], self.factor[k]);
            if self.late[k] & LATE_STEP != 0 {
                let (c, l, fl, t) = step_lane(
                    self.cycle[k],
                    self.local[k],
                    self.step[k],
                    self.duration[k],
                    self.cycles[k],
                    self.flags[k],
                );
                (self.cycle[k], self.local[k], self.flags[k], self.shown[k]) = (c, l, fl, t);
            }
            if self.late[k] != 0 {
                (f0, f1, factor) = frames_slow(clips, b.clip, self.shown[k]);
            }
            b.play.cycle = self.cycle[k];
            b.play.local = self.local[k];
            b.play.flags = self.flags[k];
            b.weight = self.weight[k];
            let r = &mut out[(b.character as usize).wrapping_sub(first_out)];
            r.frames[2] = f0;
            r.frames[3] = f1;
            r.factors[1] = factor;
            r.factors[2] = self.weight[k];
        }
        ended
    }
}

/// [`Lanes::run`] compiled for AVX2 (8 `f32`/`i32` lanes). Only the instruction set differs (Rust
/// never fuses a multiply and an add by itself), so results are bit for bit those of
/// the baseline loop; a unit test compares them.
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn run_avx2(lanes: Lanes<'_>, clips: &[AtlasClip], params: &[ClipParams], dt: f32) -> usize {
    lanes.run_as::<true>(clips, params, dt)
}

/// Writes the frames and factors of whole groups of 8 records as the update's scalar
/// loop does (`frames = [f0, f1, f0, f1]`, `factors = [fa, fa, 0, clip as f32]`), one
/// 32-byte store a record built by shuffles; returns how many records it wrote (the rest
/// are left to the scalar loop). `clip as f32` is a signed conversion here, the same as
/// the unsigned one for clip indices below 2³¹ (every clip index: it is checked against
/// the length of the crowd's clip table).
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn records_avx2(out: &mut [CrowdInstance], f0: &[u32], f1: &[u32], fa: &[f32], clip: &[u32]) -> usize {
    use std::arch::x86_64::*;
    let m = out.len().min(f0.len()).min(f1.len()).min(fa.len()).min(clip.len());
    let mut i = 0;
    while i + 8 <= m {
        // SAFETY: `i + 8 ≤` every slice's length: the loads read and the stores write
        // inside them (unaligned forms); `frames` and `factors` are the record's last 32
        // bytes (`repr(C)`: offset 32).
        unsafe {
            let a0 = _mm256_loadu_si256(f0.as_ptr().add(i).cast());
            let a1 = _mm256_loadu_si256(f1.as_ptr().add(i).cast());
            let fv = _mm256_loadu_ps(fa.as_ptr().add(i));
            let cv = _mm256_cvtepi32_ps(_mm256_loadu_si256(clip.as_ptr().add(i).cast()));
            let z = _mm256_setzero_ps();
            // Pairs (f0, f1) of characters 0 1 | 4 5 and 2 3 | 6 7.
            let p_lo = _mm256_unpacklo_epi32(a0, a1);
            let p_hi = _mm256_unpackhi_epi32(a0, a1);
            // (fa, fa) and (0, clip) pairs, same order.
            let g_lo = _mm256_castps_pd(_mm256_unpacklo_ps(fv, fv));
            let g_hi = _mm256_castps_pd(_mm256_unpackhi_ps(fv, fv));
            let h_lo = _mm256_castps_pd(_mm256_unpacklo_ps(z, cv));
            let h_hi = _mm256_castps_pd(_mm256_unpackhi_ps(z, cv));
            // Per character k (low half) and k + 4 (high half): frames, then factors.
            let frames = [
                _mm256_unpacklo_epi64(p_lo, p_lo),
                _mm256_unpackhi_epi64(p_lo, p_lo),
                _mm256_unpacklo_epi64(p_hi, p_hi),
                _mm256_unpackhi_epi64(p_hi, p_hi),
            ];
            let factors = [
                _mm256_castpd_si256(_mm256_unpacklo_pd(g_lo, h_lo)),
                _mm256_castpd_si256(_mm256_unpackhi_pd(g_lo, h_lo)),
                _mm256_castpd_si256(_mm256_unpacklo_pd(g_hi, h_hi)),
                _mm256_castpd_si256(_mm256_unpackhi_pd(g_hi, h_hi)),
            ];
            let base = out.as_mut_ptr().add(i).cast::<u8>();
            for k in 0..4 {
                let lo = _mm256_permute2x128_si256::<0x20>(frames[k], factors[k]);
                let hi = _mm256_permute2x128_si256::<0x31>(frames[k], factors[k]);
                _mm256_storeu_si256(base.add(k * 64 + 32).cast(), lo);
                _mm256_storeu_si256(base.add((k + 4) * 64 + 32).cast(), hi);
            }
        }
        i += 8;
    }
    i
}

/// [`Lanes::run`] with the widest instruction set this CPU has.
fn run(lanes: Lanes<'_>, clips: &[AtlasClip], params: &[ClipParams], dt: f32) -> usize {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: checked at run time that this CPU supports AVX2 and FMA.
        return unsafe { run_avx2(lanes, clips, params, dt) };
    }
    lanes.run(clips, params, dt)
}

/// Pointers to the crowd's columns, for cutting disjoint runs of characters in the
/// tasks of [`Crowd::update_parallel`].
struct RawLanes<'a> {
    clip: &'a [u32],
    speed: &'a [f32],
    duration: &'a [f32],
    span: &'a [f32],
    rate: &'a [f32],
    first: &'a [u32],
    cap: &'a [f32],
    cycle: *mut i32,
    local: *mut f32,
    out: *mut CrowdInstance,
    blends: *mut Blend,
    specials: *mut Special,
    len: usize,
    blend_len: usize,
    special_len: usize,
}

// SAFETY: the pointers are only turned into slices of disjoint runs (see
// `RawLanes::lanes`), each used by one thread; every element type is plain data.
unsafe impl Sync for RawLanes<'_> {}

impl RawLanes<'_> {
    /// Characters `c`, with the blends `b` and specials `s` that belong to them.
    ///
    /// # Safety
    /// The ranges lie inside the columns, and no other live reference covers these
    /// characters, blends or specials while the result lives.
    unsafe fn lanes(&self, c: Range<usize>, b: Range<usize>, s: Range<usize>) -> Lanes<'_> {
        debug_assert!(c.end <= self.len && b.end <= self.blend_len && s.end <= self.special_len);
        let n = c.len();
        // SAFETY: per the contract, each range is inside its column and not aliased.
        unsafe {
            Lanes {
                base: c.start,
                clip: &self.clip[c.clone()],
                cycle: std::slice::from_raw_parts_mut(self.cycle.add(c.start), n),
                local: std::slice::from_raw_parts_mut(self.local.add(c.start), n),
                speed: &self.speed[c.clone()],
                duration: &self.duration[c.clone()],
                span: &self.span[c.clone()],
                rate: &self.rate[c.clone()],
                first: &self.first[c.clone()],
                cap: &self.cap[c.clone()],
                out: std::slice::from_raw_parts_mut(self.out.add(c.start), n),
                blends: std::slice::from_raw_parts_mut(self.blends.add(b.start), b.len()),
                specials: std::slice::from_raw_parts_mut(self.specials.add(s.start), s.len()),
            }
        }
    }
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

    /// Advances every character by `dt` seconds (times `dt · speed`, fades `dt`) and
    /// writes every [`CrowdInstance`]'s frames and factors (transforms are written by the
    /// edits, not here). A non-finite `dt` counts as 0.
    ///
    /// Every character's clip A takes one lean branch-free loop over dense arrays (AVX2
    /// where the CPU has it, chosen at run time, with the same results) as a plain endless
    /// `Repeat` playback; those with another playback (kept in a separate list) are then
    /// redone by the full arithmetic, and those with a clip B (another list) take a
    /// second, short pass. It allocates nothing; after edits that reordered those lists
    /// (removals, new entries of lower indices) it sorts them.
    pub fn update(&mut self, dt: f32) {
        let dt = if dt.is_finite() { dt } else { 0.0 };
        self.sort_blends();
        self.sort_specials();
        let (lanes, clips, params) = self.lanes();
        let ended = run(lanes, clips, params, dt);
        self.drop_ended(ended);
    }

    /// [`Self::update`] on `threads` threads (the calling thread included), each
    /// advancing an equal run of characters; the results are identical to `update`'s.
    /// Runs `update` on the calling thread when `threads ≤ 1` or the crowd has fewer
    /// than a few thousand characters, and gives each thread at least a thousand.
    ///
    /// The other `threads − 1` threads belong to the crowd: started by the first call
    /// that needs them (or more of them than before), parked on a condition variable
    /// between calls, ended when the crowd is dropped (a clone starts its own). Steady
    /// calls allocate nothing: handing out the runs and waiting for them takes a mutex
    /// and two condition variables. Where threads cannot be started, the update runs on
    /// the calling thread alone.
    pub fn update_parallel(&mut self, dt: f32, threads: usize) {
        let n = self.len();
        let threads = threads.min(n / PER_THREAD_MIN);
        if threads <= 1 || n < PARALLEL_MIN {
            self.update(dt);
            return;
        }
        let chunk = n.div_ceil(threads);
        let tasks = n.div_ceil(chunk);
        if self.pool.get(tasks - 1, "crowd-update").is_none() {
            self.update(dt);
            return;
        }
        let dt = if dt.is_finite() { dt } else { 0.0 };
        self.sort_blends();
        self.sort_specials();
        // Each task's first character, blend and special; task `t` runs up to task `t + 1`'s.
        self.splits.clear();
        for t in 0..=tasks {
            let c = (t * chunk).min(n);
            let b = self.blends.partition_point(|b| (b.character as usize) < c);
            let s = self.specials.partition_point(|s| (s.character as usize) < c);
            self.splits.push([c, b, s]);
        }
        let ended = AtomicUsize::new(0);
        let Crowd {
            clips,
            params,
            clip,
            cycle,
            local,
            speed,
            specials,
            duration,
            span,
            rate,
            first,
            cap,
            blends,
            instances,
            pool,
            splits,
            ..
        } = self;
        let raw = RawLanes {
            len: instances.len(),
            blend_len: blends.len(),
            special_len: specials.len(),
            cycle: cycle.as_mut_ptr(),
            local: local.as_mut_ptr(),
            out: instances.as_mut_ptr(),
            blends: blends.as_mut_ptr(),
            specials: specials.as_mut_ptr(),
            clip,
            speed,
            duration,
            span,
            rate,
            first,
            cap,
        };
        let task = |t: usize| {
            let ([c0, b0, s0], [c1, b1, s1]) = (splits[t], splits[t + 1]);
            // SAFETY: task `t` touches characters `c0..c1`, the blends `b0..b1` and the
            // specials `s0..s1` only; the ranges of distinct tasks are disjoint (the split
            // points ascend), every task index runs once, and no column is touched or
            // resized until `WorkerPool::run` has returned (it waits for every task).
            let lanes = unsafe { raw.lanes(c0..c1, b0..b1, s0..s1) };
            ended.fetch_add(run(lanes, clips, params, dt), Ordering::Relaxed);
        };
        pool.started().expect("started above").run(tasks, &task);
        self.drop_ended(ended.into_inner());
    }

    fn lanes(&mut self) -> (Lanes<'_>, &[AtlasClip], &[ClipParams]) {
        (
            Lanes {
                base: 0,
                clip: &self.clip,
                cycle: &mut self.cycle,
                local: &mut self.local,
                speed: &self.speed,
                duration: &self.duration,
                span: &self.span,
                rate: &self.rate,
                first: &self.first,
                cap: &self.cap,
                out: &mut self.instances,
                blends: &mut self.blends,
                specials: &mut self.specials,
            },
            &self.clips,
            &self.params,
        )
    }

    /// Writes character `index`'s frames and factors without advancing time (the same
    /// loop as an update with `dt = 0`).
    fn repack(&mut self, index: usize) {
        let slot = self.blend_of[index];
        let blends = if slot == NO_BLEND { &mut [][..] } else { std::slice::from_mut(&mut self.blends[slot as usize]) };
        let slot = self.special_of[index];
        let specials =
            if slot == NO_SPECIAL { &mut [][..] } else { std::slice::from_mut(&mut self.specials[slot as usize]) };
        let r = index..index + 1;
        let lanes = Lanes {
            base: index,
            clip: &self.clip[r.clone()],
            cycle: &mut self.cycle[r.clone()],
            local: &mut self.local[r.clone()],
            speed: &self.speed[r.clone()],
            duration: &self.duration[r.clone()],
            span: &self.span[r.clone()],
            rate: &self.rate[r.clone()],
            first: &self.first[r.clone()],
            cap: &self.cap[r.clone()],
            out: &mut self.instances[r],
            blends,
            specials,
        };
        // A fade's weight only ends by falling, which `dt = 0` does not do; handled anyway.
        let ended = lanes.run(&self.clips, &self.params, 0.0);
        self.drop_ended(ended);
    }

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

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic xorshift32.
    struct Rng(u32);

    impl Rng {
        fn next_u32(&mut self) -> u32 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 17;
            self.0 ^= self.0 << 5;
            self.0
        }
        fn range(&mut self, lo: f32, hi: f32) -> f32 {
            lo + (hi - lo) * ((self.next_u32() >> 8) as f32 / (1u32 << 24) as f32)
        }
    }

    fn clip(first_frame: u32, frame_count: u32, rate: f32, duration: f32, looping: bool) -> AtlasClip {
        AtlasClip {
            name: String::new(),
            first_frame,
            frame_count,
            rate,
            duration,
            looping,
            bounds: (Vec3::zeros(), Vec3::zeros()),
        }
    }

    /// Clips of every kind the fast paths treat apart, odd durations and rates included.
    fn clips() -> Vec<AtlasClip> {
        vec![
            clip(0, 31, 30.0, 1.0, true),
            clip(31, 31, 30.0, 1.0, false),
            clip(62, 16, 20.0, 0.75, true),
            clip(78, 7, 9.1, 0.659_341_1, true),
            clip(85, 1, 30.0, 0.0, false),
            clip(86, 1, 30.0, 0.0, true),
            clip(87, 200, 123.456, 1.6119, false),
            clip(5, 3, f32::INFINITY, 0.1, true),
        ]
    }

    #[test]
    fn fast_wrap_and_columns_equal_advance_and_frame_pair() {
        let clips = clips();
        let mut rng = Rng(31);
        for c in &clips {
            let p = ClipParams::new(c);
            let d = c.duration;
            // The times a playback shows: `[0, d]`.
            let mut times = vec![0.0, -0.0, d, d * 0.5, 0.0f32.next_up(), d.next_down(), d.next_down().next_down()];
            times.extend((0..20_000).map(|_| rng.range(0.0, 1.0) * d));
            times.retain(|&t| (0.0..=d).contains(&t));
            for &t in &times {
                let want = c.advance(t, 0.0);
                let (got, slow) = wrap_shown(t, p.duration, p.span);
                if !slow {
                    assert_eq!(got, want, "{c:?} at {t}");
                    let a = c.frame_pair(got);
                    assert_eq!(
                        frames(got, p.rate, p.first, c.frame_count.saturating_sub(1)),
                        (a.frame0, a.frame1, a.t),
                        "{c:?} at {t}"
                    );
                    assert_eq!(frames_fast(got, p.rate, p.first, p.cap), (a.frame0, a.frame1, a.t), "{c:?} at {t}");
                }
                let a = c.frame_pair(want);
                assert_eq!(
                    frames(want, p.rate, p.first, c.frame_count.saturating_sub(1)),
                    (a.frame0, a.frame1, a.t),
                    "{c:?} at {t}"
                );
            }
        }
    }

    fn mixed(n: usize) -> Crowd {
        let clips = clips();
        let mut rng = Rng(5);
        let mut crowd = Crowd::new(&clips);
        for i in 0..n {
            let c = rng.next_u32() % clips.len() as u32;
            let desc = CharacterDesc {
                position: Vec3::new(i as f32, 0.0, 0.0),
                rotation: Quat::identity(),
                scale: 1.0,
                clip: c,
                time: rng.range(-2.0, 2.0),
                speed: rng.range(-30.0, 30.0),
            };
            crowd.add(desc).unwrap();
            // Every playback kind: ping-pong, loop counts (0 included), rewinding ends,
            // finished ones, starts across several cycles.
            if rng.next_u32().is_multiple_of(2) {
                let mode = if rng.next_u32().is_multiple_of(2) { LoopMode::PingPong } else { LoopMode::Repeat };
                let reps = [None, Some(0), Some(1), Some(3)][rng.next_u32() as usize % 4];
                let mut p = Playback::new(clips[c as usize].duration, mode)
                    .with_repetitions(reps)
                    .with_speed(rng.range(-30.0, 30.0))
                    .with_clamp_when_finished(rng.next_u32().is_multiple_of(2));
                p.seek(f64::from(rng.range(-3.0, 6.0)));
                if rng.next_u32().is_multiple_of(8) {
                    p.advance(100.0);
                }
                crowd.set_playback(i, &p).unwrap();
            }
            match rng.next_u32() % 4 {
                0 => crowd.set_blend(i, rng.next_u32() % 8, rng.range(0.0, 1.0), rng.range(0.0, 1.0)).unwrap(),
                1 => drop(crowd.set_clip(i, (c + 1) % 8, rng.range(0.01, 0.5)).unwrap()),
                _ => {}
            }
        }
        crowd
    }

    /// The special list follows `set_playback` (plain ↔ special), removals (swap-remove
    /// fixups) and finishing (held records): every character's playback and record equal
    /// a `Playback` model's after each update.
    #[test]
    fn special_list_follows_edits_and_matches_playback() {
        let clips = clips();
        let mut crowd = Crowd::new(&clips);
        let mut model: Vec<(u32, Playback)> = Vec::new();
        let mut rng = Rng(77);
        let playback_of = |rng: &mut Rng, d: f32| {
            let mode = if rng.next_u32().is_multiple_of(2) { LoopMode::Repeat } else { LoopMode::PingPong };
            let reps = [None, Some(0), Some(1), Some(3)][rng.next_u32() as usize % 4];
            let mut p = Playback::new(d, mode).with_speed(rng.range(-2.0, 2.0)).with_repetitions(reps);
            p.clamp_when_finished = !rng.next_u32().is_multiple_of(3);
            p.seek(f64::from(rng.range(-1.0, 3.0)));
            p
        };
        for i in 0..400u32 {
            let c = i % 4;
            let desc = CharacterDesc {
                position: Vec3::zeros(),
                rotation: Quat::identity(),
                scale: 1.0,
                clip: c,
                time: rng.range(0.0, 1.0),
                speed: rng.range(-1.0, 2.0),
            };
            let d = crowd.params[c as usize].duration;
            if i % 3 == 0 {
                let p = playback_of(&mut rng, d);
                crowd.add_with_playback(desc, &p).unwrap();
                model.push((c, p));
            } else {
                crowd.add(desc).unwrap();
                model.push((c, crowd.playback(i as usize).unwrap()));
            }
        }
        for step in 0..40 {
            for _ in 0..5 {
                let i = rng.next_u32() as usize % crowd.len();
                let d = crowd.params[model[i].0 as usize].duration;
                let p = if rng.next_u32().is_multiple_of(2) {
                    playback_of(&mut rng, d)
                } else {
                    Playback::new(d, LoopMode::Repeat).with_speed(rng.range(-1.0, 2.0))
                };
                crowd.set_playback(i, &p).unwrap();
                model[i].1 = p;
            }
            for _ in 0..3 {
                let i = rng.next_u32() as usize % crowd.len();
                crowd.remove(i).unwrap();
                model.swap_remove(i);
            }
            let dt = [1.0 / 60.0, 0.3, -0.2, 1.7][step % 4];
            crowd.update(dt);
            for (i, (c, p)) in model.iter_mut().enumerate() {
                p.advance(dt);
                let got = crowd.playback(i).unwrap();
                assert_eq!(got.cycle_local(), p.cycle_local(), "character {i} step {step}");
                assert_eq!(got.is_finished(), p.is_finished(), "character {i} step {step}");
                assert_eq!(got.mode, p.mode);
                assert_eq!(got.clamp_when_finished, p.clamp_when_finished);
                let a = clips[*c as usize].frame_pair(p.time());
                let r = crowd.instances[i];
                assert_eq!([r.frames[0], r.frames[1]], [a.frame0, a.frame1], "character {i} step {step}");
                assert_eq!(r.factors[0], a.t, "character {i} step {step}");
            }
            for (slot, s) in crowd.specials.iter().enumerate() {
                assert_eq!(crowd.special_of[s.character as usize], slot as u32);
            }
        }
        assert!(crowd.specials.len() > 50 && crowd.specials.len() < crowd.len() - 50);
        assert!(crowd.specials.iter().any(|s| s.held.is_some()));
    }

    #[test]
    fn avx2_loop_equals_baseline_loop_bit_for_bit() {
        let mut a = mixed(3000);
        let mut b = a.clone();
        for step in 0..30 {
            let dt = [1.0 / 60.0, 0.3, -0.02, 2.5][step % 4];
            let (lanes, clips, params) = a.lanes();
            let ended_a = lanes.run(clips, params, dt);
            a.drop_ended(ended_a);
            let (lanes, clips, params) = b.lanes();
            let ended_b = run(lanes, clips, params, dt);
            b.drop_ended(ended_b);
            assert_eq!(ended_a, ended_b);
            let bytes = |c: &Crowd| bytemuck::cast_slice::<CrowdInstance, u8>(&c.instances).to_vec();
            assert_eq!(bytes(&a), bytes(&b), "step {step}");
            let bits = |c: &Crowd| c.local.iter().map(|t| t.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&a), bits(&b));
            assert_eq!(a.cycle, b.cycle);
            let sp = |c: &Crowd| {
                c.specials
                    .iter()
                    .map(|s| (s.character, s.cycle, s.local.to_bits(), s.cycles, s.flags))
                    .collect::<Vec<_>>()
            };
            assert_eq!(sp(&a), sp(&b));
        }
    }
}
