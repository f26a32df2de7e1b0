//! Shared test helpers: a seeded xorshift and small skeletons.
#![allow(dead_code)]

use anim_core::pose::{JointDesc, Skeleton};
use anim_math::{Transform, Vec3};

/// xorshift32: deterministic, no dependency.
pub struct Rng(pub u32);

impl Rng {
    pub fn next_u32(&mut self) -> u32 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.0 = x;
        x
    }

    /// Uniform in [0, 1).
    pub fn f(&mut self) -> f32 {
        (self.next_u32() >> 8) as f32 / (1u32 << 24) as f32
    }

    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.f()
    }

    /// A uniformly distributed unit vector.
    pub fn dir(&mut self) -> Vec3 {
        loop {
            let v = Vec3::new(self.range(-1.0, 1.0), self.range(-1.0, 1.0), self.range(-1.0, 1.0));
            let n = v.norm();
            if n > 0.1 && n <= 1.0 {
                return v / n;
            }
        }
    }
}

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
