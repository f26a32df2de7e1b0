//! Each node kind against values computed another way: blends and layers from the clips'
//! known values, additive differences, IK nodes against the solvers called by hand, root
//! motion against the clips' travel, runtime clips against exact ones; and the inputs an
//! update refuses.

mod common;

use anim_core::clip::{Clip, Interpolation, JointTracks, TimePolicy, Track};
use anim_core::pose::Pose;
use anim_graph::builder::GraphBuilder;
use anim_graph::clips::ClipSet;
use anim_graph::desc::{Condition, LegDesc};
use anim_graph::instance::{GraphInstance, UpdateError};
use anim_ik::{FootGrounding, FootSettings, HeightField, Leg};
use anim_math::{Transform, Vec3};
use common::{Run, chain, hold, mannequin, mannequin_runtime};
use std::sync::Arc;

/// A clip of 1 s holding joints 0..n at x = `x`.
fn hold_all(name: &str, n: usize, x: f32) -> Arc<Clip> {
    let tracks = (0..n)
        .map(|j| {
            let mut t = JointTracks::new(j);
            let v = Vec3::new(x, if j == 0 { 0.0 } else { 1.0 }, 0.0);
            t.translation = Some(Track::new(Interpolation::Linear, vec![0.0, 1.0], vec![v, v]).unwrap());
            t
        })
        .collect();
    Arc::new(Clip::new(name, tracks, vec![]).unwrap())
}

#[test]
fn blend_mixes_by_its_weight_and_skips_a_child_at_zero() {
    let clips = ClipSet::from_clips([hold("a", 1.0, 1.0, &[]), hold("b", 5.0, 1.0, &[])]);
    let mut b = GraphBuilder::new();
    b.float_range("w", 0.0, 0.0, 1.0);
    b.clip("a", "a");
    b.clip("b", "b");
    b.blend("mix", "a", "b", "w");
    let g = Arc::new(b.build("mix", &chain(1), &clips).unwrap());
    let w = g.float_param("w").unwrap();
    let mut r = Run::new(&g);
    for (weight, x, samples) in [(0.0, 1.0, 1), (0.25, 2.0, 2), (1.0, 5.0, 1), (7.0, 5.0, 1)] {
        r.instance.set_float(w, weight).unwrap();
        let before = r.instance.samples();
        r.step(0.1);
        assert!((r.x() - x).abs() < 1e-6, "weight {weight}: {}", r.x());
        assert_eq!(r.instance.samples() - before, samples);
    }
}

#[test]
fn additive_adds_the_difference_from_its_reference() {
    let clips =
        ClipSet::from_clips([hold("base", 1.0, 1.0, &[]), hold("add", 5.0, 1.0, &[]), hold("ref", 3.0, 1.0, &[])]);
    let mut b = GraphBuilder::new();
    b.float("w", 1.0);
    b.clip("base", "base");
    b.clip("add", "add");
    b.additive("sum", "base", "add", "ref", 0.0, "w");
    let g = Arc::new(b.build("sum", &chain(1), &clips).unwrap());
    let w = g.float_param("w").unwrap();
    let mut r = Run::new(&g);
    for (weight, x) in [(1.0, 3.0), (0.5, 2.0), (0.0, 1.0), (-1.0, -1.0)] {
        r.instance.set_float(w, weight).unwrap();
        r.step(0.1);
        assert!((r.x() - x).abs() < 1e-6, "weight {weight}: {}", r.x());
    }
}

#[test]
fn layers_follow_their_mask_and_an_empty_state_fades_them_in() {
    let n = 3;
    let clips = ClipSet::from_clips([hold_all("base", n, 1.0), hold_all("top", n, 5.0)]);
    let mut b = GraphBuilder::new();
    b.trigger("go");
    b.mask("upper", &[("j1", true, 0.5)]);
    b.clip("base", "base");
    b.clip("top", "top");
    let mut m = b.machine("upper_machine", "none");
    m.empty_state("none").state("on", "top");
    m.transition("none", "on", Condition::trigger("go")).crossfade(0.5);
    b.layer("layered", "base", "upper_machine", Some("upper"), 1.0);
    let g = Arc::new(b.build("layered", &chain(n), &clips).unwrap());
    let mut r = Run::new(&g);
    r.step(0.125);
    // The empty state covers nothing: the base alone, and the layer's clip not sampled.
    let xs = |r: &Run| r.pose.locals().iter().map(|t| t.translation.x).collect::<Vec<_>>();
    assert_eq!(xs(&r), [1.0, 1.0, 1.0]);
    assert_eq!(r.instance.samples(), 1);
    r.instance.set_trigger(g.trigger_param("go").unwrap()).unwrap();
    for k in 1..=5 {
        r.step(0.125);
        // Coverage α = elapsed / 0.5 (not the rest pose mixed in): joint 0 outside the
        // mask, joints 1 and 2 at mix(1, 5, 0.5·α).
        let alpha = (k as f32 * 0.125 / 0.5).min(1.0);
        let want = 1.0 + 4.0 * 0.5 * alpha;
        let got = xs(&r);
        assert!(got[0] == 1.0 && (got[1] - want).abs() < 1e-5 && (got[2] - want).abs() < 1e-5, "update {k}: {got:?}");
    }
}

#[test]
fn two_bone_and_aim_nodes_reach_their_targets() {
    let (sk, clips) = mannequin();
    let mut b = GraphBuilder::new();
    for p in ["tx", "ty", "tz", "lx", "ly", "lz"] {
        b.float(p, 0.0);
    }
    b.float_range("w", 1.0, 0.0, 1.0);
    b.clip("idle", "idle");
    b.two_bone_ik("arm", "idle", ["upperarm_l", "lowerarm_l", "hand_l"], ["tx", "ty", "tz"]).weight = "w".into();
    b.aim("look", "arm", "head", [0.0, 0.0, 1.0], [0.0, 1.0, 0.0], ["lx", "ly", "lz"]);
    let g = Arc::new(b.build("look", &sk, &clips).unwrap());
    let set = |r: &mut Run, names: [&str; 3], v: Vec3| {
        for (n, x) in names.iter().zip([v.x, v.y, v.z]) {
            r.instance.set_float(g.float_param(n).unwrap(), x).unwrap();
        }
    };
    let mut r = Run::new(&g);
    let (hand, head) = (sk.find("hand_l").unwrap(), sk.find("head").unwrap());
    let target = Vec3::new(0.45, 1.25, 0.25);
    let look = Vec3::new(-1.0, 1.7, 2.0);
    set(&mut r, ["tx", "ty", "tz"], target);
    set(&mut r, ["lx", "ly", "lz"], look);
    r.step(0.1);
    let hand_at = r.pose.global(&sk, hand).unwrap().translation;
    assert!((hand_at - target).norm() < 1e-3, "hand at {hand_at:?}");
    let h = r.pose.global(&sk, head).unwrap();
    let forward = h.rotation * Vec3::z();
    assert!(forward.dot(&(look - h.translation).normalize()) > 0.9999, "{forward:?}");
    // Half the weight: the hand between the animation's and the target (the mix is in
    // joint rotations, so not on the straight line: nearer than the animation's, farther
    // than the target).
    r.instance.set_float(g.float_param("w").unwrap(), 0.5).unwrap();
    r.step(0.0);
    let half = r.pose.global(&sk, hand).unwrap().translation;
    r.instance.set_float(g.float_param("w").unwrap(), 0.0).unwrap();
    r.step(0.0);
    let none = r.pose.global(&sk, hand).unwrap().translation;
    let (d_half, d_none) = ((half - target).norm(), (none - target).norm());
    assert!(d_half > 1e-3 && d_half < d_none, "{d_half} {d_none}");
}

#[test]
fn foot_grounding_is_the_solver_called_by_hand() {
    let (sk, clips) = mannequin();
    let m = anim_mannequin::build();
    let leg = |s: &str| LegDesc {
        hip: format!("thigh_{s}"),
        knee: format!("calf_{s}"),
        ankle: format!("foot_{s}"),
        toe: format!("ball_{s}"),
        contact: format!("foot_contact_{s}"),
    };
    let mut b = GraphBuilder::new();
    b.clip("walk", "walk");
    let f = b.foot_ik("feet", "walk", vec![leg("l"), leg("r")]);
    (f.ankle_height, f.toe_height) = (anim_mannequin::ANKLE_HEIGHT, anim_mannequin::BALL_HEIGHT);
    let g = Arc::new(b.build("feet", &sk, &clips).unwrap());
    let ground =
        Arc::new(HeightField::from_fn(-3.0, -3.0, 0.1, 61, 61, |x, z| 0.08 * x + 0.05 * (2.0 * z).sin()).unwrap());
    let mut r = Run::new(&g);
    r.instance.set_ground(Some(ground.clone()));
    let placement = Transform::from_translation(Vec3::new(0.3, 0.1, -0.2));
    r.instance.set_placement(placement);
    // By hand: sample the walk, ground it with the same settings.
    let walk = clips.clips()[clips.find("walk").unwrap()].clip().clone();
    let legs: Vec<Leg> = ["l", "r"]
        .iter()
        .map(|s| Leg {
            hip: sk.find(&format!("thigh_{s}")).unwrap(),
            knee: sk.find(&format!("calf_{s}")).unwrap(),
            ankle: sk.find(&format!("foot_{s}")).unwrap(),
            toe: sk.find(&format!("ball_{s}")).unwrap(),
            contact_curve: format!("foot_contact_{s}"),
        })
        .collect();
    let settings = FootSettings {
        ankle_height: anim_mannequin::ANKLE_HEIGHT,
        toe_height: anim_mannequin::BALL_HEIGHT,
        ..FootSettings::default()
    };
    let mut feet = FootGrounding::new(&m.skeleton, legs, settings).unwrap();
    let mut pose = sk.rest_pose().clone();
    let mut contacts = [0.0; 2];
    let mut cache = anim_core::clip::SamplingCache::new(&walk);
    for k in 1..=40 {
        r.step(1.0 / 30.0);
        // The clip's own time (k / 30 summed in f32): a straight planted leg makes the
        // solver's knee direction sensitive to the last bit of its input.
        let t = r.instance.clip_time(g.node("walk").unwrap()).unwrap();
        assert!((t - (k as f32 / 30.0) % 1.0).abs() < 1e-5);
        pose.locals_mut().copy_from_slice(sk.rest_pose().locals());
        walk.sample_cached(&mut cache, t, TimePolicy::Wrap, &mut pose).unwrap();
        feet.sample_contacts(&walk, t, TimePolicy::Wrap, &mut contacts).unwrap();
        let mut at = placement;
        let offset = feet.apply(&sk, &mut pose, &mut at, &contacts, &*ground).unwrap();
        assert_eq!(r.instance.ground_offset(), offset, "update {k}");
        for (j, (a, b)) in r.pose.locals().iter().zip(pose.locals()).enumerate() {
            let (qa, qb) = (a.rotation.coords, b.rotation.coords);
            let dr = (qa - qb).norm().min((qa + qb).norm());
            let dt = (a.translation - b.translation).norm();
            assert!(dt < 1e-5 && dr < 1e-5, "update {k} joint {j}: {dt} {dr}");
        }
    }
}

#[test]
fn root_motion_is_the_clips_travel_mixed_by_weight() {
    let (sk, clips) = mannequin();
    let m = anim_mannequin::build();
    let (vw, vr) = (m.travel_velocity("walk").unwrap(), m.travel_velocity("run").unwrap());
    let mut b = GraphBuilder::new();
    b.float("speed", 0.0);
    b.sync_group("gait", anim_graph::desc::SyncMode::Phase);
    b.clip("walk", "walk").sync("gait");
    b.clip("run", "run").sync("gait");
    b.blend_space_1d("move", "speed", &[("walk", vw.z), ("run", vr.z)]);
    let g = Arc::new(b.build("move", &sk, &clips).unwrap());
    let (dw, dr) = (1.0, 0.7);
    for want in [vw.z, 0.5 * (vw.z + vr.z), vr.z] {
        // In sync both clips run at the group rate r = Σ wᵢ/dᵢ cycles a second, each moving
        // its stride vᵢ·dᵢ a cycle; the blend moves r · Σ wᵢ·vᵢ·dᵢ.
        let w = (want - vw.z) / (vr.z - vw.z);
        let predicted = ((1.0 - w) / dw + w / dr) * ((1.0 - w) * vw.z * dw + w * vr.z * dr);
        let mut r = Run::new(&g);
        r.instance.set_float(g.float_param("speed").unwrap(), want).unwrap();
        let mut world = Transform::IDENTITY;
        // The first update places the clip that joins the group without moving it.
        r.step(1.0 / 60.0);
        for _ in 0..120 {
            r.step(1.0 / 60.0);
            world = world.combine(&r.motion);
        }
        let speed = world.translation.z / 2.0;
        assert!((speed - predicted).abs() < 0.005 * predicted, "asked {want}, moved at {speed}, predicted {predicted}");
        // Which is the point asked for within 6% (the rate and the weights are both linear
        // in it, their product not quite).
        assert!((speed - want).abs() < 0.06 * want, "asked {want}, moved at {speed}");
        assert!(world.translation.x.abs() < 0.02, "{:?}", world.translation);
    }
}

#[test]
fn runtime_clips_give_the_exact_clips_poses_within_their_tolerance() {
    let (sk, exact) = mannequin();
    let (_, runtime) = mannequin_runtime();
    let ge = common::locomotion(&sk, &exact);
    let gr = common::locomotion(&sk, &runtime);
    let (mut a, mut b) = (Run::new(&ge), Run::new(&gr));
    let mut worst = 0.0f32;
    let (mut ga, mut gb) = (vec![Transform::IDENTITY; sk.len()], vec![Transform::IDENTITY; sk.len()]);
    for k in 0..240 {
        let t = k as f32 / 60.0;
        for r in [&mut a, &mut b] {
            let g = r.instance.graph().clone();
            r.instance.set_float(g.float_param("move_z").unwrap(), (t * 0.9).min(2.2)).unwrap();
            r.instance.set_float(g.float_param("move_x").unwrap(), if t > 2.0 { 0.8 } else { 0.0 }).unwrap();
            if k == 90 {
                r.instance.set_trigger(g.trigger_param("punch").unwrap()).unwrap();
            }
            r.step(1.0 / 60.0);
        }
        a.pose.globals(&sk, &mut ga).unwrap();
        b.pose.globals(&sk, &mut gb).unwrap();
        for (x, y) in ga.iter().zip(&gb) {
            worst = worst.max((x.translation - y.translation).norm());
        }
    }
    // Compiled to 1 mm at the skin; joints are within a few millimetres.
    println!("runtime vs exact clips through the locomotion graph: {:.2} mm at the joints", worst * 1e3);
    assert!(worst < 0.005, "{worst}");
}

#[test]
fn an_update_refuses_bad_arguments() {
    let clips = ClipSet::from_clips([hold("a", 1.0, 1.0, &[])]);
    let mut b = GraphBuilder::new();
    b.float("x", 0.0);
    b.clip("a", "a");
    let g = Arc::new(b.build("a", &chain(2), &clips).unwrap());
    let other = Arc::new(b.build("a", &chain(2), &clips).unwrap());
    let mut i = GraphInstance::new(g.clone());
    let (mut pose, mut motion, mut events) = (g.skeleton().rest_pose().clone(), Transform::IDENTITY, Vec::new());
    for dt in [-0.1, f32::NAN, f32::INFINITY] {
        assert!(matches!(i.update(dt, &mut pose, &mut motion, &mut events), Err(UpdateError::BadTimeStep(_))));
    }
    let mut short = Pose::identity(1);
    assert!(matches!(i.update(0.1, &mut short, &mut motion, &mut events), Err(UpdateError::Pose(_))));
    let mut foreign = chain(3).rest_pose().clone();
    assert!(i.update(0.1, &mut foreign, &mut motion, &mut events).is_err());
    assert_eq!(i.set_float(other.float_param("x").unwrap(), 1.0), Err(anim_graph::param::ParamError::ForeignHandle));
    assert!(i.set_float(g.float_param("x").unwrap(), f32::NAN).is_err());
    assert!(i.update(0.1, &mut pose, &mut motion, &mut events).is_ok());
}
