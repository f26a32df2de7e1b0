//! Steady frames allocate nothing: a counting global allocator watches every per-frame
//! path of the runtime on the mannequin (sampling, hierarchy, palettes, CPU skinning,
//! blending, crossfades, additive layers, every IK solver, foot grounding and the crowd).
//!
//! Only allocations made by the thread that runs a case are counted (a thread-local
//! switch), and everything runs from one `#[test]` so nothing else of this binary runs
//! alongside. Each case is warmed up first (buffers reach their working size), then run
//! for many frames with the counter on: the count must stay at zero.
//!
//! `Crowd::update_parallel` is covered below its parallel threshold (where it runs
//! `update`) and above it, on the crowd's persistent worker threads: for that case every
//! thread's allocations are counted ([`ALL_THREADS`]), the workers' included.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use anim_core::blend::additive::{add, add_in_place, make_additive_base};
use anim_core::blend::blend;
use anim_core::blend::mix::subtree_mask;
use anim_core::blend::{CrossFadeController, blend_into, blend_masked};
use anim_core::clip::{BakedClip, SamplingCache, TimePolicy};
use anim_core::skin::skinning::{NormalMode, SkinningInput, SkinningOutput, dual_quaternion, linear_blend};
use anim_core::skin::{DqPalette, Palette, Skin, SkinMethod, palette};
use anim_crowd::atlas::AtlasClip;
use anim_crowd::crowd::{CharacterDesc, Crowd};
use anim_ik::{
    CcdSolver, FabrikSolver, FootGrounding, FootSettings, HeightField, IkChain, Leg, LegSolver, TwoBoneIk, aim,
    aim_joint, solve_two_bone,
};
use anim_mannequin::Side;
use anim_math::{Mat4, Quat, Transform, Vec3};

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);
static BYTES: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    // Const-initialized and without a destructor: reading it never allocates.
    static COUNTING: Cell<bool> = const { Cell::new(false) };
}

/// Count the allocations of every thread, not only the one running the case.
static ALL_THREADS: AtomicBool = AtomicBool::new(false);

fn note(size: usize) {
    if ALL_THREADS.load(Ordering::Relaxed) || COUNTING.try_with(Cell::get).unwrap_or(false) {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(size, Ordering::Relaxed);
    }
}

// SAFETY: every call is forwarded unchanged to `System`; the bookkeeping only touches
// atomics and a const thread-local, neither of which allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: the caller's contract for `alloc` is passed on as is.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        // SAFETY: as for `alloc`; `ptr` and `layout` come from this allocator, i.e. System.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by System with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const WARM_UP: usize = 3;
const FRAMES: usize = 240;
const DT: f32 = 1.0 / 60.0;

/// Runs `frame(i)` for warm-up frames, then for [`FRAMES`] counted frames; returns the
/// allocations and bytes of the counted ones.
fn counted(mut frame: impl FnMut(usize)) -> (usize, usize) {
    for i in 0..WARM_UP {
        frame(i);
    }
    ALLOCATIONS.store(0, Ordering::Relaxed);
    BYTES.store(0, Ordering::Relaxed);
    COUNTING.with(|c| c.set(true));
    for i in WARM_UP..WARM_UP + FRAMES {
        frame(i);
    }
    COUNTING.with(|c| c.set(false));
    (ALLOCATIONS.load(Ordering::Relaxed), BYTES.load(Ordering::Relaxed))
}

/// Runs every case and collects the ones that allocated, so one run reports them all.
struct Cases {
    failures: Vec<String>,
    ran: usize,
}

impl Cases {
    fn check(&mut self, name: &str, frame: impl FnMut(usize)) {
        let (n, bytes) = counted(frame);
        self.ran += 1;
        if n != 0 {
            self.failures.push(format!("{name}: {n} allocations, {bytes} bytes in {FRAMES} frames"));
        }
    }
}

fn time(i: usize) -> f32 {
    i as f32 * DT
}

#[test]
fn steady_frames_allocate_nothing() {
    let man = anim_mannequin::build();
    let skeleton = &man.skeleton;
    let n = skeleton.len();
    let walk = man.clip("walk").expect("the mannequin has a walk");
    let run = man.clip("run").expect("the mannequin has a run");
    let lean = man.clip("lean_left").expect("the mannequin has a lean");
    let mut cases = Cases { failures: Vec::new(), ran: 0 };

    // Sampling: searching, cached, and a baked clip.
    let mut pose = skeleton.rest_pose().clone();
    cases.check("Clip::sample", |i| {
        walk.sample(time(i), TimePolicy::Wrap, &mut pose).expect("the walk fits the mannequin");
    });
    let mut cache = SamplingCache::new(walk);
    cases.check("Clip::sample_cached", |i| {
        walk.sample_cached(&mut cache, time(i), TimePolicy::Wrap, &mut pose).expect("the walk fits");
    });
    let baked = BakedClip::bake(run, skeleton.rest_pose(), 30.0).expect("the run bakes");
    cases.check("BakedClip::sample", |i| {
        baked.sample(time(i), TimePolicy::Wrap, &mut pose).expect("the baked run fits");
    });
    let mut contacts = [0.0f32; 2];
    let feet_legs = [Side::Left, Side::Right].map(|s| {
        let l = man.leg(s);
        let name = if s == Side::Left { "foot_contact_l" } else { "foot_contact_r" };
        Leg { hip: l.hip, knee: l.knee, ankle: l.ankle, toe: l.toe, contact_curve: name.into() }
    });
    let settings = FootSettings { ankle_height: 0.08, ..FootSettings::default() };
    let mut feet = FootGrounding::new(skeleton, feet_legs.to_vec(), settings).expect("mannequin legs");
    cases.check("FootGrounding::sample_contacts", |i| {
        feet.sample_contacts(walk, time(i), TimePolicy::Wrap, &mut contacts).expect("the walk has contact curves");
    });

    // Hierarchy and palettes.
    let skin = Skin::from_skeleton(skeleton);
    let mut model = vec![Mat4::identity(); n];
    let mut globals = vec![Transform::IDENTITY; n];
    let mut matrices = vec![Mat4::identity(); n];
    let mut transforms = vec![Transform::IDENTITY; n];
    let mut dqs = vec![anim_math::DualQuat::identity(); n];
    let mut dq_palette = DqPalette::new();
    let mut lbs_palette = Palette::new(SkinMethod::Lbs);
    let mut dq_any = Palette::new(SkinMethod::Dq);
    cases.check("Pose::local_to_model", |i| {
        walk.sample_cached(&mut cache, time(i), TimePolicy::Wrap, &mut pose).expect("the walk fits");
        pose.local_to_model(skeleton, &mut model).expect("lengths match");
    });
    cases.check("Pose::globals", |_| pose.globals(skeleton, &mut globals).expect("lengths match"));
    cases.check("palette::skinning_matrices", |_| {
        palette::skinning_matrices(&model, &skin, &mut matrices).expect("skin fits");
    });
    cases.check("palette::skinning_transforms", |_| {
        palette::skinning_transforms(&globals, &skin, &mut transforms).expect("skin fits");
    });
    cases.check("palette::skinning_dual_quats", |_| {
        palette::skinning_dual_quats(&model, &skin, &mut dqs).expect("skin fits");
    });
    cases.check("DqPalette::update", |_| dq_palette.update(&model, &skin).expect("skin fits"));
    cases.check("Palette::update (matrices)", |_| lbs_palette.update(&model, &skin).expect("skin fits"));
    cases.check("Palette::update (dual quaternions)", |_| dq_any.update(&model, &skin).expect("skin fits"));

    // CPU skinning, positions and normals.
    let influences = man.mesh.influences.as_ref().expect("the mannequin is skinned");
    let input = SkinningInput { influences, positions: &man.mesh.positions, normals: Some(&man.mesh.normals) };
    let vertices = man.mesh.vertex_count();
    let (mut out_p, mut out_n) = (vec![Vec3::zeros(); vertices], vec![Vec3::zeros(); vertices]);
    for mode in [NormalMode::Direct, NormalMode::InverseTranspose, NormalMode::DirectUnnormalized] {
        cases.check(&format!("skinning::linear_blend ({mode:?})"), |_| {
            let mut out = SkinningOutput { positions: &mut out_p, normals: Some(&mut out_n) };
            linear_blend(&input, &matrices, mode, &mut out).expect("buffers fit");
        });
    }
    cases.check("skinning::dual_quaternion", |_| {
        let mut out = SkinningOutput { positions: &mut out_p, normals: Some(&mut out_n) };
        dual_quaternion(&input, &dq_palette, &mut out).expect("buffers fit");
    });
    cases.check("skinning::skin (palette)", |_| {
        let mut out = SkinningOutput { positions: &mut out_p, normals: Some(&mut out_n) };
        anim_core::skin::skinning::skin(&input, &dq_any, NormalMode::Direct, &mut out).expect("buffers fit");
    });
    let rigid = DqPalette::from_rigid(dq_palette.dual_quats());
    cases.check("skinning::dual_quaternion (rigid)", |_| {
        let mut out = SkinningOutput { positions: &mut out_p, normals: Some(&mut out_n) };
        dual_quaternion(&input, &rigid, &mut out).expect("buffers fit");
    });

    // Blending and additive layers.
    let mut a = skeleton.rest_pose().clone();
    let mut b = skeleton.rest_pose().clone();
    let mut out = skeleton.rest_pose().clone();
    walk.sample(0.3, TimePolicy::Wrap, &mut a).expect("the walk fits");
    run.sample(0.2, TimePolicy::Wrap, &mut b).expect("the run fits");
    let spine = skeleton.find("spine_01").expect("the mannequin has a spine");
    let mut mask = vec![0.0f32; n];
    subtree_mask(&mut mask, spine, 0.7, skeleton).expect("mask fits");
    cases.check("blend", |i| {
        blend(&mut out, &a, &b, (i % 10) as f32 / 10.0, None, skeleton).expect("poses fit");
    });
    cases.check("blend_into", |i| blend_into(&mut out, &b, (i % 7) as f32 / 7.0, Some(spine), skeleton).expect("fits"));
    cases.check("blend_masked", |_| blend_masked(&mut out, &a, &b, 0.5, &mask, None, skeleton).expect("fits"));
    let base = make_additive_base(skeleton, lean).expect("the lean fits");
    let mut additive = skeleton.rest_pose().clone();
    cases.check("add / add_in_place", |i| {
        lean.sample(time(i), TimePolicy::Wrap, &mut additive).expect("the lean fits");
        add(&mut out, &a, &additive, &base, None, skeleton).expect("fits");
        add_in_place(&mut out, &additive, &base, 0.5, Some(spine), skeleton).expect("fits");
    });

    // Crossfade: frames of a clip playing, then frames while a fade runs and ends.
    let (walk_arc, run_arc) = (Arc::new(walk.clone()), Arc::new(run.clone()));
    let mut fader = CrossFadeController::new(skeleton, 2);
    fader.play(Arc::clone(&walk_arc), TimePolicy::Wrap).expect("the walk fits");
    cases.check("CrossFadeController::update (playing)", |_| fader.update(DT).expect("finite dt"));
    fader.fade_to(Arc::clone(&run_arc), 1.5, TimePolicy::Wrap).expect("the run fits");
    cases.check("CrossFadeController::update (fading, then done)", |_| fader.update(DT).expect("finite dt"));
    assert!(!fader.is_fading(), "the fade ended inside the counted frames");

    // IK: every solver, on the mannequin's legs, every frame a new goal.
    let placement = Transform::from_translation(Vec3::new(0.5, 0.0, -1.0));
    let leg = man.leg(Side::Left);
    let two_bone = TwoBoneIk::new(skeleton, leg.hip, leg.knee, leg.ankle).expect("a leg is a chain");
    let rest_ankle = placement.combine(&skeleton.rest_pose().global(skeleton, leg.ankle).expect("joint")).translation;
    let goal = |i: usize| rest_ankle + Vec3::new(0.1 * (i as f32 * 0.1).sin(), 0.15, 0.1 * (i as f32 * 0.07).cos());
    cases.check("TwoBoneIk::solve", |i| {
        pose.locals_mut().copy_from_slice(skeleton.rest_pose().locals());
        two_bone.solve(skeleton, &mut pose, &placement, &goal(i), Some(&Vec3::z())).expect("finite goal");
    });
    let (mut hip, mut knee) = (pose.locals()[leg.hip], pose.locals()[leg.knee]);
    let ankle_t = pose.locals()[leg.ankle].translation;
    cases.check("solve_two_bone", |i| {
        solve_two_bone(&placement, &mut hip, &mut knee, &ankle_t, &goal(i), None).expect("finite goal");
    });
    let head = skeleton.find("head").expect("the mannequin has a head");
    let look = |i: usize| Vec3::new((i as f32 * 0.05).sin() * 3.0, 1.6, 3.0);
    cases.check("aim_joint", |i| {
        aim_joint(skeleton, &mut pose, head, &placement, &look(i), &Vec3::z(), &Vec3::y(), &Vec3::y()).expect("fine");
    });
    let mut head_local = pose.locals()[head];
    cases.check("aim", |i| {
        aim(&placement, &mut head_local, &look(i), &Vec3::z(), &Vec3::y(), &(Vec3::y() * 1000.0)).expect("fine");
    });
    let joints = [leg.hip, leg.knee, leg.ankle, leg.toe];
    let mut chain = IkChain::from_pose(skeleton, skeleton.rest_pose(), &joints, &placement).expect("a leg chain");
    let ccd = CcdSolver::new(15, 1e-4);
    cases.check("CcdSolver::solve", |i| {
        pose.locals_mut().copy_from_slice(skeleton.rest_pose().locals());
        chain.read_pose(skeleton, &pose, &placement).expect("pose fits");
        ccd.solve(&mut chain, &goal(i)).expect("finite goal");
        chain.write_pose(&mut pose).expect("pose fits");
    });
    let mut fabrik = FabrikSolver::default();
    cases.check("FabrikSolver::solve", |i| {
        pose.locals_mut().copy_from_slice(skeleton.rest_pose().locals());
        chain.read_pose(skeleton, &pose, &placement).expect("pose fits");
        fabrik.solve(&mut chain, &goal(i)).expect("finite goal");
        chain.write_pose(&mut pose).expect("pose fits");
    });
    let ground = HeightField::from_fn(-3.0, -3.0, 0.25, 25, 25, |x, z| 0.05 * x + 0.03 * (2.0 * z).sin())
        .expect("a valid height field");
    for (name, solver) in [
        ("two-bone", LegSolver::TwoBone),
        ("CCD", LegSolver::Ccd(CcdSolver::new(15, 1e-3))),
        ("FABRIK", LegSolver::Fabrik { iterations: 15, threshold: 1e-3 }),
    ] {
        feet.settings_mut().solver = solver;
        cases.check(&format!("FootGrounding::apply ({name})"), |i| {
            walk.sample_cached(&mut cache, time(i), TimePolicy::Wrap, &mut pose).expect("the walk fits");
            feet.sample_contacts(walk, time(i), TimePolicy::Wrap, &mut contacts).expect("contact curves");
            let mut root = placement;
            feet.apply(skeleton, &mut pose, &mut root, &contacts, &ground).expect("finite input");
        });
    }

    // The crowd: a mixed one (blends and crossfades under way).
    let clip = |name: &str, first_frame, frame_count: u32, duration: f32, looping| AtlasClip {
        name: name.into(),
        first_frame,
        frame_count,
        rate: (frame_count - 1) as f32 / duration,
        duration,
        looping,
        bounds: (Vec3::new(-0.5, 0.0, -0.5), Vec3::new(0.5, 1.8, 0.5)),
    };
    let clips = [clip("walk", 0, 31, 1.0, true), clip("run", 31, 21, 0.66, true), clip("die", 52, 61, 2.0, false)];
    let mut crowd = Crowd::with_capacity(&clips, 500);
    for i in 0..500u32 {
        let desc = CharacterDesc {
            position: Vec3::new((i % 25) as f32, 0.0, (i / 25) as f32),
            rotation: Quat::from_euler_angles(0.0, i as f32 * 0.1, 0.0),
            scale: 1.0,
            clip: i % 2,
            time: (i % 13) as f32 * 0.07,
            speed: 0.5 + (i % 5) as f32 * 0.25,
        };
        let index = crowd.add(desc).expect("valid character");
        match i % 8 {
            0 | 4 => crowd.set_blend(index, (i + 1) % 2, 0.1, 0.5),
            2 => crowd.set_clip(index, (i + 1) % 2, 60.0).map(drop),
            _ => Ok(()),
        }
        .expect("valid clip");
    }
    cases.check("Crowd::update", |_| crowd.update(DT));
    // A crowd this small is updated serially by update_parallel too (see the note at the
    // top for large ones).
    cases.check("Crowd::update_parallel (small crowd, serial)", |_| crowd.update_parallel(DT, 2));
    // Above the threshold: three threads (two of them the crowd's workers, started in the
    // warm-up), every thread counted.
    let mut big = Crowd::with_capacity(&clips, 9000);
    for i in 0..9000u32 {
        let desc = CharacterDesc {
            position: Vec3::new((i % 90) as f32, 0.0, (i / 90) as f32),
            rotation: Quat::identity(),
            scale: 1.0,
            clip: i % 3,
            time: (i % 13) as f32 * 0.07,
            speed: 0.5 + (i % 5) as f32 * 0.25,
        };
        let index = big.add(desc).expect("valid character");
        if i % 4 == 0 {
            big.set_blend(index, (i + 1) % 3, 0.1, 0.5).expect("valid clip");
        }
    }
    big.update_parallel(DT, 3);
    ALL_THREADS.store(true, Ordering::Relaxed);
    cases.check("Crowd::update_parallel (9000 characters, 3 threads)", |_| big.update_parallel(DT, 3));
    ALL_THREADS.store(false, Ordering::Relaxed);

    // The crowd job (anim_crowd::job): exact and baked clips, matrix and
    // dual-quaternion palettes, on one thread and on every core (at least two, so the
    // job's own worker threads run; started in the warm-up, every thread counted).
    {
        use anim_crowd::job::{CrowdCharacter, CrowdJob, PaletteOutput};
        let exact = [walk.clone(), run.clone()];
        let baked_clips = [baked.clone(), BakedClip::bake(walk, skeleton.rest_pose(), 30.0).expect("the walk bakes")];
        let mut exact_job =
            CrowdJob::new(skeleton, &exact).with_palettes(&skin, PaletteOutput::Both).expect("skin fits");
        let mut baked_job = CrowdJob::new(skeleton, &baked_clips[..]);
        for i in 0..64 {
            let c =
                CrowdCharacter { clip: i % 2, time: i as f32 * 0.05, speed: 0.5 + (i % 3) as f32, looping: i % 5 != 0 };
            exact_job.add(c).expect("valid character");
            baked_job.add(c).expect("valid character");
        }
        let all = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get).max(2);
        cases.check("CrowdJob::update (exact clips, palettes, 1 thread)", |_| {
            exact_job.update(DT, 1).expect("the clips fit");
        });
        cases.check("CrowdJob::update (baked clips, 1 thread)", |_| baked_job.update(DT, 1).expect("the clips fit"));
        ALL_THREADS.store(true, Ordering::Relaxed);
        cases.check(&format!("CrowdJob::update (exact clips, palettes, {all} threads)"), |_| {
            exact_job.update(DT, all).expect("the clips fit");
        });
        cases.check(&format!("CrowdJob::update (baked clips, {all} threads)"), |_| {
            baked_job.update(DT, all).expect("the clips fit");
        });
        cases.check("CrowdJob::run_parallel", |_| exact_job.run_parallel().expect("the clips fit"));
        ALL_THREADS.store(false, Ordering::Relaxed);
    }

    assert!(cases.ran >= 30, "every case ran ({})", cases.ran);
    assert!(cases.failures.is_empty(), "steady frames allocated:\n{}", cases.failures.join("\n"));

    // The counter itself works: a frame that does allocate is seen.
    let (count, bytes) = counted(|i| drop(std::hint::black_box(vec![i as u8; 100])));
    assert_eq!((count, bytes), (FRAMES, 100 * FRAMES));
}
