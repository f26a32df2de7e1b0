#!/usr/bin/env bash
# CI's fuzz smoke (called from .ci/run after the tests): the fuzz crates' formatting,
# clippy and unit tests, then a campaign of at most 2 minutes (90 s of fuzzing) that fails
# on any crash. Needs only a C++ compiler beyond Rust (libfuzzer-sys builds libFuzzer;
# scripts/setup.sh installs g++); crates come through cargo and stay cached in ~/.cargo.
# The work folder is fuzz/target/smoke, so a crash's input is there afterwards.
set -euo pipefail
cd "$(dirname "$0")"
unset CARGO_TARGET_DIR
seconds=${FUZZ_SMOKE_SECONDS:-90}
if [ "$seconds" -gt 120 ]; then seconds=120; fi

cargo fmt --manifest-path Cargo.toml -p anim-fuzz -p anim-fuzz-seeds --check
cargo clippy --manifest-path Cargo.toml --workspace --all-targets --locked -q -- -D warnings
cargo test --manifest-path Cargo.toml -p anim-fuzz-seeds --locked -q

work=target/smoke
rm -rf "$work"
./campaign.sh --time "$seconds" --execs 0 --work "$work"
