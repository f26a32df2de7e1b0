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
//! ```
//! use anim_core::playback::{LoopMode, Playback};
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
    u: f64,
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
            u: 0.0,
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

    /// The unwrapped position `u` in seconds.
    pub fn position(&self) -> f64 {
        self.u
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
        self.u = if u.is_finite() { u.clamp(lo, hi) } else { 0.0 };
        self.finished = false;
        self.last = Step { from: self.u, to: self.u, finished: false };
    }

    /// Advances by `dt · speed` seconds. A non-finite product is treated as no movement.
    pub fn advance(&mut self, dt: f32) -> Step {
        let from = self.u;
        let (to, finished) = advance_position(
            from,
            f64::from(dt) * f64::from(self.speed),
            f64::from(self.duration),
            self.cycles(),
            self.finished,
        );
        self.finished |= finished;
        self.u = to;
        self.last = Step { from, to, finished };
        self.last
    }

    /// `repetitions` as the float the shared arithmetic reads (`+∞` for forever).
    pub(crate) fn cycles(&self) -> f64 {
        self.repetitions.map_or(f64::INFINITY, f64::from)
    }

    /// A playback with every field given (the crowd's columns read back).
    pub(crate) fn from_parts(
        duration: f32,
        mode: LoopMode,
        speed: f32,
        cycles: f64,
        clamp_when_finished: bool,
        u: f64,
        finished: bool,
    ) -> Self {
        let repetitions = if cycles < f64::INFINITY { Some(cycles as u32) } else { None };
        let mut p = Self::new(duration, mode).with_speed(speed).with_repetitions(repetitions);
        p.clamp_when_finished = clamp_when_finished;
        p.u = u;
        p.finished = finished;
        p.last = Step { from: u, to: u, finished: false };
        p
    }

    /// The clip time shown now.
    pub fn time(&self) -> f32 {
        shown_time(
            self.u,
            self.duration,
            self.cycles(),
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
        shown_time(u, self.duration, self.cycles(), self.mode == LoopMode::PingPong, false)
    }
}

/// [`Playback::advance`]'s arithmetic on plain values, shared with the crowd's update
/// loop (which runs it over columns, also compiled for AVX2: it is branch-free and
/// uses only operations that round the same in every instruction set, so both give the
/// same bits). From position `u`, moving by `d = dt · speed`, for `cycles` cycles of
/// `duration` (`+∞`: forever), `finished` before the step: returns the new position
/// and whether this step finished the playback.
#[inline(always)]
pub(crate) fn advance_position(u: f64, d: f64, duration: f64, cycles: f64, finished: bool) -> (f64, bool) {
    let bounded = cycles < f64::INFINITY;
    // `cycles · duration` would be NaN for an endless clip of duration 0.
    let hi = if bounded { cycles * duration } else { f64::INFINITY };
    let lo = if bounded { 0.0 } else { f64::NEG_INFINITY };
    let to = if d.is_finite() { u + d } else { u };
    let ends = ((to >= hi) & (d > 0.0)) | ((to <= lo) & (d < 0.0));
    let now = !finished & bounded & ends;
    let to = clamp64(to, lo, hi);
    (if finished { u } else { to }, now)
}

/// `x.clamp(lo, hi)` as two selects: the same result for `lo ≤ hi`, without `clamp`'s
/// check of its bounds (a branch that keeps the crowd's loop from vectorizing).
#[inline(always)]
fn clamp64(x: f64, lo: f64, hi: f64) -> f64 {
    let x = if x < lo { lo } else { x };
    if x > hi { hi } else { x }
}

/// [`Playback::time`]'s arithmetic on plain values (shared with the crowd like
/// [`advance_position`]): the clip time at position `u` of a playback of `cycles`
/// cycles of `duration` (a non-negative, finite value), running odd cycles backwards
/// when `ping_pong`; `0` when `rewound` (finished without clamping).
#[inline(always)]
pub(crate) fn shown_time(u: f64, duration: f32, cycles: f64, ping_pong: bool, rewound: bool) -> f32 {
    let d = f64::from(duration);
    // The cycle index as a float (exact: it is an integer), held in the last cycle at
    // the end of a finite playback.
    let k = (u / d).floor();
    let k = if (cycles > 0.0) & (k >= cycles) { cycles - 1.0 } else { k };
    let local = clamp64(u - k * d, 0.0, d);
    let odd = k - 2.0 * (k * 0.5).floor() != 0.0;
    let t = if ping_pong & odd { d - local } else { local };
    let t = t as f32;
    let t = if t < 0.0 { 0.0 } else { t };
    let t = if t > duration { duration } else { t };
    // A clip of duration 0 has one time; `u / 0` above is not a number.
    if rewound | (d <= 0.0) { 0.0 } else { t }
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
                    let t = if forward { local } else { 0.7f32 as f64 - local };
                    assert_eq!(p.time_at(u), (t as f32).clamp(0.0, 0.7), "{mode:?} {reps:?} u {u}");
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
