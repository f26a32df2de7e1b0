//! Shared helpers of the renderer tests: a validated context and synthetic skinned meshes.

#![allow(dead_code)]

use anim_core::skin::{Influences, Mesh};
use anim_math::{DualQuat, Mat4, Quat, Vec3, dual};
use anim_render_vk::{Context, ContextDesc};
use std::sync::Arc;

/// A context with validation and synchronization validation on.
pub fn context() -> Arc<Context> {
    Context::new(&ContextDesc::headless(true)).expect("Vulkan context (lavapipe) with validation")
}

/// Fails with the messages when the validation layer reported anything.
pub fn assert_clean(ctx: &Context) {
    assert!(ctx.validation_enabled());
    assert_eq!(ctx.validation_count(), 0, "validation messages:\n{}", ctx.validation_messages().join("\n"));
}

/// A cheap deterministic generator (xorshift) for test data.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }

    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.next()
    }
}

/// Random vertices with `per` influences over `joints` joints; every 7th vertex unweighted.
pub fn random_skin(n: usize, per: usize, joints: usize, seed: u64) -> (Vec<Vec3>, Vec<Vec3>, Influences) {
    let mut r = Rng(seed);
    let mut p = Vec::new();
    let mut nrm = Vec::new();
    let mut js = Vec::new();
    let mut ws = Vec::new();
    for v in 0..n {
        p.push(Vec3::new(r.range(-1.0, 1.0), r.range(0.0, 2.0), r.range(-1.0, 1.0)));
        nrm.push(Vec3::new(r.range(-1.0, 1.0), r.range(-1.0, 1.0), r.range(-1.0, 1.0)).normalize());
        for k in 0..per {
            js.push(((r.next() * joints as f32) as usize).min(joints - 1) as u16);
            ws.push(if v % 7 == 3 || (k > 0 && r.next() < 0.3) { 0.0 } else { r.range(0.05, 1.0) });
        }
    }
    (p, nrm, Influences::new(per, js, ws, joints).expect("valid random influences"))
}

/// A palette of random rigid transforms (with a uniform scale for LBS when `scaled`), and the
/// matching dual quaternions (rigid part).
pub fn random_palette(joints: usize, seed: u64, scaled: bool) -> (Vec<Mat4>, Vec<DualQuat>) {
    let mut r = Rng(seed);
    let mut m = Vec::new();
    let mut d = Vec::new();
    for _ in 0..joints {
        let q = Quat::from_euler_angles(r.range(-3.0, 3.0), r.range(-1.5, 1.5), r.range(-3.0, 3.0));
        let t = Vec3::new(r.range(-2.0, 2.0), r.range(-2.0, 2.0), r.range(-2.0, 2.0));
        let s = if scaled { r.range(0.5, 1.5) } else { 1.0 };
        let mat = Mat4::new_translation(&t) * q.to_homogeneous() * Mat4::new_scaling(s);
        m.push(mat);
        d.push(dual::from_rigid_matrix(&mat));
    }
    (m, d)
}

/// A unit quad in the xy plane (two triangles) centred at the origin.
pub fn quad(size: f32) -> Mesh {
    let h = size * 0.5;
    Mesh {
        positions: vec![Vec3::new(-h, -h, 0.0), Vec3::new(h, -h, 0.0), Vec3::new(h, h, 0.0), Vec3::new(-h, h, 0.0)],
        normals: vec![Vec3::z(); 4],
        uvs: Vec::new(),
        influences: None,
        indices: vec![0, 1, 2, 0, 2, 3],
    }
}
