//! The skeleton: joint names and indices, the body's dimensions, and the rest offsets the
//! skeleton is built from.

use anim_core::pose::{JointDesc, Skeleton};
use anim_math::{Transform, Vec3};

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

pub(crate) const PELVIS: usize = 0;
pub(crate) const SPINE_01: usize = 1;
pub(crate) const SPINE_02: usize = 2;
pub(crate) const SPINE_03: usize = 3;
pub(crate) const NECK: usize = 4;
pub(crate) const HEAD: usize = 5;
pub(crate) const CLAVICLE_L: usize = 6;
pub(crate) const UPPERARM_L: usize = 7;
pub(crate) const LOWERARM_L: usize = 8;
pub(crate) const HAND_L: usize = 9;
pub(crate) const CLAVICLE_R: usize = 10;
pub(crate) const UPPERARM_R: usize = 11;
pub(crate) const LOWERARM_R: usize = 12;
pub(crate) const HAND_R: usize = 13;
pub(crate) const THIGH_L: usize = 14;
pub(crate) const CALF_L: usize = 15;
pub(crate) const FOOT_L: usize = 16;
pub(crate) const BALL_L: usize = 17;
pub(crate) const THIGH_R: usize = 18;
pub(crate) const CALF_R: usize = 19;
pub(crate) const FOOT_R: usize = 20;
pub(crate) const BALL_R: usize = 21;

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

/// What the mannequin's weight tracks target: the index its mesh node gets when the
/// character is exported (after the 22 joint nodes), so the weights travel as a glTF
/// `weights` channel on that node and come back from import on the same index.
pub const MESH_NODE: usize = JOINT_NAMES.len();

pub(crate) fn v(x: f32, y: f32, z: f32) -> Vec3 {
    Vec3::new(x, y, z)
}

/// Rest local offsets (rotations are the identity), indexed like [`JOINT_NAMES`].
pub(crate) fn rest_offsets() -> [(Option<usize>, Vec3); 22] {
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

pub(crate) fn rest_world() -> [Vec3; 22] {
    let offs = rest_offsets();
    let mut w = [Vec3::zeros(); 22];
    for (i, (p, o)) in offs.iter().enumerate() {
        w[i] = p.map_or(*o, |p| w[p] + o);
    }
    w
}

pub(crate) fn skeleton() -> Skeleton {
    let joints = rest_offsets()
        .iter()
        .zip(JOINT_NAMES)
        .map(|((p, o), name)| JointDesc::new(name, *p, Transform::from_translation(*o)))
        .collect();
    Skeleton::new(joints).expect("the mannequin's joint table is a valid tree")
}
