//! A playback as the crowd's columns hold it, the clip constants the update reads, and
//! the column arithmetic of one step.

use crate::atlas::AtlasClip;
use anim_core::clip::playback::{LoopMode, Playback, advance_local, advance_local_near, shown_time};

/// Flag bits of a playback column: odd cycles run backwards.
pub(super) const PING_PONG: u32 = 1;
/// Flag bit: hold the last frame when finished.
pub(super) const CLAMP: u32 = 2;
/// Flag bit: the playback reached an end.
pub(super) const FINISHED: u32 = 4;
/// The flags of a plain playback (see [`Play::is_plain`]): those of [`Playback::new`].
pub(super) const PLAIN_FLAGS: u32 = CLAMP;

/// One playback as the crowd's columns hold it (see [`Playback`]).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Play {
    pub(super) cycle: i32,
    pub(super) local: f32,
    pub(super) speed: f32,
    pub(super) cycles: i32,
    pub(super) flags: u32,
}

impl Play {
    pub(super) fn of(p: &Playback) -> Self {
        let mut flags = if p.mode == LoopMode::PingPong { PING_PONG } else { 0 };
        flags |= if p.clamp_when_finished { CLAMP } else { 0 };
        flags |= if p.is_finished() { FINISHED } else { 0 };
        let (cycle, local) = p.cycle_local();
        Self { cycle, local, speed: p.speed, cycles: p.cycles(), flags }
    }

    pub(super) fn playback(&self, duration: f32) -> Playback {
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
    pub(super) fn is_plain(&self) -> bool {
        self.cycles < 0 && self.flags == PLAIN_FLAGS
    }
}

/// The clip A playback of a character that is not plain (see [`Play::is_plain`]):
/// ping-pong, counted, clamped or finished. Its state lives here, not in the columns
/// (whose `cycle` and `local` for it are scratch); it is advanced after the lean pass.
#[derive(Clone, Copy, Debug)]
pub(super) struct Special {
    /// The character's index.
    pub(super) character: u32,
    pub(super) cycle: i32,
    pub(super) local: f32,
    pub(super) cycles: i32,
    pub(super) flags: u32,
    /// Once finished (the state no longer changes): the record's clip A columns and
    /// factor, written again each update without redoing the step.
    pub(super) held: Option<(u32, u32, f32)>,
}

/// `Crowd::special_of` of a character whose clip A playback is plain.
pub(super) const NO_SPECIAL: u32 = u32::MAX;

/// One [`Playback::advance`] and [`Playback::time`] on column values: from cycle
/// `cycle` at local time `local` by `step = dt · speed` (in `f32`, as `advance` computes
/// it); returns the new cycle, local time, flags and the clip time shown.
#[inline(always)]
pub(super) fn step_lane(
    cycle: i32,
    local: f32,
    step: f32,
    duration: f32,
    cycles: i32,
    flags: u32,
) -> (i32, f32, u32, f32) {
    let (c, l, now) = advance_local(cycle, local, step, duration, cycles, flags & FINISHED != 0);
    finish_lane(c, l, now, duration, flags)
}

/// [`step_lane`] for the update's branch-free loop: [`advance_local_near`], with its
/// flag (false: the lane is left as it was and must be redone by [`step_lane`]).
#[inline(always)]
pub(super) fn step_lane_near(
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
pub(super) fn finish_lane(c: i32, l: f32, now: bool, duration: f32, flags: u32) -> (i32, f32, u32, f32) {
    let flags = flags | if now { FINISHED } else { 0 };
    let rewound = flags & (FINISHED | CLAMP) == FINISHED;
    (c, l, flags, shown_time(c, l, duration, flags & PING_PONG != 0, rewound))
}

/// `late` bit: the clip's columns come from [`AtlasClip::frame_pair`].
pub(super) const LATE_CLIP: u32 = 1;
/// `late` bit: the step crossed more than one cycle and is redone by [`step_lane`].
pub(super) const LATE_STEP: u32 = 2;

/// A fading clip B is cleared once its weight is at most this (it is then invisible; the
/// slack absorbs the rounding of `weight + rate · dt` summed over the fade).
pub(super) const FADE_DONE: f32 = 1e-5;

/// Below this many characters [`Crowd::update_parallel`] runs [`Crowd::update`].
pub(super) const PARALLEL_MIN: usize = 4096;

/// Fewest characters a thread of [`Crowd::update_parallel`] is given.
pub(super) const PER_THREAD_MIN: usize = 1024;

/// Characters in one block of the update: their clip A is advanced in one branch-free
/// loop, then the block's blends are applied while its records (4 KiB) are still in L1.
pub(super) const BLOCK: usize = 64;

/// `Crowd::blend_of` of a character without clip B.
pub(super) const NO_BLEND: u32 = u32::MAX;

/// `Blend::clip` of an entry whose fade ended in the update under way (dropped after it).
pub(super) const ENDED: u32 = u32::MAX;

/// One clip's playback constants, in the form the update loop reads.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct ClipParams {
    pub(super) duration: f32,
    /// Which rule [`wrap_shown`] applies: a looping clip (positive, finite duration)
    /// gives its duration (its end wraps to 0), a clamped one (finite, non-negative
    /// duration) `+∞`, any other clip NaN (its characters' columns come from
    /// [`AtlasClip::frame_pair`]).
    pub(super) span: f32,
    pub(super) rate: f32,
    pub(super) first: u32,
    /// `last` as a float, for [`frames_fast`] (clips of 2²³ columns or more get a NaN
    /// span instead, so their characters all take the exact path).
    pub(super) cap: f32,
}

impl ClipParams {
    pub(super) fn new(c: &AtlasClip) -> Self {
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
pub(super) fn frames_slow(clips: &[AtlasClip], clip: u32, time: f32) -> (u32, u32, f32) {
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
pub(super) fn wrap_shown(t: f32, duration: f32, span: f32) -> (f32, bool) {
    let w = if (t >= duration) & (span < f32::INFINITY) { 0.0 } else { t };
    (w, span.is_nan())
}

/// [`AtlasClip::frame_pair`] of a time `wrap_shown` or `advance` returned, same
/// results without branches: columns `frame0`, `frame1` and the factor.
#[cfg(test)]
pub(super) fn frames(time: f32, rate: f32, first: u32, last: u32) -> (u32, u32, f32) {
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
pub(super) const MAGIC: f32 = 8_388_608.0;

/// [`frames`] for a clip of fewer than 2²³ columns, whose last column index is `cap`
/// (as a float), in operations that vectorize (Rust's saturating float-to-int casts do
/// not, on AVX2): `pos` is capped at `cap` first, which changes nothing below `last` and
/// gives the same clamped end above it; its floor is then found with float adds of 2²³
/// (round to nearest, minus 1 where that rounded up) and read from the sum's bits.
#[inline(always)]
pub(super) fn frames_fast(time: f32, rate: f32, first: u32, cap: f32) -> (u32, u32, f32) {
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
pub(super) struct Blend {
    /// The character's index.
    pub(super) character: u32,
    /// Clip index ([`ENDED`] once the fade has ended during an update).
    pub(super) clip: u32,
    pub(super) play: Play,
    pub(super) weight: f32,
    /// Weight change per second: 0 for a steady blend, negative for a fade.
    pub(super) rate: f32,
}
