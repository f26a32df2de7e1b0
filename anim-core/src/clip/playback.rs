//! Playback state: where a clip is, how fast it moves, and what happens at its ends.
//!
//! A [`Playback`] keeps one **unwrapped position** `u` in seconds: it grows without bound
//! while a looping clip plays forwards and shrinks while it plays backwards. The clip time
//! actually sampled is a function of `u` ([`Playback::time_at`]): for
//! [`LoopMode::Repeat`] it is `u` wrapped into the clip; for [`LoopMode::PingPong`] every
//! odd cycle runs backwards. Because `u` is continuous, everything that depends on how far
//! the clip moved in one step (events crossed, root motion) is computed from the pair
//! `(u before, u after)` without special cases for wraps, reverse play or steps that cross
//! several loops.
//!
//! The state itself is stored in cycle-local form: an `i32` cycle index and an `f32` time
//! inside that cycle (`u = cycle · duration + local`, derived in `f64` when asked), so
//! that a step is `f32` arithmetic the crowd's update loop shares (8 AVX2 lanes). Steps
//! are `dt · speed` in `f32`; one step moves at most 2²² cycles.
//!
//! - `speed` scales time; a negative speed plays backwards.
//! - `repetitions` limits the number of cycles (`None` plays forever). A finite playback
//!   spans `u ∈ [0, repetitions · duration]`; reaching either end finishes it:
//!   [`Step::finished`] is true for exactly the step that got there.
//! - `clamp_when_finished` holds the final frame after finishing; otherwise the playback
//!   shows the start frame again (as three.js's `AnimationAction` does without
//!   `clampWhenFinished`).
//!
//! A one-shot clip is `LoopMode::Repeat` with `repetitions = Some(1)` ([`Playback::once`]).
//! Nothing here allocates.
//!
//! # Column form
//! Playback stored as columns (one array per field, as a crowd stores thousands) steps with
//! the same arithmetic on plain values: [`advance_local`], [`advance_local_near`] (its
//! branch-free form for the usual step, which vectorizes) and [`shown_time`], over the
//! state [`Playback::cycle_local`] and [`Playback::cycles`] give and
//! [`Playback::from_parts`] takes back. A column playback and a [`Playback`] stepped alike
//! agree bit for bit.
//!
//! ```
//! use anim_core::clip::{LoopMode, Playback};
//!
//! // A 2-second clip played 3 times, ping-pong, at double speed.
//! let mut p = Playback::new(2.0, LoopMode::PingPong).with_repetitions(Some(3)).with_speed(2.0);
//! let s = p.advance(1.5);                 // u = 3: second cycle, which runs backwards
//! assert_eq!(p.time(), 1.0);
//! assert!(!s.finished);
//! let s = p.advance(10.0);                // past the end of the third cycle
//! assert!(s.finished && p.is_finished());
//! assert_eq!(p.time(), 2.0);              // cycle 3 runs forwards and ends at the clip's end
//! ```

/// How the clip continues at its end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LoopMode {
    /// Every cycle runs from the start to the end of the clip.
    #[default]
    Repeat,
    /// Even cycles run forwards, odd ones backwards.
    PingPong,
}

/// What one [`Playback::advance`] did: the unwrapped positions before and after.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Step {
    /// Unwrapped position before the step.
    pub from: f64,
    /// Unwrapped position after the step (clamped to the playback's span).
    pub to: f64,
    /// True for the one step that reached the end of a finite playback.
    pub finished: bool,
}

/// The playback state of one clip instance. See the [module docs](self).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Playback {
    duration: f32,
    /// Loop mode.
    pub mode: LoopMode,
    /// Time scale (1 = normal speed, negative = backwards).
    pub speed: f32,
    /// Number of cycles to play; `None` loops forever.
    pub repetitions: Option<u32>,
    /// Hold the last frame after finishing (otherwise show the start frame).
    pub clamp_when_finished: bool,
    /// Cycle index of the position (wrapping for an endless playback).
    cycle: i32,
    /// Position inside the cycle, in `[0, duration)` (`= duration` only at the end of a
    /// finite playback).
    local: f32,
    last: Step,
    finished: bool,
}

impl Playback {
    /// A playback of a clip lasting `duration` seconds, from the start, speed 1, looping
    /// forever, clamping when finished. A negative or non-finite duration counts as 0.
    pub fn new(duration: f32, mode: LoopMode) -> Self {
        let duration = if duration.is_finite() && duration > 0.0 { duration } else { 0.0 };
        Self {
            duration,
            mode,
            speed: 1.0,
            repetitions: None,
            clamp_when_finished: true,
            cycle: 0,
            local: 0.0,
            last: Step::default(),
            finished: false,
        }
    }

    /// A one-shot playback: one forward cycle, then it holds its last frame.
    pub fn once(duration: f32) -> Self {
        Self::new(duration, LoopMode::Repeat).with_repetitions(Some(1))
    }

    /// Sets the time scale.
    #[must_use]
    pub fn with_speed(mut self, speed: f32) -> Self {
        self.speed = speed;
        self
    }

    /// Sets the number of cycles (`None`: forever).
    #[must_use]
    pub fn with_repetitions(mut self, repetitions: Option<u32>) -> Self {
        self.repetitions = repetitions;
        self
    }

    /// Sets what a finished playback shows.
    #[must_use]
    pub fn with_clamp_when_finished(mut self, clamp: bool) -> Self {
        self.clamp_when_finished = clamp;
        self
    }

    /// Clip length in seconds.
    pub fn duration(&self) -> f32 {
        self.duration
    }

    /// The unwrapped position `u` in seconds, derived from the cycle index and the time
    /// inside the cycle the state holds: `cycle · duration + local`, in `f64`.
    pub fn position(&self) -> f64 {
        f64::from(self.cycle) * f64::from(self.duration) + f64::from(self.local)
    }

    /// The last step taken ([`Step::default`] before the first).
    pub fn last_step(&self) -> Step {
        self.last
    }

    /// True once a finite playback reached an end (until [`Playback::seek`]).
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// The span of `u`: `[0, repetitions · duration]`, or unbounded.
    pub fn span(&self) -> (f64, f64) {
        match self.repetitions {
            Some(n) => (0.0, f64::from(n) * f64::from(self.duration)),
            None => (f64::NEG_INFINITY, f64::INFINITY),
        }
    }

    /// Moves to unwrapped position `u` (clamped into the span) and clears `finished`.
    /// The last step becomes the empty step at `u`, so no event fires for the jump.
    pub fn seek(&mut self, u: f64) {
        let (lo, hi) = self.span();
        let u = if u.is_finite() { u.clamp(lo, hi) } else { 0.0 };
        let (k, local, _) = self.cycle_of(u);
        // Parity is what matters for an endless playback past 2³¹ cycles: truncate.
        (self.cycle, self.local) = (k as i32, local as f32);
        self.finished = false;
        let u = self.position();
        self.last = Step { from: u, to: u, finished: false };
    }

    /// Advances by `dt · speed` seconds (an `f32` product). A non-finite product is
    /// treated as no movement.
    pub fn advance(&mut self, dt: f32) -> Step {
        let from = self.position();
        let (cycle, local, finished) =
            advance_local(self.cycle, self.local, dt * self.speed, self.duration, self.cycles(), self.finished);
        self.finished |= finished;
        (self.cycle, self.local) = (cycle, local);
        self.last = Step { from, to: self.position(), finished };
        self.last
    }

    /// `repetitions` as the shared arithmetic reads it: [`FOREVER`] for `None`, counts
    /// above [`MAX_CYCLES`] capped there.
    pub fn cycles(&self) -> i32 {
        self.repetitions.map_or(FOREVER, |n| n.min(MAX_CYCLES as u32) as i32)
    }

    /// The state in cycle-local form: cycle index and time inside the cycle.
    pub fn cycle_local(&self) -> (i32, f32) {
        (self.cycle, self.local)
    }

    /// A playback with every field given: the inverse of [`Playback::cycle_local`],
    /// [`Playback::cycles`] and the public fields, for playback stored as columns (a crowd's
    /// arrays read back). `cycles` as [`Playback::cycles`] gives it ([`FOREVER`]: endless).
    pub fn from_parts(
        duration: f32,
        mode: LoopMode,
        speed: f32,
        cycles: i32,
        clamp_when_finished: bool,
        (cycle, local): (i32, f32),
        finished: bool,
    ) -> Self {
        let repetitions = if cycles >= 0 { Some(cycles as u32) } else { None };
        let mut p = Self::new(duration, mode).with_speed(speed).with_repetitions(repetitions);
        p.clamp_when_finished = clamp_when_finished;
        (p.cycle, p.local) = (cycle, local);
        p.finished = finished;
        let u = p.position();
        p.last = Step { from: u, to: u, finished: false };
        p
    }

    /// The clip time shown now.
    pub fn time(&self) -> f32 {
        shown_time(
            self.cycle,
            self.local,
            self.duration,
            self.mode == LoopMode::PingPong,
            self.finished && !self.clamp_when_finished,
        )
    }

    /// Cycle index and direction of unwrapped position `u`: `(k, local, forward)` where
    /// `local ∈ [0, duration)` is the position inside cycle `k`. At the very end of a
    /// finite playback the last cycle is reported with `local = duration`.
    pub fn cycle_of(&self, u: f64) -> (i64, f64, bool) {
        let d = f64::from(self.duration);
        if d <= 0.0 {
            return (0, 0.0, true);
        }
        let mut k = (u / d).floor();
        if let Some(n) = self.repetitions
            && n > 0
            && k >= f64::from(n)
        {
            k = f64::from(n) - 1.0;
        }
        let local = (u - k * d).clamp(0.0, d);
        let k = k as i64;
        let forward = self.mode == LoopMode::Repeat || k.rem_euclid(2) == 0;
        (k, local, forward)
    }

    /// The clip time at unwrapped position `u`.
    pub fn time_at(&self, u: f64) -> f32 {
        let (k, local, _) = self.cycle_of(u);
        shown_time(k as i32, local as f32, self.duration, self.mode == LoopMode::PingPong, false)
    }
}

/// `Playback::cycles` of an endless playback.
pub const FOREVER: i32 = -1;

/// Most cycles a finite playback counts (larger repetition counts play this many), so
/// that a cycle index plus one step's `MAX_STEP_CYCLES` (2²²) stays inside `i32`.
pub const MAX_CYCLES: i32 = 1 << 30;

/// Most cycles one step moves: a longer step moves this many (the local time is then
/// clamped into the cycle). `2²²` keeps every cycle count exact in an `f32`.
const MAX_STEP_CYCLES: f32 = 4_194_304.0;

/// `1.5 · 2²³`: adding it to an integer-valued float of magnitude at most `2²²` gives a
/// float in `[2²³, 2²⁴)` whose low mantissa bits are that integer plus `2²²` (two's
/// complement after subtracting the constant's bits).
const MAGIC_I: f32 = 12_582_912.0;

/// [`Playback::advance`]'s arithmetic on plain values, shared with the crowd's update
/// loop: from cycle `cycle` at local time `local`, moving by `step = dt · speed`, for
/// `cycles` cycles of `duration` ([`FOREVER`]: endless), `finished` before the step:
/// returns the new cycle, local time and whether this step finished the playback.
///
/// It is [`advance_local_near`] wherever that applies (a step that leaves the local time
/// within one cycle of the current one: every usual step), else the same with the cycle
/// count found by a division.
#[inline(always)]
pub fn advance_local(
    cycle: i32,
    local: f32,
    step: f32,
    duration: f32,
    cycles: i32,
    finished: bool,
) -> (i32, f32, bool) {
    let (c, l, now, near) = advance_local_near(cycle, local, step, duration, cycles, finished);
    if near {
        return (c, l, now);
    }
    let step = if step.is_finite() { step } else { 0.0 };
    let to = local + step;
    if duration <= 0.0 {
        // A clip of duration 0 has no inside: any move leaves its cycle (and finishes it).
        let k = if step > 0.0 {
            MAX_STEP_CYCLES as i32
        } else if step < 0.0 {
            -(MAX_STEP_CYCLES as i32)
        } else {
            0
        };
        return settle(cycle, local, k, 0.0, step, duration, cycles, finished);
    }
    let q = select_clamp(to / duration, -MAX_STEP_CYCLES, MAX_STEP_CYCLES);
    // floor(q) with float adds, read as an integer from the sum's bits.
    let near = (q + MAGIC_I) - MAGIC_I;
    let kf = if near > q { near - 1.0 } else { near };
    let k = (kf + MAGIC_I).to_bits().wrapping_sub(MAGIC_I.to_bits()) as i32;
    let l = select_clamp(to - kf * duration, 0.0, duration);
    settle(cycle, local, k, l, step, duration, cycles, finished)
}

/// [`advance_local`] for a step that ends within one cycle of the current one (local
/// time `local + step ∈ [−duration, 2 · duration)`, `duration > 0`), without a
/// division: branch-free `f32`/`i32` arithmetic that rounds the same in every
/// instruction set, which the crowd's update loop runs over columns (8 AVX2 lanes, bit
/// for bit the baseline's). The last value says whether the step was near; when it is
/// not the others are meaningless and the crowd redoes that lane with [`advance_local`].
#[inline(always)]
pub fn advance_local_near(
    cycle: i32,
    local: f32,
    step: f32,
    duration: f32,
    cycles: i32,
    finished: bool,
) -> (i32, f32, bool, bool) {
    let to = local + step;
    // False for a non-finite `to` (a non-finite step) and for a clip of duration 0.
    let near = (duration > 0.0) & (to >= -duration) & (to < duration + duration);
    let k = (to >= duration) as i32 - (to < 0.0) as i32;
    // `to ∓ duration` (exact for `to ∈ [d, 2d)`, Sterbenz), or `to` itself.
    let l = to - k as f32 * duration;
    let (c, l, now) = settle(cycle, local, k, l, step, duration, cycles, finished);
    (c, l, now, near)
}

/// The end of a step: the cycle moved by `k`, local time `l ∈ [0, duration]` inside it;
/// normalizes `l = duration` into the next cycle, then holds a finite playback at the end
/// it reached.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn settle(
    cycle: i32,
    local: f32,
    k: i32,
    l: f32,
    step: f32,
    duration: f32,
    cycles: i32,
    finished: bool,
) -> (i32, f32, bool) {
    // A local time rounded up to the duration starts the next cycle.
    let wrap = (duration > 0.0) & (l >= duration);
    let c = cycle.wrapping_add(k).wrapping_add(wrap as i32);
    let l = if wrap { 0.0 } else { l };
    let bounded = cycles >= 0;
    let last = cycles - 1;
    // `l < duration` now, except for a clip of duration 0 (where `c` moved past any
    // end): past the end is past the last cycle.
    let past_end = c > last;
    let before_start = (c < 0) | ((c == 0) & (l <= 0.0));
    let ends = (past_end & (step > 0.0)) | (before_start & (step < 0.0));
    let now = !finished & bounded & ends;
    // Held at the end: the last cycle's end (cycle 0 at 0 for a count of 0).
    let (end_c, end_l) = if cycles > 0 { (last, duration) } else { (0, 0.0) };
    let (c, l) = if bounded & past_end { (end_c, end_l) } else { (c, l) };
    let (c, l) = if bounded & (c < 0) { (0, 0.0) } else { (c, l) };
    if finished { (cycle, local, false) } else { (c, l, now) }
}

/// `x.clamp(lo, hi)` as two selects: the same result for `lo ≤ hi`, without `clamp`'s
/// check of its bounds (a branch that keeps the crowd's loop from vectorizing).
#[inline(always)]
fn select_clamp(x: f32, lo: f32, hi: f32) -> f32 {
    let x = if x < lo { lo } else { x };
    if x > hi { hi } else { x }
}

/// [`Playback::time`]'s arithmetic on plain values (shared with the crowd like
/// [`advance_local`]): the clip time at local time `local` of cycle `cycle` of a clip of
/// `duration` (non-negative, finite), running odd cycles backwards when `ping_pong`;
/// `0` when `rewound` (finished without clamping).
#[inline(always)]
pub fn shown_time(cycle: i32, local: f32, duration: f32, ping_pong: bool, rewound: bool) -> f32 {
    let odd = cycle & 1 != 0;
    let t = if ping_pong & odd { duration - local } else { local };
    let t = select_clamp(t, 0.0, duration);
    // A clip of duration 0 has one time.
    if rewound | (duration <= 0.0) { 0.0 } else { t }
}

#[cfg(test)]
mod shared_tests {
    use super::*;

    /// The cycle rule of [`Playback::cycle_of`] (integer arithmetic) against the float
    /// one of [`shown_time`], over positions across many cycles, both directions.
    #[test]
    fn shown_time_follows_cycle_of() {
        for mode in [LoopMode::Repeat, LoopMode::PingPong] {
            for reps in [None, Some(1), Some(3)] {
                let p = Playback::new(0.7, mode).with_repetitions(reps);
                for i in -400..400 {
                    let u = f64::from(i) * 0.0173;
                    let (lo, hi) = p.span();
                    let u = u.clamp(lo, hi);
                    let (_, local, forward) = p.cycle_of(u);
                    let t = if forward { local as f32 } else { 0.7 - local as f32 };
                    assert_eq!(p.time_at(u), t.clamp(0.0, 0.7), "{mode:?} {reps:?} u {u}");
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeat_wraps_and_reverse_wraps() {
        let mut p = Playback::new(2.0, LoopMode::Repeat);
        p.advance(2.5);
        assert!((p.time() - 0.5).abs() < 1e-6);
        p.speed = -1.0;
        p.advance(1.0);
        assert!((p.time() - 1.5).abs() < 1e-6);
        assert_eq!(p.position(), 1.5);
    }
}
