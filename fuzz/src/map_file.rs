//! The path every input of the `map_file` target takes, shared word for word with the
//! workspace's regression test (`anim-retarget/tests/fuzz_map_file.rs` includes this file):
//! bytes → UTF-8 text → [`anim_retarget::parse_map_file`] for the mannequin's skeleton.
//!
//! A refused file is fine, provided its error's JSON pointer is one (empty, or starting
//! with `/`). An accepted map must then hold what the loader promises, and anything else
//! is a bug that panics (which the fuzzer reports as a crash):
//! - it passes [`HumanoidMap::validate_with_rest`](anim_retarget::HumanoidMap::validate_with_rest);
//! - written back ([`anim_retarget::write_map_file`]) and read again, it is the same map;
//! - it rigs the skeleton (bind-pose reference) or the rig refuses it with a typed error;
//! - a rig retargets the mannequin's walk onto it for a few frames (feet placed by IK) with
//!   finite local transforms.

use anim_core::clip::{Clip, TimePolicy};
use anim_core::pose::Skeleton;
use anim_retarget::{HumanoidRig, Reference, RetargetJob, RetargetSettings, Retargeter, auto_map};
use std::sync::OnceLock;

/// What one input did when it did not panic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Not UTF-8.
    NotText,
    /// Refused by the loader, with this message.
    Refused(String),
    /// Accepted, but the rig refused the map (a degenerate reference), with this message.
    NoRig(String),
    /// Accepted, rigged and retargeted.
    Retargeted,
}

struct Fixture {
    skeleton: Skeleton,
    walk: Clip,
    rig: HumanoidRig,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let m = anim_mannequin::build();
        let map = auto_map(&m.skeleton).map;
        let rig = HumanoidRig::new(&m.skeleton, map, Reference::SkeletonBind).expect("the mannequin rigs");
        let walk = m.clip("walk").expect("the mannequin walks").clone();
        Fixture { skeleton: m.skeleton, walk, rig }
    })
}

/// Runs one input (see the module docs); panics on a bug.
pub fn parse_and_retarget(data: &[u8]) -> Outcome {
    let Ok(text) = std::str::from_utf8(data) else { return Outcome::NotText };
    let f = fixture();
    let map = match anim_retarget::parse_map_file(text, &f.skeleton) {
        Ok(map) => map,
        Err(e) => {
            let p = e.pointer();
            assert!(p.is_empty() || p.starts_with('/'), "not a JSON pointer: {p:?} ({e})");
            return Outcome::Refused(e.to_string());
        }
    };
    if let Err(e) = map.validate_with_rest(&f.skeleton) {
        panic!("an accepted map does not validate: {e}");
    }
    let written = anim_retarget::write_map_file(&map, &f.skeleton);
    match anim_retarget::parse_map_file(&written, &f.skeleton) {
        Ok(again) => assert_eq!(again, map, "written and read again, the map changed:\n{written}"),
        Err(e) => panic!("a written map file is refused: {e}\n{written}"),
    }
    let rig = match HumanoidRig::new(&f.skeleton, map, Reference::SkeletonBind) {
        Ok(rig) => rig,
        Err(e) => return Outcome::NoRig(e.to_string()),
    };
    let rt = Retargeter::new(&f.rig, &rig, RetargetSettings::default()).expect("default settings are valid");
    let mut job = RetargetJob::new(&rt);
    let mut pose = f.skeleton.rest_pose().clone();
    let mut out = f.skeleton.rest_pose().clone();
    for i in 0..4 {
        f.walk.sample(i as f32 * 0.25, TimePolicy::Wrap, &mut pose).expect("the walk fits the mannequin");
        job.run(&rt, &pose, &[1.0, 1.0, 0.0, 0.0], &mut out).expect("the job runs on a finite pose");
        if let Some(j) = out.locals().iter().position(|t| !t.is_finite()) {
            panic!("frame {i}: joint {j} has a non-finite local transform");
        }
    }
    Outcome::Retargeted
}

/// Map files to start a campaign from (written by the `map_seeds` binary): the mannequin's
/// automatic map, and copies with roles cleared, renamed, swapped or given twice.
pub fn seeds() -> Vec<(String, String)> {
    let f = fixture();
    let base = anim_retarget::write_map_file(&auto_map(&f.skeleton).map, &f.skeleton);
    let mut out = vec![("auto.json".to_owned(), base.clone())];
    let edits: [(&str, &str, &str); 6] = [
        ("no_toes.json", "\"left_toes\": \"ball_l\"", "\"left_toes\": null"),
        ("unknown_joint.json", "\"foot_l\"", "\"Foot_L\""),
        ("swapped.json", "\"thigh_l\"", "\"thigh_r\""),
        ("leg_on_neck.json", "\"left_upper_leg\": \"thigh_l\"", "\"left_upper_leg\": \"neck\""),
        ("role_twice.json", "\"head\": \"head\"", "\"head\": \"head\", \"head\": \"neck\""),
        ("spine_short.json", "\"spine_01\",", ""),
    ];
    for (name, from, to) in edits {
        out.push((name.to_owned(), base.replacen(from, to, 1)));
    }
    out
}
