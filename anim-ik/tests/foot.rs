//! Ground queries and foot grounding on sloped ground.

mod common;

use anim_core::clip::{Clip, Interpolation, ScalarCurve, Track};
use anim_ik::{
    CcdSolver, FootGrounding, FootSettings, GroundQuery, HeightField, IkError, Leg, LegSolver, TriangleMesh,
    ray_triangle,
};
use anim_math::{Quat, Transform, Vec3};
use common::{Rng, legs};

/// The plane y = 0.25·x − 0.1·z + 0.05.
fn slope(x: f32, z: f32) -> f32 {
    0.25 * x - 0.1 * z + 0.05
}

fn slope_normal() -> Vec3 {
    Vec3::new(-0.25, 1.0, 0.1).normalize()
}

#[test]
fn moller_trumbore_by_hand() {
    let (a, b, c) = (Vec3::new(0.0, 0.0, 0.0), Vec3::new(2.0, 0.0, 0.0), Vec3::new(0.0, 0.0, 2.0));
    let down = -Vec3::y();
    assert_eq!(ray_triangle(&Vec3::new(0.5, 3.0, 0.5), &down, &a, &b, &c, 10.0), Some(3.0));
    assert_eq!(ray_triangle(&Vec3::new(1.5, 3.0, 1.5), &down, &a, &b, &c, 10.0), None, "outside the hypotenuse");
    assert_eq!(ray_triangle(&Vec3::new(0.5, 3.0, 0.5), &down, &a, &b, &c, 2.0), None, "beyond max distance");
    assert_eq!(ray_triangle(&Vec3::new(0.5, -1.0, 0.5), &down, &a, &b, &c, 10.0), None, "behind the origin");
}

#[test]
fn height_field_and_mesh_match_the_analytic_plane() {
    let hf = HeightField::from_fn(-4.0, -4.0, 0.5, 17, 17, slope).unwrap();
    // The same plane as a two-triangle mesh.
    let corners = [(-4.0, -4.0), (4.0, -4.0), (4.0, 4.0), (-4.0, 4.0)];
    let positions = corners.iter().map(|&(x, z)| Vec3::new(x, slope(x, z), z)).collect();
    let mesh = TriangleMesh::new(positions, vec![[0, 1, 2], [0, 2, 3]]).unwrap();
    let n = slope_normal();
    let mut rng = Rng(42);
    for i in 0..2000 {
        let origin = Vec3::new(rng.range(-3.0, 3.0), rng.range(2.0, 4.0), rng.range(-3.0, 3.0));
        // Vertical rays and slanted ones (the height field walks cells for those).
        let dir = if i % 2 == 0 {
            -Vec3::y()
        } else {
            Vec3::new(rng.range(-1.0, 1.0), -rng.range(0.3, 1.0), rng.range(-1.0, 1.0)).normalize()
        };
        // Analytic: (origin + t·dir − p0)·n = 0 with p0 on the plane.
        let p0 = Vec3::new(0.0, slope(0.0, 0.0), 0.0);
        let t = (p0 - origin).dot(&n) / dir.dot(&n);
        let hit_point = origin + dir * t;
        let inside = hit_point.x.abs() < 3.99 && hit_point.z.abs() < 3.99;
        for (name, g) in [("height field", &hf as &dyn GroundQuery), ("mesh", &mesh as &dyn GroundQuery)] {
            match g.raycast(&origin, &dir, 100.0) {
                Some(h) => {
                    assert!(inside || hit_point.x.abs() < 4.01 && hit_point.z.abs() < 4.01);
                    assert!((h.distance - t).abs() < 1e-3, "{name}: {} vs {t}", h.distance);
                    assert!((h.point - hit_point).norm() < 1e-3);
                    assert!((h.normal - n).norm() < 1e-4, "{name} normal");
                }
                None => assert!(!inside, "{name} missed a hit at {hit_point:?}"),
            }
            assert!(g.raycast(&origin, &dir, t - 0.01).is_none(), "{name}: hit past max distance");
        }
    }
    assert!((hf.height(1.0, 2.0).unwrap() - slope(1.0, 2.0)).abs() < 1e-5);
    assert!(hf.height(10.0, 0.0).is_none());
    assert!(hf.raycast(&Vec3::new(0.0, 1.0, f32::NAN), &-Vec3::y(), 5.0).is_none());
    assert!(matches!(HeightField::new(0.0, 0.0, 1.0, 2, 2, vec![0.0; 3]), Err(IkError::WrongLength(_))));
    assert!(matches!(
        TriangleMesh::new(vec![Vec3::zeros()], vec![[0, 0, 1]]),
        Err(IkError::VertexOutOfRange { triangle: 0, vertex: 1, count: 1 })
    ));
}

fn grounding(solver: LegSolver) -> (anim_core::pose::Skeleton, FootGrounding) {
    let s = legs();
    let leg = |side: &str| Leg {
        hip: s.find(&format!("hip_{side}")).unwrap(),
        knee: s.find(&format!("knee_{side}")).unwrap(),
        ankle: s.find(&format!("ankle_{side}")).unwrap(),
        toe: s.find(&format!("toe_{side}")).unwrap(),
        contact_curve: format!("foot_contact_{side}"),
    };
    let settings = FootSettings { ankle_height: 0.08, toe_height: 0.03, solver, ..FootSettings::default() };
    let g = FootGrounding::new(&s, vec![leg("l"), leg("r")], settings).unwrap();
    (s, g)
}

/// Distance at which the iterative leg solvers stop.
const THRESHOLD: f32 = 1e-4;

/// How far a planted ankle may end from its ankle height above the slope.
///
/// Each solver stops as soon as the ankle is within [`THRESHOLD`] of its target, or when its
/// iterations run out. Given iterations enough to stop at the threshold (below), the ankle
/// ends within `d ≤ THRESHOLD` of a target that is exactly `ankle_height` above the ground
/// under it (the ground point plus 0.08 up: rounding only, about 1e-7 here). Its height
/// above the slope then differs from 0.08 by at most `d · |(−0.25, 1, 0.1)|`, the gradient
/// of `y − slope(x, z)` (the ankle may be off the target sideways, where the ground is
/// higher or lower), that is `1.036 · THRESHOLD`, plus rounding. Two-bone IK is exact: its
/// ankle is on the target within rounding (measured: 6.4e-6).
///
/// Iterations enough: CCD shortens a nearly straight leg by about a factor `cos β` a sweep,
/// `β` the angle at the ankle between the shin and the hip–target line, near 1 while the
/// leg is almost straight; the knees here start bent by up to 0.09 rad one way or 0.21 the
/// other (the rest bend and the animation's turn), so some legs start straight. Of these
/// 100 stances the slowest needs between 700 and 1,000 sweeps (with 100, 38 legs ended
/// short, the worst by 1.9 cm) and FABRIK between 100 and 300; 2,000 leaves a margin of two.
const ANKLE_TOLERANCE: f32 = 1.036 * THRESHOLD + 1e-6;

#[test]
fn planted_feet_end_on_a_sloped_height_field() {
    let hf = HeightField::from_fn(-4.0, -4.0, 0.25, 33, 33, slope).unwrap();
    let n = slope_normal();
    for solver in [
        LegSolver::TwoBone,
        LegSolver::Fabrik { iterations: 2000, threshold: THRESHOLD },
        LegSolver::Ccd(CcdSolver::new(2000, THRESHOLD)),
    ] {
        let (s, mut g) = grounding(solver);
        let mut rng = Rng(8);
        for _ in 0..50 {
            // The character stands somewhere, turned some way, its root on the ground
            // under its pelvis; the animation bends the knees a little.
            let (x, z) = (rng.range(-2.0, 2.0), rng.range(-2.0, 2.0));
            let yaw = rng.range(-3.0, 3.0);
            let mut placement = Transform::new(
                Vec3::new(x, slope(x, z), z),
                Quat::from_axis_angle(&Vec3::y_axis(), yaw),
                Vec3::repeat(1.0),
            );
            let start_y = placement.translation.y;
            let mut pose = s.rest_pose().clone();
            for name in ["knee_l", "knee_r"] {
                let k = s.find(name).unwrap();
                pose.locals_mut()[k].rotation = Quat::from_axis_angle(&Vec3::x_axis(), rng.range(-0.3, 0.0));
            }
            let offset = g.apply(&s, &mut pose, &mut placement, &[1.0, 1.0], &hf).unwrap();
            assert!((placement.translation.y - start_y - offset).abs() < 1e-6);
            for (leg, report) in g.legs().zip(g.reports()) {
                // Measured from the pose, not from the report.
                let ankle = placement.combine(&pose.global(&s, leg.ankle).unwrap()).translation;
                let toe = placement.combine(&pose.global(&s, leg.toe).unwrap()).translation;
                assert!((ankle - report.ankle).norm() < 1e-4 && (toe - report.toe).norm() < 1e-4);
                let above = ankle.y - slope(ankle.x, ankle.z);
                let target_above = report.target.y - slope(report.target.x, report.target.z);
                assert!((target_above - 0.08).abs() < 1e-6, "{solver:?}: target {target_above} above the ground");
                let d = (ankle - report.target).norm();
                assert!(d < THRESHOLD, "{solver:?}: ankle {d} from its target");
                assert!((above - 0.08).abs() < ANKLE_TOLERANCE, "{solver:?}: ankle {above} above the ground");
                // The toe ray laid the foot along the slope: toe at toe height off the plane.
                let p0 = Vec3::new(toe.x, slope(toe.x, toe.z), toe.z);
                let toe_above = (toe - p0).dot(&n);
                assert!((toe_above - 0.03).abs() < 2e-3, "{solver:?}: toe {toe_above} off the ground");
            }
        }
    }
}

#[test]
fn the_lower_target_sets_the_height_and_lifted_feet_stay_animated() {
    // Ground rising along +x: the left foot (x = −0.1) has the lower ground.
    let hf = HeightField::from_fn(-2.0, -2.0, 0.25, 17, 17, |x, _| 0.3 * x).unwrap();
    let (s, mut g) = grounding(LegSolver::TwoBone);
    let mut pose = s.rest_pose().clone();
    let mut placement = Transform::IDENTITY;
    let offset = g.apply(&s, &mut pose, &mut placement, &[1.0, 1.0], &hf).unwrap();
    // Rest ankles sit 0.08 above y = 0; the left ground is at −0.03, the right at +0.03.
    assert!((offset + 0.03).abs() < 1e-4, "{offset}");
    let r: Vec<_> = g.reports().copied().collect();
    assert!((r[0].ankle.y - (-0.03 + 0.08)).abs() < 1e-3);
    assert!((r[1].ankle.y - (0.03 + 0.08)).abs() < 1e-3);
    // The left leg kept its animated hip–ankle distance (0.92 in the rest pose: its
    // target was exactly reachable); the right one bent to be 0.06 shorter.
    let l_hip = placement.combine(&pose.global(&s, s.find("hip_l").unwrap()).unwrap()).translation;
    let r_hip = placement.combine(&pose.global(&s, s.find("hip_r").unwrap()).unwrap()).translation;
    assert!(((l_hip - r[0].ankle).norm() - 0.92).abs() < 1e-3);
    assert!(((r_hip - r[1].ankle).norm() - 0.86).abs() < 1e-3);

    // A foot in the air (contact 0) over ground well below it keeps its animated position.
    let flat_low = HeightField::from_fn(-2.0, -2.0, 0.5, 9, 9, |_, _| -0.3).unwrap();
    let mut pose = s.rest_pose().clone();
    let mut placement = Transform::IDENTITY;
    g.apply(&s, &mut pose, &mut placement, &[0.0, 1.0], &flat_low).unwrap();
    let r: Vec<_> = g.reports().copied().collect();
    assert!((r[0].ankle - Vec3::new(-0.1, 0.08 - 0.3, 0.0)).norm() < 1e-3, "lifted foot follows the animation");
    assert!((r[1].ankle.y - (-0.3 + 0.08)).abs() < 1e-3, "planted foot on the ground");
    // A lifted foot pushed into raised ground is clamped above it.
    let high = HeightField::from_fn(-2.0, -2.0, 0.5, 9, 9, |_, _| 0.2).unwrap();
    let mut pose = s.rest_pose().clone();
    let mut placement = Transform::IDENTITY;
    g.settings_mut().adjust_root = false;
    g.apply(&s, &mut pose, &mut placement, &[0.0, 0.0], &high).unwrap();
    for r in g.reports() {
        assert!((r.ankle.y - 0.28).abs() < 1e-3);
    }
}

#[test]
fn contacts_come_from_clip_curves() {
    let (_, g) = grounding(LegSolver::TwoBone);
    let curve = |name: &str, v: [f32; 2]| ScalarCurve {
        name: name.into(),
        track: Track::new(Interpolation::Linear, vec![0.0, 1.0], v.to_vec()).unwrap(),
    };
    let clip =
        Clip::new("walk", vec![], vec![curve("foot_contact_l", [1.0, 0.0]), curve("foot_contact_r", [0.0, 1.0])])
            .unwrap();
    let mut c = [0.0; 2];
    g.sample_contacts(&clip, 0.25, anim_core::clip::TimePolicy::Wrap, &mut c).unwrap();
    assert_eq!(c, [0.75, 0.25]);
    g.sample_contacts(&clip, 1.75, anim_core::clip::TimePolicy::Wrap, &mut c).unwrap();
    assert_eq!(c, [0.25, 0.75]);
    let bare = Clip::new("idle", vec![], vec![]).unwrap();
    g.sample_contacts(&bare, 0.5, anim_core::clip::TimePolicy::Wrap, &mut c).unwrap();
    assert_eq!(c, [1.0, 1.0]);
    assert!(matches!(
        g.sample_contacts(&clip, 0.0, anim_core::clip::TimePolicy::Wrap, &mut [0.0; 3]),
        Err(IkError::WrongLength(_))
    ));
}
