//! CCD and FABRIK: reaching, stretching, constraints (angles measured from positions),
//! and no NaN over 100,000+ random and degenerate goals.

mod common;

use anim_core::pose::Pose;
use anim_ik::{CcdSolver, Constraint, FabrikSolver, IkChain, IkError, aim, solve_two_bone};
use anim_math::{Quat, Transform, Vec3, quat};
use common::{Rng, legs, t};

/// A chain of `lengths.len()` bones along +y under a rotated, offset root, with a little
/// bend so it is not degenerate, plus the end joint.
fn chain(lengths: &[f32], rng: &mut Rng) -> IkChain {
    let root = Transform::new(
        Vec3::new(rng.range(-1.0, 1.0), rng.range(-1.0, 1.0), rng.range(-1.0, 1.0)),
        Quat::from_euler_angles(rng.range(-3.0, 3.0), rng.range(-3.0, 3.0), rng.range(-3.0, 3.0)),
        Vec3::repeat(1.0),
    );
    let mut locals = vec![Transform::from_rotation(Quat::from_euler_angles(0.1, 0.0, 0.1))];
    for &l in lengths {
        locals.push(Transform::new(
            Vec3::new(0.0, l, 0.0),
            Quat::from_euler_angles(0.15, -0.1, 0.2),
            Vec3::repeat(1.0),
        ));
    }
    IkChain::from_transforms(root, locals).unwrap()
}

fn positions(c: &IkChain) -> Vec<Vec3> {
    c.worlds().iter().map(|w| w.translation).collect()
}

fn check_lengths(c: &IkChain, lengths: &[f32]) {
    let p = positions(c);
    for (i, l) in lengths.iter().enumerate() {
        assert!(((p[i + 1] - p[i]).norm() - l).abs() < 1e-4 * (1.0 + l), "bone {i} changed length");
    }
}

#[test]
fn reachable_random_targets_are_reached() {
    let mut rng = Rng(0x1234_5678);
    // Given enough iterations both solvers reach every reachable goal; with the book's
    // default 15 iterations nearly all come within 1 cm (FABRIK converges slowly when a
    // goal folds the chain back on itself, CCD when it must uncurl).
    let ccd = CcdSolver::new(400, 1e-3);
    let mut fabrik = FabrikSolver::new(400, 1e-3);
    let (mut ccd_quick, mut fabrik_quick) = (0, 0);
    let trials = 300;
    for trial in 0..trials {
        let n = if trial % 2 == 0 { 3 } else { 6 };
        let lengths: Vec<f32> = (0..n).map(|_| rng.range(0.7, 1.3)).collect();
        let total: f32 = lengths.iter().sum();
        let start = chain(&lengths, &mut rng);
        let base = start.worlds()[0].translation;
        let goal = base + rng.dir() * total * rng.range(0.3, 0.9);
        let mut a = start.clone();
        let r = ccd.solve(&mut a, &goal).unwrap();
        check_lengths(&a, &lengths);
        assert!(((a.end_position() - goal).norm() - r.distance).abs() < 1e-5);
        assert!(r.solved, "CCD trial {trial}: distance {}", r.distance);
        let mut b = start.clone();
        let r = fabrik.solve(&mut b, &goal).unwrap();
        check_lengths(&b, &lengths);
        assert!(r.solved, "FABRIK trial {trial}: distance {}", r.distance);
        assert!((b.end_position() - goal).norm() < 1e-3);
        assert!((b.worlds()[0].translation - base).norm() < 1e-5, "base moved");
        let mut a = start.clone();
        ccd_quick += (CcdSolver::new(15, 1e-2).solve(&mut a, &goal).unwrap().solved) as usize;
        let mut b = start.clone();
        fabrik_quick += (FabrikSolver::new(15, 1e-2).solve(&mut b, &goal).unwrap().solved) as usize;
    }
    println!("within 1 cm after 15 iterations: CCD {ccd_quick}/{trials}, FABRIK {fabrik_quick}/{trials}");
    assert!(ccd_quick >= trials * 85 / 100, "CCD, 15 iterations: {ccd_quick}/{trials}");
    assert!(fabrik_quick >= trials * 9 / 10, "FABRIK, 15 iterations: {fabrik_quick}/{trials}");
}

#[test]
fn ccd_reports_iterations_and_early_exit() {
    let mut rng = Rng(99);
    let mut c = chain(&[1.0, 1.0], &mut rng);
    let end = c.end_position();
    let r = CcdSolver::default().solve(&mut c, &end).unwrap();
    assert_eq!((r.solved, r.iterations), (true, 0));
    let goal = c.worlds()[0].translation + Vec3::new(0.5, 0.5, 0.5);
    let r = CcdSolver::new(15, 1e-3).solve(&mut c, &goal).unwrap();
    assert!(r.solved && r.iterations >= 1 && r.iterations <= 15, "{r:?}");
    assert!(r.distance < 1e-3);
}

#[test]
fn unreachable_goals_leave_the_chain_straight_towards_them() {
    let mut rng = Rng(7);
    for trial in 0..200 {
        let lengths: Vec<f32> = (0..4).map(|_| rng.range(0.5, 1.0)).collect();
        let total: f32 = lengths.iter().sum();
        let mut c = chain(&lengths, &mut rng);
        let base = c.worlds()[0].translation;
        let dir = rng.dir();
        let goal = base + dir * total * rng.range(1.05, 3.0);
        let r = FabrikSolver::default().solve(&mut c, &goal).unwrap();
        assert!(!r.solved);
        assert!((r.distance - ((goal - base).norm() - total)).abs() < 1e-3, "trial {trial}");
        let mut along = 0.0;
        for (i, p) in positions(&c).iter().enumerate() {
            let expected = base + dir * along;
            assert!((p - expected).norm() < 1e-3, "FABRIK joint {i} off the line");
            along += lengths.get(i).copied().unwrap_or(0.0);
        }
        // CCD stretches towards the goal too (it converges to the line; allow a little slack).
        let mut c = chain(&lengths, &mut rng);
        let base = c.worlds()[0].translation;
        let goal = base + dir * total * 2.0;
        CcdSolver::new(40, 1e-4).solve(&mut c, &goal).unwrap();
        for w in positions(&c).windows(2) {
            let seg = w[1] - w[0];
            assert!(quat::angle_between(&seg, &dir) < 0.05, "CCD segment not towards the goal");
        }
    }
}

/// Measures every constraint of `c` from world positions and rotations.
fn assert_constraints_hold(c: &IkChain, ball_refs: &[Option<Vec3>]) {
    let p = positions(c);
    for (i, con) in c.constraints().iter().enumerate() {
        if i + 1 >= c.len() {
            continue;
        }
        let parent = if i == 0 { *c.root() } else { c.worlds()[i - 1] };
        let bone = p[i + 1] - p[i];
        match *con {
            Constraint::Free => {}
            Constraint::BallSocket { max_angle, .. } => {
                let reference = match ball_refs[i] {
                    Some(r) => parent.rotation * r,
                    None => p[i] - p[i - 1],
                };
                let a = quat::angle_between(&bone, &reference);
                assert!(a <= max_angle + 2e-3, "ball joint {i}: {a} > {max_angle}");
            }
            Constraint::Hinge { axis, reference, limits } => {
                let h = parent.rotation * axis.into_inner();
                let rest = parent.rotation * (reference * c.locals()[i + 1].translation);
                assert!((bone.dot(&h) - rest.dot(&h)).abs() < 2e-3 * bone.norm(), "hinge joint {i} left its plane");
                let (lo, hi) = limits.unwrap();
                let angle = h.dot(&rest.cross(&bone)).atan2(rest.dot(&bone));
                assert!(angle >= lo - 2e-3 && angle <= hi + 2e-3, "hinge joint {i}: {angle} outside [{lo}, {hi}]");
            }
        }
    }
}

#[test]
fn constraints_hold_after_every_solve() {
    let mut rng = Rng(0xBEEF);
    let mut fabrik = FabrikSolver::new(20, 1e-3);
    for trial in 0..300 {
        let lengths = [0.6, 0.5, 0.5, 0.4, 0.3];
        let mut c = chain(&lengths, &mut rng);
        let limit = rng.range(0.2, 0.8);
        let mut refs = vec![None; c.len()];
        refs[0] = Some(Vec3::y());
        c.set_constraint(0, Constraint::BallSocket { max_angle: 1.0, reference: Some(Vec3::y()) }).unwrap();
        for i in [1, 3, 4] {
            c.set_constraint(i, Constraint::ball(limit)).unwrap();
        }
        let knee_ref = c.locals()[2].rotation;
        c.set_constraint(2, Constraint::hinge(Vec3::x(), knee_ref, Some((-1.5, 0.3))).unwrap()).unwrap();
        let goal = c.worlds()[0].translation + rng.dir() * rng.range(0.2, 3.0);
        let mut d = c.clone();
        if trial % 2 == 0 {
            CcdSolver::new(10, 1e-3).solve(&mut c, &goal).unwrap();
            assert_constraints_hold(&c, &refs);
        }
        fabrik.solve(&mut d, &goal).unwrap();
        assert_constraints_hold(&d, &refs);
        check_lengths(&d, &lengths);
    }
}

#[test]
fn constraint_projection_by_hand() {
    // Ball: a bone 90° off its reference, limited to 30°, ends exactly 30° off, in the same plane.
    let ball = Constraint::ball(30f32.to_radians());
    let r = Quat::from_axis_angle(&Vec3::z_axis(), std::f32::consts::FRAC_PI_2);
    let limited = ball.apply(r, &Vec3::y(), &Vec3::y());
    let d = limited * Vec3::y();
    assert!((quat::angle_between(&d, &Vec3::y()) - 30f32.to_radians()).abs() < 1e-5);
    assert!(d.z.abs() < 1e-6 && d.x < 0.0);
    // Within the limit nothing changes.
    let small = Quat::from_axis_angle(&Vec3::z_axis(), 0.2);
    assert_eq!(ball.apply(small, &Vec3::y(), &Vec3::y()), small);
    // Hinge about x: a twist about y is removed, a 1.0 rad bend about x is clamped to 0.5.
    let hinge = Constraint::hinge(Vec3::x(), Quat::identity(), Some((-0.5, 0.5))).unwrap();
    let q = Quat::from_axis_angle(&Vec3::y_axis(), 0.7) * Quat::from_axis_angle(&Vec3::x_axis(), 1.0);
    let out = hinge.apply(q, &Vec3::y(), &Vec3::y());
    assert!(out.angle_to(&Quat::from_axis_angle(&Vec3::x_axis(), 0.5)) < 1e-5);
    assert!(matches!(Constraint::hinge(Vec3::zeros(), Quat::identity(), None), Err(IkError::InvalidSetting { .. })));
    assert!(matches!(
        Constraint::hinge(Vec3::x(), Quat::identity(), Some((1.0, -1.0))),
        Err(IkError::InvalidSetting { .. })
    ));
}

fn finite(c: &IkChain) -> bool {
    c.locals().iter().all(Transform::is_finite) && c.worlds().iter().all(Transform::is_finite)
}

#[test]
fn no_nan_over_100k_random_and_degenerate_goals() {
    let mut rng = Rng(0xC0FFEE);
    let ccd = CcdSolver::new(3, 1e-4);
    let mut fabrik = FabrikSolver::new(3, 1e-4);
    let mut checked = 0usize;
    let mut chains = Vec::new();
    for k in 0..16 {
        // Some chains have zero-length bones (first, middle, last, all).
        let lengths: Vec<f32> = match k % 4 {
            0 => vec![1.0, 0.0, 0.8],
            1 => vec![0.0, 0.5, 0.5],
            2 => vec![0.0, 0.0, 0.0],
            _ => vec![0.7, 0.6, 0.0],
        };
        let mut c = chain(&lengths, &mut rng);
        if k >= 8 {
            for i in 0..c.len() - 1 {
                c.set_constraint(i, Constraint::ball(rng.range(0.0, 1.0))).unwrap();
            }
            let r = c.locals()[1].rotation;
            c.set_constraint(1, Constraint::hinge(rng.dir(), r, Some((-1.0, 1.0))).unwrap()).unwrap();
        }
        chains.push(c);
    }
    for i in 0..25_000 {
        let c = &chains[i % chains.len()];
        let base = c.worlds()[0].translation;
        let joint = c.worlds()[i % c.len()].translation;
        let goal = match i % 8 {
            0 => base,
            1 => joint,
            2 => base + rng.dir() * 1e-7,
            3 => base + rng.dir() * 1e5,
            4 => c.end_position(),
            _ => base + rng.dir() * rng.range(0.0, 4.0),
        };
        let mut a = c.clone();
        ccd.solve(&mut a, &goal).unwrap();
        assert!(finite(&a), "CCD produced NaN for goal {goal:?}");
        let mut b = c.clone();
        fabrik.solve(&mut b, &goal).unwrap();
        assert!(finite(&b), "FABRIK produced NaN for goal {goal:?}");
        // Two-bone and aim on the same degenerate material.
        let l = c.locals();
        let (mut up, mut mid) = (l[0], l[1]);
        solve_two_bone(c.root(), &mut up, &mut mid, &l[2].translation, &goal, Some(&rng.dir())).unwrap();
        assert!(up.is_finite() && mid.is_finite(), "two-bone produced NaN");
        let mut j = l[1];
        aim(&c.worlds()[0], &mut j, &goal, &Vec3::y(), &Vec3::z(), &Vec3::y()).unwrap();
        assert!(j.is_finite(), "aim produced NaN");
        checked += 4;
    }
    assert!(checked >= 100_000);
    // Non-finite goals are errors, and leave the chain alone.
    let mut c = chains[0].clone();
    let before = c.locals().to_vec();
    for bad in [Vec3::new(f32::NAN, 0.0, 0.0), Vec3::new(0.0, f32::INFINITY, 0.0)] {
        assert_eq!(ccd.solve(&mut c, &bad), Err(IkError::NonFinite { what: "goal" }));
        assert_eq!(fabrik.solve(&mut c, &bad), Err(IkError::NonFinite { what: "goal" }));
    }
    assert_eq!(c.locals(), &before[..]);
}

#[test]
fn chains_read_and_write_poses() {
    let s = legs();
    let (hip, knee, ankle) = (s.find("hip_l").unwrap(), s.find("knee_l").unwrap(), s.find("ankle_l").unwrap());
    let mut pose: Pose = s.rest_pose().clone();
    let placement = t(3.0, 0.0, -1.0);
    let mut c = IkChain::from_pose(&s, &pose, &[hip, knee, ankle], &placement).unwrap();
    // The chain's end sits where the pose puts the ankle in the world.
    let ankle_world = placement.combine(&pose.global(&s, ankle).unwrap()).translation;
    assert!((c.end_position() - ankle_world).norm() < 1e-6);
    let goal = ankle_world + Vec3::new(0.0, 0.3, 0.2);
    let r = FabrikSolver::new(30, 1e-4).solve(&mut c, &goal).unwrap();
    assert!(r.solved);
    c.write_pose(&mut pose).unwrap();
    let after = placement.combine(&pose.global(&s, ankle).unwrap()).translation;
    assert!((after - goal).norm() < 1e-4);
    // The right leg was not touched.
    let r_hip = s.find("hip_r").unwrap();
    assert_eq!(pose.locals()[r_hip], s.rest_pose().locals()[r_hip]);
    assert!(matches!(IkChain::from_pose(&s, &pose, &[hip, ankle], &placement), Err(IkError::NotAChain { .. })));
    assert!(matches!(IkChain::from_pose(&s, &pose, &[], &placement), Err(IkError::EmptyChain)));
    assert!(matches!(IkChain::from_pose(&s, &pose, &[99], &placement), Err(IkError::JointOutOfRange { .. })));
}

#[test]
fn limited_fabrik_twists_a_hinge_parent_to_face_the_goal() {
    // A ball (60° about +y) under a hinge about its parent's x axis: the hinge bends only
    // in the parent's y-z plane, so a goal off to the side (x) needs the ball joint to twist
    // about its bone first. Turning by the shortest arc never twists, and this goal is then
    // out of reach: only the straight chain would put the tip in the x-y plane.
    let locals = vec![Transform::IDENTITY, t(0.0, 1.0, 0.0), t(0.0, 1.0, 0.0)];
    let start = IkChain::from_transforms(Transform::IDENTITY, locals).unwrap();
    let mut refs = vec![None; 3];
    refs[0] = Some(Vec3::y());
    for goal in [Vec3::new(0.8, 1.2, 0.0), Vec3::new(-0.9, 1.1, 0.3), Vec3::new(1.1, 1.1, -0.3)] {
        let mut c = start.clone();
        c.set_constraint(0, Constraint::BallSocket { max_angle: 60f32.to_radians(), reference: Some(Vec3::y()) })
            .unwrap();
        c.set_constraint(1, Constraint::hinge(Vec3::x(), Quat::identity(), Some((-1.6, 1.6))).unwrap()).unwrap();
        let r = FabrikSolver::new(20, 1e-4).solve(&mut c, &goal).unwrap();
        assert!(r.solved, "goal {goal:?}: {r:?}");
        assert_constraints_hold(&c, &refs);
        check_lengths(&c, &[1.0, 1.0]);
    }
}
