//! Mesh LODs: each level's recorded error bounds the deviation measured independently (at
//! points sampled inside the full-detail triangles, not the vertices and edge midpoints the
//! bake measures), levels reduce, UV seams and skin data stay, and the screen-space level
//! choice follows the projection.

use anim_crowd::lod::{LodError, MAX_LODS, MeshLods, point_triangle_distance, select_level};
use anim_math::Vec3;

/// The largest distance from points sampled inside each full-detail triangle (a barycentric
/// grid of 10 points a triangle, its centroid among them) to the nearest triangle of `level`.
fn sampled_deviation(positions: &[Vec3], full: &[u32], level: &[u32]) -> f32 {
    let tri = |t: &[u32]| [positions[t[0] as usize], positions[t[1] as usize], positions[t[2] as usize]];
    let tris: Vec<[Vec3; 3]> = level.chunks_exact(3).map(tri).collect();
    let mut worst = 0.0f32;
    for t in full.chunks_exact(3) {
        let [a, b, c] = tri(t);
        for i in 0..=3 {
            for j in 0..=3 - i {
                let (u, v) = (i as f32 / 3.0, j as f32 / 3.0);
                let p = a + u * (b - a) + v * (c - a);
                let d = tris.iter().map(|t| point_triangle_distance(p, t)).fold(f32::INFINITY, f32::min);
                worst = worst.max(d);
            }
        }
    }
    worst
}

#[test]
fn recorded_error_bounds_the_measured_deviation_of_the_mannequin() {
    let m = anim_mannequin::build();
    let mesh = &m.mesh;
    let lods = MeshLods::build(&mesh.positions, &mesh.indices, &[0.5, 0.25, 0.1]).unwrap();
    let levels = lods.levels();
    assert_eq!(levels.len(), MAX_LODS);
    assert_eq!(levels[0].indices, mesh.indices);
    assert_eq!(levels[0].error, 0.0);
    let (lo, hi) = mesh.bounds().unwrap();
    let extent = (hi - lo).norm();
    for (k, level) in levels.iter().enumerate().skip(1) {
        assert!(level.indices.len() < levels[k - 1].indices.len(), "level {k} reduces");
        assert!(level.error >= levels[k - 1].error, "errors grow with the level");
        assert!(level.error > 0.0 && level.error < 0.1 * extent, "level {k} error {} of extent {extent}", level.error);
        let measured = sampled_deviation(&mesh.positions, &mesh.indices, &level.indices);
        // 1 µm of slack for the float rounding of two distance computations.
        assert!(measured <= level.error + 1e-6, "level {k}: measured {measured} > recorded {}", level.error);
    }
}

/// A unit sphere (UV mapped, so vertices repeat along the seam at longitude 0 with a
/// different u): the seam stays closed at every level (each seam vertex that a level keeps
/// has its twin kept too, or both are gone) and its error bounds the deviation.
#[test]
fn a_uv_seam_stays_closed_and_the_error_bounds_the_deviation() {
    let (rings, segments) = (16u32, 24u32);
    let mut positions = Vec::new();
    for r in 0..=rings {
        let theta = std::f32::consts::PI * r as f32 / rings as f32;
        for s in 0..=segments {
            // The seam column repeats the first one's position exactly (another u).
            let phi = std::f32::consts::TAU * (s % segments) as f32 / segments as f32;
            positions.push(Vec3::new(theta.sin() * phi.cos(), theta.cos(), theta.sin() * phi.sin()));
        }
    }
    let row = segments + 1;
    let mut indices = Vec::new();
    for r in 0..rings {
        for s in 0..segments {
            let i = r * row + s;
            indices.extend_from_slice(&[i, i + 1, i + row, i + 1, i + row + 1, i + row]);
        }
    }
    // Drop the degenerate triangles at the poles.
    let indices: Vec<u32> = indices
        .chunks_exact(3)
        .filter(|t| {
            let [a, b, c] = [positions[t[0] as usize], positions[t[1] as usize], positions[t[2] as usize]];
            (b - a).cross(&(c - a)).norm() > 1e-6
        })
        .flatten()
        .copied()
        .collect();
    let lods = MeshLods::build(&positions, &indices, &[0.5, 0.2]).unwrap();
    for (k, level) in lods.levels().iter().enumerate().skip(1) {
        assert!(level.indices.len() < indices.len());
        let measured = sampled_deviation(&positions, &indices, &level.indices);
        assert!(measured <= level.error + 1e-6, "level {k}: measured {measured} > recorded {}", level.error);
        // The seam: vertices s = 0 and s = segments of a ring share a position.
        for r in 1..rings {
            let (a, b) = (r * row, r * row + segments);
            let used = |v: u32| level.indices.contains(&v);
            assert_eq!(used(a), used(b), "level {k}: seam vertices {a} and {b} of ring {r} are kept together");
        }
    }
}

/// The mannequin split per face (every triangle its own three vertices, as in a
/// flat-shaded mesh such as Fox): unwelded it cannot simplify; welded by position, UVs,
/// joints and weights it does, within its recorded error.
#[test]
fn a_mesh_split_per_face_simplifies_when_welded() {
    let m = anim_mannequin::build();
    let src = &m.mesh;
    let inf = src.influences.as_ref().unwrap();
    let per = inf.per_vertex();
    let mut split = anim_core::skin::Mesh::default();
    let (mut joints, mut weights) = (Vec::new(), Vec::new());
    for &i in &src.indices {
        let i = i as usize;
        split.positions.push(src.positions[i]);
        if !src.uvs.is_empty() {
            split.uvs.push(src.uvs[i]);
        }
        joints.extend_from_slice(&inf.joints()[i * per..][..per]);
        weights.extend_from_slice(&inf.weights()[i * per..][..per]);
    }
    split.indices = (0..src.indices.len() as u32).collect();
    split.influences = Some(anim_core::skin::Influences::new(per, joints, weights, inf.joint_bound()).unwrap());
    let plain = MeshLods::build(&split.positions, &split.indices, &[0.25]).unwrap();
    assert_eq!(plain.levels()[1].indices.len(), split.indices.len(), "unwelded, nothing collapses");
    let welded = MeshLods::from_mesh(&split, &[0.5, 0.25]).unwrap();
    for (k, level) in welded.levels().iter().enumerate().skip(1) {
        assert!(level.indices.len() <= split.indices.len() / 2 + 3, "level {k}: {}", level.indices.len());
        let measured = sampled_deviation(&split.positions, &split.indices, &level.indices);
        assert!(measured <= level.error + 1e-6, "level {k}: measured {measured} > recorded {}", level.error);
    }
    assert_eq!(
        MeshLods::build_welded(&split.positions, &[0.0; 3], 2, &split.indices, &[]),
        Err(LodError::Attributes { len: 3, vertices: split.positions.len(), stride: 2 })
    );
}

#[test]
fn the_level_follows_the_projected_error() {
    let errors = [0.0, 0.01, 0.04, 0.2];
    // 1080 pixels high, 60° field of view, one-pixel threshold: 935.3 pixels a unit at 1.
    let ppu = 1080.0 / (2.0 * (30f32).to_radians().tan());
    assert_eq!(select_level(&errors, 1.0, 5.0, ppu), 0); // 0.01 · 935 = 9.4 > 5
    assert_eq!(select_level(&errors, 1.0, 10.0, ppu), 1); // 9.4 ≤ 10 < 37.4
    assert_eq!(select_level(&errors, 1.0, 40.0, ppu), 2);
    assert_eq!(select_level(&errors, 1.0, 200.0, ppu), 3);
    // Twice the resolution (or a scale of 2): twice the distance for the same level.
    assert_eq!(select_level(&errors, 1.0, 10.0, 2.0 * ppu), 0);
    assert_eq!(select_level(&errors, 2.0, 10.0, ppu), 0);
    assert_eq!(select_level(&errors, 1.0, 20.0, 2.0 * ppu), 1);
}

#[test]
fn bad_input_is_a_typed_error() {
    let p = [Vec3::zeros(), Vec3::x(), Vec3::y()];
    assert_eq!(MeshLods::build(&p, &[0, 1], &[]), Err(LodError::NotTriangles(2)));
    assert_eq!(
        MeshLods::build(&p, &[0, 1, 3], &[]),
        Err(LodError::IndexOutOfRange { position: 2, index: 3, vertices: 3 })
    );
    assert_eq!(MeshLods::build(&p, &[0, 1, 2], &[0.5, 0.6]), Err(LodError::InvalidRatio(0.6)));
    assert_eq!(MeshLods::build(&p, &[0, 1, 2], &[1.0]), Err(LodError::InvalidRatio(1.0)));
    assert_eq!(MeshLods::build(&p, &[0, 1, 2], &[0.5, 0.4, 0.3, 0.2]), Err(LodError::TooManyLevels(5)));
    let nan = [Vec3::zeros(), Vec3::new(f32::NAN, 0.0, 0.0), Vec3::y()];
    assert_eq!(MeshLods::build(&nan, &[0, 1, 2], &[]), Err(LodError::NonFinite(1)));
}
