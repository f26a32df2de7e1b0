//! Retargeting checked on the shared humanoids, frame by frame, against the source sampled
//! on its own: a character onto itself, the mannequin onto each other character (and the
//! Woman onto the mannequin) for bone directions, planted feet and the floor, and a round
//! trip.

mod common;

use anim_core::clip::{Clip, TimePolicy};
use anim_core::pose::Skeleton;
use anim_gltf::Model;
use anim_math::{Transform, Vec3};
use anim_retarget::{
    HumanoidRig, OfflineSettings, RetargetSettings, RetargetedClip, Retargeter, Role, Side, retarget_clip,
};

/// Model-space positions of every joint of `clip` at `t`, sampled over the rest pose.
fn positions(skeleton: &Skeleton, clip: &Clip, t: f32) -> Vec<Vec3> {
    let mut pose = skeleton.rest_pose().clone();
    clip.sample(t, TimePolicy::Clamp, &mut pose).expect("the clip fits its skeleton");
    let mut g = vec![Transform::IDENTITY; skeleton.len()];
    pose.globals(skeleton, &mut g).expect("pose fits");
    g.iter().map(|t| t.translation).collect()
}

fn feet_and_toes(rig: &HumanoidRig) -> Vec<usize> {
    Side::BOTH.into_iter().flat_map(|s| [rig.joint(Role::Foot(s)), rig.joint(Role::Toes(s))]).flatten().collect()
}

fn retarget(rt: &Retargeter, target: &HumanoidRig, clip: &Clip, rate: f32) -> RetargetedClip {
    let settings = OfflineSettings { rate, ..OfflineSettings::default() };
    retarget_clip(rt, clip, &settings, &feet_and_toes(target)).expect("the clip retargets")
}

/// The diagonal of the box around every joint over every sample.
fn diagonal(frames: &[Vec<Vec3>]) -> f32 {
    let (mut lo, mut hi) = (Vec3::repeat(f32::INFINITY), Vec3::repeat(f32::NEG_INFINITY));
    for p in frames.iter().flatten() {
        lo = lo.inf(p);
        hi = hi.sup(p);
    }
    (hi - lo).norm()
}

/// Retargeting a character onto itself reproduces every joint's model-space position
/// within 1e-5 of the bounding-box diagonal, on every clip of every shared humanoid, at
/// every frame of the new clip. Bone lengths are carried from the source here
/// (`keep_bone_lengths: false`): CesiumMan moves its upper arms by translation (3 % of the
/// bone) and the Woman scales her bones by up to 1e-4, which a character keeping its own
/// bone lengths would not reproduce. The mannequin's clips move no joint but the hips, so
/// on it the default settings reproduce it too.
#[test]
fn identity_on_every_clip_of_every_humanoid() {
    let carry = RetargetSettings { keep_bone_lengths: false, ..RetargetSettings::default() };
    let mut cases = vec![("mannequin", RetargetSettings::default())];
    cases.extend(common::HUMANOIDS.iter().map(|&h| (h, carry)));
    for (name, settings) in cases {
        let model = common::load(name);
        let rig = common::rig(&model);
        let rt = Retargeter::new(&rig, &rig, settings).expect("retargeter");
        let s = &model.skeleton;
        for clip in &model.clips {
            let out = retarget(&rt, &rig, clip, 30.0);
            let times = &out.report.times;
            let source: Vec<Vec<Vec3>> = times.iter().map(|&t| positions(s, clip, t)).collect();
            let target: Vec<Vec<Vec3>> = times.iter().map(|&t| positions(s, &out.clip, t)).collect();
            let tolerance = 1e-5 * diagonal(&source);
            let worst = source
                .iter()
                .zip(&target)
                .flat_map(|(a, b)| a.iter().zip(b).map(|(p, q)| (p - q).norm()))
                .fold(0.0f32, f32::max);
            assert!(worst <= tolerance, "{name} {:?}: {worst} > {tolerance}", clip.name());
            assert!(times.len() >= (clip.duration() * 30.0) as usize, "every frame checked");
        }
    }
}

/// A bone of the direction check: a joint and the joint at the far end of its bone, in
/// the source and in the target.
struct Bone {
    label: String,
    source: (usize, usize),
    target: (usize, usize),
    tolerance_deg: f32,
}

/// The bones both rigs have, outside the legs (which the contact IK corrects): the arms,
/// shoulders, neck and head from their roles; the torso chain bone by bone when the two
/// chains have the same length, else the target's bones against the source chain read
/// at the same normalized lengths (10°).
fn bones(source: &HumanoidRig, target: &HumanoidRig) -> (Vec<Bone>, Option<TorsoCheck>) {
    let mut out = Vec::new();
    for role in Role::ALL {
        if role.is_leg() || role == Role::Hips {
            continue;
        }
        let Some(end) = role.bone_end() else { continue };
        if let (Some(sj), Some(se), Some(tj), Some(te)) =
            (source.joint(role), source.joint(end), target.joint(role), target.joint(end))
        {
            out.push(Bone { label: role.name().into(), source: (sj, se), target: (tj, te), tolerance_deg: 5.0 });
        }
    }
    let (sc, tc) = (source.map().torso_chain(), target.map().torso_chain());
    if sc.len() == tc.len() {
        for i in 0..sc.len() - 1 {
            out.push(Bone {
                label: format!("torso bone {i}"),
                source: (sc[i], sc[i + 1]),
                target: (tc[i], tc[i + 1]),
                tolerance_deg: 5.0,
            });
        }
        (out, None)
    } else {
        let u = |rig: &HumanoidRig, chain: &[usize]| {
            let r = rig.reference();
            let mut acc = vec![0.0f32];
            for w in chain.windows(2) {
                acc.push(acc.last().unwrap() + (r[w[1]].translation - r[w[0]].translation).norm());
            }
            let total = *acc.last().unwrap();
            acc.iter().map(|a| a / total).collect::<Vec<f32>>()
        };
        let check = TorsoCheck { su: u(source, &sc), tu: u(target, &tc), sc, tc };
        (out, Some(check))
    }
}

/// Torso chains of different lengths: the target's bones against the source polyline at
/// the same normalized lengths (parameters from the reference positions).
struct TorsoCheck {
    sc: Vec<usize>,
    tc: Vec<usize>,
    su: Vec<f32>,
    tu: Vec<f32>,
}

impl TorsoCheck {
    fn point(&self, p: &[Vec3], x: f32) -> Vec3 {
        let i = (0..self.su.len() - 1).find(|&i| x <= self.su[i + 1]).unwrap_or(self.su.len() - 2);
        let t = ((x - self.su[i]) / (self.su[i + 1] - self.su[i])).clamp(0.0, 1.0);
        p[self.sc[i]].lerp(&p[self.sc[i + 1]], t)
    }
}

fn angle_deg(a: &Vec3, b: &Vec3) -> f32 {
    anim_math::quat::angle_between(a, b).to_degrees()
}

/// What one source → target case measured.
#[derive(Default, Debug)]
struct Measured {
    direction_deg: f32,
    torso_deg: f32,
    placement: f32,
    slide: f32,
    lowest: f32,
}

fn cross(source_model: &Model, target_model: &Model) -> Measured {
    let (srig, trig) = (common::rig(source_model), common::rig(target_model));
    let rt = Retargeter::new(&srig, &trig, RetargetSettings::default()).expect("retargeter");
    let k = rt.leg_ratio();
    let (bones, torso) = bones(&srig, &trig);
    let feet = feet_and_toes(&trig);
    let mut m = Measured { lowest: f32::INFINITY, ..Measured::default() };
    for clip in &source_model.clips {
        let out = retarget(&rt, &trig, clip, 60.0);
        let times = &out.report.times;
        let mut start: [Option<(Vec3, Vec3)>; 2] = [None, None];
        for (f, &t) in times.iter().enumerate() {
            let sp = positions(&source_model.skeleton, clip, t);
            let tp = positions(&target_model.skeleton, &out.clip, t);
            for b in &bones {
                let a = angle_deg(&(sp[b.source.1] - sp[b.source.0]), &(tp[b.target.1] - tp[b.target.0]));
                assert!(a <= b.tolerance_deg, "{:?} {} at {t}: {a}°", clip.name(), b.label);
                m.direction_deg = m.direction_deg.max(a);
            }
            if let Some(tc) = &torso {
                for i in 0..tc.tc.len() - 1 {
                    let s = tc.point(&sp, tc.tu[i + 1]) - tc.point(&sp, tc.tu[i]);
                    let a = angle_deg(&s, &(tp[tc.tc[i + 1]] - tp[tc.tc[i]]));
                    assert!(a <= 10.0, "{:?} torso bone {i} at {t}: {a}°", clip.name());
                    m.torso_deg = m.torso_deg.max(a);
                }
            }
            // Planted feet: at the scaled source position, moving with it, above the floor.
            for (limb, st) in start.iter_mut().enumerate() {
                let (s_end, t_end) = rt.limb_ends(limb).expect("feet are placed");
                let goal = rt.scaled_position(limb, &sp[s_end]).expect("a foot");
                if out.report.planted[limb][f] {
                    let at = tp[t_end];
                    m.placement = m.placement.max((at - goal).norm() / k);
                    let (a0, g0) = *st.get_or_insert((at, goal));
                    m.slide = m.slide.max(((at - a0) - (goal - g0)).norm() / k);
                } else {
                    *st = None;
                }
            }
            for &j in &feet {
                m.lowest = m.lowest.min(tp[j].y / k);
            }
        }
    }
    m
}

/// The mannequin's clips on CesiumMan, RiggedFigure and the Woman, and the Woman's clips
/// on the mannequin, every frame at 60 Hz:
/// - outside the IK-corrected legs, every mapped bone points within 5° of the source's
///   (10° for the torso bones when the spine chains differ in length: CesiumMan and
///   RiggedFigure have one spine joint, the mannequin two);
/// - while a source foot is planted, the target's is at the scaled source position and
///   moves with it, within 1 cm scaled to the target's leg length;
/// - no foot or toe joint goes below the floor.
#[test]
fn directions_contacts_and_floor() {
    let mannequin = common::load("mannequin");
    let woman = common::load("Woman");
    for (source, target) in
        [("mannequin", "CesiumMan"), ("mannequin", "RiggedFigure"), ("mannequin", "Woman"), ("Woman", "mannequin")]
    {
        let load = |n: &str| match n {
            "mannequin" => mannequin.clone(),
            "Woman" => woman.clone(),
            other => common::load(other),
        };
        let m = cross(&load(source), &load(target));
        println!("{source} → {target}: {m:?}");
        assert!(m.placement <= 0.01 && m.slide <= 0.01, "{source} → {target}: {m:?}");
        assert!(m.lowest >= -1e-4, "{source} → {target}: a foot below the floor, {m:?}");
    }
}

/// Round trip: the mannequin's clips onto the Woman and back onto the mannequin, compared
/// at the frames of the second clip with the original (the mannequin is 1.81 m tall).
///
/// The tolerance, part by part:
/// - **Rotations return exactly**: the first pass gives the Woman `Q_w = Δ · S · R_w` with
///   `S` the turn that aligns her reference bone onto the mannequin's; the second reads
///   `Δ' = Q_w · R_w⁻¹ = Δ · S` and turns the mannequin's reference by the opposite turn
///   `S⁻¹`, so `Q = Δ · S · S⁻¹ · R = Δ · R`; the hips go out by `k` and back by `1/k`.
///   What is left is the spine, whose two chains put their joints at different fractions
///   of the torso (the Woman's at 0.29 and 0.62, the mannequin's at 0.29 and 0.65), so
///   each pass blends neighbouring joints' turns: up to 2 mm on the upper body.
/// - **Ankles** go back where they were while planted (the scaled position of the scaled
///   position), and follow the returned rotations otherwise: 2 mm.
/// - **Knees**: the contact IK reaches the foot with the knee turned about the hip–ankle
///   line towards where the retargeted knee pointed; the Woman's hips are relatively
///   wider, so her knees swing a little and that swing comes back: 3 mm.
/// - **Toes**: the Woman's toe joints sit on the floor in her reference while the
///   mannequin's are 3 cm above it, so when the mannequin rises onto the ball of its foot
///   her foot is pitched up to keep her toes above the floor; the mannequin gets that
///   pitch back: 2 cm at the toe joint (13 cm from the ankle, about 8°).
#[test]
fn round_trip_mannequin_woman_mannequin() {
    let (mannequin, woman) = (common::load("mannequin"), common::load("Woman"));
    let (mrig, wrig) = (common::rig(&mannequin), common::rig(&woman));
    let there = Retargeter::new(&mrig, &wrig, RetargetSettings::default()).expect("retargeter");
    let back = Retargeter::new(&wrig, &mrig, RetargetSettings::default()).expect("retargeter");
    let s = &mannequin.skeleton;
    for clip in &mannequin.clips {
        let on_woman = retarget(&there, &wrig, clip, 60.0).clip;
        let out = retarget(&back, &mrig, &on_woman, 60.0);
        let legs: Vec<usize> = Side::BOTH
            .into_iter()
            .flat_map(|sd| [Role::LowerLeg(sd), Role::Foot(sd), Role::Toes(sd)])
            .filter_map(|r| mrig.joint(r))
            .collect();
        let mut worst = [0.0f32; 4]; // upper body, knees, ankles, toes
        for &t in &out.report.times {
            let (a, b) = (positions(s, clip, t), positions(s, &out.clip, t));
            for j in 0..s.len() {
                let e = (a[j] - b[j]).norm();
                let k = legs.iter().position(|&l| l == j).map_or(0, |i| 1 + i % 3);
                worst[k] = worst[k].max(e);
            }
        }
        let tolerance = [0.002, 0.003, 0.002, 0.02];
        for (part, (w, tol)) in ["upper body", "knees", "ankles", "toes"].iter().zip(worst.iter().zip(tolerance)) {
            assert!(*w <= tol, "{}: {part} came back {w} m off (tolerance {tol} m)", clip.name());
        }
    }
}

/// Root motion travels scaled: the mannequin's walk with its hips' travel extracted into a
/// motion track, retargeted onto the Woman, moves her by the leg ratio times as far.
#[test]
fn root_motion_is_scaled_by_the_leg_ratio() {
    use anim_core::offline::root_motion::{RootMotionSettings, extract};
    let (mannequin, woman) = (common::load("mannequin"), common::load("Woman"));
    let (mrig, wrig) = (common::rig(&mannequin), common::rig(&woman));
    let rt = Retargeter::new(&mrig, &wrig, RetargetSettings::default()).expect("retargeter");
    // The walk made to travel: the hips move 1.4 m forward over the cycle.
    let walk = mannequin.clip("walk").unwrap();
    let hips = mrig.joint(Role::Hips).unwrap();
    let travel = |t: f32| Vec3::new(0.0, 0.0, 1.4 * t / walk.duration());
    let times = sample_times_of(&walk);
    let mut tracks = walk.joint_tracks().to_vec();
    let jt = tracks.iter_mut().find(|t| t.joint == hips).expect("the walk moves the hips");
    let values: Vec<Vec3> =
        times.iter().map(|&t| jt.translation.as_ref().map_or(Vec3::zeros(), |tr| tr.sample(t)) + travel(t)).collect();
    jt.translation = Some(anim_core::clip::Track::new(anim_core::clip::Interpolation::Linear, times, values).unwrap());
    let moving = Clip::new("walk", tracks, walk.curves().to_vec()).unwrap();
    let moving = extract(&moving, &mannequin.skeleton, &RootMotionSettings::new(hips)).expect("extracts");
    let out = retarget(&rt, &wrig, &moving, 30.0);
    let (a, b) = (moving.root_motion().unwrap(), out.clip.root_motion().expect("the motion track comes along"));
    assert_eq!(a.times(), b.times());
    let k = rt.scale();
    for (fa, fb) in a.frames().iter().zip(b.frames()) {
        assert!((fb.translation - fa.translation.component_mul(&k)).norm() < 1e-5);
        assert_eq!(fa.rotation, fb.rotation);
    }
    let cycle = b.cycle().translation.norm();
    assert!((cycle - 1.4 * rt.leg_ratio()).abs() < 1e-3, "{cycle}");
}

fn sample_times_of(clip: &Clip) -> Vec<f32> {
    (0..=30).map(|i| clip.duration() * i as f32 / 30.0).collect()
}
