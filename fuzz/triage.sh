#!/usr/bin/env bash
# Reproduces every crashing input of a campaign, groups them by panic (location and
# message with the numbers taken out) and prints one line per group. With --save, the
# smallest input of each group not yet covered by fuzz/regressions/ is minimized with
# libFuzzer (-minimize_crash, kept only if it still panics at the same place) and saved
# there as NAME.glb or NAME.gltf, which the regression test anim-gltf/tests/fuzz_regressions.rs
# then runs.
#
#   fuzz/triage.sh [--save] [--minimize-runs N] [CRASH_DIR...]   (default: fuzz/work/crashes*)
set -euo pipefail
fuzz_dir=$(cd "$(dirname "$0")" && pwd)
save=0
runs=20000
dirs=()
while (($#)); do
  case "$1" in
    --save) save=1; shift ;;
    --minimize-runs) runs=$2; shift 2 ;;
    *) dirs+=("$1"); shift ;;
  esac
done
if ((${#dirs[@]} == 0)); then
  mapfile -t dirs < <(find "$fuzz_dir/work" -maxdepth 1 -type d -name 'crashes*' 2>/dev/null | sort)
fi
bin=$(nice -n 19 "$fuzz_dir/build.sh")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The panic of one input: "LOCATION: MESSAGE", or "no crash".
signature() {
  local out
  out=$(timeout 60 nice -n 19 "$bin" "$1" 2>&1 || true)
  local loc msg
  loc=$(grep -m1 -oE "panicked at [^ ]+:[0-9]+:[0-9]+" <<<"$out" | sed 's/panicked at //' || true)
  if [ -z "$loc" ]; then
    if grep -q "ERROR: libFuzzer" <<<"$out"; then
      grep -m1 "ERROR: libFuzzer" <<<"$out"
    else
      echo "no crash"
    fi
    return
  fi
  msg=$(grep -A1 -m1 "panicked at" <<<"$out" | tail -n 1)
  echo "$loc: $msg"
}

# Numbers (indices, times, sizes) and the printed matrix out, so that one bug is one group.
key() { sed -E 's/(from finite input).*/\1/; s/[0-9]+(\.[0-9]+)?(e-?[0-9]+)?/N/g' <<<"$1"; }

declare -A group_file group_size group_count group_sig
for d in "${dirs[@]}"; do
  for f in "$d"/*; do
    [ -f "$f" ] || continue
    sig=$(signature "$f")
    k=$(key "$sig")
    size=$(stat -c %s "$f")
    group_count[$k]=$(( ${group_count[$k]:-0} + 1 ))
    if [ -z "${group_file[$k]:-}" ] || [ "$size" -lt "${group_size[$k]}" ]; then
      group_file[$k]=$f; group_size[$k]=$size; group_sig[$k]=$sig
    fi
  done
done

# What the committed regressions already cover.
declare -A covered
for f in "$fuzz_dir"/regressions/*; do
  [ -f "$f" ] || continue
  covered[$(key "$(signature "$f")")]=$f
done

for k in "${!group_file[@]}"; do
  f=${group_file[$k]}
  echo "${group_count[$k]} input(s), smallest $(basename "$f") (${group_size[$k]} bytes): ${group_sig[$k]}"
  if [ -n "${covered[$k]:-}" ]; then
    echo "  covered by $(basename "${covered[$k]}")"
    continue
  fi
  [ "$save" -eq 1 ] || continue
  [ "${group_sig[$k]}" = "no crash" ] && continue
  best=$f
  if nice -n 19 "$bin" -minimize_crash=1 -runs="$runs" -exact_artifact_path="$tmp/min" "$f" >/dev/null 2>&1 \
     && [ -f "$tmp/min" ] && [ "$(key "$(signature "$tmp/min")")" = "$k" ]; then
    best=$tmp/min
  fi
  ext=gltf
  [ "$(head -c 4 "$best")" = "glTF" ] && ext=glb
  loc=$(sed -E 's/^([^:]+):([0-9]+).*/\1-\2/; s#.*/##; s/\.rs//' <<<"${group_sig[$k]}")
  name="$loc-$(sha1sum "$best" | cut -c1-8).$ext"
  cp "$best" "$fuzz_dir/regressions/$name"
  rm -f "$tmp/min"
  covered[$k]=$name
  echo "  saved fuzz/regressions/$name ($(stat -c %s "$fuzz_dir/regressions/$name") bytes)"
done
