//! A small deterministic generator (xorshift32) so that random test data reproduces: the
//! same seed gives the same sequence on every machine.

use anim_math::{Quat, Vec3};

/// xorshift32 (Marsaglia 2003, shifts 13, 17, 5). The state must not be 0.
#[derive(Clone, Debug)]
pub struct Rng(pub u32);

impl Rng {
    /// The next 32 random bits.
    pub fn next_u32(&mut self) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 17;
        self.0 ^= self.0 << 5;
        self.0
    }

    /// Uniform in `[0, 1)`, from the top 24 bits (exact in an `f32`).
    pub fn next_f32(&mut self) -> f32 {
        (self.next_u32() >> 8) as f32 / (1u32 << 24) as f32
    }

    /// Uniform in `[lo, hi)`.
    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.next_f32()
    }

    /// Each component uniform in `[-r, r)`.
    pub fn vec3(&mut self, r: f32) -> Vec3 {
        Vec3::new(self.range(-r, r), self.range(-r, r), self.range(-r, r))
    }

    /// A rotation from Euler angles spread over most of their range.
    pub fn quat(&mut self) -> Quat {
        Quat::from_euler_angles(self.range(-3.1, 3.1), self.range(-1.5, 1.5), self.range(-3.1, 3.1))
    }

    /// A uniformly distributed unit vector (rejection sampling in the unit ball).
    pub fn dir(&mut self) -> Vec3 {
        loop {
            let v = self.vec3(1.0);
            let n = v.norm();
            if n > 0.1 && n <= 1.0 {
                return v / n;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sequence_is_xorshift32() {
        let mut r = Rng(1);
        // x = 1: x ^= x << 13 → 8193; x ^= x >> 17 → 8193; x ^= x << 5 → 270369.
        assert_eq!(r.next_u32(), 270_369);
        let mut r = Rng(42);
        for _ in 0..1000 {
            let x = r.range(-2.0, 3.0);
            assert!((-2.0..3.0).contains(&x));
        }
        assert!((Rng(7).dir().norm() - 1.0).abs() < 1e-6);
    }
}
