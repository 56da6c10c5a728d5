#!/usr/bin/env bash
# Reproduces docs/elastic.md's simulator tables: Philly on 64x8 GPUs (contended) under
# fifo and tiresias, every job rigid against a share of the single-node jobs elastic
# (--elastic), with the default scaling model (Amdahl, 5 % serial), a 60 s resize cost
# and ranges of half to twice the trace's size; then the same at 20 % serial and at a
# 5-minute resize cost, to show what the result rests on.
#
#   cargo build --release -p gpusched && scripts/elastic_results.sh OUTDIR
#
# Writes OUTDIR/SETUP.txt (the simulator's table and its elastic lines) for each run.
# Not a CI test: each Philly run takes minutes on two cores.
set -euo pipefail
out=${1:?usage: scripts/elastic_results.sh OUTDIR}
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${GPUSCHED:-${CARGO_TARGET_DIR:-$root/target}/release/gpusched}
traces=${TRACES:-$root/../shared/traces}
cluster=${CLUSTER:-64x8}
[ -x "$bin" ] || { echo "no $bin: run cargo build --release -p gpusched (or set GPUSCHED)" >&2; exit 2; }
[ -d "$traces" ] || { echo "no traces at $traces (set TRACES)" >&2; exit 2; }
mkdir -p "$out"
base=(simulate --trace "$traces/philly/philly.csv" --cluster "$cluster" --policy "${POLICIES:-fifo,tiresias}")
run() {
  local name=$1
  shift
  echo "== $name: ${base[*]} $*" | tee "$out/$name.txt"
  "$bin" "${base[@]}" "$@" >> "$out/$name.txt"
}
run rigid
run elastic-0.5 --elastic 0.5
run elastic-1.0 --elastic 1
run elastic-1.0-serial0.2 --elastic 1 --elastic-serial 0.2
run elastic-1.0-cost5m --elastic 1 --resize-cost 5m
run elastic-1.0-min1 --elastic 1 --elastic-min 1
tail -n +1 "$out"/*.txt
