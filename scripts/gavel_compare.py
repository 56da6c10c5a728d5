#!/usr/bin/env python3
"""Helpers of scripts/gavel_compare.sh (docs/heterogeneous.md): Gavel's trace and
throughputs converted to gpusched's formats, Gavel's and gpusched's job completion times
read back, and the side-by-side table. Standard library only.

  gavel_compare.py convert TRACE.tsv THROUGHPUTS.json OUT.csv OUT_TABLE.json
  gavel_compare.py gavel-jcts GAVEL_LOG OUT.csv        (Gavel's "Job N: JCT" lines)
  gavel_compare.py table RESULTS_DIR   (RESULTS_DIR/LOAD/{window,gavel/*.csv,ours/*.csv})

Gavel's trace lines (scheduler/utils.py parse_trace): job_type, command, working
directory, num_steps_arg, needs_data_dir, total_steps, scale_factor, priority_weight, SLO,
arrival_time, tab-separated. Its throughputs file maps worker type -> str((job_type,
scale_factor)) -> {"null": steps per second alone, ...}. gpusched's trace gets
duration = total_steps / (V100 steps per second), the run time on the reference type,
and the table each (job type, GPUs)'s speed on each type over its V100 speed.
"""
import csv
import json
import math
import os
import re
import sys

TYPES = ["v100", "p100", "k80"]


def key(job_type, sf):
    return str((job_type, int(sf)))


def convert(trace, throughputs, out_csv, out_table):
    thr = json.load(open(throughputs))
    rows = []
    used = set()
    with open(trace) as f:
        for i, line in enumerate(f):
            parts = line.rstrip("\n").split("\t")
            job_type, total_steps, sf, arrival = parts[0], parts[5], parts[6], parts[9]
            v100 = thr["v100"][key(job_type, sf)]["null"]
            rows.append((i, float(arrival), int(sf), int(total_steps) / v100, job_type))
            used.add((job_type, int(sf)))
    with open(out_csv, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "submit", "gpus", "duration", "name"])
        for r in rows:
            w.writerow([r[0], repr(r[1]), r[2], repr(r[3]), r[4]])
    jobs = []
    for job_type, sf in sorted(used):
        base = thr["v100"][key(job_type, sf)]["null"]
        speed = {t: thr[t][key(job_type, sf)]["null"] / base for t in TYPES}
        # A type where the job cannot run (0 throughput) is left out: the defaults answer.
        speed = {t: s for t, s in speed.items() if s > 0}
        jobs.append({"job": job_type, "gpus": sf, "speed": speed})
    json.dump({"reference": "v100", "jobs": jobs}, open(out_table, "w"), indent=1)


def gavel_jcts(log, out_csv):
    pat = re.compile(r"^Job (\d+)(?: \(high priority\))?: ([0-9.]+)$")
    with open(out_csv, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["job_id", "jct"])
        for line in open(log):
            m = pat.match(line.strip())
            if m:
                w.writerow([m.group(1), m.group(2)])


def percentile(xs, q):
    """Linear interpolation between closest ranks (numpy's default), for both sides."""
    xs = sorted(xs)
    if not xs:
        return float("nan")
    pos = (len(xs) - 1) * q
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def window(path, span):
    """JCTs of jobs lo..hi-1 from a CSV with job_id and jct columns."""
    lo, hi = span
    out = {}
    for r in csv.DictReader(open(path)):
        i = int(r["job_id"])
        if lo <= i < hi:
            out[i] = float(r["jct"])
    return out


# Gavel's policy -> gpusched's run of the same rule.
SAME = {
    "fifo": "gavel-fifo",
    "fifo_perf": "gavel-fifo-aware",
    "max_min_fairness": "max-min",
    "max_min_fairness_perf": "max-min-aware",
}
OURS = ["fifo", "fifo-aware", "las", "las-aware", "max-min", "max-min-aware"]


def hours(s):
    return "%.2f h" % (s / 3600.0)


def span_of(results, load):
    lo, hi = open(os.path.join(results, load, "window")).read().split()
    return int(lo), int(hi)


def table(results):
    loads = sorted(os.listdir(results), key=float)
    print("The measurement window of each trace (job ids by trace line): %s; JCT in hours."
          % ", ".join("%s jobs/h: %d..%d" % ((l,) + tuple(x - d for x, d in zip(span_of(results, l), (0, 1))))
                      for l in loads))
    print()
    print("| jobs/h | Gavel policy | Gavel avg | Gavel p99 | gpusched same rule | avg | p99 | avg diff |")
    print("|---|---|---|---|---|---|---|---|")
    best = {}
    for load in loads:
        d = os.path.join(results, load)
        n = span_of(results, load)
        want = n[1] - n[0]
        gavel = {}
        for p in SAME:
            path = os.path.join(d, "gavel", p + ".csv")
            if os.path.exists(path):
                gavel[p] = window(path, n)
        ours = {}
        for p in set(OURS) | set(SAME.values()):
            path = os.path.join(d, "ours", "jobs-%s.csv" % p)
            if os.path.exists(path):
                ours[p] = window(path, n)
        for p, g in gavel.items():
            o = ours.get(SAME[p], {})
            ga, gp = sum(g.values()) / max(len(g), 1), percentile(list(g.values()), 0.99)
            oa, op = sum(o.values()) / max(len(o), 1), percentile(list(o.values()), 0.99)
            note = "" if len(g) == len(o) == want else " (jobs: %d vs %d)" % (len(g), len(o))
            print("| %s | %s | %s | %s | %s | %s | %s | %+.1f%%%s |" % (
                load, p, hours(ga), hours(gp), SAME[p], hours(oa), hours(op),
                100.0 * (oa - ga) / ga, note))
        gb = min(gavel, key=lambda p: sum(gavel[p].values()) / len(gavel[p]))
        ob = min((p for p in OURS if p in ours), key=lambda p: sum(ours[p].values()) / len(ours[p]))
        best[load] = (gb, gavel[gb], ob, ours[ob])
    print()
    print("| jobs/h | Gavel's best | avg | p99 | gpusched's best | avg | p99 | avg | p99 |")
    print("|---|---|---|---|---|---|---|---|---|")
    for load in loads:
        gb, g, ob, o = best[load]
        ga, gp = sum(g.values()) / len(g), percentile(list(g.values()), 0.99)
        oa, op = sum(o.values()) / len(o), percentile(list(o.values()), 0.99)
        print("| %s | %s | %s | %s | %s | %s | %s | %+.1f%% | %+.1f%% |" % (
            load, gb, hours(ga), hours(gp), ob, hours(oa), hours(op),
            100.0 * (oa - ga) / ga, 100.0 * (op - gp) / gp))
    print()
    print("All gpusched policies (avg / p99):")
    for load in loads:
        d = os.path.join(results, load, "ours")
        n = span_of(results, load)
        cells = []
        for p in OURS:
            path = os.path.join(d, "jobs-%s.csv" % p)
            if os.path.exists(path):
                o = window(path, n)
                cells.append("%s %s / %s" % (p, hours(sum(o.values()) / len(o)),
                                             hours(percentile(list(o.values()), 0.99))))
        print("  %s jobs/h: %s" % (load, "; ".join(cells)))


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "convert" and len(sys.argv) == 6:
        convert(*sys.argv[2:])
    elif cmd == "gavel-jcts" and len(sys.argv) == 4:
        gavel_jcts(*sys.argv[2:])
    elif cmd == "table" and len(sys.argv) == 3:
        table(sys.argv[2])
    else:
        sys.exit(__doc__)
