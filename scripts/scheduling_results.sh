#!/usr/bin/env bash
# Reproduces every number and plot of docs/scheduling-results.md: Philly on 64x8 and
# 256x8 GPUs and Muri's trace3 on its n8g8 spec, each under fifo, tiresias, sjf/srtf on
# the predictor's estimates, blend on its beliefs, least attained service (blend with
# no estimates), and sjf/srtf/srsf with perfect estimates (oracle).
#
#   cargo build --release -p gpusched && scripts/scheduling_results.sh OUTDIR
#
# With HELDOUT=DIR (a folder holding Muri's trace1.csv, trace2.csv and trace4.csv, from
# github.com/Rivendile/Muri at commit 4e69a78, simulator/trace-data/, the commit
# ../shared/traces/muri/trace3.csv comes from), it also runs the held-out setups the
# policy was checked on: Philly on 48x8, trace3 on 6x8, and trace1, trace2 and trace4
# on n8g8 and on a cluster sized to about 80% load (20x8, 56x8, 16x8).
#
# Writes OUTDIR/SETUP/{predicted,none,oracle}/ (the simulator's report.json, per-job
# CSVs and its own plots), OUTDIR/results.md (the tables) and OUTDIR/jct_cdf-SETUP.svg
# and OUTDIR/ratios.svg (scripts/scheduling_results.py). Not a CI test: the Philly runs
# take minutes on two cores. fifo and tiresias read no estimate, so they run once, in
# the predicted run.
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
spec=("--cluster-spec" "$traces/muri/n8g8.csv")
muri=("--trace" "$traces/muri/trace3.csv" "${spec[@]}")
run() { # setup, estimates, policies, simulate args...
  local setup=$1 est=$2 pols=$3; shift 3
  local dir="$out/$setup/$est"
  mkdir -p "$dir"
  echo "== $setup, --estimates $est: $pols" >&2
  "$bin" simulate "$@" --policy "$pols" --estimates "$est" --out "$dir" > "$dir/stdout.txt"
  cat "$dir/stdout.txt" >&2
}
setups=(philly-64x8 philly-256x8 muri-trace3)
# SETUPS="muri-trace3 ..." runs only those (a quick check of the script itself).
if [ -n "${SETUPS:-}" ]; then read -r -a setups <<< "$SETUPS"; fi
if [ -n "${HELDOUT:-}" ]; then
  for t in trace1 trace2 trace4; do
    [ -f "$HELDOUT/$t.csv" ] || { echo "no $HELDOUT/$t.csv (see the top of this script)" >&2; exit 2; }
  done
  setups+=(philly-48x8 muri-trace3@6x8 muri-trace1 muri-trace1@20x8 muri-trace2 muri-trace2@56x8
    muri-trace4 muri-trace4@16x8)
fi
for setup in "${setups[@]}"; do
  case $setup in
    philly-*) args=("${philly[@]}" --cluster "${setup#philly-}") ;;
    muri-trace3) args=("${muri[@]}") ;;
    muri-trace3@*) args=("--trace" "$traces/muri/trace3.csv" --cluster "${setup#*@}") ;;
    muri-*@*) t=${setup#muri-}; args=("--trace" "$HELDOUT/${t%@*}.csv" --cluster "${setup#*@}") ;;
    muri-*) args=("--trace" "$HELDOUT/${setup#muri-}.csv" "${spec[@]}") ;;
  esac
  run "$setup" predicted fifo,tiresias,sjf,srtf,blend "${args[@]}"
  run "$setup" none blend "${args[@]}"
  run "$setup" oracle sjf,srtf,srsf "${args[@]}"
done
python3 "$root/scripts/scheduling_results.py" "$out" "${setups[@]}" > "$out/results.md"
cat "$out/results.md"
echo "wrote $out/results.md, $out/jct_cdf-*.svg and $out/ratios.svg" >&2
