//! Shared test helpers: small skeletons (and the testkit's seeded generator).
#![allow(dead_code, unused_imports)]

use anim_core::pose::{JointDesc, Skeleton};
use anim_math::{Transform, Vec3};

pub use anim_testkit::rng::Rng;

pub fn t(x: f32, y: f32, z: f32) -> Transform {
    Transform::from_translation(Vec3::new(x, y, z))
}

/// pelvis at (0, 1, 0); for each side (x = ±0.1) hip → knee → ankle → toe. Rest ankle sits
/// 0.08 above y = 0, rest toe 0.03 above it.
pub fn legs() -> Skeleton {
    let mut j = vec![JointDesc::new("pelvis", None, t(0.0, 1.0, 0.0))];
    for (side, x) in [("l", -0.1), ("r", 0.1)] {
        let base = j.len();
        j.push(JointDesc::new(format!("hip_{side}"), Some(0), t(x, 0.0, 0.0)));
        j.push(JointDesc::new(format!("knee_{side}"), Some(base), t(0.0, -0.45, 0.02)));
        j.push(JointDesc::new(format!("ankle_{side}"), Some(base + 1), t(0.0, -0.47, -0.02)));
        j.push(JointDesc::new(format!("toe_{side}"), Some(base + 2), t(0.0, -0.05, 0.14)));
    }
    Skeleton::new(j).unwrap()
}
