//! Shared fixtures of the anim-graph tests: small synthetic skeletons and clips whose
//! values are known exactly, and the mannequin with its locomotion graph.
#![allow(dead_code)]

use anim_core::clip::{Clip, ClipEvent, Interpolation, JointTracks, RuntimeClip, Track};
use anim_core::offline::JointRadii;
use anim_core::pose::{JointDesc, Pose, Skeleton};
use anim_core::skin::Skin;
use anim_graph::clips::{ClipSet, GraphClip};
use anim_graph::event::GraphEvent;
use anim_graph::graph::Graph;
use anim_graph::instance::GraphInstance;
use anim_math::{Transform, Vec3};
use std::sync::Arc;

/// A chain of `n` joints, each 1 up from its parent.
pub fn chain(n: usize) -> Skeleton {
    let joints = (0..n)
        .map(|i| {
            let t = if i == 0 { Transform::IDENTITY } else { Transform::from_translation(Vec3::y()) };
            JointDesc::new(format!("j{i}"), i.checked_sub(1), t)
        })
        .collect();
    Skeleton::new(joints).unwrap()
}

/// A clip of `duration` seconds holding joint 0 at x = `x` (two keys, so it has a length),
/// with `events` at the given times.
pub fn hold(name: &str, x: f32, duration: f32, events: &[(&str, f32)]) -> Arc<Clip> {
    let mut t = JointTracks::new(0);
    let v = Vec3::new(x, 0.0, 0.0);
    t.translation = Some(Track::new(Interpolation::Linear, vec![0.0, duration], vec![v, v]).unwrap());
    let clip = Clip::new(name, vec![t], vec![]).unwrap();
    Arc::new(clip.with_events(events.iter().map(|(n, t)| ClipEvent::new(*n, *t)).collect()).unwrap())
}

/// A clip of `duration` seconds moving joint 0's x from `from` to `to` linearly.
pub fn ramp(name: &str, from: f32, to: f32, duration: f32) -> Arc<Clip> {
    let mut t = JointTracks::new(0);
    t.translation = Some(
        Track::new(
            Interpolation::Linear,
            vec![0.0, duration],
            vec![Vec3::new(from, 0.0, 0.0), Vec3::new(to, 0.0, 0.0)],
        )
        .unwrap(),
    );
    Arc::new(Clip::new(name, vec![t], vec![]).unwrap())
}

/// The mannequin's skeleton and its root-motion clips as exact graph clips.
pub fn mannequin() -> (Skeleton, ClipSet) {
    let m = anim_mannequin::build();
    let clips = ClipSet::from_clips(m.root_motion_clips().into_iter().map(Arc::new));
    (m.skeleton, clips)
}

/// The mannequin's skeleton and its root-motion clips as runtime clips compiled to 1 mm
/// at the skin (the exact clips kept for events, curves and root motion).
pub fn mannequin_runtime() -> (Skeleton, ClipSet) {
    let m = anim_mannequin::build();
    let skin = Skin::from_skeleton(&m.skeleton);
    let radii = JointRadii::from_skin(&m.skeleton, &skin, &[&m.mesh]).unwrap();
    let mut set = ClipSet::new();
    for c in m.root_motion_clips() {
        let rt = RuntimeClip::compile(&c, &m.skeleton, &radii, 0.001).unwrap();
        set.push(GraphClip::runtime(Arc::new(c), Arc::new(rt)));
    }
    (m.skeleton, set)
}

/// The mannequin's locomotion graph over `clips`.
pub fn locomotion(skeleton: &Skeleton, clips: &ClipSet) -> Arc<Graph> {
    let g = anim_graph::file::load(anim_mannequin::LOCOMOTION_GRAPH.as_bytes(), skeleton, clips).unwrap();
    assert!(g.warnings().is_empty(), "{:?}", g.warnings());
    Arc::new(g)
}

/// An instance with its output buffers.
pub struct Run {
    pub instance: GraphInstance,
    pub pose: Pose,
    pub motion: Transform,
    pub events: Vec<GraphEvent>,
}

impl Run {
    pub fn new(graph: &Arc<Graph>) -> Self {
        Self {
            instance: GraphInstance::new(graph.clone()),
            pose: graph.skeleton().rest_pose().clone(),
            motion: Transform::IDENTITY,
            events: Vec::with_capacity(64),
        }
    }

    pub fn step(&mut self, dt: f32) {
        self.instance.update(dt, &mut self.pose, &mut self.motion, &mut self.events).unwrap();
    }

    /// Joint 0's x after the last update.
    pub fn x(&self) -> f32 {
        self.pose.locals()[0].translation.x
    }
}
