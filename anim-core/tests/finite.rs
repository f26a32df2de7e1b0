//! Finite input gives finite output: the extreme but finite values of issue 11 through the
//! whole pipeline (clip → pose → model matrices → palette → skinned vertices), each checked
//! for finiteness and against the value it must have.

use anim_core::clip::TimePolicy;
use anim_core::clip::{Clip, Interpolation, JointTracks, Track};
use anim_core::pose::{JointDesc, Skeleton};
use anim_core::skin::skinning;
use anim_core::skin::skinning::{NormalMode, SkinningInput, SkinningOutput};
use anim_core::skin::{Influences, Palette, Skin, SkinMethod};
use anim_math::{Mat4, Quat, Transform, Vec3};

fn finite(v: &Vec3) -> bool {
    v.iter().all(|x| x.is_finite())
}

/// One joint with `rest`, bound with the identity inverse bind, skinning one vertex at
/// `p` with normal `n` with `method` (and `mode` for LBS). Returns position and normal.
fn skin_one(rest: Transform, method: SkinMethod, mode: NormalMode, p: Vec3, n: Vec3) -> (Vec3, Vec3) {
    let skeleton = Skeleton::new(vec![JointDesc::new("j", None, rest)]).unwrap();
    let skin = Skin::new(vec![0], vec![Mat4::identity()], &skeleton).unwrap();
    let mut model = vec![Mat4::identity()];
    skeleton.rest_pose().local_to_model(&skeleton, &mut model).unwrap();
    let mut palette = Palette::new(method);
    palette.update(&model, &skin).unwrap();
    let inf = Influences::new(2, vec![0, 0], vec![0.5, 0.5], 1).unwrap();
    let (pos, nrm) = ([p], [n]);
    let (mut op, mut on) = ([Vec3::zeros()], [Vec3::zeros()]);
    skinning::skin(
        &SkinningInput { influences: &inf, positions: &pos, normals: Some(&nrm) },
        &palette,
        mode,
        &mut SkinningOutput { positions: &mut op, normals: Some(&mut on) },
    )
    .unwrap();
    (op[0], on[0])
}

/// A constant 3e38 translation (with a rotation, as a real rest pose has) skins to
/// rotation·p + t with LBS and DQ alike.
#[test]
fn huge_translation_skins_finitely_with_lbs_and_dq() {
    let big = 3e38f32;
    let rot = Quat::from_euler_angles(0.4, -0.7, 1.2);
    let t = Vec3::new(big, -big, big);
    let rest = Transform::new(t, rot, Vec3::repeat(1.0));
    let (p, n) = (Vec3::new(1.0, 2.0, 3.0), Vec3::new(0.0, 0.6, 0.8));
    for method in SkinMethod::ALL {
        let (sp, sn) = skin_one(rest, method, NormalMode::Direct, p, n);
        assert!(finite(&sp) && finite(&sn), "{method}: {sp} {sn}");
        // rotation·p is far below the ulp of 3e38: the position is the translation.
        assert!((sp - t).amax() <= 1e-6 * big, "{method}: {sp}");
        assert!((sn - rot * n).norm() < 1e-5, "{method}: {sn}");
    }
}

/// Scale 1e20 (and 1e-20): normals stay finite and unit, pointing where the exact inverse
/// transpose sends them, with LBS (both normal modes) and DQ.
#[test]
fn extreme_scale_gives_finite_unit_normals() {
    let rot = Quat::from_euler_angles(0.3, 0.2, -0.5);
    for k in [1e20f32, 1e-20, 1e38] {
        let scale = Vec3::new(k, 2.0 * k, 0.5 * k);
        let rest = Transform::new(Vec3::new(1.0, 0.0, 0.0), rot, scale);
        let p = Vec3::new(1.0, -1.0, 0.5);
        let n = Vec3::new(1.0, 1.0, 1.0).normalize();
        // Inverse transpose of R·S is R·S⁻¹: for the direction, S⁻¹ ∝ diag(1, 1/2, 2).
        let it = (rot * Vec3::new(n.x, n.y / 2.0, n.z * 2.0)).normalize();
        let direct = (rot * Vec3::new(n.x, 2.0 * n.y, 0.5 * n.z)).normalize();
        let expect_p = rot * Vec3::new(p.x * k, p.y * 2.0 * k, p.z * 0.5 * k) + rest.translation;
        for (method, mode, want) in [
            (SkinMethod::Lbs, NormalMode::Direct, direct),
            (SkinMethod::Lbs, NormalMode::InverseTranspose, it),
            (SkinMethod::Dq, NormalMode::Direct, it),
        ] {
            let (sp, sn) = skin_one(rest, method, mode, p, n);
            assert!(finite(&sp) && finite(&sn), "scale {k} {method} {mode:?}: {sp} {sn}");
            assert!((sn - want).norm() < 1e-4, "scale {k} {method} {mode:?}: {sn} vs {want}");
            if k < 1e30 {
                assert!((sp - expect_p).norm() <= 1e-5 * expect_p.norm().max(1.0), "scale {k} {method}: {sp}");
            }
        }
    }
}

/// Keys alternating ±3e38 through a clip: at the keys the pose holds the key exactly, and
/// between them a finite value; skinned (LBS and DQ) the vertex follows it.
#[test]
fn alternating_huge_keys_through_a_clip() {
    let big = 3e38f32;
    let keys = vec![Vec3::new(big, 0.0, 0.0), Vec3::new(-big, 0.0, 0.0), Vec3::new(big, 0.0, 0.0)];
    let mut jt = JointTracks::new(0);
    jt.translation = Some(Track::new(Interpolation::Linear, vec![0.0, 1.0, 2.0], keys.clone()).unwrap());
    let clip = Clip::new("c", vec![jt], vec![]).unwrap();
    let skeleton = Skeleton::new(vec![JointDesc::new("j", None, Transform::IDENTITY)]).unwrap();
    let mut pose = skeleton.rest_pose().clone();
    for (time, want) in [(0.0f32, keys[0].x), (1.0, keys[1].x), (2.0, keys[2].x), (0.5, 0.0), (1.25, -0.5 * big)] {
        clip.sample(time, TimePolicy::Clamp, &mut pose).unwrap();
        let x = pose.locals()[0].translation.x;
        assert!(x.is_finite() && (x - want).abs() <= 1e-6 * big, "t={time}: {x}");
        for method in SkinMethod::ALL {
            let (sp, _) = skin_one(pose.locals()[0], method, NormalMode::Direct, Vec3::zeros(), Vec3::z());
            assert!(finite(&sp) && (sp.x - want).abs() <= 1e-6 * big, "{method} t={time}: {sp}");
        }
    }
}
