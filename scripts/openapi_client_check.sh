#!/usr/bin/env bash
# The OpenAPI document must make a usable client: openapi-python-client (pinned below)
# generates a Python client from a live server's /api/openapi.json, and any warning it
# gives fails the run (repeated operationIds, Rust module paths as tags, a body it
# cannot type). The generated client is then imported and used against that server
# (health, whoami, the job list, a job's logs typed as bytes), so a document that
# generates cleanly but describes the wrong thing fails too.
#
# Usage: scripts/openapi_client_check.sh [PATH/TO/gpusched]
#   default binary: $CARGO_TARGET_DIR/debug/gpusched (build it with `cargo build -p gpusched-cli`)
# Environment:
#   OPENAPI_CLIENT_VENV  where openapi-python-client is installed
#                        (default ~/.cache/gpusched-openapi-client-venv)
#   OPENAPI_CLIENT_KEEP  set to keep the scratch directory (document, client, server log)
# The install alone: scripts/openapi_client_check.sh --install-only (.ci/run starts it early).
set -euo pipefail

GENERATOR_VERSION="0.29.1"
# The generator formats what it writes with ruff, which it does not pin: pinned here, so
# the committed Python client (python/src/gpusched/openapi, scripts/python_client_generate.sh)
# is byte for byte what CI generates.
RUFF_VERSION="0.17.6"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VENV="${OPENAPI_CLIENT_VENV:-${HOME:-/tmp}/.cache/gpusched-openapi-client-venv}"

# openapi-python-client 0.29 needs Python 3.9 or later.
find_python() {
  local py
  for py in ${OPENAPI_CLIENT_PYTHON:-} python3 python3.12 python3.13 \
    "$(pyenv root 2>/dev/null)"/versions/3.1[0-9]*/bin/python3; do
    if "$py" -c 'import sys; sys.exit(sys.version_info < (3, 9))' >/dev/null 2>&1; then
      echo "$py"
      return 0
    fi
  done
  echo "openapi-python-client needs Python 3.9 or later (set OPENAPI_CLIENT_PYTHON)" >&2
  return 1
}

install() {
  if [ -x "$VENV/bin/openapi-python-client" ] && "$VENV/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('openapi-python-client') != '$GENERATOR_VERSION' or m.version('ruff') != '$RUFF_VERSION')" 2>/dev/null; then
    return 0
  fi
  local py
  py=$(find_python)
  rm -rf "$VENV"
  "$py" -m venv "$VENV"
  # The generated client needs httpx and attrs (the generator's own dependencies) and
  # python-dateutil for date-time fields.
  "$VENV/bin/pip" install --quiet --disable-pip-version-check \
    "openapi-python-client==$GENERATOR_VERSION" "ruff==$RUFF_VERSION" python-dateutil
}

if [ "${1:-}" = "--install-only" ]; then
  install
  exit 0
fi

BIN="${1:-${CARGO_TARGET_DIR:-$ROOT/target}/debug/gpusched}"
[ -x "$BIN" ] || { echo "$BIN not found: build it first (cargo build -p gpusched-cli) or pass its path" >&2; exit 1; }
install

SCRATCH="$(mktemp -d "${TMPDIR:-/tmp}/gpusched-openapi-client.XXXXXX")"
SERVER_PID=""
cleanup() {
  if [ -n "$SERVER_PID" ]; then
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  if [ -n "${OPENAPI_CLIENT_KEEP:-}" ]; then
    echo "kept $SCRATCH"
  else
    rm -rf "$SCRATCH"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
url="http://127.0.0.1:$port"
"$BIN" server --data-dir "$SCRATCH/data" --listen "127.0.0.1:$port" >"$SCRATCH/server.log" 2>&1 &
SERVER_PID=$!
sock="unix:$SCRATCH/data/gpusched.sock"
for _ in $(seq 1 300); do
  "$BIN" whoami --server "$sock" >/dev/null 2>&1 && break
  kill -0 "$SERVER_PID" 2>/dev/null || { cat "$SCRATCH/server.log" >&2; echo "the server exited" >&2; exit 1; }
  sleep 0.2
done
token=$("$BIN" token --server "$sock" create "$(id -un)" 2>/dev/null)
[ -n "$token" ] || { echo "could not make a token on the test server" >&2; exit 1; }
"$VENV/bin/python" - "$url/api/openapi.json" "$SCRATCH/openapi.json" <<'EOF'
import sys, urllib.request
with urllib.request.urlopen(sys.argv[1], timeout=30) as r, open(sys.argv[2], "wb") as f:
    f.write(r.read())
EOF

echo "== the document's operations: unique operationIds, tags that name resources"
# What OpenAPI requires and generators do not all check: two operations with one
# operationId under different tags generate without a warning, yet break other
# generators and the document's links.
"$VENV/bin/python" - "$SCRATCH/openapi.json" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
seen, problems = {}, []
declared = {t["name"] for t in doc.get("tags", [])}
for path, item in doc["paths"].items():
    for method, op in item.items():
        where = f"{method.upper()} {path}"
        oid = op.get("operationId")
        if not oid:
            problems.append(f"{where} has no operationId")
        elif oid in seen:
            problems.append(f"operationId {oid} is both {seen[oid]} and {where}")
        else:
            seen[oid] = where
        for tag in op.get("tags", []):
            if "::" in tag or "super" in tag or tag not in declared:
                problems.append(f"{where}: tag {tag!r} is not a declared resource")
if problems:
    sys.exit("the OpenAPI document breaks its contract:\n  " + "\n  ".join(problems))
print(f"{len(seen)} operations, each named once; tags: {', '.join(sorted(declared))}")
EOF

echo "== openapi-python-client $GENERATOR_VERSION generate (warnings fail)"
rc=0
# The generator formats what it writes with ruff (its dependency, in the venv's bin).
(cd "$SCRATCH" && PATH="$VENV/bin:$PATH" "$VENV/bin/openapi-python-client" generate --path openapi.json \
  --output-path gpusched_client --meta none --fail-on-warning) >"$SCRATCH/generate.log" 2>&1 || rc=$?
cat "$SCRATCH/generate.log"
# --fail-on-warning is the rule; the log is read too, so a warning printed without the
# exit status (a change of the pinned tool's behaviour) still fails.
if [ "$rc" != 0 ] || grep -qi 'warning' "$SCRATCH/generate.log"; then
  echo "openapi-python-client warned about /api/openapi.json (see above): fix the document \
(crates/server/src/http/openapi.rs and the handlers' #[utoipa::path] attributes)" >&2
  exit 1
fi

echo "== the generated client against the server"
(cd "$SCRATCH" && "$VENV/bin/python" - "$url" "$token") <<'EOF'
import sys
from http import HTTPStatus

from gpusched_client import AuthenticatedClient, Client
from gpusched_client.api.jobs import get_job_logs, list_jobs
from gpusched_client.api.server import health
from gpusched_client.api.tokens import whoami
import gpusched_client.api as api
import pkgutil

url, token = sys.argv[1], sys.argv[2]
modules = sorted(m.name for m in pkgutil.iter_modules(api.__path__))
want = ["accounts", "agent", "arrays", "history", "jobs", "nodes", "queues", "reservations", "server", "services", "tokens", "usage", "workflows"]
assert modules == want, f"the client's API modules are {modules}, not the resources {want}"

h = health.sync(client=Client(base_url=url))
assert h is not None and h.role == "leader", f"health: {h!r}"
c = AuthenticatedClient(base_url=url, token=token)
me = whoami.sync(client=c)
assert me is not None and me.user, f"whoami: {me!r}"
jobs = list_jobs.sync(client=c)
assert jobs is not None and jobs.jobs == [], f"list_jobs: {jobs!r}"
from gpusched_client.api.services import list_services
services = list_services.sync(client=c)
assert services is not None and services.services == [], f"list_services: {services!r}"
from gpusched_client.api.reservations import list_reservations
reservations = list_reservations.sync(client=c)
assert reservations is not None and reservations.reservations == [], f"list_reservations: {reservations!r}"
from gpusched_client.api.accounts import list_accounts
accounts = list_accounts.sync(client=c)
assert accounts is not None and accounts.accounts[0].name == "root", f"list_accounts: {accounts!r}"
# A job that never existed: the client must still parse the typed error answer.
r = get_job_logs.sync_detailed(id=1, client=c)
assert r.status_code == HTTPStatus.NOT_FOUND, r
# The logs answer is typed as bytes, not a list of numbers.
import inspect
ann = inspect.signature(get_job_logs._parse_response).return_annotation
assert "list[int]" not in str(ann) and "File" in str(ann), f"logs are typed as {ann}"
print(f"client OK: modules {', '.join(modules)}; whoami {me.user}")
EOF
echo "openapi client: generated with no warning and used against the server"
