//! libFuzzer target: a humanoid map file for the mannequin → parse, check, rig, retarget
//! ([`anim_fuzz::map_file`]). Built by `fuzz/build.sh map_file`; run by
//! `fuzz/campaign.sh --target map_file`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    // A refused file is fine; a bug panics inside, which libFuzzer reports as a crash.
    let _ = anim_fuzz::map_file::parse_and_retarget(data);
});
