//! Structure-of-arrays local poses: the runtime layout that sampling writes and the SIMD
//! local-to-model pass reads.
//!
//! A [`SoaPose`] stores a skeleton's local transforms in groups of [`LANES`] joints. Each
//! [`SoaTransform`] holds, for its four joints, every component in its own lane array:
//! `translation[axis][lane]`, `rotation[component][lane]` (x, y, z, w) and
//! `scale[axis][lane]`. One SIMD register then carries the same component of four
//! joints, so interpolation and the transform-to-matrix conversion run four joints per
//! instruction. The last group is padded with identity transforms.
//!
//! ```
//! use anim_core::pose::soa::SoaPose;
//! use anim_core::pose::Pose;
//! use anim_math::{Transform, Vec3};
//!
//! let pose = Pose::from_locals(vec![Transform::from_translation(Vec3::new(1.0, 2.0, 3.0)); 5]);
//! let soa = SoaPose::from_pose(&pose);
//! assert_eq!(soa.groups().len(), 2); // 5 joints: one full group and one padded group
//! let mut back = Pose::identity(5);
//! soa.to_pose(&mut back).unwrap();
//! assert_eq!(back.locals()[4].translation, Vec3::new(1.0, 2.0, 3.0));
//! ```

use super::locals::{Pose, PoseError};
use crate::length::LengthMismatch;
use anim_math::{Quat, Transform, Vec3};
use nalgebra::Quaternion;

/// Joints per [`SoaTransform`] group.
pub const LANES: usize = 4;

/// The local transforms of [`LANES`] joints, component by component.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, align(16))]
pub struct SoaTransform {
    /// Translation: `translation[axis][lane]`, axis x, y, z.
    pub translation: [[f32; LANES]; 3],
    /// Unit rotation quaternion: `rotation[component][lane]`, component x, y, z, w.
    pub rotation: [[f32; LANES]; 4],
    /// Scale: `scale[axis][lane]`, axis x, y, z.
    pub scale: [[f32; LANES]; 3],
}

impl SoaTransform {
    /// Four identity transforms.
    pub const IDENTITY: Self = Self {
        translation: [[0.0; LANES]; 3],
        rotation: [[0.0; LANES], [0.0; LANES], [0.0; LANES], [1.0; LANES]],
        scale: [[1.0; LANES]; 3],
    };

    /// The transform in `lane` (`lane < LANES`).
    ///
    /// # Panics
    /// `lane >= LANES`.
    #[inline]
    pub fn get(&self, lane: usize) -> Transform {
        let t = &self.translation;
        let r = &self.rotation;
        let s = &self.scale;
        Transform {
            translation: Vec3::new(t[0][lane], t[1][lane], t[2][lane]),
            rotation: Quat::new_unchecked(Quaternion::new(r[3][lane], r[0][lane], r[1][lane], r[2][lane])),
            scale: Vec3::new(s[0][lane], s[1][lane], s[2][lane]),
        }
    }

    /// Writes `transform` into `lane` (`lane < LANES`).
    ///
    /// # Panics
    /// `lane >= LANES`.
    #[inline]
    pub fn set(&mut self, lane: usize, transform: &Transform) {
        let q = transform.rotation.quaternion();
        for axis in 0..3 {
            self.translation[axis][lane] = transform.translation[axis];
            self.scale[axis][lane] = transform.scale[axis];
        }
        self.rotation[0][lane] = q.i;
        self.rotation[1][lane] = q.j;
        self.rotation[2][lane] = q.k;
        self.rotation[3][lane] = q.w;
    }
}

impl Default for SoaTransform {
    fn default() -> Self {
        Self::IDENTITY
    }
}

/// A skeleton's local pose in [`SoaTransform`] groups of [`LANES`] joints: joint `j` is
/// lane `j % LANES` of group `j / LANES`. Lanes past the joint count hold identities.
#[derive(Clone, Debug, PartialEq)]
pub struct SoaPose {
    groups: Vec<SoaTransform>,
    joints: usize,
}

impl SoaPose {
    /// Identity transforms for `joints` joints.
    pub fn identity(joints: usize) -> Self {
        Self { groups: vec![SoaTransform::IDENTITY; joints.div_ceil(LANES)], joints }
    }

    /// The same transforms as `pose`, regrouped.
    pub fn from_pose(pose: &Pose) -> Self {
        let mut soa = Self::identity(pose.len());
        soa.set_from_pose(pose).expect("sized from the same pose");
        soa
    }

    /// Number of joints (not groups).
    pub fn len(&self) -> usize {
        self.joints
    }

    /// True when the pose has no joints.
    pub fn is_empty(&self) -> bool {
        self.joints == 0
    }

    /// The groups, `len().div_ceil(LANES)` of them.
    pub fn groups(&self) -> &[SoaTransform] {
        &self.groups
    }

    /// The groups, mutable. Writing padding lanes is allowed; readers ignore them.
    pub fn groups_mut(&mut self) -> &mut [SoaTransform] {
        &mut self.groups
    }

    /// Joint `joint`'s transform, or `None` past the joint count.
    pub fn get(&self, joint: usize) -> Option<Transform> {
        (joint < self.joints).then(|| self.groups[joint / LANES].get(joint % LANES))
    }

    /// Sets joint `joint`'s transform; returns false (and writes nothing) past the joint count.
    pub fn set(&mut self, joint: usize, transform: &Transform) -> bool {
        if joint >= self.joints {
            return false;
        }
        self.groups[joint / LANES].set(joint % LANES, transform);
        true
    }

    /// Overwrites every joint from `pose`.
    ///
    /// # Errors
    /// The joint counts differ.
    pub fn set_from_pose(&mut self, pose: &Pose) -> Result<(), PoseError> {
        LengthMismatch::check("pose", pose.len(), self.joints)?;
        for (j, t) in pose.locals().iter().enumerate() {
            self.groups[j / LANES].set(j % LANES, t);
        }
        Ok(())
    }

    /// Writes every joint into `pose`, which keeps its allocation.
    ///
    /// # Errors
    /// The joint counts differ.
    pub fn to_pose(&self, pose: &mut Pose) -> Result<(), PoseError> {
        LengthMismatch::check("pose", pose.len(), self.joints)?;
        for (j, t) in pose.locals_mut().iter_mut().enumerate() {
            *t = self.groups[j / LANES].get(j % LANES);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_keeps_every_component_in_its_lane() {
        let locals: Vec<Transform> = (0..7)
            .map(|i| {
                let f = i as f32;
                Transform {
                    translation: Vec3::new(f, f + 0.25, f + 0.5),
                    rotation: Quat::from_euler_angles(0.1 * f, 0.2, -0.05 * f),
                    scale: Vec3::new(1.0 + f, 2.0, 3.0 - 0.1 * f),
                }
            })
            .collect();
        let pose = Pose::from_locals(locals.clone());
        let soa = SoaPose::from_pose(&pose);
        assert_eq!(soa.groups().len(), 2);
        // Joint 5 is lane 1 of group 1.
        assert_eq!(soa.groups()[1].translation[0][1], 5.0);
        assert_eq!(soa.groups()[1].rotation[3][1], locals[5].rotation.quaternion().w);
        // Padding lane 3 of group 1 is the identity.
        assert_eq!(soa.groups()[1].get(3), Transform::IDENTITY);
        let mut back = Pose::identity(7);
        soa.to_pose(&mut back).unwrap();
        assert_eq!(back.locals(), &locals[..]);
        assert_eq!(soa.get(7), None);
        assert!(soa.get(6).is_some());
    }

    #[test]
    fn length_mismatch_is_an_error() {
        let soa = SoaPose::identity(3);
        let mut pose = Pose::identity(4);
        assert!(soa.to_pose(&mut pose).is_err());
        let mut soa = SoaPose::identity(5);
        assert!(soa.set_from_pose(&pose).is_err());
        assert!(!soa.set(5, &Transform::IDENTITY));
    }
}
