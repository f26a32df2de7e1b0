//! Root-motion clips for the demos: the clip's root travel moved out of the pose, so the
//! viewer can move the character across the grid by the per-frame delta.
//!
//! A clip that already travels (its root joint's translation moves forwards) is extracted
//! as it is. A clip authored **in place** whose feet slide back while planted (the
//! mannequin's walk and run, which carry `foot_contact_l` curves) first gets the travel
//! the planted foot implies: the root moves forwards at the speed the planted ankle slides
//! backwards, which is what makes the feet stick to the ground once the character moves.

use crate::{Character, DemoError};
use anim_core::clip::{Clip, Interpolation, JointTracks, TimePolicy, Track};
use anim_core::offline::root_motion::{RootMotionSettings, extract};
use anim_math::Vec3;

/// The joint whose motion is extracted: the first joint (parents first) with an animated
/// translation, else the skeleton's first joint.
pub fn root_joint(clip: &Clip) -> usize {
    clip.joint_tracks().iter().filter(|j| j.translation.is_some()).map(|j| j.joint).min().unwrap_or(0)
}

/// Ground-plane speed (model units per second, as a vector) at which the planted foot of
/// an in-place clip slides: `-(ankle displacement) / time` over the longest planted window
/// of the `foot_contact_l` curve, with the ankle `foot_l`. `None` without that curve or
/// joint, or without a planted window of two samples.
///
/// # Errors
/// Sampling failed.
pub fn foot_slide_velocity(ch: &Character, clip: &Clip) -> Result<Option<Vec3>, DemoError> {
    let (Some(curve), Some(ankle)) = (clip.curve_index("foot_contact_l"), ch.skeleton.find("foot_l")) else {
        return Ok(None);
    };
    const SAMPLES: usize = 64;
    let d = clip.duration();
    let planted = |t: f32| clip.sample_curve(curve, t, TimePolicy::Clamp).is_some_and(|c| c >= 0.5);
    // Longest run of planted samples.
    let (mut best, mut run_start) = ((0, 0), None);
    for i in 0..=SAMPLES {
        let t = d * i as f32 / SAMPLES as f32;
        match (planted(t), run_start) {
            (true, None) => run_start = Some(i),
            (false, Some(s)) => {
                if i - 1 - s > best.1 - best.0 {
                    best = (s, i - 1);
                }
                run_start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = run_start
        && SAMPLES - s > best.1 - best.0
    {
        best = (s, SAMPLES);
    }
    if best.1 <= best.0 {
        return Ok(None);
    }
    // Stay one sample inside the window: the contact flips on the window's edges.
    let (a, b) = (best.0 + 1, best.1.saturating_sub(1));
    if b <= a {
        return Ok(None);
    }
    let (ta, tb) = (d * a as f32 / SAMPLES as f32, d * b as f32 / SAMPLES as f32);
    let mut pose = ch.skeleton.rest_pose().clone();
    clip.sample(ta, TimePolicy::Clamp, &mut pose)?;
    let pa = pose.global(&ch.skeleton, ankle).map(|g| g.translation);
    clip.sample(tb, TimePolicy::Clamp, &mut pose)?;
    let pb = pose.global(&ch.skeleton, ankle).map(|g| g.translation);
    let (Some(pa), Some(pb)) = (pa, pb) else { return Ok(None) };
    let v = -(pb - pa) / (tb - ta);
    Ok(Some(Vec3::new(v.x, 0.0, v.z)))
}

/// `clip` with `velocity · t` added to the translation of `joint` (keys kept, plus the
/// clip's start and end).
///
/// # Errors
/// Rebuilding the clip failed.
pub fn with_travel(clip: &Clip, joint: usize, rest: Vec3, velocity: Vec3) -> Result<Clip, DemoError> {
    let mut joints: Vec<JointTracks> = clip.joint_tracks().to_vec();
    let idx = match joints.iter().position(|j| j.joint == joint) {
        Some(i) => i,
        None => {
            joints.push(JointTracks::new(joint));
            joints.len() - 1
        }
    };
    let old = joints[idx].translation.take();
    let mut times: Vec<f32> = old.as_ref().map_or_else(Vec::new, |t| t.times().to_vec());
    times.extend([0.0, clip.duration()]);
    times.sort_by(f32::total_cmp);
    times.dedup();
    let values: Vec<Vec3> =
        times.iter().map(|&t| old.as_ref().map_or(rest, |tr| tr.sample(t)) + velocity * t).collect();
    let track = Track::new(Interpolation::Linear, times, values)
        .map_err(|e| Clip::track_error(clip.name(), joint, "translation", e))?;
    joints[idx].translation = Some(track);
    let out = Clip::new(clip.name(), joints, clip.curves().to_vec())?;
    out.with_events(clip.events().to_vec()).map_err(|e| DemoError::Args(e.to_string()))
}

/// A root-motion version of clip `index` of `ch` (see the [module docs](self)).
///
/// # Errors
/// Unknown clip, or extraction failed.
pub fn root_motion_clip(ch: &Character, index: usize) -> Result<Clip, DemoError> {
    let clip = ch.clips.get(index).ok_or_else(|| DemoError::Args(format!("no clip {index}")))?;
    let joint = root_joint(clip);
    let settings = RootMotionSettings::new(joint);
    let extracted = extract(clip, &ch.skeleton, &settings)?;
    let travel = extracted.root_motion().map_or(0.0, |m| m.cycle().translation.norm());
    if travel > 1e-3 {
        return Ok(extracted);
    }
    match foot_slide_velocity(ch, clip)? {
        Some(v) if v.norm() > 1e-3 => {
            let rest = ch.skeleton.rest_pose().locals()[joint].translation;
            Ok(extract(&with_travel(clip, joint, rest, v)?, &ch.skeleton, &settings)?)
        }
        _ => Ok(extracted),
    }
}
