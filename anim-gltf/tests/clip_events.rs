//! Clip events through the project's glTF `extras` schema: export → import round trip,
//! and typed errors naming the JSON path of a bad event.

use anim_core::clip::events::ClipEvent;
use anim_core::clip::{Clip, Interpolation, JointTracks, Track};
use anim_core::pose::{JointDesc, Skeleton};
use anim_gltf::{GltfError, export_glb, load_from_bytes};
use anim_math::{Transform, Vec3};

fn skeleton_and_clip() -> (Skeleton, Clip) {
    let s = Skeleton::new(vec![JointDesc::new("root", None, Transform::IDENTITY)]).unwrap();
    let mut jt = JointTracks::new(0);
    jt.translation =
        Some(Track::new(Interpolation::Linear, vec![0.0, 2.0], vec![Vec3::zeros(), Vec3::new(1.0, 0.0, 0.0)]).unwrap());
    let clip = Clip::new("walk", vec![jt], vec![])
        .unwrap()
        .with_events(vec![ClipEvent::new("foot_down", 0.5), ClipEvent::new("foot_up", 1.25)])
        .unwrap();
    (s, clip)
}

#[test]
fn events_round_trip() {
    let (s, clip) = skeleton_and_clip();
    let bytes = export_glb(&s, &[], std::slice::from_ref(&clip)).unwrap();
    std::fs::write(std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("clip_events.glb"), &bytes).unwrap();
    let back = load_from_bytes(&bytes, None).unwrap();
    assert_eq!(back.clips[0].events(), clip.events());
}

/// Replaces the JSON chunk of a GLB by `edit(json)`.
fn patch(bytes: &[u8], edit: impl Fn(&str) -> String) -> Vec<u8> {
    let len = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    let json = std::str::from_utf8(&bytes[20..20 + len]).unwrap();
    let mut new_json = edit(json).into_bytes();
    while !new_json.len().is_multiple_of(4) {
        new_json.push(b' ');
    }
    let rest = &bytes[20 + len..];
    let mut out = Vec::new();
    out.extend_from_slice(&bytes[..8]);
    out.extend_from_slice(&((12 + 8 + new_json.len() + rest.len()) as u32).to_le_bytes());
    out.extend_from_slice(&(new_json.len() as u32).to_le_bytes());
    out.extend_from_slice(&bytes[16..20]);
    out.extend_from_slice(&new_json);
    out.extend_from_slice(rest);
    out
}

#[test]
fn bad_events_name_their_json_path() {
    let (s, clip) = skeleton_and_clip();
    let bytes = export_glb(&s, &[], std::slice::from_ref(&clip)).unwrap();
    // An event after the clip's end (2 s).
    let late = patch(&bytes, |j| j.replace("1.25", "7.5"));
    match load_from_bytes(&late, None) {
        Err(GltfError::Schema { path, .. }) => assert_eq!(path, "/animations/0/extras/animEvents/1"),
        other => panic!("expected a schema error, got {other:?}"),
    }
    // An event without a name.
    let unnamed = patch(&bytes, |j| j.replace("\"name\":\"foot_down\"", "\"nom\":\"foot_down\""));
    match load_from_bytes(&unnamed, None) {
        Err(GltfError::Schema { path, .. }) => assert_eq!(path, "/animations/0/extras/animEvents/0"),
        other => panic!("expected a schema error, got {other:?}"),
    }
}
