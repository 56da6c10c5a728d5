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
# The binary may be an older release's (GPUSCHED_BIN): what it cannot do is left out,
# judged by its `--help` (the jobs of schema 1 always; then, where the CLI has them, a
# job that follows another on its GPU, a pending gang on a second node, an array with a
# task cancelled before it started, a held job, `any:`/`notok:` dependencies, an image
# and a process cap). The tests find jobs by name, not id: what is left out shifts the
# ids.
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
agent2_pid=
cleanup() {
    # Only what this script started, by pid.
    [ -n "$agent_pid" ] && kill "$agent_pid" 2>/dev/null || true
    [ -n "$agent2_pid" ] && kill "$agent2_pid" 2>/dev/null || true
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
n2_online() { g nodes | grep -q "n2 .*online"; }
follows() { g show "$1" --json | grep -q '"reason": *"queued on'; }
# As wait_for, but at most 15 s, and what did not come is said, not fatal.
wait_soft() {
    for _ in $(seq 150); do
        if "$@" >/dev/null 2>&1; then return 0; fi
        sleep 0.1
    done
    echo "(did not happen: $*)"
}
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

# Newer releases (FIXTURE_EXTRAS=0 leaves these out, as schema 1's fixture was made).
extras=${FIXTURE_EXTRAS:-1}
has() { "$bin" "$@" --help 2>/dev/null | grep -q -e "$HAS"; }
if [ "$extras" = 1 ] && HAS=follow-under has server; then
    # The last whole GPU: a long job, and a short one of its kind queued behind it on
    # its GPU (a follower, schema 9), which the crash leaves queued.
    lead=$(sub -J lead -t 1h -- sleep 600)
    wait_for is_state "$lead" running
    follower=$(sub -J follower -t 1s -- true)
    wait_soft follows "$follower"
fi
if [ "$extras" = 1 ] && HAS=%K has submit; then
    # An array (schema 6) of CPU-only tasks (the GPUs are held), two at once, submitted
    # before anything waits (under fifo nothing passes a waiting job); one index cancelled
    # before it started.
    array=$(sub -J array --array 0-5%2 -G 0 -e PART=a -- sleep 600)
    wait_soft is_state "$array.1" running
    g cancel "$array.4" >/dev/null || echo "(cancelling task 4 of the array: refused)"
fi
too_big=$(sub -J too-big -G 4 -- true) # every GPU, or 3 of the 4, is held
after=$(sub -J after --after "$running" -- true)
if [ "$extras" = 1 ] && HAS=gpus-per-node has submit; then
    # A second node, n2 with 2 GPUs (a gang must fit the cluster to be accepted), and a
    # gang of 2 nodes x 2 GPUs, pending while n1's are held: its shape stored (schema 3).
    "$bin" agent --server "http://127.0.0.1:$port" --name n2 --state-dir "$work/n2" \
        --join-token-file "$data/join-token" --allow-root-jobs \
        --gpus 2 --gpu-model "NVIDIA A100-SXM4-80GB" --gpu-backend fake \
        >"$work/agent2.log" 2>&1 &
    agent2_pid=$!
    wait_for n2_online
    sub -J gang -N 2 --gpus-per-node 2 --tasks-per-node 2 --mixed-models -- true >/dev/null
fi
if [ "$extras" = 1 ] && HAS=any:ID has submit; then
    # A held job, and the other dependency kinds (schema 6).
    sub -J held --hold -G 0 -- true >/dev/null
    sub -J after-any --after "any:$running" -G 0 -- true >/dev/null
    sub -J after-notok --after "notok:$running" -G 0 -- true >/dev/null
fi
if [ "$extras" = 1 ] && HAS=--pids has submit; then
    # An image and a process cap (schema 11): no node of this cluster runs images.
    sub -J contained -G 0 --image docker.io/library/busybox:1.36 --pids 64 -- true >/dev/null ||
        echo "(the image job was refused)"
    sub -J capped -G 0 --pids 64 -- sleep 600 >/dev/null
fi
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
if [ -n "$agent2_pid" ]; then
    kill -TERM "$agent2_pid"
    wait "$agent2_pid" 2>/dev/null || true
    agent2_pid=
fi

sqlite3 "$data/gpusched.db" 'PRAGMA wal_checkpoint(TRUNCATE);' >/dev/null
sqlite3 "$data/gpusched.db" 'PRAGMA journal_mode=DELETE;' >/dev/null
mkdir -p "$out"
cp "$data/gpusched.db" "$out/gpusched.db"
echo "wrote $out/gpusched.db ($(stat -c %s "$out/gpusched.db") bytes)"
sqlite3 -header -column "$out/gpusched.db" 'SELECT id, name, state, node FROM jobs ORDER BY id' || true
