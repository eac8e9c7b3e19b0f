#!/usr/bin/env bash
# Installs the Debian packages lockscope needs, configures and builds it.
# Usage: scripts/build.sh [--no-gui] [--all] [--build-dir DIR] [extra cmake -D options...]
#   builds the programs into the build directory (default: build/):
#   build/lockscope, and build/lockscope-gui unless --no-gui;
#   --all: also the tests, benchmarks and man pages (what scripts/test.sh runs),
#   after installing what the tests need.
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=build
gui=ON
all=0
deps_args=()
cmake_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --no-gui) gui=OFF; deps_args+=(--no-gui) ;;
    --all) all=1; deps_args+=(--tests) ;;
    --build-dir) build_dir="$2"; shift ;;
    -h|--help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -D*) cmake_args+=("$1") ;;
    *) echo "build.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
  esac
  shift
done

if [ "$(id -u)" -eq 0 ]; then
  scripts/install-deps.sh "${deps_args[@]}"
else
  echo "build.sh: not root, skipping package installation (run scripts/install-deps.sh as root once)" >&2
fi

if [ "$all" -eq 1 ]; then
  targets=(all)
  tests=ON
else
  targets=(lockscope)
  [ "$gui" = ON ] && targets+=(lockscope-gui)
  # A tree configured with the tests before keeps them (and builds only the
  # programs now); a new one needs no GoogleTest.
  tests=$(sed -n 's/^LOCKSCOPE_TESTS:BOOL=//p' "$build_dir/CMakeCache.txt" 2>/dev/null || true)
  tests=${tests:-OFF}
fi
cmake -S . -B "$build_dir" -DLOCKSCOPE_GUI="$gui" -DLOCKSCOPE_TESTS="$tests" "${cmake_args[@]}" >/dev/null
cmake --build "$build_dir" -j"$(nproc)" --target "${targets[@]}"
echo "build.sh: built ${targets[*]} into $build_dir/"
