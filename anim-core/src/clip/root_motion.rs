//! Root motion at playback: the travel of a clip's root joint, kept apart from the pose as
//! a [`MotionTrack`] so the character animates in place and the application moves it.
//! The track is made offline by [`crate::offline::root_motion::extract`], whose docs say
//! how the motion frames `M(t)` are split from the root's transform.
//!
//! Per step the application applies `W ← W · Δ` with `Δ = M(u₀)⁻¹ · M(u₁)` for the step's
//! unwrapped positions `u₀ → u₁` ([`MotionTrack::delta`]). Across loops the motion frames
//! continue: with `C = M(0)⁻¹ · M(duration)` the motion of one whole cycle,
//! `M(u) = M(0) · Cᵏ · M(0)⁻¹ · M(local)` in cycle `k`, so a step over a wrap gets the
//! end-of-cycle remainder, whole cycles, and the start of the new cycle; backwards steps
//! get the exact inverse. In ping-pong mode a backwards cycle walks back. Crossfades and
//! blends mix the deltas with the same weights as the poses ([`blend_deltas`]).
//!
//! The motion track interpolates linearly between the root's key times, which is exact for
//! linear translation keys.
//!
//! ```
//! use anim_core::clip::{Clip, Interpolation, JointTracks, LoopMode, Playback, Track};
//! use anim_core::offline::root_motion::{extract, RootMotionSettings};
//! use anim_core::pose::{JointDesc, Skeleton};
//! use anim_math::{Transform, Vec3};
//!
//! // The root walks 2 m along z in one second, bobbing 0.1 m in height.
//! let skeleton = Skeleton::new(vec![JointDesc::new("hips", None, Transform::IDENTITY)]).unwrap();
//! let mut hips = JointTracks::new(0);
//! hips.translation = Some(Track::new(Interpolation::Linear, vec![0.0, 0.5, 1.0],
//!     vec![Vec3::new(0.0, 1.0, 0.0), Vec3::new(0.0, 1.1, 1.0), Vec3::new(0.0, 1.0, 2.0)]).unwrap());
//! let walk = Clip::new("walk", vec![hips], vec![]).unwrap();
//! let walk = extract(&walk, &skeleton, &RootMotionSettings::new(0)).unwrap();
//! let motion = walk.root_motion().unwrap();
//!
//! let mut p = Playback::new(walk.duration(), LoopMode::Repeat);
//! let mut travelled = Transform::IDENTITY;
//! for _ in 0..30 {
//!     let step = p.advance(0.1); // three loops
//!     travelled = travelled.combine(&motion.delta(&p, step.from, step.to));
//! }
//! assert!((travelled.translation - Vec3::new(0.0, 0.0, 6.0)).norm() < 1e-4);
//! ```

use super::error::TrackError;
use super::playback::{LoopMode, Playback};
use super::track::{Interpolation, Track};
use anim_math::{Quat, Transform, Vec3};

/// The extracted motion frames `M(t)` of a clip, sampled at key times and interpolated
/// linearly (translation lerp, yaw nlerp).
#[derive(Clone, Debug, PartialEq)]
pub struct MotionTrack {
    times: Vec<f32>,
    frames: Vec<Transform>,
    duration: f32,
    cycle: Transform,
}

impl MotionTrack {
    /// A motion track from frames at strictly increasing times; `duration` is the clip's.
    ///
    /// # Errors
    /// No frame, lengths that differ, or times that are not finite and increasing.
    pub fn new(times: Vec<f32>, frames: Vec<Transform>, duration: f32) -> Result<Self, TrackError> {
        // Track::new validates the times; the frames are kept in their own vector.
        let check = Track::new(Interpolation::Linear, times.clone(), vec![0.0f32; frames.len()])?;
        drop(check);
        let mut m = Self { times, frames, duration, cycle: Transform::IDENTITY };
        m.cycle = m.frame_at(0.0).inverse().combine(&m.frame_at(duration));
        Ok(m)
    }

    /// Key times.
    pub fn times(&self) -> &[f32] {
        &self.times
    }

    /// Motion frames at the key times.
    pub fn frames(&self) -> &[Transform] {
        &self.frames
    }

    /// The motion of one whole cycle, `M(0)⁻¹ · M(duration)`.
    pub fn cycle(&self) -> &Transform {
        &self.cycle
    }

    /// The motion frame at clip time `t` (held outside the keys).
    pub fn frame_at(&self, t: f32) -> Transform {
        let times = &self.times;
        let n = times.len();
        if t <= times[0] {
            return self.frames[0];
        }
        if t >= times[n - 1] {
            return self.frames[n - 1];
        }
        let k = times.partition_point(|&x| x <= t) - 1;
        let s = (t - times[k]) / (times[k + 1] - times[k]);
        Transform::mix(&self.frames[k], &self.frames[k + 1], s)
    }

    /// The unwrapped motion frame `M(u)` of `playback` at unwrapped position `u`.
    pub fn frame_unwrapped(&self, playback: &Playback, u: f64) -> Transform {
        let (k, _, _) = playback.cycle_of(u);
        let local = self.frame_at(playback.time_at(u));
        if playback.mode == LoopMode::PingPong {
            // Backwards cycles retrace the forward ones: no net travel per pair.
            return local;
        }
        let m0 = self.frame_at(0.0);
        m0.combine(&power(&self.cycle, k)).combine(&m0.inverse()).combine(&local)
    }

    /// The motion of one step, `M(from)⁻¹ · M(to)`, in the character's frame at `from`:
    /// apply it as `world = world · delta`.
    pub fn delta(&self, playback: &Playback, from: f64, to: f64) -> Transform {
        if from == to {
            return Transform::IDENTITY;
        }
        let (k0, _, _) = playback.cycle_of(from);
        let (k1, _, _) = playback.cycle_of(to);
        let a = self.frame_at(playback.time_at(from));
        let b = self.frame_at(playback.time_at(to));
        if playback.mode == LoopMode::PingPong || k0 == k1 {
            return a.inverse().combine(&b);
        }
        let m0 = self.frame_at(0.0);
        a.inverse().combine(&m0).combine(&power(&self.cycle, k1 - k0)).combine(&m0.inverse()).combine(&b)
    }
}

/// `c` composed `k` times (its inverse for negative `k`).
fn power(c: &Transform, k: i64) -> Transform {
    let step = if k < 0 { c.inverse() } else { *c };
    let mut r = Transform::IDENTITY;
    for _ in 0..k.unsigned_abs() {
        r = r.combine(&step);
    }
    r
}

/// Mixes root-motion deltas with weights, as the poses they come with are mixed:
/// translation by the normalized weighted sum, rotation by the normalized weighted sum of
/// hemisphere-aligned quaternions. Non-positive weights are skipped; no weight gives the
/// identity.
pub fn blend_deltas<'a>(items: impl IntoIterator<Item = (&'a Transform, f32)>) -> Transform {
    let mut total = 0.0f32;
    let mut t = Vec3::zeros();
    let mut q = nalgebra::Quaternion::new(0.0, 0.0, 0.0, 0.0);
    let mut first: Option<nalgebra::Quaternion<f32>> = None;
    for (d, w) in items {
        if w <= 0.0 || !w.is_finite() {
            continue;
        }
        total += w;
        t += d.translation * w;
        let r = *d.rotation.quaternion();
        let r = match first {
            Some(f) if f.dot(&r) < 0.0 => -r,
            Some(_) => r,
            None => {
                first = Some(r);
                r
            }
        };
        q += r * w;
    }
    if total <= 0.0 {
        return Transform::IDENTITY;
    }
    Transform::new(t / total, Quat::new_normalize(q), Vec3::new(1.0, 1.0, 1.0))
}
