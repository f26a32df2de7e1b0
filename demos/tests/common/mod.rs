//! What the demo tests compare a rendered image with: the pixels the CPU predicts a frame
//! covers, from the same data the frame was built from, rasterized at pixel centres as
//! Vulkan rasterizes without multisampling (the renderer uses one sample and no culling);
//! and the rule a GPU image must meet against that prediction.
#![allow(dead_code)]

use anim_core::skin::skinning;

use anim_core::skin::skinning::{NormalMode, SkinningInput, SkinningOutput};
use anim_core::skin::{Mesh, Palette, SkinMethod};
use anim_crowd::atlas::AnimAtlas;
use anim_crowd::crowd::Crowd;
use anim_math::{Mat4, Vec3};
use anim_render_vk::{Camera, Context, Deform, FrameData, Instance, Offscreen, Renderer, RgbaImage};
use demos::stage::Stage;
use std::sync::Arc;

/// One bit a pixel, row-major.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mask {
    pub width: u32,
    pub height: u32,
    bits: Vec<bool>,
}

impl Mask {
    pub fn new(width: u32, height: u32) -> Self {
        Self { width, height, bits: vec![false; (width * height) as usize] }
    }

    /// The pixel at `(x, y)`; outside the image, false.
    pub fn get(&self, x: i64, y: i64) -> bool {
        (0..i64::from(self.width)).contains(&x)
            && (0..i64::from(self.height)).contains(&y)
            && self.bits[(y * i64::from(self.width) + x) as usize]
    }

    pub fn set(&mut self, x: u32, y: u32) {
        self.bits[(y * self.width + x) as usize] = true;
    }

    /// Pixels set.
    pub fn count(&self) -> usize {
        self.bits.iter().filter(|b| **b).count()
    }

    /// `[x0, y0, x1, y1]` of the set pixels (inclusive), `None` when none is set.
    pub fn bounds(&self) -> Option<[u32; 4]> {
        let mut b: Option<[u32; 4]> = None;
        for y in 0..self.height {
            for x in 0..self.width {
                if self.get(i64::from(x), i64::from(y)) {
                    b = Some(b.map_or([x, y, x, y], |[a, c, d, e]| [a.min(x), c.min(y), d.max(x), e.max(y)]));
                }
            }
        }
        b
    }

    /// Whether the 3×3 neighbourhood of `(x, y)` holds both set and unset pixels: the pixel
    /// lies on the edge of the set region.
    pub fn on_edge(&self, x: i64, y: i64) -> bool {
        let n = (-1..=1).flat_map(|dy| (-1..=1).map(move |dx| (dx, dy)));
        let set = n.clone().filter(|&(dx, dy)| self.get(x + dx, y + dy)).count();
        set > 0 && set < 9
    }

    /// Pixels on the edge of the set region.
    pub fn edge_count(&self) -> usize {
        let (w, h) = (i64::from(self.width), i64::from(self.height));
        (0..h).flat_map(|y| (0..w).map(move |x| (x, y))).filter(|&(x, y)| self.on_edge(x, y)).count()
    }
}

/// Pixels where `a` and `b` differ by more than 1 in a channel.
pub fn differing(a: &RgbaImage, b: &RgbaImage) -> Mask {
    let mut m = Mask::new(a.width, a.height);
    for y in 0..a.height {
        for x in 0..a.width {
            if a.pixel(x, y).iter().zip(&b.pixel(x, y)).any(|(p, q)| p.abs_diff(*q) > 1) {
                m.set(x, y);
            }
        }
    }
    m
}

/// `frame` drawn into a new `width × height` target.
pub fn render(ctx: &Arc<Context>, renderer: &mut Renderer, frame: &FrameData, width: u32, height: u32) -> RgbaImage {
    let mut target = Offscreen::new(ctx, width, height).expect("an offscreen target");
    target.render(renderer, frame).expect("the frame renders");
    target.image().expect("the image reads back")
}

/// The pixels the instances `keep` selects cover, and nothing else: `frame` drawn with
/// those instances alone (no lines, no crowds) compared with the same frame drawn empty.
pub fn drawn_instances(
    ctx: &Arc<Context>,
    renderer: &mut Renderer,
    frame: &FrameData,
    width: u32,
    height: u32,
    keep: impl Fn(&Instance) -> bool,
) -> Mask {
    let mut only = frame.clone();
    only.lines.clear();
    only.overlay_lines.clear();
    only.crowds.clear();
    only.instances.retain(|i| keep(i));
    let mut empty = only.clone();
    empty.instances.clear();
    differing(&render(ctx, renderer, &only, width, height), &render(ctx, renderer, &empty, width, height))
}

/// The pixels `frame`'s overlay lines cover, alone (no instances, no other lines).
pub fn drawn_overlay_lines(
    ctx: &Arc<Context>,
    renderer: &mut Renderer,
    frame: &FrameData,
    width: u32,
    height: u32,
) -> Mask {
    let mut only = frame.clone();
    only.instances.clear();
    only.lines.clear();
    only.crowds.clear();
    let mut empty = only.clone();
    empty.overlay_lines.clear();
    differing(&render(ctx, renderer, &only, width, height), &render(ctx, renderer, &empty, width, height))
}

/// A world point in pixel coordinates (x right, y down) of a `width × height` target, as
/// [`Camera::project`] (in f64 after the f32 matrix product the shaders do too), and its
/// clip-space `w`. The point must lie in the camera's depth range.
fn to_pixels(vp: &Mat4, p: &Vec3, width: u32, height: u32) -> [f64; 3] {
    let c = vp * p.push(1.0);
    assert!(c.w > 1e-6 && c.z >= 0.0 && c.z <= c.w, "a point outside the camera's depth range: {p}");
    let (x, y, w) = (f64::from(c.x), f64::from(c.y), f64::from(c.w));
    [(x / w * 0.5 + 0.5) * f64::from(width), (y / w * 0.5 + 0.5) * f64::from(height), w]
}

/// `polygon` (clip space) clipped to `plane · v ≥ 0`.
fn clip(polygon: &[[f64; 4]], plane: [f64; 4]) -> Vec<[f64; 4]> {
    let d = |v: &[f64; 4]| (0..4).map(|i| plane[i] * v[i]).sum::<f64>();
    let mut out = Vec::with_capacity(polygon.len() + 1);
    for (i, a) in polygon.iter().enumerate() {
        let b = &polygon[(i + 1) % polygon.len()];
        let (da, db) = (d(a), d(b));
        if da >= 0.0 {
            out.push(*a);
        }
        if (da >= 0.0) != (db >= 0.0) {
            let t = da / (da - db);
            out.push(std::array::from_fn(|k| a[k] + (b[k] - a[k]) * t));
        }
    }
    out
}

/// What the CPU predicts a frame covers: the pixels, and for each pixel how far (in
/// pixels) its centre lies from the nearest edge of a triangle.
pub struct Prediction {
    pub covered: Mask,
    near: Vec<f32>,
}

impl Prediction {
    /// Distance from the centre of pixel `(x, y)` to the nearest triangle edge.
    pub fn edge_distance(&self, x: u32, y: u32) -> f32 {
        self.near[(y * self.covered.width + x) as usize]
    }
}

/// Distance from `p` to the segment `a`–`b`.
fn segment_distance(p: [f64; 2], a: [f64; 2], b: [f64; 2]) -> f64 {
    let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
    let len2 = dx * dx + dy * dy;
    let t = if len2 > 0.0 { (((p[0] - a[0]) * dx + (p[1] - a[1]) * dy) / len2).clamp(0.0, 1.0) } else { 0.0 };
    (p[0] - a[0] - t * dx).hypot(p[1] - a[1] - t * dy)
}

/// The pixels whose centres lie inside any of `triangles` (world space) seen by `camera` in
/// a `width × height` target: Vulkan's coverage with one sample (every triangle counts,
/// front or back, as the renderer culls none), clipped to the near and far planes as the
/// GPU clips, less its tie-breaking on exact edges; with every pixel centre's distance to
/// the nearest triangle edge.
pub fn silhouette(camera: &Camera, width: u32, height: u32, triangles: &[[Vec3; 3]]) -> Prediction {
    let vp = camera.view_proj(width as f32 / height as f32);
    let mut m = Mask::new(width, height);
    let mut near = vec![f32::INFINITY; (width * height) as usize];
    let edge = |a: [f64; 2], b: [f64; 2], p: [f64; 2]| (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0]);
    let (fw, fh) = (f64::from(width), f64::from(height));
    for t in triangles {
        let c = t.map(|p| {
            let c = vp * p.push(1.0);
            [f64::from(c.x), f64::from(c.y), f64::from(c.z), f64::from(c.w)]
        });
        // Vulkan's depth range: 0 ≤ z ≤ w.
        let polygon = clip(&clip(&c, [0.0, 0.0, 1.0, 0.0]), [0.0, 0.0, -1.0, 1.0]);
        if polygon.len() < 3 {
            continue;
        }
        let s: Vec<[f64; 2]> =
            polygon.iter().map(|c| [(c[0] / c[3] * 0.5 + 0.5) * fw, (c[1] / c[3] * 0.5 + 0.5) * fh]).collect();
        for k in 1..s.len() - 1 {
            let (a, b, c) = (s[0], s[k], s[k + 1]);
            let area = edge(a, b, c);
            if area == 0.0 {
                continue;
            }
            let lo = |i: usize| (a[i].min(b[i]).min(c[i]).floor() - 1.0).clamp(0.0, 1e9) as u32;
            let hi = |i: usize, n: u32| ((a[i].max(b[i]).max(c[i]).ceil() + 1.0).clamp(0.0, 1e9) as u32).min(n);
            for y in lo(1)..hi(1, height) {
                for x in lo(0)..hi(0, width) {
                    let p = [f64::from(x) + 0.5, f64::from(y) + 0.5];
                    let e = [edge(b, c, p), edge(c, a, p), edge(a, b, p)];
                    if e.iter().all(|e| e * area.signum() >= 0.0) {
                        m.set(x, y);
                    }
                    let d = segment_distance(p, a, b).min(segment_distance(p, b, c)).min(segment_distance(p, c, a));
                    let n = &mut near[(y * width + x) as usize];
                    *n = n.min(d as f32);
                }
            }
        }
    }
    Prediction { covered: m, near }
}

/// How far from a triangle edge a pixel centre may lie and still be rasterized otherwise
/// than the CPU predicts: lavapipe snaps vertices to a grid of 1/256 px (8 sub-pixel bits),
/// which moves an edge by at most √2/512 ≈ 1/360 px, and CPU and GPU skinning differ by
/// float rounding, far less; 1/32 px leaves a margin of ten.
pub const EDGE_ROUNDING: f32 = 1.0 / 32.0;

/// Checks the pixels the GPU drew against the CPU's prediction. Rasterization can only
/// flip a pixel whose centre lies within rounding of a triangle edge, so every differing
/// pixel lies within [`EDGE_ROUNDING`] of one, and at most 2% of the predicted
/// silhouette's edge pixels (plus 2) differ. A character missing, moved by a tenth of a
/// pixel or more, or with vertices thrown off fails.
pub fn assert_matches(what: &str, drawn: &Mask, predicted: &Prediction) {
    let p = &predicted.covered;
    assert!(p.count() > 0, "{what}: nothing predicted");
    let mut differ = 0;
    for y in 0..drawn.height {
        for x in 0..drawn.width {
            let (dx, dy) = (i64::from(x), i64::from(y));
            if drawn.get(dx, dy) != p.get(dx, dy) {
                differ += 1;
                let d = predicted.edge_distance(x, y);
                assert!(
                    d <= EDGE_ROUNDING,
                    "{what}: pixel ({x}, {y}) {}, its centre {d:.3} px from every triangle edge (drawn {} pixels, \
                     predicted {}, bounds {:?} vs {:?})",
                    if drawn.get(dx, dy) { "drawn but not predicted" } else { "predicted but not drawn" },
                    drawn.count(),
                    p.count(),
                    drawn.bounds(),
                    p.bounds()
                );
            }
        }
    }
    let edge = p.edge_count();
    assert!(differ <= edge / 50 + 2, "{what}: {differ} pixels differ on a {edge}-pixel edge");
    eprintln!("{what}: {} pixels drawn, {differ} differ from the prediction ({edge} edge pixels)", drawn.count());
}

/// The triangles of `mesh` with its vertices at `positions` moved by `model`.
pub fn triangles(mesh: &Mesh, positions: &[Vec3], model: &Mat4) -> Vec<[Vec3; 3]> {
    let p: Vec<Vec3> = positions.iter().map(|p| (model * p.push(1.0)).xyz()).collect();
    mesh.indices.chunks_exact(3).map(|t| [p[t[0] as usize], p[t[1] as usize], p[t[2] as usize]]).collect()
}

/// The vertices an instance uploaded for CPU skinning (its model matrix not applied).
fn cpu_vertices(frame: &FrameData, offset: u32, count: usize) -> Vec<Vec3> {
    frame.cpu_vertices[offset as usize..offset as usize + count]
        .iter()
        .map(|v| Vec3::new(v.position[0], v.position[1], v.position[2]))
        .collect()
}

/// The triangles of `frame`'s instances whose bind-pose mesh `mesh_of` gives: static ones
/// placed by their model matrix, CPU-skinned ones from the vertices they uploaded, LBS
/// GPU-skinned ones skinned on the CPU by `anim_core` with the frame's palette matrices
/// (no morph targets here).
pub fn frame_triangles<'a>(frame: &FrameData, mesh_of: impl Fn(&Instance) -> Option<&'a Mesh>) -> Vec<[Vec3; 3]> {
    let mut out = Vec::new();
    for inst in &frame.instances {
        let Some(mesh) = mesh_of(inst) else { continue };
        let positions = match inst.deform {
            Deform::Static => mesh.positions.clone(),
            Deform::Cpu { vertex_offset } => cpu_vertices(frame, vertex_offset, mesh.positions.len()),
            Deform::Gpu { method: SkinMethod::Lbs, palette_offset, morph: None, .. } => {
                let inf = mesh.influences.as_ref().expect("a skinned mesh");
                let palette = &frame.matrices[palette_offset as usize..];
                let mut p = vec![Vec3::zeros(); mesh.positions.len()];
                let input = SkinningInput { influences: inf, positions: &mesh.positions, normals: None };
                let mut output = SkinningOutput { positions: &mut p, normals: None };
                skinning::linear_blend(&input, &palette[..inf.joint_bound()], NormalMode::Direct, &mut output)
                    .expect("the frame's palette fits");
                p
            }
            other => panic!("no CPU reference for {other:?}"),
        };
        out.extend(triangles(mesh, &positions, &inst.model));
    }
    out
}

/// Whether `inst` draws a part of `stage`'s character.
pub fn of_stage(stage: &Stage, inst: &Instance) -> bool {
    stage.meshes.contains(&inst.mesh)
}

/// The triangles of the instances of `frame` that draw `stage`'s character, as the CPU
/// computes them: GPU-skinned instances morphed and skinned by `anim_core`
/// (`Posed::skin_cpu`) with the stage's palettes for the instance's method, CPU-skinned
/// ones from the vertices they uploaded, rigid parts placed by their model matrix.
pub fn stage_triangles(stage: &mut Stage, frame: &FrameData) -> Vec<[Vec3; 3]> {
    let mut out = Vec::new();
    for inst in &frame.instances {
        let Some(part) = stage.meshes.iter().position(|m| *m == inst.mesh) else { continue };
        let mesh = &stage.character.parts[part].mesh;
        let positions = match inst.deform {
            Deform::Static => mesh.positions.clone(),
            Deform::Cpu { vertex_offset } => cpu_vertices(frame, vertex_offset, mesh.positions.len()),
            Deform::Gpu { method, .. } => {
                stage.posed.skin_cpu(&stage.character, method).expect("CPU skinning");
                stage.posed.positions[part].clone()
            }
        };
        out.extend(triangles(&stage.character.parts[part].mesh, &positions, &inst.model));
    }
    out
}

/// Checks that the character of `stage` is drawn in `frame` where the CPU puts it.
pub fn assert_stage_drawn(
    what: &str,
    ctx: &Arc<Context>,
    renderer: &mut Renderer,
    frame: &FrameData,
    stage: &mut Stage,
    size: (u32, u32),
) {
    let drawn = drawn_instances(ctx, renderer, frame, size.0, size.1, |i| of_stage(stage, i));
    let predicted = silhouette(&frame.camera, size.0, size.1, &stage_triangles(stage, frame));
    assert_matches(what, &drawn, &predicted);
}

/// Checks the pixels the GPU drew for `frame`'s overlay lines against their segments:
/// every drawn pixel's centre lies within one pixel of a projected segment, and along
/// every segment, in each pixel column it crosses (each row, for a steep one) away from its
/// ends, the pixel nearest to it or one beside it is drawn: Vulkan's line rasterization
/// lights, in every column a one-pixel line crosses, a pixel within half a pixel of it.
/// Returns the number of segments.
pub fn assert_lines_match(what: &str, drawn: &Mask, camera: &Camera, frame: &FrameData) -> usize {
    let (w, h) = (drawn.width, drawn.height);
    let vp = camera.view_proj(w as f32 / h as f32);
    let segments: Vec<[[f64; 3]; 2]> = frame
        .overlay_lines
        .chunks_exact(2)
        .map(|l| [l[0], l[1]].map(|v| to_pixels(&vp, &Vec3::new(v.position[0], v.position[1], v.position[2]), w, h)))
        .collect();
    let dist = |p: [f64; 2], [a, b]: &[[f64; 3]; 2]| segment_distance(p, [a[0], a[1]], [b[0], b[1]]);
    for y in 0..h {
        for x in 0..w {
            if drawn.get(i64::from(x), i64::from(y)) {
                let p = [f64::from(x) + 0.5, f64::from(y) + 0.5];
                let near = segments.iter().map(|s| dist(p, s)).fold(f64::INFINITY, f64::min);
                assert!(near <= 1.0, "{what}: line pixel ({x}, {y}) is {near:.2} px from every segment");
            }
        }
    }
    for [a, b] in &segments {
        // Major axis 0 (x) or 1 (y).
        let major = usize::from((b[1] - a[1]).abs() > (b[0] - a[0]).abs());
        let minor = 1 - major;
        let (lo, hi) = (a[major].min(b[major]), a[major].max(b[major]));
        let mut c = (lo + 1.0).ceil();
        while c + 0.5 < hi - 1.0 {
            let t = (c + 0.5 - a[major]) / (b[major] - a[major]);
            let m = (a[minor] + t * (b[minor] - a[minor])).floor() as i64;
            let lit = (m - 1..=m + 1).any(|m| if major == 0 { drawn.get(c as i64, m) } else { drawn.get(m, c as i64) });
            assert!(lit, "{what}: segment {a:?} → {b:?} has no pixel near it at {c}");
            c += 1.0;
        }
    }
    eprintln!("{what}: {} line pixels, {} segments", drawn.count(), segments.len());
    segments.len()
}

/// The pixels `frame`'s crowds cover, alone (no instances, no lines).
pub fn drawn_crowds(ctx: &Arc<Context>, renderer: &mut Renderer, frame: &FrameData, width: u32, height: u32) -> Mask {
    let mut only = frame.clone();
    only.instances.clear();
    only.lines.clear();
    only.overlay_lines.clear();
    let mut empty = only.clone();
    empty.crowds.clear();
    differing(&render(ctx, renderer, &only, width, height), &render(ctx, renderer, &empty, width, height))
}

/// The triangles of `crowd`'s characters as the CPU computes them: each character's
/// palette read from `atlas` at its clip's frame pair for its time, blended with its clip B
/// by its weight ([`AnimAtlas::palette`]: what the shaders compute), `mesh` skinned with it
/// by `anim_core`, then scaled, turned and moved by the character's transform.
pub fn crowd_triangles(crowd: &Crowd, atlas: &AnimAtlas, mesh: &Mesh, method: SkinMethod) -> Vec<[Vec3; 3]> {
    let inf = mesh.influences.as_ref().expect("a skinned mesh");
    let mut palette = Palette::new(method);
    let mut p = vec![Vec3::zeros(); mesh.positions.len()];
    let mut out = Vec::new();
    for i in 0..crowd.len() {
        let pair = |clip: u32, time: f32| atlas.clips()[clip as usize].frame_pair(time);
        let a = pair(crowd.clip(i).unwrap(), crowd.time(i).unwrap());
        let b = crowd.blend(i).map(|(clip, time, weight)| (pair(clip, time), weight));
        atlas.palette(a, b, method, &mut palette).expect("the atlas reads");
        let input = SkinningInput { influences: inf, positions: &mesh.positions, normals: None };
        skinning::skin(&input, &palette, NormalMode::Direct, &mut SkinningOutput { positions: &mut p, normals: None })
            .expect("the palette fits the mesh");
        let (position, rotation, scale) = crowd.transform(i).unwrap();
        let model = Mat4::new_translation(&position) * rotation.to_homogeneous() * Mat4::new_scaling(scale);
        out.extend(triangles(mesh, &p, &model));
    }
    out
}
