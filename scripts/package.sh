#!/usr/bin/env bash
# Packages every library crate as `cargo publish` would upload it (demos and benches are
# publish = false), builds each one from its .crate file against the others' .crate files
# (with no glslc on the PATH: anim-render-vk builds from the SPIR-V it carries),
# and checks that no .crate reaches crates.io's 10 MB limit. Extra arguments go to
# `cargo package` (e.g. --no-verify to skip the builds).
set -euo pipefail
cd "$(dirname "$0")/.."

# A packaged crate carries no [profile], so its verification build would use the default
# dev profile and rebuild every dependency unoptimized (5 minutes on 2 cores). Giving it
# the workspace's dev profile (Cargo.toml) lets it reuse what `cargo build`/`cargo test`
# already compiled: about 2 minutes after the tests, 20 s when nothing changed.
# Verification unpacks each workspace crate it depends on from a local overlay registry
# into $CARGO_HOME/registry/src/-<hash of the overlay's path>/, and reuses a directory
# already there without checking it against the new .crate. A run from the same checkout
# path on another day would then verify against the old sources (and fail on anything
# added since). Those overlay directories hold only this workspace's crates: clear them.
# For the same reason (a registry crate's fingerprint does not look at its files), the
# compiled workspace crates are rebuilt: their fingerprints go, the dependencies stay.
cargo_home="${CARGO_HOME:-$HOME/.cargo}"
target="${CARGO_TARGET_DIR:-target}"
for c in anim-math anim-core anim-crowd anim-mannequin anim-gltf anim-ik anim-graph anim-retarget anim-render-vk; do
  rm -rf "$cargo_home"/registry/src/-*/"$c"-[0-9]* "$cargo_home"/registry/cache/-*/"$c"-[0-9]*.crate
  rm -rf "$target"/debug/.fingerprint/"$c"-*
done

# A game that adds anim-render-vk from crates.io has no GLSL compiler: its .crate must build
# from the SPIR-V it carries (anim-render-vk/spirv/). So the packaging, whose verification
# builds every .crate, runs without GLSLC and VULKAN_SDK and with a PATH on which glslc is
# not found: each PATH folder holding a glslc is replaced by a folder of links to
# everything else in it.
bare=$(mktemp -d)
trap 'rm -rf "$bare"' EXIT
no_glslc_path=()
IFS=: read -ra path_dirs <<< "$PATH"
for d in "${path_dirs[@]}"; do
  if [ -e "$d/glslc" ]; then
    copy="$bare/${#no_glslc_path[@]}"
    mkdir -p "$copy"
    for f in "$d"/*; do
      [ "$(basename "$f")" = glslc ] || ln -s "$f" "$copy/"
    done
    no_glslc_path+=("$copy")
  else
    no_glslc_path+=("$d")
  fi
done
bare_path=$(IFS=:; echo "${no_glslc_path[*]}")
if PATH="$bare_path" command -v glslc >/dev/null; then
  echo "package: could not hide glslc from the PATH" >&2
  exit 1
fi
echo "package: building the .crate files with no glslc on the PATH"

env -u GLSLC -u VULKAN_SDK PATH="$bare_path" \
  cargo package --workspace --exclude demos --exclude benches --exclude anim-testkit --locked \
  --config 'profile.dev.opt-level=1' "$@"

dir="$target/package"
limit=$((10 * 1000 * 1000))
status=0
for f in "$dir"/anim-*.crate; do
  size=$(stat -c %s "$f")
  echo "package: $(basename "$f") $((size / 1024)) KiB"
  if [ "$size" -ge "$limit" ]; then
    echo "package: $f is over crates.io's 10 MB limit" >&2
    status=1
  fi
done
exit $status
