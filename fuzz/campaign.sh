#!/usr/bin/env bash
# One fuzzing campaign of the glTF import → skin target, on one core, at the lowest
# priority. Builds the target (fuzz/build.sh), makes the seeds from the shared assets into
# the work folder (never committed), then runs libFuzzer in fork mode with one worker:
# a crash is saved and counted and the campaign goes on. It stops after --execs
# executions (or --time seconds) and ends with one line to paste into FUZZING.md:
#
#   campaign: EXECS executions, CRASHES crashes (crashing inputs saved: N) in SECONDS s
#
# It exits 1 when anything crashed. Crashing inputs are left in WORK/crashes/ (see
# fuzz/triage.sh to reproduce, group and minimize them).
#
#   fuzz/campaign.sh --execs 10000000
#   fuzz/campaign.sh --time 120 --execs 0        # time-bounded (what fuzz/smoke.sh runs)
#   fuzz/campaign.sh --target graph --execs 1000000   # the animation-graph target
#
# Options: --target NAME (import_skin, the default, graph or map_file), --execs N (default
# 10000000; 0: no limit), --time SECONDS (0: none, the default), --work DIR (default
# fuzz/work, fuzz/work-graph or fuzz/work-map for the other targets: corpus/, crashes/,
# seeds/, log),
# --assets DIR (default ../shared/assets beside the repository; glTF seeds), --max-len
# BYTES (default: the largest seed), and anything after `--` goes to libFuzzer.
#
# The graph target's seeds are the repository's graph files (the mannequin's locomotion
# graph and anim-graph's test file with every node kind) and its dictionary
# fuzz/graph.dict. The map_file target (humanoid map files) makes its seeds from the
# mannequin's map with the map_seeds binary; its dictionary is fuzz/map.dict.
set -euo pipefail
fuzz_dir=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$fuzz_dir")

execs=10000000
time_limit=0
target=import_skin
work=""
assets="$repo/../shared/assets"
max_len=""
extra=()
while (($#)); do
  case "$1" in
    --target) target=$2; shift 2 ;;
    --execs) execs=$2; shift 2 ;;
    --time) time_limit=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --assets) assets=$2; shift 2 ;;
    --max-len) max_len=$2; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "campaign: unknown argument $1" >&2; exit 2 ;;
  esac
done
if [ "$execs" -eq 0 ] && [ "$time_limit" -eq 0 ]; then
  echo "campaign: give --execs or --time a limit" >&2
  exit 2
fi

case "$target" in
  import_skin) dict="$fuzz_dir/gltf.dict"; [ -n "$work" ] || work="$fuzz_dir/work" ;;
  graph) dict="$fuzz_dir/graph.dict"; [ -n "$work" ] || work="$fuzz_dir/work-graph" ;;
  map_file) dict="$fuzz_dir/map.dict"; [ -n "$work" ] || work="$fuzz_dir/work-map" ;;
  *) echo "campaign: unknown target $target (import_skin, graph or map_file)" >&2; exit 2 ;;
esac
mkdir -p "$work"
work=$(cd "$work" && pwd)

echo "campaign: building the target $target" >&2
bin=$(nice -n 19 "$fuzz_dir/build.sh" "$target")

rm -rf "$work/seeds"
mkdir -p "$work/seeds" "$work/corpus" "$work/crashes"
if [ "$target" = graph ]; then
  echo "campaign: seeds are the repository's graph files" >&2
  cp "$repo"/anim-mannequin/graphs/*.json "$repo"/anim-graph/tests/files/*.json "$work/seeds/"
elif [ "$target" = map_file ]; then
  echo "campaign: making map-file seeds from the mannequin" >&2
  # Built without the coverage flags (as the glTF seed converter is): only libFuzzer's
  # own binaries define the coverage callbacks.
  (cd "$fuzz_dir" && unset CARGO_TARGET_DIR RUSTFLAGS && nice -n 19 cargo run -q --release --locked -p anim-fuzz \
    --bin map_seeds -- "$work/seeds")
else
  assets=$(cd "$assets" && pwd)
  echo "campaign: making seeds from $assets" >&2
  (cd "$fuzz_dir" && unset CARGO_TARGET_DIR && nice -n 19 cargo run -q --release --locked -p anim-fuzz-seeds -- \
    "$assets" "$work/seeds" >/dev/null)
fi

# Crashes of this campaign only: earlier ones move aside.
if compgen -G "$work/crashes/*" >/dev/null; then
  old="$work/crashes-$(date -u +%Y%m%dT%H%M%S)"
  mv "$work/crashes" "$old"
  mkdir -p "$work/crashes"
  echo "campaign: earlier crashes moved to $old" >&2
fi

args=(-fork=1 -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1 -timeout=20 -rss_limit_mb=4096
      -print_final_stats=1 -artifact_prefix="$work/crashes/" -dict="$dict")
[ "$execs" -gt 0 ] && args+=(-runs="$execs")
[ "$time_limit" -gt 0 ] && args+=(-max_total_time="$time_limit")
[ -n "$max_len" ] && args+=(-max_len="$max_len")

log="$work/campaign.log"
echo "campaign: $bin ${args[*]} ${extra[*]} $work/corpus $work/seeds (log: $log)" >&2
start=$(date +%s)
status=0
nice -n 19 "$bin" "${args[@]}" "${extra[@]}" "$work/corpus" "$work/seeds" >"$log" 2>&1 || status=$?
elapsed=$(( $(date +%s) - start ))

# Fork mode's status lines: "#EXECS: cov: … oom/timeout/crash: O/T/C time: …".
last=$(grep -E '^#[0-9]+: cov:' "$log" | tail -n 1 || true)
done_execs=$(sed -E 's/^#([0-9]+):.*/\1/' <<<"$last")
counts=$(sed -nE 's/.*oom\/timeout\/crash: ([0-9]+)\/([0-9]+)\/([0-9]+).*/\1 \2 \3/p' <<<"$last")
read -r ooms timeouts crashes <<<"${counts:-0 0 0}"
saved=$(find "$work/crashes" -type f | wc -l)
# The last status line can predate the last job's crash: count at least what was saved.
if [ "$saved" -gt "$crashes" ]; then crashes=$saved; fi
tail -n 5 "$log" >&2
if [ -z "$last" ]; then
  echo "campaign: libFuzzer stopped before its first status line (exit $status); see $log" >&2
  exit 1
fi
echo "campaign: ${done_execs:-0} executions, $crashes crashes, $timeouts timeouts, $ooms ooms (crashing inputs saved: $saved) in $elapsed s"
if [ "$crashes" -ne 0 ] || [ "$timeouts" -ne 0 ] || [ "$ooms" -ne 0 ] || [ "$saved" -ne 0 ]; then
  exit 1
fi
