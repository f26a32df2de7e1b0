#!/usr/bin/env bash
# The side-by-side comparison with ozz-animation 0.16 (BENCHMARKS.md's first section),
# rerunnable: builds the ozz side's driver (scripts/vs-ozz/driver.cc) against each given
# ozz build directory, converts Fox and every shared skinned asset with that build's
# gltf2ozz, builds this project's benches as a game would build them (ci/downstream-bench:
# its own default release profile), alternates all the programs for N rounds, and prints
# the table with ratios (scripts/vs-ozz/table.py, python3): medians of the round medians
# (OUT_DIR/table.md), then the same by each program's fastest round (table-min.md).
#
#   scripts/vs-ozz.sh [-n ROUNDS] [-t SECONDS] [-o OUT_DIR] OZZ_BUILD_DIR [OZZ_BUILD_DIR...]
#
# -t: measurement time of each workload in seconds (default 1; criterion's
# --measurement-time, warm-up half of it; the ozz driver scales alike).
#
# An ozz build directory is a CMake build of ozz-animation 0.16 (Release, with its tools:
# gltf2ozz), for example one as is and one configured with
# -DCMAKE_CXX_FLAGS="-mavx2 -mfma"; the driver is compiled with that build's
# CMAKE_CXX_FLAGS and its source's headers. Nothing of ozz-animation enters this
# repository: its sources and builds stay where they are, the converted files and results
# go to OUT_DIR (default target/vs-ozz). Needs g++, python3, cargo; ROUNDS defaults to 5.
# Run it on a quiet machine (nothing else running: `uptime`'s load below 0.3).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

rounds=5
secs=1
out="$repo/target/vs-ozz"
while getopts "n:t:o:" opt; do
  case $opt in
    n) rounds=$OPTARG ;;
    t) secs=$OPTARG ;;
    o) out=$OPTARG ;;
    *) sed -n '2,21p' "$0" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
if [ $# -lt 1 ]; then
  sed -n '2,21p' "$0" >&2
  exit 2
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)

assets=(Fox/Fox.glb CesiumMan/CesiumMan.glb Woman/Woman.gltf RiggedFigure/RiggedFigure.glb
        RiggedSimple/RiggedSimple.glb SimpleSkin/SimpleSkin.gltf DQ/dq.gltf)
shared=""
for dir in "$repo" "$repo/.." "$repo/../.."; do
  if [ -f "$dir/shared/assets/Fox/Fox.glb" ]; then shared=$(cd "$dir/shared/assets" && pwd); break; fi
done
[ -n "$shared" ] || { echo "no shared/assets/Fox/Fox.glb beside the repository" >&2; exit 1; }

echo "== ozz side: drivers and converted assets"
builds=()
for b in "$@"; do
  b=$(cd "$b" && pwd)
  cache="$b/CMakeCache.txt"
  [ -f "$cache" ] || { echo "$b: no CMakeCache.txt (not a CMake build directory)" >&2; exit 1; }
  src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$cache")
  flags=$(sed -n 's/^CMAKE_CXX_FLAGS:STRING=//p' "$cache")
  name=$(basename "$b")
  # ozz names its Release libraries with a "_r" postfix unless configured with
  # -Dozz_build_postfix=OFF; either name is taken.
  libs=()
  for l in geometry/runtime/libozz_geometry animation/runtime/libozz_animation base/libozz_base; do
    if [ -f "$b/src/$l.a" ]; then libs+=("$b/src/$l.a")
    elif [ -f "$b/src/${l}_r.a" ]; then libs+=("$b/src/${l}_r.a")
    else echo "$b/src/$l.a (or ${l##*/}_r.a) is missing: build ozz first" >&2; exit 1; fi
  done
  # shellcheck disable=SC2086 # the build's flags are several words
  g++ -std=c++17 -O3 -DNDEBUG $flags -I"$src/include" scripts/vs-ozz/driver.cc "${libs[@]}" \
    -o "$out/driver-$name"
  echo "$name: $out/driver-$name (CMAKE_CXX_FLAGS: ${flags:-none})"
  builds+=("$name")
  gltf2ozz="$b/src/animation/offline/gltf/gltf2ozz"
done
[ -x "$gltf2ozz" ] || { echo "$gltf2ozz is missing: build ozz with its tools" >&2; exit 1; }
for a in "${assets[@]}"; do
  dir="$out/assets/${a%%/*}"
  mkdir -p "$dir"
  (cd "$dir" && "$gltf2ozz" --file="$shared/$a" --log_level=silent)
done

echo "== this project's side (ci/downstream-bench, default release profile)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/ci/downstream-bench/target}"
manifest=ci/downstream-bench/Cargo.toml
cargo run --release --manifest-path "$manifest" --example vs_ozz_export -- "$out/fox_setup.bin"
bench_exe() {
  cargo bench --manifest-path "$manifest" --bench "$1" --no-run --message-format=json 2>/dev/null |
    sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -1
}
vs_ozz=$(bench_exe vs_ozz)
per_clip=$(bench_exe per_clip)

half=$(python3 -c "print($secs / 2)")
echo "== $rounds rounds"
for r in $(seq 1 "$rounds"); do
  echo "round $r/$rounds ($(uptime | sed 's/.*load/load/'))"
  for name in "${builds[@]}"; do
    export VS_OZZ_SECONDS=$secs
    "$out/driver-$name" fox "$out/assets/Fox" "$out/fox_setup.bin" >"$out/round$r-$name.txt"
    for a in "${assets[@]}"; do
      dir="$out/assets/${a%%/*}"
      (cd "$dir" && "$out/driver-$name" clips skeleton.ozz $(ls ./*.ozz | grep -v skeleton.ozz)) |
        sed "s|^clip/\./|clip/${a%%/*}/|; s|\.ozz | |" >>"$out/round$r-$name.txt"
    done
  done
  rm -rf "$out/criterion-$r"
  # Criterion's progress goes to the log; its estimates to criterion-$r.
  CRITERION_HOME="$out/criterion-$r" "$vs_ozz" --bench --warm-up-time "$half" --measurement-time "$secs" \
    '^vs_ozz/(fox|ik|fix80/w5_)' >"$out/round$r-ours.log" 2>&1
  CRITERION_HOME="$out/criterion-$r" "$per_clip" --bench --warm-up-time "$half" --measurement-time "$secs" \
    >>"$out/round$r-ours.log" 2>&1
done

echo "== table"
{
  echo "Machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs; $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "Flags: $(grep -o -w -E 'avx2|fma|avx512f|avx512bw|avx512vl|avx512dq' /proc/cpuinfo | sort -u | tr '\n' ' ')"
  python3 scripts/vs-ozz/table.py "$out" "$rounds" "${builds[@]}"
} | tee "$out/table.md"
# The same rounds by each program's fastest round: on a host whose speed changes between
# rounds, the medians can mix the speeds differently for each program.
echo "== table by minima"
python3 scripts/vs-ozz/table.py --stat min "$out" "$rounds" "${builds[@]}" | tee "$out/table-min.md"
