//! The locomotion clips added after the original six: where they are, that planted feet
//! stay on the ground and in place once the character moves at the clip's travel velocity,
//! that sideways feet never cross, and the jump phases' contacts.

use anim_core::clip::{LoopMode, Playback, TimePolicy};
use anim_core::pose::Pose;
use anim_mannequin::{ANKLE_HEIGHT, Mannequin, Side};
use anim_math::{Transform, Vec3};

const ORIGINAL: [&str; 6] = ["idle", "walk", "run", "jump", "punch", "lean_left"];
const ADDED: [&str; 9] = [
    "walk_backward",
    "walk_left",
    "walk_right",
    "run_backward",
    "run_left",
    "run_right",
    "jump_takeoff",
    "jump_air",
    "jump_land",
];
const GAITS: [&str; 8] =
    ["walk", "run", "walk_backward", "walk_left", "walk_right", "run_backward", "run_left", "run_right"];

fn ankle(m: &Mannequin, pose: &Pose, side: Side) -> Vec3 {
    pose.global(&m.skeleton, m.leg(side).ankle).unwrap().translation
}

#[test]
fn added_clips_come_after_the_original_six() {
    let m = anim_mannequin::build();
    let names: Vec<&str> = m.clips.iter().map(|c| c.name()).collect();
    assert_eq!(names[..6], ORIGINAL);
    assert_eq!(names[6..], ADDED);
    let rm = m.root_motion_clips();
    assert_eq!(rm.iter().map(|c| c.name()).collect::<Vec<_>>(), names);
}

#[test]
fn travel_velocities_point_along_each_heading() {
    let m = anim_mannequin::build();
    // Analytic speeds: a planted foot slides 2·reach over the stance (stance · period).
    let expect = [
        ("walk", Vec3::z(), 2.0 * 0.22 / 0.5),
        ("run", Vec3::z(), 2.0 * 0.3 / (0.38 * 0.7)),
        ("walk_backward", -Vec3::z(), 2.0 * 0.2 / 0.5),
        ("walk_left", Vec3::x(), 2.0 * 0.14 / 0.5),
        ("walk_right", -Vec3::x(), 2.0 * 0.14 / 0.5),
        ("run_backward", -Vec3::z(), 2.0 * 0.22 / (0.38 * 0.7)),
        ("run_left", Vec3::x(), 2.0 * 0.18 / (0.38 * 0.7)),
        ("run_right", -Vec3::x(), 2.0 * 0.18 / (0.38 * 0.7)),
    ];
    for (name, dir, speed) in expect {
        let v = m.travel_velocity(name).unwrap_or_else(|| panic!("{name} travels"));
        // The pelvis's yaw swings the hips a little: within 5% of the analytic speed.
        assert!((v.norm() - speed).abs() < 0.05 * speed, "{name}: {v:?}, analytic {speed}");
        assert!(v.normalize().dot(&dir) > 0.995, "{name}: {v:?}");
    }
    for name in ["idle", "jump", "punch", "lean_left", "jump_takeoff", "jump_air", "jump_land"] {
        assert_eq!(m.travel_velocity(name), None, "{name} plays in place");
    }
}

/// Every gait moved by its own root motion: a planted foot stays on the ground (ankle at
/// its height) and in place in the world (within 1 cm over its whole stance).
#[test]
fn planted_feet_stay_put_under_root_motion() {
    let m = anim_mannequin::build();
    let clips = m.root_motion_clips();
    for name in GAITS {
        let clip = clips.iter().find(|c| c.name() == name).unwrap();
        let motion = clip.root_motion().expect("gaits travel");
        let contact = [clip.curve_index("foot_contact_l").unwrap(), clip.curve_index("foot_contact_r").unwrap()];
        let mut playback = Playback::new(clip.duration(), LoopMode::Repeat);
        let (mut world, mut pose) = (Transform::IDENTITY, m.skeleton.rest_pose().clone());
        let mut planted_at: [Option<Vec3>; 2] = [None, None];
        let mut worst = 0.0f32;
        for _ in 0..(3.0 * 240.0 * clip.duration()) as usize {
            let step = playback.advance(1.0 / 240.0);
            world = world.combine(&motion.delta(&playback, step.from, step.to));
            let t = playback.time();
            clip.sample(t, TimePolicy::Wrap, &mut pose).unwrap();
            for (k, side) in [Side::Left, Side::Right].into_iter().enumerate() {
                let a = world.transform_point(&ankle(&m, &pose, side));
                if clip.sample_curve(contact[k], t, TimePolicy::Wrap).unwrap() > 0.5 {
                    assert!((a.y - ANKLE_HEIGHT).abs() < 0.006, "{name} {side:?} t={t}: planted ankle at {}", a.y);
                    let at = *planted_at[k].get_or_insert(a);
                    worst = worst.max(((a - at).xz()).norm());
                } else {
                    planted_at[k] = None;
                }
            }
        }
        assert!(worst < 0.01, "{name}: a planted foot slid {:.1} mm", worst * 1000.0);
    }
}

#[test]
fn sideways_feet_never_cross() {
    let m = anim_mannequin::build();
    for name in ["walk_left", "walk_right", "run_left", "run_right"] {
        let clip = m.clip(name).unwrap();
        let mut pose = m.skeleton.rest_pose().clone();
        let mut closest = f32::INFINITY;
        for k in 0..200 {
            clip.sample(clip.duration() * k as f32 / 200.0, TimePolicy::Wrap, &mut pose).unwrap();
            closest = closest.min(ankle(&m, &pose, Side::Left).x - ankle(&m, &pose, Side::Right).x);
        }
        assert!(closest > 0.1, "{name}: the left ankle came within {closest} m of the right one's side");
    }
}

#[test]
fn jump_phases_hold_their_contacts_and_continue_the_jump() {
    let m = anim_mannequin::build();
    let (jump, takeoff) = (m.clip("jump").unwrap(), m.clip("jump_takeoff").unwrap());
    let (mut a, mut b) = (m.skeleton.rest_pose().clone(), m.skeleton.rest_pose().clone());
    for t in [0.0, 0.25, 0.5] {
        jump.sample(t, TimePolicy::Clamp, &mut a).unwrap();
        takeoff.sample(t, TimePolicy::Clamp, &mut b).unwrap();
        for (x, y) in a.locals().iter().zip(b.locals()) {
            assert!(x.rotation.angle_to(&y.rotation) < 1e-3, "take-off is the jump's start at {t}");
        }
    }
    for (name, contact, duration) in [("jump_takeoff", 1.0, 0.5), ("jump_air", 0.0, 0.6), ("jump_land", 1.0, 0.5)] {
        let c = m.clip(name).unwrap();
        assert!((c.duration() - duration).abs() < 1e-6, "{name}");
        for curve in ["foot_contact_l", "foot_contact_r"] {
            let i = c.curve_index(curve).unwrap();
            for k in 0..=10 {
                assert_eq!(c.sample_curve(i, duration * k as f32 / 10.0, TimePolicy::Clamp), Some(contact), "{name}");
            }
        }
    }
    // In the air the feet are tucked above where they stand.
    let air = m.clip("jump_air").unwrap();
    air.sample(0.3, TimePolicy::Wrap, &mut a).unwrap();
    for side in [Side::Left, Side::Right] {
        assert!(ankle(&m, &a, side).y > ANKLE_HEIGHT + 0.1, "{side:?}");
    }
}
