#!/usr/bin/env bash
# Builds a libFuzzer target (the argument: import_skin by default, graph for the
# animation-graph one, or map_file for humanoid map files) into
# fuzz/target/<host>/release/ on the stable
# toolchain: libfuzzer-sys (crates.io) compiles libFuzzer itself with the system C++
# compiler, and rustc's own SanitizerCoverage pass (`-Cpasses=sancov-module`, a stable
# codegen option) gives it coverage feedback. No sanitizer (that would need nightly);
# panics, debug assertions and overflow checks are what it catches. Prints the binary's path.
set -euo pipefail
cd "$(dirname "$0")"
host=$(rustc -vV | sed -n 's/^host: //p')
# --target keeps these flags off build scripts and proc macros.
export RUSTFLAGS="-Cpasses=sancov-module \
  -Cllvm-args=-sanitizer-coverage-level=4 \
  -Cllvm-args=-sanitizer-coverage-inline-8bit-counters \
  -Cllvm-args=-sanitizer-coverage-pc-table \
  -Cllvm-args=-sanitizer-coverage-trace-compares \
  --cfg fuzzing"
unset CARGO_TARGET_DIR
bin=${1:-import_skin}
cargo build -q --release --locked --target "$host" -p anim-fuzz --bin "$bin" >&2
echo "$PWD/target/$host/release/$bin"
