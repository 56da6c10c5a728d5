#!/usr/bin/env bash
# Philly on an SxNxG cluster: topology-aware placement (`--placement topology`) against
# one-switch (`consolidated`) and topology-blind (`pool`) placement, with and without a
# locality penalty; prints, per run and policy, JCT avg/p99 of all jobs and of the
# 16-128-GPU jobs, and the makespan. Results: docs/benchmarks-log.md (j).
#
#   scripts/philly_topology.sh [CLUSTER...]     (default: 4x16x8 8x16x8)
#
# GPUSCHED names the binary (default target/release/gpusched); OUT the work directory.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${GPUSCHED:-target/release/gpusched}
TRACE=${TRACE:-../shared/traces/philly/philly.csv}
OUT=${OUT:-$(mktemp -d)}
CLUSTERS=("$@")
[ ${#CLUSTERS[@]} -gt 0 ] || CLUSTERS=(4x16x8 8x16x8)
for cl in "${CLUSTERS[@]}"; do
  for pen in 1 1.5 2; do
    for pl in consolidated pool topology; do
      nice -n 19 "$BIN" simulate --trace "$TRACE" --cluster "$cl" --policy fifo,backfill \
        --placement "$pl" --locality-penalty "$pen" --out "$OUT/$cl-$pen-$pl" >/dev/null
    done
  done
done
python3 - "$OUT" <<'PY'
import csv, glob, os, sys
out = sys.argv[1]
def p99(v):
    v = sorted(v); return v[min(len(v) - 1, int(0.99 * len(v)))]
def h(s): return f"{s / 3600:.1f}h"
print("cluster penalty placement policy | all: avg p99 | 16-128 GPUs: n avg p99 | makespan")
for d in sorted(glob.glob(os.path.join(out, "*-*-*"))):
    if not os.path.isdir(d): continue
    cl, pen, pl = os.path.basename(d).split("-", 2)
    for f in sorted(glob.glob(os.path.join(d, "jobs-*.csv"))):
        pol = os.path.basename(f)[5:-4]
        rows = list(csv.DictReader(open(f)))
        jct = [float(r["jct"]) for r in rows]
        big = [float(r["jct"]) for r in rows if 16 <= int(r["gpus"]) <= 128]
        span = max(float(r["end"]) for r in rows) - min(float(r["submit"]) for r in rows)
        print(f"{cl} {pen} {pl} {pol} | {h(sum(jct)/len(jct))} {h(p99(jct))} | "
              f"{len(big)} {h(sum(big)/len(big))} {h(p99(big))} | {span/86400:.2f}d")
PY
