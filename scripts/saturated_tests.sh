#!/usr/bin/env bash
# Runs the live test suite (crates/cli/tests/live) and the launcher tests
# (crates/agent/tests/launcher.rs) while every core is kept busy by another process,
# several times in a row, and reports pass/fail per run. This is the check that the
# tests wait for evidence, not for luck: a test that reads a file its job has not
# written yet fails here. Not part of CI (it costs minutes); figures go in
# docs/robustness.md.
#
# Usage: scripts/saturated_tests.sh [RUNS (default 3)] [HOGS (default 2 x cores)]
# Env:   CARGO_TARGET_DIR as for cargo; HOG=stress-ng to use stress-ng --cpu if installed
#        (default: plain shell busy loops, which every machine has).
set -u
runs=${1:-3}
cores=$(nproc)
hogs=${2:-$((cores * 2))}
cd "$(dirname "$0")/.."

# Build first, unsaturated: the point is the tests under load, not the compiler.
cargo test -p gpusched --test live --no-run --locked -q || exit 2
cargo test -p gpusched-agent --test launcher --no-run --locked -q || exit 2

pids=()
stop_hogs() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
}
trap stop_hogs EXIT INT TERM
if [ "${HOG:-}" = stress-ng ] && command -v stress-ng >/dev/null; then
    stress-ng --cpu "$hogs" --quiet &
    pids+=($!)
    what="stress-ng --cpu $hogs"
else
    for _ in $(seq "$hogs"); do
        sh -c 'while :; do :; done' &
        pids+=($!)
    done
    what="$hogs shell busy loops"
fi
echo "saturating $cores cores with $what; load: $(cut -d' ' -f1-3 /proc/loadavg)"

failed=0
for i in $(seq "$runs"); do
    start=$(date +%s)
    log=$(mktemp)
    if cargo test -p gpusched --test live --locked -q >"$log" 2>&1 &&
        cargo test -p gpusched-agent --test launcher --locked -q >>"$log" 2>&1; then
        result=pass
    else
        result=FAIL
        failed=$((failed + 1))
    fi
    summary=$(grep -E '^test result' "$log" | tr '\n' ' ')
    echo "run $i: $result in $(($(date +%s) - start)) s, load $(cut -d' ' -f1 /proc/loadavg): $summary"
    if [ "$result" = FAIL ]; then
        grep -E '^test .* FAILED|panicked' "$log" | head -20
        echo "(full log: $log)"
    else
        rm -f "$log"
    fi
done
echo "$((runs - failed)) of $runs runs passed under $what"
[ "$failed" -eq 0 ]
