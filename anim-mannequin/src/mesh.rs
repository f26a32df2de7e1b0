//! The skinned mesh: tubes swept along the bones, weighted to their joints, and its two
//! morph targets.

use crate::joints::*;
use anim_core::skin::{Influences, Mesh, MorphTargets};
use anim_math::Vec3;
use std::f32::consts::{PI, TAU};

/// Names of the mannequin's morph targets, in target order.
pub const MORPH_TARGETS: [&str; 2] = ["breathe", "brow_raise"];

/// A tube swept along a polyline of `points`; segment `k` (from `points[k]` to
/// `points[k + 1]`) belongs to `bones[k]`. `radius(a)` gives the (x, z-ish) radii at arc
/// length `a`; rings are blended between neighbouring bones within `blend` of each inner point.
pub(crate) struct Tube<'a> {
    points: &'a [Vec3],
    bones: &'a [usize],
    rings: usize,
    blend: f32,
    /// Radii along the two ring axes `u` and `v` at arc-length fraction `s` in `[0, 1]`.
    radius: &'a dyn Fn(f32) -> (f32, f32),
    /// Ring axis `u` (perpendicular to the tube); `v = axis × u`.
    up: Vec3,
}

pub(crate) fn smoothstep(e0: f32, e1: f32, x: f32) -> f32 {
    let t = ((x - e0) / (e1 - e0)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

pub(crate) fn add_tube(mesh: &mut Vec<(Vec3, Vec3, [u16; 2], [f32; 2])>, indices: &mut Vec<u32>, tube: &Tube) {
    let pts = tube.points;
    let seg_len: Vec<f32> = pts.windows(2).map(|w| (w[1] - w[0]).norm()).collect();
    let total: f32 = seg_len.iter().sum();
    let mut cum = vec![0.0f32];
    for l in &seg_len {
        cum.push(cum.last().copied().unwrap_or(0.0) + l);
    }
    let at = |a: f32| -> (Vec3, usize, f32) {
        let k = (0..seg_len.len()).rfind(|&k| cum[k] <= a).unwrap_or(0);
        let f = ((a - cum[k]) / seg_len[k]).clamp(0.0, 1.0);
        (pts[k] + (pts[k + 1] - pts[k]) * f, k, f)
    };
    let n = RING_SEGMENTS;
    let base = mesh.len() as u32;
    let mut grid: Vec<Vec3> = Vec::with_capacity(tube.rings * n);
    let mut weights = Vec::with_capacity(tube.rings);
    for r in 0..tube.rings {
        let s = r as f32 / (tube.rings - 1) as f32;
        let a = s * total;
        let (c, k, _) = at(a);
        let axis = (pts[k + 1] - pts[k]).normalize();
        let u = (tube.up - axis * tube.up.dot(&axis)).normalize();
        let w = axis.cross(&u);
        let (ru, rv) = (tube.radius)(s);
        for j in 0..n {
            let th = TAU * j as f32 / n as f32;
            grid.push(c + u * (ru * th.cos()) + w * (rv * th.sin()));
        }
        // Blend with the neighbouring bone near an inner point.
        let mut wt = ([tube.bones[k] as u16, 0u16], [1.0f32, 0.0f32]);
        if k > 0 && a - cum[k] < tube.blend && tube.bones[k - 1] != tube.bones[k] {
            let t = smoothstep(-tube.blend, tube.blend, a - cum[k]);
            wt = ([tube.bones[k] as u16, tube.bones[k - 1] as u16], [t, 1.0 - t]);
        } else if k + 1 < seg_len.len() && cum[k + 1] - a < tube.blend && tube.bones[k + 1] != tube.bones[k] {
            let t = smoothstep(-tube.blend, tube.blend, a - cum[k + 1]);
            wt = ([tube.bones[k] as u16, tube.bones[k + 1] as u16], [1.0 - t, t]);
        }
        weights.push(wt);
    }
    // Normals from the grid: (d/dθ) × (d/ds), outward.
    for r in 0..tube.rings {
        for j in 0..n {
            let p = |rr: usize, jj: usize| grid[rr * n + jj % n];
            let dth = p(r, j + 1) - p(r, j + n - 1);
            let ds = p((r + 1).min(tube.rings - 1), j) - p(r.saturating_sub(1), j);
            let mut nrm = dth.cross(&ds);
            if nrm.norm() < 1e-12 {
                nrm = p(r, j) - grid[r * n..r * n + n].iter().sum::<Vec3>() / n as f32;
            }
            mesh.push((p(r, j), nrm.normalize(), weights[r].0, weights[r].1));
        }
    }
    for r in 0..tube.rings - 1 {
        for j in 0..n {
            let a = base + (r * n + j) as u32;
            let b = base + (r * n + (j + 1) % n) as u32;
            let c = a + n as u32;
            let d = b + n as u32;
            indices.extend_from_slice(&[a, b, c, b, d, c]);
        }
    }
    // Caps: a centre vertex at each end, normal along the axis.
    for (r, sign) in [(0usize, -1.0f32), (tube.rings - 1, 1.0)] {
        let ring = &grid[r * n..r * n + n];
        let centre = ring.iter().sum::<Vec3>() / n as f32;
        let k = if r == 0 { 0 } else { pts.len() - 2 };
        let axis = (pts[k + 1] - pts[k]).normalize() * sign;
        let ci = mesh.len() as u32;
        mesh.push((centre, axis, weights[r].0, weights[r].1));
        let rb = base + (r * n) as u32;
        for j in 0..n {
            let a = rb + j as u32;
            let b = rb + ((j + 1) % n) as u32;
            if sign > 0.0 {
                indices.extend_from_slice(&[a, b, ci]);
            } else {
                indices.extend_from_slice(&[b, a, ci]);
            }
        }
    }
}

pub(crate) fn mesh() -> Mesh {
    let w = rest_world();
    let mut verts = Vec::new();
    let mut indices = Vec::new();
    // Torso, neck and head along +Y. Radii by height: hips, waist, chest, shoulders, neck, head.
    let bottom = 0.86f32;
    let top = HEIGHT;
    let torso_profile = |s: f32| -> (f32, f32) {
        let y = bottom + s * (top - bottom);
        let lerp = |pts: &[(f32, f32)]| -> f32 {
            let k = pts.iter().rposition(|p| p.0 <= y).unwrap_or(0).min(pts.len() - 2);
            let (y0, r0) = pts[k];
            let (y1, r1) = pts[k + 1];
            r0 + (r1 - r0) * smoothstep(y0, y1, y)
        };
        if y > 1.58 {
            // Head: an ellipsoid from 1.58 to the top, centre 1.70.
            let c = 1.695;
            let h = top - c;
            let d = ((y - c) / h).clamp(-1.0, 1.0);
            let r = 0.095 * (1.0 - d * d).max(0.0).sqrt().max(0.12);
            let neck = 0.05 * (1.0 - smoothstep(1.58, 1.62, y));
            return (r.max(neck), r.max(neck) * 1.1);
        }
        let rx = lerp(&[
            (0.86, 0.06),
            (0.92, 0.15),
            (1.0, 0.16),
            (1.12, 0.13),
            (1.3, 0.17),
            (1.42, 0.16),
            (1.5, 0.05),
            (1.58, 0.05),
        ]);
        let rz = lerp(&[
            (0.86, 0.05),
            (0.92, 0.11),
            (1.0, 0.12),
            (1.12, 0.10),
            (1.3, 0.12),
            (1.42, 0.11),
            (1.5, 0.05),
            (1.58, 0.05),
        ]);
        (rx, rz)
    };
    let torso_pts = [v(0.0, bottom, 0.0), w[SPINE_01], w[SPINE_02], w[SPINE_03], w[NECK], w[HEAD], v(0.0, top, 0.0)];
    add_tube(
        &mut verts,
        &mut indices,
        &Tube {
            points: &torso_pts,
            bones: &[PELVIS, SPINE_01, SPINE_02, SPINE_03, NECK, HEAD],
            rings: 64,
            blend: 0.04,
            radius: &torso_profile,
            up: Vec3::x(),
        },
    );
    // Arms along ±X: clavicle, upper arm, forearm, hand.
    for (clav, up, low, hand, sx) in
        [(CLAVICLE_L, UPPERARM_L, LOWERARM_L, HAND_L, 1.0f32), (CLAVICLE_R, UPPERARM_R, LOWERARM_R, HAND_R, -1.0)]
    {
        let pts = [w[clav], w[up], w[low], w[hand], w[hand] + v(sx * 0.17, 0.0, 0.0)];
        let arm = |s: f32| {
            let x = s * 0.87;
            let r = if x < 0.14 {
                0.055
            } else if x < 0.70 {
                0.055 - 0.02 * smoothstep(0.14, 0.70, x)
            } else {
                let t = (x - 0.70) / 0.17;
                0.035 + 0.01 * (PI * t).sin()
            };
            let taper = (1.0 - smoothstep(0.97, 1.0, s) * 0.6).max(0.3);
            (r * taper, if x >= 0.70 { r * 0.55 * taper } else { r * taper })
        };
        add_tube(
            &mut verts,
            &mut indices,
            &Tube { points: &pts, bones: &[clav, up, low, hand], rings: 40, blend: 0.04, radius: &arm, up: Vec3::y() },
        );
    }
    // Legs along −Y from inside the pelvis to just below the ankle; feet along +Z.
    for (thigh, calf, foot, ball) in [(THIGH_L, CALF_L, FOOT_L, BALL_L), (THIGH_R, CALF_R, FOOT_R, BALL_R)] {
        let pts = [w[thigh] + v(0.0, 0.07, 0.0), w[thigh], w[calf], w[foot] + v(0.0, -0.01, 0.0)];
        let leg = |s: f32| {
            let y = s * 0.95;
            let r =
                if y < 0.5 { 0.085 - 0.03 * smoothstep(0.0, 0.5, y) } else { 0.055 - 0.015 * smoothstep(0.5, 0.95, y) };
            (r, r)
        };
        add_tube(
            &mut verts,
            &mut indices,
            &Tube { points: &pts, bones: &[PELVIS, thigh, calf], rings: 44, blend: 0.05, radius: &leg, up: Vec3::x() },
        );
        let fx = w[foot].x;
        let hr = 0.045; // foot half height: the sole touches y = 0
        let fpts = [v(fx, hr, -0.06), v(fx, hr, w[ball].z), v(fx, hr, w[ball].z + 0.09)];
        let prof = |s: f32| {
            let e = (s * PI).sin().max(0.0).powf(0.35).max(0.25);
            (0.05 * e, hr * e)
        };
        add_tube(
            &mut verts,
            &mut indices,
            &Tube { points: &fpts, bones: &[foot, ball], rings: 20, blend: 0.03, radius: &prof, up: Vec3::x() },
        );
    }
    let positions = verts.iter().map(|v| v.0).collect();
    let normals = verts.iter().map(|v| v.1).collect();
    let mut joints = Vec::with_capacity(verts.len() * 4);
    let mut weights = Vec::with_capacity(verts.len() * 4);
    for (_, _, j, wt) in &verts {
        if wt[1] > 0.0 && j[0] != j[1] {
            joints.extend_from_slice(&[j[0], j[1], 0, 0]);
            weights.extend_from_slice(&[wt[0], wt[1], 0.0, 0.0]);
        } else {
            joints.extend_from_slice(&[j[0], 0, 0, 0]);
            weights.extend_from_slice(&[1.0, 0.0, 0.0, 0.0]);
        }
    }
    // Make the stored weights sum to one exactly in f32.
    for w4 in weights.chunks_exact_mut(4) {
        w4[0] = 1.0 - w4[1];
    }
    let influences = Influences::new(4, joints, weights, JOINT_NAMES.len())
        .expect("generated influences use the 22 joints with non-negative weights");
    let uvs = verts.iter().map(|v| [v.0.x * 0.5 + 0.5, 1.0 - v.0.y / HEIGHT]).collect();
    Mesh { positions, normals, uvs, influences: Some(influences), indices }
}

/// normals and influences.
pub(crate) fn morph_targets(mesh: &Mesh) -> MorphTargets {
    let n = mesh.vertex_count();
    let inf = mesh.influences.as_ref().expect("the mannequin mesh is skinned");
    let per = inf.per_vertex();
    let weight_of = |i: usize, joints: &[usize]| -> f32 {
        (0..per)
            .filter(|&k| joints.contains(&usize::from(inf.joints()[i * per + k])))
            .map(|k| inf.weights()[i * per + k])
            .sum()
    };
    let breathe: Vec<Vec3> = (0..n)
        .map(|i| {
            let w = weight_of(i, &[SPINE_02, SPINE_03]);
            let nrm = mesh.normals[i];
            v(nrm.x, 0.0, nrm.z) * (0.03 * w)
        })
        .collect();
    let head: Vec<bool> = (0..n).map(|i| weight_of(i, &[HEAD]) > 0.5).collect();
    let top = (0..n).filter(|&i| head[i]).map(|i| mesh.positions[i].y).fold(f32::NEG_INFINITY, f32::max);
    let brow: Vec<Vec3> = (0..n)
        .map(|i| {
            let p = mesh.positions[i];
            let front = mesh.normals[i].z;
            let band = (p.y - (top - 0.13)) / 0.1;
            if head[i] && front > 0.3 && (0.0..=1.0).contains(&band) {
                // A bump over the band, largest in its middle.
                v(0.0, 0.02 * (PI * band).sin() * front, 0.0)
            } else {
                Vec3::zeros()
            }
        })
        .collect();
    MorphTargets::new(n, 2)
        .with_positions(vec![breathe, brow])
        .and_then(|m| m.with_names(MORPH_TARGETS.iter().map(|s| (*s).to_owned()).collect()))
        .expect("one delta a vertex and one name a target")
}
