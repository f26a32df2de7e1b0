//! Baking: a clip resampled at a fixed rate into a [`BakedClip`], one contiguous array a
//! frame ([`crate::clip::baked`] plays it back).

use crate::clip::baked::STRIDE;
use crate::clip::track::flush_tiny;
use crate::clip::{BakedClip, Clip, ClipError, TimePolicy};
use crate::pose::Pose;
use thiserror::Error;

/// Most joint transforms one bake stores (frames × joints): 2²⁶, 2.7 GB of floats. A bake
/// past it is refused before anything is allocated.
pub const MAX_BAKED_TRANSFORMS: usize = 1 << 26;

/// Why a clip could not be baked.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum BakeError {
    /// The rate is not a positive finite number of frames a second.
    #[error("bake rate {0} is not a positive finite number of frames a second")]
    BadRate(f32),
    /// The clip's duration times the rate asks for more frames than a bake may hold.
    #[error("baking needs {frames} frames of {joints} joints, more than the {max} transforms a bake may hold")]
    TooLarge {
        /// Frames the duration and rate ask for.
        frames: f64,
        /// Joints a frame.
        joints: usize,
        /// The limit, [`MAX_BAKED_TRANSFORMS`].
        max: usize,
    },
    /// The clip does not fit the reference pose.
    #[error(transparent)]
    Clip(#[from] ClipError),
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
    /// `rate` is not positive and finite, the clip animates a joint `reference` lacks, or
    /// the bake would hold more than [`MAX_BAKED_TRANSFORMS`] transforms (a huge
    /// duration or rate).
    pub fn bake(clip: &Clip, reference: &Pose, rate: f32) -> Result<Self, BakeError> {
        if !(rate.is_finite() && rate > 0.0) {
            return Err(BakeError::BadRate(rate));
        }
        clip.check_joints(reference.len())?;
        let duration = clip.duration();
        let joints = reference.len();
        // In f64, so that a huge duration or rate cannot overflow before the check.
        let wanted = ((f64::from(duration) * f64::from(rate)).ceil() + 1.0).max(2.0);
        if wanted * joints.max(1) as f64 > MAX_BAKED_TRANSFORMS as f64 {
            return Err(BakeError::TooLarge { frames: wanted, joints, max: MAX_BAKED_TRANSFORMS });
        }
        let frames = wanted as usize;
        let step = duration / (frames - 1) as f32;
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
                // Tiny components are stored as zero (see `track::TINY`).
                data.push([t.x, t.y, t.z, q[0], q[1], q[2], q[3], s.x, s.y, s.z].map(flush_tiny));
            }
        }
        Ok(Self::from_frames(clip.name().to_owned(), joints, frames, step, duration, data))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clip::{Interpolation, JointTracks, Track};
    use anim_math::{Quat, Transform, Vec3};

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

    #[test]
    fn huge_durations_are_refused_before_allocating() {
        // One key at 1e30 s: a finite clip whose bake at 30 Hz would need 3e31 frames.
        let mut jt = JointTracks::new(0);
        jt.translation =
            Some(Track::new(Interpolation::Linear, vec![0.0, 1e30], vec![Vec3::zeros(), Vec3::x()]).unwrap());
        let c = Clip::new("long", vec![jt], vec![]).unwrap();
        let err = BakedClip::bake(&c, &Pose::identity(1), 30.0).unwrap_err();
        assert!(matches!(err, BakeError::TooLarge { joints: 1, max: MAX_BAKED_TRANSFORMS, .. }), "{err}");
        // Just past the limit by rate alone, with a short clip of many joints.
        let short = clip();
        let joints = 1 << 16;
        let rate = (MAX_BAKED_TRANSFORMS / joints) as f32 / short.duration();
        assert!(matches!(
            BakedClip::bake(&short, &Pose::identity(joints), rate * 1.01),
            Err(BakeError::TooLarge { .. })
        ));
        assert!(matches!(BakedClip::bake(&short, &Pose::identity(2), f32::INFINITY), Err(BakeError::BadRate(_))));
    }
}
