//! CPU skinning: hand-computed values and agreement between independent paths.

use anim_core::pose::{JointDesc, Pose, Skeleton};
use anim_core::skin::palette::{skinning_dual_quats, skinning_matrices, skinning_transforms};
use anim_core::skin::skinning::{
    NormalMode, SkinningInput, SkinningOutput, dual_quaternion, linear_blend, linear_blend_transforms, rigid,
};
use anim_core::skin::{DqPalette, Influences, Palette, Skin, SkinMethod, SkinningError};
use anim_math::{DualQuat, Mat3, Mat4, Quat, Transform, Vec3, dual};
use std::f32::consts::FRAC_PI_2;

use anim_testkit::rng::Rng;

/// Runs one skinning function over fresh output buffers; returns positions and normals.
fn run_skin(
    inf: &Influences,
    pos: &[Vec3],
    nrm: Option<&[Vec3]>,
    skin: impl FnOnce(&SkinningInput, &mut SkinningOutput) -> Result<(), anim_core::skin::SkinningError>,
) -> (Vec<Vec3>, Vec<Vec3>) {
    let mut out_p = vec![Vec3::zeros(); pos.len()];
    let mut out_n = vec![Vec3::zeros(); pos.len()];
    let input = SkinningInput { influences: inf, positions: pos, normals: nrm };
    let mut out = SkinningOutput { positions: &mut out_p, normals: nrm.map(|_| &mut out_n[..]) };
    skin(&input, &mut out).unwrap();
    (out_p, out_n)
}

fn skin_lbs(
    inf: &Influences,
    pal: &[Mat4],
    pos: &[Vec3],
    nrm: Option<&[Vec3]>,
    mode: NormalMode,
) -> (Vec<Vec3>, Vec<Vec3>) {
    run_skin(inf, pos, nrm, |i, o| linear_blend(i, pal, mode, o))
}

fn skin_dq(inf: &Influences, pal: &[DualQuat], pos: &[Vec3], nrm: Option<&[Vec3]>) -> (Vec<Vec3>, Vec<Vec3>) {
    let pal = DqPalette::from_rigid(pal);
    run_skin(inf, pos, nrm, |i, o| dual_quaternion(i, &pal, o))
}

fn skin_tf(inf: &Influences, pal: &[Transform], pos: &[Vec3], nrm: Option<&[Vec3]>) -> (Vec<Vec3>, Vec<Vec3>) {
    run_skin(inf, pos, nrm, |i, o| linear_blend_transforms(i, pal, NormalMode::Direct, o))
}

/// Random influences: `per` slots a vertex, some slots zero, weights not normalized.
fn random_influences(rng: &mut Rng, verts: usize, per: usize, joints: usize) -> (Vec<u16>, Vec<f32>) {
    let mut j = Vec::new();
    let mut w = Vec::new();
    for _ in 0..verts {
        for k in 0..per {
            j.push((rng.next_f32() * joints as f32) as u16 % joints as u16);
            w.push(if k > 0 && rng.next_f32() < 0.2 { 0.0 } else { rng.range(0.05, 2.0) });
        }
    }
    (j, w)
}

/// Two joints: root at the origin, child one unit up; the child turns 90° about +z.
fn two_joint_chain() -> (Skeleton, Pose) {
    let s = Skeleton::new(vec![
        JointDesc::new("root", None, Transform::IDENTITY),
        JointDesc::new("child", Some(0), Transform::from_translation(Vec3::new(0.0, 1.0, 0.0))),
    ])
    .unwrap();
    let mut pose = s.rest_pose().clone();
    pose.locals_mut()[1].rotation = Quat::from_axis_angle(&Vec3::z_axis(), FRAC_PI_2);
    (s, pose)
}

#[test]
fn hand_computed_two_joint_chain() {
    let (s, pose) = two_joint_chain();
    let skin = Skin::from_skeleton(&s);
    let mut model = vec![Mat4::identity(); 2];
    pose.local_to_model(&s, &mut model).unwrap();
    let mut pal = vec![Mat4::identity(); 2];
    skinning_matrices(&model, &skin, &mut pal).unwrap();
    let mut dqs = vec![DualQuat::identity(); 2];
    skinning_dual_quats(&model, &skin, &mut dqs).unwrap();

    // Vertex (1, 1.5, 0): fully on the child → rotated 90° about the pivot (0, 1, 0):
    // offset (1, 0.5) becomes (-0.5, 1), so (-0.5, 2, 0).
    // Half and half → LBS averages (1, 1.5) and (-0.5, 2): (0.25, 1.75, 0);
    // DQ rotates by 45° about the pivot: (cos45 − 0.5 sin45, 1 + sin45 + 0.5 cos45).
    let positions = vec![Vec3::new(1.0, 1.5, 0.0); 3];
    let inf = Influences::new(2, vec![1, 0, 0, 1, 0, 0], vec![1.0, 0.0, 0.5, 0.5, 1.0, 0.0], 2).unwrap();
    let (lbs, _) = skin_lbs(&inf, &pal, &positions, None, NormalMode::Direct);
    let (dq, _) = skin_dq(&inf, &dqs, &positions, None);
    let h = std::f32::consts::FRAC_1_SQRT_2;
    let expect_dq_half = Vec3::new(h - 0.5 * h, 1.0 + h + 0.5 * h, 0.0);
    assert!((lbs[0] - Vec3::new(-0.5, 2.0, 0.0)).norm() < 1e-6, "{}", lbs[0]);
    assert!((lbs[1] - Vec3::new(0.25, 1.75, 0.0)).norm() < 1e-6, "{}", lbs[1]);
    assert!((lbs[2] - positions[2]).norm() < 1e-6);
    assert!((dq[0] - Vec3::new(-0.5, 2.0, 0.0)).norm() < 1e-5, "{}", dq[0]);
    assert!((dq[1] - expect_dq_half).norm() < 1e-5, "{}", dq[1]);
    // DQ keeps the distance to the pivot (no collapse); LBS shortens it.
    let pivot = Vec3::new(0.0, 1.0, 0.0);
    assert!(((dq[1] - pivot).norm() - (positions[1] - pivot).norm()).abs() < 1e-5);
    assert!((lbs[1] - pivot).norm() < (positions[1] - pivot).norm() - 0.2);
}

#[test]
fn identity_pose_gives_bind_positions() {
    let mut rng = Rng(7);
    let joints: Vec<JointDesc> = (0..12)
        .map(|i| {
            let rest = Transform::new(rng.vec3(1.0), rng.quat(), Vec3::new(1.0, 1.0, 1.0));
            JointDesc::new(format!("j{i}"), if i == 0 { None } else { Some((i - 1) / 2) }, rest)
        })
        .collect();
    let s = Skeleton::new(joints).unwrap();
    let skin = Skin::from_skeleton(&s);
    let (j, w) = random_influences(&mut rng, 200, 4, s.len());
    let inf = Influences::new(4, j, w, s.len()).unwrap();
    let pos: Vec<Vec3> = (0..200).map(|_| rng.vec3(2.0)).collect();
    let nrm: Vec<Vec3> = (0..200).map(|_| rng.vec3(1.0).normalize()).collect();

    let mut model = vec![Mat4::identity(); s.len()];
    s.bind_pose().local_to_model(&s, &mut model).unwrap();
    let mut pal = vec![Mat4::identity(); s.len()];
    skinning_matrices(&model, &skin, &mut pal).unwrap();
    let mut dqs = vec![DualQuat::identity(); s.len()];
    skinning_dual_quats(&model, &skin, &mut dqs).unwrap();
    let (lp, ln) = skin_lbs(&inf, &pal, &pos, Some(&nrm), NormalMode::InverseTranspose);
    let (dp, dn) = skin_dq(&inf, &dqs, &pos, Some(&nrm));
    for i in 0..pos.len() {
        assert!((lp[i] - pos[i]).norm() < 1e-4, "lbs vertex {i}");
        assert!((dp[i] - pos[i]).norm() < 1e-4, "dq vertex {i}");
        assert!((ln[i] - nrm[i]).norm() < 1e-4 && (dn[i] - nrm[i]).norm() < 1e-4, "normal {i}");
    }
}

/// A random palette of rigid transforms with uniform scale `scale`.
fn random_palette(rng: &mut Rng, n: usize, scale: f32) -> Vec<Transform> {
    (0..n).map(|_| Transform::new(rng.vec3(3.0), rng.quat(), Vec3::new(scale, scale, scale))).collect()
}

#[test]
fn single_influence_lbs_equals_dq() {
    let mut rng = Rng(99);
    let tf = random_palette(&mut rng, 16, 1.0);
    let mats: Vec<Mat4> = tf.iter().map(Transform::to_matrix).collect();
    let dqs: Vec<DualQuat> = tf.iter().map(dual::from_transform).collect();
    let n = 500;
    let j: Vec<u16> = (0..n).map(|_| (rng.next_f32() * 16.0) as u16 % 16).collect();
    let inf = Influences::new(1, j, vec![1.0; n], 16).unwrap();
    let pos: Vec<Vec3> = (0..n).map(|_| rng.vec3(2.0)).collect();
    let nrm: Vec<Vec3> = (0..n).map(|_| rng.vec3(1.0).normalize()).collect();
    let (lp, ln) = skin_lbs(&inf, &mats, &pos, Some(&nrm), NormalMode::Direct);
    let (dp, dn) = skin_dq(&inf, &dqs, &pos, Some(&nrm));
    for i in 0..n {
        assert!((lp[i] - dp[i]).norm() < 1e-5 * (1.0 + lp[i].norm()), "vertex {i}: {} vs {}", lp[i], dp[i]);
        assert!((ln[i] - dn[i]).norm() < 1e-5, "normal {i}");
    }
}

#[test]
fn multi_influence_rigid_motion_lbs_equals_dq() {
    // When every joint moves the same rigid way, blending cannot change anything.
    let mut rng = Rng(5);
    let t = Transform::new(rng.vec3(3.0), rng.quat(), Vec3::new(1.0, 1.0, 1.0));
    let mats = vec![t.to_matrix(); 6];
    let mut dqs = vec![dual::from_transform(&t); 6];
    // Same rigid motion with the opposite quaternion sign: the hemisphere fix must handle it.
    let d = dqs[3].into_inner();
    dqs[3] = DualQuat::new_unchecked(anim_math::nalgebra::DualQuaternion::from_real_and_dual(-d.real, -d.dual));
    let (j, w) = random_influences(&mut rng, 300, 4, 6);
    let inf = Influences::new(4, j, w, 6).unwrap();
    let pos: Vec<Vec3> = (0..300).map(|_| rng.vec3(2.0)).collect();
    let (lp, _) = skin_lbs(&inf, &mats, &pos, None, NormalMode::Direct);
    let (dp, _) = skin_dq(&inf, &dqs, &pos, None);
    for i in 0..pos.len() {
        assert!((lp[i] - dp[i]).norm() < 1e-4, "vertex {i}");
        assert!((lp[i] - t.transform_point(&pos[i])).norm() < 1e-4);
    }
}

#[test]
fn transform_path_equals_matrix_path() {
    let mut rng = Rng(1234);
    for per in [1usize, 2, 3, 4, 5, 8] {
        let tf = random_palette(&mut rng, 20, 1.7);
        let mats: Vec<Mat4> = tf.iter().map(Transform::to_matrix).collect();
        let (j, w) = random_influences(&mut rng, 300, per, 20);
        let inf = Influences::new(per, j, w, 20).unwrap();
        let pos: Vec<Vec3> = (0..300).map(|_| rng.vec3(2.0)).collect();
        let nrm: Vec<Vec3> = (0..300).map(|_| rng.vec3(1.0).normalize()).collect();
        let (mp, mn) = skin_lbs(&inf, &mats, &pos, Some(&nrm), NormalMode::Direct);
        let (tp, tn) = skin_tf(&inf, &tf, &pos, Some(&nrm));
        for i in 0..pos.len() {
            let rel = (mp[i] - tp[i]).norm() / mp[i].norm().max(1.0);
            assert!(rel < 1e-5, "{per} influences, vertex {i}: {} vs {} ({rel})", mp[i], tp[i]);
            assert!((mn[i] - tn[i]).norm() < 1e-5, "{per} influences, normal {i}");
        }
    }
}

#[test]
fn matrix_path_matches_naive_reference_for_any_influence_count() {
    let mut rng = Rng(31337);
    for per in [1usize, 2, 3, 4, 6, 8, 12] {
        let mats: Vec<Mat4> = (0..9)
            .map(|_| {
                Transform::new(rng.vec3(2.0), rng.quat(), Vec3::new(rng.range(0.5, 2.0), rng.range(0.5, 2.0), 1.0))
                    .to_matrix()
            })
            .collect();
        let (j, w) = random_influences(&mut rng, 100, per, 9);
        let inf = Influences::new(per, j.clone(), w.clone(), 9).unwrap();
        let pos: Vec<Vec3> = (0..100).map(|_| rng.vec3(2.0)).collect();
        let (mp, _) = skin_lbs(&inf, &mats, &pos, None, NormalMode::Direct);
        for v in 0..100 {
            // Reference: Σ wᵢ Mᵢ p / Σ wᵢ with full 4×4 nalgebra products.
            let sum: f32 = w[v * per..(v + 1) * per].iter().sum();
            let mut m = Mat4::zeros();
            for k in 0..per {
                m += mats[j[v * per + k] as usize] * w[v * per + k];
            }
            let expect = (m / sum).transform_point(&pos[v].into()).coords;
            assert!((mp[v] - expect).norm() < 1e-4, "{per} influences vertex {v}");
        }
    }
}

#[test]
fn weights_are_divided_by_their_sum_and_zero_weights_keep_rest() {
    let (s, pose) = two_joint_chain();
    let skin = Skin::from_skeleton(&s);
    let mut model = vec![Mat4::identity(); 2];
    pose.local_to_model(&s, &mut model).unwrap();
    let mut pal = vec![Mat4::identity(); 2];
    skinning_matrices(&model, &skin, &mut pal).unwrap();
    let pos = vec![Vec3::new(1.0, 1.5, 0.0); 3];
    let nrm = vec![Vec3::x(); 3];
    // (2, 2) behaves like (0.5, 0.5); (0, 0) keeps the rest position and normal.
    let scaled = Influences::new(2, vec![0, 1, 0, 1, 0, 1], vec![2.0, 2.0, 0.5, 0.5, 0.0, 0.0], 2).unwrap();
    let (p, n) = skin_lbs(&scaled, &pal, &pos, Some(&nrm), NormalMode::Direct);
    assert!((p[0] - p[1]).norm() < 1e-6);
    assert!((p[0] - Vec3::new(0.25, 1.75, 0.0)).norm() < 1e-6);
    assert_eq!(p[2], pos[2]);
    assert_eq!(n[2], nrm[2]);
    let dqs: Vec<DualQuat> = pal.iter().map(dual::from_rigid_matrix).collect();
    let (dp, _) = skin_dq(&scaled, &dqs, &pos, Some(&nrm));
    assert_eq!(dp[2], pos[2]);
}

#[test]
fn inverse_transpose_keeps_normals_perpendicular_under_nonuniform_scale() {
    let t = Transform::new(Vec3::zeros(), Quat::from_euler_angles(0.3, 0.2, 0.1), Vec3::new(3.0, 0.5, 1.0));
    let pal = vec![t.to_matrix()];
    let inf = Influences::new(1, vec![0], vec![1.0], 1).unwrap();
    // A surface at 45° between x and y: tangent (1, -1, 0), normal (1, 1, 0)/√2.
    let tangent = Vec3::new(1.0, -1.0, 0.0);
    let normal = vec![Vec3::new(1.0, 1.0, 0.0).normalize()];
    let (_, n_it) = skin_lbs(&inf, &pal, &[Vec3::zeros()], Some(&normal), NormalMode::InverseTranspose);
    let (_, n_direct) = skin_lbs(&inf, &pal, &[Vec3::zeros()], Some(&normal), NormalMode::Direct);
    let skinned_tangent = t.transform_vector(&tangent);
    assert!(n_it[0].dot(&skinned_tangent).abs() < 1e-5);
    assert!((n_it[0].norm() - 1.0).abs() < 1e-5);
    assert!(n_direct[0].dot(&skinned_tangent.normalize()).abs() > 0.1, "direct mode is expected to tilt the normal");
}

#[test]
fn rigid_follows_the_strongest_joint() {
    let (s, pose) = two_joint_chain();
    let skin = Skin::from_skeleton(&s);
    let mut model = vec![Mat4::identity(); 2];
    pose.local_to_model(&s, &mut model).unwrap();
    let mut pal = vec![Mat4::identity(); 2];
    skinning_matrices(&model, &skin, &mut pal).unwrap();
    let inf = Influences::new(2, vec![0, 1, 0, 1], vec![0.4, 0.6, 0.6, 0.4], 2).unwrap();
    let pos = vec![Vec3::new(1.0, 1.5, 0.0); 2];
    let mut out = vec![Vec3::zeros(); 2];
    let input = SkinningInput { influences: &inf, positions: &pos, normals: None };
    rigid(&input, &pal, &mut SkinningOutput { positions: &mut out, normals: None }).unwrap();
    assert!((out[0] - Vec3::new(-0.5, 2.0, 0.0)).norm() < 1e-6);
    assert!((out[1] - pos[1]).norm() < 1e-6);
}

#[test]
fn bad_input_is_an_error_not_a_panic() {
    let inf = Influences::new(1, vec![3], vec![1.0], 4).unwrap();
    let pos = vec![Vec3::zeros()];
    let mut out = vec![Vec3::zeros()];
    let input = SkinningInput { influences: &inf, positions: &pos, normals: None };
    let short = vec![Mat4::identity(); 3];
    let e =
        linear_blend(&input, &short, NormalMode::Direct, &mut SkinningOutput { positions: &mut out, normals: None });
    assert_eq!(e, Err(SkinningError::PaletteTooShort { got: 3, needed: 4 }));
    let mut two = vec![Vec3::zeros(); 2];
    let e = linear_blend(
        &input,
        &[Mat4::identity(); 4],
        NormalMode::Direct,
        &mut SkinningOutput { positions: &mut two, normals: None },
    );
    assert!(matches!(
        e,
        Err(SkinningError::WrongLength(anim_core::LengthMismatch { what: "output positions", got: 2, expected: 1 }))
    ));
    let mut n = vec![Vec3::zeros()];
    let e = dual_quaternion(
        &input,
        &DqPalette::from_rigid(&[DualQuat::identity(); 4]),
        &mut SkinningOutput { positions: &mut out, normals: Some(&mut n) },
    );
    // Output normals of a mesh without input normals: the error that names the fix.
    assert_eq!(e, Err(SkinningError::NoNormals { vertices: 1 }));
    assert!(matches!(
        Influences::new(4, vec![0, 1, 2, 7], vec![0.25; 4], 4),
        Err(SkinningError::JointOutOfRange { vertex: 0, slot: 3, joint: 7, count: 4 })
    ));
}

#[test]
fn full_pipeline_from_clip_to_vertices() {
    use anim_core::clip::{Clip, Interpolation, JointTracks, TimePolicy, Track};
    let (s, _) = two_joint_chain();
    let mut jt = JointTracks::new(1);
    let q0 = Quat::identity().into_inner();
    let q1 = Quat::from_axis_angle(&Vec3::z_axis(), FRAC_PI_2).into_inner();
    jt.rotation = Some(Track::new(Interpolation::Linear, vec![0.0, 2.0], vec![q0, q1]).unwrap());
    let clip = Clip::new("bend", vec![jt], vec![]).unwrap();
    let mut pose = s.rest_pose().clone();
    clip.sample(1.0, TimePolicy::Clamp, &mut pose).unwrap();
    let mut model = vec![Mat4::identity(); 2];
    pose.local_to_model(&s, &mut model).unwrap();
    let mut globals = vec![Transform::IDENTITY; 2];
    pose.globals(&s, &mut globals).unwrap();
    let skin = Skin::from_skeleton(&s);
    let mut pal = vec![Mat4::identity(); 2];
    skinning_matrices(&model, &skin, &mut pal).unwrap();
    let mut tpal = vec![Transform::IDENTITY; 2];
    skinning_transforms(&globals, &skin, &mut tpal).unwrap();
    let inf = Influences::new(1, vec![1], vec![1.0], 2).unwrap();
    let pos = [Vec3::new(0.0, 2.0, 0.0)];
    let (p, _) = skin_lbs(&inf, &pal, &pos, None, NormalMode::Direct);
    let (q, _) = skin_tf(&inf, &tpal, &pos, None);
    // Halfway through the clip the child has turned 45° (slerp): the tip, one unit above
    // the pivot, ends at (−sin45, 1 + cos45, 0).
    let h = std::f32::consts::FRAC_1_SQRT_2;
    assert!((p[0] - Vec3::new(-h, 1.0 + h, 0.0)).norm() < 1e-5, "{}", p[0]);
    assert!((q[0] - p[0]).norm() < 1e-5);
}

/// Skinning matrices with non-uniform scale and shear: `M = T · R · K`, `K` a random
/// upper-triangular scale/shear.
fn scaled_palette(rng: &mut Rng, n: usize) -> Vec<Mat4> {
    (0..n)
        .map(|_| {
            let k = Mat3::new(
                rng.range(0.5, 2.0),
                rng.range(-0.3, 0.3),
                rng.range(-0.3, 0.3),
                0.0,
                rng.range(0.5, 2.0),
                rng.range(-0.3, 0.3),
                0.0,
                0.0,
                rng.range(0.5, 2.0),
            );
            let a = rng.quat().to_rotation_matrix().into_inner() * k;
            let mut m = a.to_homogeneous();
            m.fixed_view_mut::<3, 1>(0, 3).copy_from(&rng.vec3(3.0));
            m
        })
        .collect()
}

/// The scale-aware dual-quaternion definition written out directly with nalgebra's dual
/// quaternions and `anim_math::dual::blend`, one vertex at a time: the independent path
/// the optimised loops are checked against.
fn dq_reference(inf: &Influences, pal: &DqPalette, pos: &[Vec3], nrm: &[Vec3]) -> (Vec<Vec3>, Vec<Vec3>) {
    let per = inf.per_vertex();
    let mut out = (Vec::new(), Vec::new());
    for (v, (js, ws)) in inf.joints().chunks_exact(per).zip(inf.weights().chunks_exact(per)).enumerate() {
        if ws.iter().all(|w| *w == 0.0) {
            out.0.push(pos[v]);
            out.1.push(nrm[v]);
            continue;
        }
        let q = dual::blend(js.iter().zip(ws).map(|(j, w)| (&pal.dual_quats()[usize::from(*j)], *w)));
        let s: Mat3 = js.iter().zip(ws).map(|(j, w)| pal.scales()[usize::from(*j)] * *w).sum();
        out.0.push(dual::transform_point(&q, &(s * pos[v])));
        let n = s.try_inverse().expect("test scales are invertible").transpose() * nrm[v];
        out.1.push(dual::transform_vector(&q, &n).normalize());
    }
    out
}

/// Dual-quaternion skinning with scale, every specialised influence count and the general
/// loop, against the definition written out independently.
#[test]
fn scaled_dq_matches_the_definition() {
    let mut rng = Rng(2024);
    let mats = scaled_palette(&mut rng, 9);
    let pal = DqPalette::from_matrices(&mats);
    assert!(!pal.is_rigid());
    for per in [1usize, 2, 3, 4, 5, 8] {
        let (j, mut w) = random_influences(&mut rng, 64, per, mats.len());
        // Weights sum to one, as imported weights do; the last vertex has none.
        for ws in w.chunks_exact_mut(per) {
            let sum: f32 = ws.iter().sum();
            ws.iter_mut().for_each(|x| *x /= sum);
        }
        let last = w.len() - per;
        w[last..].iter_mut().for_each(|x| *x = 0.0);
        let inf = Influences::new(per, j, w, mats.len()).unwrap();
        let pos: Vec<Vec3> = (0..64).map(|_| rng.vec3(2.0)).collect();
        let nrm: Vec<Vec3> = (0..64).map(|_| rng.vec3(1.0).normalize()).collect();
        let (p, n) = run_skin(&inf, &pos, Some(&nrm), |i, o| dual_quaternion(i, &pal, o));
        let (rp, rn) = dq_reference(&inf, &pal, &pos, &nrm);
        for v in 0..pos.len() {
            assert!((p[v] - rp[v]).norm() < 1e-4, "{per} influences, vertex {v}: {} vs {}", p[v], rp[v]);
            assert!((n[v] - rn[v]).norm() < 1e-4, "{per} influences, normal {v}: {} vs {}", n[v], rn[v]);
        }
        assert_eq!((p[63], n[63]), (pos[63], nrm[63]), "a vertex without weights keeps its rest data");
    }
}

/// With one influence a vertex, scale-aware DQ reproduces the palette matrix exactly, so it
/// equals linear blend skinning (normals by the inverse transpose) under scale and shear.
#[test]
fn scaled_dq_single_influence_equals_lbs() {
    let mut rng = Rng(5);
    let mats = scaled_palette(&mut rng, 6);
    let (j, _) = random_influences(&mut rng, 50, 1, mats.len());
    let inf = Influences::new(1, j, vec![1.0; 50], mats.len()).unwrap();
    let pos: Vec<Vec3> = (0..50).map(|_| rng.vec3(2.0)).collect();
    let nrm: Vec<Vec3> = (0..50).map(|_| rng.vec3(1.0).normalize()).collect();
    let dq = Palette::from_matrices(SkinMethod::Dq, &mats);
    let lbs = Palette::from_matrices(SkinMethod::Lbs, &mats);
    let skin = |p: &Palette| {
        run_skin(&inf, &pos, Some(&nrm), |i, o| anim_core::skin::skinning::skin(i, p, NormalMode::InverseTranspose, o))
    };
    let ((dp, dn), (lp, ln)) = (skin(&dq), skin(&lbs));
    for v in 0..pos.len() {
        assert!((dp[v] - lp[v]).norm() < 1e-4, "vertex {v}: {} vs {}", dp[v], lp[v]);
        assert!((dn[v] - ln[v]).norm() < 1e-4, "normal {v}: {} vs {}", dn[v], ln[v]);
    }
}

/// Rigidity is decided once per palette: rotations and translations are rigid (identity
/// scales, the fast loop), any scale is not; both loops agree on a rigid palette.
#[test]
fn dq_palette_detects_scale_once() {
    let mut rng = Rng(11);
    let rigid: Vec<Mat4> = random_palette(&mut rng, 8, 1.0).iter().map(Transform::to_matrix).collect();
    let pal = DqPalette::from_matrices(&rigid);
    assert!(pal.is_rigid());
    assert!(pal.scales().iter().all(|s| *s == Mat3::identity()));
    let mut scaled = rigid.clone();
    scaled[5] *= Mat4::new_nonuniform_scaling(&Vec3::new(1.0, 1.01, 1.0));
    let spal = DqPalette::from_matrices(&scaled);
    assert!(!spal.is_rigid());
    assert!((spal.scales()[5] - Mat3::from_diagonal(&Vec3::new(1.0, 1.01, 1.0))).abs().max() < 1e-5);
    // The same palette through the rigid loop and through the reference definition.
    let (j, w) = random_influences(&mut rng, 40, 4, 8);
    let inf = Influences::new(4, j, w, 8).unwrap();
    let pos: Vec<Vec3> = (0..40).map(|_| rng.vec3(2.0)).collect();
    let nrm: Vec<Vec3> = (0..40).map(|_| rng.vec3(1.0).normalize()).collect();
    let (p, n) = run_skin(&inf, &pos, Some(&nrm), |i, o| dual_quaternion(i, &pal, o));
    let (rp, rn) = dq_reference(&inf, &pal, &pos, &nrm);
    for v in 0..pos.len() {
        assert!((p[v] - rp[v]).norm() < 1e-4 && (n[v] - rn[v]).norm() < 1e-4, "vertex {v}");
    }
}

/// `Palette::update` computes the same palettes as the free functions, in the form of its
/// method, and switching method keeps the results consistent.
#[test]
fn palette_update_matches_free_functions() {
    let (s, pose) = two_joint_chain();
    let skin = Skin::from_skeleton(&s);
    let mut model = vec![Mat4::identity(); 2];
    pose.local_to_model(&s, &mut model).unwrap();
    let mut mats = vec![Mat4::identity(); 2];
    skinning_matrices(&model, &skin, &mut mats).unwrap();
    let mut p = Palette::new(SkinMethod::Lbs);
    p.update(&model, &skin).unwrap();
    assert_eq!(p.matrices(), Some(&mats[..]));
    p.set_method(SkinMethod::Dq);
    assert!(p.is_empty() && p.method() == SkinMethod::Dq);
    p.update(&model, &skin).unwrap();
    let mut dqs = vec![DualQuat::identity(); 2];
    skinning_dual_quats(&model, &skin, &mut dqs).unwrap();
    let d = p.dual_quats().expect("a DQ palette");
    assert!(d.is_rigid() && d.len() == 2);
    for (a, b) in d.dual_quats().iter().zip(&dqs) {
        assert!((a.as_ref().real.coords - b.as_ref().real.coords).norm() < 1e-6);
    }
    assert!(p.update(&model[..1], &skin).is_err(), "a skin joint past the model matrices is an error");
    assert_eq!("DQ".parse::<SkinMethod>(), Ok(SkinMethod::Dq));
    assert_eq!(SkinMethod::Lbs.to_string(), "lbs");
    assert!("skew".parse::<SkinMethod>().is_err());
}
