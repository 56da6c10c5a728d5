#!/usr/bin/env bash
# The OpenAPI document is the contract: schemathesis (pinned below) tests every operation
# of a live server against /api/openapi.json with every check (`--checks all`) in the
# examples, coverage and fuzzing phases, then the stateful phase (which must run
# scenarios), once with a user token and once with an admin token, each against a fresh
# server and agent. Any finding fails the run.
#
# Fuzzed submissions really run, so the agent must never run them as root: both tokens
# belong to the Unix user `nobody` (the owner a job runs as), and the agent is started
# WITHOUT --allow-root-jobs, so a job an admin submits as `root` is refused by the agent.
#
# Usage: scripts/contract_test.sh [PATH/TO/gpusched]
#   default binary: $CARGO_TARGET_DIR/debug/gpusched (build it with `cargo build -p gpusched-cli`)
# Environment:
#   CONTRACT_VENV      where schemathesis is installed (default ~/.cache/gpusched-contract-venv)
#   CONTRACT_MAX_TIME  seconds of fuzzing per run (default 60)
#   CONTRACT_STATEFUL_TIME  seconds of the stateful phase per run (default 30)
#   CONTRACT_EXAMPLES  hypothesis examples per operation (default 40)
#   CONTRACT_SEED      generation seed (default fixed, so CI is reproducible; `random` for a new one)
#   CONTRACT_KEEP      set to keep the scratch directory (reports, server and agent logs)
#   CONTRACT_ST_ARGS   more `st run` arguments, e.g. `--include-path-regex /api/agent`
#   CONTRACT_ROLES     which runs (default `user admin`)
# The install alone: scripts/contract_test.sh --install-only (.ci/run starts it early).
set -euo pipefail

SCHEMATHESIS_VERSION="4.32.5"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VENV="${CONTRACT_VENV:-${HOME:-/tmp}/.cache/gpusched-contract-venv}"
ST="$VENV/bin/st"

# Python 3.12 or later: under 3.11 schemathesis' generator crashes CPython's compiler on
# the agent protocol's deep schemas ("AST constructor recursion depth mismatch").
find_python() {
  local py
  for py in ${CONTRACT_PYTHON:-} python3.12 python3.13 python3 \
    "$(pyenv root 2>/dev/null)"/versions/3.1[2-9]*/bin/python3; do
    if "$py" -c 'import sys; sys.exit(sys.version_info < (3, 12))' >/dev/null 2>&1; then
      echo "$py"
      return 0
    fi
  done
  echo "schemathesis needs Python 3.12 or later (set CONTRACT_PYTHON)" >&2
  return 1
}

install() {
  if [ -x "$ST" ] && "$VENV/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('schemathesis') != '$SCHEMATHESIS_VERSION' or sys.version_info < (3, 12))" 2>/dev/null; then
    return 0
  fi
  local py
  py=$(find_python)
  rm -rf "$VENV"
  "$py" -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION"
}

if [ "${1:-}" = "--install-only" ]; then
  install
  exit 0
fi

BIN="${1:-${CARGO_TARGET_DIR:-$ROOT/target}/debug/gpusched}"
[ -x "$BIN" ] || { echo "$BIN not found: build it first (cargo build -p gpusched-cli) or pass its path" >&2; exit 1; }
if [ "$(id -u)" = 0 ]; then
  id nobody >/dev/null 2>&1 || { echo "the user 'nobody' must exist: fuzzed jobs run as it" >&2; exit 1; }
fi
install

MAX_TIME="${CONTRACT_MAX_TIME:-60}"
STATEFUL_TIME="${CONTRACT_STATEFUL_TIME:-30}"
EXAMPLES="${CONTRACT_EXAMPLES:-40}"
SEED="${CONTRACT_SEED:-20261130}"
SCRATCH="$(mktemp -d "${TMPDIR:-/tmp}/gpusched-contract.XXXXXX")"
chmod 755 "$SCRATCH" # jobs run as nobody: their default cwd and the agent's dirs stay root's
PIDS=()

stop_all() {
  local pid
  for pid in "${PIDS[@]:-}"; do
    [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null || true
  done
  for pid in "${PIDS[@]:-}"; do
    [ -n "$pid" ] || continue
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  PIDS=()
}
cleanup() {
  stop_all
  if [ -n "${CONTRACT_KEEP:-}" ]; then
    echo "kept $SCRATCH"
  else
    rm -rf "$SCRATCH"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

wait_for() { # wait_for SECONDS DESCRIPTION COMMAND...
  local limit=$1 what=$2 i
  shift 2
  for i in $(seq 1 $((limit * 5))); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.2
  done
  echo "gave up after ${limit}s waiting for $what" >&2
  return 1
}

# run_one NAME ROLE: a fresh server and agent, a token of ROLE for `nobody`, schemathesis.
run_one() {
  local name=$1 role=$2
  local dir="$SCRATCH/$name" port url sock token
  mkdir -p "$dir"
  port=$(free_port)
  url="http://127.0.0.1:$port"
  # --max-wait 5s: a `wait` on a held or unrunnable fuzzed job (one that never ends)
  # answers within 5 s, under schemathesis' response time limit (10 s), rather than at
  # the default 300 s.
  "$BIN" server --data-dir "$dir/data" --listen "127.0.0.1:$port" --grace 1s --max-wait 5s \
    >"$dir/server.log" 2>&1 &
  PIDS+=($!)
  sock="unix:$dir/data/gpusched.sock"
  wait_for 60 "the server's socket" "$BIN" whoami --server "$sock"
  # Declared GPUs, and no --allow-root-jobs: jobs run as their owner, never as root.
  "$BIN" agent --server "$url" --name n1 --state-dir "$dir/agent" \
    --join-token-file "$dir/data/join-token" --gpu-backend declared --gpus 4 \
    --gpu-model A100-SXM4-80GB --gpu-mem-mib 81920 >"$dir/agent.log" 2>&1 &
  PIDS+=($!)
  wait_for 60 "the agent to join" sh -c "'$BIN' nodes --server '$sock' | grep -q n1"
  local flag=()
  [ "$role" = admin ] && flag=(--admin)
  token=$("$BIN" token --server "$sock" create nobody "${flag[@]}" 2>/dev/null)
  [ -n "$token" ] || { echo "could not make a $role token" >&2; return 1; }

  local seed_args=()
  [ "$SEED" = random ] || seed_args=(--seed "$SEED")
  # A revoked token ends the rest of a run in 401s, so `revoke` is tested last, alone.
  # `POST /api/jobs/{id}/steps` is an HTTP/1.1 upgrade to a stream (`gpusched run`),
  # which schemathesis cannot make: the live steps tests cover it.
  # The request timeout is above the server's longest long poll (--max-wait above): a
  # shorter one would read a held request as a network error.
  local common=(
    "$url/api/openapi.json"
    --checks all
    --phases examples,coverage,fuzzing
    --max-examples "$EXAMPLES"
    --generation-database none
    --request-timeout 60
    --workers 2
    --header "Authorization: Bearer $token"
    --report junit --report-dir "$dir/report"
    --no-color
    "${seed_args[@]}"
    ${CONTRACT_ST_ARGS:-}
  )
  echo "== schemathesis ($role token, $url)"
  local rc=0
  # st keeps a cache in its working directory: the scratch one, not the clone.
  (cd "$dir" && "$ST" run "${common[@]}" --max-time "$MAX_TIME" --exclude-path-regex '/(revoke|drain|purge|steps)$') || rc=$?
  # A drained node starts nothing, so a `wait` on a job fuzzed afterwards would hang:
  # drain and resume are tested alone, then the node is resumed for what follows. A purge
  # deletes ended jobs that the stateful links may still want to read: alone too.
  (cd "$dir" && "$ST" run "${common[@]}" --max-time 10 --include-path-regex '/(drain|resume|purge)$') || rc=$?
  "$BIN" resume n1 --server "$sock" >/dev/null || rc=1
  (cd "$dir" && "$ST" run "${common[@]}" --max-time 10 --include-path-regex '/revoke$') || rc=$?
  # Stateful: sequences that follow the document's links (a submission's job id to get,
  # cancel, wait, logs, checkpoint). A run with no scenario tested nothing: a failure.
  local stateful=(
    "$url/api/openapi.json" --checks all --phases stateful --max-time "$STATEFUL_TIME"
    --generation-database none --request-timeout 60 --workers 1
    --header "Authorization: Bearer $token" --no-color "${seed_args[@]}"
    --exclude-path-regex '/(revoke|drain|purge|steps)$' ${CONTRACT_ST_ARGS:-}
  )
  (cd "$dir" && "$ST" run "${stateful[@]}") 2>&1 | tee "$dir/stateful.log" || rc=1
  local scenarios
  scenarios=$(sed -n 's/^ *Scenarios: *\([0-9][0-9]*\).*/\1/p' "$dir/stateful.log" | tail -n1)
  if [ "${scenarios:-0}" -eq 0 ]; then
    echo "the stateful phase ran no scenario: the document's links lead nowhere" >&2
    rc=1
  fi
  stop_all
  if [ "$rc" != 0 ]; then
    echo "schemathesis found problems with the $role token (server log: $dir/server.log; set CONTRACT_KEEP=1 to keep it)" >&2
    tail -n 20 "$dir/server.log" >&2 || true
  fi
  return "$rc"
}

status=0
for role in ${CONTRACT_ROLES:-user admin}; do
  run_one "$role" "$role" || status=1
done
if [ "$status" = 0 ]; then
  echo "contract: no findings"
fi
exit "$status"
