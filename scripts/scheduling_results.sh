#!/usr/bin/env bash
# Reproduces every number and plot of docs/scheduling-results.md: Philly on 64x8 and
# 256x8 GPUs and Muri's trace3 on its n8g8 spec, each under fifo, tiresias, sjf/srtf on
# the predictor's estimates, blend, and sjf/srtf with perfect estimates (oracle).
#
#   cargo build --release -p gpusched && scripts/scheduling_results.sh OUTDIR
#
# Writes OUTDIR/SETUP/{predicted,oracle}/ (the simulator's report.json, per-job CSVs and
# its own plots), OUTDIR/results.md (the tables) and OUTDIR/jct_cdf-SETUP.svg and
# OUTDIR/ratios.svg (scripts/scheduling_results.py). Not a CI test: the Philly runs take
# minutes on two cores. fifo and tiresias read no estimate, so they run once, in the
# predicted run.
set -euo pipefail
out=${1:?usage: scripts/scheduling_results.sh OUTDIR}
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${GPUSCHED:-${CARGO_TARGET_DIR:-$root/target}/release/gpusched}
traces=${TRACES:-$root/../shared/traces}
[ -x "$bin" ] || { echo "no $bin: run cargo build --release -p gpusched (or set GPUSCHED)" >&2; exit 2; }
[ -d "$traces" ] || { echo "no traces at $traces (set TRACES)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "python3 is needed for the tables and plots" >&2; exit 2; }
mkdir -p "$out"
philly=("--trace" "$traces/philly/philly.csv")
muri=("--trace" "$traces/muri/trace3.csv" "--cluster-spec" "$traces/muri/n8g8.csv")
run() { # setup, estimates, policies, simulate args...
  local setup=$1 est=$2 pols=$3; shift 3
  local dir="$out/$setup/$est"
  mkdir -p "$dir"
  echo "== $setup, --estimates $est: $pols" >&2
  "$bin" simulate "$@" --policy "$pols" --estimates "$est" --out "$dir" > "$dir/stdout.txt"
  cat "$dir/stdout.txt" >&2
}
for setup in philly-64x8 philly-256x8 muri-trace3; do
  case $setup in
    philly-64x8) args=("${philly[@]}" --cluster 64x8) ;;
    philly-256x8) args=("${philly[@]}" --cluster 256x8) ;;
    muri-trace3) args=("${muri[@]}") ;;
  esac
  run "$setup" predicted fifo,tiresias,sjf,srtf,blend "${args[@]}"
  run "$setup" oracle sjf,srtf "${args[@]}"
done
python3 "$root/scripts/scheduling_results.py" "$out" philly-64x8 philly-256x8 muri-trace3 \
  > "$out/results.md"
cat "$out/results.md"
echo "wrote $out/results.md, $out/jct_cdf-*.svg and $out/ratios.svg" >&2
