#!/usr/bin/env bash
# The web dashboard in a real browser: a live `gpusched up` (2 fake GPUs, its own
# temporary data directory, a free loopback port), an admin token and two user tokens
# made over its Unix socket, then headless Chromium (Debian's /usr/bin/chromium, driven
# by playwright-core, pinned in tests/browser/package-lock.json; no browser download)
# walks every page: sign-in, overview, queue, job page with its log, cancel, another
# user's refusal, drain and resume, usage chart, a service (created through the API)
# and its replica's job page, sign-out. Screenshots of every page go to SCREENSHOT_DIR
# (default: a new temp dir), printed at the end.
#
# Usage: scripts/browser_test.sh [PATH/TO/gpusched]
#   default binary: $CARGO_TARGET_DIR/debug/gpusched (cargo build -p gpusched)
# Environment:
#   BROWSER_DEPS    where `npm ci` installed tests/browser (default
#                   ~/.cache/gpusched-browser-deps); `--install-only` fills it
#   CHROMIUM        the browser (default /usr/bin/chromium)
#   SCREENSHOT_DIR  where the screenshots go
#   BROWSER_KEEP    set to keep the scratch directory (server log)
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DEPS="${BROWSER_DEPS:-${HOME:-/tmp}/.cache/gpusched-browser-deps}"
export BROWSER_DEPS="$DEPS"

# npm ci into a directory outside the clone (CI caches it), from the pinned lock file.
install() {
  if [ -f "$DEPS/node_modules/playwright-core/package.json" ] &&
    cmp -s "$ROOT/tests/browser/package-lock.json" "$DEPS/package-lock.json"; then
    return 0
  fi
  command -v npm >/dev/null || { echo "npm is required: scripts/install_test_deps.sh (apt-get install nodejs npm)" >&2; return 1; }
  mkdir -p "$DEPS"
  cp "$ROOT/tests/browser/package.json" "$ROOT/tests/browser/package-lock.json" "$DEPS/"
  (cd "$DEPS" && npm ci --no-audit --no-fund --ignore-scripts)
}

if [ "${1:-}" = "--install-only" ]; then
  install
  exit 0
fi

BIN="${1:-${CARGO_TARGET_DIR:-$ROOT/target}/debug/gpusched}"
[ -x "$BIN" ] || { echo "$BIN not found: build it first (cargo build -p gpusched) or pass its path" >&2; exit 1; }
BIN="$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")"
CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"
[ -x "$CHROMIUM" ] || { echo "$CHROMIUM not found: scripts/install_test_deps.sh (apt-get install chromium), or set CHROMIUM" >&2; exit 1; }
export CHROMIUM
install

SCRATCH="$(mktemp -d "${TMPDIR:-/tmp}/gpusched-browser.XXXXXX")"
chmod 755 "$SCRATCH" # the test job runs as its owner (nobody under root): its cwd is here
SHOTS="${SCREENSHOT_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/gpusched-screenshots.XXXXXX")}"
mkdir -p "$SHOTS"
UP_PID=""

cleanup() {
  if [ -n "$UP_PID" ]; then stop_up; fi
  if [ -n "${BROWSER_KEEP:-}" ]; then
    echo "kept $SCRATCH"
  else
    rm -rf "$SCRATCH"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

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

# Two queues with quotas, so the queues page has something to show.
cat >"$SCRATCH/queues.toml" <<'TOML'
[queues.default]
quota = 1

[queues.research]
quota = 1
max = 2
weight = 2
TOML
# start_up [ARGS...]: `gpusched up` on the scratch data directory; sets UP_PID and URL.
# Port 0: the kernel picks a free one and `up` prints its URL first.
start_up() {
  : >"$SCRATCH/up.out"
  GPUSCHED_LOG=warn "$BIN" up --listen 127.0.0.1:0 --data-dir "$SCRATCH/data" --gpus 2 \
    --gpu-backend fake --name n1 --grace 1s --queues "$SCRATCH/queues.toml" \
    --telemetry-interval 1s "$@" >"$SCRATCH/up.out" 2>>"$SCRATCH/up.err" &
  UP_PID=$!
  wait_for 60 "gpusched up to print its address" grep -q '^gpusched is up: server http' "$SCRATCH/up.out" || {
    cat "$SCRATCH/up.err" >&2
    exit 1
  }
  URL=$(sed -n 's/^gpusched is up: server \(http[^,]*\),.*/\1/p' "$SCRATCH/up.out" | head -n1)
  wait_for 60 "node n1 to be online" sh -c "'$BIN' nodes --server '$SOCK' | grep -q 'n1.*online'"
}
stop_up() {
  kill -TERM "$UP_PID" 2>/dev/null || true
  for _ in $(seq 1 300); do kill -0 "$UP_PID" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$UP_PID" 2>/dev/null || true
  wait "$UP_PID" 2>/dev/null || true
  UP_PID=""
}
cd "$SCRATCH"
SOCK="unix:$SCRATCH/data/gpusched.sock"
start_up

# User A owns the job, so it must be a Unix user the agent can run it as: `nobody`
# under root (jobs run as their submitter), else this user. B and the admin never
# run anything.
if [ "$(id -u)" = 0 ]; then USER_A=nobody; else USER_A=$(id -un); fi
token() { "$BIN" token --server "$SOCK" create "$@"; }
TOKEN_A=$(token "$USER_A")
TOKEN_B=$(token bob-viewer)
TOKEN_ADMIN=$(token ops-admin --admin)

# The job under test (its name is markup, which must show as text), a second running
# job in the other queue, and one waiting for both GPUs (a pending reason, an estimate).
submit() {
  "$BIN" submit --server "$URL" --token "$TOKEN_A" "$@" | sed -n 's/^Submitted job \([0-9]*\).*/\1/p'
}
JOB=$(submit -J 'web <b>test</b>' -t 30m -- sh -c 'echo "hello from the browser test"; echo "a line on stderr" >&2; sleep 600')
[ -n "$JOB" ] || { echo "could not submit the test job" >&2; exit 1; }
wait_for 30 "job $JOB to start" sh -c "'$BIN' show $JOB --server '$SOCK' | grep -q running"
[ -n "$(submit -J train-resnet -q research -t 1h -- sleep 600)" ] || exit 1
[ -n "$(submit -J needs-both-gpus -G 2 -t 2h -- sleep 600)" ] || exit 1

# The fake GPUs' fault file (docs/telemetry.md): the test makes GPU 1 throw an Xid.
export FAULT_FILE="$SCRATCH/data/agent/fake-faults.toml"
export GPUSCHED_BIN="$BIN" GPUSCHED_URL="$URL" GPUSCHED_SOCK="$SOCK" JOB_ID="$JOB" \
  TOKEN_A TOKEN_B TOKEN_ADMIN USER_A SCREENSHOT_DIR="$SHOTS"
rc=0
timeout 120 node "$ROOT/tests/browser/dashboard.mjs" || rc=$?

# The same cluster again under --private-jobs (SIGTERM requeues the running jobs, which
# start again): user B's pages show none of A's jobs, A's still do.
if [ "$rc" = 0 ]; then
  echo "- again with --private-jobs"
  stop_up
  rm -f "$FAULT_FILE"
  start_up --private-jobs
  export GPUSCHED_URL="$URL"
  wait_for 30 "A's job to run again" sh -c "'$BIN' queue --server '$SOCK' | grep -q running"
  timeout 60 node "$ROOT/tests/browser/private.mjs" || rc=$?
fi
echo "screenshots: $SHOTS"
ls "$SHOTS"
if [ "$rc" != 0 ]; then
  echo "the dashboard test failed (exit $rc); gpusched up's log:" >&2
  tail -n 30 "$SCRATCH/up.err" >&2 || true
fi
exit "$rc"
