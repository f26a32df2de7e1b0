//! Baked clips: a clip resampled at a fixed rate into one contiguous array a frame, for
//! the fastest playback and for uploading to the GPU (the book's chapter 15 bakes clips
//! into a texture the same way). [`crate::offline::bake`] makes them; this module plays
//! them.
//!
//! Baking trades memory and exactness for speed: playback reads two neighbouring frames
//! from memory in order and blends them (lerp for translation and scale, nlerp for
//! rotation), with no key search and no trigonometry. Between frames the result differs
//! from [`Clip::sample`](super::Clip::sample) by the resampling error, which shrinks with the rate; at the
//! frame times it is exact. Use [`Clip::sample`](super::Clip::sample) when you need the source's exact
//! interpolation (STEP, CUBICSPLINE, sparse keys), a baked clip for playing many
//! characters.

use super::error::ClipError;
use super::sampler::{SoaSampler, TimePolicy};
use crate::pose::{LANES, Pose, SoaPose};
use anim_math::{Quat, Transform, Vec3};
use nalgebra::Quaternion;

/// Floats stored a joint a frame: translation (3), rotation `[i, j, k, w]` (4), scale (3).
pub(crate) const STRIDE: usize = 10;

/// A clip resampled at a fixed rate; every joint of the pose is stored every frame.
#[derive(Clone, Debug, PartialEq)]
pub struct BakedClip {
    name: String,
    joints: usize,
    frames: usize,
    step: f32,
    duration: f32,
    data: Vec<[f32; STRIDE]>,
}

impl BakedClip {
    /// A bake from its frames (the offline baker's output): `data` holds `frames · joints`
    /// entries, frame after frame.
    pub(crate) fn from_frames(
        name: String,
        joints: usize,
        frames: usize,
        step: f32,
        duration: f32,
        data: Vec<[f32; STRIDE]>,
    ) -> Self {
        debug_assert!(frames >= 2 && data.len() == frames * joints);
        Self { name, joints, frames, step, duration, data }
    }

    /// Name of the source clip.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Duration in seconds (the source clip's).
    pub fn duration(&self) -> f32 {
        self.duration
    }

    /// Number of stored frames.
    pub fn frame_count(&self) -> usize {
        self.frames
    }

    /// Joints stored a frame.
    pub fn joint_count(&self) -> usize {
        self.joints
    }

    /// Seconds between frames.
    pub fn frame_step(&self) -> f32 {
        self.step
    }

    /// The local transform of `joint` stored at `frame`.
    pub fn frame_transform(&self, frame: usize, joint: usize) -> Option<Transform> {
        if joint >= self.joints {
            return None;
        }
        let d = self.data.get(frame * self.joints + joint)?;
        Some(unpack(d))
    }

    /// Samples at `time` (raw seconds, brought into `[0, duration]` by `policy`) into
    /// `pose`, writing every joint. Returns the time actually sampled. Allocates nothing.
    ///
    /// # Errors
    /// `time` is not finite, or `pose` has another joint count than the bake.
    pub fn sample(&self, time: f32, policy: TimePolicy, pose: &mut Pose) -> Result<f32, ClipError> {
        if !time.is_finite() {
            return Err(ClipError::NonFiniteTime(time));
        }
        if pose.len() != self.joints {
            return Err(ClipError::JointCount { clip: self.name.clone(), expected: self.joints, got: pose.len() });
        }
        let t = policy.apply(time, self.duration);
        let f = if self.step > 0.0 { t / self.step } else { 0.0 };
        let i = (f.floor() as usize).min(self.frames - 2);
        let a = (f - i as f32).clamp(0.0, 1.0);
        let j = self.joints;
        let (f0, f1) = (&self.data[i * j..(i + 1) * j], &self.data[(i + 1) * j..(i + 2) * j]);
        for ((out, k0), k1) in pose.locals_mut().iter_mut().zip(f0).zip(f1) {
            let mut v = [0.0f32; STRIDE];
            for c in 0..STRIDE {
                v[c] = k0[c] + (k1[c] - k0[c]) * a;
            }
            let n2 = v[3] * v[3] + v[4] * v[4] + v[5] * v[5] + v[6] * v[6];
            let inv = 1.0 / n2.sqrt();
            out.translation = Vec3::new(v[0], v[1], v[2]);
            out.rotation = Quat::new_unchecked(Quaternion::new(v[6] * inv, v[3] * inv, v[4] * inv, v[5] * inv));
            out.scale = Vec3::new(v[7], v[8], v[9]);
        }
        Ok(t)
    }
}

fn unpack(d: &[f32; STRIDE]) -> Transform {
    Transform::new(
        Vec3::new(d[0], d[1], d[2]),
        Quat::new_unchecked(Quaternion::new(d[6], d[3], d[4], d[5])),
        Vec3::new(d[7], d[8], d[9]),
    )
}

/// Baked playback straight into a [`SoaPose`] of the bake's joint count: the same
/// arithmetic as [`BakedClip::sample`] (lerp of the two neighbouring frames, nlerp of
/// the rotation), so the same bits, written lane by lane without a scratch pose. Needs no
/// per-instance state.
impl SoaSampler for BakedClip {
    type Context = ();

    fn new_context(&self) {}

    fn duration(&self) -> f32 {
        BakedClip::duration(self)
    }

    fn sample_soa(&self, _: &mut (), time: f32, policy: TimePolicy, out: &mut SoaPose) -> Result<f32, ClipError> {
        if !time.is_finite() {
            return Err(ClipError::NonFiniteTime(time));
        }
        let joints = self.joint_count();
        if out.len() != joints {
            return Err(ClipError::JointCount { clip: self.name().to_owned(), expected: joints, got: out.len() });
        }
        let t = policy.apply(time, self.duration());
        let step = self.frame_step();
        let f = if step > 0.0 { t / step } else { 0.0 };
        // A bake holds at least two frames.
        let i = (f.floor() as usize).min(self.frame_count() - 2);
        let a = (f - i as f32).clamp(0.0, 1.0);
        let lerp = |x: f32, y: f32| x + (y - x) * a;
        for (g, group) in out.groups_mut().iter_mut().enumerate() {
            for lane in 0..LANES.min(joints - g * LANES) {
                let j = g * LANES + lane;
                let (Some(k0), Some(k1)) = (self.frame_transform(i, j), self.frame_transform(i + 1, j)) else {
                    unreachable!("frames i and i + 1 < frame_count and joint {j} < joint_count exist")
                };
                let (q0, q1) = (k0.rotation.coords, k1.rotation.coords);
                let q = [0, 1, 2, 3].map(|c| lerp(q0[c], q1[c]));
                let inv = 1.0 / (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
                for c in 0..3 {
                    group.translation[c][lane] = lerp(k0.translation[c], k1.translation[c]);
                    group.scale[c][lane] = lerp(k0.scale[c], k1.scale[c]);
                }
                for (c, v) in q.iter().enumerate() {
                    group.rotation[c][lane] = v * inv;
                }
            }
        }
        Ok(t)
    }
}
