//! Baked clips: a clip resampled at a fixed rate into one contiguous array a frame, for
//! the fastest playback and for uploading to the GPU (the book's chapter 15 bakes clips
//! into a texture the same way).
//!
//! Baking trades memory and exactness for speed: playback reads two neighbouring frames
//! from memory in order and blends them (lerp for translation and scale, nlerp for
//! rotation), with no key search and no trigonometry. Between frames the result differs
//! from [`Clip::sample`] by the resampling error, which shrinks with the rate; at the
//! frame times it is exact. Use [`Clip::sample`] when you need the source's exact
//! interpolation (STEP, CUBICSPLINE, sparse keys), a baked clip for playing many
//! characters.

use crate::{Clip, ClipError, Pose, TimePolicy};
use anim_math::{Quat, Transform, Vec3};
use nalgebra::Quaternion;

/// Floats stored a joint a frame: translation (3), rotation `[i, j, k, w]` (4), scale (3).
const STRIDE: usize = 10;

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
    /// Bakes `clip` at `rate` frames a second. Channels the clip does not animate carry
    /// the values of `reference` (usually the rest pose), so playback writes every joint.
    /// Frames are spread evenly over `[0, duration]` with the last frame exactly at the
    /// clip's end; at least two frames are stored.
    ///
    /// Rotations are sign-aligned frame to frame, so nlerp between neighbours always
    /// takes the short way.
    ///
    /// # Errors
    /// The clip animates a joint `reference` lacks, or `rate` is not positive and finite.
    pub fn bake(clip: &Clip, reference: &Pose, rate: f32) -> Result<Self, ClipError> {
        if !(rate.is_finite() && rate > 0.0) {
            return Err(ClipError::NonFiniteTime(rate));
        }
        clip.check_joints(reference.len())?;
        let duration = clip.duration();
        let frames = ((duration * rate).ceil() as usize + 1).max(2);
        let step = duration / (frames - 1) as f32;
        let joints = reference.len();
        let mut data: Vec<[f32; STRIDE]> = Vec::with_capacity(frames * joints);
        let mut pose = reference.clone();
        for f in 0..frames {
            let t = if f == frames - 1 { duration } else { f as f32 * step };
            pose.locals_mut().copy_from_slice(reference.locals());
            clip.sample(t, TimePolicy::Clamp, &mut pose)?;
            for (j, l) in pose.locals().iter().enumerate() {
                let mut q = l.rotation.coords;
                if f > 0 {
                    let prev = &data[(f - 1) * joints + j];
                    let dot = q[0] * prev[3] + q[1] * prev[4] + q[2] * prev[5] + q[3] * prev[6];
                    if dot < 0.0 {
                        q = -q;
                    }
                }
                let (t, s) = (l.translation, l.scale);
                data.push([t.x, t.y, t.z, q[0], q[1], q[2], q[3], s.x, s.y, s.z]);
            }
        }
        Ok(Self { name: clip.name().to_owned(), joints, frames, step, duration, data })
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
            return Err(ClipError::JointOutOfRange { clip: self.name.clone(), joint: self.joints, count: pose.len() });
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Interpolation, JointTracks, Track};

    fn clip() -> Clip {
        let times: Vec<f32> = (0..=10).map(|k| k as f32 * 0.1).collect();
        let rot = times.iter().map(|t| Quat::from_axis_angle(&Vec3::z_axis(), 2.0 * t).into_inner()).collect();
        let tr = times.iter().map(|t| Vec3::new(*t, t * t, 0.0)).collect();
        let mut jt = JointTracks::new(1);
        jt.rotation = Some(Track::new(Interpolation::Linear, times.clone(), rot).unwrap());
        jt.translation = Some(Track::new(Interpolation::Linear, times, tr).unwrap());
        Clip::new("c", vec![jt], vec![]).unwrap()
    }

    #[test]
    fn exact_at_frames_close_between() {
        let c = clip();
        let mut reference = Pose::identity(2);
        reference.locals_mut()[0] = Transform::from_translation(Vec3::new(5.0, 0.0, 0.0));
        let baked = BakedClip::bake(&c, &reference, 60.0).unwrap();
        assert_eq!(baked.frame_count(), 61);
        let (mut a, mut b) = (reference.clone(), reference.clone());
        for k in 0..=200 {
            let t = k as f32 * 0.005;
            c.sample(t, TimePolicy::Clamp, &mut a).unwrap();
            baked.sample(t, TimePolicy::Clamp, &mut b).unwrap();
            let (x, y) = (&a.locals()[1], &b.locals()[1]);
            assert!((x.translation - y.translation).norm() < 1e-5, "t = {t}");
            assert!(x.rotation.angle_to(&y.rotation) < 1e-5, "t = {t}");
            // The unanimated joint carries the reference pose.
            assert_eq!(b.locals()[0].translation.x, 5.0);
        }
    }

    #[test]
    fn errors() {
        let c = clip();
        assert!(BakedClip::bake(&c, &Pose::identity(1), 30.0).is_err());
        assert!(BakedClip::bake(&c, &Pose::identity(2), 0.0).is_err());
        let baked = BakedClip::bake(&c, &Pose::identity(2), 30.0).unwrap();
        assert!(baked.sample(0.0, TimePolicy::Clamp, &mut Pose::identity(3)).is_err());
        assert!(baked.sample(f32::NAN, TimePolicy::Clamp, &mut Pose::identity(2)).is_err());
        assert!(baked.frame_transform(0, 2).is_none());
    }
}
