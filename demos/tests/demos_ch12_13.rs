//! The chapter 12 and 13 demos: each runs headless on lavapipe with validation and
//! synchronization validation on (any message fails) and draws its character or chain
//! where the CPU puts it (`common`: a CPU rasterization of the same frame); plus what each
//! demo claims, checked against the library by an independent path (blend end points,
//! crossfade weights, additive deltas, IK reach and limits, grounded ankles).

use anim_core::clip::TimePolicy;

use anim_core::pose::Pose;
use anim_ik::GroundQuery;
use anim_mannequin::ANKLE_HEIGHT;
use anim_math::{Mat4, Quat, Transform, Vec3, quat};
use demos::app::HEADLESS_DT;
use demos::scenes::ch13_ccd::{self, ChainSolver, Tentacle};
use demos::scenes::{ch12_additive, ch12_blend, ch12_crossfade, ch13_fabrik, ch13_foot_ik};
use demos::{Character, CommonArgs, Key, Scene, run_headless};

mod common;

const W: u32 = 240;
const H: u32 = 160;

/// Runs `S` headless (4 frames) with validation on; `drawn_as_predicted` then checks that
/// the last frame drew what the CPU predicts for it (see `common`), with no validation
/// message either.
fn runs_clean<S: Scene>(drawn_as_predicted: impl FnOnce(&mut demos::HeadlessRun<S>)) -> demos::HeadlessRun<S> {
    let mut run = run_headless::<S>(&CommonArgs::headless(4, W, H)).unwrap_or_else(|e| panic!("{}: {e}", S::NAME));
    assert!(run.context.validation_enabled());
    assert_eq!(run.context.validation_count(), 0, "{}", run.context.validation_messages().join("\n"));
    drawn_as_predicted(&mut run);
    assert_eq!(run.context.validation_count(), 0, "{}", run.context.validation_messages().join("\n"));
    run
}

/// The character of a stage scene is drawn where the CPU puts it.
fn stage_drawn<S: Scene>(
    what: &str,
    stage: impl Fn(&mut S) -> &mut demos::Stage,
) -> impl FnOnce(&mut demos::HeadlessRun<S>) {
    move |r| {
        let stage = stage(&mut r.app.scene);
        common::assert_stage_drawn(what, &r.context, &mut r.renderer, &r.app.frame, stage, (W, H))
    }
}

/// The chain's bones (static instances of `chain::bone_mesh`) are drawn where the CPU puts
/// them.
fn bones_drawn<S: Scene>(what: &str) -> impl FnOnce(&mut demos::HeadlessRun<S>) {
    move |r| {
        let bone = demos::chain::bone_mesh();
        let frame = &r.app.frame;
        assert!(frame.instances.iter().all(|i| i.deform == anim_render_vk::Deform::Static));
        let drawn = common::drawn_instances(&r.context, &mut r.renderer, frame, W, H, |_| true);
        let predicted = common::silhouette(&frame.camera, W, H, &common::frame_triangles(frame, |_| Some(&bone)));
        common::assert_matches(what, &drawn, &predicted);
    }
}

fn assert_poses_eq(a: &Pose, b: &Pose, tol: f32, what: &str) {
    for (j, (x, y)) in a.locals().iter().zip(b.locals()).enumerate() {
        assert!((x.translation - y.translation).norm() < tol, "{what}: joint {j} translation");
        assert!(x.rotation.angle_to(&y.rotation) < tol, "{what}: joint {j} rotation");
        assert!((x.scale - y.scale).norm() < tol, "{what}: joint {j} scale");
    }
}

/// `clip` of `ch` sampled at `time` over the rest pose, straight from the clip.
fn sampled(ch: &Character, clip: usize, time: f32) -> Pose {
    let mut p = ch.skeleton.rest_pose().clone();
    ch.clips[clip].sample(time, TimePolicy::Wrap, &mut p).unwrap();
    p
}

fn model_position(ch: &Character, pose: &Pose, joint: usize) -> Vec3 {
    let mut m = vec![Mat4::identity(); ch.skeleton.len()];
    pose.local_to_model(&ch.skeleton, &mut m).unwrap();
    m[joint].column(3).xyz()
}

#[test]
fn ch12_blend_runs_clean() {
    let run = runs_clean(stage_drawn::<ch12_blend::BlendDemo>("ch12_blend", |s| &mut s.stage));
    // Four headless frames: the weight timer advanced three fixed steps.
    assert!((run.app.scene.weight_time - 3.0 * HEADLESS_DT).abs() < 1e-6);
    assert!((run.app.scene.weight - ch12_blend::blend_weight(3.0 * HEADLESS_DT)).abs() < 1e-6);
}

#[test]
fn ch12_crossfade_runs_clean() {
    runs_clean(stage_drawn::<ch12_crossfade::CrossFadeDemo>("ch12_crossfade", |s| &mut s.stage));
}

#[test]
fn ch12_crossfade_headless_is_deterministic() {
    // 60 frames: the first fade (at 1.6 s) is under way in the last one.
    let shot = || {
        let run = run_headless::<ch12_crossfade::CrossFadeDemo>(&CommonArgs::headless(60, 160, 96)).unwrap();
        (run.image.pixels.clone(), run.app.scene.status())
    };
    let (a, status) = shot();
    let (b, _) = shot();
    assert!(a == b, "two headless runs differ");
    assert!(status.contains("fading to"), "{status}");
}

#[test]
fn ch12_additive_runs_clean() {
    let run = runs_clean(stage_drawn::<ch12_additive::AdditiveDemo>("ch12_additive", |s| &mut s.stage));
    // Headless sweeps the additive time through the lean clip (1 s long).
    let s = &run.app.scene;
    assert!(s.sweep);
    assert!((s.fraction() - ch12_additive::swept_fraction(3.0 * HEADLESS_DT)).abs() < 1e-6);
    assert!((s.additive_time - ch12_additive::swept_fraction(3.0 * HEADLESS_DT)).abs() < 1e-6);
    assert!(s.status().contains("walk + lean_left at 0.05/1.00 s (sweeping)"), "{}", s.status());
}

#[test]
fn ch13_ccd_runs_clean() {
    let run = runs_clean::<ch13_ccd::CcdDemo>(bones_drawn("ch13_ccd"));
    assert!(run.app.scene.tentacle.constrained);
    assert!(run.app.scene.status().contains("CCD | constraints on"), "{}", run.app.scene.status());
}

#[test]
fn ch13_fabrik_runs_clean() {
    let run = runs_clean::<ch13_fabrik::FabrikDemo>(bones_drawn("ch13_fabrik"));
    assert!(run.app.scene.status().starts_with("FABRIK"), "{}", run.app.scene.status());
}

#[test]
fn ch13_foot_ik_runs_clean() {
    let run = runs_clean(stage_drawn::<ch13_foot_ik::FootIkDemo>("ch13_foot_ik", |s| &mut s.walker.stage));
    assert!(run.app.scene.walker.ik, "headless runs with IK on");
}

#[test]
fn blend_weight_ping_pongs() {
    use ch12_blend::{WEIGHT_PERIOD, blend_weight};
    let p = WEIGHT_PERIOD;
    for (t, want) in [(0.0, 0.0), (p * 0.5, 1.0), (p * 0.25, 0.5), (p, 0.0), (p * 0.125, 0.15625), (p * 1.75, 0.5)] {
        assert!((blend_weight(t) - want).abs() < 1e-5, "weight at {t}: {} (want {want})", blend_weight(t));
    }
    // Symmetric about the half period.
    assert!((blend_weight(0.4 * p) - blend_weight(0.6 * p)).abs() < 1e-5);
}

#[test]
fn blend_end_points_are_the_clips_at_normalized_time() {
    let ch = Character::mannequin();
    let (walk, run) = (ch.find_clip("walk").unwrap(), ch.find_clip("run").unwrap());
    let rest = ch.skeleton.rest_pose().clone();
    let (mut a, mut b, mut out) = (rest.clone(), rest.clone(), rest.clone());
    for phase in [0.0, 0.3, 0.77] {
        let walk_pose = sampled(&ch, walk, phase * ch.clips[walk].duration());
        let run_pose = sampled(&ch, run, phase * ch.clips[run].duration());
        ch12_blend::sample_blend(&ch, walk, run, phase, 0.0, &mut a, &mut b, &mut out).unwrap();
        assert_poses_eq(&out, &walk_pose, 1e-6, "weight 0 = walk");
        ch12_blend::sample_blend(&ch, walk, run, phase, 1.0, &mut a, &mut b, &mut out).unwrap();
        assert_poses_eq(&out, &run_pose, 1e-6, "weight 1 = run");
        // Half way: translations are the midpoints (the pelvis bob and lean of both gaits).
        ch12_blend::sample_blend(&ch, walk, run, phase, 0.5, &mut a, &mut b, &mut out).unwrap();
        let mid = (walk_pose.locals()[0].translation + run_pose.locals()[0].translation) * 0.5;
        assert!((out.locals()[0].translation - mid).norm() < 1e-6);
        // Rotations lie between: the angle to each end is about half the angle between them.
        let (ra, rb, rm) = (walk_pose.locals()[15].rotation, run_pose.locals()[15].rotation, out.locals()[15].rotation);
        let half = ra.angle_to(&rb) * 0.5;
        assert!((rm.angle_to(&ra) - half).abs() < 1e-3 && (rm.angle_to(&rb) - half).abs() < 1e-3);
    }
    // The cycle length follows the weight: 1 s walking, 0.7 s running.
    assert!((ch12_blend::blended_duration(&ch, walk, run, 0.0) - 1.0).abs() < 1e-6);
    assert!((ch12_blend::blended_duration(&ch, walk, run, 1.0) - 0.7).abs() < 1e-6);
    assert!((ch12_blend::blended_duration(&ch, walk, run, 0.5) - 0.85).abs() < 1e-6);
}

#[test]
fn crossfade_picker_is_seeded_and_never_repeats_the_last_clip() {
    use ch12_crossfade::{Picker, SEED};
    let (mut a, mut b) = (Picker::new(SEED), Picker::new(SEED));
    let mut seen = [0usize; 5];
    let mut last = 0;
    for _ in 0..1000 {
        let x = a.pick(5, Some(last));
        assert_eq!(x, b.pick(5, Some(last)), "same seed, same sequence");
        assert_ne!(x, last);
        seen[x] += 1;
        last = x;
    }
    // Roughly uniform over the 5 clips.
    assert!(seen.iter().all(|&n| n > 120), "{seen:?}");
    assert_ne!(Picker::new(1).next_u64(), Picker::new(2).next_u64());
}

#[test]
fn crossfade_switches_clips_on_schedule_and_blends_by_elapsed_time() {
    use ch12_crossfade::{FADE_DURATION, FADE_INTERVAL, FIRST_FADE, Shuffler, playable_clips};
    let ch = Character::mannequin();
    // Every clip but the additive lean.
    let names: Vec<&str> = playable_clips(&ch).iter().map(|&c| ch.clips[c].name()).collect();
    assert_eq!(
        names,
        [
            "idle",
            "walk",
            "run",
            "jump",
            "punch",
            "walk_backward",
            "walk_left",
            "walk_right",
            "run_backward",
            "run_left",
            "run_right",
            "jump_takeoff",
            "jump_air",
            "jump_land"
        ]
    );
    let mut s = Shuffler::new(&ch).unwrap();
    assert_eq!(s.controller.current_clip().unwrap().name(), "walk");
    let dt = 1.0 / 60.0;
    let mut t = 0.0;
    let mut current = "walk".to_string();
    let mut switches = 0;
    let mut checked_mid_fade = false;
    while t < FIRST_FADE + 3.0 * FADE_INTERVAL + 0.3 {
        s.step(dt).unwrap();
        t += dt;
        let c = &s.controller;
        let name = c.current_clip().unwrap().name().to_string();
        if name != current {
            switches += 1;
            current = name;
        }
        let targets: Vec<_> = c.targets().collect();
        let pose = c.pose();
        let clip_index = |name: &str| ch.find_clip(name).unwrap();
        match targets.as_slice() {
            // No fade: the pose is the current clip at its time.
            [] => assert_poses_eq(pose, &sampled(&ch, clip_index(&current), c.current_time().unwrap()), 1e-5, "play"),
            // One fade: mix(current, target, elapsed / duration), each sampled on its own.
            [f] => {
                assert!((f.weight - (f.elapsed / FADE_DURATION).min(1.0)).abs() < 1e-6);
                let from = sampled(&ch, clip_index(&current), c.current_time().unwrap());
                let to = sampled(&ch, clip_index(f.clip.name()), f.time);
                let mut want = from.clone();
                for (w, b) in want.locals_mut().iter_mut().zip(to.locals()) {
                    *w = Transform::mix(w, b, f.weight);
                }
                assert_poses_eq(pose, &want, 1e-5, "fade");
                assert_ne!(f.clip.name(), current, "a fade goes to another clip");
                checked_mid_fade |= f.weight > 0.3 && f.weight < 0.7;
            }
            more => panic!("{} overlapping fades: fades are {FADE_INTERVAL} s apart", more.len()),
        }
    }
    // Fades start at FIRST_FADE, then every FADE_INTERVAL seconds; each finished fade made
    // its clip current.
    assert_eq!(s.fades, 4);
    assert_eq!(switches, 3, "the 4th fade is still running at the end");
    assert!(checked_mid_fade);
}

#[test]
fn additive_lean_follows_the_additive_time() {
    use ch12_additive::{Layer, SWEEP_PERIOD, swept_fraction};
    // The sweep ping-pongs linearly: 0 → 1 at half the period → 0.
    for (t, want) in [(0.0, 0.0), (SWEEP_PERIOD * 0.25, 0.5), (SWEEP_PERIOD * 0.5, 1.0), (SWEEP_PERIOD * 0.75, 0.5)] {
        assert!((swept_fraction(t) - want).abs() < 1e-6, "fraction at {t}: {}", swept_fraction(t));
    }
    let ch = Character::mannequin();
    let (walk, lean) = (ch.find_clip("walk").unwrap(), ch.find_clip("lean_left").unwrap());
    let duration = ch.clips[lean].duration();
    let mut layer = Layer::new(&ch, lean).unwrap();
    assert_eq!(layer.duration(&ch), duration);
    let mut pose = ch.skeleton.rest_pose().clone();
    let t = 0.37;
    let walk_pose = sampled(&ch, walk, t);
    // Additive time 0: the additive clip's first frame is its base, the layer adds nothing.
    layer.apply(&ch, walk, t, 0.0, &mut pose).unwrap();
    assert_poses_eq(&pose, &walk_pose, 1e-6, "additive time 0 = walk");
    // Additive time = duration: the whole lean, as the old full amount 1.0 gave it (each
    // spine joint gets lean_left's last-key rotation, whose first key is the identity,
    // applied before the walk's rotation; other joints keep the walk).
    let mut full_lean = ch.skeleton.rest_pose().clone();
    ch.clips[lean].sample(duration, TimePolicy::Clamp, &mut full_lean).unwrap();
    layer.apply(&ch, walk, t, duration, &mut pose).unwrap();
    let full = pose.clone();
    for j in 0..ch.skeleton.len() {
        let name = ch.skeleton.name(j).unwrap();
        let want = if name.starts_with("spine") {
            full_lean.locals()[j].rotation * walk_pose.locals()[j].rotation
        } else {
            walk_pose.locals()[j].rotation
        };
        assert!(pose.locals()[j].rotation.angle_to(&want) < 1e-5, "{name}");
    }
    // Half way: the lean clip's own mid pose, added; neither the walk nor the full lean.
    let mut mid_lean = ch.skeleton.rest_pose().clone();
    ch.clips[lean].sample(duration * 0.5, TimePolicy::Clamp, &mut mid_lean).unwrap();
    layer.apply(&ch, walk, t, duration * 0.5, &mut pose).unwrap();
    let spine = ch.skeleton.find("spine_02").unwrap();
    let want = mid_lean.locals()[spine].rotation * walk_pose.locals()[spine].rotation;
    assert!(pose.locals()[spine].rotation.angle_to(&want) < 1e-5);
    assert!(pose.locals()[spine].rotation.angle_to(&walk_pose.locals()[spine].rotation) > 0.05);
    assert!(pose.locals()[spine].rotation.angle_to(&full.locals()[spine].rotation) > 0.05);
    // Past the end the clip clamps: still the full lean.
    layer.apply(&ch, walk, t, duration * 3.0, &mut pose).unwrap();
    assert_poses_eq(&pose, &full, 1e-6, "clamped to the clip's end");
    // The head moves to the character's left (+x) the further into the clip.
    let head = ch.skeleton.find("head").unwrap();
    let mut xs = Vec::new();
    for f in [0.0, 0.5, 1.0] {
        layer.apply(&ch, walk, t, f * duration, &mut pose).unwrap();
        xs.push(model_position(&ch, &pose, head).x);
    }
    assert!(xs[1] > xs[0] + 0.05 && xs[2] > xs[1] + 0.05, "head x {xs:?}");
}

/// Runs a tentacle 30 s along the path, returning the worst distance and checking bone
/// lengths and (when constrained) the limits after every solve.
fn tentacle_run<S: ChainSolver>(constrained: bool) -> (f32, usize) {
    let mut t = Tentacle::<S>::new(0.0).unwrap();
    t.set_constrained(constrained).unwrap();
    let (mut worst, mut unsolved) = (0.0f32, 0);
    for _ in 0..900 {
        let r = t.step(1.0 / 30.0).unwrap();
        // The reported distance is the real one.
        assert!((r.distance - (t.chain.end_position() - t.target).norm()).abs() < 1e-5);
        worst = worst.max(r.distance);
        unsolved += usize::from(!r.solved);
        let w = t.chain.worlds();
        for (i, len) in ch13_ccd::BONE_LENGTHS.iter().enumerate() {
            let got = (w[i + 1].translation - w[i].translation).norm();
            assert!((got - len).abs() < 1e-4, "{}: bone {i} is {got} long", S::LABEL);
        }
        if constrained {
            for i in 0..ch13_ccd::JOINTS - 1 {
                let a = t.limit_angle(i).unwrap();
                let max = match i {
                    0 => ch13_ccd::ROOT_CONE,
                    ch13_ccd::HINGE_JOINT => ch13_ccd::HINGE_LIMIT,
                    _ => ch13_ccd::BALL_CONE,
                };
                assert!(a.abs() <= max + 1e-3, "{}: joint {i} at {a} beyond {max}", S::LABEL);
            }
            // The hinge only turns about its axis: its bone stays in the parent's y-z plane.
            let hinge = t.chain.locals()[ch13_ccd::HINGE_JOINT];
            let bone = hinge.rotation * t.chain.locals()[ch13_ccd::HINGE_JOINT + 1].translation;
            assert!(bone.x.abs() < 1e-4, "{}: hinge bone {bone:?}", S::LABEL);
        }
    }
    (worst, unsolved)
}

#[test]
fn target_path_stays_within_reach() {
    for k in 0..3000 {
        let p = ch13_ccd::target_at(k as f32 * 0.01);
        assert!(p.norm() < 2.21 && p.norm() < ch13_ccd::reach() - 0.25, "target {p:?}");
        assert!(p.y > 0.85);
    }
}

#[test]
fn ccd_reaches_the_moving_target_with_and_without_limits() {
    let (worst, unsolved) = tentacle_run::<ch13_ccd::Ccd>(false);
    assert_eq!(unsolved, 0, "worst {worst}");
    assert!(worst < ch13_ccd::THRESHOLD);
    // With the limits CCD still reaches every target of the path (to 2 mm).
    let (worst, _) = tentacle_run::<ch13_ccd::Ccd>(true);
    assert!(worst < 2e-3, "constrained CCD worst distance {worst}");
}

#[test]
fn fabrik_reaches_the_moving_target_and_keeps_its_limits() {
    let (worst, unsolved) = tentacle_run::<ch13_fabrik::Fabrik>(false);
    assert_eq!(unsolved, 0, "worst {worst}");
    assert!(worst < ch13_ccd::THRESHOLD);
    // With limits FABRIK keeps them (checked every frame) but may stop short.
    let (worst, _) = tentacle_run::<ch13_fabrik::Fabrik>(true);
    assert!(worst.is_finite() && worst < ch13_ccd::reach() * 2.0);
}

#[test]
fn straight_chain_and_constraints_match_the_docs() {
    let chain = ch13_ccd::straight_chain().unwrap();
    assert_eq!(chain.len(), ch13_ccd::JOINTS);
    assert!((chain.end_position() - Vec3::new(0.0, ch13_ccd::reach(), 0.0)).norm() < 1e-5);
    assert!((ch13_ccd::reach() - 2.48).abs() < 1e-5);
    // A 60° lean of the first bone is projected back onto the 40° cone.
    let c = ch13_ccd::constraint(0);
    let leaned = Quat::from_axis_angle(&Vec3::z_axis(), 60f32.to_radians());
    let limited = c.apply(leaned, &Vec3::y(), &Vec3::zeros());
    assert!((quat::angle_between(&Vec3::y(), &(limited * Vec3::y())) - ch13_ccd::ROOT_CONE).abs() < 1e-4);
    // The bone mesh spans (0,0,0)–(0,1,0).
    let m = ch13_ccd::bone_mesh();
    let ys: Vec<f32> = m.positions.iter().map(|p| p.y).collect();
    assert_eq!(ys.iter().copied().fold(f32::MAX, f32::min), 0.0);
    assert_eq!(ys.iter().copied().fold(f32::MIN, f32::max), 1.0);
}

#[test]
fn foot_ik_plants_ankles_on_uneven_ground_and_off_does_not() {
    use ch13_foot_ik::Walker;
    let steps = 300; // 10 s: about 9 m along the circle, over bumps and dips
    let mut planted_errors = [Vec::new(), Vec::new()];
    for (pass, ik) in [true, false].into_iter().enumerate() {
        let mut w = Walker::new(Character::mannequin(), 0.0).unwrap();
        w.ik = ik;
        let mut stance_start: [Option<Vec3>; 2] = [None, None];
        for _ in 0..steps {
            w.step(1.0 / 30.0).unwrap();
            let legs: Vec<_> = w.feet.legs().cloned().collect();
            for (side, leg) in legs.iter().enumerate() {
                // The ankle from the posed world matrices and the placement, the ground by a
                // ray of our own.
                let ankle = w.joint_world(leg.ankle);
                let hit = w.ground.raycast(&(ankle + Vec3::y() * 2.0), &-Vec3::y(), 5.0).expect("on the ground");
                let clearance = ankle.y - hit.point.y;
                if w.contacts[side] >= 1.0 {
                    planted_errors[pass].push(clearance - ANKLE_HEIGHT);
                    // With IK the planted foot stays put: the walk speed matches the clip.
                    // (Up to the circle: the body turns 8° during a 0.5 s stance and the
                    // feet are 0.1 m off the path, about 3 cm of drift at most.)
                    if ik {
                        let start = *stance_start[side].get_or_insert(ankle);
                        let slide = Vec3::new(ankle.x - start.x, 0.0, ankle.z - start.z).norm();
                        assert!(slide < 0.04, "planted ankle slid {slide} m");
                    }
                } else {
                    stance_start[side] = None;
                    if ik {
                        // Swinging feet never dip into the ground.
                        assert!(clearance > ANKLE_HEIGHT - 2e-3, "swing ankle {clearance} above ground");
                    }
                }
            }
        }
    }
    let worst = |e: &[f32]| e.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    assert!(planted_errors[0].len() > 200, "{} planted samples", planted_errors[0].len());
    assert!(worst(&planted_errors[0]) < 1e-3, "IK on: planted ankle off by {}", worst(&planted_errors[0]));
    // Without IK the flat walk floats over dips and sinks into bumps.
    let off = &planted_errors[1];
    assert!(worst(off) > 0.03, "IK off: worst {}", worst(off));
    assert!(off.iter().any(|e| *e > 0.01) && off.iter().any(|e| *e < -0.01));
}

#[test]
fn foot_ik_ground_mesh_is_the_height_field() {
    let g = ch13_foot_ik::ground().unwrap();
    let (mesh, colors, n) = ch13_foot_ik::ground_mesh();
    assert_eq!(mesh.positions.len(), n * n);
    assert_eq!(colors.len(), n * n);
    assert_eq!(mesh.indices.len(), (n - 1) * (n - 1) * 6);
    for p in mesh.positions.iter().step_by(7) {
        let h = g.height(p.x, p.z).unwrap();
        assert!((h - p.y).abs() < 1e-5, "mesh {p:?} vs field {h}");
    }
    // The triangles follow the height field's diagonal: cell centres agree too.
    let c = ch13_foot_ik::GROUND_CELL;
    for (x, z) in [(0.13, 0.07), (1.31, -2.42), (-3.9, 4.1)] {
        let (i, k) = (((x + 5.0) / c).floor(), ((z + 5.0) / c).floor());
        let (x0, z0) = (-5.0 + i * c, -5.0 + k * c);
        let (u, v) = ((x - x0) / c, (z - z0) / c);
        let h = |dx: f32, dz: f32| ch13_foot_ik::ground_height(x0 + dx * c, z0 + dz * c);
        // Triangle (00, 11, 10) when u >= v, else (00, 01, 11).
        let want = if u >= v {
            h(0.0, 0.0) + u * (h(1.0, 0.0) - h(0.0, 0.0)) + v * (h(1.0, 1.0) - h(1.0, 0.0))
        } else {
            h(0.0, 0.0) + v * (h(0.0, 1.0) - h(0.0, 0.0)) + u * (h(1.0, 1.0) - h(0.0, 1.0))
        };
        assert!((g.height(x, z).unwrap() - want).abs() < 1e-5);
    }
}

#[test]
fn path_frame_faces_along_the_circle() {
    for a in [0.0f32, 1.0, 2.5, 4.0] {
        let (x, z, q) = ch13_foot_ik::path_frame(a);
        assert!((x * x + z * z).sqrt() - ch13_foot_ik::PATH_RADIUS < 1e-5);
        // Forward (+z of the character) is the derivative of the path.
        let fwd = q * Vec3::z();
        assert!((fwd - Vec3::new(-a.sin(), 0.0, a.cos())).norm() < 1e-5);
    }
}

#[test]
fn keys_toggle_ik_constraints_and_sweep() {
    use anim_render_vk::{Context, ContextDesc, OFFSCREEN_FORMAT, Renderer};
    use demos::App;
    let ctx = Context::new(&ContextDesc { validation: true, window: None }).unwrap();
    let mut renderer = Renderer::new(&ctx, OFFSCREEN_FORMAT).unwrap();
    let args = CommonArgs::headless(1, W, H);
    let mut feet = App::<ch13_foot_ik::FootIkDemo>::new(&mut renderer, &args).unwrap();
    feet.scene.key(Key::Char('i'));
    assert!(!feet.scene.walker.ik);
    feet.step(&mut renderer, HEADLESS_DT).unwrap();
    assert!(feet.scene.status().starts_with("foot IK off"), "{}", feet.scene.status());
    let mut ccd = App::<ch13_ccd::CcdDemo>::new(&mut renderer, &args).unwrap();
    ccd.scene.key(Key::Char('c'));
    ccd.step(&mut renderer, HEADLESS_DT).unwrap();
    assert!(!ccd.scene.tentacle.constrained && ccd.scene.tentacle.result.solved);
    ccd.scene.key(Key::Space);
    let t = ccd.scene.tentacle.time;
    ccd.step(&mut renderer, HEADLESS_DT).unwrap();
    assert_eq!(ccd.scene.tentacle.time, t, "paused target");
    let mut add = App::<ch12_additive::AdditiveDemo>::new(&mut renderer, &args).unwrap();
    add.scene.key(Key::Char('d'));
    assert!(!add.scene.sweep);
    let a = add.scene.additive_time;
    add.scene.key(Key::Char('d'));
    // lean_left is 1 s long: a step is a tenth of it.
    assert!((add.scene.additive_time - a - ch12_additive::TIME_STEP).abs() < 1e-6);
    for _ in 0..20 {
        add.scene.key(Key::Char('d'));
    }
    assert_eq!(add.scene.fraction(), 1.0, "the keys stop at the clip's end");
    add.scene.key(Key::Char('s'));
    assert!(add.scene.sweep);
    add.scene.key(Key::Char('m'));
    assert_eq!(add.scene.stage.method, anim_core::skin::SkinMethod::Dq, "shared stage keys");
    let mut blend = App::<ch12_blend::BlendDemo>::new(&mut renderer, &args).unwrap();
    blend.scene.key(Key::Char('1'));
    blend.step(&mut renderer, HEADLESS_DT).unwrap();
    assert!(blend.scene.hold && blend.scene.weight == 1.0);
    assert_eq!(ctx.validation_count(), 0, "{}", ctx.validation_messages().join("\n"));
}
