//! Animation graphs (`anim-graph`): `GraphInstance::update` of the mannequin's locomotion
//! graph (a machine, a polar 2D blend space of 9 clips in a sync group, an upper-body layer
//! over a machine with an empty state, foot grounding on a height field), for one
//! character and for 1,000, in ns a character; next to the same poses produced by
//! hand-written calls of anim-core's and anim-ik's jobs (blend-space weights, phase sync,
//! sampling, two-pose blends, root-motion mixing, foot grounding), so the graph's overhead
//! shows. And a crowd of 1,000 graph-driven mannequins on runtime clips that keep jumping
//! and punching (inertialized and crossfaded transitions always in flight).
//!
//! The graph compared with the hand-written code is the locomotion graph with its sync
//! group in phase mode (the hand-written code syncs by phase); the setup checks that both
//! give the same poses before anything is timed.
//!
//! Run: `cargo bench -p benches --bench graph`. Figures are recorded in BENCHMARKS.md.

use anim_core::blend::layered::blend_two_into;
use anim_core::clip::root_motion::blend_deltas;
use anim_core::clip::{Clip, LoopMode, Playback, RuntimeClip, RuntimeClipContext, SoaSampler, TimePolicy};
use anim_core::offline::JointRadii;
use anim_core::pose::{Pose, Skeleton};
use anim_core::skin::Skin;
use anim_graph::blend_space::GradientBands;
use anim_graph::clips::{ClipSet, GraphClip};
use anim_graph::desc::SpaceForm;
use anim_graph::graph::Graph;
use anim_graph::instance::GraphInstance;
use anim_ik::{FootGrounding, FootSettings, HeightField, Leg};
use anim_math::{Transform, Vec3};
use criterion::{Criterion, Throughput, criterion_group};
use std::hint::black_box;
use std::sync::Arc;

const DT: f32 = 1.0 / 60.0;
const CROWD: usize = 1000;

/// The blend space's clips and points, as in the locomotion graph file.
const POINTS: [(&str, [f32; 2]); 9] = [
    ("idle", [0.0, 0.0]),
    ("walk", [0.0, 0.85]),
    ("run", [0.0, 2.21]),
    ("walk_backward", [0.0, -0.83]),
    ("run_backward", [0.0, -1.69]),
    ("walk_left", [0.56, 0.0]),
    ("walk_right", [-0.56, 0.0]),
    ("run_left", [1.35, 0.0]),
    ("run_right", [-1.35, 0.0]),
];

struct Setup {
    skeleton: Skeleton,
    exact: Vec<Arc<Clip>>,
    runtime: Vec<Arc<RuntimeClip>>,
    ground: Arc<HeightField>,
}

fn setup() -> Setup {
    let m = anim_mannequin::build();
    let skin = Skin::from_skeleton(&m.skeleton);
    let radii = JointRadii::from_skin(&m.skeleton, &skin, &[&m.mesh]).expect("invertible binds");
    let exact: Vec<Arc<Clip>> = m.root_motion_clips().into_iter().map(Arc::new).collect();
    let runtime = exact
        .iter()
        .map(|c| Arc::new(RuntimeClip::compile(c, &m.skeleton, &radii, 0.001).expect("the mannequin compiles")))
        .collect();
    let ground = Arc::new(
        HeightField::from_fn(-40.0, -40.0, 0.25, 321, 321, |x, z| 0.14 * (0.9 * x + 0.3).sin() * (0.7 * z).cos())
            .expect("a valid grid"),
    );
    Setup { skeleton: m.skeleton, exact, runtime, ground }
}

fn graph(s: &Setup, runtime: bool, json: &str) -> Arc<Graph> {
    let clips = if runtime {
        s.exact
            .iter()
            .zip(&s.runtime)
            .fold(ClipSet::new(), |set, (c, r)| set.with(GraphClip::runtime(c.clone(), r.clone())))
    } else {
        ClipSet::from_clips(s.exact.iter().cloned())
    };
    Arc::new(anim_graph::file::load(json.as_bytes(), &s.skeleton, &clips).expect("the locomotion graph loads"))
}

/// The locomotion graph with its sync group syncing by phase (what the hand-written code does).
fn phase_graph_json() -> String {
    anim_mannequin::LOCOMOTION_GRAPH.replace("\"mode\": \"markers\"", "\"mode\": \"phase\"")
}

/// One graph-driven character with its buffers.
struct Character {
    instance: GraphInstance,
    pose: Pose,
    motion: Transform,
    events: Vec<anim_graph::event::GraphEvent>,
    input: [f32; 2],
    clock: f32,
}

impl Character {
    fn new(g: &Arc<Graph>, s: &Setup, input: [f32; 2], at: Vec3) -> Self {
        let mut instance = GraphInstance::new(g.clone());
        instance.set_ground(Some(s.ground.clone()));
        instance.set_placement(Transform::from_translation(at));
        instance.set_float(g.float_param("move_x").expect("declared"), input[0]).expect("finite");
        instance.set_float(g.float_param("move_z").expect("declared"), input[1]).expect("finite");
        Self {
            instance,
            pose: s.skeleton.rest_pose().clone(),
            motion: Transform::IDENTITY,
            events: Vec::with_capacity(64),
            input,
            clock: 0.0,
        }
    }

    fn update(&mut self) {
        self.instance.update(DT, &mut self.pose, &mut self.motion, &mut self.events).expect("a valid update");
    }
}

/// The same poses by hand: anim-core's and anim-ik's jobs called directly.
struct Hand {
    bands: GradientBands,
    clips: Vec<(Arc<Clip>, Arc<RuntimeClip>)>,
    contexts: Vec<RuntimeClipContext>,
    playbacks: Vec<Playback>,
    weights: [f32; 9],
    was_active: [bool; 9],
    leader: Option<usize>,
    skeleton: Skeleton,
    scratch: Pose,
    feet: FootGrounding,
    ground: Arc<HeightField>,
    placement: Transform,
    motions: Vec<(Transform, f32)>,
}

impl Hand {
    fn new(s: &Setup, at: Vec3) -> Self {
        let find = |n: &str| s.exact.iter().position(|c| c.name() == n).expect("a mannequin clip");
        let clips: Vec<(Arc<Clip>, Arc<RuntimeClip>)> =
            POINTS.iter().map(|(n, _)| (s.exact[find(n)].clone(), s.runtime[find(n)].clone())).collect();
        let points: Vec<[f32; 2]> = POINTS.iter().map(|p| p.1).collect();
        let leg = |side: &str| Leg {
            hip: s.skeleton.find(&format!("thigh_{side}")).expect("joint"),
            knee: s.skeleton.find(&format!("calf_{side}")).expect("joint"),
            ankle: s.skeleton.find(&format!("foot_{side}")).expect("joint"),
            toe: s.skeleton.find(&format!("ball_{side}")).expect("joint"),
            contact_curve: format!("foot_contact_{side}"),
        };
        let settings = FootSettings { ankle_height: 0.09, toe_height: 0.03, ..FootSettings::default() };
        Self {
            bands: GradientBands::new(SpaceForm::Polar, &points).expect("distinct points"),
            contexts: clips.iter().map(|(_, r)| r.new_context()).collect(),
            playbacks: clips.iter().map(|(_, r)| Playback::new(SoaSampler::duration(&**r), LoopMode::Repeat)).collect(),
            clips,
            weights: [0.0; 9],
            was_active: [false; 9],
            leader: None,
            scratch: s.skeleton.rest_pose().clone(),
            feet: FootGrounding::new(&s.skeleton, vec![leg("l"), leg("r")], settings).expect("mannequin legs"),
            skeleton: s.skeleton.clone(),
            ground: s.ground.clone(),
            placement: Transform::from_translation(at),
            motions: Vec::with_capacity(9),
        }
    }

    /// One update at input `p`, into `out` and `motion`.
    fn update(&mut self, p: [f32; 2], out: &mut Pose, motion: &mut Transform) {
        self.bands.weights(p, &mut self.weights);
        let w = self.weights;
        let dur: [f32; 9] = std::array::from_fn(|i| self.playbacks[i].duration());
        // Phase sync: the heaviest clip leads at the weight-averaged rate.
        let (mut leader, mut rate, mut total) = (0, 0.0, 0.0);
        for i in 0..9 {
            if w[i] > w[leader] {
                leader = i;
            }
            rate += w[i] / dur[i];
            total += w[i];
        }
        let rate = rate / total;
        if let Some(prev) = self.leader
            && prev != leader
            && !self.was_active[leader]
        {
            let t = self.playbacks[prev].time() / dur[prev] * dur[leader];
            let pb = &mut self.playbacks[leader];
            let u = pb.position() - f64::from(pb.time()) + f64::from(t);
            pb.seek(u);
        }
        let mut steps = [anim_core::clip::Step::default(); 9];
        steps[leader] = self.playbacks[leader].advance(rate * dur[leader] * DT);
        let phase = (self.playbacks[leader].time() / dur[leader]).rem_euclid(1.0);
        for i in (0..9).filter(|&i| i != leader && w[i] > 0.0) {
            let target = phase * dur[i];
            let pb = &mut self.playbacks[i];
            steps[i] = if self.was_active[i] {
                let expected = rate * dur[i] * DT;
                let off = (target - pb.time() - expected).rem_euclid(dur[i]);
                let off = if off > 0.5 * dur[i] { off - dur[i] } else { off };
                pb.advance(expected + off)
            } else {
                let u = pb.position() - f64::from(pb.time()) + f64::from(target);
                pb.seek(u);
                pb.last_step()
            };
        }
        let (mut first, mut covered) = (true, 0.0f32);
        let mut contacts = [0.0f32; 2];
        self.motions.clear();
        for i in 0..9 {
            if w[i] <= 0.0 {
                continue;
            }
            let (clip, rt) = &self.clips[i];
            let t = self.playbacks[i].time();
            let target = if first { &mut *out } else { &mut self.scratch };
            rt.sample_pose(&mut self.contexts[i], t, TimePolicy::Clamp, target).expect("fits");
            if !first {
                blend_two_into(out, &self.scratch, w[i] / (covered + w[i]), &self.skeleton).expect("fits");
            }
            first = false;
            covered += w[i];
            let step = steps[i];
            let m = clip.root_motion().map_or(Transform::IDENTITY, |m| m.delta(&self.playbacks[i], step.from, step.to));
            self.motions.push((m, w[i]));
            for (c, name) in contacts.iter_mut().zip(["foot_contact_l", "foot_contact_r"]) {
                let v = clip.curve_index(name).and_then(|k| clip.sample_curve(k, t, TimePolicy::Clamp)).unwrap_or(1.0);
                *c += w[i] * v;
            }
        }
        for c in &mut contacts {
            *c /= covered;
        }
        *motion = blend_deltas(self.motions.iter().map(|(m, w)| (m, *w)));
        let mut at = self.placement;
        self.feet.apply(&self.skeleton, out, &mut at, &contacts, &*self.ground).expect("finite");
        self.was_active = w.map(|x| x > 0.0);
        self.leader = Some(leader);
    }
}

/// Inputs of crowd member `i`: spread over the blend space.
fn input_of(i: usize) -> [f32; 2] {
    let a = i as f32 * 2.399;
    let r = 0.3 + 1.6 * ((i * 7919) % 1000) as f32 / 1000.0;
    [r * a.sin() * 0.8, r * a.cos()]
}

fn position_of(i: usize) -> Vec3 {
    Vec3::new((i % 32) as f32 * 2.0 - 31.0, 0.0, (i / 32) as f32 * 2.0 - 31.0)
}

fn check_same_poses(s: &Setup) {
    let g = graph(s, true, &phase_graph_json());
    for i in [0, 3, 17] {
        let mut c = Character::new(&g, s, input_of(i), position_of(i));
        let mut h = Hand::new(s, position_of(i));
        let (mut pose, mut motion) = (s.skeleton.rest_pose().clone(), Transform::IDENTITY);
        for _ in 0..200 {
            c.update();
            h.update(c.input, &mut pose, &mut motion);
        }
        let worst = c
            .pose
            .locals()
            .iter()
            .zip(pose.locals())
            .map(|(a, b)| (a.translation - b.translation).norm() + (a.rotation.coords - b.rotation.coords).norm())
            .fold(0.0f32, f32::max);
        assert!(worst < 1e-4, "crowd member {i}: graph and hand-written poses differ by {worst}");
        assert!((c.motion.translation - motion.translation).norm() < 1e-5, "root motion differs");
    }
}

fn graph_vs_hand(c: &mut Criterion) {
    let s = setup();
    check_same_poses(&s);
    let phase = phase_graph_json();
    let mut g = c.benchmark_group("graph");
    g.throughput(Throughput::Elements(1));
    for (name, runtime, json) in [
        ("locomotion_exact_1", false, anim_mannequin::LOCOMOTION_GRAPH),
        ("locomotion_runtime_1", true, anim_mannequin::LOCOMOTION_GRAPH),
        ("locomotion_phase_runtime_1", true, phase.as_str()),
    ] {
        let gr = graph(&s, runtime, json);
        let mut ch = Character::new(&gr, &s, input_of(3), position_of(3));
        g.bench_function(name, |b| b.iter(|| ch.update()));
    }
    let mut h = Hand::new(&s, position_of(3));
    let (mut pose, mut motion) = (s.skeleton.rest_pose().clone(), Transform::IDENTITY);
    g.bench_function("hand_written_runtime_1", |b| b.iter(|| h.update(black_box(input_of(3)), &mut pose, &mut motion)));
    g.throughput(Throughput::Elements(CROWD as u64));
    let gr = graph(&s, true, &phase);
    let mut crowd: Vec<Character> = (0..CROWD).map(|i| Character::new(&gr, &s, input_of(i), position_of(i))).collect();
    g.bench_function("locomotion_phase_runtime_1000", |b| b.iter(|| crowd.iter_mut().for_each(Character::update)));
    let mut hands: Vec<(Hand, Pose, Transform)> = (0..CROWD)
        .map(|i| (Hand::new(&s, position_of(i)), s.skeleton.rest_pose().clone(), Transform::IDENTITY))
        .collect();
    g.bench_function("hand_written_runtime_1000", |b| {
        b.iter(|| {
            for (i, (h, p, m)) in hands.iter_mut().enumerate() {
                h.update(input_of(i), p, m);
            }
        })
    });
    g.finish();
}

/// Graph-driven characters on runtime clips, each jumping every 2.5 s and punching every
/// 2 s (at its own phase), so inertialized and crossfaded transitions are always in flight.
struct TransitionCrowd {
    characters: Vec<Character>,
    jump: anim_graph::param::TriggerParam,
    punch: anim_graph::param::TriggerParam,
    grounded: anim_graph::param::BoolParam,
}

impl TransitionCrowd {
    fn new(s: &Setup, count: usize) -> (Self, Arc<Graph>) {
        let gr = graph(s, true, anim_mannequin::LOCOMOTION_GRAPH);
        let characters = (0..count)
            .map(|i| {
                let mut ch = Character::new(&gr, s, input_of(i), position_of(i));
                ch.clock = i as f32 * 0.0173;
                ch
            })
            .collect();
        let crowd = Self {
            characters,
            jump: gr.trigger_param("jump").expect("declared"),
            punch: gr.trigger_param("punch").expect("declared"),
            grounded: gr.bool_param("grounded").expect("declared"),
        };
        (crowd, gr)
    }

    fn step(&mut self) {
        for ch in &mut self.characters {
            let before = ch.clock;
            ch.clock += DT;
            let crossed = |period: f32, at: f32| (before - at).div_euclid(period) != (ch.clock - at).div_euclid(period);
            if crossed(2.5, 0.0) {
                ch.instance.set_trigger(self.jump).expect("own handle");
                ch.instance.set_bool(self.grounded, false).expect("own handle");
            }
            if crossed(2.5, 1.4) {
                ch.instance.set_bool(self.grounded, true).expect("own handle");
            }
            if crossed(2.0, 0.7) {
                ch.instance.set_trigger(self.punch).expect("own handle");
            }
            ch.update();
        }
    }

    /// Warms up into the cycle and says how many characters blend a transition in the
    /// body machine.
    fn warm_up(&mut self, gr: &Graph) -> usize {
        for _ in 0..300 {
            self.step();
        }
        let body = gr.node("body").expect("the body machine");
        self.characters.iter().filter(|c| c.instance.transition(body).is_some()).count()
    }
}

/// 1,000 characters of a [`TransitionCrowd`].
fn crowd_with_transitions(c: &mut Criterion) {
    let s = setup();
    let (mut crowd, gr) = TransitionCrowd::new(&s, CROWD);
    let blending = crowd.warm_up(&gr);
    println!("crowd: {blending} of {CROWD} characters mid-transition in the body machine");
    let mut g = c.benchmark_group("graph");
    g.throughput(Throughput::Elements(CROWD as u64));
    g.bench_function("crowd_runtime_transitions_1000", |b| b.iter(|| crowd.step()));
    g.finish();
}

/// `GRAPH_BENCH_COUNT=KIND N`: runs `N` updates and exits, for instruction counts under
/// `valgrind --tool=callgrind` (subtract a run of `N = 0` for the set-up). `KIND`: `hand`
/// (the hand-written code), `graph` (the phase-synced graph it matches, runtime clips),
/// `graph_markers` / `graph_exact` (the locomotion graph as shipped, runtime / exact clips),
/// all one character at input 3; `hand1000` / `graph1000` (the 1,000-character rows, `N`
/// rounds of all of them: with `--cache-sim=yes` their cache misses); `crowd` (100 characters of a [`TransitionCrowd`], warmed
/// up, then `N` steps of all of them); `ratio` (`N` alternations of the graph and
/// hand-written rows, `REPS` crowd updates a slice, default 2: the quartiles of their time
/// ratio). Otherwise the criterion benchmarks.
fn main() {
    if let Ok(what) = std::env::var("GRAPH_BENCH_COUNT") {
        let n: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(1000);
        let s = setup();
        match what.as_str() {
            "hand" => {
                let mut h = Hand::new(&s, position_of(3));
                let (mut pose, mut motion) = (s.skeleton.rest_pose().clone(), Transform::IDENTITY);
                for _ in 0..n {
                    h.update(black_box(input_of(3)), &mut pose, &mut motion);
                }
            }
            "hand1000" => {
                let mut hands: Vec<(Hand, Pose, Transform)> = (0..CROWD)
                    .map(|i| (Hand::new(&s, position_of(i)), s.skeleton.rest_pose().clone(), Transform::IDENTITY))
                    .collect();
                for _ in 0..n {
                    for (i, (h, p, m)) in hands.iter_mut().enumerate() {
                        h.update(black_box(input_of(i)), p, m);
                    }
                }
            }
            "graph1000" => {
                let gr = graph(&s, true, &phase_graph_json());
                let mut crowd: Vec<Character> =
                    (0..CROWD).map(|i| Character::new(&gr, &s, input_of(i), position_of(i))).collect();
                for _ in 0..n {
                    crowd.iter_mut().for_each(Character::update);
                }
            }
            "ratio" => {
                // Alternates the graph-driven and hand-written rows in one process, in short
                // slices, and prints the median ratio of adjacent slices (slow drift of a
                // shared machine cancels; criterion's figures stay the record).
                let gr = graph(&s, true, &phase_graph_json());
                let mut one = Character::new(&gr, &s, input_of(3), position_of(3));
                let mut hand = Hand::new(&s, position_of(3));
                let (mut pose, mut motion) = (s.skeleton.rest_pose().clone(), Transform::IDENTITY);
                let mut crowd: Vec<Character> =
                    (0..CROWD).map(|i| Character::new(&gr, &s, input_of(i), position_of(i))).collect();
                let mut hands: Vec<(Hand, Pose, Transform)> = (0..CROWD)
                    .map(|i| (Hand::new(&s, position_of(i)), s.skeleton.rest_pose().clone(), Transform::IDENTITY))
                    .collect();
                let time = |f: &mut dyn FnMut()| {
                    let t = std::time::Instant::now();
                    f();
                    t.elapsed().as_secs_f64()
                };
                let (mut r1, mut r1000) = (Vec::new(), Vec::new());
                let reps: usize = std::env::var("REPS").ok().and_then(|v| v.parse().ok()).unwrap_or(2);
                for _ in 0..n {
                    let g = time(&mut || (0..2000).for_each(|_| one.update()));
                    let h = time(&mut || {
                        (0..2000).for_each(|_| hand.update(black_box(input_of(3)), &mut pose, &mut motion))
                    });
                    r1.push(g / h);
                    let g = time(&mut || (0..reps).for_each(|_| crowd.iter_mut().for_each(Character::update)));
                    let h = time(&mut || {
                        for _ in 0..reps {
                            for (i, (h, p, m)) in hands.iter_mut().enumerate() {
                                h.update(input_of(i), p, m);
                            }
                        }
                    });
                    r1000.push(g / h);
                }
                let median = |v: &mut Vec<f64>| {
                    v.sort_by(f64::total_cmp);
                    (v[v.len() / 4], v[v.len() / 2], v[3 * v.len() / 4])
                };
                println!(
                    "graph / hand-written, quartiles of {n} alternations: 1 character {:.3?}, 1,000 characters {:.3?}",
                    median(&mut r1),
                    median(&mut r1000)
                );
            }
            "crowd" => {
                let (mut crowd, gr) = TransitionCrowd::new(&s, 100);
                let blending = crowd.warm_up(&gr);
                eprintln!("crowd: {blending} of 100 characters mid-transition in the body machine");
                for _ in 0..n {
                    crowd.step();
                }
            }
            kind => {
                let json =
                    if kind == "graph" { phase_graph_json() } else { anim_mannequin::LOCOMOTION_GRAPH.to_owned() };
                let gr = graph(&s, kind != "graph_exact", &json);
                let mut ch = Character::new(&gr, &s, input_of(3), position_of(3));
                for _ in 0..n {
                    ch.update();
                }
            }
        }
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}

criterion_group!(benches, graph_vs_hand, crowd_with_transitions);
