//! The map-file fuzz target's path (`fuzz/src/map_file.rs`, included word for word) on its
//! seeds and on hand-made hostile inputs: every one ends in a defined outcome, no panic.

#[path = "../../fuzz/src/map_file.rs"]
mod map_file;

use map_file::{Outcome, parse_and_retarget, seeds};

#[test]
fn seeds_and_hostile_inputs_end_in_a_defined_outcome() {
    let mut retargeted = 0;
    let mut refused = 0;
    for (name, text) in seeds() {
        match parse_and_retarget(text.as_bytes()) {
            Outcome::Retargeted => retargeted += 1,
            Outcome::Refused(_) => refused += 1,
            other => panic!("{name}: {other:?}"),
        }
    }
    assert_eq!((retargeted, refused), (3, 4), "the automatic map, without toes and with a shorter spine retarget");
    let deep = format!("{}1{}", "[".repeat(5000), "]".repeat(5000));
    for input in [
        &b"\xff\xfe"[..],
        b"",
        b"{}",
        b"{\"version\": 1e400, \"roles\": {}}",
        b"{\"version\": 1, \"roles\": {\"hips\": \"\\u0000\"}}",
        b"{\"version\": 1, \"roles\": {\"spine\": [\"pelvis\", \"pelvis\"]}}",
        deep.as_bytes(),
    ] {
        assert!(!matches!(parse_and_retarget(input), Outcome::Retargeted), "{:?}", String::from_utf8_lossy(input));
    }
}
