#!/usr/bin/env bash
# Philly's energy/JCT trade-off under the simulator's power model (`simulate --power-model`):
# fifo and backfill, consolidated and spread placement, every idle GPU drawing its idle
# watts or nodes running no job powered down (`--power-down-idle`). Prints one Markdown
# row per run and policy. Results: docs/energy.md ("Simulator").
#
#   scripts/philly_energy.sh [CLUSTER]     (default: 64x8)
#
# GPUSCHED names the binary (default target/release/gpusched; a debug build takes about
# a minute for the whole set on Philly 64x8).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${GPUSCHED:-target/release/gpusched}
TRACE=${TRACE:-../shared/traces/philly/philly.csv}
CLUSTER=${1:-64x8}
echo "| policy | placement | power-down idle | avg JCT (h) | p99 JCT (h) | makespan (d) | util | busy kWh | idle kWh | total kWh |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for pl in consolidated spread; do
  for down in no yes; do
    flag=()
    [ "$down" = yes ] && flag=(--power-down-idle)
    nice -n 19 "$BIN" simulate --trace "$TRACE" --cluster "$CLUSTER" --policy fifo,backfill \
      --placement "$pl" --power-model "${flag[@]}" --json |
      jq -r --arg down "$down" '.policies[] | "| \(.policy) | \(.placement) | \($down) | \(.avg_jct / 3600 * 100 | round / 100) | \(.p99_jct / 3600 * 100 | round / 100) | \(.makespan / 86400 * 100 | round / 100) | \(.utilization * 1000 | round / 10)% | \(.energy.busy_kwh | round) | \(.energy.idle_kwh | round) | \(.energy.total_kwh | round) |"'
  done
done
