//! libFuzzer target: glTF bytes → import → sample → skin ([`anim_fuzz::check`]). Built by
//! `fuzz/build.sh` with coverage instrumentation; run by `fuzz/campaign.sh`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    // A rejected input is fine; a bug panics inside, which libFuzzer reports as a crash.
    let _ = anim_fuzz::check::import_and_skin(data);
});
