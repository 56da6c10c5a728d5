#!/usr/bin/env bash
# The container image (Containerfile) built with podman and used: `gpusched up` runs
# inside it as its default, non-root user, a job is submitted there with the CLI and its
# output read back. Base images cannot be pulled here, so the image is built FROM a root
# file system this script makes (busybox-static for the shell, the shared libraries
# `ldd` names for the binary, /etc/passwd and /etc/group), imported with `podman import`;
# real builds use the Containerfile's default BASE. Everything it makes (container,
# images, scratch) is removed at the end.
#
# Usage: scripts/container_image_test.sh [PATH/TO/gpusched]
#   default binary: $CARGO_TARGET_DIR/release/gpusched, else .../debug/gpusched. A binary
#   with full debug info is copied with `objcopy --strip-debug` (the image does not need it).
# Needs: podman (with runc or crun), busybox (static), ldd, objcopy. Under CI=true a
# missing one fails the run.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
T="${CARGO_TARGET_DIR:-$ROOT/target}"
BIN="${1:-}"
if [ -z "$BIN" ]; then
  BIN="$T/release/gpusched"
  [ -x "$BIN" ] || BIN="$T/debug/gpusched"
fi
[ -x "$BIN" ] || { echo "$BIN not found: build it first (cargo build --release -p gpusched) or pass its path" >&2; exit 1; }
for tool in podman ldd objcopy; do
  command -v "$tool" >/dev/null || { echo "$tool is required (apt-get install podman binutils)" >&2; exit 1; }
done
BUSYBOX="$(command -v busybox || true)"
if [ -z "$BUSYBOX" ] || ! file -L "$BUSYBOX" 2>/dev/null | grep -q 'statically linked'; then
  echo "a static busybox is required for the test's base (apt-get install busybox-static)" >&2
  exit 1
fi

TAG="gpusched-imagetest-$$"
SCRATCH="$(mktemp -d "${TMPDIR:-/tmp}/gpusched-image.XXXXXX")"
CONTAINER=""
cleanup() {
  [ -n "$CONTAINER" ] && podman rm -f -t 5 "$CONTAINER" >/dev/null 2>&1 || true
  podman rmi -f "localhost/$TAG:image" "localhost/$TAG:base" >/dev/null 2>&1 || true
  rm -rf "$SCRATCH"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
started=$(date +%s)

echo "== the base: busybox and the libraries of $BIN"
rootfs="$SCRATCH/rootfs"
mkdir -p "$rootfs"/{bin,etc,tmp,usr/bin,usr/sbin,sbin,var/lib,proc,sys,dev}
chmod 1777 "$rootfs/tmp"
cp "$BUSYBOX" "$rootfs/bin/busybox"
for app in sh cat echo mkdir chown chmod id ls sleep env; do ln -s busybox "$rootfs/bin/$app"; done
ldd "$BIN" | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}' | sort -u | while read -r lib; do
  [ -n "$lib" ] && [ -e "$lib" ] || continue
  mkdir -p "$rootfs$(dirname "$lib")"
  cp -L "$lib" "$rootfs$lib"
done
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/sbin/nologin\n' >"$rootfs/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$rootfs/etc/group"
tar -C "$rootfs" -cf "$SCRATCH/rootfs.tar" .
podman import --quiet "$SCRATCH/rootfs.tar" "localhost/$TAG:base" >/dev/null

echo "== podman build (Containerfile, BASE=localhost/$TAG:base)"
ctx="$SCRATCH/ctx"
mkdir -p "$ctx"
if file -L "$BIN" | grep -q 'with debug_info'; then
  objcopy --strip-debug "$BIN" "$ctx/gpusched"
else
  cp "$BIN" "$ctx/gpusched"
fi
podman build --quiet --build-arg "BASE=localhost/$TAG:base" -t "localhost/$TAG:image" \
  -f "$ROOT/Containerfile" "$ctx" >"$SCRATCH/build.log" 2>&1 || { cat "$SCRATCH/build.log" >&2; exit 1; }
user=$(podman image inspect --format '{{.Config.User}}' "localhost/$TAG:image")
[ "$user" = "10001:10001" ] || { echo "the image's user is '$user', not 10001:10001 (gpusched)" >&2; exit 1; }
size=$(podman image inspect --format '{{.Size}}' "localhost/$TAG:image")
echo "image: user $user, $((size / 1024 / 1024)) MiB (binary $(( $(stat -c %s "$ctx/gpusched") / 1024 / 1024 )) MiB)"

echo "== gpusched up inside it (no network but loopback), a job submitted there"
CONTAINER="$TAG"
# This shell's limits (processes capped at 32768, as podman caps its own): podman's
# defaults are above what a host without CAP_SYS_RESOURCE allows (runc: "error setting
# rlimit type 7"); the agent does the same for container jobs (crates/agent/src/image).
cap() { local v; v=$(ulimit "$1" "$2"); [ "$v" = unlimited ] || [ "$v" -gt 32768 ] && v=32768; echo "$v"; }
podman run -d --name "$CONTAINER" --network none \
  --ulimit "nofile=$(ulimit -Sn):$(ulimit -Hn)" --ulimit "nproc=$(cap -S -u):$(cap -H -u)" "localhost/$TAG:image" \
  up --listen 127.0.0.1:6450 --gpu-backend fake --gpus 2 >/dev/null
inside() { podman exec "$CONTAINER" "$@"; }
ok=""
for _ in $(seq 1 150); do
  if inside gpusched nodes 2>/dev/null | grep -q online; then ok=1; break; fi
  [ "$(podman inspect --format '{{.State.Running}}' "$CONTAINER")" = true ] || break
  sleep 0.2
done
if [ -z "$ok" ]; then
  podman logs "$CONTAINER" >&2 || true
  echo "gpusched up did not come up inside the container (its log above)" >&2
  exit 1
fi
[ "$(inside id -u)" = 10001 ] || { echo "the container runs as uid $(inside id -u), not 10001" >&2; exit 1; }
said=$(inside gpusched submit --gpus 1 -- sh -c 'echo "hello from $(id -un) on GPU $CUDA_VISIBLE_DEVICES"' 2>&1) || true
id=$(echo "$said" | grep -o '[0-9][0-9]*' | head -1)
[ -n "$id" ] || { echo "could not submit a job inside the container: $said" >&2; exit 1; }
inside gpusched wait "$id" >/dev/null 2>&1 || true
out=$(inside gpusched logs "$id")
echo "job $id: $out"
case "$out" in
  "hello from gpusched on GPU "?*) ;;
  *) inside gpusched show "$id" >&2 || true; podman logs "$CONTAINER" 2>&1 | tail -20 >&2
     echo "the job's output is not what it printed (its record above)" >&2; exit 1 ;;
esac
echo "container image: built, ran gpusched up as gpusched (uid 10001), a job ran; $(( $(date +%s) - started )) s"
