//! No import circles between the files of `anim-retarget/src` (see `anim_testkit::imports`).

#[test]
fn no_import_cycles() {
    anim_testkit::imports::check_crate(env!("CARGO_MANIFEST_DIR"), 10);
}
