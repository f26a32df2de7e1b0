//! Root motion: the travel of a clip's root joint, moved out of the pose into a separate
//! motion track so the character animates in place and the application moves it.
//!
//! [`extract`] samples the root joint at its key times, splits each local transform `T(t)`
//! into a **motion frame** `M(t)` (the translation in the ground plane, optionally the
//! height, and optionally the yaw: the twist of the rotation about the up axis) and what is
//! left, `M(t)⁻¹ · T(t)`, which becomes the root's new tracks. Placing the in-place pose
//! under a character transform `W · M(t)` reproduces the original animation.
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
//! linear translation keys; the in-place root tracks are linear too.
//!
//! ```
//! use anim_core::{Clip, JointDesc, JointTracks, Skeleton, Track, Interpolation};
//! use anim_core::playback::{LoopMode, Playback};
//! use anim_core::root_motion::{extract, RootMotionSettings};
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

use crate::playback::{LoopMode, Playback};
use crate::{Clip, ClipError, Interpolation, JointTracks, Skeleton, Track, TrackError};
use anim_math::{Quat, Transform, Vec3};
use thiserror::Error;

/// Which joint carries the motion and which parts of it to extract.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RootMotionSettings {
    /// The joint whose motion is extracted (normally the skeleton's root or hips).
    /// Its local transform is used; its parents should not move.
    pub joint: usize,
    /// The up axis (unit); the ground plane is orthogonal to it.
    pub up: Vec3,
    /// Extract the yaw (rotation about `up`) too.
    pub yaw: bool,
    /// Extract the height (translation along `up`) too.
    pub height: bool,
}

impl RootMotionSettings {
    /// Ground-plane translation and yaw of `joint`, y up, height stays in the pose.
    pub fn new(joint: usize) -> Self {
        Self { joint, up: Vec3::y(), yaw: true, height: false }
    }
}

/// Why root motion could not be extracted.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum RootMotionError {
    /// The joint is not in the skeleton.
    #[error("root-motion joint {joint} is out of range, the skeleton has {count} joints")]
    JointOutOfRange {
        /// The joint asked for.
        joint: usize,
        /// Joints in the skeleton.
        count: usize,
    },
    /// The up axis is zero or not finite.
    #[error("root-motion up axis {0:?} is not a finite non-zero vector")]
    BadUpAxis([f32; 3]),
    /// Sampling or rebuilding the clip failed.
    #[error(transparent)]
    Clip(#[from] ClipError),
}

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

/// The twist of `q` about the unit axis `up`.
fn twist(q: &Quat, up: &Vec3) -> Quat {
    let v = q.imag();
    let p = up * v.dot(up);
    let raw = nalgebra::Quaternion::new(q.w, p.x, p.y, p.z);
    if raw.norm() < 1e-9 { Quat::identity() } else { Quat::new_normalize(raw) }
}

/// Returns a copy of `clip` with the motion of `settings.joint` moved into a
/// [`MotionTrack`] (see the [module docs](self)); events and curves are kept.
///
/// # Errors
/// A joint out of range, a bad up axis, or a clip that animates joints the skeleton lacks.
pub fn extract(clip: &Clip, skeleton: &Skeleton, settings: &RootMotionSettings) -> Result<Clip, RootMotionError> {
    let joint = settings.joint;
    if joint >= skeleton.len() {
        return Err(RootMotionError::JointOutOfRange { joint, count: skeleton.len() });
    }
    let n = settings.up.norm();
    if !(n.is_finite() && n > 1e-6) {
        return Err(RootMotionError::BadUpAxis(settings.up.into()));
    }
    let up = settings.up / n;
    clip.check_joints(skeleton.len())?;
    let tracks = clip.joint_tracks().iter().find(|j| j.joint == joint);
    let mut times: Vec<f32> = Vec::new();
    if let Some(jt) = tracks {
        if let Some(t) = &jt.translation {
            times.extend_from_slice(t.times());
        }
        if let Some(t) = &jt.rotation {
            times.extend_from_slice(t.times());
        }
    }
    times.push(0.0);
    times.push(clip.duration());
    times.sort_by(f32::total_cmp);
    times.dedup();
    let mut pose = skeleton.rest_pose().clone();
    let mut frames = Vec::with_capacity(times.len());
    let mut rest_t = Vec::with_capacity(times.len());
    let mut rest_r = Vec::with_capacity(times.len());
    for &t in &times {
        clip.sample(t, crate::TimePolicy::Clamp, &mut pose)?;
        let local = pose.locals()[joint];
        let along = up * local.translation.dot(&up);
        let translation = if settings.height { local.translation } else { local.translation - along };
        let rotation = if settings.yaw { twist(&local.rotation, &up) } else { Quat::identity() };
        let frame = Transform::new(translation, rotation, Vec3::new(1.0, 1.0, 1.0));
        let left = frame.inverse().combine(&local);
        frames.push(frame);
        rest_t.push(left.translation);
        rest_r.push(left.rotation.into_inner());
    }
    let motion = MotionTrack::new(times.clone(), frames, clip.duration())
        .map_err(|e| Clip::track_error(clip.name(), joint, "root motion", e))?;
    let mut joints: Vec<JointTracks> = clip.joint_tracks().to_vec();
    let idx = match joints.iter().position(|j| j.joint == joint) {
        Some(i) => i,
        None => {
            joints.push(JointTracks::new(joint));
            joints.len() - 1
        }
    };
    joints[idx].translation = Some(
        Track::new(Interpolation::Linear, times.clone(), rest_t)
            .map_err(|e| Clip::track_error(clip.name(), joint, "translation", e))?,
    );
    joints[idx].rotation = Some(
        Track::new(Interpolation::Linear, times, rest_r)
            .map_err(|e| Clip::track_error(clip.name(), joint, "rotation", e))?,
    );
    let out = Clip::new(clip.name(), joints, clip.curves().to_vec())?;
    // The new root tracks span 0..duration, so the duration and the events' validity are
    // unchanged.
    let out = out.with_events(clip.events().to_vec()).expect("events valid for an equal duration");
    Ok(out.with_root_motion(motion))
}
