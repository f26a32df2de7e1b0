use crate::quat;
use crate::types::{EPSILON, Mat3, Mat4, Quat, Vec3};
use nalgebra::Rotation3;

/// A joint transform: scale, then rotation, then translation (`T · R · S`).
///
/// This is the book's `Transform` and glTF's node TRS. Scale is per axis. Composing two
/// transforms with non-uniform scale and rotation can produce shear, which a `Transform`
/// cannot hold: [`Transform::combine`] then returns the usual TRS approximation (scales
/// multiplied per axis), exactly like the book and most runtimes. Use matrices when you
/// need the exact product.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Transform {
    /// Translation, applied last.
    pub translation: Vec3,
    /// Rotation, applied after scale.
    pub rotation: Quat,
    /// Per-axis scale, applied first.
    pub scale: Vec3,
}

impl Default for Transform {
    fn default() -> Self {
        Self::IDENTITY
    }
}

impl Transform {
    /// The identity transform.
    pub const IDENTITY: Transform = Transform {
        translation: Vec3::new(0.0, 0.0, 0.0),
        rotation: Quat::new_unchecked(nalgebra::Quaternion::new(1.0, 0.0, 0.0, 0.0)),
        scale: Vec3::new(1.0, 1.0, 1.0),
    };

    /// Builds a transform from its three parts.
    #[inline]
    #[must_use]
    pub fn new(translation: Vec3, rotation: Quat, scale: Vec3) -> Self {
        Self { translation, rotation, scale }
    }

    /// A pure translation.
    #[inline]
    #[must_use]
    pub fn from_translation(translation: Vec3) -> Self {
        Self { translation, ..Self::IDENTITY }
    }

    /// A pure rotation.
    #[inline]
    #[must_use]
    pub fn from_rotation(rotation: Quat) -> Self {
        Self { rotation, ..Self::IDENTITY }
    }

    /// Composes `self` (the parent) with `child`: the result maps a point first through
    /// `child`, then through `self`. This is the book's `combine(parent, child)`.
    ///
    /// Scales multiply per axis, which is exact when the parent's scale is uniform or the
    /// child has no rotation; otherwise the shear of the exact product is dropped.
    #[inline]
    #[must_use]
    pub fn combine(&self, child: &Transform) -> Transform {
        Transform {
            translation: self.rotation * self.scale.component_mul(&child.translation) + self.translation,
            rotation: self.rotation * child.rotation,
            scale: self.scale.component_mul(&child.scale),
        }
    }

    /// The inverse transform. Exact for uniform scale; with non-uniform scale and rotation
    /// the exact inverse has shear, which is dropped as in [`Transform::combine`]. A zero
    /// scale component inverts to zero instead of infinity.
    #[inline]
    #[must_use]
    pub fn inverse(&self) -> Transform {
        let inv_rot = self.rotation.inverse();
        let inv = |s: f32| if s.abs() < EPSILON { 0.0 } else { 1.0 / s };
        let inv_scale = Vec3::new(inv(self.scale.x), inv(self.scale.y), inv(self.scale.z));
        Transform {
            translation: inv_scale.component_mul(&(inv_rot * -self.translation)),
            rotation: inv_rot,
            scale: inv_scale,
        }
    }

    /// Applies scale, rotation and translation to a point.
    #[inline]
    #[must_use]
    pub fn transform_point(&self, p: &Vec3) -> Vec3 {
        self.rotation * self.scale.component_mul(p) + self.translation
    }

    /// Applies scale and rotation (no translation) to a vector.
    #[inline]
    #[must_use]
    pub fn transform_vector(&self, v: &Vec3) -> Vec3 {
        self.rotation * self.scale.component_mul(v)
    }

    /// The 4×4 matrix `T · R · S`.
    #[inline]
    #[must_use]
    pub fn to_matrix(&self) -> Mat4 {
        let r = self.rotation.to_rotation_matrix();
        let r = r.matrix();
        let s = self.scale;
        let t = self.translation;
        Mat4::new(
            r[(0, 0)] * s.x,
            r[(0, 1)] * s.y,
            r[(0, 2)] * s.z,
            t.x,
            r[(1, 0)] * s.x,
            r[(1, 1)] * s.y,
            r[(1, 2)] * s.z,
            t.y,
            r[(2, 0)] * s.x,
            r[(2, 1)] * s.y,
            r[(2, 2)] * s.z,
            t.z,
            0.0,
            0.0,
            0.0,
            1.0,
        )
    }

    /// Decomposes an affine matrix into translation, rotation and scale.
    ///
    /// The translation is the last column. The scale is the length of each basis column,
    /// with the x scale negated when the basis is a reflection (negative determinant). The
    /// rotation is the rotation nearest to the scale-normalised basis, so **shear is
    /// discarded**: for a matrix with shear `from_matrix(m).to_matrix() != m`. glTF requires
    /// node matrices to be decomposable to TRS, so for valid files nothing is lost. The
    /// projective row is ignored. A zero-length column gives a zero scale on that axis.
    #[must_use]
    pub fn from_matrix(m: &Mat4) -> Transform {
        let translation = Vec3::new(m[(0, 3)], m[(1, 3)], m[(2, 3)]);
        let mut cols = [
            Vec3::new(m[(0, 0)], m[(1, 0)], m[(2, 0)]),
            Vec3::new(m[(0, 1)], m[(1, 1)], m[(2, 1)]),
            Vec3::new(m[(0, 2)], m[(1, 2)], m[(2, 2)]),
        ];
        let mut scale = Vec3::new(length(&cols[0]), length(&cols[1]), length(&cols[2]));
        for (i, c) in cols.iter_mut().enumerate() {
            if scale[i] > EPSILON {
                *c /= scale[i];
            }
        }
        // The reflection test on the normalized columns: the determinant of the raw ones
        // overflows for scales beyond about 1e13 (positive factors keep its sign).
        if cols[0].cross(&cols[1]).dot(&cols[2]) < 0.0 {
            scale.x = -scale.x;
            cols[0] = -cols[0];
        }
        // Rebuild an orthonormal frame for degenerate (zero-scale) axes so the rotation
        // stays well defined.
        let basis = orthonormal_frame(cols, scale);
        let rot = Rotation3::from_matrix_eps(&basis, 1e-7, 32, Rotation3::identity());
        Transform { translation, rotation: Quat::from_rotation_matrix(&rot), scale }
    }

    /// Interpolates two transforms: translation and scale linearly, rotation by
    /// neighbourhood-correct normalized lerp ([`quat::nlerp`]). `t = 0` gives `a`, `t = 1`
    /// gives `b`.
    #[inline]
    #[must_use]
    pub fn mix(a: &Transform, b: &Transform, t: f32) -> Transform {
        Transform {
            translation: a.translation.lerp(&b.translation, t),
            rotation: quat::nlerp(&a.rotation, &b.rotation, t),
            scale: a.scale.lerp(&b.scale, t),
        }
    }

    /// True when every component is finite.
    #[must_use]
    pub fn is_finite(&self) -> bool {
        self.translation.iter().all(|v| v.is_finite())
            && self.rotation.coords.iter().all(|v| v.is_finite())
            && self.scale.iter().all(|v| v.is_finite())
    }
}

/// Euclidean length without overflow in the squares: a column with entries beyond about
/// 1.8e19 is measured scaled down by its largest entry. Infinite only when the length
/// itself is beyond `f32::MAX`.
fn length(v: &Vec3) -> f32 {
    let n = v.norm();
    if n.is_finite() {
        return n;
    }
    let m = v.amax();
    m * (v / m).norm()
}

/// Completes a basis in which some columns may be zero (zero scale) into a rotation-like
/// frame: missing axes are rebuilt from the present ones with cross products.
fn orthonormal_frame(cols: [Vec3; 3], scale: Vec3) -> Mat3 {
    let ok = [scale.x.abs() > EPSILON, scale.y.abs() > EPSILON, scale.z.abs() > EPSILON];
    let mut c = cols;
    match ok {
        [true, true, true] => {}
        [true, true, false] => c[2] = c[0].cross(&c[1]).normalize(),
        [true, false, true] => c[1] = c[2].cross(&c[0]).normalize(),
        [false, true, true] => c[0] = c[1].cross(&c[2]).normalize(),
        _ => {
            // Two or three axes collapsed: keep the surviving axis and pick the others.
            let (i, axis) = match ok.iter().position(|&b| b) {
                Some(i) => (i, c[i]),
                None => return Mat3::identity(),
            };
            let other = quat::any_orthogonal(&axis);
            let third = axis.cross(&other);
            c[i] = axis;
            c[(i + 1) % 3] = other;
            c[(i + 2) % 3] = third;
        }
    }
    Mat3::from_columns(&c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn approx(a: &Vec3, b: &Vec3, eps: f32) -> bool {
        (a - b).norm() <= eps
    }

    fn sample() -> Transform {
        Transform::new(Vec3::new(1.0, -2.0, 0.5), Quat::from_euler_angles(0.3, -0.7, 1.1), Vec3::new(2.0, 2.0, 2.0))
    }

    #[test]
    fn combine_matches_matrix_product() {
        let a = sample();
        let b = Transform::new(
            Vec3::new(0.0, 3.0, -1.0),
            Quat::from_euler_angles(-0.2, 0.4, 0.1),
            Vec3::new(0.5, 1.5, 1.0),
        );
        let m = a.to_matrix() * b.to_matrix();
        let p = Vec3::new(0.3, -0.4, 2.0);
        let via_m = m.transform_point(&p.into()).coords;
        assert!(approx(&a.combine(&b).transform_point(&p), &via_m, 1e-5));
    }

    #[test]
    fn inverse_undoes_uniform_scale_transform() {
        let a = sample();
        let p = Vec3::new(4.0, 5.0, -6.0);
        let back = a.inverse().transform_point(&a.transform_point(&p));
        assert!(approx(&back, &p, 1e-5));
        let id = a.combine(&a.inverse());
        assert!(approx(&id.translation, &Vec3::zeros(), 1e-5));
        assert!(id.rotation.angle() < 1e-5);
    }

    #[test]
    fn matrix_round_trip_with_nonuniform_scale_and_reflection() {
        let t = Transform::new(
            Vec3::new(1.0, 2.0, 3.0),
            Quat::from_euler_angles(0.5, 0.2, -0.9),
            Vec3::new(-1.5, 0.5, 3.0),
        );
        let back = Transform::from_matrix(&t.to_matrix());
        assert!((back.to_matrix() - t.to_matrix()).abs().max() < 1e-5);
        assert!(back.scale.x < 0.0);
    }

    #[test]
    fn from_matrix_with_zero_scale_axis_is_finite() {
        let t = Transform::new(Vec3::zeros(), Quat::from_euler_angles(0.1, 0.2, 0.3), Vec3::new(1.0, 0.0, 2.0));
        let back = Transform::from_matrix(&t.to_matrix());
        assert!(back.is_finite());
        assert!((back.to_matrix() - t.to_matrix()).abs().max() < 1e-5);
    }

    /// Scales near the top of the f32 range decompose exactly instead of overflowing in
    /// the column lengths or the determinant.
    #[test]
    fn from_matrix_with_huge_scale_is_finite() {
        for s in [Vec3::new(1e20, 2e20, 3e20), Vec3::new(-1e30, 1e30, 1e30), Vec3::new(3e38, 1.0, 1.0)] {
            let t = Transform::new(Vec3::new(1.0, 2.0, 3.0), Quat::from_euler_angles(0.1, 0.2, 0.3), s);
            let back = Transform::from_matrix(&t.to_matrix());
            assert!(back.is_finite(), "{s}");
            assert!(((back.scale - s).component_div(&s)).amax() < 1e-5, "{s}: {}", back.scale);
            assert!(back.rotation.angle_to(&t.rotation) < 1e-5);
        }
    }

    #[test]
    fn from_matrix_drops_shear() {
        let mut m = Mat4::identity();
        m[(0, 1)] = 0.5; // x += 0.5 y: shear
        let t = Transform::from_matrix(&m);
        assert!(t.is_finite());
        assert!((t.scale.x - 1.0).abs() < 1e-6);
        assert!((t.scale.y - 1.25f32.sqrt()).abs() < 1e-6);
    }

    #[test]
    fn mix_end_points_and_midpoint() {
        let a = Transform::IDENTITY;
        let b = Transform::new(
            Vec3::new(2.0, 0.0, 0.0),
            Quat::from_axis_angle(&Vec3::z_axis(), 1.0),
            Vec3::new(3.0, 3.0, 3.0),
        );
        assert_eq!(Transform::mix(&a, &b, 0.0).translation, a.translation);
        let m = Transform::mix(&a, &b, 0.5);
        assert!(approx(&m.translation, &Vec3::new(1.0, 0.0, 0.0), 1e-6));
        assert!(approx(&m.scale, &Vec3::new(2.0, 2.0, 2.0), 1e-6));
        assert!((m.rotation.angle() - 0.5).abs() < 1e-5);
    }
}
