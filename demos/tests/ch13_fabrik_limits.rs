//! FABRIK against CCD on the ch13 tentacle with its limits on: the scene's own chain,
//! constraints, iteration budget and target path (900 headless frames, 30 s), both solvers
//! warm-started from the previous frame as the scene does. FABRIK must come within 1 mm of
//! the target on at least as many frames as CCD, and every limit must hold after every
//! solve, measured here from the joints' world transforms rather than by the library.

use anim_math::{Vec3, quat};
use demos::app::HEADLESS_DT;
use demos::scenes::ch13_ccd::{self, BALL_CONE, ChainSolver, HINGE_JOINT, HINGE_LIMIT, JOINTS, ROOT_CONE, Tentacle};
use demos::scenes::ch13_fabrik;

/// Frames of the target path (30 s at the headless frame rate).
const FRAMES: usize = 900;
/// "Within 1 mm".
const REACHED: f32 = 1e-3;
/// Slack on every limit, radians (and on the hinge plane, as a fraction of the bone).
const LIMIT_TOLERANCE: f32 = 1e-3;

/// Checks every limit of the tentacle from world positions and the hinge parent's frame.
fn assert_limits_hold<S: ChainSolver>(t: &Tentacle<S>, frame: usize) {
    let w = t.chain.worlds();
    let bone = |i: usize| w[i + 1].translation - w[i].translation;
    for i in 0..JOINTS - 1 {
        let who = format!("{} frame {frame}, joint {i}", S::LABEL);
        let len = (bone(i).norm() - ch13_ccd::BONE_LENGTHS[i]).abs();
        assert!(len < 1e-4, "{who}: bone length off by {len}");
        if i == 0 {
            let up = t.chain.root().rotation * Vec3::y();
            let a = quat::angle_between(&up, &bone(0));
            assert!(a <= ROOT_CONE + LIMIT_TOLERANCE, "{who}: leans {a} > {ROOT_CONE}");
        } else if i == HINGE_JOINT {
            // In the parent's frame the hinge bone stays in the y-z plane (x is the axis),
            // turned at most HINGE_LIMIT from the parent's bone (+y).
            let local = w[i - 1].rotation.inverse() * bone(i);
            let off_plane = local.x.abs() / local.norm();
            assert!(off_plane < LIMIT_TOLERANCE, "{who}: hinge bone {local:?} leaves its plane");
            let theta = local.z.atan2(local.y);
            assert!(theta.abs() <= HINGE_LIMIT + LIMIT_TOLERANCE, "{who}: hinge at {theta} beyond {HINGE_LIMIT}");
        } else {
            let a = quat::angle_between(&bone(i - 1), &bone(i));
            assert!(a <= BALL_CONE + LIMIT_TOLERANCE, "{who}: bends {a} > {BALL_CONE}");
        }
    }
}

/// Runs the constrained tentacle along the path; returns the frames within 1 mm and the
/// worst distance.
fn frames_reached<S: ChainSolver>() -> (usize, f32) {
    let mut t = Tentacle::<S>::new(0.0).unwrap();
    assert!(t.constrained);
    let (mut reached, mut worst) = (0, 0.0f32);
    for frame in 0..FRAMES {
        let r = t.step(HEADLESS_DT).unwrap();
        let d = (t.chain.end_position() - t.target).norm();
        assert!((r.distance - d).abs() < 1e-5, "{} frame {frame}: reported {} but is {d}", S::LABEL, r.distance);
        reached += usize::from(d <= REACHED);
        worst = worst.max(d);
        assert_limits_hold(&t, frame);
    }
    (reached, worst)
}

#[test]
fn constrained_fabrik_reaches_the_path_as_often_as_ccd() {
    let (ccd, ccd_worst) = frames_reached::<ch13_ccd::Ccd>();
    let (fabrik, fabrik_worst) = frames_reached::<ch13_fabrik::Fabrik>();
    println!(
        "ch13 tentacle, limits on, {} iterations: frames within 1 mm of {FRAMES}: FABRIK {fabrik} (worst {:.3} mm), \
         CCD {ccd} (worst {:.3} mm)",
        ch13_ccd::ITERATIONS,
        fabrik_worst * 1e3,
        ccd_worst * 1e3
    );
    assert!(fabrik >= ccd, "FABRIK reached {fabrik} frames, CCD {ccd}");
}
