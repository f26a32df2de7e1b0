//! Clip events: names at times in a clip (`foot_down`, `fire`, `sound:step`), and the
//! query that lists, in the order they were passed, the events one playback step crossed.
//!
//! A step goes from unwrapped position `from` to `to` (see [`super::playback`]). Moving
//! forwards it fires the events whose position `p` satisfies `from < p ≤ to`; moving
//! backwards, those with `to ≤ p < from`. So an event fires when playback passes or lands
//! on it, never for the position a step starts on, and a zero step fires nothing. Each
//! cycle a looping playback crosses fires its events again, in order, and a ping-pong
//! cycle that runs backwards fires them in reverse order. In ping-pong mode an event at
//! the very end (or start) of the clip, where the direction turns, fires once per turn.
//!
//! The query writes into a caller-owned buffer ([`crossed_into`]) or calls a closure
//! ([`for_each_crossed`]); neither allocates (the buffer only grows when a step fires more
//! events than it ever held).
//!
//! glTF files carry events in the animation's `extras` as
//! `{"animEvents": [{"name": "foot_down", "time": 0.4}, …]}`; the project's importer reads
//! them and its exporter writes them.
//!
//! ```
//! use anim_core::clip::events::{crossed_into, ClipEvent};
//! use anim_core::clip::playback::{LoopMode, Playback};
//!
//! let events = [ClipEvent::new("step_l", 0.25), ClipEvent::new("step_r", 0.75)];
//! let mut p = Playback::new(1.0, LoopMode::Repeat);
//! let mut fired = Vec::with_capacity(8);
//! let step = p.advance(1.5); // 0 → 1.5: crosses 0.25, 0.75 and 1.25
//! crossed_into(&events, &p, step.from, step.to, &mut fired);
//! let names: Vec<_> = fired.iter().map(|f| events[f.index].name.as_str()).collect();
//! assert_eq!(names, ["step_l", "step_r", "step_l"]);
//! ```

use super::playback::{LoopMode, Playback};
use super::track::{Interpolation, Track};
use thiserror::Error;

/// A named event at a time in a clip.
#[derive(Clone, Debug, PartialEq)]
pub struct ClipEvent {
    /// Event name.
    pub name: String,
    /// Time in the clip, seconds, in `[0, duration]`.
    pub time: f32,
}

impl ClipEvent {
    /// An event.
    pub fn new(name: impl Into<String>, time: f32) -> Self {
        Self { name: name.into(), time }
    }
}

/// Why a clip's events were refused.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum EventError {
    /// An event time is NaN, infinite or outside the clip.
    #[error("clip {clip:?}: event {index} ({name:?}) at time {time} is outside [0, {duration}]")]
    TimeOutOfRange {
        /// Clip name.
        clip: String,
        /// Index of the event in the list given.
        index: usize,
        /// Its name.
        name: String,
        /// Its time.
        time: f32,
        /// The clip's duration.
        duration: f32,
    },
}

pub(crate) fn check_events(clip: &str, events: &[ClipEvent], duration: f32) -> Result<(), EventError> {
    for (index, e) in events.iter().enumerate() {
        if !(e.time.is_finite() && (0.0..=duration).contains(&e.time)) {
            return Err(EventError::TimeOutOfRange {
                clip: clip.to_owned(),
                index,
                name: e.name.clone(),
                time: e.time,
                duration,
            });
        }
    }
    Ok(())
}

/// One event a step crossed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FiredEvent {
    /// Index into the event list queried.
    pub index: usize,
    /// Unwrapped position where the playback crossed it.
    pub position: f64,
    /// Cycle in which it was crossed.
    pub cycle: i64,
}

/// Clears `out` and fills it with the events of `events` (sorted by time, as
/// [`Clip::events`](super::Clip::events) returns them) crossed between unwrapped positions `from` and
/// `to` of `playback`, in the order they were crossed.
pub fn crossed_into(events: &[ClipEvent], playback: &Playback, from: f64, to: f64, out: &mut Vec<FiredEvent>) {
    out.clear();
    for_each_crossed(events, playback, from, to, |f| out.push(f));
}

/// Calls `f` for every event crossed between `from` and `to`, in order; see
/// [`crossed_into`].
pub fn for_each_crossed(events: &[ClipEvent], playback: &Playback, from: f64, to: f64, mut f: impl FnMut(FiredEvent)) {
    let d = f64::from(playback.duration());
    if from == to || events.is_empty() || d <= 0.0 || !from.is_finite() || !to.is_finite() {
        return;
    }
    let forward = to > from;
    let (lo, hi) = if forward { (from, to) } else { (to, from) };
    // One cycle before the range too: its end sits on the range's first cycle boundary.
    let mut k0 = floor_i64(lo / d).saturating_sub(1);
    let mut k1 = floor_i64(hi / d);
    if let Some(n) = playback.repetitions {
        k0 = k0.max(0);
        k1 = k1.min(i64::from(n) - 1);
    }
    if k1 < k0 {
        return;
    }
    let ping_pong = playback.mode == LoopMode::PingPong;
    let first_cycle = playback.repetitions.map(|_| 0);
    let mut visit = |k: i64| {
        let base = k as f64 * d;
        if !ping_pong {
            // Every cycle runs forwards: the common case, without the turn's rules. Events
            // are sorted by time and rounding is monotonic, so positions only grow along
            // the list: the scan stops at the first one past the step's end.
            if forward {
                for (index, e) in events.iter().enumerate() {
                    let p = base + f64::from(e.time);
                    if p > to {
                        break;
                    }
                    if from < p {
                        f(FiredEvent { index, position: p, cycle: k });
                    }
                }
            } else {
                for (index, e) in events.iter().enumerate().rev() {
                    let p = base + f64::from(e.time);
                    if p < to {
                        break;
                    }
                    if p < from {
                        f(FiredEvent { index, position: p, cycle: k });
                    }
                }
            }
            return;
        }
        let cycle_forward = k.rem_euclid(2) == 0;
        // Position order inside the cycle equals time order when the cycle runs forwards.
        let ascending = forward == cycle_forward;
        let mut check = |index: usize| {
            let e = f64::from(events[index].time);
            let local = if cycle_forward { e } else { d - e };
            // In ping-pong the turn at a cycle's start is the previous cycle's end.
            if ping_pong && local == 0.0 && first_cycle != Some(k) {
                return;
            }
            let p = base + local;
            let hit = if forward { from < p && p <= to } else { to <= p && p < from };
            if hit {
                f(FiredEvent { index, position: p, cycle: k });
            }
        };
        if ascending {
            for index in 0..events.len() {
                check(index);
            }
        } else {
            for index in (0..events.len()).rev() {
                check(index);
            }
        }
    };
    // Every position of cycle `k` lies in [base, base + d] as computed (event times are in
    // [0, d] and rounding is monotonic), and a hit lies in [lo, hi]: a cycle that ends
    // before the range or starts after it has none (usually the cycle before the range,
    // kept above for the event at its end).
    let outside = |k: i64| {
        let base = k as f64 * d;
        base + d < lo || base > hi
    };
    if forward {
        for k in (k0..=k1).filter(|&k| !outside(k)) {
            visit(k);
        }
    } else {
        for k in (k0..=k1).rev().filter(|&k| !outside(k)) {
            visit(k);
        }
    }
}

/// `x.floor() as i64` (saturating alike) without a call to the C library's `floor`,
/// which the x86-64 baseline (no SSE4.1 rounding instruction) would make.
#[inline]
fn floor_i64(x: f64) -> i64 {
    let k = x as i64;
    k.saturating_sub(i64::from((k as f64) > x))
}

/// Events where a scalar curve crosses `threshold`: `rising` when it goes from below to at
/// or above, `falling` when it goes back below. For a foot-contact curve (1 = planted)
/// with `rising = "foot_down"`, `falling = "foot_up"` these are the foot's plant and lift
/// times. Linear and cubic keys are crossed at the linear interpolation of their key
/// values (exact for linear keys), step keys at the key where the value changes.
/// Allocates the returned list (load-time work).
pub fn threshold_events(curve: &Track<f32>, threshold: f32, rising: &str, falling: &str) -> Vec<ClipEvent> {
    let mut out = Vec::new();
    let times = curve.times();
    let step = curve.interpolation() == Interpolation::Step;
    for k in 1..times.len() {
        let (t0, t1) = (times[k - 1], times[k]);
        let (v0, v1) = (*curve.key_value(k - 1), *curve.key_value(k));
        let up = v0 < threshold && v1 >= threshold;
        let down = v0 >= threshold && v1 < threshold;
        if !(up || down) {
            continue;
        }
        let t = if step || v1 == v0 { t1 } else { t0 + (threshold - v0) / (v1 - v0) * (t1 - t0) };
        out.push(ClipEvent::new(if up { rising } else { falling }, t.clamp(t0, t1)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::floor_i64;

    /// The same integer as `floor` then a saturating cast, on integers, halves, values a
    /// rounding step off an integer, and values beyond the `i64` range.
    #[test]
    fn floor_i64_is_floor() {
        let mut xs = vec![0.0, -0.0, 1e300, -1e300, 9.3e18, -9.3e18, 2f64.powi(63), -(2f64.powi(63))];
        for k in -50i32..50 {
            let x = f64::from(k);
            xs.extend([x, x + 0.5, x - 0.5, x.next_up(), x.next_down(), x * 1e9 + 0.25]);
        }
        for x in xs {
            assert_eq!(floor_i64(x), x.floor() as i64, "x = {x}");
        }
    }
}
