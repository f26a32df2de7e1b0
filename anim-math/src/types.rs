//! The concrete `f32` types of the crate (nalgebra's, under short names) and its zero
//! tolerance.

/// A 3-component `f32` vector (positions, directions, scales).
pub type Vec3 = nalgebra::Vector3<f32>;
/// A 4-component `f32` vector.
pub type Vec4 = nalgebra::Vector4<f32>;
/// A 3D point.
pub type Point3 = nalgebra::Point3<f32>;
/// A unit quaternion: a rotation.
pub type Quat = nalgebra::UnitQuaternion<f32>;
/// A 4×4 `f32` matrix, column-major, acting on column vectors (`M * v`).
pub type Mat4 = nalgebra::Matrix4<f32>;
/// A 3×3 `f32` matrix.
pub type Mat3 = nalgebra::Matrix3<f32>;
/// A unit dual quaternion: a rigid transform (rotation then translation).
pub type DualQuat = nalgebra::UnitDualQuaternion<f32>;

/// Tolerance used when deciding that a length or a determinant is zero.
pub const EPSILON: f32 = 1e-6;
