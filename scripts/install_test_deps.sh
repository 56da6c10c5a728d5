#!/usr/bin/env bash
# Installs the outside programs the end-to-end tests run, so the README's test command
# (`cargo test --workspace --locked`) runs every test; .ci/run calls it too. Without them
# those tests skip with one `SKIPPED` line naming this script (and fail under CI=true):
#   prometheus     the live /metrics test runs /usr/bin/prometheus itself (its own config,
#                  a temporary TSDB, a free port; no service is started)
#   postgresql-15  the store's tests on PostgreSQL: gpusched_store::testing::TempPostgres
#                  runs initdb/pg_ctl itself in a temporary directory (no service started)
#   nodejs         the dashboard's JavaScript unit test (`node`)
#   openssl        the TLS tests make their certificates with it
#   python3        the gang rendezvous test's job is a Python script
#   python3-venv   the script-run tests make their venvs (scripts/serving_test.sh and others)
#   podman, runc,  the image-job test runs containers with rootful podman (catatonit: its
#   catatonit,     --init; runc: crun
#   busybox-static refuses hosts with controllers on both cgroup hierarchies) in an image
#                  it builds from /bin/busybox (no registry is reached)
#   chromium, npm  the dashboard's browser test (scripts/browser_test.sh, not cargo test)
# (podman, runc and busybox-static also serve scripts/container_image_test.sh.)
# Only what is missing is installed, in one apt-get (Debian or Ubuntu; as root, or through
# sudo). Nothing else is changed.
#
# Usage: scripts/install_test_deps.sh [--all] [--dry-run]
#   --all      also the pinned tools of the script-run tests, each into a cache outside the
#              clone: schemathesis (scripts/contract_test.sh), openapi-python-client
#              (scripts/openapi_client_check.sh), playwright-core (scripts/browser_test.sh),
#              numpy, tritonclient[http] and openai (scripts/serving_test.sh), submitit,
#              pytest, kubernetes-validate and helm-python-sdk (scripts/python_test.sh,
#              scripts/k8s_manifests.sh)
#   --dry-run  print the Debian packages that are missing and install nothing
set -euo pipefail
cd "$(dirname "$0")/.."

all="" dry=""
for arg in "$@"; do
  case "$arg" in
    --all) all=1 ;;
    --dry-run) dry=1 ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown argument $arg (try --help)" >&2; exit 2 ;;
  esac
done

# What is missing, as Debian packages; the checks match what the tests look for.
pkgs=()
[ -x "${GPUSCHED_PROMETHEUS:-/usr/bin/prometheus}" ] || pkgs+=(prometheus)
compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || command -v initdb >/dev/null ||
  pkgs+=(postgresql-15)
command -v node >/dev/null || pkgs+=(nodejs)
command -v npm >/dev/null || pkgs+=(npm)
command -v openssl >/dev/null || pkgs+=(openssl)
command -v python3 >/dev/null || pkgs+=(python3)
command -v python3 >/dev/null && ! python3 -c 'import ensurepip, venv' >/dev/null 2>&1 && pkgs+=(python3-venv)
command -v podman >/dev/null || pkgs+=(podman)
# podman --init needs catatonit, a recommendation --no-install-recommends leaves out.
[ -x /usr/libexec/podman/catatonit ] || command -v catatonit >/dev/null || pkgs+=(catatonit)
command -v runc >/dev/null || pkgs+=(runc)
[ -x /bin/busybox ] || pkgs+=(busybox-static)
[ -x "${CHROMIUM:-/usr/bin/chromium}" ] || pkgs+=(chromium)

if [ -n "$dry" ]; then
  echo "${pkgs[*]:-nothing is missing}"
  exit 0
fi

if [ "${#pkgs[@]}" -gt 0 ]; then
  echo "installing ${pkgs[*]}"
  if ! command -v apt-get >/dev/null; then
    echo "no apt-get here: install ${pkgs[*]} (or your system's packages of the same" \
      "programs) yourself; the tests that need them skip until then" >&2
    exit 1
  fi
  sudo=()
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || { echo "run this as root (or install sudo): apt-get installs ${pkgs[*]}" >&2; exit 1; }
    sudo=(sudo)
  fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq
  # Releases after Debian 12 carry a newer PostgreSQL than 15: take theirs.
  for i in "${!pkgs[@]}"; do
    if [ "${pkgs[$i]}" = postgresql-15 ] && ! apt-cache show postgresql-15 >/dev/null 2>&1; then
      pkgs[$i]=postgresql
    fi
  done
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${pkgs[@]}"
fi

if [ -n "$all" ]; then
  scripts/contract_test.sh --install-only
  scripts/openapi_client_check.sh --install-only
  scripts/browser_test.sh --install-only
  scripts/serving_test.sh --install-only
  scripts/python_test.sh --install-only
fi
echo "the test dependencies are installed"
