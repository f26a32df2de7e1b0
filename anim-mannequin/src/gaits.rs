//! The locomotion set a playable character needs besides walk and run: walking and
//! running backwards and sideways (strafes), and a jump split into take-off, air and
//! landing, keyed from the same gait model as walk and run; and root motion for the
//! clips that travel.
//!
//! A **directed gait** is the walk or run cycle with the legs swinging along a heading
//! `θ` in the ground plane (0 forwards, +90° to the character's left): each hip turns
//! about the horizontal axis across the heading, so a planted foot slides back along the
//! heading at constant speed with the leg straight, and the foot is turned back flat. The
//! phase convention is walk's: the left foot plants at `t = 0`, the right at half the
//! cycle, with the same contact curves, so every gait blends and syncs with every other.
//! Sideways, the feet stand wider (each foot's stance is centred further out), so they
//! never cross.

use crate::clips::{Frame, Gait, RUN, WALK, arm_pose, bake, jump_frame, key, qa, stride_breathing};
use crate::joints::*;
use anim_core::clip::events::threshold_events;
use anim_core::clip::{Clip, Interpolation, MotionTrack, ScalarCurve, TimePolicy, Track};
use anim_core::pose::Skeleton;
use anim_math::{Transform, Vec3};
use std::f32::consts::{FRAC_PI_2, PI, TAU};

/// A directed gait: a base gait along heading `heading` (radians) with stride `reach`
/// and each foot's stance centred `out` metres further from the body's midline.
struct Directed {
    name: &'static str,
    base: &'static Gait,
    heading: f32,
    reach: f32,
    out: f32,
}

/// The directed gaits, in the order the mannequin's clips list them.
const DIRECTED: [Directed; 6] = [
    Directed { name: "walk_backward", base: &WALK, heading: PI, reach: 0.2, out: 0.0 },
    Directed { name: "walk_left", base: &WALK, heading: FRAC_PI_2, reach: 0.14, out: 0.1 },
    Directed { name: "walk_right", base: &WALK, heading: -FRAC_PI_2, reach: 0.14, out: 0.1 },
    Directed { name: "run_backward", base: &RUN, heading: PI, reach: 0.22, out: 0.0 },
    Directed { name: "run_left", base: &RUN, heading: FRAC_PI_2, reach: 0.18, out: 0.14 },
    Directed { name: "run_right", base: &RUN, heading: -FRAC_PI_2, reach: 0.18, out: 0.14 },
];

/// One leg of gait `g` at phase `u` with its stance shifted by `shift` along the heading:
/// hip angle about the swing axis, knee bend, and the pelvis drop a planted leg sets.
fn leg(g: &Gait, u: f32, shift: f32) -> (f32, f32, bool, f32) {
    let len = THIGH_LENGTH + SHIN_LENGTH;
    let (along, knee, planted) = if u < g.stance {
        (g.reach * (1.0 - 2.0 * u / g.stance), 0.0, true)
    } else {
        let s = (u - g.stance) / (1.0 - g.stance);
        (-g.reach * (PI * s).cos(), g.knee * (PI * s).sin(), false)
    };
    let alpha = -((along + shift) / len).asin();
    (alpha, knee, planted, if planted { len * (1.0 - alpha.cos()) } else { 0.0 })
}

/// The pelvis drop at phase `u`: set by the planted leg; in flight (runs), eased from the
/// drop the last stance ended with to the one the next starts with, minus the hop.
fn drop(g: &Gait, u: f32, shift_l: f32, shift_r: f32) -> f32 {
    let (_, _, pl, dl) = leg(g, u, shift_l);
    if pl {
        return dl;
    }
    let (_, _, pr, dr) = leg(g, (u + 0.5).fract(), shift_r);
    if pr {
        return dr;
    }
    let len = THIGH_LENGTH + SHIN_LENGTH;
    let d = |x: f32| len * (1.0 - (x / len).asin().cos());
    let (from, to, s) = if u < 0.5 {
        (d(-g.reach + shift_l), d(g.reach + shift_r), (u - g.stance) / (0.5 - g.stance))
    } else {
        (d(-g.reach + shift_r), d(g.reach + shift_l), (u - 0.5 - g.stance) / (0.5 - g.stance))
    };
    from + (to - from) * s - g.flight * (PI * s).sin()
}

fn directed(d: &Directed) -> Clip {
    let g = Gait { reach: d.reach, ..*d.base };
    let (sin, cos) = d.heading.sin_cos();
    // Hip swing axis: x for forwards, turned with the heading.
    let axis = Vec3::new(cos, 0.0, -sin);
    // Outwards along the heading: the left foot (+x) by +out·sin, the right by −out·sin.
    let (shift_l, shift_r) = (d.out * sin, -d.out * sin);
    let f = move |t: f32| {
        let u = (t / g.period).fract();
        let (al, bl, _, _) = leg(&g, u, shift_l);
        let (ar, br, _, _) = leg(&g, (u + 0.5).fract(), shift_r);
        let ph = TAU * u;
        let yaw = 0.08 * ph.cos();
        let undo = qa(Vec3::y(), -yaw);
        let mut rot = vec![
            (PELVIS, qa(Vec3::y(), yaw)),
            (SPINE_01, qa(Vec3::x(), g.lean * cos) * qa(Vec3::z(), -g.lean * sin) * qa(Vec3::y(), -0.12 * ph.cos())),
            (THIGH_L, undo * qa(axis, al)),
            (CALF_L, qa(Vec3::x(), bl)),
            (FOOT_L, qa(Vec3::x(), -bl) * qa(axis, -al)),
            (THIGH_R, undo * qa(axis, ar)),
            (CALF_R, qa(Vec3::x(), br)),
            (FOOT_R, qa(Vec3::x(), -br) * qa(axis, -ar)),
        ];
        let swing = g.arm * cos;
        rot.extend(arm_pose(swing * ph.cos(), -swing * ph.cos(), g.elbow, g.elbow));
        Frame { rot, pelvis: v(0.0, -drop(&g, u, shift_l, shift_r), 0.0) }
    };
    let p = g.period;
    let step = |times: Vec<f32>, values: Vec<f32>| {
        Track::new(Interpolation::Step, times, values).expect("contact keys are increasing")
    };
    let (mut right_times, mut right_values) = (vec![0.0, 0.5 * p], vec![0.0, 1.0]);
    if 0.5 + g.stance < 1.0 {
        right_times.push((0.5 + g.stance) * p);
        right_values.push(0.0);
    }
    right_times.push(p);
    right_values.push(0.0);
    let curves = vec![
        ScalarCurve { name: "foot_contact_l".into(), track: step(vec![0.0, g.stance * p, p], vec![1.0, 0.0, 1.0]) },
        ScalarCurve { name: "foot_contact_r".into(), track: step(right_times, right_values) },
    ];
    let depth = if d.base.name == RUN.name { 0.9 } else { 0.45 };
    bake(d.name, p, g.keys, true, &f, curves)
        .with_weight_tracks(vec![stride_breathing(&g, depth)])
        .expect("one weight track, for the mesh node")
}

/// Contact curves that hold a value over the whole clip.
fn held_contacts(duration: f32, value: f32) -> Vec<ScalarCurve> {
    ["foot_contact_l", "foot_contact_r"]
        .into_iter()
        .map(|name| ScalarCurve {
            name: name.into(),
            track: Track::new(Interpolation::Step, vec![0.0, duration], vec![value, value])
                .expect("two increasing keys"),
        })
        .collect()
}

/// The jump's first 0.5 s: crouch and push off, the feet planted to the end.
fn jump_takeoff() -> Clip {
    bake("jump_takeoff", 0.5, 15, false, &jump_frame, held_contacts(0.5, 1.0))
}

/// In the air (0.6 s, looping): legs tucked, arms drifting; the feet off the ground. The
/// body stays at its height: whoever plays it moves the character up and down.
fn jump_air() -> Clip {
    let f = |t: f32| {
        let ph = TAU * t / 0.6;
        let g = 0.45 + 0.05 * ph.sin();
        let arms = -1.6 + 0.2 * ph.cos();
        let mut rot = vec![
            (SPINE_01, qa(Vec3::x(), 0.2 * g)),
            (THIGH_L, qa(Vec3::x(), -1.5 * g)),
            (CALF_L, qa(Vec3::x(), 2.4 * g)),
            (FOOT_L, qa(Vec3::x(), -0.6 * g)),
            (THIGH_R, qa(Vec3::x(), -1.3 * g)),
            (CALF_R, qa(Vec3::x(), 2.3 * g)),
            (FOOT_R, qa(Vec3::x(), -0.6 * g)),
        ];
        rot.extend(arm_pose(arms, arms, 0.4, 0.4));
        Frame { rot, pelvis: Vec3::zeros() }
    };
    bake("jump_air", 0.6, 24, true, &f, held_contacts(0.6, 0.0))
}

/// The jump's last 0.5 s: touch down, absorb, stand up; the feet planted throughout.
fn jump_land() -> Clip {
    let f = |t: f32| {
        let mut fr = jump_frame(0.9 + t);
        // Ease the arms from the air pose's height.
        let arms = key(t, &[(0.0, -1.2), (0.15, 0.3), (0.5, 0.0)]);
        fr.rot.retain(|(j, _)| ![UPPERARM_L, UPPERARM_R, LOWERARM_L, LOWERARM_R].contains(j));
        fr.rot.extend(arm_pose(arms, arms, 0.3, 0.3));
        fr
    };
    bake("jump_land", 0.5, 15, false, &f, held_contacts(0.5, 1.0))
}

/// The clips added after the original six, in order: the directed gaits, then the jump
/// phases.
pub(crate) fn locomotion_clips() -> Vec<Clip> {
    let mut out: Vec<Clip> = DIRECTED.iter().map(directed).collect();
    out.extend([jump_takeoff(), jump_air(), jump_land()]);
    out
}

/// The ground velocity of a travelling clip: the opposite of its planted left ankle's
/// motion over the left foot's stance (sampled at the stance's ends), so that moving the
/// character at that velocity keeps planted feet in place. `None` for a clip without the
/// left contact curve or that does not travel.
pub(crate) fn travel_velocity(clip: &Clip, skeleton: &Skeleton) -> Option<Vec3> {
    let curve = clip.curve_index("foot_contact_l")?;
    let track = &clip.curves()[curve].track;
    let times = track.times();
    // The stance: from the first key that plants the foot to the next that lifts it.
    let down = (0..times.len()).find(|&k| *track.key_value(k) >= 0.5)?;
    let up = (down + 1..times.len()).find(|&k| *track.key_value(k) < 0.5)?;
    let (t0, t1) = (times[down], times[up]);
    if t1 <= t0 {
        return None;
    }
    let ankle = |t: f32| {
        let mut pose = skeleton.rest_pose().clone();
        clip.sample(t, TimePolicy::Clamp, &mut pose).ok()?;
        pose.global(skeleton, FOOT_L).map(|g| g.translation)
    };
    let d = -(ankle(t1)? - ankle(t0)?) / (t1 - t0);
    let v = Vec3::new(d.x, 0.0, d.z);
    (v.norm() > 1e-3).then_some(v)
}

/// `clip` with root motion at `velocity` (a motion track moving the character at that
/// velocity while the clip plays in place) and foot events from its contact curves
/// (`foot_down:<curve>` / `foot_up:<curve>` where they cross 0.5).
pub(crate) fn with_root_motion(clip: &Clip, velocity: Option<Vec3>) -> Clip {
    let mut out = clip.clone();
    if let Some(v) = velocity {
        let d = clip.duration();
        let track = MotionTrack::new(vec![0.0, d], vec![Transform::IDENTITY, Transform::from_translation(v * d)], d)
            .expect("two increasing key times");
        out = out.with_root_motion(track);
    }
    if out.events().is_empty() {
        let mut events = Vec::new();
        for c in clip.curves().iter().filter(|c| c.name.starts_with("foot_contact")) {
            let (down, up) = (format!("foot_down:{}", c.name), format!("foot_up:{}", c.name));
            events.extend(threshold_events(&c.track, 0.5, &down, &up));
        }
        events.sort_by(|a, b| a.time.total_cmp(&b.time));
        out = out.with_events(events).expect("curve crossings lie inside the clip");
    }
    out
}
