#!/usr/bin/env bash
# The Python package (python/, issue 38) end to end: builds its wheel, installs it into
# a venv with the pinned test dependencies (python/tests/requirements.txt: the real
# submitit from PyPI, pytest), and runs python/tests against a live `gpusched up` with
# fake GPUs on loopback: the client's calls and discovery, failover between servers, and
# submitit running a function, an array, an exception and a preempted-then-resumed
# checkpointable function. Where a Python 3.9 is found (the package's floor), the wheel
# is also installed there and every module of it imported. The tests stop every process
# they start; any failure exits non-zero.
#
# Usage: scripts/python_test.sh [PATH/TO/gpusched]
#   default binary: $CARGO_TARGET_DIR/debug/gpusched (cargo build -p gpusched)
# Environment:
#   PYTHON_TEST_VENV  the venv (default ~/.cache/gpusched-python-venv)
#   PYTHON39          a Python 3.9 to check the wheel with (default: python3.9 or pyenv's)
# The install alone: scripts/python_test.sh --install-only (.ci/run starts it early).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VENV="${PYTHON_TEST_VENV:-${HOME:-/tmp}/.cache/gpusched-python-venv}"
REQS="$ROOT/python/tests/requirements.txt"

install() {
  if [ -x "$VENV/bin/python" ] && cmp -s "$REQS" "$VENV/requirements.txt"; then
    return 0
  fi
  command -v python3 >/dev/null || { echo "python3 is required: scripts/install_test_deps.sh" >&2; return 1; }
  python3 -c 'import sys; sys.exit(sys.version_info < (3, 9))' ||
    { echo "the Python package's tests need Python 3.9 or later" >&2; return 1; }
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

SCRATCH="$(mktemp -d "${TMPDIR:-/tmp}/gpusched-python-test.XXXXXX")"
trap 'rm -rf "$SCRATCH"' EXIT

echo "== the wheel (pip wheel python/), installed into $VENV"
# A copy: building in place would leave build/ and *.egg-info in the clone.
cp -r "$ROOT/python" "$SCRATCH/src"
rm -rf "$SCRATCH/src/tests"
"$VENV/bin/pip" wheel --quiet --disable-pip-version-check --no-deps --no-build-isolation \
  -w "$SCRATCH/wheel" "$SCRATCH/src"
wheel=$(ls "$SCRATCH"/wheel/gpusched-*.whl)
"$VENV/bin/pip" install --quiet --disable-pip-version-check --no-deps --force-reinstall "$wheel"
echo "built $(basename "$wheel") ($(du -k "$wheel" | cut -f1) KiB)"

py39="${PYTHON39:-}"
if [ -z "$py39" ]; then
  for p in python3.9 "$(pyenv root 2>/dev/null)"/versions/3.9*/bin/python3; do
    if "$p" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 9))' >/dev/null 2>&1; then
      py39="$p"
      break
    fi
  done
fi
if [ -n "$py39" ]; then
  echo "== the wheel on Python 3.9 ($py39): every module imports"
  "$py39" -m venv "$SCRATCH/venv39"
  "$SCRATCH/venv39/bin/pip" install --quiet --disable-pip-version-check "$wheel" \
    "$(grep '^httpx==' "$REQS")" "$(grep '^attrs==' "$REQS")" "$(grep '^typing_extensions==' "$REQS")" \
    "$(grep '^submitit==' "$REQS")" "python-dateutil"
  "$SCRATCH/venv39/bin/python" - <<'PY'
import importlib, pkgutil
import gpusched
n = 0
for m in pkgutil.walk_packages(gpusched.__path__, "gpusched."):
    if m.name != "gpusched._submitit_run":
        importlib.import_module(m.name)
        n += 1
c = gpusched.job_submit(["python", "train.py"], gpus=2, walltime="2h")
assert c.to_dict()["walltime_s"] == 7200
print(f"Python 3.9: {n} modules of gpusched imported")
PY
else
  echo "note: no Python 3.9 here (set PYTHON39): the wheel was not checked on the package's oldest Python"
fi

echo "== pytest python/tests against $BIN"
cd "$ROOT/python"
GPUSCHED_BIN="$BIN" timeout 600 "$VENV/bin/python" -m pytest -q -p no:cacheprovider \
  --basetemp "$SCRATCH/pytest" tests
