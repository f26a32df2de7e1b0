//! Root-motion extraction: a clip's root travel moved out of the pose into a
//! [`MotionTrack`], so the character animates in place and the application moves it
//! ([`crate::clip::root_motion`] plays the track back).
//!
//! [`extract`] samples the root joint at its key times, splits each local transform `T(t)`
//! into a **motion frame** `M(t)` (the translation in the ground plane, optionally the
//! height, and optionally the yaw: the twist of the rotation about the up axis) and what is
//! left, `M(t)⁻¹ · T(t)`, which becomes the root's new tracks. Placing the in-place pose
//! under a character transform `W · M(t)` reproduces the original animation. The in-place
//! root tracks are linear, sampled at the root's key times.
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

use crate::clip::{Clip, ClipError, Interpolation, JointTracks, MotionTrack, Track};
use crate::pose::Skeleton;
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
        clip.sample(t, crate::clip::TimePolicy::Clamp, &mut pose)?;
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
