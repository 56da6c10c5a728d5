#!/usr/bin/env bash
# Runs every fuzz target of fuzz/ for N executions each (default 1,000,000) with
# libFuzzer through cargo-fuzz, and prints one summary line per target:
#   target  runs  seconds  exec/s  cov  ft  corpus  result
# Needs `cargo install cargo-fuzz` and a C++ compiler; works on stable Rust through
# RUSTC_BOOTSTRAP=1 (cargo-fuzz passes nightly-only flags). See docs/fuzzing.md.
#
#   scripts/fuzz_all.sh [RUNS] [TARGET...]
#
# Env: FUZZ_TARGET_DIR (cargo's target dir; default: a directory beside the repository,
# never inside it), FUZZ_LOG_DIR (libFuzzer logs; default /tmp/gpusched-fuzz).
# A crash, hang (-timeout) or memory blow-up (-rss_limit_mb) stops that target with a
# non-zero status; the input is saved under fuzz/artifacts/TARGET/. Fix the bug and copy
# the input to fuzz/regressions/TARGET/ so that `cargo test` replays it from then on.
set -euo pipefail

runs=${1:-1000000}
shift || true
root=$(cd "$(dirname "$0")/.." && pwd)
target_dir=${FUZZ_TARGET_DIR:-$root/../target-fuzz}
log_dir=${FUZZ_LOG_DIR:-/tmp/gpusched-fuzz}
mkdir -p "$log_dir"
cd "$root/fuzz"

# Longest input per target: a few kilobytes reach every branch of a line-oriented
# reader; longer inputs only slow each execution down.
max_len() {
    case $1 in
        durations_and_sizes) echo 64 ;;
        cluster_spec) echo 512 ;;
        api_body | job_file | queue_file) echo 2048 ;;
        *) echo 4096 ;;
    esac
}

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    mapfile -t targets < <(cargo fuzz list)
fi

export RUSTC_BOOTSTRAP=1
# Without ASan: the targets are safe Rust, and the sanitizer would halve the executions
# per second on a shared machine; overflow checks (debug assertions) stay on.
build=(--sanitizer none --debug-assertions --target-dir "$target_dir")
if ! nice -n 19 cargo fuzz build "${build[@]}" >"$log_dir/build.log" 2>&1; then
    cat "$log_dir/build.log" >&2
    exit 1
fi

status=0
printf '%-20s %9s %8s %8s %6s %6s %7s %s\n' target runs seconds exec/s cov ft corpus result
for t in "${targets[@]}"; do
    mkdir -p "corpus/$t" "regressions/$t"
    log="$log_dir/$t.log"
    set +e
    nice -n 19 cargo fuzz run "${build[@]}" "$t" "corpus/$t" "seeds/$t" "regressions/$t" -- \
        -runs="$runs" -rss_limit_mb=2048 -timeout=10 -max_len="$(max_len "$t")" \
        -print_final_stats=1 >"$log" 2>&1
    rc=$?
    set -e
    # libFuzzer's own time, without the build cargo may do first.
    secs=$(sed -nE 's/^Done [0-9]+ runs in ([0-9]+) second.*/\1/p' "$log" | tail -1)
    done_line=$(grep -E '^#[0-9]+\s+DONE' "$log" | tail -1 || true)
    execs=$(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}' || true)
    rate=$(grep -E '^stat::average_exec_per_sec' "$log" | awk '{print $2}' || true)
    cov=$(echo "$done_line" | sed -nE 's/.*cov: ([0-9]+).*/\1/p')
    ft=$(echo "$done_line" | sed -nE 's/.*ft: ([0-9]+).*/\1/p')
    corp=$(echo "$done_line" | sed -nE 's/.*corp: ([0-9]+).*/\1/p')
    result=clean
    if [ $rc -ne 0 ]; then
        result="FAILED (rc $rc, see $log)"
        status=1
    fi
    printf '%-20s %9s %8s %8s %6s %6s %7s %s\n' "$t" "${execs:-?}" "${secs:-?}" "${rate:-?}" \
        "${cov:-?}" "${ft:-?}" "${corp:-?}" "$result"
done
exit $status
