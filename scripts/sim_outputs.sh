#!/usr/bin/env bash
# Writes the simulator's outputs for a fixed set of runs into OUTDIR, so a change that must
# not move any result (a refactor of the core, a new option that is off by default) can be
# checked byte for byte: run it before and after, then `diff -r BEFORE AFTER`.
#
#   cargo build --release && scripts/sim_outputs.sh /tmp/before
#   ... change ...
#   cargo build --release && scripts/sim_outputs.sh /tmp/after && diff -r /tmp/before /tmp/after
#
# Only wall-clock times may differ between two runs of the same results: the last column
# of `simulate-sharing`'s table and `seconds_per_run` in sharing.json (and the `wrote ...
# to DIR` line, which names the directory). Everything else must match byte for byte.
#
# Covers every policy on Philly contended (64x8) and uncontended (256x8), the Muri trace3
# reproduction (n8g8 spec, Muri overhead), Philly with a queue file and per-tenant reports,
# and the FGD experiment on two pod lists (two seeds each). Takes a few minutes in release.
set -euo pipefail
out=${1:?usage: scripts/sim_outputs.sh OUTDIR}
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${GPUSCHED:-${CARGO_TARGET_DIR:-$root/target}/release/gpusched}
traces=${TRACES:-$root/../shared/traces}
[ -x "$bin" ] || { echo "no $bin: run cargo build --release (or set GPUSCHED)" >&2; exit 2; }
[ -d "$traces" ] || { echo "no traces at $traces (set TRACES)" >&2; exit 2; }
mkdir -p "$out"
all=fifo,priority,sjf,backfill,drf,srtf,srsf,tiresias
run() { # name, args...
  local name=$1; shift
  mkdir -p "$out/$name"
  "$bin" "$@" --out "$out/$name" > "$out/$name/stdout.txt"
}
run philly-64x8 simulate --trace "$traces/philly/philly.csv" --cluster 64x8 --policy "$all"
run philly-256x8 simulate --trace "$traces/philly/philly.csv" --cluster 256x8 --policy "$all"
run muri-trace3 simulate --trace "$traces/muri/trace3.csv" \
  --cluster-spec "$traces/muri/n8g8.csv" --overhead muri --policy "$all"
run philly-tenants simulate --trace "$traces/philly/philly.csv" --cluster 128x8 \
  --policy fifo,drf,backfill --per-tenant --fair-by queue
for pods in default gpushare40; do
  run "fgd-$pods" simulate-sharing --nodes "$traces/alibaba-v2023/openb_node_list_gpu_node.csv" \
    --pods "$traces/alibaba-v2023/openb_pod_list_$pods.csv" --strategy all --seeds 42,43
done
echo "wrote $out"
