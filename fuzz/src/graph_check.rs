//! The path every animation-graph fuzz input takes, shared word for word with the
//! workspace's hostile-input test (`anim-graph/tests/hostile.rs` includes this file):
//! bytes → [`anim_graph::file::load`] against two characters (the mannequin with its
//! clips, and a five-joint chain with three small clips, which `all_nodes.json` uses) →
//! for each graph that loads, 100 updates with parameters and time steps drawn from a
//! generator seeded by the input (so a crash reproduces), foot grounding on a height field.
//!
//! A rejected input is fine. Once a graph loaded, anything that goes wrong is a bug and
//! panics (which the fuzzer reports as a crash): an update error (the graph was checked;
//! the arguments are valid), or a non-finite joint transform or root-motion step (every
//! number a graph accepts is finite, so no input may produce a non-finite output).

use anim_core::clip::{Clip, ClipEvent, Interpolation, JointTracks, Track};
use anim_core::pose::{JointDesc, Skeleton};
use anim_graph::clips::ClipSet;
use anim_graph::graph::Graph;
use anim_graph::instance::GraphInstance;
use anim_graph::param::ParamKind;
use anim_ik::HeightField;
use anim_math::{Quat, Transform, Vec3};
use std::sync::{Arc, OnceLock};

/// What one fixture did with an input, when nothing panicked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The loader refused it, with this message.
    Rejected(String),
    /// Loaded and played this many updates.
    Played(usize),
}

/// A character the inputs are loaded for.
pub struct Fixture {
    /// Its skeleton.
    pub skeleton: Skeleton,
    /// Its clips.
    pub clips: ClipSet,
}

/// A five-joint chain `j0`…`j4` (each 1 up from its parent) with clips `a` (1 s, x = 1,
/// an event), `b` (0.5 s, turning), `c` (2 s, x from 0 to 3).
fn chain() -> Fixture {
    let joints = (0..5usize)
        .map(|i| {
            let t = if i == 0 { Transform::IDENTITY } else { Transform::from_translation(Vec3::y()) };
            JointDesc::new(format!("j{i}"), i.checked_sub(1), t)
        })
        .collect();
    let skeleton = Skeleton::new(joints).expect("a chain is a valid skeleton");
    let line = |name: &str, d: f32, from: f32, to: f32| {
        let mut t = JointTracks::new(0);
        t.translation = Some(
            Track::new(Interpolation::Linear, vec![0.0, d], vec![Vec3::new(from, 0.0, 0.0), Vec3::new(to, 0.0, 0.0)])
                .expect("two increasing keys"),
        );
        let mut r = JointTracks::new(2);
        let q = |a: f32| Quat::from_axis_angle(&Vec3::z_axis(), a).into_inner();
        r.rotation = Some(Track::new(Interpolation::Linear, vec![0.0, d], vec![q(0.0), q(to)]).expect("two keys"));
        Clip::new(name, vec![t, r], vec![]).expect("distinct joints")
    };
    let a = line("a", 1.0, 1.0, 1.0).with_events(vec![ClipEvent::new("mid", 0.5)]).expect("inside the clip");
    let clips = ClipSet::from_clips([a, line("b", 0.5, 2.0, 0.5), line("c", 2.0, 0.0, 3.0)].map(Arc::new));
    Fixture { skeleton, clips }
}

/// The mannequin with its root-motion clips.
fn mannequin() -> Fixture {
    let m = anim_mannequin::build();
    Fixture { clips: ClipSet::from_clips(m.root_motion_clips().into_iter().map(Arc::new)), skeleton: m.skeleton }
}

/// The two fixtures, built once.
pub fn fixtures() -> &'static [Fixture; 2] {
    static F: OnceLock<[Fixture; 2]> = OnceLock::new();
    F.get_or_init(|| [mannequin(), chain()])
}

fn ground() -> &'static Arc<HeightField> {
    static G: OnceLock<Arc<HeightField>> = OnceLock::new();
    G.get_or_init(|| {
        Arc::new(
            HeightField::from_fn(-8.0, -8.0, 0.5, 33, 33, |x, z| 0.2 * (0.7 * x).sin() + 0.1 * z.cos())
                .expect("a valid grid"),
        )
    })
}

/// xorshift64*, seeded from the input (FNV-1a), so a run replays.
struct Rng(u64);

impl Rng {
    fn new(bytes: &[u8]) -> Self {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in bytes {
            h = (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
        Self(h | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }
}

/// Runs `bytes` through the whole path for every fixture. Panics on a bug (see the
/// module docs).
pub fn load_and_play(bytes: &[u8]) -> Vec<Outcome> {
    fixtures()
        .iter()
        .map(|f| match anim_graph::file::load(bytes, &f.skeleton, &f.clips) {
            Ok(g) => Outcome::Played(play(Arc::new(g), bytes)),
            Err(e) => Outcome::Rejected(e.to_string()),
        })
        .collect()
}

/// 100 updates of `graph` with inputs drawn from `seed` (see the module docs).
pub fn play(graph: Arc<Graph>, seed: &[u8]) -> usize {
    let mut rng = Rng::new(seed);
    let mut i = GraphInstance::new(graph.clone());
    i.set_ground(Some(ground().clone()));
    let (mut pose, mut motion, mut events) = (graph.skeleton().rest_pose().clone(), Transform::IDENTITY, Vec::new());
    let params = graph.params().infos().to_vec();
    const VALUES: [f32; 8] = [0.0, -1.0, 1.0, 0.5, 2.5, -7.0, 1e30, -1e-30];
    const STEPS: [f32; 6] = [0.0, 1.0 / 60.0, 1.0 / 30.0, 0.25, 1.0, 30.0];
    for _ in 0..100 {
        for p in &params {
            match p.kind {
                ParamKind::Float => {
                    let h = graph.float_param(&p.name).expect("declared float");
                    let v = if rng.below(2) == 0 { VALUES[rng.below(8) as usize] } else { 6.0 * rng.unit() - 3.0 };
                    i.set_float(h, v).expect("finite values are accepted");
                }
                ParamKind::Bool => {
                    i.set_bool(graph.bool_param(&p.name).expect("declared bool"), rng.below(2) == 0)
                        .expect("own handle");
                }
                ParamKind::Trigger => {
                    if rng.below(8) == 0 {
                        i.set_trigger(graph.trigger_param(&p.name).expect("declared trigger")).expect("own handle");
                    }
                }
            }
        }
        if rng.below(16) == 0 {
            let far = Vec3::new(1e3 * rng.unit(), 0.0, -1e3 * rng.unit());
            i.set_placement(Transform::from_translation(if rng.below(2) == 0 { far } else { Vec3::zeros() }));
        }
        let dt = STEPS[rng.below(6) as usize];
        if let Err(e) = i.update(dt, &mut pose, &mut motion, &mut events) {
            panic!("an update of an accepted graph failed: {e}");
        }
        assert!(pose.locals().iter().all(Transform::is_finite), "a non-finite joint transform: {pose:?}");
        assert!(motion.is_finite(), "a non-finite root-motion step: {motion:?}");
        assert!(i.ground_offset().is_finite());
    }
    100
}
