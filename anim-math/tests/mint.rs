//! The `mint` feature: values of other math crates cross whole and unchanged.
#![cfg(feature = "mint")]

use anim_math::{Mat4, Point3, Quat, Transform, Vec3, interop, mint};

#[test]
fn vectors_and_points_round_trip() {
    let m = mint::Vector3 { x: 1.0f32, y: -2.0, z: 3.5 };
    let v: Vec3 = m.into();
    assert_eq!(v, Vec3::new(1.0, -2.0, 3.5));
    let back: mint::Vector3<f32> = v.into();
    assert_eq!(back, m);
    // A view, not a copy: the same memory seen as mint's type.
    let view: &mint::Vector3<f32> = v.as_ref();
    assert_eq!(view as *const _ as *const f32, v.as_ptr());

    let p: Point3 = mint::Point3 { x: 4.0f32, y: 5.0, z: 6.0 }.into();
    assert_eq!(p, Point3::new(4.0, 5.0, 6.0));
}

#[test]
fn matrices_keep_their_layout() {
    let t = Mat4::new_translation(&Vec3::new(1.0, 2.0, 3.0));
    // glam's Mat4 and cgmath's Matrix4 are column-major, as mint's ColumnMatrix4.
    let m: mint::ColumnMatrix4<f32> = t.into();
    assert_eq!((m.w.x, m.w.y, m.w.z, m.w.w), (1.0, 2.0, 3.0, 1.0));
    assert_eq!(Mat4::from(m), t);
}

#[test]
fn quaternions_become_rotations() {
    let axis = Vec3::new(1.0, 2.0, -0.5).normalize();
    let q = Quat::from_axis_angle(&anim_math::nalgebra::Unit::new_normalize(axis), 0.7);
    let m: mint::Quaternion<f32> = q.into();
    assert_eq!(interop::quat_from_mint(m), q);
    // Unnormalized input (say, a sum of quaternions) is normalized on the way in.
    let doubled =
        mint::Quaternion { v: mint::Vector3 { x: 2.0 * m.v.x, y: 2.0 * m.v.y, z: 2.0 * m.v.z }, s: 2.0 * m.s };
    assert!(interop::quat_from_mint(doubled).angle_to(&q) < 1e-6);
}

#[test]
fn transform_from_mint_parts() {
    let q = Quat::from_euler_angles(0.3, -0.2, 1.1);
    let t = Transform::from_mint([1.0, 2.0, 3.0], q, mint::Vector3 { x: 2.0, y: 2.0, z: 2.0 });
    assert_eq!(t, Transform::new(Vec3::new(1.0, 2.0, 3.0), q, Vec3::new(2.0, 2.0, 2.0)));
}
