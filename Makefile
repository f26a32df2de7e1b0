# The two commands of the README, plus the checks CI runs. Every target first runs the
# idempotent setup (system packages such as glslc, the glTF validator), which does
# nothing in well under a second when all is present.

.PHONY: setup run test lint package bench-build bench docs

setup:
	@scripts/setup.sh

# The main demo: the viewer, with the project's own default character.
run: setup
	cargo run --release -p demos --bin viewer

# Every test of the workspace (Vulkan tests run on lavapipe with validation on), then every
# criterion benchmark once in criterion's test mode (its setup and one call, untimed: a
# bench that panics or no longer finds its asset fails here, not in `cargo bench`). The
# second command reuses the first one's build (same profile, same features).
#
# anim-math's `mint` feature adds tests (tests/mint.rs, a doctest) and removes none; it is
# on for the whole workspace so that nalgebra is compiled once (a separate `cargo test -p
# anim-math --features mint` resolves features for anim-math alone and rebuilt nalgebra and
# anim-math's dev-dependencies: about 3 minutes of CI's two cores).
test: setup
	cargo test --workspace --features anim-math/mint
	cargo test --workspace --features anim-math/mint --bench '*'

lint: setup
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets -- -D warnings
	RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps
	cargo clippy -p anim-math --all-targets --features mint -- -D warnings

# Every library crate packaged as crates.io would get it and built from its .crate file
# (demos and benches are not published); fails on a .crate over crates.io's 10 MB.
package: setup
	scripts/package.sh

bench-build: setup
	cargo bench --workspace --bench '*' --no-run

bench: setup
	cargo bench -p benches
