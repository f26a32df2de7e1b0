//! Offline retargeting: a source clip in, a new [`Clip`] on the target skeleton out,
//! sampled at a rate (then reducible into a runtime clip or bakeable into an atlas like
//! any other clip).
//!
//! The clip is sampled at `n = ⌈duration · rate⌉ + 1` evenly spaced times from 0 to its
//! duration (both ends included); contacts are found over the whole clip
//! ([`crate::contacts`]) and blended in before each plant starts and out after it ends, so
//! the IK is fully on while a foot is planted; each frame runs the job
//! ([`crate::job::RetargetJob`]). The new clip has a linear rotation track for every
//! driven target joint, a linear translation track for the hips (and joints carried by
//! them), the source clip's curves and events, and its root motion scaled by `K`; without
//! [`RetargetSettings::keep_bone_lengths`](crate::RetargetSettings::keep_bone_lengths),
//! translation and scale tracks for the driven joints too.

use crate::contacts::{self, ContactSource, DetectSettings, Found};
use crate::error::RetargetError;
use crate::job::RetargetJob;
use crate::retarget::Retargeter;
use anim_core::clip::{Clip, Interpolation, JointTracks, MotionTrack, TimePolicy, Track};
use anim_math::{Transform, Vec3};
use nalgebra::Quaternion;

/// How an offline retarget samples and finds contacts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OfflineSettings {
    /// Samples per second of the new clip.
    pub rate: f32,
    /// Where contacts come from.
    pub contacts: ContactSource,
    /// Thresholds for detected contacts.
    pub detect: DetectSettings,
    /// Frames over which the IK blends in before a plant and out after it.
    pub blend_frames: usize,
}

impl Default for OfflineSettings {
    fn default() -> Self {
        Self { rate: 30.0, contacts: ContactSource::Auto, detect: DetectSettings::default(), blend_frames: 4 }
    }
}

/// What an offline retarget found, per clip.
#[derive(Clone, Debug, PartialEq)]
pub struct ClipReport {
    /// Frames sampled.
    pub frames: usize,
    /// The sample times (seconds).
    pub times: Vec<f32>,
    /// Per limb (left foot, right foot, left hand, right hand), the planted flag of every
    /// frame.
    pub planted: [Vec<bool>; 4],
    /// Where the contacts came from, per limb.
    pub found: [Found; 4],
    /// The largest distance, over planted frames, between a placed end joint and the
    /// scaled source position, in target model units.
    pub contact_error: f32,
    /// The lowest height any foot or toe joint of the target reached, in target model
    /// units (the floor is at 0).
    pub lowest_foot: f32,
}

/// A retargeted clip and its report.
#[derive(Clone, Debug)]
pub struct RetargetedClip {
    /// The clip, on the target skeleton.
    pub clip: Clip,
    /// What was found on the way.
    pub report: ClipReport,
}

/// The sample times of a clip of `duration` seconds at `rate` Hz (module docs).
pub fn sample_times(duration: f32, rate: f32) -> Vec<f32> {
    if duration.is_nan() || duration <= 0.0 {
        return vec![0.0];
    }
    let n = ((duration * rate).ceil() as usize).max(1) + 1;
    (0..n).map(|i| if i + 1 == n { duration } else { duration * i as f32 / (n - 1) as f32 }).collect()
}

/// Retargets `clip` (of the retargeter's source skeleton) into a clip of the target
/// skeleton (module docs). `feet_and_toes` lists target joints whose height the report
/// watches (see [`ClipReport::lowest_foot`]); pass the feet and toes.
///
/// # Errors
/// A rate that is not finite and positive, a clip of another skeleton, or a non-finite
/// result.
pub fn retarget_clip(
    rt: &Retargeter,
    clip: &Clip,
    settings: &OfflineSettings,
    feet_and_toes: &[usize],
) -> Result<RetargetedClip, RetargetError> {
    if !(settings.rate.is_finite() && settings.rate > 0.0) {
        return Err(RetargetError::Rate(settings.rate));
    }
    clip.check_joints(rt.source.len())?;
    let times = sample_times(clip.duration(), settings.rate);
    let n = times.len();
    let mut job = RetargetJob::new(rt);
    // Source poses and end-joint positions.
    let mut poses = Vec::with_capacity(n);
    let mut ends: [Vec<Vec3>; 4] = Default::default();
    let mut globals = vec![Transform::IDENTITY; rt.source.len()];
    for &t in &times {
        let mut pose = rt.source.rest_pose().clone();
        clip.sample(t, TimePolicy::Clamp, &mut pose)?;
        pose.globals(&rt.source, &mut globals)?;
        for (i, e) in ends.iter_mut().enumerate() {
            if let Some((s, _)) = rt.limb_ends(i) {
                e.push(globals[s].translation);
            }
        }
        poses.push(pose);
    }
    // Contacts.
    let mut planted: [Vec<bool>; 4] = Default::default();
    let mut found = [Found::None; 4];
    let hips_height = rt.source_hips_reference.y;
    let reference_height = |i: usize| rt.limbs[i].map_or(0.0, |l| l.source_reference.y);
    let ground = contacts::ground_velocity(
        &[(&ends[0], reference_height(0)), (&ends[1], reference_height(1))],
        &times,
        hips_height,
        &settings.detect,
    );
    for i in 0..4 {
        if rt.limbs[i].is_none() || settings.contacts == ContactSource::None {
            planted[i] = vec![false; n];
            continue;
        }
        let given = if settings.contacts == ContactSource::Auto { contacts::from_clip(clip, i, &times) } else { None };
        (planted[i], found[i]) = match given {
            Some(g) => g,
            // Hands are placed only where the clip says so.
            None if i >= 2 => (vec![false; n], Found::None),
            None => (
                contacts::detect(&ends[i], &times, reference_height(i), hips_height, &ground, &settings.detect),
                Found::Detected,
            ),
        };
    }
    let weights: Vec<Vec<f32>> = planted.iter().map(|p| contacts::weights(p, settings.blend_frames)).collect();
    // Frames.
    let target = &rt.target;
    let mut out = target.rest_pose().clone();
    let mut frames: Vec<Vec<Transform>> = Vec::with_capacity(n);
    let mut contact_error = 0.0f32;
    let mut lowest_foot = f32::INFINITY;
    for (f, pose) in poses.iter().enumerate() {
        let w = [weights[0][f], weights[1][f], weights[2][f], weights[3][f]];
        let report = *job.run(rt, pose, &w, &mut out)?;
        for (p, e) in planted.iter().zip(report.contact_error) {
            if p[f] {
                contact_error = contact_error.max(e);
            }
        }
        for &j in feet_and_toes {
            if let Some(m) = job.target_model(j) {
                lowest_foot = lowest_foot.min(m.translation.y);
            }
        }
        frames.push(out.locals().to_vec());
    }
    // Tracks.
    let mut tracks = Vec::new();
    let rotated: Vec<usize> = rt.driven_joints().collect();
    let translated: Vec<usize> = rt.translated_joints().collect();
    // Joints that carry the source's bone lengths move and scale too.
    let carried = !rt.settings().keep_bone_lengths;
    for j in 0..target.len() {
        let (r, t) = (rotated.contains(&j), translated.contains(&j) || (carried && rotated.contains(&j)));
        if !r && !t {
            continue;
        }
        let mut jt = JointTracks::new(j);
        if r {
            let values: Vec<Quaternion<f32>> = frames.iter().map(|fr| fr[j].rotation.into_inner()).collect();
            jt.rotation = Some(Track::new(Interpolation::Linear, times.clone(), values)?);
        }
        if t {
            let values: Vec<Vec3> = frames.iter().map(|fr| fr[j].translation).collect();
            jt.translation = Some(Track::new(Interpolation::Linear, times.clone(), values)?);
        }
        if carried && r {
            let values: Vec<Vec3> = frames.iter().map(|fr| fr[j].scale).collect();
            jt.scale = Some(Track::new(Interpolation::Linear, times.clone(), values)?);
        }
        tracks.push(jt);
    }
    let mut new = Clip::new(clip.name(), tracks, clip.curves().to_vec())?.with_events(clip.events().to_vec())?;
    if let Some(m) = clip.root_motion() {
        let scaled: Vec<Transform> = m
            .frames()
            .iter()
            .map(|f| Transform::new(rt.scale.component_mul(&f.translation), f.rotation, f.scale))
            .collect();
        new = new.with_root_motion(MotionTrack::new(m.times().to_vec(), scaled, clip.duration())?);
    }
    Ok(RetargetedClip {
        clip: new,
        report: ClipReport { frames: n, times, planted, found, contact_error, lowest_foot },
    })
}
