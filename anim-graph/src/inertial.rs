//! Inertialization (D. Bollo, *Inertialization: High-Performance Animation Transitions in
//! Gears of War*, GDC 2018): a transition that evaluates only its target state.
//!
//! At the switch the pose the character showed is continued for one frame (the last pose
//! moved on by its own velocity) and its **offset** from the target's first pose is
//! recorded per joint: translation, rotation (as a rotation vector, the axis times the
//! angle of `source · target⁻¹`) and scale, nine numbers. Each number then decays to 0
//! over the blend time `t₁` along Bollo's quintic
//!
//! ```text
//! x(t) = A t⁵ + B t⁴ + C t³ + ½a₀ t² + v₀ t + x₀
//! A = −(a₀t₁² + 6v₀t₁ + 12x₀) / 2t₁⁵,  B = (3a₀t₁² + 16v₀t₁ + 30x₀) / 2t₁⁴,
//! C = −(3a₀t₁² + 12v₀t₁ + 20x₀) / 2t₁³,  a₀ = (−8v₀t₁ − 20x₀) / t₁²
//! ```
//!
//! which reaches `x = x' = x'' = 0` at `t₁`, and the pose shown is the target's with the
//! offset on top (`t + x_t`, `exp(x_r)·r`, `s + x_s`). As in Bollo's talk, an offset
//! velocity towards zero shortens `t₁` to at most `−5x₀/v₀` and `a₀` is kept on the side
//! that does not overshoot.
//!
//! Two choices differ from the talk, both so that the joints' **velocity** stays
//! continuous through the switch, not only their positions:
//! - Each of the nine numbers decays on its own (not the offset's length along a fixed
//!   axis), so velocity across the offset's direction is kept too; an offset velocity
//!   pointing away from zero is kept (the talk sets it to 0), so the offset first grows,
//!   then decays.
//! - `v₀` is the source's velocity *minus the target's*. The target's velocity is only
//!   known one frame after the switch, so the polynomial is fixed then: at the switch the
//!   offset is `x₀` whatever `v₀` is, and on the next frame `v₀ = (x₁ − x₀) / dt`, where
//!   `x₁` is the offset from the target's second pose to the source continued for two
//!   frames. This costs nothing extra: still only the target state is evaluated.
//!
//! Root motion is inertialized the same way as a velocity: the difference between the
//! source's last root velocity and the target's decays (with `v₀ = 0`), so the character
//! neither jumps nor changes speed at once. Nothing here allocates after construction.

use anim_core::pose::Pose;
use anim_math::{Quat, Transform, Vec3};
use nalgebra::Quaternion;

/// The decay polynomial of one number (see the [module docs](self)).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Quintic {
    /// Coefficients of t⁵ … t⁰.
    c: [f32; 6],
    /// Time at which the offset reaches 0.
    t1: f32,
}

impl Quintic {
    /// The decay of offset `x0`, moving at `v0`, over `t1` seconds.
    pub fn new(x0: f32, v0: f32, t1: f32) -> Self {
        if t1.is_nan() || t1 <= 1e-6 || !x0.is_finite() || !v0.is_finite() || (x0 == 0.0 && v0 == 0.0) {
            return Self::default();
        }
        let towards = x0 * v0 < 0.0;
        let t1 = if towards { t1.min(-5.0 * x0 / v0) } else { t1 };
        let mut a0 = (-8.0 * v0 * t1 - 20.0 * x0) / (t1 * t1);
        if x0 * v0 <= 0.0 && x0 != 0.0 {
            // Not moving away: keep the acceleration on x0's side (no overshoot).
            a0 = if x0 > 0.0 { a0.max(0.0) } else { a0.min(0.0) };
        }
        let (t2, t3) = (t1 * t1, t1 * t1 * t1);
        let a = -(a0 * t2 + 6.0 * v0 * t1 + 12.0 * x0) / (2.0 * t3 * t2);
        let b = (3.0 * a0 * t2 + 16.0 * v0 * t1 + 30.0 * x0) / (2.0 * t2 * t2);
        let c = -(3.0 * a0 * t2 + 12.0 * v0 * t1 + 20.0 * x0) / (2.0 * t3);
        Self { c: [a, b, c, 0.5 * a0, v0, x0], t1 }
    }

    /// The offset at `t` seconds after the switch (0 from `t1` on).
    #[inline]
    pub fn eval(&self, t: f32) -> f32 {
        if t >= self.t1 {
            return 0.0;
        }
        let c = &self.c;
        ((((c[0] * t + c[1]) * t + c[2]) * t + c[3]) * t + c[4]) * t + c[5]
    }

    /// The offset's rate of change at `t`.
    pub fn velocity(&self, t: f32) -> f32 {
        if t >= self.t1 {
            return 0.0;
        }
        let c = &self.c;
        (((5.0 * c[0] * t + 4.0 * c[1]) * t + 3.0 * c[2]) * t + 2.0 * c[3]) * t + c[4]
    }

    /// When the offset reaches 0.
    pub fn end(&self) -> f32 {
        self.t1
    }
}

/// The rotation vector (axis × angle, angle in `[0, π]`) of a unit quaternion.
#[inline]
pub fn log_rotation(q: &Quat) -> Vec3 {
    let q = q.quaternion();
    let (w, v) = if q.w < 0.0 { (-q.w, -q.vector()) } else { (q.w, q.vector().into_owned()) };
    let s = v.norm();
    if s < 1e-7 {
        return v * 2.0;
    }
    v * (2.0 * s.atan2(w) / s)
}

/// The unit quaternion of rotation vector `r`.
#[inline]
pub fn exp_rotation(r: &Vec3) -> Quat {
    let t2 = r.norm_squared();
    if t2 < 1e-12 {
        return Quat::new_normalize(Quaternion::new(1.0, 0.5 * r.x, 0.5 * r.y, 0.5 * r.z));
    }
    let t = t2.sqrt();
    let (s, c) = (0.5 * t).sin_cos();
    let k = s / t;
    Quat::new_unchecked(Quaternion::new(c, r.x * k, r.y * k, r.z * k))
}

/// `src ⊖ tgt`: translation and scale differences, rotation vector of `src · tgt⁻¹`.
#[inline]
fn offset(src: &Transform, tgt: &Transform) -> [f32; 9] {
    let t = src.translation - tgt.translation;
    let r = log_rotation(&(src.rotation * tgt.rotation.inverse()));
    let s = src.scale - tgt.scale;
    [t.x, t.y, t.z, r.x, r.y, r.z, s.x, s.y, s.z]
}

/// `tgt ⊕ x`.
#[inline]
fn apply(tgt: &Transform, x: &[f32; 9], scale: bool) -> Transform {
    let r = exp_rotation(&Vec3::new(x[3], x[4], x[5]));
    Transform {
        translation: tgt.translation + Vec3::new(x[0], x[1], x[2]),
        rotation: Quat::new_normalize((r * tgt.rotation).into_inner()),
        scale: if scale { tgt.scale + Vec3::new(x[6], x[7], x[8]) } else { tgt.scale },
    }
}

/// The rate of change from `a` to `b` over `dt` (in the terms of [`offset`]).
#[inline]
fn velocity(a: &Transform, b: &Transform, dt: f32) -> [f32; 9] {
    let mut v = offset(b, a);
    v.iter_mut().for_each(|x| *x /= dt);
    v
}

/// `p` moved on by velocity `v` for `dt`.
#[inline]
fn extrapolate(p: &Transform, v: &[f32; 9], dt: f32) -> Transform {
    let mut x = *v;
    x.iter_mut().for_each(|c| *c *= dt);
    apply(p, &x, true)
}

/// Root motion as six numbers: translation and rotation vector.
#[inline]
fn motion_terms(m: &Transform) -> [f32; 6] {
    let r = log_rotation(&m.rotation);
    [m.translation.x, m.translation.y, m.translation.z, r.x, r.y, r.z]
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Idle,
    /// Switched this update; `v₀` is fixed on the next.
    Pending,
    Active,
}

/// The inertialization of one pose stream (a state machine's output). See the
/// [module docs](self).
#[derive(Clone, Debug)]
pub struct Inertializer {
    phase: Phase,
    duration: f32,
    elapsed: f32,
    scale: bool,
    x0: Vec<[f32; 9]>,
    source_velocity: Vec<[f32; 9]>,
    polys: Vec<[Quintic; 9]>,
    motion: [Quintic; 6],
}

impl Inertializer {
    /// An idle inertializer for poses of `joints` joints.
    pub fn new(joints: usize) -> Self {
        Self {
            phase: Phase::Idle,
            duration: 0.0,
            elapsed: 0.0,
            scale: false,
            x0: vec![[0.0; 9]; joints],
            source_velocity: vec![[0.0; 9]; joints],
            polys: vec![[Quintic::default(); 9]; joints],
            motion: [Quintic::default(); 6],
        }
    }

    /// True while an offset is being decayed.
    pub fn is_active(&self) -> bool {
        self.phase != Phase::Idle
    }

    /// Seconds since the switch and the blend time.
    pub fn progress(&self) -> (f32, f32) {
        (self.elapsed, self.duration)
    }

    /// Stops (the offset is dropped).
    pub fn stop(&mut self) {
        self.phase = Phase::Idle;
    }

    /// The switch. `shown` holds the last pose shown and, when known, the one before it
    /// with the time between them; `source_motion` the last root-motion step shown and its
    /// `dt`. `target` is the target state's first pose, which becomes the pose shown now
    /// (the source continued by `dt`); `motion` is the target's root-motion step, which
    /// becomes the source's continued the same way.
    pub fn start(
        &mut self,
        shown: (&Pose, Option<(&Pose, f32)>),
        source_motion: Option<(&Transform, f32)>,
        target: &mut Pose,
        motion: &mut Transform,
        dt: f32,
        duration: f32,
    ) {
        let (last, before) = shown;
        let mut scale = false;
        for (j, t) in target.locals_mut().iter_mut().enumerate() {
            let p = last.locals()[j];
            let v = match before {
                Some((b, dt_before)) if dt_before > 0.0 => velocity(&b.locals()[j], &p, dt_before),
                _ => [0.0; 9],
            };
            let s = extrapolate(&p, &v, dt);
            let x = offset(&s, t);
            scale |= x[6..].iter().chain(&v[6..]).any(|c| c.abs() > 1e-6);
            self.x0[j] = x;
            self.source_velocity[j] = v;
            *t = s;
        }
        // Root motion: the velocity difference decays (v₀ = 0); the step shown now is the
        // source's rate times dt.
        self.motion = [Quintic::default(); 6];
        if let Some((m, m_dt)) = source_motion
            && m_dt > 0.0
            && dt > 0.0
        {
            let (src, tgt) = (motion_terms(m), motion_terms(motion));
            for c in 0..6 {
                self.motion[c] = Quintic::new(src[c] / m_dt - tgt[c] / dt, 0.0, duration);
            }
            apply_motion(&self.motion, 0.0, dt, motion);
        }
        self.scale = scale;
        self.duration = duration;
        self.elapsed = 0.0;
        self.phase = if duration > 0.0 { Phase::Pending } else { Phase::Idle };
    }

    /// One update after the switch: `pose` is the target's pose now and becomes the pose
    /// shown; `shown` is the pose shown by the previous update; `motion` the target's
    /// root-motion step, adjusted likewise.
    pub fn update(&mut self, shown: &Pose, pose: &mut Pose, motion: &mut Transform, dt: f32) {
        match self.phase {
            Phase::Idle => return,
            Phase::Pending if dt <= 0.0 => {
                for (j, t) in pose.locals_mut().iter_mut().enumerate() {
                    *t = apply(t, &self.x0[j], self.scale);
                }
                return;
            }
            Phase::Pending => {
                for (j, t) in pose.locals().iter().enumerate() {
                    let s1 = extrapolate(&shown.locals()[j], &self.source_velocity[j], dt);
                    let x1 = offset(&s1, t);
                    let x0 = self.x0[j];
                    for c in 0..9 {
                        self.polys[j][c] = Quintic::new(x0[c], (x1[c] - x0[c]) / dt, self.duration);
                    }
                }
                self.phase = Phase::Active;
            }
            Phase::Active => {}
        }
        self.elapsed += dt;
        if self.elapsed >= self.duration {
            self.phase = Phase::Idle;
            return;
        }
        let t = self.elapsed;
        let channels = if self.scale { 9 } else { 6 };
        for (j, p) in pose.locals_mut().iter_mut().enumerate() {
            let polys = &self.polys[j];
            let mut x = [0.0f32; 9];
            for c in 0..channels {
                x[c] = polys[c].eval(t);
            }
            *p = apply(p, &x, self.scale);
        }
        apply_motion(&self.motion, t, dt, motion);
    }

    /// The current offset of joint `joint` (nine numbers), for tests and displays.
    pub fn offset_at(&self, joint: usize) -> [f32; 9] {
        let mut x = [0.0; 9];
        match self.phase {
            Phase::Idle => {}
            Phase::Pending => x = self.x0[joint],
            Phase::Active => {
                for (c, v) in x.iter_mut().enumerate() {
                    *v = self.polys[joint][c].eval(self.elapsed);
                }
            }
        }
        x
    }
}

/// Adds the decayed root-velocity difference at `t`, over a step of `dt`, to `motion`.
fn apply_motion(polys: &[Quintic; 6], t: f32, dt: f32, motion: &mut Transform) {
    let x: [f32; 6] = std::array::from_fn(|c| polys[c].eval(t) * dt);
    if x.iter().all(|c| *c == 0.0) {
        return;
    }
    motion.translation += Vec3::new(x[0], x[1], x[2]);
    motion.rotation = Quat::new_normalize((exp_rotation(&Vec3::new(x[3], x[4], x[5])) * motion.rotation).into_inner());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quintic_starts_at_the_offset_and_ends_flat() {
        for (x0, v0) in [(1.0, 0.0), (1.0, -3.0), (-0.5, 2.0), (0.3, 4.0), (0.0, 1.0)] {
            let q = Quintic::new(x0, v0, 0.5);
            assert_eq!(q.eval(0.0), x0);
            assert_eq!(q.velocity(0.0), v0, "v0 kept: {x0} {v0}");
            let e = q.end();
            assert!(e <= 0.5 + 1e-6);
            assert!(q.eval(e - 1e-4).abs() < 1e-4 && q.velocity(e - 1e-4).abs() < 1e-2, "{x0} {v0}");
            assert_eq!(q.eval(e), 0.0);
        }
        // Towards zero fast: t1 shortened so the offset does not cross zero.
        let q = Quintic::new(1.0, -40.0, 0.5);
        assert!((q.end() - 0.125).abs() < 1e-6);
        assert!((0..100).all(|i| q.eval(i as f32 * 0.00125) >= -1e-5));
    }

    #[test]
    fn rotation_vectors_round_trip() {
        for r in [Vec3::new(0.3, -1.2, 0.5), Vec3::new(1e-5, 0.0, 0.0), Vec3::new(0.0, 3.0, 0.0)] {
            let back = log_rotation(&exp_rotation(&r));
            assert!((back - r).norm() < 1e-5, "{r:?} {back:?}");
        }
    }
}
