#!/usr/bin/env bash
# Installs what is needed, builds, and runs every test: unit tests, the CLI
# tests, the GUI tests (offscreen) and, as root, the tests that load BPF
# programs into this kernel (label "root").
# Usage: scripts/test.sh [--no-gui] [--build-dir DIR] [-- extra ctest args...]
set -euo pipefail
cd "$(dirname "$0")/.."

build_args=()
ctest_args=()
build_dir=build
while [ $# -gt 0 ]; do
  case "$1" in
    --) shift; ctest_args=("$@"); break ;;
    --build-dir) build_dir="$2"; build_args+=("$1" "$2"); shift ;;
    -h|--help) sed -n '2,5p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) build_args+=("$1") ;;
  esac
  shift
done

scripts/build.sh --all --build-dir "$build_dir" "${build_args[@]}"
export QT_QPA_PLATFORM=offscreen
scripts/run_ctest.sh "$build_dir" "${ctest_args[@]}"
