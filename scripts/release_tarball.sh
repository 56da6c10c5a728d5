#!/usr/bin/env bash
# A release tarball people can install from: the release binary (the release profile of
# the root Cargo.toml: line tables only, so backtraces keep file:line and the binary stays
# small), the systemd units (deploy/systemd), the Grafana dashboard (deploy/grafana), the
# Kubernetes manifests (deploy/kubernetes, deploy/helm), and a SHA-256 checksum beside it.
# The archive is reproducible for one binary: sorted names, fixed owner and mtime (the
# last commit's time), gzip without a timestamp.
#
# Usage: scripts/release_tarball.sh [--binary PATH] [--out DIR]
#   default: cargo build --release --locked (the gpusched package) into $CARGO_TARGET_DIR
#   (default target/), then dist/gpusched-VERSION-ARCH-linux.tar.gz and its .sha256
#   --binary PATH: package this binary instead of building one
# Install from it:
#   sha256sum -c gpusched-*.tar.gz.sha256 && tar xzf gpusched-*.tar.gz
#   sudo install -m 0755 gpusched-*/bin/gpusched /usr/local/bin/
#   sudo cp gpusched-*/systemd/*.service /etc/systemd/system/   # then docs/failover.md
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
BIN="" OUT="$ROOT/dist"
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) BIN="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown argument $1 (try --help)" >&2; exit 2 ;;
  esac
done

VERSION=$(sed -n '/^\[workspace.package\]/,/^\[/ s/^version = "\(.*\)"/\1/p' Cargo.toml)
[ -n "$VERSION" ] || { echo "no [workspace.package] version in Cargo.toml" >&2; exit 1; }
ARCH=$(uname -m)
if [ -z "$BIN" ]; then
  T="${CARGO_TARGET_DIR:-$ROOT/target}"
  started=$(date +%s)
  cargo build --release --locked --manifest-path crates/cli/Cargo.toml
  echo "release build: $(( $(date +%s) - started )) s"
  BIN="$T/release/gpusched"
fi
[ -x "$BIN" ] || { echo "$BIN is not an executable gpusched" >&2; exit 1; }
got=$("$BIN" --version)
[ "$got" = "gpusched $VERSION" ] || { echo "$BIN says '$got', not gpusched $VERSION" >&2; exit 1; }

NAME="gpusched-$VERSION-$ARCH-linux"
STAGE="$(mktemp -d "${TMPDIR:-/tmp}/gpusched-release.XXXXXX")"
trap 'rm -rf "$STAGE"' EXIT
D="$STAGE/$NAME"
mkdir -p "$D/bin" "$D/systemd" "$D/grafana" "$D/kubernetes" "$D/helm" "$D/doc"
install -m 0755 "$BIN" "$D/bin/gpusched"
install -m 0644 deploy/systemd/*.service "$D/systemd/"
install -m 0644 deploy/grafana/gpusched.json "$D/grafana/"
install -m 0644 deploy/kubernetes/gpusched.yaml "$D/kubernetes/"
cp -r deploy/helm/gpusched "$D/helm/"
install -m 0644 README.md "$D/"
install -m 0644 docs/failover.md docs/postgres.md docs/metrics.md docs/kubernetes.md docs/install.md "$D/doc/"
cat >"$D/INSTALL" <<TXT
gpusched $VERSION ($ARCH, Linux, glibc $(ldd --version 2>/dev/null | sed -n '1s/.* //p') or newer)

  sudo install -m 0755 bin/gpusched /usr/local/bin/
  gpusched up                      # one box: server + agent (doc/install.md)

A cluster: systemd/ (doc/failover.md for several servers on PostgreSQL), grafana/ for the
dashboard, kubernetes/ and helm/ for Kubernetes (doc/kubernetes.md: not run on a real
cluster yet).
TXT

mkdir -p "$OUT"
EPOCH=$(git log -1 --format=%ct 2>/dev/null || echo 0)
tar --sort=name --mtime="@$EPOCH" --owner=0 --group=0 --numeric-owner --mode='u+rwX,go+rX,go-w' \
  -C "$STAGE" -cf - "$NAME" | gzip -n -9 >"$OUT/$NAME.tar.gz"
(cd "$OUT" && sha256sum "$NAME.tar.gz" >"$NAME.tar.gz.sha256")

# The archive as a user gets it: the checksum, every file, and a binary that runs.
CHECK="$STAGE/check"
mkdir -p "$CHECK"
(cd "$OUT" && sha256sum -c --quiet "$NAME.tar.gz.sha256")
tar -C "$CHECK" -xzf "$OUT/$NAME.tar.gz"
for f in bin/gpusched systemd/gpusched-server.service systemd/gpusched-agent.service \
  grafana/gpusched.json kubernetes/gpusched.yaml helm/gpusched/Chart.yaml INSTALL; do
  [ -s "$CHECK/$NAME/$f" ] || { echo "the archive lacks $f" >&2; exit 1; }
done
cmp -s "$BIN" "$CHECK/$NAME/bin/gpusched" || { echo "the archive's binary differs from $BIN" >&2; exit 1; }
[ "$("$CHECK/$NAME/bin/gpusched" --version)" = "gpusched $VERSION" ] ||
  { echo "the archive's binary does not run" >&2; exit 1; }
echo "$OUT/$NAME.tar.gz: $(du -h "$OUT/$NAME.tar.gz" | cut -f1) (binary $(du -h "$BIN" | cut -f1)); sha256 in $NAME.tar.gz.sha256"
