//! The skeleton and its poses: the data every other stage reads or writes.
//!
//! - [`skeleton`]: [`Skeleton`] (joint names, parents stored parents-first, rest pose,
//!   inverse binds) and the [`JointDesc`] a source describes joints with.
//! - [`Pose`]: one local transform per joint, as sampling and blending write it.
//! - [`soa`]: [`SoaPose`], the same local transforms four joints at a time, as the runtime
//!   samplers write them and the SIMD hierarchy pass reads them.
//! - [`hierarchy`]: local-to-model, the pass from local transforms to model-space
//!   matrices (whole skeleton or one subtree), for a [`Pose`] or a [`SoaPose`].
//!
//! ```
//! use anim_core::pose::{JointDesc, Skeleton};
//! use anim_math::{Mat4, Transform, Vec3};
//!
//! let skeleton = Skeleton::new(vec![
//!     JointDesc::new("root", None, Transform::IDENTITY),
//!     JointDesc::new("tip", Some(0), Transform::from_translation(Vec3::new(0.0, 1.0, 0.0))),
//! ])?;
//! let mut model = vec![Mat4::identity(); skeleton.len()];
//! skeleton.rest_pose().local_to_model(&skeleton, &mut model)?;
//! assert_eq!(model[1].column(3).y, 1.0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod hierarchy;
mod id;
mod locals;
pub mod skeleton;
pub mod soa;

pub use hierarchy::HierarchyError;
pub use id::SkeletonId;
pub use locals::{Pose, PoseError};
pub use skeleton::{JointDesc, Skeleton, SkeletonError};
pub use soa::{LANES, SoaPose, SoaTransform};
