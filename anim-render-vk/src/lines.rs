//! Debug lines: a ground grid, skeletons (a line from each joint to its parent) and joint
//! axes, appended to a [`FrameData`].

use crate::frame::FrameData;
use anim_math::{Mat4, Vec3};

fn point(m: &Mat4, p: Vec3) -> Vec3 {
    (m * p.push(1.0)).xyz()
}

/// A grid on the plane y = `height`, `half_cells` cells of `cell` size each side of the
/// origin, with the x and z axes in red and blue.
pub fn grid(frame: &mut FrameData, half_cells: i32, cell: f32, height: f32) {
    let e = half_cells as f32 * cell;
    let minor = [0.35, 0.36, 0.40, 1.0];
    for i in -half_cells..=half_cells {
        let t = i as f32 * cell;
        let (cx, cz) = if i == 0 { ([0.35, 0.35, 0.85, 1.0], [0.85, 0.3, 0.3, 1.0]) } else { (minor, minor) };
        frame.line(Vec3::new(t, height, -e), Vec3::new(t, height, e), cx);
        frame.line(Vec3::new(-e, height, t), Vec3::new(e, height, t), cz);
    }
}

/// A skeleton as lines from each joint to its parent, from model-space joint matrices
/// placed by `model`. Drawn over everything when `overlay` is set.
pub fn skeleton(
    frame: &mut FrameData,
    joint_models: &[Mat4],
    parents: &[Option<usize>],
    model: &Mat4,
    color: [f32; 4],
    overlay: bool,
) {
    for (j, parent) in parents.iter().enumerate() {
        let (Some(p), Some(mj)) = (parent, joint_models.get(j)) else { continue };
        let Some(mp) = joint_models.get(*p) else { continue };
        let a = point(&(model * mp), Vec3::zeros());
        let b = point(&(model * mj), Vec3::zeros());
        if overlay {
            frame.overlay_line(a, b, color);
        } else {
            frame.line(a, b, color);
        }
    }
}

/// Joint axes (x red, y green, z blue) of `length` at every joint, over everything.
pub fn joint_axes(frame: &mut FrameData, joint_models: &[Mat4], model: &Mat4, length: f32) {
    let colors = [[1.0, 0.2, 0.2, 1.0], [0.2, 1.0, 0.2, 1.0], [0.3, 0.4, 1.0, 1.0]];
    for m in joint_models {
        let m = model * m;
        let o = point(&m, Vec3::zeros());
        for (axis, c) in colors.iter().enumerate() {
            let mut d = Vec3::zeros();
            d[axis] = 1.0;
            let dir = (m * d.push(0.0)).xyz();
            let n = dir.norm();
            let tip = if n > 1e-12 { o + dir * (length / n) } else { o };
            frame.overlay_line(o, tip, *c);
        }
    }
}
