#!/usr/bin/env python3
"""The table of scripts/vs-ozz.sh: reads OUT_DIR/round<r>-<build>.txt (the ozz driver's
"<id> <ns a call>" lines) and OUT_DIR/criterion-<r> (this project's criterion estimates),
takes the median over the rounds of each figure (or, with `--stat min`, its minimum),
and prints Markdown tables with the ratios and targets of BENCHMARKS.md.

    table.py [--stat median|min] OUT_DIR ROUNDS BUILD [BUILD...]

`min` suits a host whose speed changes between rounds (a shared machine that switches
between two speeds for minutes at a time): each program's fastest round is the one least
disturbed, where the median mixes the two speeds in proportions that differ between the
programs.

Ratios are time against the faster ozz build (below 1: this project is faster);
throughputs are speed against the faster ozz build; costs of DQ are its time over LBS's.
"""

import json
import os
import statistics
import sys

FOX_VERTICES = 1728
FIX80_VERTICES = 10_000
MESHES = 100


def ozz_rounds(out, rounds, build):
    """{id: [ns per round]} of one ozz build."""
    figures = {}
    for r in range(1, rounds + 1):
        with open(os.path.join(out, f"round{r}-{build}.txt")) as f:
            for line in f:
                key, value = line.split()
                figures.setdefault(key, []).append(float(value))
    return figures


def our_rounds(out, rounds):
    """{criterion id: [ns an iteration per round]} (median estimate of each round)."""
    figures = {}
    for r in range(1, rounds + 1):
        root = os.path.join(out, f"criterion-{r}")
        for dirpath, _, files in os.walk(root):
            if os.path.basename(dirpath) != "new" or "benchmark.json" not in files:
                continue
            with open(os.path.join(dirpath, "benchmark.json")) as f:
                key = json.load(f)["full_id"]
            with open(os.path.join(dirpath, "estimates.json")) as f:
                figures.setdefault(key, []).append(json.load(f)["median"]["point_estimate"])
    return figures


def median(values):
    return statistics.median(values) if values else None


def minimum(values):
    return min(values) if values else None


def fmt(x, digits=1):
    return "–" if x is None else f"{x:,.{digits}f}"


def main():
    args = sys.argv[1:]
    stat, stat_name = median, "Medians"
    if args[:1] == ["--stat"]:
        if len(args) < 2 or args[1] not in ("median", "min"):
            sys.exit("table.py: --stat takes median or min")
        if args[1] == "min":
            stat, stat_name = minimum, "Minima"
        args = args[2:]
    out, rounds, builds = args[0], int(args[1]), args[2:]
    ozz = {b: {k: stat(v) for k, v in ozz_rounds(out, rounds, b).items()} for b in builds}
    ours = {k: stat(v) for k, v in our_rounds(out, rounds).items()}

    def o(key):
        """Each build's figure and the fastest."""
        values = [ozz[b].get(key) for b in builds]
        known = [v for v in values if v is not None]
        return values, (min(known) if known else None)

    def our(key, per=1.0):
        v = ours.get(key)
        return None if v is None else v / per

    head = " | ".join(f"ozz {b}" for b in builds)
    print()
    print(f"{stat_name} of {rounds} rounds. Ratios: time against the faster ozz build (below 1: this project is faster).")
    print()
    print(f"| Fox, one thread | {head} | this project | ratio | target | |")
    print("|---" * (len(builds) + 5) + "|")

    def time_row(label, ozz_key, our_key, target=None, per=1.0):
        values, best = o(ozz_key)
        mine = our(our_key, per)
        ratio = None if (mine is None or best is None) else mine / best
        met = "" if target is None or ratio is None else ("met" if ratio <= target else "**missed**")
        cols = " | ".join(fmt(v) for v in values)
        tgt = "" if target is None else f"≤ {target}"
        print(f"| {label} | {cols} | {fmt(mine)} | {fmt(ratio, 2)} | {tgt} | {met} |")

    def speed_row(label, ozz_key, our_key, vertices, target, meshes=1):
        values, best = o(ozz_key)
        mine = our(our_key)
        speed = lambda ns: None if ns is None else vertices * meshes / ns * 1e3
        ratio = None if (mine is None or best is None) else speed(mine) / speed(best)
        met = "" if ratio is None else ("met" if ratio >= target else "**missed**")
        cols = " | ".join(fmt(speed(v)) for v in values)
        print(f"| {label} | {cols} | {fmt(speed(mine))} | {fmt(ratio, 2)}× | ≥ {target}× | {met} |")

    time_row("sampling, exact glTF (`sample_cached`), Walk, ns/call", "fox/w1_sampling_60hz/Walk",
             "vs_ozz/fox/w1_sampling_60hz/exact", 1.0)
    for clip in ["Walk", "Run", "Survey"]:
        time_row(f"sampling, runtime clip at 1 mm, {clip}, ns/call", f"fox/w1_sampling_60hz/{clip}",
                 f"vs_ozz/fox/w1_sampling_60hz/runtime_{clip}")
    for clip in ["Walk", "Run", "Survey"]:
        time_row(f"sampling + local-to-model, runtime clip, {clip}, ns/call", f"fox/w3_sampling_ltm/{clip}",
                 f"vs_ozz/fox/w3_sampling_ltm/runtime_{clip}", 0.8)
    time_row("local-to-model (SoA), ns/call", "fox/w2_local_to_model", "vs_ozz/fox/w2_local_to_model/soa", 0.8)
    time_row("crowd of 1000, runtime clip, ns/instance", "fox/w4_crowd1000/Walk",
             "vs_ozz/fox/w4_crowd1000/runtime", 0.8, per=1000)
    time_row("crowd of 1000, baked 30 Hz, ns/instance", "fox/w4_crowd1000/Walk",
             "vs_ozz/fox/w4_crowd1000/baked30", None, per=1000)
    for size, meshes in [("1mesh", 1), ("crowd100", MESHES)]:
        n = "one mesh" if meshes == 1 else f"{MESHES} meshes"
        speed_row(f"LBS 4 influences, positions, {n}, Mvert/s", f"fox/w5_lbs4_pos/{size}",
                  f"vs_ozz/fox/w5_lbs4_pos/{size}", FOX_VERTICES, 1.5, meshes)
        speed_row(f"LBS, positions + normals not renormalized, {n}", f"fox/w5_lbs4_pos_nrm/{size}",
                  f"vs_ozz/fox/w5_lbs4_pos_nrm/{size}", FOX_VERTICES, 1.5, meshes)
        speed_row(f"LBS, positions + renormalized normals (the default), {n}, against ozz's unnormalized",
                  f"fox/w5_lbs4_pos_nrm/{size}", f"vs_ozz/fox/w5_lbs4_pos_nrm_renorm/{size}", FOX_VERTICES, 1.0,
                  meshes)
    time_row("two-bone IK, from local transforms, ns/call", "ik/two_bone", "vs_ozz/ik/two_bone", 0.8)
    time_row("two-bone IK, the job alone, ns/call", "ik/two_bone_job", "vs_ozz/ik/two_bone_job")
    time_row("aim IK, from local transforms, ns/call", "ik/aim", "vs_ozz/ik/aim", 0.8)
    time_row("aim IK, the job alone, ns/call", "ik/aim_job", "vs_ozz/ik/aim_job")

    print()
    print("| DQ skinning, cost against LBS (time ratio) | DQ ns | LBS ns | cost | target | |")
    print("|---|---|---|---|---|---|")
    for case, label, squash in [("fox", "Fox (rigid palette)", ""),
                                ("fix80", "80-joint fixture (palette with uniform scale)", ""),
                                ("fix80", "80-joint fixture squashed by diag(1, 1.15, 0.9) (non-uniform scale)",
                                 "_squash")]:
        for size in ["1mesh", "crowd100"] if case == "fox" else ["1mesh"]:
            for dq, lbs, what in [("dq_pos" + squash, "lbs4_pos", "positions"),
                                  ("dq_pos_nrm" + squash, "lbs4_pos_nrm_renorm", "positions + normals")]:
                d, l = our(f"vs_ozz/{case}/w5_{dq}/{size}"), our(f"vs_ozz/{case}/w5_{lbs}/{size}")
                cost = None if d is None or l is None else d / l
                met = "" if cost is None else ("met" if cost <= 1.3 else "**missed**")
                print(f"| {label}, {what}, {size} | {fmt(d)} | {fmt(l)} | {fmt(cost, 2)}× | ≤ 1.3× | {met} |")

    print()
    print(f"| sampling at 60 Hz, ns/call | {head} | runtime clip at 1 mm | ratio | exact glTF | ratio |")
    print("|---" * (len(builds) + 5) + "|")
    keys = sorted(k for k in ozz[builds[0]] if k.startswith("clip/"))
    for key in keys:
        values, best = o(key)
        rt, ex = our(f"per_clip/{key}/runtime"), our(f"per_clip/{key}/exact")
        r1 = None if rt is None or best is None else rt / best
        r2 = None if ex is None or best is None else ex / best
        cols = " | ".join(fmt(v) for v in values)
        print(f"| {key[5:]} | {cols} | {fmt(rt)} | {fmt(r1, 2)} | {fmt(ex)} | {fmt(r2, 2)} |")


if __name__ == "__main__":
    main()
