//! Sync groups: clips that share one normalized phase, so a walk and a run blended
//! together plant their feet together.
//!
//! Every update, among the group's clips with a non-zero weight, the one with the
//! highest weight **leads**. The group advances by the weight-averaged rate of its
//! members, `r = Σ wᵢ·sᵢ/dᵢ / Σ wᵢ` cycles a second (speed `sᵢ`, duration `dᵢ`; the
//! cyclic form of Godot's `L = Σ wᵢlᵢ / Σ wᵢ`), so a walk/run blend neither rushes the
//! walk nor drags the run: the leader moves by `r·d_leader·dt` seconds and every **follower**
//! is placed where the leader is:
//!
//! - **phase** mode: at the leader's normalized time `t_leader / d_leader`;
//! - **markers** mode (Unreal's marker sync): at the same fraction between the same two
//!   markers as the leader. Markers are the clips' foot events (`foot_down:<curve>`,
//!   `foot_up:<curve>`, see [`crate::clips::foot_markers`]). If the leader is 25% of the
//!   way from `foot_down:l` to `foot_up:l`, each follower goes 25% of the way between its
//!   own `foot_down:l` and the next `foot_up:l`, so feet plant and lift together even when
//!   the clips spend different fractions of their cycles on the ground. Markers at the same
//!   time are ordered lift before plant, so an interval starts at a plant and ends at a lift
//!   where a clip has both at once. A follower without the leader's two markers follows the
//!   phase.
//!
//! When the lead passes to another clip, the new leader first takes its place from the
//! old one, so the group's phase never jumps. A clip that joins the group (its weight
//! becomes non-zero) is placed without firing events or moving the root. Synced clips loop
//! forwards (or backwards, when the rate is negative).

/// One marker of a clip: a time and an interned name.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Marker {
    /// Time in the clip, `[0, duration)`.
    pub time: f32,
    /// Interned name (the same id in every clip of a graph).
    pub name: u16,
    /// A plant (`foot_down:`), else a lift.
    pub down: bool,
}

/// A clip's markers, sorted by time (lifts before plants at equal times, then by name).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MarkerTrack {
    duration: f32,
    markers: Vec<Marker>,
}

impl MarkerTrack {
    /// Markers of a clip of `duration` seconds; times are brought into `[0, duration)`.
    pub fn new(duration: f32, mut markers: Vec<Marker>) -> Self {
        for m in &mut markers {
            if !(m.time.is_finite() && m.time >= 0.0 && m.time < duration) {
                m.time = if m.time.is_finite() && duration > 0.0 { m.time.rem_euclid(duration) } else { 0.0 };
                if m.time >= duration {
                    m.time = 0.0;
                }
            }
        }
        markers.sort_by(|a, b| a.time.total_cmp(&b.time).then(a.down.cmp(&b.down)).then(a.name.cmp(&b.name)));
        Self { duration, markers }
    }

    /// The markers.
    pub fn markers(&self) -> &[Marker] {
        &self.markers
    }

    /// True without markers (or for a clip of duration 0).
    pub fn is_empty(&self) -> bool {
        self.markers.is_empty() || self.duration <= 0.0
    }

    /// The markers around clip time `t`: the names of the last marker at or before `t`
    /// and of the next one after it (cyclically), and how far `t` is between them.
    pub fn locate(&self, t: f32) -> Option<(u16, u16, f32)> {
        if self.is_empty() {
            return None;
        }
        let (n, d) = (self.markers.len(), self.duration);
        let k = self.markers.partition_point(|m| m.time <= t);
        let (prev, a) = if k == 0 { (n - 1, self.markers[n - 1].time - d) } else { (k - 1, self.markers[k - 1].time) };
        let (next, b) = if k < n { (k, self.markers[k].time) } else { (0, self.markers[0].time + d) };
        let f = if b > a { ((t - a) / (b - a)).clamp(0.0, 1.0) } else { 0.0 };
        Some((self.markers[prev].name, self.markers[next].name, f))
    }

    /// The clip time at fraction `f` from a marker named `from` to the next marker named
    /// `to` after it; of several markers named `from`, the last one at or before `near`
    /// (cyclically). `None` when this clip lacks either name.
    pub fn place(&self, from: u16, to: u16, f: f32, near: f32) -> Option<f32> {
        if self.is_empty() {
            return None;
        }
        let (n, d) = (self.markers.len(), self.duration);
        let back = |m: &Marker| (near - m.time).rem_euclid(d);
        let i = (0..n)
            .filter(|&i| self.markers[i].name == from)
            .min_by(|&a, &b| back(&self.markers[a]).total_cmp(&back(&self.markers[b])))?;
        let steps = (1..=n).find(|s| self.markers[(i + s) % n].name == to)?;
        let j = (i + steps) % n;
        let a = self.markers[i].time;
        let b = if j > i { self.markers[j].time } else { self.markers[j].time + d };
        let t = a + f.clamp(0.0, 1.0) * (b - a);
        Some(if t >= d { t - d } else { t })
    }
}

/// The signed distance a synced clip moves from `from` to `to` (clip times in
/// `[0, duration)`) going forwards when `forward`, else backwards: in `[0, duration)` or
/// `(−duration, 0]`.
pub fn cyclic_step(from: f32, to: f32, duration: f32, forward: bool) -> f32 {
    if duration <= 0.0 {
        return 0.0;
    }
    if forward { wrap(to - from, duration) } else { -wrap(from - to, duration) }
}

/// `x.rem_euclid(d)` for `d > 0`, the same value bit for bit, without the C library's
/// `fmodf` when `x` is less than one period from `[0, d)` (the usual case for clip times
/// and steps; `fmodf` costs some forty instructions a call).
#[inline]
pub(crate) fn wrap(x: f32, d: f32) -> f32 {
    if x >= 0.0 && x < d {
        // `x % d == x` exactly.
        x
    } else if x < 0.0 && x > -d {
        // `x % d == x` exactly, and `rem_euclid` adds `d` once.
        x + d
    } else {
        x.rem_euclid(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_equals_rem_euclid_bit_for_bit() {
        let ds = [1.0f32, 0.8333333, 1.3, 2.7182817, 1e-3, 1e6, f32::MIN_POSITIVE, f32::INFINITY, f32::NAN];
        let mut xs = vec![0.0f32, -0.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, f32::MAX, -f32::MAX];
        for &d in &ds {
            for k in -3..=3 {
                let b = k as f32 * d;
                // Each multiple of d and its neighbours: the edges of the fast paths.
                xs.extend([
                    b,
                    f32::from_bits(b.to_bits().wrapping_add(1)),
                    f32::from_bits(b.to_bits().wrapping_sub(1)),
                ]);
            }
        }
        let mut seed = 0x2545_f491_u32;
        for _ in 0..20_000 {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            xs.push((seed as f32 / u32::MAX as f32 - 0.5) * 8.0);
        }
        for &d in &ds {
            for &x in &xs {
                let (a, b) = (wrap(x, d), x.rem_euclid(d));
                assert!(
                    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
                    "wrap({x}, {d}) = {a}, rem_euclid = {b}"
                );
            }
        }
    }

    fn m(time: f32, name: u16, down: bool) -> Marker {
        Marker { time, name, down }
    }

    #[test]
    fn walk_to_run_maps_stance_to_stance() {
        // Names: 0 = down l, 1 = up l, 2 = down r, 3 = up r. The walk (1 s) lifts one foot
        // as it plants the other; the run (0.7 s) has flight phases.
        let walk = MarkerTrack::new(1.0, vec![m(1.0, 0, true), m(0.5, 1, false), m(0.5, 2, true), m(1.0, 3, false)]);
        let run =
            MarkerTrack::new(0.7, vec![m(0.0, 0, true), m(0.266, 1, false), m(0.35, 2, true), m(0.616, 3, false)]);
        // A quarter into the walk: half way through the left stance (plant l → lift l).
        let (a, b, f) = walk.locate(0.25).unwrap();
        assert_eq!((a, b), (0, 1));
        assert!((f - 0.5).abs() < 1e-6);
        let t = run.place(a, b, f, 0.0).unwrap();
        assert!((t - 0.133).abs() < 1e-6, "{t}");
        // Three quarters in: the right stance.
        let (a, b, f) = walk.locate(0.75).unwrap();
        assert_eq!((a, b), (2, 3));
        let t = run.place(a, b, f, 0.5).unwrap();
        assert!((t - (0.35 + 0.5 * 0.266)).abs() < 1e-5, "{t}");
        // The run's flight (lift l → plant r) maps to the walk's instant at 0.5.
        let (a, b, f) = run.locate(0.3).unwrap();
        assert_eq!((a, b), (1, 2));
        assert_eq!(walk.place(a, b, f, 0.4), Some(0.5));
        assert!((cyclic_step(0.9, 0.1, 1.0, true) - 0.2).abs() < 1e-6);
        assert!((cyclic_step(0.1, 0.9, 1.0, false) + 0.2).abs() < 1e-6);
    }
}
