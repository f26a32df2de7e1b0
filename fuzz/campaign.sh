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
# BYTES (default: the largest seed), --status-every SECONDS (default 30: see below), and
# anything after `--` goes to libFuzzer.
#
# While libFuzzer runs, its progress goes to stderr (stdout keeps only the final line):
# executions done (of --execs), seconds (of --time), executions a second, crashes so far
# and an estimate of the time left, read from the log. On a terminal (stderr, and TERM not
# dumb) it is one status line redrawn every second; otherwise a plain line every
# --status-every seconds:
#
#   campaign: 1520331/10000000 execs, 287 s, 5297 execs/s, 0 crashes, about 26 min 41 s left
#
# The time left is the sooner of the two limits: --time less the time spent, and the
# executions left at the average rate so far. ANIM_PROGRESS=0 shows no progress,
# ANIM_PROGRESS=plain plain lines on a terminal too (as the Rust tools, demos::progress).
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
status_every=30
extra=()
while (($#)); do
  case "$1" in
    --target) target=$2; shift 2 ;;
    --execs) execs=$2; shift 2 ;;
    --time) time_limit=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --assets) assets=$2; shift 2 ;;
    --max-len) max_len=$2; shift 2 ;;
    --status-every) status_every=$2; shift 2 ;;
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

# Progress (see the header): how it is shown.
progress=lines
case "${ANIM_PROGRESS:-}" in
  0|off) progress=off ;;
  plain) progress=lines ;;
  *) if [ -t 2 ] && [ "${TERM:-dumb}" != dumb ]; then progress=bar; fi ;;
esac

# Seconds for a person: "42 s", "3 min 07 s", "2 h 05 min".
human_secs() {
  local s=$1
  if ((s < 60)); then echo "$s s"
  elif ((s < 3600)); then printf '%d min %02d s\n' $((s / 60)) $((s % 60))
  else printf '%d h %02d min\n' $((s / 3600)) $((s % 3600 / 60)); fi
}

# One status line from the log's last status line, ELAPSED seconds after the start.
status_line() {
  local elapsed=$1 last done=0 crashes=0 saved rate=0 left="" line
  last=$(tac "$log" 2>/dev/null | grep -m1 -E '^#[0-9]+: cov:' || true)
  if [ -n "$last" ]; then
    done=$(sed -E 's/^#([0-9]+):.*/\1/' <<<"$last")
    crashes=$(sed -nE 's/.*oom\/timeout\/crash: [0-9]+\/[0-9]+\/([0-9]+).*/\1/p' <<<"$last")
    crashes=${crashes:-0}
  fi
  saved=$(find "$work/crashes" -type f | wc -l)
  if [ "$saved" -gt "$crashes" ]; then crashes=$saved; fi
  if ((elapsed > 0)); then rate=$((done / elapsed)); fi
  if [ "$execs" -gt 0 ]; then line="$done/$execs execs"; else line="$done execs"; fi
  if [ "$time_limit" -gt 0 ]; then line+=", $elapsed/$time_limit s"; else line+=", $elapsed s"; fi
  line+=", $rate execs/s, $crashes crashes"
  if [ "$time_limit" -gt 0 ]; then left=$((time_limit > elapsed ? time_limit - elapsed : 0)); fi
  if [ "$execs" -gt 0 ] && ((rate > 0)); then
    local by_execs=$(((execs > done ? execs - done : 0) / rate))
    if [ -z "$left" ] || ((by_execs < left)); then left=$by_execs; fi
  fi
  if [ -z "$left" ]; then line+=", estimating the time left"; else line+=", about $(human_secs "$left") left"; fi
  echo "campaign: $line"
}

# Runs beside libFuzzer until killed (or until this script is gone).
monitor() {
  local every=$status_every cols=${COLUMNS:-80} sleeper="" line
  if [ "$progress" = bar ]; then
    every=1
    cols=$(stty size 2>/dev/null </dev/tty | cut -d' ' -f2 || true)
    # A pseudo-terminal may report no size (0).
    case "$cols" in '' | *[!0-9]* | 0) cols=${COLUMNS:-80} ;; esac
  fi
  trap '[ -n "$sleeper" ] && kill "$sleeper" 2>/dev/null; exit 0' TERM
  while kill -0 "$script_pid" 2>/dev/null; do
    sleep "$every" & sleeper=$!
    wait "$sleeper" || true
    line=$(status_line $(($(date +%s) - start)))
    if [ "$progress" = bar ]; then
      # Cut to the terminal's width, so that the line is redrawn in place.
      printf '\r\033[K%s' "${line:0:cols-1}" >&2
    else
      printf '%s\n' "$line" >&2
    fi
  done
}

start=$(date +%s)
script_pid=$$
monitor_pid=""
trap 'if [ -n "$monitor_pid" ]; then kill "$monitor_pid" 2>/dev/null || true; fi' EXIT
if [ "$progress" != off ]; then
  monitor & monitor_pid=$!
fi
status=0
nice -n 19 "$bin" "${args[@]}" "${extra[@]}" "$work/corpus" "$work/seeds" >"$log" 2>&1 || status=$?
elapsed=$(( $(date +%s) - start ))
if [ -n "$monitor_pid" ]; then
  kill "$monitor_pid" 2>/dev/null || true
  wait "$monitor_pid" 2>/dev/null || true
  # The status line gives way to the log's last lines and the result.
  if [ "$progress" = bar ]; then printf '\r\033[K' >&2; fi
fi

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
