#!/usr/bin/env bash
# Inference services end to end (issue 34): first the test doubles against the real
# clients alone (tests/serving/check_direct.py: the toy Open Inference Protocol model
# server with tritonclient, the OpenAI stand-in with the openai package), then
# tests/serving/e2e.py: a live `gpusched up` (node n1) and a second agent (n2), 2 fake
# GPUs each, and `gpusched gateway` with a token of role `gateway`; services of those
# doubles called through the gateway with tritonclient and openai: dynamic batching,
# readiness and liveness probes, a replica killed under load, a rolling update and a
# node drain under load (no request may fail), autoscaling that preempts a checkpointing
# training job (which resumes from its checkpoint), scale to zero and the cold start.
# Every process it starts is stopped at the end; any failure exits non-zero.
#
# Usage: scripts/serving_test.sh [PATH/TO/gpusched]
#   default binary: $CARGO_TARGET_DIR/debug/gpusched (cargo build -p gpusched)
# Environment:
#   SERVING_VENV        the venv of tests/serving/requirements.txt (numpy, tritonclient,
#                       openai; pinned), default ~/.cache/gpusched-serving-venv
#   SERVING_ONLY        comma-separated scenarios of e2e.py (default all)
#   SERVING_KEEP        set to keep the scratch directory (logs) even when all pass
#   SERVING_TIME_SCALE  multiply every wait (default 1)
#   SERVING_GATEWAY_AUTH  `token` (default: a gateway-role token) or `socket` (the
#                       gateway on the server's Unix socket, as root)
# The install alone: scripts/serving_test.sh --install-only (.ci/run starts it early).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VENV="${SERVING_VENV:-${HOME:-/tmp}/.cache/gpusched-serving-venv}"
REQS="$ROOT/tests/serving/requirements.txt"

install() {
  # Reinstalled when the pinned requirements change (their copy in the venv differs).
  if [ -x "$VENV/bin/python" ] && cmp -s "$REQS" "$VENV/requirements.txt"; then
    return 0
  fi
  command -v python3 >/dev/null || { echo "python3 is required: scripts/install_test_deps.sh" >&2; return 1; }
  python3 -c 'import sys; sys.exit(sys.version_info < (3, 9))' ||
    { echo "the serving test needs Python 3.9 or later" >&2; return 1; }
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check -r "$REQS"
  cp "$REQS" "$VENV/requirements.txt"
}

if [ "${1:-}" = "--install-only" ]; then
  install
  exit 0
fi

BIN="${1:-${CARGO_TARGET_DIR:-$ROOT/target}/debug/gpusched}"
[ -x "$BIN" ] || { echo "$BIN not found: build it first (cargo build -p gpusched) or pass its path" >&2; exit 1; }
BIN="$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")"
install

echo "== the test doubles with the real clients (no gpusched)"
"$VENV/bin/python" "$ROOT/tests/serving/check_direct.py"
echo "== services through the gateway ($BIN)"
args=()
[ -n "${SERVING_ONLY:-}" ] && args+=(--only "$SERVING_ONLY")
[ -n "${SERVING_KEEP:-}" ] && args+=(--keep)
# e2e.py stops everything it started itself (on failure, Ctrl-C or SIGTERM too).
exec "$VENV/bin/python" "$ROOT/tests/serving/e2e.py" "$BIN" ${args[@]+"${args[@]}"}
