//! Sync groups on the mannequin: a walk/run blend swept from all walk to all run over two
//! seconds, the character moved by the graph's root motion. While a foot is planted (the
//! blended contact curve at or above 0.5) its ankle should stay where it was put down. With
//! the clips in a marker sync group each planted foot slides at most 1 cm; without sync,
//! at least five times more. Both are measured and printed.

mod common;

use anim_core::clip::TimePolicy;
use anim_graph::builder::GraphBuilder;
use anim_graph::clips::ClipSet;
use anim_graph::desc::SyncMode;
use anim_math::{Transform, Vec3};
use common::{Run, mannequin};
use std::sync::Arc;

/// The worst slide of a planted foot over the sweep, and the number of steps measured.
fn sweep(sync: Option<SyncMode>) -> (f32, usize) {
    let (sk, clips): (_, ClipSet) = mannequin();
    let m = anim_mannequin::build();
    let (v_walk, v_run) = (m.travel_velocity("walk").unwrap().z, m.travel_velocity("run").unwrap().z);
    let mut b = GraphBuilder::new();
    b.float("speed", v_walk);
    if let Some(mode) = sync {
        b.sync_group("gait", mode);
    }
    for name in ["walk", "run"] {
        let c = b.clip(name, name);
        if sync.is_some() {
            c.sync("gait");
        }
    }
    b.blend_space_1d("move", "speed", &[("walk", v_walk), ("run", v_run)]);
    let g = Arc::new(b.build("move", &sk, &clips).unwrap());
    let (speed, space) = (g.float_param("speed").unwrap(), g.node("move").unwrap());
    let children = g.blend_children(space);
    let exact = |name: &str| clips.clips()[clips.find(name).unwrap()].clip().clone();
    let sources = [exact("walk"), exact("run")];
    let mut r = Run::new(&g);
    let dt = 1.0 / 120.0;
    let mut world = Transform::IDENTITY;
    let legs = [m.leg(anim_mannequin::Side::Left).ankle, m.leg(anim_mannequin::Side::Right).ankle];
    let curves = ["foot_contact_l", "foot_contact_r"];
    let mut planted_at: [Option<Vec3>; 2] = [None, None];
    let (mut worst, mut steps, mut slide) = (0.0f32, 0usize, [0.0f32; 2]);
    // Half a second of walking first, then the two-second sweep.
    let frames = (2.5 / dt) as usize;
    for k in 0..frames {
        let s = ((k as f32 * dt - 0.5) / 2.0).clamp(0.0, 1.0);
        r.instance.set_float(speed, v_walk + s * (v_run - v_walk)).unwrap();
        r.step(dt);
        world = world.combine(&r.motion);
        let w = r.instance.blend_weights(space).to_vec();
        for (f, (&ankle, curve)) in legs.iter().zip(curves).enumerate() {
            // The contact the blend shows: each clip's curve at its time, by weight.
            let contact: f32 = (0..2)
                .map(|c| {
                    let t = r.instance.clip_time(children[c]).unwrap();
                    let i = sources[c].curve_index(curve).unwrap();
                    w[c] * sources[c].sample_curve(i, t, TimePolicy::Clamp).unwrap()
                })
                .sum();
            let p = world.transform_point(&r.pose.global(&sk, ankle).unwrap().translation);
            if contact >= 0.5 {
                let at = *planted_at[f].get_or_insert(p);
                slide[f] = slide[f].max(Vec3::new(p.x - at.x, 0.0, p.z - at.z).norm());
            } else if planted_at[f].take().is_some() {
                if k as f32 * dt > 0.5 {
                    worst = worst.max(slide[f]);
                    steps += 1;
                }
                slide[f] = 0.0;
            }
        }
    }
    (worst, steps)
}

#[test]
fn synced_gaits_plant_their_feet_and_unsynced_ones_slide() {
    let (synced, n) = sweep(Some(SyncMode::Markers));
    let (phase, n_phase) = sweep(Some(SyncMode::Phase));
    let (free, n_free) = sweep(None);
    println!(
        "walk → run over 2 s, largest slide of a planted foot in one step: marker sync {:.1} mm ({n} steps), \
         phase sync {:.1} mm ({n_phase} steps), no sync {:.1} mm ({n_free} steps)",
        synced * 1e3,
        phase * 1e3,
        free * 1e3
    );
    assert!(n >= 4, "{n} steps measured");
    assert!(synced <= 0.01, "marker sync: a planted foot slid {synced} m");
    assert!(free >= 5.0 * synced, "without sync {free} m, with {synced} m");
}
