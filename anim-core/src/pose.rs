use crate::{LengthMismatch, PoseError, Skeleton};
use anim_math::{Mat4, Transform};

/// A pose: one local (parent-relative) transform per joint, in skeleton order.
///
/// A pose holds no hierarchy: the operations that need one take the [`Skeleton`], so one
/// skeleton serves any number of poses (instances, blend inputs, layers).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Pose {
    locals: Vec<Transform>,
}

impl Pose {
    /// A pose from local transforms (skeleton order).
    pub fn from_locals(locals: Vec<Transform>) -> Self {
        Self { locals }
    }

    /// A pose of `joints` identity transforms.
    pub fn identity(joints: usize) -> Self {
        Self { locals: vec![Transform::IDENTITY; joints] }
    }

    /// Number of joints.
    #[inline]
    pub fn len(&self) -> usize {
        self.locals.len()
    }

    /// True when the pose has no joints.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.locals.is_empty()
    }

    /// The local transforms.
    #[inline]
    pub fn locals(&self) -> &[Transform] {
        &self.locals
    }

    /// The local transforms, writable.
    #[inline]
    pub fn locals_mut(&mut self) -> &mut [Transform] {
        &mut self.locals
    }

    /// Local transform of one joint.
    #[inline]
    pub fn local(&self, joint: usize) -> Option<&Transform> {
        self.locals.get(joint)
    }

    /// Model-space (skeleton-root-relative) transform of one joint, found by combining
    /// up the parent chain. Returns `None` for a joint out of range or a pose that does not
    /// match the skeleton. For all joints use [`Pose::globals`], which is one pass.
    pub fn global(&self, skeleton: &Skeleton, joint: usize) -> Option<Transform> {
        if self.len() != skeleton.len() || joint >= self.len() {
            return None;
        }
        let mut result = self.locals[joint];
        let mut p = skeleton.parent(joint);
        while let Some(i) = p {
            result = self.locals[i].combine(&result);
            p = skeleton.parent(i);
        }
        Some(result)
    }

    /// Model-space transforms of every joint in one forward pass (parents come first).
    ///
    /// # Errors
    /// The pose or `out` length differs from the skeleton's joint count.
    pub fn globals(&self, skeleton: &Skeleton, out: &mut [Transform]) -> Result<(), PoseError> {
        self.check(skeleton, out.len(), "global transforms")?;
        for (i, parent) in skeleton.parents().iter().enumerate() {
            out[i] = match parent {
                Some(p) => out[*p].combine(&self.locals[i]),
                None => self.locals[i],
            };
        }
        Ok(())
    }

    /// Model-space matrices of every joint in one forward pass: the book's matrix palette
    /// (`GetMatrixPalette`). Unlike [`Pose::globals`] this is exact with non-uniform scale.
    ///
    /// # Errors
    /// The pose or `out` length differs from the skeleton's joint count.
    pub fn local_to_model(&self, skeleton: &Skeleton, out: &mut [Mat4]) -> Result<(), PoseError> {
        self.check(skeleton, out.len(), "model matrices")?;
        // Regrouped four joints at a time into the SIMD kernel of [`crate::hierarchy`].
        crate::hierarchy::run(skeleton.parents(), &self.locals[..], 0, skeleton.len(), out);
        Ok(())
    }

    /// Recomputes the model matrices of joint `from` and its subtree only, as
    /// [`crate::hierarchy::local_to_model_from`] does for a [`crate::soa::SoaPose`]:
    /// `from`'s parent's matrix in `out` is trusted, joints outside the subtree are left
    /// as they are. For IK passes that change a few joints.
    ///
    /// # Errors
    /// Wrong lengths, or `from` is not a joint.
    pub fn local_to_model_from(
        &self,
        skeleton: &Skeleton,
        from: usize,
        out: &mut [Mat4],
    ) -> Result<(), crate::hierarchy::HierarchyError> {
        self.check(skeleton, out.len(), "model matrices")?;
        if from >= skeleton.len() {
            return Err(crate::hierarchy::HierarchyError::JointOutOfRange {
                what: "from",
                joint: from,
                count: skeleton.len(),
            });
        }
        let range = skeleton.subtree(from);
        crate::hierarchy::run(skeleton.parents(), &self.locals[..], range.start, range.end, out);
        Ok(())
    }

    fn check(&self, skeleton: &Skeleton, out: usize, what: &'static str) -> Result<(), PoseError> {
        LengthMismatch::check("pose", self.len(), skeleton.len())?;
        Ok(LengthMismatch::check(what, out, skeleton.len())?)
    }
}

/// Product of two affine matrices (last row `0 0 0 1`), skipping the projective row.
#[inline]
pub(crate) fn affine_mul(a: &Mat4, b: &Mat4) -> Mat4 {
    let a = a.as_slice();
    let b = b.as_slice();
    let mut r = [0.0f32; 16];
    for c in 0..4 {
        let (b0, b1, b2) = (b[c * 4], b[c * 4 + 1], b[c * 4 + 2]);
        for row in 0..3 {
            r[c * 4 + row] = a[row] * b0 + a[4 + row] * b1 + a[8 + row] * b2;
        }
    }
    for row in 0..3 {
        r[12 + row] += a[12 + row];
    }
    r[15] = 1.0;
    Mat4::from_column_slice(&r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::JointDesc;
    use anim_math::{Quat, Vec3};

    /// A two-joint chain: root at (0,1,0) rotated 90° about z, child 2 units along x.
    fn chain() -> (Skeleton, Pose) {
        let root = Transform::new(
            Vec3::new(0.0, 1.0, 0.0),
            Quat::from_axis_angle(&Vec3::z_axis(), std::f32::consts::FRAC_PI_2),
            Vec3::new(1.0, 1.0, 1.0),
        );
        let child = Transform::from_translation(Vec3::new(2.0, 0.0, 0.0));
        let s =
            Skeleton::new(vec![JointDesc::new("root", None, root), JointDesc::new("child", Some(0), child)]).unwrap();
        let p = s.rest_pose().clone();
        (s, p)
    }

    #[test]
    fn hand_computed_two_joint_chain() {
        let (s, p) = chain();
        // Child sits at root.translation + Rz(90°)·(2,0,0) = (0,1,0) + (0,2,0).
        let g = p.global(&s, 1).unwrap();
        assert!((g.translation - Vec3::new(0.0, 3.0, 0.0)).norm() < 1e-6);
        let mut m = vec![Mat4::zeros(); 2];
        p.local_to_model(&s, &mut m).unwrap();
        assert!((m[1].column(3).xyz() - Vec3::new(0.0, 3.0, 0.0)).norm() < 1e-6);
        let mut g = vec![Transform::IDENTITY; 2];
        p.globals(&s, &mut g).unwrap();
        assert!((g[1].translation - Vec3::new(0.0, 3.0, 0.0)).norm() < 1e-6);
    }

    #[test]
    fn affine_mul_matches_full_product() {
        let a =
            Transform::new(Vec3::new(1.0, 2.0, 3.0), Quat::from_euler_angles(0.1, 0.7, -0.3), Vec3::new(1.0, 2.0, 0.5))
                .to_matrix();
        let b = Transform::new(
            Vec3::new(-1.0, 0.0, 4.0),
            Quat::from_euler_angles(1.1, -0.2, 0.3),
            Vec3::new(3.0, 1.0, 1.0),
        )
        .to_matrix();
        assert!((affine_mul(&a, &b) - a * b).abs().max() < 1e-5);
    }

    #[test]
    fn partial_update_from_pose_matches_full_and_leaves_the_rest() {
        // root ─ a ─ b, root ─ c: change a's subtree, update from a.
        let t = |x: f32| {
            Transform::new(Vec3::new(x, 1.0, 0.0), Quat::from_euler_angles(0.2, x, 0.1), Vec3::new(1.0, 1.5, 1.0))
        };
        let s = Skeleton::new(vec![
            JointDesc::new("root", None, t(0.1)),
            JointDesc::new("a", Some(0), t(0.2)),
            JointDesc::new("b", Some(1), t(0.3)),
            JointDesc::new("c", Some(0), t(0.4)),
        ])
        .unwrap();
        let mut p = s.rest_pose().clone();
        let mut model = vec![Mat4::zeros(); 4];
        p.local_to_model(&s, &mut model).unwrap();
        let a = s.find("a").unwrap();
        p.locals_mut()[a] = t(0.9);
        let before = model.clone();
        p.local_to_model_from(&s, a, &mut model).unwrap();
        let mut full = vec![Mat4::zeros(); 4];
        p.local_to_model(&s, &mut full).unwrap();
        for j in 0..4 {
            if s.is_in_hierarchy(a, j) {
                assert!((model[j] - full[j]).abs().max() < 1e-6);
                assert!((model[j] - before[j]).abs().max() > 1e-3);
            } else {
                assert_eq!(model[j], before[j]);
            }
        }
        assert!(p.local_to_model_from(&s, 4, &mut model).is_err());
    }

    #[test]
    fn wrong_lengths_are_errors() {
        let (s, p) = chain();
        let mut m = vec![Mat4::zeros(); 1];
        assert!(matches!(p.local_to_model(&s, &mut m), Err(PoseError::WrongLength(LengthMismatch { got: 1, .. }))));
        assert!(Pose::identity(3).global(&s, 0).is_none());
        assert!(p.global(&s, 2).is_none());
    }
}
