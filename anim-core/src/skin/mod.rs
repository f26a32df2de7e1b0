//! Skinning: the bind ([`Skin`]: joints and inverse binds), the meshes and their
//! [`Influences`], morph targets, the palette a pose gives ([`Palette`]: matrices, or dual
//! quaternions with scale) and the CPU skinning loops that apply it.
//!
//! - [`bind`]: [`Skin`], the joints a mesh is bound to and their inverse bind matrices.
//! - [`mesh`]: [`Mesh`] (bind positions, normals, indices) and [`Influences`] (joint indices
//!   and weights, validated once, in one of several [`InfluenceLayout`]s).
//! - [`morph`]: [`MorphTargets`], blend shapes applied before skinning.
//! - [`palette`]: [`Palette`] and the [`SkinMethod`] it is built for: `model · inverse
//!   bind` per skin joint.
//! - [`skinning`]: the CPU loops (rigid, linear blend, dual quaternion) and the SIMD
//!   kernels chosen at run time.
//!
//! ```
//! use anim_core::pose::{JointDesc, Skeleton};
//! use anim_core::skin::{Palette, Skin, SkinMethod};
//! use anim_math::{Mat4, Transform, Vec3};
//!
//! let skeleton = Skeleton::new(vec![
//!     JointDesc::new("root", None, Transform::IDENTITY),
//!     JointDesc::new("tip", Some(0), Transform::from_translation(Vec3::new(0.0, 1.0, 0.0))),
//! ])?;
//! let skin = Skin::from_skeleton(&skeleton);
//! let mut model = vec![Mat4::identity(); skeleton.len()];
//! skeleton.rest_pose().local_to_model(&skeleton, &mut model)?;
//! let mut palette = Palette::new(SkinMethod::Lbs);
//! palette.update(&model, &skin)?;
//! // The rest pose is the bind pose here: every palette matrix is the identity.
//! assert!(palette.matrices().unwrap().iter().all(|m| (m - Mat4::identity()).abs().max() < 1e-6));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod bind;
mod error;
pub mod mesh;
pub mod morph;
pub mod palette;
pub mod skinning;

pub use bind::Skin;
pub use error::SkinningError;
pub use mesh::{InfluenceLayout, Influences, Mesh};
pub use morph::{MorphError, MorphTargets};
pub use palette::{DqPalette, Palette, SkinMethod, UnknownSkinMethod};
pub use skinning::{Kernel, NormalMode, SkinningInput, SkinningOutput};
