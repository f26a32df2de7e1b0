//! Inverse kinematics for the anim runtime (the book's chapter 13, plus what ozz-animation
//! offers): CCD and FABRIK solvers over [`IkChain`]s with ball-and-socket and hinge
//! [`Constraint`]s applied inside every iteration, analytic two-bone IK with a pole
//! direction ([`solve_two_bone`], [`TwoBoneIk`]), aim / look-at ([`aim`]), each also as the
//! job alone from model-space joints to local corrections ([`two_bone_corrections`],
//! [`aim_correction`]: the same algorithm, nothing rebuilt or measured), and the book's
//! foot-grounding pipeline ([`FootGrounding`]) over any [`GroundQuery`] ([`HeightField`],
//! [`TriangleMesh`]).
//!
//! Everything works on the local transforms of an [`anim_core::pose::Pose`]: read a chain from
//! the pose, solve in world space, write the rotations back. Degenerate input (zero-length
//! bones, a goal on the chain's base, an unreachable goal) never produces NaN; non-finite
//! input is an [`IkError`]. Solvers allocate nothing per call once built.
//!
//! # How a demo uses this
//! ```
//! use anim_core::pose::{JointDesc, Skeleton};
//! use anim_ik::{CcdSolver, Constraint, FabrikSolver, FootGrounding, FootSettings, HeightField, IkChain, Leg};
//! use anim_math::{Transform, Vec3};
//!
//! // A leg: hip (1 up), knee 0.5 below it, ankle 0.5 below that, toe 0.15 forward.
//! let t = |x: f32, y: f32, z: f32| Transform::from_translation(Vec3::new(x, y, z));
//! let skeleton = Skeleton::new(vec![
//!     JointDesc::new("pelvis", None, t(0.0, 1.0, 0.0)),
//!     JointDesc::new("hip", Some(0), t(0.1, 0.0, 0.0)),
//!     JointDesc::new("knee", Some(1), t(0.0, -0.45, 0.02)),
//!     JointDesc::new("ankle", Some(2), t(0.0, -0.47, -0.02)),
//!     JointDesc::new("toe", Some(3), t(0.0, -0.05, 0.14)),
//! ]).unwrap();
//! let mut pose = skeleton.rest_pose().clone();
//!
//! // A chain reaching for a point (the ch13_ccd / ch13_fabrik demos), knee as a hinge.
//! let mut chain = IkChain::from_pose(&skeleton, &pose, &[1, 2, 3], &Transform::IDENTITY).unwrap();
//! let knee_rest = pose.locals()[2].rotation;
//! chain.set_constraint(1, Constraint::hinge(Vec3::x(), knee_rest, Some((-2.5, 0.0))).unwrap()).unwrap();
//! let goal = Vec3::new(0.1, 0.3, 0.3);
//! let result = CcdSolver::default().solve(&mut chain, &goal).unwrap();
//! assert!(result.distance < 0.05);
//! let mut fabrik = FabrikSolver::default();
//! fabrik.solve(&mut chain, &goal).unwrap();
//! chain.write_pose(&mut pose).unwrap();
//!
//! // Foot grounding (the ch13_foot_ik demo): once per frame after sampling the clip.
//! let mut pose = skeleton.rest_pose().clone();
//! let ground = HeightField::from_fn(-2.0, -2.0, 0.25, 17, 17, |x, _z| 0.1 * x).unwrap();
//! let leg = Leg { hip: 1, knee: 2, ankle: 3, toe: 4, contact_curve: "foot_contact_l".into() };
//! let settings = FootSettings { ankle_height: 0.08, ..FootSettings::default() };
//! let mut feet = FootGrounding::new(&skeleton, vec![leg], settings).unwrap();
//! let mut placement = Transform::IDENTITY; // where the character stands in the world
//! // With a clip: feet.sample_contacts(&clip, time, TimePolicy::Wrap, &mut contacts)
//! let contacts = [1.0];
//! feet.apply(&skeleton, &mut pose, &mut placement, &contacts, &ground).unwrap();
//! let report = feet.reports().next().unwrap();
//! let ground_y = 0.1 * report.ankle.x;
//! assert!((report.ankle.y - (ground_y + 0.08)).abs() < 1e-3);
//! ```

#![warn(missing_docs)]

mod aim;
mod ccd;
mod chain;
mod error;
mod fabrik;
mod foot;
mod ground;
pub mod prelude;

mod two_bone;

pub use aim::{aim, aim_correction, aim_joint};
pub use anim_core;
pub use ccd::{CcdSolver, SolveResult};
pub use chain::{Constraint, IkChain};
pub use error::IkError;
pub use fabrik::FabrikSolver;
pub use foot::{FootGrounding, FootSettings, Leg, LegReport, LegSolver};
pub use ground::{GroundQuery, HeightField, RayHit, TriangleMesh, ray_triangle};
pub use two_bone::{TwoBoneCorrections, TwoBoneIk, TwoBoneJoints, TwoBoneResult, solve_two_bone, two_bone_corrections};

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
