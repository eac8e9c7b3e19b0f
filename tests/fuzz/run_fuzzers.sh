#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan) and runs each for a
# fixed time, starting from the corpus kept in tests/fuzz/corpus. Fails on
# the first crash, leak, sanitizer report or timeout, and leaves the input
# that caused it in the artifacts directory: copy it into
# tests/fuzz/corpus/<target>/ as crash-<what>, fix the bug, and
# fuzz_replay_test replays it from then on in every build.
# usage: tests/fuzz/run_fuzzers.sh [SECONDS_PER_TARGET]   (default 180)
# environment: BUILD_DIR (default build-fuzz; a clang build configured with
#   LOCKSCOPE_FUZZ, as CI's sanitizer build, is reused as it is), ARTIFACTS
#   (default BUILD_DIR/fuzz-artifacts), JOBS (build parallelism, default nproc).
set -euo pipefail
cd "$(dirname "$0")/../.."

seconds=${1:-180}
build_dir=${BUILD_DIR:-build-fuzz}
artifacts=${ARTIFACTS:-$build_dir/fuzz-artifacts}
if ! [[ $seconds =~ ^[0-9]+$ ]] || (( seconds < 1 )); then
    echo "run_fuzzers.sh: SECONDS_PER_TARGET must be a positive whole number" >&2
    exit 2
fi

cmake -S . -B "$build_dir" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DLOCKSCOPE_FUZZ=ON \
    -DLOCKSCOPE_GUI=OFF -DLOCKSCOPE_BENCHMARKS=OFF -DLOCKSCOPE_WERROR=ON >/dev/null
cmake --build "$build_dir" -j"${JOBS:-$(nproc)}" --target fuzz_session_file fuzz_session_sql

mkdir -p "$artifacts"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
for target in session_file session_sql; do
    # New inputs go to a scratch directory; the repository's corpus is only read.
    scratch="$build_dir/fuzz-corpus/$target"
    mkdir -p "$scratch"
    dict=()
    [[ -f tests/fuzz/$target.dict ]] && dict=(-dict="tests/fuzz/$target.dict")
    echo "== fuzz_$target for $seconds s =="
    if ! "$build_dir/tests/fuzz/fuzz_$target" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 \
        -max_len=65536 -print_final_stats=1 -artifact_prefix="$artifacts/$target-" "${dict[@]}" \
        "$scratch" "tests/fuzz/corpus/$target"; then
        echo "run_fuzzers.sh: fuzz_$target failed; the input is in $artifacts (see the top of this script)" >&2
        exit 1
    fi
done
