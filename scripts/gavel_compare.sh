#!/usr/bin/env bash
# Gavel (github.com/stanford-futuredata/gavel, OSDI 2020) and gpusched side by side on
# Gavel's own generated traces, cluster (V100/P100/K80) and throughput measurements:
# docs/heterogeneous.md has the numbers and how to read them. Not run in CI (it runs
# Python and Gavel's code); nothing of Gavel is copied into this repository.
#
#   scripts/gavel_compare.sh GAVEL OUTDIR
#
# GAVEL: a checkout of Gavel (a work tree with scheduler/, or a git directory, e.g. a
# bare mirror; `git clone https://github.com/stanford-futuredata/gavel` makes one).
# Its scheduler/ is copied into OUTDIR/gavel (its RPC stubs are generated there), and
# a virtual environment with what its simulator imports is made in $VENV
# (default OUTDIR/venv) from PyPI unless it exists.
#
# Knobs (environment): LOADS="3 4 5" (jobs per hour), WARMUP=150 (jobs generated
# before the measurement window, so the cluster is in steady state), JOBS=50 (jobs
# measured), SEED=0, CLUSTER=36:36:36 (V100:P100:K80 GPUs, one per server as
# Gavel's default), POLICIES (Gavel's; default: fifo fifo_perf max_min_fairness
# max_min_fairness_perf), GPUSCHED (the binary; default the release build).
#
# For each load: Gavel's simulate_scheduler_with_generated_jobs.py makes the trace (its
# Philly-like durations and job mix, Poisson arrivals, run with the measurement window
# WARMUP..WARMUP+JOBS, which makes it write the jobs still in the cluster when the window
# opens, with their remaining work, at time 0, then every later arrival until the
# window's jobs end), Gavel's simulate_scheduler_with_trace.py replays it under each
# policy measuring the JOBS jobs after those at time 0, gavel_compare.py
# converts the trace and throughputs, and `gpusched simulate` replays the same trace
# on the same cluster under its heterogeneous policies. Then the table.
set -euo pipefail
gavel=${1:?usage: scripts/gavel_compare.sh GAVEL_CHECKOUT OUTDIR}
out=${2:?usage: scripts/gavel_compare.sh GAVEL_CHECKOUT OUTDIR}
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${GPUSCHED:-${CARGO_TARGET_DIR:-$root/target}/release/gpusched}
loads=${LOADS:-3 4 5}
jobs=${JOBS:-50}
warmup=${WARMUP:-150}
seed=${SEED:-0}
cluster=${CLUSTER:-36:36:36}
policies=${POLICIES:-fifo fifo_perf max_min_fairness max_min_fairness_perf}
venv=${VENV:-$out/venv}
[ -x "$bin" ] || { echo "no $bin: run cargo build --release (or set GPUSCHED)" >&2; exit 2; }
mkdir -p "$out"
out=$(cd "$out" && pwd)

# Gavel's scheduler directory, outside the repository.
src=$out/gavel
if [ ! -d "$src/scheduler" ]; then
  mkdir -p "$src"
  if [ -d "$gavel/scheduler" ]; then
    cp -r "$gavel/scheduler" "$src/"
  else
    # A git directory: its tree, less the big trace and notebook folders (a mirror may
    # lack their blobs, and the simulator does not read them).
    git --git-dir="$gavel" archive HEAD scheduler ':(exclude)scheduler/traces' \
      ':(exclude)scheduler/notebooks' ':(exclude)scheduler/logs' | tar -x -C "$src"
  fi
fi
commit=$( (git -C "$gavel" rev-parse HEAD 2>/dev/null || git --git-dir="$gavel" rev-parse HEAD) || echo unknown)

# What Gavel's simulator imports (its requirements.txt pins torch and more that the
# simulator never loads); versions that import together on Python 3.11.
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q numpy==1.26.4 'scipy<1.12' cvxpy==1.4.1 ecos grpcio \
    grpcio-tools psutil matrix_completion scikit-learn
fi
py=$venv/bin/python
sched=$src/scheduler
if [ ! -f "$sched/runtime/rpc_stubs/worker_to_scheduler_pb2.py" ]; then
  mkdir -p "$sched/runtime/rpc_stubs"
  (cd "$sched" && PATH=$venv/bin:$PATH make rpc_stubs >/dev/null)
fi

types=(${cluster//:/ })
ours_cluster="v100:${types[0]}x1,p100:${types[1]}x1,k80:${types[2]}x1"
results=$out/results
for load in $loads; do
  d=$results/$load
  mkdir -p "$d/gavel" "$d/ours"
  lam=$(python3 -c "print(3600.0 / $load)")
  if [ ! -s "$d/trace.tsv" ]; then
    (cd "$sched" && "$py" scripts/drivers/simulate_scheduler_with_generated_jobs.py \
      -c "$cluster" -l "$lam" -s "$warmup" -e $((warmup + jobs)) -p max_min_fairness_perf \
      --seed "$seed" \
      --throughputs_file simulation_throughputs.json --output_trace_file_name "$d/trace.tsv" \
      > "$d/generate.log" 2>&1)
  fi
  # The jobs at time 0 (those in the cluster when the window opened, and the window's
  # first job twice, as Gavel writes it) are not measured: the JOBS after them are.
  first=$(awk -F'\t' '$NF + 0 == 0 { n++ } END { print n + 0 }' "$d/trace.tsv")
  echo "$first $((first + jobs))" > "$d/window"
  for p in $policies; do
    if [ ! -s "$d/gavel/$p.csv" ]; then
      (cd "$sched" && "$py" scripts/drivers/simulate_scheduler_with_trace.py -t "$d/trace.tsv" \
        -p "$p" -c "$cluster" --seed "$seed" -s "$first" -e $((first + jobs)) \
        --throughputs_file simulation_throughputs.json > "$d/gavel/$p.log" 2>&1)
      python3 "$root/scripts/gavel_compare.py" gavel-jcts "$d/gavel/$p.log" "$d/gavel/$p.csv"
    fi
  done
  python3 "$root/scripts/gavel_compare.py" convert "$d/trace.tsv" \
    "$sched/simulation_throughputs.json" "$d/trace.csv" "$d/throughputs.json"
  "$bin" simulate --trace "$d/trace.csv" --throughputs "$d/throughputs.json" \
    --cluster "$ours_cluster" --policy all --out "$d/ours" > "$d/ours/stdout.txt"
done
echo "Gavel $commit; gpusched $(git -C "$root" rev-parse --short HEAD); cluster $cluster" \
  "(gpusched: $ours_cluster); seed $seed; $(date -u +%F)"
python3 "$root/scripts/gavel_compare.py" table "$results"
