//! The clips: idle, walk, run, jump, punch and an additive lean, keyed from gait
//! parameters, with foot-contact curves and morph weight tracks.

use crate::joints::*;
use crate::mesh::smoothstep;
use anim_core::clip::{Clip, Interpolation, JointTracks, ScalarCurve, Track, WeightTrack};
use anim_core::pose::Skeleton;
use anim_math::{Quat, Vec3};
use nalgebra::{Quaternion, Unit};
use std::f32::consts::{PI, TAU};

pub(crate) fn qa(axis: Vec3, angle: f32) -> Quat {
    Quat::from_axis_angle(&Unit::new_normalize(axis), angle)
}

/// One pose of a procedural clip: local rotations of some joints and the pelvis offset.
#[derive(Clone, Default)]
pub(crate) struct Frame {
    pub(crate) rot: Vec<(usize, Quat)>,
    pub(crate) pelvis: Vec3,
}

/// Samples `f` at `keys + 1` evenly spaced times over `duration` into LINEAR tracks (the
/// last key repeats the first when `looping`).
pub(crate) fn bake(
    name: &str,
    duration: f32,
    keys: usize,
    looping: bool,
    f: &dyn Fn(f32) -> Frame,
    curves: Vec<ScalarCurve>,
) -> Clip {
    let times: Vec<f32> = (0..=keys).map(|k| duration * k as f32 / keys as f32).collect();
    let mut frames: Vec<Frame> = times.iter().map(|&t| f(t)).collect();
    if looping {
        frames[keys] = frames[0].clone();
    }
    let mut tracks = Vec::new();
    let mut pelvis = JointTracks::new(PELVIS);
    let rest_pelvis = v(0.0, PELVIS_HEIGHT, 0.0);
    pelvis.translation = Some(
        Track::new(Interpolation::Linear, times.clone(), frames.iter().map(|fr| rest_pelvis + fr.pelvis).collect())
            .expect("baked keys are increasing and finite"),
    );
    let joints: Vec<usize> = frames[0].rot.iter().map(|(j, _)| *j).collect();
    for (slot, &j) in joints.iter().enumerate() {
        let mut prev: Option<Quaternion<f32>> = None;
        let values: Vec<Quaternion<f32>> = frames
            .iter()
            .map(|fr| {
                let mut q = fr.rot[slot].1.into_inner();
                // Keep neighbouring keys in one hemisphere (cosmetic: slerp takes the short way anyway).
                if prev.is_some_and(|p| p.coords.dot(&q.coords) < 0.0) {
                    q = -q;
                }
                prev = Some(q);
                q
            })
            .collect();
        let track = Track::new(Interpolation::Linear, times.clone(), values).expect("baked keys are finite");
        if j == PELVIS {
            pelvis.rotation = Some(track);
        } else {
            let mut jt = JointTracks::new(j);
            jt.rotation = Some(track);
            tracks.push(jt);
        }
    }
    tracks.insert(0, pelvis);
    Clip::new(name, tracks, curves).expect("each joint has one track set")
}

/// The rest pose: the bind T-pose with the arms lowered about 45° and the elbows slightly
/// bent. Bind pose and inverse bind matrices stay the T-pose.
pub(crate) fn with_relaxed_rest(skeleton: Skeleton) -> Skeleton {
    let mut rest = skeleton.bind_pose().clone();
    let down = 0.8;
    for (joint, rotation) in [
        (UPPERARM_L, qa(Vec3::z(), -down)),
        (UPPERARM_R, qa(Vec3::z(), down)),
        (LOWERARM_L, qa(Vec3::y(), -0.2)),
        (LOWERARM_R, qa(Vec3::y(), 0.2)),
    ] {
        rest.locals_mut()[joint].rotation = rotation;
    }
    skeleton.with_rest_pose(rest).expect("the rest pose has the skeleton's joints and finite values")
}

/// Arms hanging down from the T-pose (rotation about the forward axis), swung about X.
pub(crate) fn arm_pose(swing_l: f32, swing_r: f32, elbow_l: f32, elbow_r: f32) -> [(usize, Quat); 4] {
    let down = 1.3;
    [
        (UPPERARM_L, qa(Vec3::x(), swing_l) * qa(Vec3::z(), -down)),
        (UPPERARM_R, qa(Vec3::x(), swing_r) * qa(Vec3::z(), down)),
        (LOWERARM_L, qa(Vec3::y(), -elbow_l)),
        (LOWERARM_R, qa(Vec3::y(), elbow_r)),
    ]
}

pub(crate) fn idle() -> Clip {
    let f = |t: f32| {
        let ph = TAU * t / 2.0;
        let mut rot = vec![
            (SPINE_02, qa(Vec3::x(), 0.025 * ph.sin())),
            (SPINE_03, qa(Vec3::x(), 0.02 * ph.sin())),
            (HEAD, qa(Vec3::y(), 0.05 * ph.sin())),
        ];
        rot.extend(arm_pose(0.03 * ph.sin(), 0.03 * ph.sin(), 0.15, 0.15));
        Frame { rot, pelvis: v(0.0, 0.004 * ph.cos(), 0.0) }
    };
    bake("idle", 2.0, 40, true, &f, Vec::new())
}

/// Gait parameters shared by walk and run.
#[derive(Clone, Copy)]
pub(crate) struct Gait {
    pub(crate) name: &'static str,
    pub(crate) period: f32,
    /// Fraction of the cycle a foot is planted.
    pub(crate) stance: f32,
    /// Forward reach of the foot from below the hip.
    pub(crate) reach: f32,
    /// Peak knee bend in swing.
    pub(crate) knee: f32,
    /// Pelvis rise in the flight phase.
    pub(crate) flight: f32,
    pub(crate) arm: f32,
    pub(crate) elbow: f32,
    pub(crate) lean: f32,
    pub(crate) keys: usize,
}

pub(crate) const WALK: Gait = Gait {
    name: "walk",
    period: 1.0,
    stance: 0.5,
    reach: 0.22,
    knee: 1.0,
    flight: 0.0,
    arm: 0.35,
    elbow: 0.3,
    lean: 0.03,
    keys: 48,
};
pub(crate) const RUN: Gait = Gait {
    name: "run",
    period: 0.7,
    stance: 0.38,
    reach: 0.3,
    knee: 1.7,
    flight: 0.05,
    arm: 0.6,
    elbow: 1.3,
    lean: 0.15,
    keys: 42,
};

/// One leg at cycle phase `u` in `[0, 1)` (0 = touch-down): hip pitch, knee bend,
/// whether planted, and the pelvis drop that puts a planted ankle at `ANKLE_HEIGHT`.
pub(crate) fn leg_at(g: &Gait, u: f32) -> (f32, f32, bool, f32) {
    let len = THIGH_LENGTH + SHIN_LENGTH;
    if u < g.stance {
        // Planted: the foot moves back linearly from +reach to −reach, the leg straight.
        let s = u / g.stance;
        let fwd = g.reach * (1.0 - 2.0 * s);
        let alpha = -(fwd / len).asin();
        (alpha, 0.0, true, len * (1.0 - alpha.cos()))
    } else {
        let s = (u - g.stance) / (1.0 - g.stance);
        let fwd = -g.reach * (PI * s).cos();
        let alpha = -(fwd / len).asin();
        (alpha, g.knee * (PI * s).sin(), false, 0.0)
    }
}

/// Pelvis drop of the gait at phase `u`: set by the planted leg, or a hop in flight.
pub(crate) fn pelvis_drop(g: &Gait, u: f32) -> f32 {
    let (_, _, pl, dl) = leg_at(g, u);
    let (_, _, pr, dr) = leg_at(g, (u + 0.5).fract());
    if pl {
        return dl;
    }
    if pr {
        return dr;
    }
    // Flight: between the two planted phases; both ends have the same drop.
    let len = THIGH_LENGTH + SHIN_LENGTH;
    let edge = len * (1.0 - (g.reach / len).asin().cos());
    let u0 = if u >= 0.5 { u - 0.5 } else { u };
    let s = (u0 - g.stance) / (0.5 - g.stance);
    edge - g.flight * (PI * s).sin()
}

pub(crate) fn walk_or_run(g: &'static Gait) -> Clip {
    let f = move |t: f32| {
        let u = (t / g.period).fract();
        let (al, bl, _, _) = leg_at(g, u);
        let (ar, br, _, _) = leg_at(g, (u + 0.5).fract());
        let ph = TAU * u;
        let mut rot = vec![
            (PELVIS, qa(Vec3::y(), 0.08 * ph.cos())),
            (SPINE_01, qa(Vec3::x(), g.lean) * qa(Vec3::y(), -0.12 * ph.cos())),
            (THIGH_L, qa(Vec3::x(), al)),
            (CALF_L, qa(Vec3::x(), bl)),
            (FOOT_L, qa(Vec3::x(), -(al + bl))),
            (THIGH_R, qa(Vec3::x(), ar)),
            (CALF_R, qa(Vec3::x(), br)),
            (FOOT_R, qa(Vec3::x(), -(ar + br))),
        ];
        // The pelvis yaw turns the hips; undo it on the legs so they swing straight.
        let undo = qa(Vec3::y(), -0.08 * ph.cos());
        for r in rot.iter_mut().filter(|r| r.0 == THIGH_L || r.0 == THIGH_R) {
            r.1 = undo * r.1;
        }
        rot.extend(arm_pose(g.arm * ph.cos(), -g.arm * ph.cos(), g.elbow, g.elbow));
        Frame { rot, pelvis: v(0.0, -pelvis_drop(g, u), 0.0) }
    };
    let p = g.period;
    let step = |times: Vec<f32>, values: Vec<f32>| {
        Track::new(Interpolation::Step, times, values).expect("contact keys are increasing")
    };
    // The right foot is planted from half the cycle for `stance` of it.
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
    bake(g.name, p, g.keys, true, &f, curves)
}

/// The value at `t` of a curve through `pts` (time, value), eased between points.
pub(crate) fn key(t: f32, pts: &[(f32, f32)]) -> f32 {
    let k = pts.iter().rposition(|p| p.0 <= t).unwrap_or(0).min(pts.len() - 2);
    let (t0, a) = pts[k];
    let (t1, b) = pts[k + 1];
    a + (b - a) * smoothstep(t0, t1, t)
}

/// The jump at time `t` of its 1.4 s: crouch, push off (0.5 s), air, land (0.9 s),
/// recover. Crouch angle γ(t): hips flex by γ, knees by 2γ, ankles by γ, so the feet stay
/// under the hips and the pelvis drops by (thigh + shin)(1 − cos γ) while grounded.
pub(crate) fn jump_frame(t: f32) -> Frame {
    let g = key(t, &[(0.0, 0.0), (0.35, 0.7), (0.5, 0.0), (0.7, 0.35), (0.9, 0.0), (1.05, 0.55), (1.4, 0.0)]);
    let airborne = (t > 0.5 && t < 0.9) as u8 as f32;
    let lift = airborne * 0.35 * (PI * (t - 0.5) / 0.4).sin();
    let len = THIGH_LENGTH + SHIN_LENGTH;
    let drop = if airborne > 0.0 { 0.0 } else { len * (1.0 - g.cos()) };
    let arms = key(t, &[(0.0, 0.0), (0.35, 0.8), (0.6, -2.2), (0.9, -0.6), (1.05, 0.3), (1.4, 0.0)]);
    let mut rot = vec![
        (SPINE_01, qa(Vec3::x(), 0.6 * g)),
        (THIGH_L, qa(Vec3::x(), -g)),
        (CALF_L, qa(Vec3::x(), 2.0 * g)),
        (FOOT_L, qa(Vec3::x(), -g)),
        (THIGH_R, qa(Vec3::x(), -g)),
        (CALF_R, qa(Vec3::x(), 2.0 * g)),
        (FOOT_R, qa(Vec3::x(), -g)),
    ];
    rot.extend(arm_pose(arms, arms, 0.3, 0.3));
    Frame { rot, pelvis: v(0.0, lift - drop, 0.0) }
}

pub(crate) fn jump() -> Clip {
    bake("jump", 1.4, 42, false, &jump_frame, Vec::new())
}

pub(crate) fn punch() -> Clip {
    let f = move |t: f32| {
        // e: 0 = guard, 1 = right arm fully extended forward.
        let e = key(t, &[(0.0, 0.0), (0.12, -0.15), (0.3, 1.0), (0.45, 1.0), (0.8, 0.0)]);
        let twist = 0.35 * e;
        // Right arm from hanging (Rz(1.3)) towards forward (Ry(π/2)) as e goes to 1.
        let hang = qa(Vec3::x(), -0.9) * qa(Vec3::z(), 1.3);
        let forward = qa(Vec3::y(), PI / 2.0);
        let upper_r = hang.slerp(&forward, e.clamp(0.0, 1.0));
        let mut rot = vec![
            // Turning about +Y brings the right shoulder forward into the punch.
            (SPINE_02, qa(Vec3::y(), twist * 0.5)),
            (SPINE_03, qa(Vec3::y(), twist * 0.5)),
            (HEAD, qa(Vec3::y(), -twist * 0.8)),
            (UPPERARM_L, qa(Vec3::x(), -0.9) * qa(Vec3::z(), -1.3)),
            (LOWERARM_L, qa(Vec3::y(), -2.0)),
            (UPPERARM_R, upper_r),
            (LOWERARM_R, qa(Vec3::y(), 2.0 * (1.0 - e.clamp(0.0, 1.0)) + 0.05)),
        ];
        rot.push((PELVIS, qa(Vec3::y(), 0.1 * e)));
        Frame { rot, pelvis: v(0.0, -0.02 * e.abs(), 0.03 * e) }
    };
    bake("punch", 0.8, 32, false, &f, Vec::new())
}

pub(crate) fn lean_left() -> Clip {
    let bend = -0.14; // about +Z: the top moves towards +X (the character's left)
    let mut tracks = Vec::new();
    for j in [SPINE_01, SPINE_02, SPINE_03] {
        let mut jt = JointTracks::new(j);
        jt.rotation = Some(
            Track::new(
                Interpolation::Linear,
                vec![0.0, 1.0],
                vec![Quat::identity().into_inner(), qa(Vec3::z(), bend).into_inner()],
            )
            .expect("two increasing keys"),
        );
        tracks.push(jt);
    }
    Clip::new("lean_left", tracks, Vec::new()).expect("each joint has one track set")
}

/// The idle's morph weights: one breath over the 2 s cycle, a brow raise at its top.
pub(crate) fn breathing() -> WeightTrack {
    let times = vec![0.0, 0.5, 1.0, 1.5, 2.0];
    // (breathe, brow_raise) a key.
    let values = vec![0.0, 0.0, 0.5, 0.0, 1.0, 1.0, 0.5, 0.0, 0.0, 0.0];
    WeightTrack::new(MESH_NODE, 2, Interpolation::Linear, times, values).expect("increasing keys, two weights each")
}

/// Breathing in step with a gait: one breath a cycle, `depth` the largest `breathe` weight
/// (deeper when running); the brow stays down.
pub(crate) fn stride_breathing(g: &Gait, depth: f32) -> WeightTrack {
    let p = g.period;
    let times = vec![0.0, 0.5 * p, p];
    let values = vec![0.2 * depth, 0.0, depth, 0.0, 0.2 * depth, 0.0];
    WeightTrack::new(MESH_NODE, 2, Interpolation::Linear, times, values).expect("increasing keys, two weights each")
}
