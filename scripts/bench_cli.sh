#!/bin/bash
# What one `gpusched` CLI call costs (docs/benchmarks-log.md (o), issue 14 item 5).
#
#   scripts/bench_cli.sh EXE [LABEL] [N]
#
# Starts a server and one agent (8 declared GPUs) on loopback in a temporary directory,
# then times loops of N calls: /bin/true (the shell's own process start), `EXE --version`
# (the floor of any call of this binary), and `EXE submit -- /bin/true` over the Unix
# socket and over TCP with a token; then `perf stat` (CPU, context switches, page faults
# of the CLI process alone) and the server's fsyncs during 20 submits (strace -T).
# Needs curl, bc, python3, strace and perf. Stops everything it started.
set -u
EXE=$(realpath "$1"); LABEL=${2:-run}; N=${3:-1000}
T=$(mktemp -d /tmp/gpusched-bench-cli.XXXX)
PORT=$((17000 + RANDOM % 1000))
export GPUSCHED_LOG=warn
"$EXE" server --listen 127.0.0.1:$PORT --data-dir "$T/data" >/dev/null 2>"$T/server.err" &
SRV=$!
AGT=
cleanup() { kill $AGT $SRV 2>/dev/null; wait $AGT $SRV 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
for _ in $(seq 200); do curl -sf http://127.0.0.1:$PORT/api/health >/dev/null && break; sleep 0.05; done
SOCK=$T/data/gpusched.sock
TOKEN=$(GPUSCHED_SERVER=unix:$SOCK "$EXE" token create "$(id -un)" --admin 2>/dev/null)
GPUSCHED_SERVER=http://127.0.0.1:$PORT GPUSCHED_TOKEN=$TOKEN "$EXE" agent \
  --server http://127.0.0.1:$PORT --name bench --state-dir "$T/agent" \
  --join-token-file "$T/data/join-token" --allow-root-jobs --gpus 8 \
  --gpu-model A100-SXM4-80GB --gpu-backend declared >/dev/null 2>"$T/agent.err" &
AGT=$!
for _ in $(seq 200); do
  curl -sf -H "authorization: Bearer $TOKEN" http://127.0.0.1:$PORT/api/nodes | grep -q online && break
  sleep 0.05
done
# Subshells set the target, so the loops time no extra process.
unix() { export GPUSCHED_SERVER=unix:$SOCK; unset GPUSCHED_TOKEN; }
tcp() { export GPUSCHED_SERVER=http://127.0.0.1:$PORT GPUSCHED_TOKEN=$TOKEN; }
SUBMIT=(submit --json --cwd /tmp -- /bin/true)
loop() { # NAME COMMAND...
  local name=$1; shift
  local t0 t1
  t0=$(date +%s.%N)
  for ((i = 0; i < N; i++)); do "$@" >/dev/null || { echo "FAILED: $*"; return 1; }; done
  t1=$(date +%s.%N)
  python3 -c "n=$N; s=$t1-$t0; print(f'$LABEL $name x{n}: {n/s:.0f}/s ({s*1e3/n:.2f} ms each), load $(cut -d' ' -f1 /proc/loadavg)')"
}
cd /tmp
loop true /bin/true
loop version "$EXE" --version
(unix; loop submit-unix "$EXE" "${SUBMIT[@]}")
(tcp; loop submit-tcp "$EXE" "${SUBMIT[@]}")
stat() { # NAME COMMAND...
  local name=$1; shift
  perf stat -x, -e task-clock,context-switches,page-faults -r 50 "$@" 2>"$T/perf" >/dev/null
  echo "$LABEL perf $name: CPU $(grep task-clock "$T/perf" | cut -d, -f1) ms," \
    "$(grep context "$T/perf" | cut -d, -f1) context switches, $(grep page-faults "$T/perf" | cut -d, -f1) page faults"
}
stat true /bin/true
stat version "$EXE" --version
(unix; stat submit-unix "$EXE" "${SUBMIT[@]}")
(tcp; stat submit-tcp "$EXE" "${SUBMIT[@]}")
strace -f -T -e trace=fsync,fdatasync -p $SRV -o "$T/fsync" 2>/dev/null &
ST=$!
sleep 1
(unix; for _ in $(seq 20); do "$EXE" "${SUBMIT[@]}" >/dev/null; done)
sleep 0.5
kill $ST; wait $ST 2>/dev/null
grep -o '<[0-9.]*>' "$T/fsync" | tr -d '<>' | sort -n |
  awk -v l="$LABEL" '{a[NR]=$1} END {printf "%s server fsyncs during 20 submits (with their jobs): %d, median %.0f us\n", l, NR, a[int((NR+1)/2)]*1e6}'
