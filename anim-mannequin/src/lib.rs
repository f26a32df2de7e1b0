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
//!
//! After these six come the clips a playable character needs, made from the same gait
//! model: `walk_backward`, `walk_left`, `walk_right`, `run_backward`, `run_left`,
//! `run_right` (the walk and run cycles along other headings, the same phase convention and
//! contact curves; sideways the feet stand wider so they never cross), and the jump in
//! three parts: `jump_takeoff` (0.5 s, once), `jump_air` (0.6 s, looping, the body at its
//! height: whoever plays it moves the character), `jump_land` (0.5 s, once), with contact
//! curves (planted, in the air, planted). [`Mannequin::root_motion_clips`] gives every clip
//! with root motion (the travelling ones move at [`Mannequin::travel_velocity`]) and foot
//! events, as an animation graph plays them.

#![warn(missing_docs)]

mod clips;
mod gaits;
mod joints;
mod mesh;
#[cfg(test)]
mod tests;

pub use joints::{
    ANKLE_HEIGHT, BALL_HEIGHT, HEIGHT, JOINT_NAMES, MESH_NODE, PELVIS_HEIGHT, RING_SEGMENTS, SHIN_LENGTH, THIGH_LENGTH,
};
pub use mesh::MORPH_TARGETS;

use anim_core::clip::Clip;
use anim_core::pose::Skeleton;
use anim_core::skin::{Mesh, MorphTargets};
use anim_math::Vec3;
use clips::{RUN, WALK, breathing, idle, jump, lean_left, punch, stride_breathing, walk_or_run, with_relaxed_rest};
use joints::{BALL_L, BALL_R, CALF_L, CALF_R, FOOT_L, FOOT_R, THIGH_L, THIGH_R, skeleton};

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
    /// `idle`, `walk`, `run`, `jump`, `punch`, `lean_left`, then `walk_backward`,
    /// `walk_left`, `walk_right`, `run_backward`, `run_left`, `run_right`, `jump_takeoff`,
    /// `jump_air`, `jump_land`, in this order. The walks, runs and `idle` also animate the mesh's morph weights (a [`anim_core::clip::WeightTrack`] for
    /// [`MESH_NODE`]): a breath and a brow raise in the idle, a breath a stride when moving.
    pub clips: Vec<Clip>,
    /// Morph targets of [`Mannequin::mesh`], named as in [`MORPH_TARGETS`]: `breathe`
    /// widens the chest along its horizontal normals (up to 3 cm), `brow_raise` lifts the
    /// front of the forehead (up to 2 cm). Default weights zero.
    pub morph: MorphTargets,
}

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

    /// The ground velocity (metres a second, model frame: +z forwards, +x to the
    /// character's left) at which the clip `name` travels when its planted feet stay in
    /// place: the opposite of the planted left ankle's motion over its stance. `None` for a
    /// clip that plays in place (idle, jumps, punch, lean) or an unknown name.
    pub fn travel_velocity(&self, name: &str) -> Option<Vec3> {
        gaits::travel_velocity(self.clip(name)?, &self.skeleton)
    }

    /// Every clip as an animation graph plays it: the travelling ones with a root-motion
    /// track moving the character at [`Mannequin::travel_velocity`] (the pose still plays
    /// in place), and every clip with contact curves with `foot_down:<curve>` /
    /// `foot_up:<curve>` events where the curves cross 0.5. Same names and order as
    /// [`Mannequin::clips`].
    pub fn root_motion_clips(&self) -> Vec<Clip> {
        self.clips.iter().map(|c| gaits::with_root_motion(c, gaits::travel_velocity(c, &self.skeleton))).collect()
    }
}

/// Builds the mannequin. Deterministic: every call returns the same data.
pub fn build() -> Mannequin {
    let skeleton = with_relaxed_rest(skeleton());
    let mesh = mesh::mesh();
    let morph = mesh::morph_targets(&mesh);
    let idle = idle().with_weight_tracks(vec![breathing()]).expect("one weight track, for the mesh node");
    let walk = walk_or_run(&WALK).with_weight_tracks(vec![stride_breathing(&WALK, 0.45)]).expect("one weight track");
    let run = walk_or_run(&RUN).with_weight_tracks(vec![stride_breathing(&RUN, 0.9)]).expect("one weight track");
    let mut clips = vec![idle, walk, run, jump(), punch(), lean_left()];
    clips.extend(gaits::locomotion_clips());
    Mannequin { skeleton, mesh, clips, morph }
}

/// The mannequin as a playable character, as an animation graph file (the JSON format of
/// the `anim-graph` crate, `docs/graph-format.md` in the repository): a 2D blend space
/// (polar) of idle, walk and run forwards, backwards and sideways in a marker sync group,
/// the jump in three states (inertialized transitions), a punch on an upper-body layer
/// (a machine with an empty state, crossfaded), and foot grounding. Parameters: `move_x`,
/// `move_z` (the velocity asked for, metres a second, in the character's frame: +x to its
/// left, +z forwards), `jump` and `punch` (triggers), `grounded` (false while off the
/// ground: the air state lasts until it is true again), `foot_ik` (the grounding's
/// weight). It plays [`Mannequin::root_motion_clips`].
pub const LOCOMOTION_GRAPH: &str = include_str!("../graphs/locomotion.json");

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
