#!/usr/bin/env bash
# Installs the Debian packages lockscope needs, configures and builds it.
# Usage: scripts/build.sh [--no-gui] [--build-dir DIR] [extra cmake -D options...]
# The binaries land in the build directory (default: build/): build/lockscope,
# build/gui/lockscope-gui.
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=build
gui=ON
deps_args=()
cmake_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --no-gui) gui=OFF; deps_args+=(--no-gui) ;;
    --build-dir) build_dir="$2"; shift ;;
    -h|--help) sed -n '2,5p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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

cmake -S . -B "$build_dir" -DLOCKSCOPE_GUI="$gui" "${cmake_args[@]}" >/dev/null
cmake --build "$build_dir" -j"$(nproc)"
echo "build.sh: built into $build_dir/"
