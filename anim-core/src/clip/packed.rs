//! The joint channels of a [`Clip`](super::Clip) laid out for forward playback, the data
//! behind [`Clip::sample_cached`](super::Clip::sample_cached).
//!
//! - **Shared time lines.** Channels whose key times are the same (in every shared asset,
//!   all the channels of a clip: exporters sample every channel at the same times) share
//!   one time line: its key times, the reciprocal of each segment's duration, and one
//!   cursor. A frame finds each time line's segment once, then interpolates every channel
//!   on it.
//! - **Contiguous keys.** Key values of every linear channel sit in one array, the last
//!   key twice, so a segment is two neighbouring entries.
//! - **One list of channels a kind** (translation, rotation, scale), so the loops have no
//!   per-channel dispatch; rotations are slerped four channels at a time
//!   ([`track::slerp4x4`], the same bits as one at a time). Channels that never change are
//!   written from their value; step and cubic-spline channels, and linear ones whose key
//!   spacing has no finite reciprocal, are sampled through their [`Track`].
//! - Components below `2⁻⁴⁰` are stored as zero (see `track::TINY`).

use super::track::{self, Interpolation, JointTracks, Track, TrackValue};
use anim_math::{Quat, Transform, Vec3};
use nalgebra::Quaternion;
use std::collections::HashMap;

/// Which part of a joint's local transform a channel drives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Field {
    Translation = 0,
    Rotation = 1,
    Scale = 2,
}

/// Key times shared by channels: where they are, and the cursor slot that follows them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Timeline {
    /// Start of its `n + 2` entries in [`Packed::times`].
    times: usize,
    /// Start of its `n + 1` entries in [`Packed::inv_dt`].
    inv_dt: usize,
    /// Number of keys `n` (at least 2).
    keys: usize,
    /// Its cursor in the sampling cache's hints: the slot of its first channel.
    slot: usize,
}

/// One linear channel: the joint it drives, its time line and where its keys are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct PackedChannel {
    joint: usize,
    timeline: usize,
    /// Start of its `n + 1` entries in [`Packed::values`].
    values: usize,
}

/// See the [module docs](self).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Packed {
    /// Per time line: `−∞, t₀, …, tₙ₋₁, +∞` (the sentinels make the cursor's bounds
    /// checks unconditional).
    times: Vec<f32>,
    /// Per time line: `1 / (tᵢ₊₁ − tᵢ)` for its `n − 1` segments, then `0` for the
    /// "segment" from the last key on.
    inv_dt: Vec<f32>,
    /// Per linear channel: its keys (`x, y, z, 0` for vectors, `i, j, k, w` for rotations,
    /// normalized by [`Track::new`]), the last one twice.
    values: Vec<[f32; 4]>,
    timelines: Vec<Timeline>,
    translations: Vec<PackedChannel>,
    rotations: Vec<PackedChannel>,
    scales: Vec<PackedChannel>,
    /// Channels with one key, or linear/step ones whose keys are all equal: joint, field
    /// and the value every sample returns.
    constants: Vec<(usize, Field, [f32; 4])>,
    /// Everything else: index into the clip's track sets and field.
    generic: Vec<(usize, Field)>,
}

impl Packed {
    pub(crate) fn new(joints: &[JointTracks]) -> Self {
        let mut p = Packed::default();
        let mut lines = HashMap::new();
        for (set, jt) in joints.iter().enumerate() {
            let vec = |v: &Vec3| [v.x, v.y, v.z, 0.0];
            if let Some(tr) = &jt.translation {
                p.add(&mut lines, set, jt.joint, Field::Translation, tr, vec, vec);
            }
            if let Some(tr) = &jt.rotation {
                let raw = |q: &Quaternion<f32>| [q.i, q.j, q.k, q.w];
                p.add(&mut lines, set, jt.joint, Field::Rotation, tr, raw, |q| raw(&track::normalize_or_identity(q)));
            }
            if let Some(tr) = &jt.scale {
                p.add(&mut lines, set, jt.joint, Field::Scale, tr, vec, vec);
            }
        }
        p
    }

    /// Time lines the sampling cache holds a segment for.
    pub(crate) fn timeline_count(&self) -> usize {
        self.timelines.len()
    }

    /// Files one channel. `raw` gives a stored key's components, `finish` the value
    /// sampling returns at that key (rotations normalized, as [`Track::sample`] does).
    #[allow(clippy::too_many_arguments)]
    fn add<T: TrackValue + PartialEq>(
        &mut self,
        lines: &mut HashMap<Vec<u32>, usize>,
        set: usize,
        joint: usize,
        field: Field,
        track: &Track<T>,
        raw: impl Fn(&T) -> [f32; 4],
        finish: impl Fn(&T) -> [f32; 4],
    ) {
        let times = track.times();
        let n = times.len();
        let interp = track.interpolation();
        let values = track.values();
        let all_equal = interp != Interpolation::CubicSpline && values.iter().all(|v| *v == values[0]);
        // Tiny components are stored as zero (see `track::TINY`).
        let finish = |v: &T| finish(v).map(track::flush_tiny);
        let raw = |v: &T| raw(v).map(track::flush_tiny);
        if n == 1 || all_equal {
            self.constants.push((joint, field, finish(track.key_value(0))));
            return;
        }
        let spacing_ok = times.windows(2).all(|w| {
            let inv = 1.0 / (w[1] - w[0]);
            inv.is_finite() && inv > 0.0
        });
        if interp != Interpolation::Linear || !spacing_ok {
            self.generic.push((set, field));
            return;
        }
        let key: Vec<u32> = times.iter().map(|t| t.to_bits()).collect();
        let timeline = *lines.entry(key).or_insert_with(|| {
            self.timelines.push(Timeline {
                times: self.times.len(),
                inv_dt: self.inv_dt.len(),
                keys: n,
                slot: 3 * set + field as usize,
            });
            self.times.push(f32::NEG_INFINITY);
            self.times.extend_from_slice(times);
            self.times.push(f32::INFINITY);
            self.inv_dt.extend(times.windows(2).map(|w| 1.0 / (w[1] - w[0])));
            // From the last key on, the "segment" is that key to itself, and its fraction 0.
            self.inv_dt.push(0.0);
            self.timelines.len() - 1
        });
        let ch = PackedChannel { joint, timeline, values: self.values.len() };
        // Linear rotation keys were normalized by `Track::new`, and sampling normalizes
        // its result as before: the keys are stored as they are.
        self.values.extend(values.iter().map(&raw));
        self.values.push(raw(&values[n - 1]));
        match field {
            Field::Translation => self.translations.push(ch),
            Field::Rotation => self.rotations.push(ch),
            Field::Scale => self.scales.push(ch),
        }
    }

    /// Samples every joint channel at `t` (already inside the clip's time line) into
    /// `locals`, updating the cursors in `hints`; `segments` holds one entry a time line.
    /// The caller checked that `hints` and `segments` fit the clip and `locals` holds every
    /// animated joint.
    pub(crate) fn sample(
        &self,
        joints: &[JointTracks],
        hints: &mut [usize],
        segments: &mut [(usize, f32)],
        t: f32,
        locals: &mut [Transform],
    ) {
        for (tl, seg) in self.timelines.iter().zip(segments.iter_mut()) {
            *seg = self.segment(tl, &mut hints[tl.slot], t);
        }
        let keys = |ch: &PackedChannel| {
            let (i, s) = segments[ch.timeline];
            (self.values[ch.values + i], self.values[ch.values + i + 1], s)
        };
        for ch in &self.translations {
            let (a, b, s) = keys(ch);
            locals[ch.joint].translation = lerp3(&a, &b, s);
        }
        for ch in &self.scales {
            let (a, b, s) = keys(ch);
            locals[ch.joint].scale = lerp3(&a, &b, s);
        }
        // Four channels at a time through the four-lane slerp (the same bits as one at a
        // time); the last chunk's missing lanes repeat its first channel.
        for chunk in self.rotations.chunks(4) {
            let (mut a, mut b, mut s) = ([[0.0f32; 4]; 4], [[0.0f32; 4]; 4], [0.0f32; 4]);
            for (l, ch) in chunk.iter().enumerate() {
                (a[l], b[l], s[l]) = keys(ch);
            }
            for l in chunk.len()..4 {
                (a[l], b[l], s[l]) = (a[0], b[0], s[0]);
            }
            let q = track::slerp4x4(&a, &b, &s);
            for (ch, q) in chunk.iter().zip(q) {
                locals[ch.joint].rotation = q;
            }
        }
        for &(joint, field, v) in &self.constants {
            let local = &mut locals[joint];
            match field {
                Field::Translation => local.translation = Vec3::new(v[0], v[1], v[2]),
                Field::Rotation => local.rotation = Quat::new_unchecked(Quaternion::new(v[3], v[0], v[1], v[2])),
                Field::Scale => local.scale = Vec3::new(v[0], v[1], v[2]),
            }
        }
        for &(set, field) in &self.generic {
            let jt = &joints[set];
            let hint = &mut hints[3 * set + field as usize];
            let local = &mut locals[jt.joint];
            match field {
                Field::Translation => {
                    if let Some(tr) = &jt.translation {
                        local.translation = tr.sample_with_hint(hint, t);
                    }
                }
                Field::Rotation => {
                    if let Some(tr) = &jt.rotation {
                        local.rotation = tr.sample_with_hint(hint, t);
                    }
                }
                Field::Scale => {
                    if let Some(tr) = &jt.scale {
                        local.scale = tr.sample_with_hint(hint, t);
                    }
                }
            }
        }
    }

    /// The segment of time line `tl` around `t` (segment `i` runs from key `i` to key
    /// `i + 1`) and the fraction of the way along it: `0` before the first key, at a key and
    /// from the last key on, so the result is exactly a key there. `hint` is the number of
    /// keys at or before the last time sampled; forward playback moves it by at most two
    /// keys without a branch, anything else searches.
    #[inline(always)]
    fn segment(&self, tl: &Timeline, hint: &mut usize, t: f32) -> (usize, f32) {
        let n = tl.keys;
        // times[j] is key j − 1, with −∞ before the first and +∞ after the last.
        let times = &self.times[tl.times..tl.times + n + 2];
        let mut k = (*hint).min(n);
        k += usize::from(times[k + 1] <= t);
        k += usize::from(times[k + 1] <= t);
        if !(times[k] <= t && t < times[k + 1]) {
            k = times[1..=n].partition_point(|&x| x <= t);
        }
        *hint = k;
        // Before the first key the fraction clamps to 0, and from the last key on the
        // segment is that key to its copy (fraction 0): a key comes back exactly as stored.
        let i = k.saturating_sub(1);
        // `max`/`min`, not `clamp`: a NaN fraction (∞·0 when `t` is ~1e38 past a last key
        // near −f32::MAX) becomes 0, the key itself.
        #[allow(clippy::manual_clamp)]
        let s = ((t - times[i + 1]) * self.inv_dt[tl.inv_dt + i]).max(0.0).min(1.0);
        (i, s)
    }
}

/// `a·(1 − s) + b·s` on the first three components (as [`Track`]'s linear interpolation).
#[inline(always)]
fn lerp3(a: &[f32; 4], b: &[f32; 4], s: f32) -> Vec3 {
    let r = 1.0 - s;
    Vec3::new(a[0] * r + b[0] * s, a[1] * r + b[1] * s, a[2] * r + b[2] * s)
}

#[cfg(test)]
mod tests {
    use super::track::{slerp4, slerp4x4};

    /// The four-lane slerp returns [`slerp4`]'s bits in every lane, over keys from a few
    /// thousandths of a degree to half a turn apart, in either hemisphere, at fractions
    /// from 0 to 1, and for blends that cannot be normalized the common way (all-zero keys).
    #[test]
    fn four_lane_slerp_is_slerp_bit_for_bit() {
        let mut s = 12345u32;
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            (s >> 8) as f32 / (1u32 << 24) as f32
        };
        let unit = |q: [f32; 4]| {
            let n = q.iter().map(|x| x * x).sum::<f32>().sqrt();
            q.map(|x| x / n)
        };
        for round in 0..5000 {
            let (mut a, mut b, mut t) = ([[0.0f32; 4]; 4], [[0.0f32; 4]; 4], [0.0f32; 4]);
            for l in 0..4 {
                a[l] = unit([next() - 0.5, next() - 0.5, next() - 0.5, next() - 0.5]);
                // Spread the angle between the keys over every branch of the series.
                let spread = [1e-5, 1e-3, 0.05, 0.3, 1.0, 3.0][(round + l) % 6];
                let d = [0, 1, 2, 3].map(|_| spread * (next() - 0.5));
                b[l] = unit([a[l][0] + d[0], a[l][1] + d[1], a[l][2] + d[2], a[l][3] + d[3]]);
                if next() < 0.3 {
                    b[l] = b[l].map(|x| -x);
                }
                t[l] = [0.0, 1.0, next()][round % 3];
            }
            if round % 97 == 0 {
                (a[2], b[2]) = ([0.0; 4], [0.0; 4]);
            }
            let got = slerp4x4(&a, &b, &t);
            for l in 0..4 {
                let want = slerp4(&a[l], &b[l], t[l]);
                assert_eq!(got[l].coords.map(f32::to_bits), want.coords.map(f32::to_bits), "round {round}, lane {l}");
            }
        }
    }
}
