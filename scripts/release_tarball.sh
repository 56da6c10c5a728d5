#!/usr/bin/env bash
# A release tarball people can install from: the release binary with its debug information
# split off (objcopy: the binary carries a .gnu_debuglink to gpusched.debug, which gdb,
# perf and addr2line find beside it or under /usr/lib/debug), the systemd units
# (deploy/systemd), the Grafana dashboard (deploy/grafana), the Kubernetes manifests
# (deploy/kubernetes, deploy/helm), and a SHA-256 checksum beside it; the debug
# information (the release profile's line tables) goes into a second archive, -debug.
# The archive is reproducible for one binary: sorted names, fixed owner and mtime (the
# last commit's time), gzip without a timestamp.
#
# Usage: scripts/release_tarball.sh [--binary PATH] [--out DIR]
#   default: cargo build --release --locked (the gpusched package) into $CARGO_TARGET_DIR
#   (default target/), then dist/gpusched-VERSION-ARCH-linux.tar.gz,
#   dist/gpusched-VERSION-ARCH-linux-debug.tar.gz and their .sha256
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

command -v objcopy >/dev/null || { echo "objcopy is required (binutils)" >&2; exit 1; }
NAME="gpusched-$VERSION-$ARCH-linux"
STAGE="$(mktemp -d "${TMPDIR:-/tmp}/gpusched-release.XXXXXX")"
trap 'rm -rf "$STAGE"' EXIT
D="$STAGE/$NAME"
DD="$STAGE/$NAME-debug"
mkdir -p "$D/bin" "$D/systemd" "$D/grafana" "$D/kubernetes" "$D/helm" "$D/doc" "$DD/bin"
# The debug information, split: the shipped binary is the code alone.
objcopy --only-keep-debug "$BIN" "$DD/bin/gpusched.debug"
chmod 0644 "$DD/bin/gpusched.debug"
objcopy --strip-debug --add-gnu-debuglink="$DD/bin/gpusched.debug" "$BIN" "$STAGE/gpusched"
install -m 0755 "$STAGE/gpusched" "$D/bin/gpusched"
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

Debug information: $NAME-debug.tar.gz holds bin/gpusched.debug; put it beside the
binary (or in /usr/lib/debug/usr/local/bin/) for gdb, perf and addr2line.

A cluster: systemd/ (doc/failover.md for several servers on PostgreSQL), grafana/ for the
dashboard, kubernetes/ and helm/ for Kubernetes (doc/kubernetes.md: not run on a real
cluster yet).
TXT

mkdir -p "$OUT"
EPOCH=$(git log -1 --format=%ct 2>/dev/null || echo 0)
for part in "$NAME" "$NAME-debug"; do
  tar --sort=name --mtime="@$EPOCH" --owner=0 --group=0 --numeric-owner --mode='u+rwX,go+rX,go-w' \
    -C "$STAGE" -cf - "$part" | gzip -n -9 >"$OUT/$part.tar.gz"
  (cd "$OUT" && sha256sum "$part.tar.gz" >"$part.tar.gz.sha256")
done

# The archive as a user gets it: the checksum, every file, and a binary that runs.
CHECK="$STAGE/check"
mkdir -p "$CHECK"
(cd "$OUT" && sha256sum -c --quiet "$NAME.tar.gz.sha256" "$NAME-debug.tar.gz.sha256")
tar -C "$CHECK" -xzf "$OUT/$NAME.tar.gz"
tar -C "$CHECK/$NAME" --strip-components=1 -xzf "$OUT/$NAME-debug.tar.gz"
for f in bin/gpusched systemd/gpusched-server.service systemd/gpusched-agent.service \
  grafana/gpusched.json kubernetes/gpusched.yaml helm/gpusched/Chart.yaml INSTALL; do
  [ -s "$CHECK/$NAME/$f" ] || { echo "the archive lacks $f" >&2; exit 1; }
done
cmp -s "$STAGE/gpusched" "$CHECK/$NAME/bin/gpusched" || { echo "the archive's binary is not $BIN stripped" >&2; exit 1; }
# The split debug information is found through the link and names source lines.
if command -v gdb >/dev/null; then
  gdb -batch -ex 'info line main' "$CHECK/$NAME/bin/gpusched" 2>/dev/null | grep -q 'Line [0-9]' ||
    { echo "gdb finds no line information through bin/gpusched.debug" >&2; exit 1; }
fi
[ "$("$CHECK/$NAME/bin/gpusched" --version)" = "gpusched $VERSION" ] ||
  { echo "the archive's binary does not run" >&2; exit 1; }
echo "$OUT/$NAME.tar.gz: $(du -h "$OUT/$NAME.tar.gz" | cut -f1) (binary $(du -h "$D/bin/gpusched" | cut -f1), from $(du -h "$BIN" | cut -f1));" \
  "$NAME-debug.tar.gz: $(du -h "$OUT/$NAME-debug.tar.gz" | cut -f1); sha256 in *.sha256"
