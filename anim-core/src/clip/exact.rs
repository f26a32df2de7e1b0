//! Clips sampled exactly as glTF defines them: per-joint translation, rotation and scale
//! tracks, named scalar curves, morph weight tracks, events and an extracted root motion.
//! [`Clip::sample_cached`] with a per-instance [`SamplingCache`] is the fast path.

use super::error::{ClipError, TrackError};
use super::events::{self, ClipEvent, EventError};
use super::root_motion::MotionTrack;
use super::sampler::{SoaSampler, TimePolicy};
use super::track::{self, Interpolation, Track, TrackValue};
use super::weights::WeightTrack;
use crate::pose::{Pose, SoaPose};
use anim_math::{Quat, Transform, Vec3};
use nalgebra::Quaternion;

/// The tracks that animate one joint. A missing channel leaves that part of the joint's
/// local transform as it was in the pose being sampled into.
#[derive(Clone, Debug, PartialEq)]
pub struct JointTracks {
    /// Skeleton index of the joint.
    pub joint: usize,
    /// Translation track.
    pub translation: Option<Track<Vec3>>,
    /// Rotation track (raw quaternions; samples are normalized).
    pub rotation: Option<Track<Quaternion<f32>>>,
    /// Scale track.
    pub scale: Option<Track<Vec3>>,
}

impl JointTracks {
    /// Tracks for `joint` with no channel yet.
    pub fn new(joint: usize) -> Self {
        Self { joint, translation: None, rotation: None, scale: None }
    }
}

/// A named scalar curve carried by a clip (for example a foot-contact curve: 0 = foot in
/// the air, 1 = planted).
#[derive(Clone, Debug, PartialEq)]
pub struct ScalarCurve {
    /// Curve name.
    pub name: String,
    /// Its keys.
    pub track: Track<f32>,
}

/// An animation clip.
///
/// Its time line is `[0, duration]` in the file's own seconds, where `duration` is the
/// latest key time of any channel; the first key may come later than 0 (the channel then
/// holds its first value until it). Sampling writes the animated channels into a pose and
/// leaves everything else untouched; it allocates nothing.
///
/// ```
/// use anim_core::clip::{Clip, Interpolation, JointTracks, SamplingCache, TimePolicy, Track};
/// use anim_core::pose::Pose;
/// use anim_math::{Quat, Vec3};
///
/// // Joint 0 turns a quarter turn about y in one second.
/// let mut tracks = JointTracks::new(0);
/// let quarter = Quat::from_axis_angle(&Vec3::y_axis(), std::f32::consts::FRAC_PI_2);
/// tracks.rotation = Some(Track::new(Interpolation::Linear, vec![0.0, 1.0],
///     vec![*Quat::identity().quaternion(), *quarter.quaternion()])?);
/// let turn = Clip::new("turn", vec![tracks], vec![])?;
/// let mut pose = Pose::identity(1);
/// let mut cache = SamplingCache::new(&turn); // one per playing instance: the fast path
/// turn.sample_cached(&mut cache, 1.5, TimePolicy::Wrap, &mut pose)?; // 1.5 s wraps to 0.5 s
/// let half = std::f32::consts::FRAC_PI_4;
/// assert!((pose.locals()[0].rotation.angle() - half).abs() < 1e-5);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Clip {
    name: String,
    joints: Vec<JointTracks>,
    curves: Vec<ScalarCurve>,
    duration: f32,
    start: f32,
    max_joint: Option<usize>,
    /// Morph weight tracks (see [`Clip::with_weight_tracks`]).
    weights: Vec<WeightTrack>,
    events: Vec<ClipEvent>,
    root_motion: Option<MotionTrack>,
    /// The joint channels again, laid out for [`Clip::sample_cached`] (derived from
    /// `joints`, so equal clips have equal layouts).
    packed: Packed,
}

impl Clip {
    /// Builds a clip.
    ///
    /// # Errors
    /// Two track sets for one joint.
    pub fn new(name: impl Into<String>, joints: Vec<JointTracks>, curves: Vec<ScalarCurve>) -> Result<Self, ClipError> {
        let name = name.into();
        let mut seen = std::collections::HashSet::new();
        for jt in &joints {
            if !seen.insert(jt.joint) {
                return Err(ClipError::DuplicateJoint { clip: name, joint: jt.joint });
            }
        }
        let mut start = f32::INFINITY;
        let mut end = 0.0f32;
        let mut visit = |s: f32, e: f32| {
            start = start.min(s);
            end = end.max(e);
        };
        for jt in &joints {
            if let Some(t) = &jt.translation {
                visit(t.start_time(), t.end_time());
            }
            if let Some(t) = &jt.rotation {
                visit(t.start_time(), t.end_time());
            }
            if let Some(t) = &jt.scale {
                visit(t.start_time(), t.end_time());
            }
        }
        for c in &curves {
            visit(c.track.start_time(), c.track.end_time());
        }
        let max_joint = joints.iter().map(|j| j.joint).max();
        let packed = Packed::new(&joints);
        Ok(Self {
            name,
            joints,
            curves,
            duration: end.max(0.0),
            start: if start.is_finite() { start } else { 0.0 },
            max_joint,
            weights: Vec::new(),
            events: Vec::new(),
            root_motion: None,
            packed,
        })
    }

    /// Adds morph weight tracks (glTF `weights` channels), at most one per target; the
    /// clip's start and duration grow to cover their keys.
    ///
    /// # Errors
    /// Two weight tracks for one target (reported as [`ClipError::DuplicateJoint`]).
    pub fn with_weight_tracks(mut self, tracks: Vec<WeightTrack>) -> Result<Self, ClipError> {
        let mut seen = std::collections::HashSet::new();
        for t in self.weights.iter().chain(&tracks) {
            if !seen.insert(t.target) {
                return Err(ClipError::DuplicateJoint { clip: self.name, joint: t.target });
            }
        }
        for t in &tracks {
            self.start = if self.joints.is_empty() && self.curves.is_empty() && self.weights.is_empty() {
                t.start_time()
            } else {
                self.start.min(t.start_time())
            };
            self.duration = self.duration.max(t.end_time());
            self.weights.push(t.clone());
        }
        Ok(self)
    }

    /// The morph weight tracks.
    pub fn weight_tracks(&self) -> &[WeightTrack] {
        &self.weights
    }

    /// Samples the weight track of `target` at `time` under `policy` into `out`. Returns
    /// `Ok(false)`, leaving `out` as it was, when the clip does not animate `target`'s weights.
    /// Allocates nothing.
    ///
    /// # Errors
    /// `time` is not finite, or `out` does not hold the track's weight count.
    pub fn sample_weights(
        &self,
        target: usize,
        time: f32,
        policy: TimePolicy,
        out: &mut [f32],
    ) -> Result<bool, ClipError> {
        if !time.is_finite() {
            return Err(ClipError::NonFiniteTime(time));
        }
        let Some(track) = self.weights.iter().find(|w| w.target == target) else { return Ok(false) };
        track.sample(policy.apply(time, self.duration), out)?;
        Ok(true)
    }

    /// Replaces the clip's events (sorted here by time, stably).
    ///
    /// # Errors
    /// An event time that is not finite or lies outside `[0, duration]`.
    pub fn with_events(mut self, events: Vec<ClipEvent>) -> Result<Self, EventError> {
        self.set_events(events)?;
        Ok(self)
    }

    /// Replaces the clip's events, as [`Clip::with_events`].
    ///
    /// # Errors
    /// As [`Clip::with_events`]; the clip is unchanged then.
    pub fn set_events(&mut self, mut events: Vec<ClipEvent>) -> Result<(), EventError> {
        events::check_events(&self.name, &events, self.duration)?;
        events.sort_by(|a, b| a.time.total_cmp(&b.time));
        self.events = events;
        Ok(())
    }

    /// The clip's events, sorted by time.
    pub fn events(&self) -> &[ClipEvent] {
        &self.events
    }

    /// Attaches an extracted root-motion track (see [`crate::offline::root_motion::extract`]).
    #[must_use]
    pub fn with_root_motion(mut self, motion: MotionTrack) -> Self {
        self.root_motion = Some(motion);
        self
    }

    /// The root-motion track, when one was extracted.
    pub fn root_motion(&self) -> Option<&MotionTrack> {
        self.root_motion.as_ref()
    }

    /// Helper for importers: wraps a track error with the clip, joint and channel.
    pub fn track_error(clip: &str, joint: usize, channel: &'static str, source: TrackError) -> ClipError {
        ClipError::Track { clip: clip.to_owned(), joint, channel, source }
    }

    /// Clip name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Latest key time of any channel, in seconds.
    pub fn duration(&self) -> f32 {
        self.duration
    }

    /// Earliest key time of any channel (often 0; later for some exporters).
    pub fn start_time(&self) -> f32 {
        self.start
    }

    /// The per-joint tracks.
    pub fn joint_tracks(&self) -> &[JointTracks] {
        &self.joints
    }

    /// The named scalar curves.
    pub fn curves(&self) -> &[ScalarCurve] {
        &self.curves
    }

    /// Index of the curve with this name.
    pub fn curve_index(&self, name: &str) -> Option<usize> {
        self.curves.iter().position(|c| c.name == name)
    }

    /// Samples curve `index` at `time` under `policy`.
    pub fn sample_curve(&self, index: usize, time: f32, policy: TimePolicy) -> Option<f32> {
        let c = self.curves.get(index)?;
        Some(c.track.sample(policy.apply(time, self.duration)))
    }

    /// Number of channels (translation, rotation, scale per joint, and curves); the size of
    /// a [`SamplingCache`].
    pub fn channel_count(&self) -> usize {
        3 * self.joints.len() + self.curves.len()
    }

    /// Every distinct key time of every channel, sorted.
    pub fn key_times(&self) -> Vec<f32> {
        let mut out = Vec::new();
        for jt in &self.joints {
            for t in [
                jt.translation.as_ref().map(Track::times),
                jt.rotation.as_ref().map(Track::times),
                jt.scale.as_ref().map(Track::times),
            ]
            .into_iter()
            .flatten()
            {
                out.extend_from_slice(t);
            }
        }
        for c in &self.curves {
            out.extend_from_slice(c.track.times());
        }
        for w in &self.weights {
            out.extend_from_slice(w.times());
        }
        out.sort_by(f32::total_cmp);
        out.dedup();
        out
    }

    /// Checks that every animated joint exists in a pose of `joint_count` joints.
    ///
    /// # Errors
    /// The first joint out of range.
    pub fn check_joints(&self, joint_count: usize) -> Result<(), ClipError> {
        match self.max_joint {
            Some(j) if j >= joint_count => {
                Err(ClipError::JointOutOfRange { clip: self.name.clone(), joint: j, count: joint_count })
            }
            _ => Ok(()),
        }
    }

    /// Samples the clip at `time` (raw seconds, brought into `[0, duration]` by `policy`)
    /// into `pose`. Returns the time actually sampled.
    ///
    /// # Errors
    /// `time` is not finite, or the clip animates a joint the pose lacks.
    pub fn sample(&self, time: f32, policy: TimePolicy, pose: &mut Pose) -> Result<f32, ClipError> {
        let t = self.prepare(time, policy, pose)?;
        let locals = pose.locals_mut();
        for jt in &self.joints {
            let local = &mut locals[jt.joint];
            if let Some(tr) = &jt.translation {
                local.translation = tr.sample(t);
            }
            if let Some(tr) = &jt.rotation {
                local.rotation = tr.sample(t);
            }
            if let Some(tr) = &jt.scale {
                local.scale = tr.sample(t);
            }
        }
        Ok(t)
    }

    /// Like [`Clip::sample`], remembering the last key of every channel in `cache` so
    /// that forward playback finds keys in constant time. One cache per playing instance.
    ///
    /// # Errors
    /// As [`Clip::sample`], or a cache made for another clip.
    pub fn sample_cached(
        &self,
        cache: &mut SamplingCache,
        time: f32,
        policy: TimePolicy,
        pose: &mut Pose,
    ) -> Result<f32, ClipError> {
        if cache.hints.len() != self.channel_count() {
            return Err(ClipError::CacheMismatch {
                clip: self.name.clone(),
                got: cache.hints.len(),
                expected: self.channel_count(),
            });
        }
        let t = self.prepare(time, policy, pose)?;
        self.packed.sample(&self.joints, &mut cache.hints, t, pose.locals_mut());
        Ok(t)
    }

    fn prepare(&self, time: f32, policy: TimePolicy, pose: &Pose) -> Result<f32, ClipError> {
        if !time.is_finite() {
            return Err(ClipError::NonFiniteTime(time));
        }
        self.check_joints(pose.len())?;
        Ok(policy.apply(time, self.duration))
    }
}

/// Per-instance sampling state: the last key found on each channel of one clip.
#[derive(Clone, Debug, Default)]
pub struct SamplingCache {
    hints: Vec<usize>,
}

impl SamplingCache {
    /// A cache sized for `clip`.
    pub fn new(clip: &Clip) -> Self {
        Self { hints: vec![0; clip.channel_count()] }
    }

    /// Forgets the remembered keys (after a jump in time nothing is lost by not calling
    /// this; it only costs one search per channel).
    pub fn reset(&mut self) {
        self.hints.iter_mut().for_each(|h| *h = 0);
    }
}

/// Which part of a joint's local transform a channel drives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Field {
    Translation = 0,
    Rotation = 1,
    Scale = 2,
}

/// One linear channel of [`Packed`]: where its keys are and which joint it drives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct PackedChannel {
    /// Target joint.
    joint: usize,
    /// Its entry in [`SamplingCache`] (`3 · track set + field`).
    slot: usize,
    /// Start of its `n + 2` entries in [`Packed::times`].
    times: usize,
    /// Start of its `n + 1` entries in [`Packed::values`] and in [`Packed::inv_dt`].
    values: usize,
    /// Number of keys `n` (at least 2).
    keys: usize,
}

/// The joint channels of a clip laid out for forward playback: the key times, per-segment
/// reciprocal durations and key values of every linear channel in three contiguous arrays,
/// one list of channels per kind (so the sampling loops have no per-channel dispatch), and
/// the value of every channel that never changes. Step and cubic-spline channels, and
/// linear ones whose key spacing has no finite reciprocal, are sampled through their
/// [`Track`] (`generic`).
#[derive(Clone, Debug, Default, PartialEq)]
struct Packed {
    /// Per linear channel: `−∞, t₀, …, tₙ₋₁, +∞` (the sentinels make the cursor's bounds
    /// checks unconditional).
    times: Vec<f32>,
    /// Per linear channel, at its `values` offset: `1 / (tᵢ₊₁ − tᵢ)` for its `n − 1`
    /// segments, then `0` for the "segment" from the last key on, then an unused `0`.
    inv_dt: Vec<f32>,
    /// Per linear channel: its keys (`x, y, z, 0` for vectors, `i, j, k, w` for rotations,
    /// normalized by [`Track::new`]), the last one twice.
    values: Vec<[f32; 4]>,
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
    fn new(joints: &[JointTracks]) -> Self {
        let mut p = Packed::default();
        for (set, jt) in joints.iter().enumerate() {
            let vec = |v: &Vec3| [v.x, v.y, v.z, 0.0];
            if let Some(tr) = &jt.translation {
                p.add(set, jt.joint, Field::Translation, tr, vec, vec);
            }
            if let Some(tr) = &jt.rotation {
                let raw = |q: &Quaternion<f32>| [q.i, q.j, q.k, q.w];
                p.add(set, jt.joint, Field::Rotation, tr, raw, |q| raw(&track::normalize_or_identity(q)));
            }
            if let Some(tr) = &jt.scale {
                p.add(set, jt.joint, Field::Scale, tr, vec, vec);
            }
        }
        p
    }

    /// Files one channel. `raw` gives a stored key's components, `finish` the value
    /// sampling returns at that key (rotations normalized, as [`Track::sample`] does).
    fn add<T: TrackValue + PartialEq>(
        &mut self,
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
        let ch = PackedChannel {
            joint,
            slot: 3 * set + field as usize,
            times: self.times.len(),
            values: self.values.len(),
            keys: n,
        };
        self.times.push(f32::NEG_INFINITY);
        self.times.extend_from_slice(times);
        self.times.push(f32::INFINITY);
        self.inv_dt.extend(times.windows(2).map(|w| 1.0 / (w[1] - w[0])));
        // From the last key on, the "segment" is that key to itself, and its fraction 0.
        self.inv_dt.extend([0.0, 0.0]);
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
    /// `locals`, updating the per-channel cursors in `hints`. The caller checked that
    /// `hints` fits the clip and `locals` holds every animated joint.
    fn sample(&self, joints: &[JointTracks], hints: &mut [usize], t: f32, locals: &mut [Transform]) {
        for ch in &self.translations {
            let (a, b, s) = self.segment(ch, &mut hints[ch.slot], t);
            locals[ch.joint].translation = lerp3(&a, &b, s);
        }
        for ch in &self.scales {
            let (a, b, s) = self.segment(ch, &mut hints[ch.slot], t);
            locals[ch.joint].scale = lerp3(&a, &b, s);
        }
        for ch in &self.rotations {
            let (a, b, s) = self.segment(ch, &mut hints[ch.slot], t);
            locals[ch.joint].rotation = track::slerp4(&a, &b, s);
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

    /// The keys around `t` on channel `ch` and the fraction of the way from the first to
    /// the second: `0` before the first key, at a key and from the last key on, so the
    /// result is exactly a key there. `hint` is the number of keys at or before the last time sampled;
    /// forward playback moves it by at most two keys without a branch, anything else
    /// searches.
    #[inline(always)]
    fn segment(&self, ch: &PackedChannel, hint: &mut usize, t: f32) -> ([f32; 4], [f32; 4], f32) {
        let n = ch.keys;
        // times[j] is key j − 1, with −∞ before the first and +∞ after the last.
        let times = &self.times[ch.times..ch.times + n + 2];
        let mut k = (*hint).min(n);
        k += usize::from(times[k + 1] <= t);
        k += usize::from(times[k + 1] <= t);
        if !(times[k] <= t && t < times[k + 1]) {
            k = times[1..=n].partition_point(|&x| x <= t);
        }
        *hint = k;
        // Segment i runs from key i to key i + 1; before the first key the fraction clamps
        // to 0, and from the last key on the segment is that key to its copy (fraction 0):
        // a key comes back exactly as stored.
        let i = k.saturating_sub(1);
        // `max`/`min`, not `clamp`: a NaN fraction (∞·0 when `t` is ~1e38 past a last key
        // near −f32::MAX) becomes 0, the key itself.
        #[allow(clippy::manual_clamp)]
        let s = ((t - times[i + 1]) * self.inv_dt[ch.values + i]).max(0.0).min(1.0);
        (self.values[ch.values + i], self.values[ch.values + i + 1], s)
    }
}

/// `a·(1 − s) + b·s` on the first three components (as [`Track`]'s linear interpolation).
#[inline(always)]
fn lerp3(a: &[f32; 4], b: &[f32; 4], s: f32) -> Vec3 {
    let r = 1.0 - s;
    Vec3::new(a[0] * r + b[0] * s, a[1] * r + b[1] * s, a[2] * r + b[2] * s)
}

/// [`SoaSampler::Context`] of the exact [`Clip`]: its [`SamplingCache`] and a scratch
/// [`Pose`] covering the clip's joints.
#[derive(Clone, Debug)]
pub struct ClipContext {
    cache: SamplingCache,
    scratch: Pose,
}

/// Exact sampling (the clip's own interpolation, cached key search) regrouped into a
/// [`SoaPose`]: the animated joints are read from `out`, sampled and written back.
impl SoaSampler for Clip {
    type Context = ClipContext;

    fn new_context(&self) -> ClipContext {
        let joints = self.joint_tracks().iter().map(|jt| jt.joint + 1).max().unwrap_or(0);
        ClipContext { cache: SamplingCache::new(self), scratch: Pose::identity(joints) }
    }

    fn duration(&self) -> f32 {
        Clip::duration(self)
    }

    fn sample_soa(
        &self,
        context: &mut ClipContext,
        time: f32,
        policy: TimePolicy,
        out: &mut SoaPose,
    ) -> Result<f32, ClipError> {
        self.check_joints(out.len())?;
        self.check_joints(context.scratch.len())?;
        let scratch = context.scratch.locals_mut();
        for jt in self.joint_tracks() {
            scratch[jt.joint] = out.get(jt.joint).expect("checked: the clip's joints are in the pose");
        }
        let t = self.sample_cached(&mut context.cache, time, policy, &mut context.scratch)?;
        let scratch = context.scratch.locals();
        for jt in self.joint_tracks() {
            out.set(jt.joint, &scratch[jt.joint]);
        }
        Ok(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clip::track::{Interpolation, Track};
    use anim_math::{Quat, Transform};

    fn clip() -> Clip {
        let mut a = JointTracks::new(0);
        a.translation = Some(
            Track::new(
                Interpolation::Linear,
                vec![0.0, 1.0, 2.0],
                vec![Vec3::zeros(), Vec3::new(1.0, 0.0, 0.0), Vec3::zeros()],
            )
            .unwrap(),
        );
        let mut b = JointTracks::new(1);
        let q0 = Quat::identity().into_inner();
        let q1 = Quat::from_axis_angle(&Vec3::z_axis(), 1.0).into_inner();
        b.rotation = Some(Track::new(Interpolation::Linear, vec![0.5, 1.0], vec![q0, q1]).unwrap());
        let contact = ScalarCurve {
            name: "contact".into(),
            track: Track::new(Interpolation::Step, vec![0.0, 1.0], vec![1.0, 0.0]).unwrap(),
        };
        Clip::new("test", vec![a, b], vec![contact]).unwrap()
    }

    #[test]
    fn duration_start_and_hold() {
        let c = clip();
        assert_eq!(c.duration(), 2.0);
        assert_eq!(c.start_time(), 0.0);
        let mut pose = Pose::identity(3);
        pose.locals_mut()[2] = Transform::from_translation(Vec3::new(7.0, 0.0, 0.0));
        c.sample(1.5, TimePolicy::Clamp, &mut pose).unwrap();
        // Joint 1's channel ended at 1.0 and holds its last value; joint 2 is untouched.
        assert!((pose.locals()[1].rotation.angle() - 1.0).abs() < 1e-5);
        assert_eq!(pose.locals()[2].translation.x, 7.0);
        assert!((pose.locals()[0].translation.x - 0.5).abs() < 1e-6);
        // Before joint 1's first key it holds its first value.
        c.sample(0.25, TimePolicy::Clamp, &mut pose).unwrap();
        assert!(pose.locals()[1].rotation.angle() < 1e-6);
        assert_eq!(c.sample_curve(0, 0.5, TimePolicy::Clamp), Some(1.0));
        assert_eq!(c.key_times(), vec![0.0, 0.5, 1.0, 2.0]);
    }

    #[test]
    fn wrap_and_clamp_policies() {
        assert_eq!(TimePolicy::Clamp.apply(-1.0, 2.0), 0.0);
        assert_eq!(TimePolicy::Clamp.apply(3.0, 2.0), 2.0);
        assert!((TimePolicy::Wrap.apply(2.5, 2.0) - 0.5).abs() < 1e-6);
        assert!((TimePolicy::Wrap.apply(-0.5, 2.0) - 1.5).abs() < 1e-6);
        assert_eq!(TimePolicy::Wrap.apply(4.0, 2.0), 0.0);
        assert_eq!(TimePolicy::Wrap.apply(1.0, 0.0), 0.0);
    }

    #[test]
    fn looping_is_continuous_across_the_wrap() {
        // First and last keys are equal, so the loop must be seamless.
        let c = clip();
        let mut a = Pose::identity(2);
        let mut b = Pose::identity(2);
        c.sample(2.0 - 1e-4, TimePolicy::Wrap, &mut a).unwrap();
        c.sample(2.0 + 1e-4, TimePolicy::Wrap, &mut b).unwrap();
        assert!((a.locals()[0].translation - b.locals()[0].translation).norm() < 1e-3);
    }

    #[test]
    fn errors() {
        let c = clip();
        let mut small = Pose::identity(1);
        assert!(matches!(
            c.sample(0.0, TimePolicy::Clamp, &mut small),
            Err(ClipError::JointOutOfRange { joint: 1, count: 1, .. })
        ));
        let mut pose = Pose::identity(2);
        assert!(matches!(c.sample(f32::NAN, TimePolicy::Clamp, &mut pose), Err(ClipError::NonFiniteTime(_))));
        let mut cache = SamplingCache::default();
        assert!(matches!(
            c.sample_cached(&mut cache, 0.0, TimePolicy::Clamp, &mut pose),
            Err(ClipError::CacheMismatch { .. })
        ));
        let dup = Clip::new("d", vec![JointTracks::new(0), JointTracks::new(0)], vec![]);
        assert!(matches!(dup, Err(ClipError::DuplicateJoint { joint: 0, .. })));
    }

    #[test]
    fn cached_sampling_matches_plain() {
        let c = clip();
        let mut cache = SamplingCache::new(&c);
        let (mut a, mut b) = (Pose::identity(2), Pose::identity(2));
        let mut t = -0.3;
        while t < 5.0 {
            c.sample(t, TimePolicy::Wrap, &mut a).unwrap();
            c.sample_cached(&mut cache, t, TimePolicy::Wrap, &mut b).unwrap();
            assert_eq!(a, b);
            t += 0.037;
        }
    }

    #[test]
    fn clips_carry_weight_tracks() {
        let a = WeightTrack::new(3, 1, Interpolation::Linear, vec![0.5, 3.0], vec![0.0, 2.5]).unwrap();
        let clip = Clip::new("c", vec![], vec![]).unwrap().with_weight_tracks(vec![a.clone()]).unwrap();
        // The clip's time line covers the weight keys.
        assert_eq!((clip.start_time(), clip.duration()), (0.5, 3.0));
        assert_eq!(clip.key_times(), vec![0.5, 3.0]);
        let mut w = [9.0];
        assert!(clip.sample_weights(3, 1.75, TimePolicy::Clamp, &mut w).unwrap());
        assert!((w[0] - 1.25).abs() < 1e-6);
        // Wrap brings 4.0 back to 1.0: (1.0 − 0.5) / 2.5 · 2.5 = 0.5.
        clip.sample_weights(3, 4.0, TimePolicy::Wrap, &mut w).unwrap();
        assert!((w[0] - 0.5).abs() < 1e-6);
        // Another target is not animated: `out` untouched.
        let mut untouched = [7.0];
        assert!(!clip.sample_weights(4, 1.0, TimePolicy::Clamp, &mut untouched).unwrap());
        assert_eq!(untouched, [7.0]);
        assert!(matches!(
            clip.sample_weights(3, f32::NAN, TimePolicy::Clamp, &mut w),
            Err(ClipError::NonFiniteTime(_))
        ));
        assert!(matches!(
            clip.sample_weights(3, 1.0, TimePolicy::Clamp, &mut [0.0; 2]),
            Err(ClipError::WrongLength(_))
        ));
        assert!(matches!(clip.with_weight_tracks(vec![a]), Err(ClipError::DuplicateJoint { joint: 3, .. })));
    }
}
