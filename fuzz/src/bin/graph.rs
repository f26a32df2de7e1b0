//! libFuzzer target: animation-graph file bytes → load → 100 updates with random
//! parameters ([`anim_fuzz::graph_check`]). Built by `fuzz/build.sh graph` with coverage
//! instrumentation; run by `fuzz/campaign.sh --target graph`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    // A rejected file is fine; a bug panics inside, which libFuzzer reports as a crash.
    let _ = anim_fuzz::graph_check::load_and_play(data);
});
