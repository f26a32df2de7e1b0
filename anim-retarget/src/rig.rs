//! A humanoid rig: a skeleton, its [`HumanoidMap`] and its reference pose, the pose in
//! which two characters are compared.
//!
//! **Space.** Model space is Y up with the floor at `y = 0`, as glTF characters are
//! authored; the character faces `forward` (found from its feet and toes, `+Z` without
//! toes), its left is `up × forward`.
//!
//! **Reference pose.** By default a character's bind pose ([`Reference::Bind`]): the pose
//! its mesh was modelled in, rebuilt from the skin's inverse bind matrices (skin joints at
//! `IBM⁻¹`, other joints at rest). Exporters often write those matrices in another frame
//! than the animation's: CesiumMan's are Z up, the book's Woman's face +X while her clips
//! face +Z. So the bind pose is first brought into the rest pose's frame: the rotation,
//! uniform scale and translation that carry its body frame (up from the hips to the chest,
//! left from the right upper leg to the left one) onto the rest pose's (up = +Y, left from
//! the legs), its hips above the rest pose's hips and its lowest foot or toe joint as high
//! as the rest pose's. [`Reference::Pose`] and [`Reference::Clip`] take a pose in model
//! space as it is (an A-pose rig whose clips assume a T-pose gives the clip and time of
//! its T-pose).

use crate::map::{HumanoidMap, MapError, horizontal};
use crate::profile::{Role, Side};
use anim_core::clip::{Clip, ClipError, TimePolicy};
use anim_core::pose::{Pose, PoseError, Skeleton};
use anim_core::skin::Skin;
use anim_math::{Mat3, Quat, Transform, Vec3};
use nalgebra::Rotation3;
use thiserror::Error;

/// Where a rig's reference pose comes from (see the module docs).
#[derive(Clone, Copy, Debug)]
pub enum Reference<'a> {
    /// The bind pose of this skin (its inverse bind matrices), brought into the rest
    /// pose's frame. The default for imported characters.
    Bind(&'a Skin),
    /// The skeleton's own bind pose ([`Skeleton::bind_pose`]), as it is.
    SkeletonBind,
    /// The rest pose.
    Rest,
    /// A pose (local transforms) of the skeleton.
    Pose(&'a Pose),
    /// A clip sampled at a time (clamped into the clip), over the rest pose.
    Clip {
        /// The clip.
        clip: &'a Clip,
        /// Its time, in seconds.
        time: f32,
    },
}

/// A skeleton with its humanoid map and reference pose, and what retargeting reads from
/// them.
#[derive(Clone, Debug)]
pub struct HumanoidRig {
    skeleton: Skeleton,
    map: HumanoidMap,
    reference: Vec<Transform>,
    forward: Vec3,
    hips_height: f32,
}

impl HumanoidRig {
    /// Builds a rig: checks the map against the skeleton (hierarchy, then sides on the rest
    /// pose) and computes the reference pose.
    ///
    /// # Errors
    /// An invalid map ([`RigError::Map`]), a skin, pose or clip of another skeleton, or a
    /// reference in which the hips are not above the floor or the body has no extent.
    pub fn new(skeleton: &Skeleton, map: HumanoidMap, reference: Reference<'_>) -> Result<Self, RigError> {
        map.validate_with_rest(skeleton)?;
        let mut rest = vec![Transform::IDENTITY; skeleton.len()];
        skeleton.rest_pose().globals(skeleton, &mut rest)?;
        let reference = match reference {
            Reference::Rest => rest.clone(),
            Reference::SkeletonBind => globals(skeleton, skeleton.bind_pose())?,
            Reference::Pose(pose) => globals(skeleton, pose)?,
            Reference::Clip { clip, time } => {
                let mut pose = skeleton.rest_pose().clone();
                clip.sample(time, TimePolicy::Clamp, &mut pose)?;
                globals(skeleton, &pose)?
            }
            Reference::Bind(skin) => bind_reference(skeleton, &map, skin, &rest)?,
        };
        let get = |r: Role| reference[map.get(r).expect("validated maps have the required roles")].translation;
        let left = horizontal(&(get(Role::UpperLeg(Side::Left)) - get(Role::UpperLeg(Side::Right))));
        let forward = left.cross(&Vec3::y());
        let hips_height = get(Role::Hips).y;
        if hips_height.is_nan() || hips_height <= 0.0 || forward.norm() < 0.5 {
            return Err(RigError::Degenerate { hips_height });
        }
        Ok(Self { skeleton: skeleton.clone(), map, reference, forward, hips_height })
    }

    /// The skeleton.
    pub fn skeleton(&self) -> &Skeleton {
        &self.skeleton
    }

    /// The map.
    pub fn map(&self) -> &HumanoidMap {
        &self.map
    }

    /// Model-space reference transform of every joint.
    pub fn reference(&self) -> &[Transform] {
        &self.reference
    }

    /// The direction the character faces in its reference pose (horizontal, unit).
    pub fn forward(&self) -> Vec3 {
        self.forward
    }

    /// Height of the hips above the floor in the reference pose: the leg length that
    /// scales hips translation and root motion between characters.
    pub fn hips_height(&self) -> f32 {
        self.hips_height
    }

    /// The joint playing `role`, when mapped.
    pub fn joint(&self, role: Role) -> Option<usize> {
        self.map.get(role)
    }
}

fn globals(skeleton: &Skeleton, pose: &Pose) -> Result<Vec<Transform>, PoseError> {
    let mut out = vec![Transform::IDENTITY; skeleton.len()];
    pose.globals(skeleton, &mut out)?;
    Ok(out)
}

/// An orthonormal body frame (columns left, up, forward) from an up and a left direction.
fn body_frame(up: &Vec3, left: &Vec3) -> Option<Rotation3<f32>> {
    let up = up.try_normalize(1e-12)?;
    let left = (left - up * left.dot(&up)).try_normalize(1e-12)?;
    let forward = left.cross(&up);
    Some(Rotation3::from_matrix_unchecked(Mat3::from_columns(&[left, up, forward])))
}

/// The bind pose of `skin` brought into the rest pose's frame (module docs).
fn bind_reference(
    skeleton: &Skeleton,
    map: &HumanoidMap,
    skin: &Skin,
    rest: &[Transform],
) -> Result<Vec<Transform>, RigError> {
    skin.check_skeleton(skeleton)?;
    let mut bind = rest.to_vec();
    let mut in_skin = vec![false; skeleton.len()];
    for (&j, ibm) in skin.joints().iter().zip(skin.inverse_bind()) {
        if let Some(m) = ibm.try_inverse() {
            bind[j] = Transform::from_matrix(&m);
            in_skin[j] = true;
        }
    }
    let role = |r: Role| map.get(r).expect("validated maps have the required roles");
    let (hips, chest) = (role(Role::Hips), role(Role::Chest));
    let (ll, rl) = (role(Role::UpperLeg(Side::Left)), role(Role::UpperLeg(Side::Right)));
    if ![hips, chest, ll, rl].iter().all(|&j| in_skin[j]) {
        // The body is not (all) skinned: nothing to bring into the rest frame.
        return Ok(bind);
    }
    let p = |t: &[Transform], j: usize| t[j].translation;
    let frame_b = body_frame(&(p(&bind, chest) - p(&bind, hips)), &(p(&bind, ll) - p(&bind, rl)));
    let frame_r = body_frame(&Vec3::y(), &(p(rest, ll) - p(rest, rl)));
    let (Some(fb), Some(fr)) = (frame_b, frame_r) else {
        return Err(RigError::Degenerate { hips_height: p(rest, hips).y });
    };
    let rotation = Quat::from_rotation_matrix(&(fr * fb.inverse()));
    let torso_b = (p(&bind, chest) - p(&bind, hips)).norm();
    let scale = (p(rest, chest) - p(rest, hips)).norm() / torso_b;
    let mut g = Transform::new(Vec3::zeros(), rotation, Vec3::repeat(scale));
    // Hips over the rest hips; the lowest foot or toe joint as high as at rest.
    let feet: Vec<usize> = Side::BOTH
        .into_iter()
        .flat_map(|s| [map.get(Role::Foot(s)), map.get(Role::Toes(s))])
        .flatten()
        .filter(|&j| in_skin[j])
        .collect();
    let lowest = |f: &dyn Fn(usize) -> Vec3| feet.iter().map(|&j| f(j).y).fold(f32::INFINITY, f32::min);
    let moved_hips = g.transform_point(&p(&bind, hips));
    let dy = if feet.is_empty() {
        p(rest, hips).y - moved_hips.y
    } else {
        lowest(&|j| p(rest, j)) - lowest(&|j| g.transform_point(&p(&bind, j)))
    };
    g.translation = Vec3::new(p(rest, hips).x - moved_hips.x, dy, p(rest, hips).z - moved_hips.z);
    for (j, t) in bind.iter_mut().enumerate() {
        if in_skin[j] {
            let moved = g.combine(t);
            // Only rotation and position matter to a reference; keep the joint's scale.
            *t = Transform::new(moved.translation, moved.rotation, rest[j].scale);
        }
    }
    Ok(bind)
}

/// Why a [`HumanoidRig`] could not be built.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum RigError {
    /// The map does not fit the skeleton.
    #[error("humanoid map: {0}")]
    Map(#[from] MapError),
    /// A pose or skin of another skeleton.
    #[error(transparent)]
    Pose(#[from] PoseError),
    /// The reference clip could not be sampled.
    #[error(transparent)]
    Clip(#[from] ClipError),
    /// In the reference pose the hips are not above the floor (`y = 0`) or the legs have
    /// no left-right extent.
    #[error(
        "the reference pose has its hips at height {hips_height} (they must be above the floor, y = 0, in a Y-up \
         model space) or its upper legs at the same place"
    )]
    Degenerate {
        /// The hips' height found.
        hips_height: f32,
    },
}
