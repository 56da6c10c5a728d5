#!/usr/bin/env bash
# The Kubernetes manifests checked offline (scripts/k8s_manifests.py says what): the Helm
# chart linted and rendered by Helm's engine, every object validated against the
# Kubernetes schemas, deploy/kubernetes/gpusched.yaml equal to the chart's rendering.
# Uses the Python test venv (scripts/python_test.sh --install-only installs it).
#
# Usage: scripts/k8s_manifests.sh [--write] [PATH/TO/gpusched]
#   --write: regenerate deploy/kubernetes/gpusched.yaml from the chart
#   with a binary: also the flags the manifests use and the queue file, on a live server
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VENV="${PYTHON_TEST_VENV:-${HOME:-/tmp}/.cache/gpusched-python-venv}"
PYTHON_TEST_VENV="$VENV" "$ROOT/scripts/python_test.sh" --install-only
exec "$VENV/bin/python" "$ROOT/scripts/k8s_manifests.py" "$@"
