//! The viewer's line overlays: skinned normals, the skinned bounds, and the selected
//! joint (its bone from the parent and its axes). They add lines to the frame and
//! allocate nothing (the frame's line lists keep their capacity).

use crate::Posed;
use anim_math::{Mat4, Vec3};
use anim_render_vk::FrameData;

/// Colour of the normals overlay.
pub const NORMALS_COLOR: [f32; 4] = [0.3, 0.8, 1.0, 1.0];
/// Colour of the bounds overlay.
pub const BOUNDS_COLOR: [f32; 4] = [1.0, 0.45, 0.2, 1.0];
/// Colour of the selected joint's bone (the skeleton overlay is yellow).
pub const SELECTED_COLOR: [f32; 4] = [1.0, 0.2, 0.9, 1.0];

/// Most normals drawn: larger meshes show every k-th vertex's.
pub const MAX_NORMALS: usize = 6000;

fn place(model: &Mat4, p: &Vec3) -> Vec3 {
    (model * p.push(1.0)).xyz()
}

/// The CPU-skinned normals of `posed` (after [`Posed::skin_cpu`]), `length` long, placed
/// by `model`; at most [`MAX_NORMALS`] of them, evenly spread over the vertices.
pub fn normals(frame: &mut FrameData, posed: &Posed, model: &Mat4, length: f32) {
    let total: usize = posed.positions.iter().map(Vec::len).sum();
    let stride = total.div_ceil(MAX_NORMALS).max(1);
    for (ps, ns) in posed.positions.iter().zip(&posed.normals) {
        for (p, n) in ps.iter().zip(ns).step_by(stride) {
            let a = place(model, p);
            let b = place(model, &(p + n * length));
            frame.line(a, b, NORMALS_COLOR);
        }
    }
}

/// The axis-aligned box `lo`–`hi` (model space), placed by `model`.
pub fn bounds(frame: &mut FrameData, lo: Vec3, hi: Vec3, model: &Mat4) {
    let corner = |i: usize| {
        place(
            model,
            &Vec3::new(
                if i & 1 == 0 { lo.x } else { hi.x },
                if i & 2 == 0 { lo.y } else { hi.y },
                if i & 4 == 0 { lo.z } else { hi.z },
            ),
        )
    };
    for i in 0..8 {
        for bit in [1, 2, 4] {
            if i & bit == 0 {
                frame.line(corner(i), corner(i | bit), BOUNDS_COLOR);
            }
        }
    }
}

/// Joint `joint` of `world` highlighted over everything: the bone from its parent in
/// [`SELECTED_COLOR`], and its x, y, z axes (red, green, blue) `axis` long.
pub fn joint(frame: &mut FrameData, world: &[Mat4], parent: Option<usize>, joint: usize, model: &Mat4, axis: f32) {
    let Some(m) = world.get(joint) else { return };
    let m = model * m;
    let origin = m.column(3).xyz();
    if let Some(p) = parent.and_then(|p| world.get(p)) {
        let from = (model * p).column(3).xyz();
        frame.overlay_line(from, origin, SELECTED_COLOR);
        // A second stroke, offset a little, so the bone reads thicker than the skeleton's.
        let side = (origin - from).cross(&Vec3::y()).try_normalize(1e-12).unwrap_or_else(Vec3::x) * axis * 0.04;
        frame.overlay_line(from + side, origin + side, SELECTED_COLOR);
    }
    for (k, color) in [[1.0, 0.2, 0.2, 1.0], [0.2, 1.0, 0.2, 1.0], [0.3, 0.4, 1.0, 1.0]].into_iter().enumerate() {
        let dir = m.column(k).xyz().try_normalize(1e-12).unwrap_or_else(Vec3::zeros);
        frame.overlay_line(origin, origin + dir * axis, color);
    }
}
