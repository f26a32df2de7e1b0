//! The locomotion demo: headless with validation on, drawing what the CPU predicts; its
//! scripted input played without a GPU, checked update by update: the moves go where the
//! keys say, the punch plays on the upper body while the legs run, the jump goes through
//! take-off, air and landing with the expected timing and height, feet stay on the uneven
//! ground; and other graph files (`--graph`) load, or fail saying where.

use anim_mannequin::ANKLE_HEIGHT;
use demos::scenes::locomotion::{JUMP_SPEED, Locomotion, Player, SCRIPT};
use demos::{Character, CommonArgs, run_headless};
use std::io::Write as _;

mod common;

const DT: f32 = 1.0 / 30.0;

#[test]
fn locomotion_runs_clean() {
    let (w, h) = (240, 160);
    let mut run = run_headless::<Locomotion>(&CommonArgs::headless(4, w, h)).unwrap();
    assert!(run.context.validation_enabled());
    assert_eq!(run.context.validation_count(), 0, "{}", run.context.validation_messages().join("\n"));
    let frame = &run.app.frame;
    assert!(frame.overlay_lines.len() > 200, "the display is drawn: {} overlay vertices", frame.overlay_lines.len());
    common::assert_stage_drawn(
        "locomotion",
        &run.context,
        &mut run.renderer,
        &run.app.frame,
        &mut run.app.scene.player.stage,
        (w, h),
    );
    let log = run.context.validation_log();
    drop(run);
    assert_eq!(log.count(), 0, "{}", log.messages().join("\n"));
}

/// One update of the script: time, body and upper states, position, yaw, height, the lower
/// ankle's height above the ground under it.
struct Frame {
    t: f32,
    body: String,
    upper: String,
    position: anim_math::Vec3,
    yaw: f32,
    height: f32,
    ankle_clearance: f32,
}

fn play(seconds: f32) -> Vec<Frame> {
    let mut p = Player::new(Character::mannequin(), None, true).unwrap();
    let ankles =
        [p.stage.character.skeleton.find("foot_l").unwrap(), p.stage.character.skeleton.find("foot_r").unwrap()];
    let mut out = Vec::new();
    for _ in 0..(seconds / DT).round() as usize {
        p.step(DT).unwrap();
        let clearance = ankles
            .iter()
            .map(|&a| {
                let w = p.placement.transform_point(&p.stage.posed.world[a].column(3).xyz());
                w.y - p.ground.height(w.x, w.z).unwrap()
            })
            .fold(f32::INFINITY, f32::min);
        out.push(Frame {
            t: p.time,
            body: p.state("body").unwrap().to_owned(),
            upper: p.state("upper").unwrap().to_owned(),
            position: p.position,
            yaw: p.yaw,
            height: p.height,
            ankle_clearance: clearance,
        });
    }
    out
}

fn at(frames: &[Frame], t: f32) -> &Frame {
    frames.iter().min_by(|a, b| (a.t - t).abs().total_cmp(&(b.t - t).abs())).unwrap()
}

#[test]
fn the_script_walks_runs_punches_jumps_and_turns() {
    let f = play(8.5);
    assert_eq!(SCRIPT.first().map(|s| s.0), Some(0.3));
    // Standing still at first, then forwards (+z: the character faces +z at yaw 0).
    assert!(at(&f, 0.25).position.norm() < 0.01);
    let (a, b) = (at(&f, 1.0).position, at(&f, 2.0).position);
    assert!(b.z - a.z > 1.2 && (b.x - a.x) > 0.2, "ran forwards and to the left: {a:?} → {b:?}");
    // The punch: set at 1.55 s, seen by the next update; the upper layer's state only.
    let first_punch = f.iter().find(|x| x.upper == "punch").unwrap();
    assert!((first_punch.t - 1.5667).abs() < 0.01, "{}", first_punch.t);
    assert_eq!(first_punch.body, "locomotion");
    assert!(f.iter().filter(|x| x.upper == "punch").count() >= 18);
    assert_eq!(at(&f, 2.6).upper, "none");
    // The jump: take-off 15 updates (0.5 s), air while the body is up, landing 9 updates
    // (exit time 0.6 of 0.5 s) before locomotion again.
    let seq: Vec<(&str, usize)> = f.iter().fold(Vec::new(), |mut v: Vec<(&str, usize)>, x| {
        match v.last_mut() {
            Some((s, n)) if *s == x.body => *n += 1,
            _ => v.push((x.body.as_str(), 1)),
        }
        v
    });
    let names: Vec<&str> = seq.iter().map(|s| s.0).collect();
    assert_eq!(names, ["locomotion", "takeoff", "air", "land", "locomotion"], "{seq:?}");
    let takeoff = f.iter().position(|x| x.body == "takeoff").unwrap();
    assert!((f[takeoff].t - 2.7).abs() < 1e-3, "{}", f[takeoff].t);
    assert_eq!(seq[1].1, 15);
    // In the air as long as a throw at JUMP_SPEED takes to come down (±1 update), plus the
    // update that sees it land.
    let flight = 2.0 * JUMP_SPEED / 9.81 / DT;
    assert!((seq[2].1 as f32 - flight - 1.0).abs() <= 1.5, "{} updates in the air, {flight} expected", seq[2].1);
    assert_eq!(seq[3].1, 9);
    let top = f.iter().map(|x| x.height).fold(0.0, f32::max);
    assert!((top - JUMP_SPEED * JUMP_SPEED / (2.0 * 9.81)).abs() < 0.03, "jumped {top} m high");
    // Backwards (S), then to the right (D): the character's −z, then −x.
    let (s0, s1, d1) = (at(&f, 4.7).position, at(&f, 5.6).position, at(&f, 6.6).position);
    assert!(s1.z - s0.z < -0.4, "backwards: {s0:?} → {s1:?}");
    assert!(d1.x - s1.x < -0.3, "to the right: {s1:?} → {d1:?}");
    // Q for a second turns by TURN_RATE (and the walk forwards follows the heading).
    let turned = at(&f, 7.6).yaw - at(&f, 6.6).yaw;
    assert!((turned - demos::scenes::locomotion::TURN_RATE).abs() < 0.1, "turned {turned}");
    // Foot grounding on the uneven ground: on the ground no ankle sinks below its height;
    // walking (one foot always planted: no flight phase), the lower one is at it.
    let grounded: Vec<&Frame> = f.iter().filter(|x| x.height == 0.0 && x.body == "locomotion" && x.t > 0.5).collect();
    let sunk = grounded.iter().map(|x| ANKLE_HEIGHT - x.ankle_clearance).fold(f32::MIN, f32::max);
    assert!(sunk < 0.01, "an ankle {sunk} m below its height above the ground");
    let walking = grounded.iter().filter(|x| (4.9..5.5).contains(&x.t) || (5.9..6.5).contains(&x.t));
    let worst = walking.map(|x| (x.ankle_clearance - ANKLE_HEIGHT).abs()).fold(0.0, f32::max);
    assert!(worst < 0.015, "walking, the planted ankle is {worst} m off its height above the ground");
    // Headless runs are deterministic.
    let again = play(3.0);
    for (x, y) in again.iter().zip(&f) {
        assert_eq!((x.position, x.yaw, &x.body), (y.position, y.yaw, &y.body));
    }
}

#[test]
fn other_graph_files_load_or_say_where_they_are_wrong() {
    let dir = std::env::temp_dir().join(format!("locomotion-graphs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::File::create(&path).unwrap().write_all(text.as_bytes()).unwrap();
        path
    };
    let idle = write(
        "idle.json",
        r#"{"parameters": [{"name": "move_z", "type": "float"}],
            "nodes": [{"name": "idle", "type": "clip", "clip": "idle"}], "root": "idle"}"#,
    );
    let mut p = Player::new(Character::mannequin(), Some(&idle), true).unwrap();
    for _ in 0..30 {
        p.step(DT).unwrap();
    }
    assert!(p.position.norm() < 1e-6, "an idle graph does not travel");
    let broken =
        write("broken.json", r#"{"nodes": [{"name": "idle", "type": "clip", "clip": "idel"}], "root": "idle"}"#);
    let e = Player::new(Character::mannequin(), Some(&broken), true).map(|_| ()).unwrap_err().to_string();
    assert!(e.contains("/nodes/0/clip") && e.contains("idel"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}
