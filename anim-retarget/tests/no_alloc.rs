//! The per-frame job allocates nothing: mannequin → Woman (contact IK on both feet, toes
//! kept above the floor) and Woman → mannequin, with and without bone lengths carried,
//! counted by `anim_testkit::alloc`.

mod common;

use anim_core::clip::TimePolicy;
use anim_retarget::{RetargetJob, RetargetSettings, Retargeter};
use anim_testkit::alloc::{Counting, counted};

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn the_job_allocates_nothing() {
    let (mannequin, woman) = (common::load("mannequin"), common::load("Woman"));
    let (mrig, wrig) = (common::rig(&mannequin), common::rig(&woman));
    for (label, source, target, src_rig, dst_rig) in [
        ("mannequin → Woman", &mannequin, &woman, &mrig, &wrig),
        ("Woman → mannequin", &woman, &mannequin, &wrig, &mrig),
    ] {
        for keep in [true, false] {
            let settings = RetargetSettings { keep_bone_lengths: keep, hand_ik: true, ..RetargetSettings::default() };
            let rt = Retargeter::new(src_rig, dst_rig, settings).expect("retargeter");
            let mut job = RetargetJob::new(&rt);
            let clip = &source.clips[1];
            let mut pose = source.skeleton.rest_pose().clone();
            let mut out = target.skeleton.rest_pose().clone();
            let mut placed = 0;
            let (n, bytes) = counted(3, 240, |i| {
                clip.sample(i as f32 / 60.0, TimePolicy::Wrap, &mut pose).expect("clip fits");
                let w = (i % 7) as f32 / 6.0;
                let report = job.run(&rt, &pose, &[w, 1.0 - w, w, 0.5], &mut out).expect("job runs");
                placed += usize::from(report.contact_error[0] < 1e-3);
            });
            assert_eq!((n, bytes), (0, 0), "{label}, keep_bone_lengths {keep}: the job allocated");
            assert!(placed > 0, "{label}: the IK ran and placed feet");
        }
    }
    // The counter itself works: a frame that allocates is seen.
    let (n, bytes) = counted(1, 10, |i| drop(std::hint::black_box(vec![i as u8; 100])));
    assert_eq!((n, bytes), (10, 1000));
}
