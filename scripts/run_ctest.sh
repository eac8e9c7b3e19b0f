#!/usr/bin/env bash
# Runs ctest in a build directory, then lists every skipped test with its
# reason. As root on a kernel that lockscope can record on (`lockscope info`
# says so, from the kernel's BTF, as `record` decides), any skip whose reason
# is not in tests/skip-allow-list.txt fails the run: there, every BPF test
# must run. tracefs is mounted by the tests that need it (and unmounted by
# them); this script checks that the machine is left as it was found.
# Usage: scripts/run_ctest.sh BUILD_DIR [extra ctest args...]
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=${1:?usage: scripts/run_ctest.sh BUILD_DIR [ctest args...]}
shift
build_dir=$(cd "$build_dir" && pwd)
junit="$build_dir/test-results.xml"

tracefs_mounts() { grep -c ' - tracefs ' /proc/self/mountinfo || true; }
tracefs_before=$(tracefs_mounts)

strict=()
if [ "$(id -u)" -eq 0 ] &&
   "$build_dir/lockscope" info --format json | python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin)["record"] else 1)'; then
  strict=(--strict)
  echo "run_ctest: root on a kernel lockscope records on: a skip outside tests/skip-allow-list.txt fails the run"
else
  echo "run_ctest: not root, or this kernel cannot record: the BPF tests (label 'root') will skip" >&2
fi

status=0
# The tests that load BPF programs or measure the machine are marked
# RUN_SERIAL (tests/CMakeLists.txt): they run alone, the others side by side,
# one more at a time than there are CPUs. Root tests that measure nothing
# run beside them (BESIDE in tests/CMakeLists.txt, and the package, exporter
# TLS and service tests): the two started first (the package test and the
# lab's guests that are not compared, by their COST) mostly wait, on apt and
# dpkg or on a guest.
# Whole outputs in the JUnit file: a gtest executable run as one test (the
# lab) reports its skips only in its output.
ctest --test-dir "$build_dir" -j "$(($(nproc) + 1))" --output-on-failure --timeout 600 --output-junit "$junit" \
  --test-output-size-passed 4194304 --test-output-size-failed 4194304 "$@" || status=$?

python3 scripts/skip_gate.py "$junit" --allow-list tests/skip-allow-list.txt "${strict[@]}" || status=1

tracefs_after=$(tracefs_mounts)
if [ "$tracefs_after" != "$tracefs_before" ]; then
  echo "run_ctest: the tests left tracefs mounted $tracefs_after time(s), it was $tracefs_before before" >&2
  status=1
fi
exit "$status"
