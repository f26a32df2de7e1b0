//! Humanoid retargeting for the anim runtime: any humanoid clip on any humanoid character,
//! feet kept on the ground.
//!
//! ```text
//! skeleton ──auto_map / parse_map_file──▶ HumanoidMap ──+ reference pose──▶ HumanoidRig
//! source rig + target rig ──Retargeter::new──▶ Retargeter (once)
//! source pose ──RetargetJob::run──▶ target pose                 (per frame, no allocation)
//! source clip ──retarget_clip(rate)──▶ Clip on the target skeleton  (offline)
//! ```
//!
//! - [`profile`]: the humanoid roles ([`Role`], [`Side`]): hips, spine chain, chest,
//!   neck, head, and per side shoulder, upper arm, lower arm, hand, upper leg, lower leg,
//!   foot, toes.
//! - [`map`]: a character's [`HumanoidMap`] from roles to joints, and its checks.
//! - [`auto`]: automatic mapping by name ([`auto_map`]) for the common conventions (the
//!   mannequin's and Unreal's, Mixamo, Blender/Rigify, `LeftUpLeg`, `L_Thigh`, `thigh.L`,
//!   CesiumMan's generic `leg_joint_L_1` chains), placed and checked by the hierarchy.
//! - [`file`](mod@file): the JSON map file ([`parse_map_file`]), whose errors carry the JSON pointer
//!   of the value at fault.
//! - [`rig`]: a [`HumanoidRig`]: skeleton, map and reference pose (by default the bind
//!   pose of the skin, brought into the animation's frame).
//! - [`retarget`]: the [`Retargeter`]: rotations in model space relative to the
//!   references, spine chains by normalized length, hips and root motion scaled by the
//!   leg-length ratio.
//! - [`job`]: the per-frame [`RetargetJob`], with the contact IK.
//! - [`contacts`]: planted feet from the clip's curves or events, or from their height and
//!   speed; blend weights around plants.
//! - [`offline`]: [`retarget_clip`], a new clip at a rate, with a [`ClipReport`].
//!
//! ```
//! use anim_core::pose::{JointDesc, Skeleton};
//! use anim_math::Transform;
//! use anim_retarget::{HumanoidRig, OfflineSettings, Reference, RetargetSettings, Retargeter, auto_map};
//!
//! // The mannequin, and a character 20% taller named the Mixamo way.
//! let man = anim_mannequin::build();
//! let mixamo = |name: &str| match name {
//!     "pelvis" => "Hips".to_owned(),
//!     "spine_01" => "Spine".to_owned(),
//!     "spine_02" => "Spine1".to_owned(),
//!     "spine_03" => "Spine2".to_owned(),
//!     "neck" | "head" => name[..1].to_uppercase() + &name[1..],
//!     other => {
//!         let (part, side) = other.rsplit_once('_').unwrap();
//!         let side = if side == "l" { "Left" } else { "Right" };
//!         let part = match part {
//!             "clavicle" => "Shoulder", "upperarm" => "Arm", "lowerarm" => "ForeArm", "hand" => "Hand",
//!             "thigh" => "UpLeg", "calf" => "Leg", "foot" => "Foot", _ => "ToeBase",
//!         };
//!         format!("mixamorig:{side}{part}")
//!     }
//! };
//! let s = &man.skeleton;
//! let tall = Skeleton::new(
//!     (0..s.len())
//!         .map(|j| {
//!             let rest = s.rest_pose().locals()[j];
//!             let t = Transform { translation: rest.translation * 1.2, ..rest };
//!             JointDesc::new(mixamo(s.name(j).unwrap()), s.parent(j), t)
//!         })
//!         .collect(),
//! )?;
//!
//! // Both mapped by name; the tall one in its rest pose as reference, the mannequin in
//! // its bind pose (a T-pose).
//! let tall_map = auto_map(&tall);
//! assert!(tall_map.unmapped.is_empty(), "every role found");
//! let source = HumanoidRig::new(s, auto_map(s).map, Reference::SkeletonBind)?;
//! let target = HumanoidRig::new(&tall, tall_map.map, Reference::Rest)?;
//! let retargeter = Retargeter::new(&source, &target, RetargetSettings::default())?;
//! assert!((retargeter.leg_ratio() - 1.2).abs() < 1e-5);
//!
//! // The walk, on the tall character, at 30 frames a second.
//! let walk = man.clip("walk").unwrap();
//! let out = anim_retarget::retarget_clip(&retargeter, walk, &OfflineSettings::default(), &[])?;
//! assert_eq!(out.clip.duration(), walk.duration());
//! assert!(out.report.contact_error < 1e-3, "planted feet where the scaled source put them");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

pub mod auto;
pub mod contacts;
pub mod error;
pub mod file;
pub mod job;
pub mod map;
mod names;
pub mod offline;
pub mod profile;
pub mod retarget;
pub mod rig;

pub use auto::{AutoMap, auto_map};
pub use error::RetargetError;
pub use file::{MapFileError, parse_map_file, write_map_file};
pub use job::{FrameReport, RetargetJob};
pub use map::{HumanoidMap, MapError, Slot};
pub use offline::{ClipReport, OfflineSettings, RetargetedClip, retarget_clip};
pub use profile::{Role, Side};
pub use retarget::{RetargetSettings, Retargeter};
pub use rig::{HumanoidRig, Reference, RigError};

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
