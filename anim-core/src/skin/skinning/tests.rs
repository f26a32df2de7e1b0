//! Unit tests of the skinning loops (moved out of `mod.rs` to keep it under 800 lines).

use super::hemispheres::{Entry, RISK_WORDS, SIGN_BIT, hemisphere_signs};
use super::*;
use anim_math::{Quat, dual};

/// Unnormalized normals point the same way as renormalized ones, are shortened by
/// blending, and match the transform path.
#[test]
fn unnormalized_normals() {
    let a = Transform::from_rotation(Quat::from_axis_angle(&Vec3::z_axis(), 0.0));
    let b = Transform::from_rotation(Quat::from_axis_angle(&Vec3::z_axis(), 1.2));
    let mats = [a.to_matrix(), b.to_matrix()];
    let inf = Influences::new(2, vec![0, 1], vec![0.5, 0.5], 2).unwrap();
    let pos = [Vec3::new(1.0, 0.0, 0.0)];
    let nrm = [Vec3::new(1.0, 0.0, 0.0)];
    let input = SkinningInput { influences: &inf, positions: &pos, normals: Some(&nrm) };
    let run = |mode| {
        let (mut p, mut n) = ([Vec3::zeros()], [Vec3::zeros()]);
        linear_blend(&input, &mats, mode, &mut SkinningOutput { positions: &mut p, normals: Some(&mut n) }).unwrap();
        n[0]
    };
    let (raw, unit) = (run(NormalMode::DirectUnnormalized), run(NormalMode::Direct));
    // Averaging two unit vectors 1.2 rad apart gives length cos(0.6).
    assert!((raw.norm() - 0.6f32.cos()).abs() < 1e-6, "{}", raw.norm());
    assert!((raw.normalize() - unit).norm() < 1e-6);
    let (mut p, mut n) = ([Vec3::zeros()], [Vec3::zeros()]);
    let mut out = SkinningOutput { positions: &mut p, normals: Some(&mut n) };
    linear_blend_transforms(&input, &[a, b], NormalMode::DirectUnnormalized, &mut out).unwrap();
    assert!((n[0] - raw).norm() < 1e-6);
}

/// The public functions may take the AVX2 path on this CPU; the baseline loops must
/// give the same result, for every specialised influence count and the general one.
#[test]
fn baseline_loops_match_dispatched_path() {
    let palette: Vec<Transform> = (0..6)
        .map(|i| {
            let f = i as f32;
            Transform::new(
                Vec3::new(f, -f, 0.5 * f),
                Quat::from_euler_angles(0.3 * f, -0.2 * f, 0.1),
                Vec3::new(1.0, 1.0, 1.0),
            )
        })
        .collect();
    let mats: Vec<Mat4> = palette.iter().map(Transform::to_matrix).collect();
    let dqs: Vec<DualQuat> = palette.iter().map(dual::from_transform).collect();
    for per in [1usize, 2, 3, 4, 5, 8] {
        let verts = 13;
        let joints: Vec<u16> = (0..verts * per).map(|i| (i * 7 % 6) as u16).collect();
        let weights: Vec<f32> = (0..verts * per).map(|i| 0.1 + (i % 5) as f32).collect();
        let inf = Influences::new(per, joints, weights, 6).unwrap();
        let pos: Vec<Vec3> = (0..verts).map(|i| Vec3::new(i as f32, 1.0, -(i as f32))).collect();
        let nrm: Vec<Vec3> = (0..verts).map(|i| Vec3::new(1.0, i as f32, 2.0).normalize()).collect();
        let input = SkinningInput { influences: &inf, positions: &pos, normals: Some(&nrm) };
        let run = |baseline: bool, dq: bool| {
            let (mut p, mut n) = (vec![Vec3::zeros(); verts], vec![Vec3::zeros(); verts]);
            let mut out = SkinningOutput { positions: &mut p, normals: Some(&mut n) };
            match (baseline, dq) {
                (true, false) => dispatch!(per, lbs_kernel(&input, &mats, NormalMode::InverseTranspose, &mut out)),
                (true, true) => dispatch!(per, dq_kernel(&input, &dqs, &mut out)),
                (false, false) => linear_blend(&input, &mats, NormalMode::InverseTranspose, &mut out).unwrap(),
                (false, true) => dual_quaternion(&input, &DqPalette::from_rigid(&dqs), &mut out).unwrap(),
            }
            (p, n)
        };
        for dq in [false, true] {
            let (a, an) = run(true, dq);
            let (b, bn) = run(false, dq);
            for v in 0..verts {
                assert!((a[v] - b[v]).norm() < 1e-5, "{per} influences, dq {dq}, vertex {v}");
                assert!((an[v] - bn[v]).norm() < 1e-5, "{per} influences, dq {dq}, normal {v}");
            }
        }
    }
}

/// A vertex whose weights are all zero keeps its rest position and normal.
#[test]
fn unweighted_vertices_keep_their_rest_place() {
    let inf = Influences::new(2, vec![1, 0], vec![0.0, 0.0], 2).unwrap();
    let pos = [Vec3::new(1.0, 2.0, 3.0)];
    let nrm = [Vec3::new(0.0, 0.0, 1.0)];
    let palette = [anim_math::Mat4::new_translation(&Vec3::new(5.0, 0.0, 0.0)); 2];
    let (mut p, mut n) = ([Vec3::zeros()], [Vec3::zeros()]);
    linear_blend(
        &SkinningInput { influences: &inf, positions: &pos, normals: Some(&nrm) },
        &palette,
        NormalMode::Direct,
        &mut SkinningOutput { positions: &mut p, normals: Some(&mut n) },
    )
    .unwrap();
    assert_eq!((p, n), (pos, nrm));
}

/// The SIMD loops read a palette that is not 64-byte aligned through an aligned copy
/// (`fast::aligned`) when it has at most 256 joints and the mesh at least two vertices a
/// joint, and in place otherwise. Every placement of the palette (each 4-byte offset
/// within a cache line), on both sides of both limits, gives the scalar loop's result.
#[test]
fn palette_placement_does_not_change_the_result() {
    let kernels = [(Kernel::Avx2Fma, "avx2"), (Kernel::Avx512, "avx512")];
    for (joints, verts) in [(40usize, 100usize), (40, 79), (256, 600), (300, 700)] {
        let palette: Vec<Mat4> = (0..joints)
            .map(|i| {
                let f = i as f32 * 0.37;
                Transform::new(
                    Vec3::new(f.sin(), f, -0.5 * f),
                    Quat::from_euler_angles(0.3 * f, -0.2 * f, 0.1 + f),
                    Vec3::new(1.0 + 0.01 * f, 1.0, 0.9),
                )
                .to_matrix()
            })
            .collect();
        let js: Vec<u16> = (0..verts * 4).map(|i| (i * 7 % joints) as u16).collect();
        let ws: Vec<f32> = (0..verts * 4).map(|i| 0.1 + (i % 5) as f32).collect();
        let inf = Influences::new(4, js, ws, joints).unwrap();
        let pos: Vec<Vec3> = (0..verts).map(|i| Vec3::new(i as f32 * 0.01, 1.0, -(i as f32))).collect();
        let nrm: Vec<Vec3> = (0..verts).map(|i| Vec3::new(1.0, i as f32, 2.0).normalize()).collect();
        let input = SkinningInput { influences: &inf, positions: &pos, normals: Some(&nrm) };
        let run = |pal: &[Mat4], kernel: Kernel| {
            let (mut p, mut n) = (vec![Vec3::zeros(); verts], vec![Vec3::zeros(); verts]);
            let mut out = SkinningOutput { positions: &mut p, normals: Some(&mut n) };
            linear_blend_with(&input, pal, NormalMode::DirectUnnormalized, kernel, &mut out).unwrap();
            (p, n)
        };
        let (want_p, want_n) = run(&palette, Kernel::Scalar);
        // Room for the palette at any 4-byte offset of a 64-byte line.
        let mut room = vec![Mat4::zeros(); joints + 1];
        let base = room.as_ptr() as usize;
        for (kernel, name) in kernels {
            if !anim_testkit::kernels::require(name) {
                continue;
            }
            for shift in 0..16 {
                let start = (0..16).find(|k| (base + 4 * k) % 64 == 4 * shift).expect("4-byte aligned");
                // SAFETY: `room` holds joints + 1 matrices = 16·(joints + 1) floats, and
                // start < 16, so floats start..start + 16·joints lie inside it; a Mat4 is
                // 16 contiguous f32 with 4-byte alignment.
                let pal = unsafe {
                    let floats = room.as_mut_ptr().cast::<f32>().add(start);
                    let pal = std::slice::from_raw_parts_mut(floats.cast::<Mat4>(), joints);
                    pal.copy_from_slice(&palette);
                    &*pal
                };
                let (p, n) = run(pal, kernel);
                for v in 0..verts {
                    let what =
                        format!("{kernel:?}, {joints} joints, {verts} vertices, offset {}, vertex {v}", 4 * shift);
                    assert!((p[v] - want_p[v]).norm() <= 1e-4 * want_p[v].norm().max(1.0), "{what}");
                    assert!((n[v] - want_n[v]).norm() <= 1e-5 * want_n[v].norm().max(1.0), "{what}");
                }
            }
        }
    }
}

/// A rigid palette of `n` joints turned about one axis by the given angles.
fn turned(angles: &[f32]) -> Vec<DualQuat> {
    let axis = anim_math::nalgebra::Unit::new_normalize(Vec3::new(0.2, 1.0, -0.4));
    angles.iter().map(|&a| dual::from_parts(&Vec3::new(a, 0.0, 1.0), &Quat::from_axis_angle(&axis, a))).collect()
}

/// A mesh with a vertex a pivot pair `first << 16 | other` (weights 0.6 and 0.4), in order,
/// where `None` is a vertex on joint 0 alone, for a palette of `joints`.
fn pair_mesh(pairs: &[Option<u32>], joints: usize) -> Influences {
    let js: Vec<u16> =
        pairs.iter().flat_map(|p| p.map_or([0, 0], |p| [(p >> 16) as u16, (p & 0xFFFF) as u16])).collect();
    let ws: Vec<f32> = pairs.iter().flat_map(|p| if p.is_some() { [0.6, 0.4] } else { [1.0, 0.0] }).collect();
    Influences::new(2, js, ws, joints).expect("every pair names joints below `joints`, weights finite")
}

/// [`pair_mesh`] with a vertex a pair.
fn pairs_mesh(pairs: &[u32], joints: usize) -> Influences {
    pair_mesh(&pairs.iter().map(|&p| Some(p)).collect::<Vec<_>>(), joints)
}

/// The blocks [`with_hemispheres`] marked in `risky` (after the joints' words), or `None`
/// when it marked none.
fn marked_blocks(risky: &[u64]) -> Option<Vec<usize>> {
    let blocks = risky.get(RISK_WORDS..).filter(|b| !b.is_empty())?;
    Some((0..blocks.len() * 64).filter(|&b| blocks[b / 64] & (1 << (b % 64)) != 0).collect())
}

/// Signs exist when the negative pairs come from whole dual quaternions negated (the same
/// transforms): every pair's parity is then its flip, and the loops blend a copy with
/// those joints negated back, in which no pair flips. Three joints whose quaternions spread
/// beyond a quarter turn of their sphere (a cycle with one flip) have none: the loops test
/// the blocks of sixteen vertices that hold a vertex pivoting on a risky joint, and the
/// others not at all.
#[test]
fn hemisphere_signs_follow_every_pair() {
    // Joints 0.3 rad apart, every other one negated: pairs (k, k + 1) and (k, k + 2).
    let mut dqs = turned(&(0..12).map(|k| 0.3 * k as f32).collect::<Vec<_>>());
    for (j, q) in dqs.iter_mut().enumerate() {
        if j % 3 == 1 || j == 8 {
            *q = DualQuat::new_unchecked(-q.into_inner());
        }
    }
    let palette: Vec<DualQuat> = dqs.clone();
    let pairs: Vec<u32> =
        (0..12u32).flat_map(|a| [a + 1, a + 2].into_iter().filter(|&b| b < 12).map(move |b| a << 16 | b)).collect();
    let mut signs = [0u32; 12];
    assert!(hemisphere_signs::<_, 16>(&pairs, &palette, &mut signs));
    let real = |j: usize| palette[j].real.coords;
    for &pair in &pairs {
        let (a, b) = ((pair >> 16) as usize, (pair & 0xFFFF) as usize);
        let flipped = real(a).dot(&real(b)) < 0.0;
        assert_eq!((signs[a] ^ signs[b]) == SIGN_BIT, flipped, "pair ({a}, {b})");
    }
    with_hemispheres::<_, SIGN_JOINTS, _>(&pairs_mesh(&pairs, 12), &palette, |h| {
        // The loops blend the copy with those joints negated, in which no pair flips.
        assert!(h.coherent && h.risky.is_empty());
        for j in 0..12 {
            let sign = if signs[j] == SIGN_BIT { -1.0 } else { 1.0 };
            assert_eq!(h.palette[j].into_inner(), palette[j].into_inner() * sign, "joint {j}");
        }
        for &pair in &pairs {
            let (a, b) = ((pair >> 16) as usize, (pair & 0xFFFF) as usize);
            assert!(h.palette[a].real.coords.dot(&h.palette[b].real.coords) >= 0.0, "pair ({a}, {b})");
        }
        // The copy is aligned as the palette is (one 256-bit load an entry).
        assert_eq!(h.palette.as_ptr() as usize % 32, 0);
    });

    // Quaternion half-angles 0, 0.4π and 0.8π (rotations by 0, 0.8π, 1.6π): (0, 1) and
    // (1, 2) agree, (0, 2) flips. No signs: the risky vertices keep their tests.
    let spread = turned(&[0.0, 0.8 * std::f32::consts::PI, 1.6 * std::f32::consts::PI]);
    let pairs = [1, 2, 1 << 16 | 2];
    assert!(spread[0].real.coords.dot(&spread[2].real.coords) < 0.0);
    assert!(spread[0].real.coords.dot(&spread[1].real.coords) >= 0.0);
    let mut signs = [0u32; 3];
    assert!(!hemisphere_signs::<_, 16>(&pairs, &spread, &mut signs));
    with_hemispheres::<_, SIGN_JOINTS, _>(&pairs_mesh(&pairs, 3), &spread, |h| {
        assert!(!h.coherent && h.risky[0] == 1 && std::ptr::eq(h.palette, &spread[..]));
        assert_eq!(marked_blocks(h.risky), Some(vec![0]));
    });
    // Joint 0's vertices of pairs at 0, 1 and 40 (of 42): blocks 0 and 2 test, block 1 not.
    let mut late = vec![Some(1), Some(2)];
    late.extend([None; 38]);
    late.extend([Some(2), Some(1 << 16 | 2)]);
    with_hemispheres::<_, SIGN_JOINTS, _>(&pair_mesh(&late, 3), &spread, |h| {
        assert_eq!(marked_blocks(h.risky), Some(vec![0, 2]));
    });
    // A fourth joint, joint 0 turned a little and negated, pairs with joint 0: the signs
    // resolve (0, 2) and (0, 3) but not (1, 2), and the loops test joint 1's vertices
    // against the copy (one pair left flipping instead of two).
    let mut four = spread.clone();
    four.push(turned(&[0.1])[0].negated());
    let pairs = [1, 2, 3, 1 << 16 | 2];
    let mut signs = [0u32; 4];
    assert!(!hemisphere_signs::<_, 16>(&pairs, &four, &mut signs));
    assert_eq!(signs, [0, 0, SIGN_BIT, SIGN_BIT]);
    with_hemispheres::<_, SIGN_JOINTS, _>(&pairs_mesh(&pairs, 4), &four, |h| {
        assert!(!h.coherent && h.risky[0] == 0b10, "{:b}", h.risky[0]);
        assert_eq!(h.palette[3].into_inner(), -four[3].into_inner());
    });
    // A coherent mesh: the palette as it is.
    with_hemispheres::<_, SIGN_JOINTS, _>(&pairs_mesh(&[1 << 16 | 2], 3), &spread, |h| {
        assert!(h.coherent && h.risky.is_empty() && std::ptr::eq(h.palette, &spread[..]));
    });
}

/// A pair whose dot product overflows to −∞ flips in the scalar loop (`dot < 0`), but no
/// band links it: the analysis reports it and its vertices test, with or without other
/// pairs the signs resolve. (Only a palette of non-unit dual quaternions gets there.)
#[test]
fn an_infinite_negative_dot_still_tests() {
    use anim_math::nalgebra::{DualQuaternion, Quaternion};
    let huge = |x: f32| {
        DualQuat::new_unchecked(DualQuaternion::from_real_and_dual(
            Quaternion::new(0.0, x, 0.0, 0.0),
            Quaternion::identity() * 0.0,
        ))
    };
    // Joints 0 and 1 real parts ±1e20 on x: their dot is −1e40, −∞ in f32. Joint 2 is
    // joint 0 negated (unit), pairing with joint 3 (unit, near joint 0) so that the signs
    // have a flip to resolve.
    let mut palette = vec![huge(1e20), huge(-1e20)];
    palette.extend(turned(&[0.1, 0.2]));
    palette[2] = palette[2].negated();
    let pairs = [1, 2 << 16 | 3];
    let dot = |a: usize, b: usize| palette[a].real.coords.dot(&palette[b].real.coords);
    assert!(dot(0, 1) == f32::NEG_INFINITY && dot(2, 3) < 0.0);
    with_hemispheres::<_, SIGN_JOINTS, _>(&pairs_mesh(&pairs, 4), &palette, |h| {
        assert!(!h.coherent, "the −∞ pair flips");
        assert_eq!(h.risky[0] & 1, 1, "joint 0 is risky: {:b}", h.risky[0]);
        assert_eq!(h.risky[0] & 0b100, 0, "the (2, 3) pair is resolved by the signs: {:b}", h.risky[0]);
    });
}
