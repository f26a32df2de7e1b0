// Joint transforms: combine parent and child, invert, interpolate, and the dual
// quaternion that skins without the candy-wrapper collapse.
// `cargo run -p anim-math --example transform`.
use anim_math::{Point3, Quat, Transform, Vec3, dual};

fn main() {
    // A shoulder 1.5 up turned a quarter about z, an elbow 0.3 along its x.
    let shoulder = Transform::new(
        Vec3::new(0.0, 1.5, 0.0),
        Quat::from_axis_angle(&Vec3::z_axis(), std::f32::consts::FRAC_PI_2),
        Vec3::new(1.0, 1.0, 1.0),
    );
    let elbow = Transform::from_translation(Vec3::new(0.3, 0.0, 0.0));
    let elbow_in_model = shoulder.combine(&elbow);
    println!("elbow in model space: {:?}", elbow_in_model.translation);
    assert!((elbow_in_model.translation - Vec3::new(0.0, 1.8, 0.0)).norm() < 1e-6);
    // Back again, and half way between the two.
    let back = shoulder.inverse().combine(&elbow_in_model);
    assert!((back.translation - elbow.translation).norm() < 1e-6);
    let half = Transform::mix(&shoulder, &elbow_in_model, 0.5);
    println!("half way: {:?}", half.translation);
    // The same rigid transform as a dual quaternion moves points the same way.
    let dq = dual::from_rigid_matrix(&elbow_in_model.to_matrix());
    let p = dq.transform_point(&Point3::new(0.1, 0.0, 0.0));
    assert!((p.coords - elbow_in_model.transform_point(&Vec3::new(0.1, 0.0, 0.0))).norm() < 1e-5);
    println!("a point 0.1 along the forearm lands at {:?}", p.coords);
}
