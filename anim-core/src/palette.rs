//! Skinning palettes: for each skin joint, `model(joint) · inverse_bind`, the transform
//! that takes a bind-pose vertex to its animated place. As matrices (for linear blend
//! skinning), transforms (the book's per-influence path) or dual quaternions.

use crate::{PoseError, Skin, pose::affine_mul};
use anim_math::{DualQuat, Mat4, Transform, dual};

fn check(model: usize, skin: &Skin, out: usize) -> Result<(), PoseError> {
    if out != skin.len() {
        return Err(PoseError::WrongLength(crate::LengthMismatch::new("palette", out, skin.len())));
    }
    if let Some((index, &joint)) = skin.joints().iter().enumerate().find(|(_, j)| **j >= model) {
        return Err(PoseError::JointOutOfRange { index, joint, count: model });
    }
    Ok(())
}

/// Matrix skinning palette: `out[i] = model[skin.joints[i]] · skin.inverse_bind[i]`.
///
/// `model` comes from [`crate::Pose::local_to_model`].
///
/// # Errors
/// `out` is not the skin's length, or the skin names a joint `model` does not have.
pub fn skinning_matrices(model: &[Mat4], skin: &Skin, out: &mut [Mat4]) -> Result<(), PoseError> {
    check(model.len(), skin, out.len())?;
    for ((o, &j), ibm) in out.iter_mut().zip(skin.joints()).zip(skin.inverse_bind()) {
        *o = affine_mul(&model[j], ibm);
    }
    Ok(())
}

/// Transform skinning palette: `out[i] = globals[skin.joints[i]] ∘ inverse_bind[i]`, with
/// the inverse bind decomposed into a [`Transform`]. Equal to the matrix palette when no
/// joint combines non-uniform scale with rotation (see [`Transform::combine`]).
///
/// # Errors
/// As [`skinning_matrices`].
pub fn skinning_transforms(globals: &[Transform], skin: &Skin, out: &mut [Transform]) -> Result<(), PoseError> {
    check(globals.len(), skin, out.len())?;
    for ((o, &j), ibm) in out.iter_mut().zip(skin.joints()).zip(skin.inverse_bind_transforms()) {
        *o = globals[j].combine(ibm);
    }
    Ok(())
}

/// Dual-quaternion skinning palette: the rigid part of `model[skin.joints[i]] ·
/// inverse_bind[i]` (see [`dual::from_rigid_matrix`]). Scale in the palette matrix is
/// dropped: dual quaternion skinning cannot express it.
///
/// # Errors
/// As [`skinning_matrices`].
pub fn skinning_dual_quats(model: &[Mat4], skin: &Skin, out: &mut [DualQuat]) -> Result<(), PoseError> {
    check(model.len(), skin, out.len())?;
    for ((o, &j), ibm) in out.iter_mut().zip(skin.joints()).zip(skin.inverse_bind()) {
        *o = dual::from_rigid_matrix(&affine_mul(&model[j], ibm));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{JointDesc, Pose, Skeleton};
    use anim_math::{Quat, Vec3};

    #[test]
    fn rest_equals_bind_gives_identity_palettes() {
        let s = Skeleton::new(vec![
            JointDesc::new(
                "a",
                None,
                Transform::new(
                    Vec3::new(1.0, 0.0, 0.0),
                    Quat::from_euler_angles(0.1, 0.2, 0.3),
                    Vec3::new(1.0, 1.0, 1.0),
                ),
            ),
            JointDesc::new("b", Some(0), Transform::from_translation(Vec3::new(0.0, 2.0, 0.0))),
        ])
        .unwrap();
        let skin = Skin::from_skeleton(&s);
        let pose = s.rest_pose();
        let mut model = vec![Mat4::identity(); 2];
        pose.local_to_model(&s, &mut model).unwrap();
        let mut m = vec![Mat4::zeros(); 2];
        skinning_matrices(&model, &skin, &mut m).unwrap();
        let mut g = vec![Transform::IDENTITY; 2];
        pose.globals(&s, &mut g).unwrap();
        let mut t = vec![Transform::IDENTITY; 2];
        skinning_transforms(&g, &skin, &mut t).unwrap();
        let mut d = vec![DualQuat::identity(); 2];
        skinning_dual_quats(&model, &skin, &mut d).unwrap();
        for i in 0..2 {
            assert!((m[i] - Mat4::identity()).abs().max() < 1e-5);
            assert!((t[i].to_matrix() - Mat4::identity()).abs().max() < 1e-5);
            assert!(d[i].rotation().angle() < 1e-3 && d[i].translation().vector.norm() < 1e-5);
        }
        let _ = Pose::identity(2);
    }

    #[test]
    fn errors_name_the_joint() {
        let s = Skeleton::new(vec![JointDesc::new("a", None, Transform::IDENTITY)]).unwrap();
        let skin = Skin::from_skeleton(&s);
        let mut out = vec![Mat4::zeros(); 2];
        assert!(matches!(skinning_matrices(&[Mat4::identity()], &skin, &mut out), Err(PoseError::WrongLength(_))));
        let mut out = vec![Mat4::zeros(); 1];
        assert!(matches!(
            skinning_matrices(&[], &skin, &mut out),
            Err(PoseError::JointOutOfRange { index: 0, joint: 0, count: 0 })
        ));
        assert!(Skin::new(vec![3], vec![Mat4::identity()], &s).is_err());
    }
}
