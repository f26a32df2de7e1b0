//! The anim runtime's default character: a procedurally generated humanoid mannequin with
//! clips authored in code. Deterministic, no external asset. It is content, not runtime,
//! so it lives outside `anim-core`; demos, tests, benchmarks and `animtool export-default`
//! use it. It depends on `anim-core`, `anim-math` and nalgebra only.
//!
//! ```
//! use anim_core::clip::TimePolicy;
//! use anim_core::skin::{palette, Skin};
//! use anim_math::Mat4;
//! use anim_mannequin::{ANKLE_HEIGHT, JOINT_NAMES, Side};
//!
//! let m = anim_mannequin::build();
//! assert_eq!(m.skeleton.len(), JOINT_NAMES.len());
//!
//! // Pose it from the walk at t = 0 (the left foot touches down) and build a palette.
//! let walk = m.clip("walk").expect("the mannequin has a walk");
//! let mut pose = m.skeleton.rest_pose().clone();
//! walk.sample(0.0, TimePolicy::Wrap, &mut pose).unwrap();
//! let mut model = vec![Mat4::identity(); m.skeleton.len()];
//! pose.local_to_model(&m.skeleton, &mut model).unwrap();
//! let skin = Skin::from_skeleton(&m.skeleton);
//! let mut pal = vec![Mat4::identity(); skin.len()];
//! palette::skinning_matrices(&model, &skin, &mut pal).unwrap();
//!
//! // The planted left ankle is at ANKLE_HEIGHT.
//! let ankle = model[m.leg(Side::Left).ankle];
//! assert!((ankle[(1, 3)] - ANKLE_HEIGHT).abs() < 0.005);
//! ```
//!
//!
//! **Conventions.** Y up, +Z forward (the character faces +Z, its left is +X), metres,
//! 1.81 m tall, feet on `y = 0`. The **bind pose** (the pose the mesh is modelled in, which
//! the inverse bind matrices undo) is a T-pose in which every joint's rotation is the
//! identity, so each joint's local axes are the model axes. The **rest pose** (the joints'
//! authored transforms, what a file's nodes say when no clip plays) differs from it, as in
//! most exported characters: the arms hang in a relaxed A-pose. `ch10_poses` shows the two
//! side by side.
//!
//! **Joints** (22, parents first; the skeleton index equals the position in [`JOINT_NAMES`]):
//!
//! ```text
//! pelvis ─┬─ spine_01 ─ spine_02 ─ spine_03 ─┬─ neck ─ head
//!         │                                  ├─ clavicle_l ─ upperarm_l ─ lowerarm_l ─ hand_l
//!         │                                  └─ clavicle_r ─ upperarm_r ─ lowerarm_r ─ hand_r
//!         ├─ thigh_l ─ calf_l ─ foot_l ─ ball_l
//!         └─ thigh_r ─ calf_r ─ foot_r ─ ball_r
//! ```
//!
//! `thigh` is the hip joint, `calf` the knee, `foot` the ankle, `ball` the ball of the foot
//! (toe joint); see [`Mannequin::leg`].
//!
//! **Mesh.** Swept rings around the bone chains (torso with neck and head, arms, legs,
//! feet), 24 vertices a ring, capped ends; 6,542 vertices with normals. Vertices near
//! a joint blend smoothly between the two bones meeting there (at most 2 non-zero weights of
//! the 4 stored; weights sum to 1).
//!
//! **Morph targets** ([`Mannequin::morph`]): `breathe` (the chest widens) and `brow_raise`;
//! the idle animates both with a weights track on [`MESH_NODE`], and walk and run breathe
//! once a stride.
//!
//! **Clips.** `idle` (2 s), `walk` (1 s), `run` (0.7 s) loop with the same phase convention:
//! the left foot touches down at `t = 0` and the right foot at half the cycle, so they can
//! be blended by normalized time. Walk and run carry STEP curves `foot_contact_l` /
//! `foot_contact_r` (1 = planted, 0 = in the air); while a foot is planted its ankle is
//! at [`ANKLE_HEIGHT`] (the animation is in place: the planted foot slides back at the
//! walking speed). `jump` (1.4 s) and `punch` (0.8 s) play once. `lean_left` is an additive
//! pose with two keys: key 0 is the rest pose (the reference), key 1 bends the spine to the
//! character's left.

#![warn(missing_docs)]

use anim_core::clip::{Clip, Interpolation, JointTracks, ScalarCurve, Track, WeightTrack};

use anim_core::pose::{JointDesc, Skeleton};

use anim_core::skin::{Influences, Mesh, MorphTargets};
use anim_math::{Quat, Transform, Vec3};
use nalgebra::{Quaternion, Unit};
use std::f32::consts::{PI, TAU};

/// Joint names in skeleton order.
pub const JOINT_NAMES: [&str; 22] = [
    "pelvis",
    "spine_01",
    "spine_02",
    "spine_03",
    "neck",
    "head",
    "clavicle_l",
    "upperarm_l",
    "lowerarm_l",
    "hand_l",
    "clavicle_r",
    "upperarm_r",
    "lowerarm_r",
    "hand_r",
    "thigh_l",
    "calf_l",
    "foot_l",
    "ball_l",
    "thigh_r",
    "calf_r",
    "foot_r",
    "ball_r",
];

const PELVIS: usize = 0;
const SPINE_01: usize = 1;
const SPINE_02: usize = 2;
const SPINE_03: usize = 3;
const NECK: usize = 4;
const HEAD: usize = 5;
const CLAVICLE_L: usize = 6;
const UPPERARM_L: usize = 7;
const LOWERARM_L: usize = 8;
const HAND_L: usize = 9;
const CLAVICLE_R: usize = 10;
const UPPERARM_R: usize = 11;
const LOWERARM_R: usize = 12;
const HAND_R: usize = 13;
const THIGH_L: usize = 14;
const CALF_L: usize = 15;
const FOOT_L: usize = 16;
const BALL_L: usize = 17;
const THIGH_R: usize = 18;
const CALF_R: usize = 19;
const FOOT_R: usize = 20;
const BALL_R: usize = 21;

/// Height of the pelvis joint above the ground at rest.
pub const PELVIS_HEIGHT: f32 = 1.0;
/// Height of the ankle (`foot_*`) joints above the ground at rest.
pub const ANKLE_HEIGHT: f32 = 0.09;
/// Height of the ball (`ball_*`) joints above the ground at rest.
pub const BALL_HEIGHT: f32 = 0.03;
/// Hip to knee length.
pub const THIGH_LENGTH: f32 = 0.43;
/// Knee to ankle length.
pub const SHIN_LENGTH: f32 = 0.43;
/// Height of the top of the head at rest.
pub const HEIGHT: f32 = 1.81;
/// Vertices a ring of the generated mesh.
pub const RING_SEGMENTS: usize = 24;

/// A body side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The character's left (+X).
    Left,
    /// The character's right (−X).
    Right,
}

/// Skeleton indices of one leg's joints (for foot IK).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Leg {
    /// Hip (`thigh_*`).
    pub hip: usize,
    /// Knee (`calf_*`).
    pub knee: usize,
    /// Ankle (`foot_*`).
    pub ankle: usize,
    /// Ball of the foot (`ball_*`).
    pub toe: usize,
}

/// The default character.
#[derive(Clone, Debug)]
pub struct Mannequin {
    /// 22 joints (see the crate docs): the rest pose hangs the arms in an A-pose, the bind
    /// pose is the T-pose.
    pub skeleton: Skeleton,
    /// The skinned mesh; influence joint indices are skeleton indices (bind it with
    /// [`anim_core::skin::Skin::from_skeleton`]).
    pub mesh: Mesh,
    /// `idle`, `walk`, `run`, `jump`, `punch`, `lean_left`, in this order. `idle`, `walk`
    /// and `run` also animate the mesh's morph weights (a [`anim_core::clip::WeightTrack`] for
    /// [`MESH_NODE`]): a breath and a brow raise in the idle, a breath a stride when moving.
    pub clips: Vec<Clip>,
    /// Morph targets of [`Mannequin::mesh`], named as in [`MORPH_TARGETS`]: `breathe`
    /// widens the chest along its horizontal normals (up to 3 cm), `brow_raise` lifts the
    /// front of the forehead (up to 2 cm). Default weights zero.
    pub morph: MorphTargets,
}

/// Names of the mannequin's morph targets, in target order.
pub const MORPH_TARGETS: [&str; 2] = ["breathe", "brow_raise"];

/// What the mannequin's weight tracks target: the index its mesh node gets when the
/// character is exported (after the 22 joint nodes), so the weights travel as a glTF
/// `weights` channel on that node and come back from import on the same index.
pub const MESH_NODE: usize = JOINT_NAMES.len();

impl Mannequin {
    /// The joints of one leg.
    pub fn leg(&self, side: Side) -> Leg {
        match side {
            Side::Left => Leg { hip: THIGH_L, knee: CALF_L, ankle: FOOT_L, toe: BALL_L },
            Side::Right => Leg { hip: THIGH_R, knee: CALF_R, ankle: FOOT_R, toe: BALL_R },
        }
    }

    /// The clip with this name.
    pub fn clip(&self, name: &str) -> Option<&Clip> {
        self.clips.iter().find(|c| c.name() == name)
    }
}

/// Builds the mannequin. Deterministic: every call returns the same data.
pub fn build() -> Mannequin {
    let skeleton = with_relaxed_rest(skeleton());
    let mesh = mesh();
    let morph = morph_targets(&mesh);
    let idle = idle().with_weight_tracks(vec![breathing()]).expect("one weight track, for the mesh node");
    let walk = walk_or_run(&WALK).with_weight_tracks(vec![stride_breathing(&WALK, 0.45)]).expect("one weight track");
    let run = walk_or_run(&RUN).with_weight_tracks(vec![stride_breathing(&RUN, 0.9)]).expect("one weight track");
    let clips = vec![idle, walk, run, jump(), punch(), lean_left()];
    Mannequin { skeleton, mesh, clips, morph }
}

/// The two morph targets (see [`Mannequin::morph`]), from the mesh's bind-pose positions,
/// normals and influences.
fn morph_targets(mesh: &Mesh) -> MorphTargets {
    let n = mesh.vertex_count();
    let inf = mesh.influences.as_ref().expect("the mannequin mesh is skinned");
    let per = inf.per_vertex();
    let weight_of = |i: usize, joints: &[usize]| -> f32 {
        (0..per)
            .filter(|&k| joints.contains(&usize::from(inf.joints()[i * per + k])))
            .map(|k| inf.weights()[i * per + k])
            .sum()
    };
    let breathe: Vec<Vec3> = (0..n)
        .map(|i| {
            let w = weight_of(i, &[SPINE_02, SPINE_03]);
            let nrm = mesh.normals[i];
            v(nrm.x, 0.0, nrm.z) * (0.03 * w)
        })
        .collect();
    let head: Vec<bool> = (0..n).map(|i| weight_of(i, &[HEAD]) > 0.5).collect();
    let top = (0..n).filter(|&i| head[i]).map(|i| mesh.positions[i].y).fold(f32::NEG_INFINITY, f32::max);
    let brow: Vec<Vec3> = (0..n)
        .map(|i| {
            let p = mesh.positions[i];
            let front = mesh.normals[i].z;
            let band = (p.y - (top - 0.13)) / 0.1;
            if head[i] && front > 0.3 && (0.0..=1.0).contains(&band) {
                // A bump over the band, largest in its middle.
                v(0.0, 0.02 * (PI * band).sin() * front, 0.0)
            } else {
                Vec3::zeros()
            }
        })
        .collect();
    MorphTargets::new(n, 2)
        .with_positions(vec![breathe, brow])
        .and_then(|m| m.with_names(MORPH_TARGETS.iter().map(|s| (*s).to_owned()).collect()))
        .expect("one delta a vertex and one name a target")
}

/// The idle's morph weights: one breath over the 2 s cycle, a brow raise at its top.
fn breathing() -> WeightTrack {
    let times = vec![0.0, 0.5, 1.0, 1.5, 2.0];
    // (breathe, brow_raise) a key.
    let values = vec![0.0, 0.0, 0.5, 0.0, 1.0, 1.0, 0.5, 0.0, 0.0, 0.0];
    WeightTrack::new(MESH_NODE, 2, Interpolation::Linear, times, values).expect("increasing keys, two weights each")
}

/// Breathing in step with a gait: one breath a cycle, `depth` the largest `breathe` weight
/// (deeper when running); the brow stays down.
fn stride_breathing(g: &Gait, depth: f32) -> WeightTrack {
    let p = g.period;
    let times = vec![0.0, 0.5 * p, p];
    let values = vec![0.2 * depth, 0.0, depth, 0.0, 0.2 * depth, 0.0];
    WeightTrack::new(MESH_NODE, 2, Interpolation::Linear, times, values).expect("increasing keys, two weights each")
}

fn v(x: f32, y: f32, z: f32) -> Vec3 {
    Vec3::new(x, y, z)
}

/// Rest local offsets (rotations are the identity), indexed like [`JOINT_NAMES`].
fn rest_offsets() -> [(Option<usize>, Vec3); 22] {
    [
        (None, v(0.0, PELVIS_HEIGHT, 0.0)),
        (Some(PELVIS), v(0.0, 0.10, 0.0)),
        (Some(SPINE_01), v(0.0, 0.12, 0.0)),
        (Some(SPINE_02), v(0.0, 0.12, 0.0)),
        (Some(SPINE_03), v(0.0, 0.16, 0.0)),
        (Some(NECK), v(0.0, 0.10, 0.0)),
        (Some(SPINE_03), v(0.04, 0.10, 0.0)),
        (Some(CLAVICLE_L), v(0.14, 0.0, 0.0)),
        (Some(UPPERARM_L), v(0.28, 0.0, 0.0)),
        (Some(LOWERARM_L), v(0.26, 0.0, 0.0)),
        (Some(SPINE_03), v(-0.04, 0.10, 0.0)),
        (Some(CLAVICLE_R), v(-0.14, 0.0, 0.0)),
        (Some(UPPERARM_R), v(-0.28, 0.0, 0.0)),
        (Some(LOWERARM_R), v(-0.26, 0.0, 0.0)),
        (Some(PELVIS), v(0.10, -0.05, 0.0)),
        (Some(THIGH_L), v(0.0, -THIGH_LENGTH, 0.0)),
        (Some(CALF_L), v(0.0, -SHIN_LENGTH, 0.0)),
        (Some(FOOT_L), v(0.0, BALL_HEIGHT - ANKLE_HEIGHT, 0.12)),
        (Some(PELVIS), v(-0.10, -0.05, 0.0)),
        (Some(THIGH_R), v(0.0, -THIGH_LENGTH, 0.0)),
        (Some(CALF_R), v(0.0, -SHIN_LENGTH, 0.0)),
        (Some(FOOT_R), v(0.0, BALL_HEIGHT - ANKLE_HEIGHT, 0.12)),
    ]
}

fn rest_world() -> [Vec3; 22] {
    let offs = rest_offsets();
    let mut w = [Vec3::zeros(); 22];
    for (i, (p, o)) in offs.iter().enumerate() {
        w[i] = p.map_or(*o, |p| w[p] + o);
    }
    w
}

fn skeleton() -> Skeleton {
    let joints = rest_offsets()
        .iter()
        .zip(JOINT_NAMES)
        .map(|((p, o), name)| JointDesc::new(name, *p, Transform::from_translation(*o)))
        .collect();
    Skeleton::new(joints).expect("the mannequin's joint table is a valid tree")
}

// ---------------------------------------------------------------------------------------------
// Mesh

/// A tube swept along a polyline of `points`; segment `k` (from `points[k]` to
/// `points[k + 1]`) belongs to `bones[k]`. `radius(a)` gives the (x, z-ish) radii at arc
/// length `a`; rings are blended between neighbouring bones within `blend` of each inner point.
struct Tube<'a> {
    points: &'a [Vec3],
    bones: &'a [usize],
    rings: usize,
    blend: f32,
    /// Radii along the two ring axes `u` and `v` at arc-length fraction `s` in `[0, 1]`.
    radius: &'a dyn Fn(f32) -> (f32, f32),
    /// Ring axis `u` (perpendicular to the tube); `v = axis × u`.
    up: Vec3,
}

fn smoothstep(e0: f32, e1: f32, x: f32) -> f32 {
    let t = ((x - e0) / (e1 - e0)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

fn add_tube(mesh: &mut Vec<(Vec3, Vec3, [u16; 2], [f32; 2])>, indices: &mut Vec<u32>, tube: &Tube) {
    let pts = tube.points;
    let seg_len: Vec<f32> = pts.windows(2).map(|w| (w[1] - w[0]).norm()).collect();
    let total: f32 = seg_len.iter().sum();
    let mut cum = vec![0.0f32];
    for l in &seg_len {
        cum.push(cum.last().copied().unwrap_or(0.0) + l);
    }
    let at = |a: f32| -> (Vec3, usize, f32) {
        let k = (0..seg_len.len()).rfind(|&k| cum[k] <= a).unwrap_or(0);
        let f = ((a - cum[k]) / seg_len[k]).clamp(0.0, 1.0);
        (pts[k] + (pts[k + 1] - pts[k]) * f, k, f)
    };
    let n = RING_SEGMENTS;
    let base = mesh.len() as u32;
    let mut grid: Vec<Vec3> = Vec::with_capacity(tube.rings * n);
    let mut weights = Vec::with_capacity(tube.rings);
    for r in 0..tube.rings {
        let s = r as f32 / (tube.rings - 1) as f32;
        let a = s * total;
        let (c, k, _) = at(a);
        let axis = (pts[k + 1] - pts[k]).normalize();
        let u = (tube.up - axis * tube.up.dot(&axis)).normalize();
        let w = axis.cross(&u);
        let (ru, rv) = (tube.radius)(s);
        for j in 0..n {
            let th = TAU * j as f32 / n as f32;
            grid.push(c + u * (ru * th.cos()) + w * (rv * th.sin()));
        }
        // Blend with the neighbouring bone near an inner point.
        let mut wt = ([tube.bones[k] as u16, 0u16], [1.0f32, 0.0f32]);
        if k > 0 && a - cum[k] < tube.blend && tube.bones[k - 1] != tube.bones[k] {
            let t = smoothstep(-tube.blend, tube.blend, a - cum[k]);
            wt = ([tube.bones[k] as u16, tube.bones[k - 1] as u16], [t, 1.0 - t]);
        } else if k + 1 < seg_len.len() && cum[k + 1] - a < tube.blend && tube.bones[k + 1] != tube.bones[k] {
            let t = smoothstep(-tube.blend, tube.blend, a - cum[k + 1]);
            wt = ([tube.bones[k] as u16, tube.bones[k + 1] as u16], [1.0 - t, t]);
        }
        weights.push(wt);
    }
    // Normals from the grid: (d/dθ) × (d/ds), outward.
    for r in 0..tube.rings {
        for j in 0..n {
            let p = |rr: usize, jj: usize| grid[rr * n + jj % n];
            let dth = p(r, j + 1) - p(r, j + n - 1);
            let ds = p((r + 1).min(tube.rings - 1), j) - p(r.saturating_sub(1), j);
            let mut nrm = dth.cross(&ds);
            if nrm.norm() < 1e-12 {
                nrm = p(r, j) - grid[r * n..r * n + n].iter().sum::<Vec3>() / n as f32;
            }
            mesh.push((p(r, j), nrm.normalize(), weights[r].0, weights[r].1));
        }
    }
    for r in 0..tube.rings - 1 {
        for j in 0..n {
            let a = base + (r * n + j) as u32;
            let b = base + (r * n + (j + 1) % n) as u32;
            let c = a + n as u32;
            let d = b + n as u32;
            indices.extend_from_slice(&[a, b, c, b, d, c]);
        }
    }
    // Caps: a centre vertex at each end, normal along the axis.
    for (r, sign) in [(0usize, -1.0f32), (tube.rings - 1, 1.0)] {
        let ring = &grid[r * n..r * n + n];
        let centre = ring.iter().sum::<Vec3>() / n as f32;
        let k = if r == 0 { 0 } else { pts.len() - 2 };
        let axis = (pts[k + 1] - pts[k]).normalize() * sign;
        let ci = mesh.len() as u32;
        mesh.push((centre, axis, weights[r].0, weights[r].1));
        let rb = base + (r * n) as u32;
        for j in 0..n {
            let a = rb + j as u32;
            let b = rb + ((j + 1) % n) as u32;
            if sign > 0.0 {
                indices.extend_from_slice(&[a, b, ci]);
            } else {
                indices.extend_from_slice(&[b, a, ci]);
            }
        }
    }
}

fn mesh() -> Mesh {
    let w = rest_world();
    let mut verts = Vec::new();
    let mut indices = Vec::new();
    // Torso, neck and head along +Y. Radii by height: hips, waist, chest, shoulders, neck, head.
    let bottom = 0.86f32;
    let top = HEIGHT;
    let torso_profile = |s: f32| -> (f32, f32) {
        let y = bottom + s * (top - bottom);
        let lerp = |pts: &[(f32, f32)]| -> f32 {
            let k = pts.iter().rposition(|p| p.0 <= y).unwrap_or(0).min(pts.len() - 2);
            let (y0, r0) = pts[k];
            let (y1, r1) = pts[k + 1];
            r0 + (r1 - r0) * smoothstep(y0, y1, y)
        };
        if y > 1.58 {
            // Head: an ellipsoid from 1.58 to the top, centre 1.70.
            let c = 1.695;
            let h = top - c;
            let d = ((y - c) / h).clamp(-1.0, 1.0);
            let r = 0.095 * (1.0 - d * d).max(0.0).sqrt().max(0.12);
            let neck = 0.05 * (1.0 - smoothstep(1.58, 1.62, y));
            return (r.max(neck), r.max(neck) * 1.1);
        }
        let rx = lerp(&[
            (0.86, 0.06),
            (0.92, 0.15),
            (1.0, 0.16),
            (1.12, 0.13),
            (1.3, 0.17),
            (1.42, 0.16),
            (1.5, 0.05),
            (1.58, 0.05),
        ]);
        let rz = lerp(&[
            (0.86, 0.05),
            (0.92, 0.11),
            (1.0, 0.12),
            (1.12, 0.10),
            (1.3, 0.12),
            (1.42, 0.11),
            (1.5, 0.05),
            (1.58, 0.05),
        ]);
        (rx, rz)
    };
    let torso_pts = [v(0.0, bottom, 0.0), w[SPINE_01], w[SPINE_02], w[SPINE_03], w[NECK], w[HEAD], v(0.0, top, 0.0)];
    add_tube(
        &mut verts,
        &mut indices,
        &Tube {
            points: &torso_pts,
            bones: &[PELVIS, SPINE_01, SPINE_02, SPINE_03, NECK, HEAD],
            rings: 64,
            blend: 0.04,
            radius: &torso_profile,
            up: Vec3::x(),
        },
    );
    // Arms along ±X: clavicle, upper arm, forearm, hand.
    for (clav, up, low, hand, sx) in
        [(CLAVICLE_L, UPPERARM_L, LOWERARM_L, HAND_L, 1.0f32), (CLAVICLE_R, UPPERARM_R, LOWERARM_R, HAND_R, -1.0)]
    {
        let pts = [w[clav], w[up], w[low], w[hand], w[hand] + v(sx * 0.17, 0.0, 0.0)];
        let arm = |s: f32| {
            let x = s * 0.87;
            let r = if x < 0.14 {
                0.055
            } else if x < 0.70 {
                0.055 - 0.02 * smoothstep(0.14, 0.70, x)
            } else {
                let t = (x - 0.70) / 0.17;
                0.035 + 0.01 * (PI * t).sin()
            };
            let taper = (1.0 - smoothstep(0.97, 1.0, s) * 0.6).max(0.3);
            (r * taper, if x >= 0.70 { r * 0.55 * taper } else { r * taper })
        };
        add_tube(
            &mut verts,
            &mut indices,
            &Tube { points: &pts, bones: &[clav, up, low, hand], rings: 40, blend: 0.04, radius: &arm, up: Vec3::y() },
        );
    }
    // Legs along −Y from inside the pelvis to just below the ankle; feet along +Z.
    for (thigh, calf, foot, ball) in [(THIGH_L, CALF_L, FOOT_L, BALL_L), (THIGH_R, CALF_R, FOOT_R, BALL_R)] {
        let pts = [w[thigh] + v(0.0, 0.07, 0.0), w[thigh], w[calf], w[foot] + v(0.0, -0.01, 0.0)];
        let leg = |s: f32| {
            let y = s * 0.95;
            let r =
                if y < 0.5 { 0.085 - 0.03 * smoothstep(0.0, 0.5, y) } else { 0.055 - 0.015 * smoothstep(0.5, 0.95, y) };
            (r, r)
        };
        add_tube(
            &mut verts,
            &mut indices,
            &Tube { points: &pts, bones: &[PELVIS, thigh, calf], rings: 44, blend: 0.05, radius: &leg, up: Vec3::x() },
        );
        let fx = w[foot].x;
        let hr = 0.045; // foot half height: the sole touches y = 0
        let fpts = [v(fx, hr, -0.06), v(fx, hr, w[ball].z), v(fx, hr, w[ball].z + 0.09)];
        let prof = |s: f32| {
            let e = (s * PI).sin().max(0.0).powf(0.35).max(0.25);
            (0.05 * e, hr * e)
        };
        add_tube(
            &mut verts,
            &mut indices,
            &Tube { points: &fpts, bones: &[foot, ball], rings: 20, blend: 0.03, radius: &prof, up: Vec3::x() },
        );
    }
    let positions = verts.iter().map(|v| v.0).collect();
    let normals = verts.iter().map(|v| v.1).collect();
    let mut joints = Vec::with_capacity(verts.len() * 4);
    let mut weights = Vec::with_capacity(verts.len() * 4);
    for (_, _, j, wt) in &verts {
        if wt[1] > 0.0 && j[0] != j[1] {
            joints.extend_from_slice(&[j[0], j[1], 0, 0]);
            weights.extend_from_slice(&[wt[0], wt[1], 0.0, 0.0]);
        } else {
            joints.extend_from_slice(&[j[0], 0, 0, 0]);
            weights.extend_from_slice(&[1.0, 0.0, 0.0, 0.0]);
        }
    }
    // Make the stored weights sum to one exactly in f32.
    for w4 in weights.chunks_exact_mut(4) {
        w4[0] = 1.0 - w4[1];
    }
    let influences = Influences::new(4, joints, weights, JOINT_NAMES.len())
        .expect("generated influences use the 22 joints with non-negative weights");
    let uvs = verts.iter().map(|v| [v.0.x * 0.5 + 0.5, 1.0 - v.0.y / HEIGHT]).collect();
    Mesh { positions, normals, uvs, influences: Some(influences), indices }
}

// ---------------------------------------------------------------------------------------------
// Clips

fn qa(axis: Vec3, angle: f32) -> Quat {
    Quat::from_axis_angle(&Unit::new_normalize(axis), angle)
}

/// One pose of a procedural clip: local rotations of some joints and the pelvis offset.
#[derive(Clone, Default)]
struct Frame {
    rot: Vec<(usize, Quat)>,
    pelvis: Vec3,
}

/// Samples `f` at `keys + 1` evenly spaced times over `duration` into LINEAR tracks (the
/// last key repeats the first when `looping`).
fn bake(
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
fn with_relaxed_rest(skeleton: Skeleton) -> Skeleton {
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
fn arm_pose(swing_l: f32, swing_r: f32, elbow_l: f32, elbow_r: f32) -> [(usize, Quat); 4] {
    let down = 1.3;
    [
        (UPPERARM_L, qa(Vec3::x(), swing_l) * qa(Vec3::z(), -down)),
        (UPPERARM_R, qa(Vec3::x(), swing_r) * qa(Vec3::z(), down)),
        (LOWERARM_L, qa(Vec3::y(), -elbow_l)),
        (LOWERARM_R, qa(Vec3::y(), elbow_r)),
    ]
}

fn idle() -> Clip {
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
struct Gait {
    name: &'static str,
    period: f32,
    /// Fraction of the cycle a foot is planted.
    stance: f32,
    /// Forward reach of the foot from below the hip.
    reach: f32,
    /// Peak knee bend in swing.
    knee: f32,
    /// Pelvis rise in the flight phase.
    flight: f32,
    arm: f32,
    elbow: f32,
    lean: f32,
    keys: usize,
}

const WALK: Gait = Gait {
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
const RUN: Gait = Gait {
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
fn leg_at(g: &Gait, u: f32) -> (f32, f32, bool, f32) {
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
fn pelvis_drop(g: &Gait, u: f32) -> f32 {
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

fn walk_or_run(g: &'static Gait) -> Clip {
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

fn jump() -> Clip {
    // Crouch angle γ(t): hips flex by γ, knees by 2γ, ankles by γ, so the feet stay
    // under the hips and the pelvis drops by (thigh + shin)(1 − cos γ) while grounded.
    let key = |t: f32, pts: &[(f32, f32)]| -> f32 {
        let k = pts.iter().rposition(|p| p.0 <= t).unwrap_or(0).min(pts.len() - 2);
        let (t0, a) = pts[k];
        let (t1, b) = pts[k + 1];
        a + (b - a) * smoothstep(t0, t1, t)
    };
    let f = move |t: f32| {
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
    };
    bake("jump", 1.4, 42, false, &f, Vec::new())
}

fn punch() -> Clip {
    let key = |t: f32, pts: &[(f32, f32)]| -> f32 {
        let k = pts.iter().rposition(|p| p.0 <= t).unwrap_or(0).min(pts.len() - 2);
        let (t0, a) = pts[k];
        let (t1, b) = pts[k + 1];
        a + (b - a) * smoothstep(t0, t1, t)
    };
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

fn lean_left() -> Clip {
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

#[cfg(test)]
mod tests {
    use super::*;
    use anim_core::clip::TimePolicy;
    use anim_core::pose::Pose;
    use anim_core::skin::{Skin, palette, skinning};
    use anim_math::Mat4;

    fn world(m: &Mannequin, pose: &Pose) -> Vec<Mat4> {
        let mut out = vec![Mat4::identity(); m.skeleton.len()];
        pose.local_to_model(&m.skeleton, &mut out).unwrap();
        out
    }

    fn pos(m: &Mat4) -> Vec3 {
        Vec3::new(m[(0, 3)], m[(1, 3)], m[(2, 3)])
    }

    #[test]
    fn skeleton_and_mesh_counts() {
        let m = build();
        assert_eq!(m.skeleton.len(), 22);
        for (i, n) in JOINT_NAMES.iter().enumerate() {
            assert_eq!(m.skeleton.find(n), Some(i));
        }
        assert!(m.mesh.vertex_count() >= 3000, "{}", m.mesh.vertex_count());
        assert_eq!(m.mesh.vertex_count(), 6542);
        assert_eq!(m.mesh.normals.len(), m.mesh.vertex_count());
        assert_eq!(m.mesh.indices.len() % 3, 0);
        let inf = m.mesh.influences.as_ref().unwrap();
        assert_eq!(inf.per_vertex(), 4);
        assert!(inf.unweighted().is_empty());
        let mut blended = 0;
        for ws in inf.weights().chunks_exact(4) {
            assert!((ws.iter().sum::<f32>() - 1.0).abs() < 1e-6);
            blended += (ws.iter().filter(|w| **w > 0.0).count() > 1) as usize;
        }
        // Smooth weights: a good share of the vertices blend two bones.
        assert!(blended > 300, "{blended}");
        let (lo, hi) = m.mesh.bounds().unwrap();
        assert!(lo.y.abs() < 1e-4, "feet on the ground: min y = {}", lo.y);
        assert!((hi.y - HEIGHT).abs() < 0.02, "height {}", hi.y);
        for n in &m.mesh.normals {
            assert!((n.norm() - 1.0).abs() < 1e-4);
        }
        // Deterministic.
        assert_eq!(build().mesh, m.mesh);
    }

    #[test]
    fn bind_pose_is_the_t_pose_rest_pose_relaxes_the_arms_feet_touch_ground() {
        let m = build();
        let skin = Skin::from_skeleton(&m.skeleton);
        let mut pal = vec![Mat4::identity(); skin.len()];
        // Bind pose: the palette is the identity (the mesh is modelled in it).
        let bind = world(&m, m.skeleton.bind_pose());
        palette::skinning_matrices(&bind, &skin, &mut pal).unwrap();
        for p in &pal {
            assert!((p - Mat4::identity()).abs().max() < 1e-6);
        }
        // Rest pose: the legs are the bind pose's, the hands hang below the shoulders.
        let rest = world(&m, m.skeleton.rest_pose());
        let l = m.leg(Side::Left);
        for w in [&bind, &rest] {
            assert!((pos(&w[l.ankle]).y - ANKLE_HEIGHT).abs() < 1e-6);
            assert!((pos(&w[l.toe]).y - BALL_HEIGHT).abs() < 1e-6);
        }
        for (shoulder, hand) in [(UPPERARM_L, HAND_L), (UPPERARM_R, HAND_R)] {
            assert!((pos(&bind[hand]).y - pos(&bind[shoulder]).y).abs() < 1e-6);
            assert!(pos(&rest[hand]).y < pos(&rest[shoulder]).y - 0.3, "the rest pose lowers the arms");
        }
    }

    #[test]
    fn looping_clips_are_seamless() {
        let m = build();
        for name in ["idle", "walk", "run"] {
            let c = m.clip(name).unwrap();
            let mut a = m.skeleton.rest_pose().clone();
            let mut b = a.clone();
            c.sample(0.0, TimePolicy::Clamp, &mut a).unwrap();
            c.sample(c.duration(), TimePolicy::Clamp, &mut b).unwrap();
            for (x, y) in a.locals().iter().zip(b.locals()) {
                assert!((x.translation - y.translation).norm() < 1e-6, "{name}");
                assert!(x.rotation.angle_to(&y.rotation) < 1e-5, "{name}");
            }
        }
        for name in ["jump", "punch", "lean_left"] {
            assert!(m.clip(name).is_some());
        }
        assert_eq!(m.clip("lean_left").unwrap().key_times(), vec![0.0, 1.0]);
    }

    #[test]
    fn foot_contact_agrees_with_foot_height() {
        let m = build();
        for name in ["walk", "run"] {
            let c = m.clip(name).unwrap();
            let cl = c.curve_index("foot_contact_l").unwrap();
            let cr = c.curve_index("foot_contact_r").unwrap();
            let (mut planted, mut lifted) = (0, 0);
            for k in 0..200 {
                let t = c.duration() * k as f32 / 200.0;
                let mut pose = m.skeleton.rest_pose().clone();
                c.sample(t, TimePolicy::Wrap, &mut pose).unwrap();
                let w = world(&m, &pose);
                for (side, curve) in [(Side::Left, cl), (Side::Right, cr)] {
                    let ankle = pos(&w[m.leg(side).ankle]).y;
                    let contact = c.sample_curve(curve, t, TimePolicy::Wrap).unwrap();
                    if contact > 0.5 {
                        planted += 1;
                        assert!(
                            (ankle - ANKLE_HEIGHT).abs() < 0.005,
                            "{name} t={t} {side:?}: planted ankle at {ankle}"
                        );
                    } else {
                        // In the air: clearly above the ground somewhere in the middle of swing.
                        lifted += (ankle > ANKLE_HEIGHT + 0.03) as usize;
                    }
                }
            }
            assert!(planted > 100 && lifted > 50, "{name}: {planted} planted, {lifted} lifted samples");
        }
    }

    #[test]
    fn mesh_skins_without_tearing() {
        let m = build();
        let c = m.clip("walk").unwrap();
        let mut pose = m.skeleton.rest_pose().clone();
        c.sample(0.3, TimePolicy::Wrap, &mut pose).unwrap();
        let w = world(&m, &pose);
        let skin = Skin::from_skeleton(&m.skeleton);
        let mut pal = vec![Mat4::identity(); skin.len()];
        palette::skinning_matrices(&w, &skin, &mut pal).unwrap();
        let n = m.mesh.vertex_count();
        let mut out = vec![Vec3::zeros(); n];
        let input = skinning::SkinningInput {
            influences: m.mesh.influences.as_ref().unwrap(),
            positions: &m.mesh.positions,
            normals: None,
        };
        skinning::linear_blend(
            &input,
            &pal,
            skinning::NormalMode::Direct,
            &mut skinning::SkinningOutput { positions: &mut out, normals: None },
        )
        .unwrap();
        // No triangle edge stretches by more than a few centimetres.
        let mut worst = 0.0f32;
        for t in m.mesh.indices.chunks_exact(3) {
            for (a, b) in [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])] {
                let (a, b) = (a as usize, b as usize);
                let rest = (m.mesh.positions[a] - m.mesh.positions[b]).norm();
                let posed = (out[a] - out[b]).norm();
                worst = worst.max(posed - rest);
            }
        }
        assert!(worst < 0.05, "an edge stretched by {worst} m");
    }
}

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
