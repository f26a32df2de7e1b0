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
status=0
./campaign.sh --time "$seconds" --execs 0 --work "$work" || status=$?
if [ "$status" -ne 0 ]; then
  # What crashed, so that CI's log says it: each saved input's panic (the first five).
  host=$(rustc -vV | sed -n 's/^host: //p')
  find "$work/crashes" -type f | head -n 5 | while read -r f; do
    echo "smoke: $f:" >&2
    "target/$host/release/import_skin" "$f" 2>&1 | grep -A1 -m1 "panicked at" >&2 || true
  done
  echo "smoke: fuzzing found crashes; reproduce and save them with fuzz/triage.sh --save $PWD/$work/crashes" >&2
  exit "$status"
fi
