//! Ground queries for foot grounding: a ray-cast trait, a height field and a triangle mesh.

use crate::error::IkError;
use anim_core::LengthMismatch;
use anim_math::Vec3;

/// Where a ray hit the ground.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RayHit {
    /// The hit point.
    pub point: Vec3,
    /// Unit surface normal at the hit, facing the side the ray came from.
    pub normal: Vec3,
    /// Distance along the ray (the direction is unit length).
    pub distance: f32,
}

/// Something feet can stand on.
pub trait GroundQuery {
    /// The first hit of the ray `origin + t·direction`, `0 ≤ t ≤ max_distance`.
    /// `direction` is unit length. Implementations return `None` for a non-finite ray.
    fn raycast(&self, origin: &Vec3, direction: &Vec3, max_distance: f32) -> Option<RayHit>;
}

/// Möller–Trumbore ray/triangle intersection: the ray parameter `t` of the hit in
/// `[0, max_t]`, or `None`. Both faces count.
#[inline]
pub fn ray_triangle(origin: &Vec3, dir: &Vec3, v0: &Vec3, v1: &Vec3, v2: &Vec3, max_t: f32) -> Option<f32> {
    let e1 = v1 - v0;
    let e2 = v2 - v0;
    let p = dir.cross(&e2);
    let det = e1.dot(&p);
    if det.abs() < 1e-12 {
        return None;
    }
    let inv = 1.0 / det;
    let s = origin - v0;
    let u = s.dot(&p) * inv;
    if !(-1e-6..=1.0 + 1e-6).contains(&u) {
        return None;
    }
    let q = s.cross(&e1);
    let v = dir.dot(&q) * inv;
    if v < -1e-6 || u + v > 1.0 + 1e-6 {
        return None;
    }
    let t = e2.dot(&q) * inv;
    (t >= 0.0 && t <= max_t).then_some(t)
}

fn facing(normal: Vec3, dir: &Vec3) -> Vec3 {
    if normal.dot(dir) > 0.0 { -normal } else { normal }
}

fn ray_ok(origin: &Vec3, dir: &Vec3, max: f32) -> bool {
    origin.iter().chain(dir.iter()).all(|v| v.is_finite()) && max.is_finite() && max >= 0.0
}

/// A regular grid of heights over the xz plane (y up). Sample `(i, k)` sits at
/// `(origin.x + i·cell, height, origin.z + k·cell)`; each cell is split into two
/// triangles along its `(i, k)`–`(i+1, k+1)` diagonal, so the surface is piecewise planar
/// and a height field of a plane is that plane exactly. Outside the grid there is no ground.
#[derive(Clone, Debug, PartialEq)]
pub struct HeightField {
    origin_x: f32,
    origin_z: f32,
    cell: f32,
    nx: usize,
    nz: usize,
    heights: Vec<f32>,
}

impl HeightField {
    /// A height field of `nx × nz` samples (`heights[k·nx + i]`), `cell` apart, with
    /// sample `(0, 0)` at `(origin_x, origin_z)`.
    ///
    /// # Errors
    /// Fewer than 2×2 samples, a height count that is not `nx·nz`, a cell size that is not
    /// positive and finite, or a non-finite height or origin.
    pub fn new(
        origin_x: f32,
        origin_z: f32,
        cell: f32,
        nx: usize,
        nz: usize,
        heights: Vec<f32>,
    ) -> Result<Self, IkError> {
        if nx < 2 || nz < 2 {
            return Err(IkError::InvalidSetting {
                what: "height field samples per side (need 2)",
                value: nx.min(nz) as f32,
            });
        }
        let expected = nx.saturating_mul(nz);
        LengthMismatch::check("height field heights", heights.len(), expected)?;
        if !(cell.is_finite() && cell > 0.0) {
            return Err(IkError::InvalidSetting { what: "height field cell size", value: cell });
        }
        if !(origin_x.is_finite() && origin_z.is_finite() && heights.iter().all(|h| h.is_finite())) {
            return Err(IkError::NonFinite { what: "height field" });
        }
        Ok(Self { origin_x, origin_z, cell, nx, nz, heights })
    }

    /// A height field sampling `f(x, z)` on the grid.
    ///
    /// # Errors
    /// As [`HeightField::new`].
    pub fn from_fn(
        origin_x: f32,
        origin_z: f32,
        cell: f32,
        nx: usize,
        nz: usize,
        f: impl Fn(f32, f32) -> f32,
    ) -> Result<Self, IkError> {
        // Too many samples to hold is the same error `new` gives for a wrong length.
        let count = nx.checked_mul(nz).filter(|&n| n <= (1 << 28)).ok_or(LengthMismatch::new(
            "height field heights",
            0,
            nx.saturating_mul(nz),
        ))?;
        let mut h = Vec::with_capacity(count);
        for k in 0..nz {
            for i in 0..nx {
                h.push(f(origin_x + i as f32 * cell, origin_z + k as f32 * cell));
            }
        }
        Self::new(origin_x, origin_z, cell, nx, nz, h)
    }

    fn vertex(&self, i: usize, k: usize) -> Vec3 {
        Vec3::new(
            self.origin_x + i as f32 * self.cell,
            self.heights[k * self.nx + i],
            self.origin_z + k as f32 * self.cell,
        )
    }

    /// Height of the surface at `(x, z)`, or `None` outside the grid.
    pub fn height(&self, x: f32, z: f32) -> Option<f32> {
        let o = Vec3::new(x, self.max_height() + 1.0, z);
        let span = self.max_height() - self.min_height() + 2.0;
        self.raycast(&o, &-Vec3::y(), span).map(|h| h.point.y)
    }

    fn max_height(&self) -> f32 {
        self.heights.iter().copied().fold(f32::NEG_INFINITY, f32::max)
    }

    fn min_height(&self) -> f32 {
        self.heights.iter().copied().fold(f32::INFINITY, f32::min)
    }

    /// The first hit among the two triangles of cell `(i, k)`.
    fn cell_hit(&self, i: usize, k: usize, o: &Vec3, d: &Vec3, max: f32) -> Option<RayHit> {
        let (v00, v10, v01, v11) =
            (self.vertex(i, k), self.vertex(i + 1, k), self.vertex(i, k + 1), self.vertex(i + 1, k + 1));
        let mut best: Option<RayHit> = None;
        for (a, b, c) in [(v00, v11, v10), (v00, v01, v11)] {
            if let Some(t) = ray_triangle(o, d, &a, &b, &c, max)
                && best.is_none_or(|h| t < h.distance)
            {
                let mut n = (b - a).cross(&(c - a)).normalize();
                if n.y < 0.0 {
                    n = -n;
                }
                best = Some(RayHit { point: o + d * t, normal: facing(n, d), distance: t });
            }
        }
        best
    }
}

impl GroundQuery for HeightField {
    fn raycast(&self, origin: &Vec3, direction: &Vec3, max_distance: f32) -> Option<RayHit> {
        if !ray_ok(origin, direction, max_distance) {
            return None;
        }
        let (x0, z0) = (self.origin_x, self.origin_z);
        let (x1, z1) = (x0 + self.cell * (self.nx - 1) as f32, z0 + self.cell * (self.nz - 1) as f32);
        // Clip the ray to the grid's xz rectangle (slab test).
        let (mut t0, mut t1) = (0.0f32, max_distance);
        for (o, d, lo, hi) in [(origin.x, direction.x, x0, x1), (origin.z, direction.z, z0, z1)] {
            if d.abs() < 1e-12 {
                if o < lo || o > hi {
                    return None;
                }
            } else {
                let (a, b) = ((lo - o) / d, (hi - o) / d);
                t0 = t0.max(a.min(b));
                t1 = t1.min(a.max(b));
            }
        }
        if t0 > t1 {
            return None;
        }
        // Walk the cells the ray's xz shadow crosses, nearest first (Amanatides–Woo).
        let start = origin + direction * t0;
        let last_i = self.nx - 2;
        let last_k = self.nz - 2;
        let cell_of = |v: f32, lo: f32, last: usize| (((v - lo) / self.cell).floor().max(0.0) as usize).min(last);
        let (mut i, mut k) = (cell_of(start.x, x0, last_i), cell_of(start.z, z0, last_k));
        let setup = |d: f32, idx: usize, lo: f32| -> (i64, f32, f32) {
            if d.abs() < 1e-12 {
                (0, f32::INFINITY, f32::INFINITY)
            } else {
                let step = if d > 0.0 { 1 } else { -1 };
                let boundary = lo + self.cell * (idx as f32 + if d > 0.0 { 1.0 } else { 0.0 });
                (step, self.cell / d.abs(), boundary)
            }
        };
        let (sx, dtx, bx) = setup(direction.x, i, x0);
        let (sz, dtz, bz) = setup(direction.z, k, z0);
        let mut tmx = if sx == 0 { f32::INFINITY } else { (bx - origin.x) / direction.x };
        let mut tmz = if sz == 0 { f32::INFINITY } else { (bz - origin.z) / direction.z };
        loop {
            if let Some(h) = self.cell_hit(i, k, origin, direction, max_distance) {
                return Some(h);
            }
            let next_t = tmx.min(tmz);
            if next_t > t1 {
                return None;
            }
            if tmx < tmz {
                let ni = i as i64 + sx;
                if ni < 0 || ni as usize > last_i {
                    return None;
                }
                i = ni as usize;
                tmx += dtx;
            } else {
                let nk = k as i64 + sz;
                if nk < 0 || nk as usize > last_k {
                    return None;
                }
                k = nk as usize;
                tmz += dtz;
            }
        }
    }
}

/// A triangle soup, ray-cast by testing every triangle (after a bounding-box check).
/// Suited to the few thousand triangles of a demo's ground.
#[derive(Clone, Debug, PartialEq)]
pub struct TriangleMesh {
    positions: Vec<Vec3>,
    triangles: Vec<[u32; 3]>,
    min: Vec3,
    max: Vec3,
}

impl TriangleMesh {
    /// A mesh from vertex positions and index triples.
    ///
    /// # Errors
    /// An index out of range or a non-finite position.
    pub fn new(positions: Vec<Vec3>, triangles: Vec<[u32; 3]>) -> Result<Self, IkError> {
        if !positions.iter().all(|p| p.iter().all(|v| v.is_finite())) {
            return Err(IkError::NonFinite { what: "mesh position" });
        }
        for (triangle, t) in triangles.iter().enumerate() {
            for &i in t {
                if i as usize >= positions.len() {
                    return Err(IkError::VertexOutOfRange { triangle, vertex: i as usize, count: positions.len() });
                }
            }
        }
        let mut min = Vec3::repeat(f32::INFINITY);
        let mut max = Vec3::repeat(f32::NEG_INFINITY);
        for p in &positions {
            min = min.inf(p);
            max = max.sup(p);
        }
        Ok(Self { positions, triangles, min, max })
    }

    /// Vertex positions.
    pub fn positions(&self) -> &[Vec3] {
        &self.positions
    }

    /// Index triples.
    pub fn triangles(&self) -> &[[u32; 3]] {
        &self.triangles
    }

    fn misses_box(&self, o: &Vec3, d: &Vec3, max: f32) -> bool {
        let (mut t0, mut t1) = (0.0f32, max);
        for a in 0..3 {
            if d[a].abs() < 1e-12 {
                if o[a] < self.min[a] || o[a] > self.max[a] {
                    return true;
                }
            } else {
                let (p, q) = ((self.min[a] - o[a]) / d[a], (self.max[a] - o[a]) / d[a]);
                t0 = t0.max(p.min(q));
                t1 = t1.min(p.max(q));
            }
        }
        t0 > t1 + 1e-6
    }
}

impl GroundQuery for TriangleMesh {
    fn raycast(&self, origin: &Vec3, direction: &Vec3, max_distance: f32) -> Option<RayHit> {
        if !ray_ok(origin, direction, max_distance) || self.triangles.is_empty() {
            return None;
        }
        if self.misses_box(origin, direction, max_distance) {
            return None;
        }
        let mut best: Option<(f32, usize)> = None;
        for (ti, t) in self.triangles.iter().enumerate() {
            let [a, b, c] = t.map(|i| self.positions[i as usize]);
            let limit = best.map_or(max_distance, |(d, _)| d);
            if let Some(d) = ray_triangle(origin, direction, &a, &b, &c, limit)
                && best.is_none_or(|(bd, _)| d < bd)
            {
                best = Some((d, ti));
            }
        }
        let (d, ti) = best?;
        let [a, b, c] = self.triangles[ti].map(|i| self.positions[i as usize]);
        let n = (b - a).cross(&(c - a));
        let n = if n.norm_squared() > 0.0 { n.normalize() } else { -direction };
        Some(RayHit { point: origin + direction * d, normal: facing(n, direction), distance: d })
    }
}
