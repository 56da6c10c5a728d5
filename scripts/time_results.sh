#!/usr/bin/env bash
# Reproduces the numbers of docs/scheduling-results.md, "Time as a resource (issue 37)":
# deadlines (edf, edf-backfill, textbook EDF via --edf-plain, tiresias, blend) and
# round-robin time slicing (rr against fifo and tiresias, with Muri's switching cost) and
# turns under other policies (--time-slice) on Philly 64x8 and Muri's trace3 on its n8g8
# spec.
#
#   cargo build --release -p gpusched && scripts/time_results.sh OUTDIR
#
# With HELDOUT=DIR (a folder holding Muri's trace1.csv, trace2.csv and trace4.csv, from
# github.com/Rivendile/Muri at commit 4e69a78, simulator/trace-data/, the commit
# ../shared/traces/muri/trace3.csv comes from) it also runs the setups the deadline rule
# was not chosen on: Philly on 48x8, and the Muri setups of the scheduling results
# (trace1, trace2 and trace4 on the n8g8 spec and on a cluster at about 80% load, trace3
# on 6x8). SETUPS="muri-trace3 muri-trace1@20x8 ..." runs only those setups;
# PARTS="deadlines rr slice" only those parts (PARTS=none: only the tables, from the
# files already in OUTDIR); RR_QUANTA="1h 6h" only those quanta for `rr` (10 min takes
# many minutes on the contended Muri setups).
#
# Writes OUTDIR/SETUP/PART-NAME.txt (the simulator's output of each run) and
# OUTDIR/results.md (the tables). Deadlines are ElasticFlow's rule (docs/deadlines.md):
# submit + a factor drawn from 0.5-1.5 x the job's run time, seed 1, every job. Each
# deadline run is made with --estimates predicted (the run-time predictor's beliefs, no
# user-given run time) and --estimates oracle (the trace's true run times). Not a CI
# test: the textbook-EDF runs on Philly take many minutes each on two cores.
set -euo pipefail
out=${1:?usage: scripts/time_results.sh OUTDIR}
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${GPUSCHED:-${CARGO_TARGET_DIR:-$root/target}/release/gpusched}
traces=${TRACES:-$root/../shared/traces}
[ -x "$bin" ] || { echo "no $bin: run cargo build --release -p gpusched (or set GPUSCHED)" >&2; exit 2; }
[ -d "$traces" ] || { echo "no traces at $traces (set TRACES)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "python3 is needed for the tables" >&2; exit 2; }
mkdir -p "$out"
deadlines=(--deadlines 0.5-1.5 --deadline-seed 1)
run() { # setup, name, simulate args...
  local setup=$1 name=$2; shift 2
  mkdir -p "$out/$setup"
  echo "== $setup $name: $*" >&2
  local t0=$SECONDS
  "$bin" simulate "$@" > "$out/$setup/$name.txt"
  echo "   $((SECONDS - t0)) s" >&2
}
setups=(philly-64x8 muri-trace3)
if [ -n "${HELDOUT:-}" ]; then
  for t in trace1 trace2 trace4; do
    [ -f "$HELDOUT/$t.csv" ] || { echo "no $HELDOUT/$t.csv (see the top of this script)" >&2; exit 2; }
  done
  setups+=(philly-48x8 muri-trace1 muri-trace3@6x8 muri-trace1@20x8 muri-trace2 muri-trace2@56x8
    muri-trace4 muri-trace4@16x8)
fi
if [ -n "${SETUPS:-}" ]; then read -r -a setups <<< "$SETUPS"; fi
read -r -a parts <<< "${PARTS:-deadlines rr slice}"
for setup in "${setups[@]}"; do
  case $setup in
    philly-*) args=(--trace "$traces/philly/philly.csv" --cluster "${setup#philly-}") ;;
    muri-trace3) args=(--trace "$traces/muri/trace3.csv" --cluster-spec "$traces/muri/n8g8.csv") ;;
    muri-trace3@*) args=(--trace "$traces/muri/trace3.csv" --cluster "${setup#*@}") ;;
    muri-*@*) t=${setup#muri-}; args=(--trace "$HELDOUT/${t%@*}.csv" --cluster "${setup#*@}") ;;
    muri-*) args=(--trace "$HELDOUT/${setup#muri-}.csv" --cluster-spec "$traces/muri/n8g8.csv") ;;
  esac
  for part in "${parts[@]}"; do
    case $part in
      deadlines)
        for est in predicted oracle; do
          run "$setup" "deadlines-$est" "${args[@]}" "${deadlines[@]}" --estimates "$est" \
            --policy tiresias,blend,edf,edf-backfill
          run "$setup" "deadlines-$est-plain" "${args[@]}" "${deadlines[@]}" --estimates "$est" \
            --policy edf,edf-backfill --edf-plain
        done ;;
      rr)
        # Every policy pays Muri's profiled restart pause at each (re)start.
        run "$setup" rr-baselines "${args[@]}" --overhead muri --policy fifo,tiresias
        for q in ${RR_QUANTA:-10m 1h 6h}; do
          run "$setup" "rr-$q" "${args[@]}" --overhead muri --policy rr --quantum "$q"
        done ;;
      slice)
        # Turns of 2 h under other policies against the same policies without them.
        run "$setup" slice-plain "${args[@]}" --overhead muri --estimates predicted \
          --quantum 2h --policy fifo,sjf,blend,rr
        run "$setup" slice-sliced "${args[@]}" --overhead muri --estimates predicted \
          --quantum 2h --policy fifo,sjf,blend --time-slice ;;
    esac
  done
done
python3 - "$out" "${setups[@]}" > "$out/results.md" <<'PY'
import os, re, sys
out, setups = sys.argv[1], sys.argv[2:]
row = re.compile(r"^(\S+)\s+\S+\s+(\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\d+)$")
met = re.compile(r"^deadlines \((\S+)\): (\d+) of (\d+) met \(([\d.]+)%\), the others (\S+) late")

def read(setup, name):
    path = os.path.join(out, setup, name + ".txt")
    rows, dl = {}, {}
    if not os.path.exists(path):
        return rows, dl
    for line in open(path):
        m = row.match(line.strip())
        if m and m.group(1) != "policy":
            rows[m.group(1)] = dict(avg=m.group(3), p99=m.group(6), preempt=m.group(11))
        m = met.match(line.strip())
        if m:
            dl[m.group(1)] = dict(met=m.group(4), n=m.group(3), late=m.group(5))
    return rows, dl

print("## Deadlines met (factor 0.5-1.5, every job due)\n")
print("| setup | estimates | tiresias | blend | EDF (textbook) | edf-backfill (textbook) | **edf** | edf-backfill |")
print("|---|---|---|---|---|---|---|---|")
for s in setups:
    for est in ("predicted", "oracle"):
        rows, dl = read(s, f"deadlines-{est}")
        prows, pdl = read(s, f"deadlines-{est}-plain")
        if not dl and not pdl:
            continue
        def cell(d, r, p):
            if p not in d:
                return "-"
            return f"{d[p]['met']}% ({r[p]['avg']}, {d[p]['late']} late)" if p in r else f"{d[p]['met']}%"
        cells = [cell(dl, rows, "tiresias"), cell(dl, rows, "blend"), cell(pdl, prows, "edf"),
                 cell(pdl, prows, "edf-backfill"), cell(dl, rows, "edf"), cell(dl, rows, "edf-backfill")]
        print(f"| {s} | {est} | " + " | ".join(cells) + " |")
print("\nEach cell: deadlines met (avg JCT of all jobs, mean lateness of the missed ones).\n")
print("## Round-robin time slicing (--overhead muri)\n")
print("| setup | policy | avg JCT | p99 JCT | preemptions |")
print("|---|---|---|---|---|")
for s in setups:
    rows, _ = read(s, "rr-baselines")
    for q in ("10m", "1h", "6h"):
        r, _ = read(s, f"rr-{q}")
        if "rr" in r:
            rows[f"rr --quantum {q}"] = r["rr"]
    for p, r in rows.items():
        print(f"| {s} | {p} | {r['avg']} | {r['p99']} | {r['preempt']} |")
print("\n## Turns under other policies (--time-slice --quantum 2h, --overhead muri, predicted)\n")
print("| setup | rr | fifo | fifo sliced | sjf | sjf sliced | blend | blend sliced |")
print("|---|---|---|---|---|---|---|---|")
for s in setups:
    plain, _ = read(s, "slice-plain")
    sliced, _ = read(s, "slice-sliced")
    if not plain and not sliced:
        continue
    def c(rows, p):
        return f"{rows[p]['avg']} / {rows[p]['p99']}" if p in rows else "-"
    cells = [c(plain, "rr")]
    for p in ("fifo", "sjf", "blend"):
        cells += [c(plain, p), c(sliced, p)]
    print(f"| {s} | " + " | ".join(cells) + " |")
print("\nEach cell: avg / p99 JCT.")
PY
cat "$out/results.md"
echo "wrote $out/results.md" >&2
