//! When a source foot (or hand) is planted, and the contact weights that blend the IK in
//! and out around the plants.
//!
//! A clip says it itself when it can: a contact curve (`foot_contact_l` /
//! `foot_contact_r`, 1 = planted, as the mannequin's walk and run carry; planted at 0.5 and
//! above) or the events [`FootGrounding::contact_events`](anim_ik::FootGrounding::contact_events)
//! makes of it (`foot_down:<curve>` … `foot_up:<curve>`). Otherwise the feet are watched:
//! a foot is planted while its joint is within `height` of its reference height and moves
//! slower than `speed` over the ground, both relative to the source's hips height. The
//! ground may itself move under an in-place clip (a treadmill walk): its velocity is the
//! median velocity of the feet while they are low, which is zero for a clip that travels.

use crate::profile::Side;
use anim_core::clip::{Clip, TimePolicy};
use anim_math::Vec3;

/// Contact curve names of the feet and hands (left foot, right foot, left hand, right hand).
pub const CONTACT_CURVES: [&str; 4] = ["foot_contact_l", "foot_contact_r", "hand_contact_l", "hand_contact_r"];

/// How contacts are found for an offline retarget.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ContactSource {
    /// The clip's contact curves or events when it has them, else [`ContactSource::Detect`].
    Auto,
    /// From the feet's height and speed (module docs), even when the clip has curves.
    Detect,
    /// No contacts: the retargeted pose as it is.
    None,
}

/// Thresholds of contact detection, as fractions of the source's hips height (per second
/// for the speed).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DetectSettings {
    /// A foot higher than this above its reference height is in the air (default 0.05:
    /// 5 cm on a 1 m leg).
    pub height: f32,
    /// A foot faster than this over the ground is moving (default 0.3: 30 cm/s on a 1 m
    /// leg).
    pub speed: f32,
}

impl Default for DetectSettings {
    fn default() -> Self {
        Self { height: 0.05, speed: 0.3 }
    }
}

/// Where a clip's contacts came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Found {
    /// The clip's contact curves.
    Curves,
    /// The clip's `foot_down:` / `foot_up:` events.
    Events,
    /// Detected from the feet's motion.
    Detected,
    /// Not looked for.
    None,
}

/// The planted state of limb `limb` (index into [`CONTACT_CURVES`]) at `times`, from the
/// clip's curve or events, when it has them.
pub fn from_clip(clip: &Clip, limb: usize, times: &[f32]) -> Option<(Vec<bool>, Found)> {
    let name = CONTACT_CURVES.get(limb)?;
    if let Some(i) = clip.curve_index(name) {
        let planted = times.iter().map(|&t| clip.sample_curve(i, t, TimePolicy::Clamp).is_some_and(|v| v >= 0.5));
        return Some((planted.collect(), Found::Curves));
    }
    let (down, up) = (format!("foot_down:{name}"), format!("foot_up:{name}"));
    let mut events: Vec<(f32, bool)> = clip
        .events()
        .iter()
        .filter_map(|e| {
            if e.name == down {
                Some((e.time, true))
            } else if e.name == up {
                Some((e.time, false))
            } else {
                None
            }
        })
        .collect();
    if events.is_empty() {
        return None;
    }
    events.sort_by(|a, b| a.0.total_cmp(&b.0));
    // Before the first event the limb is as the last event left it (a looping clip).
    let initial = events.last().is_some_and(|e| e.1);
    let planted =
        times.iter().map(|&t| events.iter().take_while(|e| e.0 <= t).last().map_or(initial, |e| e.1)).collect();
    Some((planted, Found::Events))
}

/// Detects plants from a limb's model-space positions at `times` (module docs).
/// `reference_height` is the joint's height in the reference pose, `hips_height` the
/// source's, and `ground_velocity` the horizontal velocity of the ground under the feet
/// ([`ground_velocity`]).
pub fn detect(
    positions: &[Vec3],
    times: &[f32],
    reference_height: f32,
    hips_height: f32,
    ground_velocity: &Vec3,
    settings: &DetectSettings,
) -> Vec<bool> {
    (0..positions.len())
        .map(|i| {
            let low = positions[i].y - reference_height < settings.height * hips_height;
            let v = horizontal_velocity(positions, times, i) - ground_velocity;
            low && v.norm() < settings.speed * hips_height
        })
        .collect()
}

/// The median horizontal velocity of the feet while they are low (within `height` of
/// their reference heights): the ground's velocity under an in-place clip, zero under a
/// clip that travels. `feet` holds each foot's positions and reference height.
pub fn ground_velocity(feet: &[(&[Vec3], f32)], times: &[f32], hips_height: f32, settings: &DetectSettings) -> Vec3 {
    let mut xs = Vec::new();
    let mut zs = Vec::new();
    for (positions, reference_height) in feet {
        for i in 0..positions.len() {
            if positions[i].y - reference_height < settings.height * hips_height {
                let v = horizontal_velocity(positions, times, i);
                xs.push(v.x);
                zs.push(v.z);
            }
        }
    }
    Vec3::new(median(&mut xs), 0.0, median(&mut zs))
}

fn median(v: &mut [f32]) -> f32 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f32::total_cmp);
    v[v.len() / 2]
}

/// Central difference (one-sided at the ends), horizontal part.
fn horizontal_velocity(p: &[Vec3], t: &[f32], i: usize) -> Vec3 {
    if p.len() < 2 {
        return Vec3::zeros();
    }
    let (a, b) = (i.saturating_sub(1), (i + 1).min(p.len() - 1));
    let dt = t[b] - t[a];
    if dt <= 0.0 {
        return Vec3::zeros();
    }
    let v = (p[b] - p[a]) / dt;
    Vec3::new(v.x, 0.0, v.z)
}

/// Contact weights from planted flags: 1 while planted, ramping linearly to 0 over
/// `blend` frames before a plant starts and after it ends, so the IK is fully in before
/// the foot lands and leaves after it lifts.
pub fn weights(planted: &[bool], blend: usize) -> Vec<f32> {
    let n = planted.len();
    let mut distance = vec![usize::MAX; n];
    let mut last = None;
    for i in 0..n {
        if planted[i] {
            last = Some(i);
        }
        if let Some(l) = last {
            distance[i] = i - l;
        }
    }
    last = None;
    for i in (0..n).rev() {
        if planted[i] {
            last = Some(i);
        }
        if let Some(l) = last {
            distance[i] = distance[i].min(l - i);
        }
    }
    distance
        .iter()
        .map(|&d| if d == usize::MAX { 0.0 } else { (1.0 - d as f32 / (blend as f32 + 1.0)).max(0.0) })
        .collect()
}

/// Contact weights for the per-frame job, blended over time: each weight moves towards 1
/// while its limb is planted and towards 0 while it is not, by `dt / blend_time` a frame,
/// so the IK comes in over `blend_time` seconds after a plant starts and leaves over as
/// long after it ends (the offline path, which sees the whole clip, blends in before the
/// plant instead: [`weights`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ContactBlend {
    weights: [f32; 4],
}

impl ContactBlend {
    /// All weights at 0.
    pub fn new() -> Self {
        Self::default()
    }

    /// Advances by `dt` seconds towards `planted` (left foot, right foot, left hand, right
    /// hand) and returns the weights to pass to
    /// [`RetargetJob::run`](crate::job::RetargetJob::run). A `blend_time` of 0 (or less)
    /// switches at once; a non-finite `dt` leaves the weights as they were.
    pub fn update(&mut self, planted: [bool; 4], dt: f32, blend_time: f32) -> [f32; 4] {
        let step = if blend_time > 0.0 { dt / blend_time } else { f32::INFINITY };
        if step.is_nan() {
            return self.weights;
        }
        for (w, p) in self.weights.iter_mut().zip(planted) {
            let goal = if p { 1.0 } else { 0.0 };
            *w = if *w < goal { (*w + step).min(goal) } else { (*w - step).max(goal) };
        }
        self.weights
    }

    /// The current weights.
    pub fn weights(&self) -> [f32; 4] {
        self.weights
    }
}

/// The side of a foot limb index (0 left, 1 right).
pub fn foot_side(limb: usize) -> Side {
    if limb.is_multiple_of(2) { Side::Left } else { Side::Right }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_ramp_around_plants() {
        let p = [false, false, false, false, true, true, false, false, false, false];
        let w = weights(&p, 2);
        let third = 1.0 / 3.0;
        let expect = [0.0, 0.0, third, 2.0 * third, 1.0, 1.0, 2.0 * third, third, 0.0, 0.0];
        for (a, b) in w.iter().zip(expect) {
            assert!((a - b).abs() < 1e-6, "{w:?}");
        }
        assert_eq!(weights(&[false; 3], 2), vec![0.0; 3]);
    }

    #[test]
    fn contact_blend_ramps_in_and_out() {
        let mut b = ContactBlend::new();
        let planted = [true, false, false, false];
        let mut seen = Vec::new();
        for _ in 0..5 {
            seen.push(b.update(planted, 0.1, 0.4)[0]);
        }
        let expect = [0.1 / 0.4, 0.2 / 0.4, 0.3 / 0.4, 1.0, 1.0];
        for (a, e) in seen.iter().zip(expect) {
            assert!((a - e).abs() < 1e-6, "{seen:?}");
        }
        assert_eq!(b.update([false; 4], 1.0, 0.0), [0.0; 4], "no blend time switches at once");
        assert_eq!(b.update([true; 4], f32::NAN, 0.4), [0.0; 4], "a NaN step changes nothing");
        assert!(b.weights().iter().all(|w| (0.0..=1.0).contains(w)));
    }

    #[test]
    fn detects_planted_feet_on_a_treadmill() {
        // A foot sliding back at 1 m/s on the ground, then lifting and swinging forward.
        let times: Vec<f32> = (0..20).map(|i| i as f32 * 0.05).collect();
        let positions: Vec<Vec3> = times
            .iter()
            .map(|&t| if t < 0.5 { Vec3::new(0.0, 0.1, -t) } else { Vec3::new(0.0, 0.3, -0.5 + 2.0 * (t - 0.5)) })
            .collect();
        let s = DetectSettings::default();
        let g = ground_velocity(&[(&positions, 0.1)], &times, 1.0, &s);
        assert!((g - Vec3::new(0.0, 0.0, -1.0)).norm() < 1e-4, "{g}");
        let planted = detect(&positions, &times, 0.1, 1.0, &g, &s);
        assert!(planted[..9].iter().all(|&p| p) && planted[11..].iter().all(|&p| !p), "{planted:?}");
    }
}
