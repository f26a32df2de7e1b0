//! The map file: what automatic mapping writes reads back to the same map; bad files are
//! refused with a typed error that points at the value at fault.

use anim_core::pose::{JointDesc, Skeleton};
use anim_retarget::file::write_map_file;
use anim_retarget::map::MapError;
use anim_retarget::{MapFileError, Role, Side, auto_map, parse_map_file};

fn mannequin() -> Skeleton {
    anim_mannequin::build().skeleton
}

/// The mannequin's map file with `edit` applied to its `roles` object.
fn file_with(edit: impl FnOnce(&mut serde_json::Map<String, serde_json::Value>)) -> String {
    let s = mannequin();
    let mut doc: serde_json::Value = serde_json::from_str(&write_map_file(&auto_map(&s).map, &s)).unwrap();
    edit(doc["roles"].as_object_mut().unwrap());
    doc.to_string()
}

fn refused(text: &str) -> MapFileError {
    parse_map_file(text, &mannequin()).expect_err("the file is refused")
}

#[test]
fn written_file_reads_back() {
    let s = mannequin();
    let map = auto_map(&s).map;
    let text = write_map_file(&map, &s);
    assert!(text.contains(r#""left_upper_leg": "thigh_l""#), "{text}");
    assert_eq!(parse_map_file(&text, &s).unwrap(), map);
    // Optional roles may be null or absent; the spine may be absent.
    let text = file_with(|r| {
        r.insert("left_toes".into(), serde_json::Value::Null);
        r.remove("right_toes");
        r.remove("neck");
    });
    let partial = parse_map_file(&text, &s).unwrap();
    assert_eq!(partial.get(Role::Toes(Side::Left)), None);
    assert_eq!(partial.get(Role::Neck), None);
    assert_eq!(partial.get(Role::Head), s.find("head"));
}

#[test]
fn unknown_joint() {
    let e = refused(&file_with(|r| {
        r.insert("left_foot".into(), "foot_left".into());
    }));
    assert_eq!(e, MapFileError::UnknownJoint { pointer: "/roles/left_foot".into(), name: "foot_left".into() });
    let e = refused(&file_with(|r| {
        r.insert("spine".into(), serde_json::json!(["spine_01", "spine_2"]));
    }));
    assert_eq!(e, MapFileError::UnknownJoint { pointer: "/roles/spine/1".into(), name: "spine_2".into() });
}

#[test]
fn role_twice() {
    // The same key twice in the object: JSON parsers keep the last one; a map file refuses it.
    let text = r#"{"version": 1, "roles": {"hips": "pelvis", "left_foot": "foot_l", "left_foot": "ball_l"}}"#;
    assert_eq!(refused(text), MapFileError::DuplicateKey { pointer: "/roles/left_foot".into() });
    // One joint for two roles.
    let e = refused(&file_with(|r| {
        r.insert("right_toes".into(), "ball_l".into());
    }));
    assert!(
        matches!(&e, MapFileError::Map { pointer, source: MapError::JointTwice { .. } } if pointer == "/roles/right_toes"),
        "{e}"
    );
}

#[test]
fn leg_outside_the_hips() {
    // The left upper leg on the neck (the neck role left empty): it hangs from the spine.
    let e = refused(&file_with(|r| {
        r.insert("neck".into(), serde_json::Value::Null);
        r.insert("left_upper_leg".into(), "neck".into());
    }));
    assert!(
        matches!(&e, MapFileError::Map { pointer, source: MapError::LegOutsideHips { role: Role::UpperLeg(Side::Left), .. } }
            if pointer == "/roles/left_upper_leg"),
        "{e}"
    );
    // A lower leg that is not below its upper leg.
    let e = refused(&file_with(|r| {
        r.insert("left_lower_leg".into(), "calf_r".into());
        r.insert("right_lower_leg".into(), "calf_l".into());
    }));
    assert!(
        matches!(&e, MapFileError::Map { pointer, source: MapError::NotBelow { .. } } if pointer == "/roles/left_lower_leg"),
        "{e}"
    );
    // Left and right swapped.
    let e = refused(&file_with(|r| {
        for part in ["upper_leg", "lower_leg", "foot", "toes"] {
            let (l, rr) = (format!("left_{part}"), format!("right_{part}"));
            let (a, b) = (r[&l].clone(), r[&rr].clone());
            r.insert(l, b);
            r.insert(rr, a);
        }
    }));
    assert!(matches!(&e, MapFileError::Map { source: MapError::SideSwapped { .. }, .. }), "{e}");
}

#[test]
fn malformed_files() {
    assert!(matches!(refused("{\"version\": 1,\n \"roles\": {"), MapFileError::Syntax { line: 2, .. }));
    assert_eq!(refused("[]"), MapFileError::WrongType { pointer: "".into(), expected: "an object" });
    assert_eq!(refused(r#"{"roles": {}}"#), MapFileError::MissingKey { pointer: "".into(), key: "version" });
    assert_eq!(
        refused(r#"{"version": 2, "roles": {}}"#),
        MapFileError::UnsupportedVersion { pointer: "/version".into(), version: "2".into() }
    );
    assert_eq!(
        refused(r#"{"version": 1, "roles": {}, "bones": 1}"#),
        MapFileError::UnknownKey { pointer: "/bones".into() }
    );
    assert_eq!(
        refused(r#"{"version": 1, "roles": {"a/b~c": "pelvis"}}"#),
        MapFileError::UnknownRole { pointer: "/roles/a~1b~0c".into(), name: "a/b~c".into() }
    );
    assert_eq!(
        refused(r#"{"version": 1, "roles": {"hips": 3}}"#),
        MapFileError::WrongType { pointer: "/roles/hips".into(), expected: "a joint name or null" }
    );
    let e = refused(&file_with(|r| {
        r.remove("left_hand");
    }));
    assert!(
        matches!(&e, MapFileError::Map { pointer, source: MapError::MissingRole { role: Role::Hand(Side::Left) } } if pointer == "/roles"),
        "{e}"
    );
    // Deep nesting is an error, not a stack overflow.
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    assert!(matches!(refused(&deep), MapFileError::Syntax { .. }));
}

#[test]
fn ambiguous_joint_names() {
    let t = anim_math::Transform::IDENTITY;
    let s = Skeleton::new(vec![
        JointDesc::new("root", None, t),
        JointDesc::new("bone", Some(0), t),
        JointDesc::new("bone", Some(1), t),
    ])
    .unwrap();
    let e = parse_map_file(r#"{"version": 1, "roles": {"hips": "bone"}}"#, &s).unwrap_err();
    assert_eq!(e, MapFileError::AmbiguousJoint { pointer: "/roles/hips".into(), name: "bone".into(), count: 2 });
    assert_eq!(e.pointer(), "/roles/hips");
}
