#!/usr/bin/env bash
# Makes a store fixture: a database written by a real `gpusched server` of this checkout,
# with jobs in every state an upgrade must keep (succeeded, failed, cancelled, timed out,
# pending behind its size or a dependency, running, requeued, a GPU share), a node row and
# a token row. Run it BEFORE a schema change, from the repository root, and commit the
# result with a README naming the commit:
#
#   cargo build -p gpusched
#   scripts/make_store_fixture.sh crates/store/tests/fixtures/v1-2026-11-30
#
# The server is stopped with SIGKILL while three jobs run, as a crash would leave it; the
# WAL is then merged into the database file (wal_checkpoint(TRUNCATE)) so one file holds
# every committed row. Needs sqlite3 and a loopback port.
set -euo pipefail

out=${1:?usage: scripts/make_store_fixture.sh OUT_DIR}
bin=${GPUSCHED_BIN:-${CARGO_TARGET_DIR:-target}/debug/gpusched}
[ -x "$bin" ] || { echo "no gpusched binary at $bin: run cargo build -p gpusched (or set GPUSCHED_BIN)" >&2; exit 1; }
command -v sqlite3 >/dev/null || { echo "sqlite3 is needed to merge the WAL" >&2; exit 1; }

work=$(mktemp -d)
data=$work/server
port=$((20000 + RANDOM % 20000))
server_pid=
agent_pid=
cleanup() {
    # Only what this script started, by pid.
    [ -n "$agent_pid" ] && kill "$agent_pid" 2>/dev/null || true
    [ -n "$server_pid" ] && kill -9 "$server_pid" 2>/dev/null || true
    sleep 1
    rm -rf "$work"
}
trap cleanup EXIT

cat >"$work/queues.toml" <<'EOF'
[queues.research]
quota = 2
default_priority = 1
max_priority = 10

[queues.default]
EOF

export GPUSCHED_SERVER=unix:$data/gpusched.sock
g() { "$bin" "$@"; }

# Waits (at most 60 s) until `cmd...` succeeds.
wait_for() {
    for _ in $(seq 600); do
        if "$@" >/dev/null 2>&1; then return 0; fi
        sleep 0.1
    done
    echo "timed out waiting for: $*" >&2
    exit 1
}
state_of() { g show "$1" --json | sed -n 's/.*"state": *"\([a-z_]*\)".*/\1/p' | head -1; }
is_state() { [ "$(state_of "$1")" = "$2" ]; }
attempt_is() { g show "$2" --json | grep -q "\"attempt\": *$1[,}]"; }
node_online() { g nodes | grep -q "n1 .*online"; }
# `--cwd /tmp`: a directory every machine has, so the jobs can run again wherever the
# fixture is loaded (the CLI would send the directory this script runs in).
sub() { g submit --json --cwd /tmp "$@" | sed -n 's/.*"ids": *\[\([0-9]*\).*/\1/p'; }

start_agent() {
    "$bin" agent --server "http://127.0.0.1:$port" --name n1 --state-dir "$work/n1" \
        --join-token-file "$data/join-token" --allow-root-jobs \
        --gpus 4 --gpu-model "NVIDIA A100-SXM4-80GB" --gpu-backend fake \
        >"$work/agent.log" 2>&1 &
    agent_pid=$!
    wait_for node_online
}

GPUSCHED_LOG=warn "$bin" server --listen "127.0.0.1:$port" --data-dir "$data" \
    --heartbeat-timeout 10s --grace 1s --queues "$work/queues.toml" \
    >"$work/server.log" 2>&1 &
server_pid=$!
wait_for test -S "$data/gpusched.sock"
wait_for g queue

g token create alice >/dev/null 2>&1 # a token row
start_agent                     # a node row

ok=$(sub -J ok -e GREETING=hello -- true)
failed=$(sub -J failed -- sh -c 'exit 1')
cancelled=$(sub -J cancelled -- sleep 600)
timed_out=$(sub -J timed-out -t 1s -- sleep 600)
wait_for is_state "$ok" succeeded
wait_for is_state "$failed" failed
wait_for is_state "$cancelled" running
g cancel "$cancelled" >/dev/null
wait_for is_state "$cancelled" cancelled
wait_for is_state "$timed_out" timed_out

# Stopping the agent requeues its running job without using a retry (attempt 2).
requeued=$(sub -J requeued --max-retries 1 -- sleep 600)
wait_for is_state "$requeued" running
kill -TERM "$agent_pid"
wait "$agent_pid" || true
agent_pid=
wait_for attempt_is 2 "$requeued"
start_agent
wait_for is_state "$requeued" running

running=$(sub -J running -q research --priority 7 -t 2h -e MODEL=llama -e STEPS=100 -- sleep 600)
share=$(sub -J share --gpu-share 0.5 -- sleep 600)
wait_for is_state "$running" running
wait_for is_state "$share" running
too_big=$(sub -J too-big -G 4 -- true) # 3 of the 4 GPUs are held
after=$(sub -J after --after "$running" -- true)
sleep 1 # one more scheduling round for the pending jobs (they stay pending anyway)

echo "jobs: ok=$ok failed=$failed cancelled=$cancelled timed_out=$timed_out requeued=$requeued running=$running share=$share too_big=$too_big after=$after"
g queue --all

# A crash while three jobs run: the server dies, its agent and jobs are stopped after.
kill -9 "$server_pid"
wait "$server_pid" 2>/dev/null || true
server_pid=
kill -TERM "$agent_pid"
wait "$agent_pid" 2>/dev/null || true
agent_pid=

sqlite3 "$data/gpusched.db" 'PRAGMA wal_checkpoint(TRUNCATE);' >/dev/null
sqlite3 "$data/gpusched.db" 'PRAGMA journal_mode=DELETE;' >/dev/null
mkdir -p "$out"
cp "$data/gpusched.db" "$out/gpusched.db"
echo "wrote $out/gpusched.db ($(stat -c %s "$out/gpusched.db") bytes)"
