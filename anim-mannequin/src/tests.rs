//! The mannequin's invariants: skeleton, mesh, clips and their contact curves.

use super::*;
use crate::joints::*;
use anim_core::clip::TimePolicy;
use anim_core::pose::Pose;
use anim_core::skin::{Skin, palette, skinning};
use anim_math::Mat4;
use anim_math::Vec3;

fn world(m: &Mannequin, pose: &Pose) -> Vec<Mat4> {
    let mut out = vec![Mat4::identity(); m.skeleton.len()];
    pose.local_to_model(&m.skeleton, &mut out).unwrap();
    out
}

fn pos(m: &Mat4) -> Vec3 {
    Vec3::new(m[(0, 3)], m[(1, 3)], m[(2, 3)])
}

#[test]
fn skeleton_and_mesh_counts() {
    let m = build();
    assert_eq!(m.skeleton.len(), 22);
    for (i, n) in JOINT_NAMES.iter().enumerate() {
        assert_eq!(m.skeleton.find(n), Some(i));
    }
    assert!(m.mesh.vertex_count() >= 3000, "{}", m.mesh.vertex_count());
    assert_eq!(m.mesh.vertex_count(), 6542);
    assert_eq!(m.mesh.normals.len(), m.mesh.vertex_count());
    assert_eq!(m.mesh.indices.len() % 3, 0);
    let inf = m.mesh.influences.as_ref().unwrap();
    assert_eq!(inf.per_vertex(), 4);
    assert!(inf.unweighted().is_empty());
    let mut blended = 0;
    for ws in inf.weights().chunks_exact(4) {
        assert!((ws.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        blended += (ws.iter().filter(|w| **w > 0.0).count() > 1) as usize;
    }
    // Smooth weights: a good share of the vertices blend two bones.
    assert!(blended > 300, "{blended}");
    let (lo, hi) = m.mesh.bounds().unwrap();
    assert!(lo.y.abs() < 1e-4, "feet on the ground: min y = {}", lo.y);
    assert!((hi.y - HEIGHT).abs() < 0.02, "height {}", hi.y);
    for n in &m.mesh.normals {
        assert!((n.norm() - 1.0).abs() < 1e-4);
    }
    // Deterministic.
    assert_eq!(build().mesh, m.mesh);
}

#[test]
fn bind_pose_is_the_t_pose_rest_pose_relaxes_the_arms_feet_touch_ground() {
    let m = build();
    let skin = Skin::from_skeleton(&m.skeleton);
    let mut pal = vec![Mat4::identity(); skin.len()];
    // Bind pose: the palette is the identity (the mesh is modelled in it).
    let bind = world(&m, m.skeleton.bind_pose());
    palette::skinning_matrices(&bind, &skin, &mut pal).unwrap();
    for p in &pal {
        assert!((p - Mat4::identity()).abs().max() < 1e-6);
    }
    // Rest pose: the legs are the bind pose's, the hands hang below the shoulders.
    let rest = world(&m, m.skeleton.rest_pose());
    let l = m.leg(Side::Left);
    for w in [&bind, &rest] {
        assert!((pos(&w[l.ankle]).y - ANKLE_HEIGHT).abs() < 1e-6);
        assert!((pos(&w[l.toe]).y - BALL_HEIGHT).abs() < 1e-6);
    }
    for (shoulder, hand) in [(UPPERARM_L, HAND_L), (UPPERARM_R, HAND_R)] {
        assert!((pos(&bind[hand]).y - pos(&bind[shoulder]).y).abs() < 1e-6);
        assert!(pos(&rest[hand]).y < pos(&rest[shoulder]).y - 0.3, "the rest pose lowers the arms");
    }
}

#[test]
fn looping_clips_are_seamless() {
    let m = build();
    for name in ["idle", "walk", "run"] {
        let c = m.clip(name).unwrap();
        let mut a = m.skeleton.rest_pose().clone();
        let mut b = a.clone();
        c.sample(0.0, TimePolicy::Clamp, &mut a).unwrap();
        c.sample(c.duration(), TimePolicy::Clamp, &mut b).unwrap();
        for (x, y) in a.locals().iter().zip(b.locals()) {
            assert!((x.translation - y.translation).norm() < 1e-6, "{name}");
            assert!(x.rotation.angle_to(&y.rotation) < 1e-5, "{name}");
        }
    }
    for name in ["jump", "punch", "lean_left"] {
        assert!(m.clip(name).is_some());
    }
    assert_eq!(m.clip("lean_left").unwrap().key_times(), vec![0.0, 1.0]);
}

#[test]
fn foot_contact_agrees_with_foot_height() {
    let m = build();
    for name in ["walk", "run"] {
        let c = m.clip(name).unwrap();
        let cl = c.curve_index("foot_contact_l").unwrap();
        let cr = c.curve_index("foot_contact_r").unwrap();
        let (mut planted, mut lifted) = (0, 0);
        for k in 0..200 {
            let t = c.duration() * k as f32 / 200.0;
            let mut pose = m.skeleton.rest_pose().clone();
            c.sample(t, TimePolicy::Wrap, &mut pose).unwrap();
            let w = world(&m, &pose);
            for (side, curve) in [(Side::Left, cl), (Side::Right, cr)] {
                let ankle = pos(&w[m.leg(side).ankle]).y;
                let contact = c.sample_curve(curve, t, TimePolicy::Wrap).unwrap();
                if contact > 0.5 {
                    planted += 1;
                    assert!((ankle - ANKLE_HEIGHT).abs() < 0.005, "{name} t={t} {side:?}: planted ankle at {ankle}");
                } else {
                    // In the air: clearly above the ground somewhere in the middle of swing.
                    lifted += (ankle > ANKLE_HEIGHT + 0.03) as usize;
                }
            }
        }
        assert!(planted > 100 && lifted > 50, "{name}: {planted} planted, {lifted} lifted samples");
    }
}

#[test]
fn mesh_skins_without_tearing() {
    let m = build();
    let c = m.clip("walk").unwrap();
    let mut pose = m.skeleton.rest_pose().clone();
    c.sample(0.3, TimePolicy::Wrap, &mut pose).unwrap();
    let w = world(&m, &pose);
    let skin = Skin::from_skeleton(&m.skeleton);
    let mut pal = vec![Mat4::identity(); skin.len()];
    palette::skinning_matrices(&w, &skin, &mut pal).unwrap();
    let n = m.mesh.vertex_count();
    let mut out = vec![Vec3::zeros(); n];
    let input = skinning::SkinningInput {
        influences: m.mesh.influences.as_ref().unwrap(),
        positions: &m.mesh.positions,
        normals: None,
    };
    skinning::linear_blend(
        &input,
        &pal,
        skinning::NormalMode::Direct,
        &mut skinning::SkinningOutput { positions: &mut out, normals: None },
    )
    .unwrap();
    // No triangle edge stretches by more than a few centimetres.
    let mut worst = 0.0f32;
    for t in m.mesh.indices.chunks_exact(3) {
        for (a, b) in [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])] {
            let (a, b) = (a as usize, b as usize);
            let rest = (m.mesh.positions[a] - m.mesh.positions[b]).norm();
            let posed = (out[a] - out[b]).norm();
            worst = worst.max(posed - rest);
        }
    }
    assert!(worst < 0.05, "an edge stretched by {worst} m");
}
