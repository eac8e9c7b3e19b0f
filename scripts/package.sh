#!/usr/bin/env bash
# Builds the Debian packages lockscope (CLI, exporter service; no Qt) and
# lockscope-gui into BUILD_DIR/packages/ (default build/packages/), named by
# the commit they come from. As root it first installs what building needs.
# Usage: scripts/package.sh [--no-gui] [--build-dir DIR] [--clean | --built]
#   --clean: remove BUILD_DIR first and build from nothing
#   --built: package BUILD_DIR's programs as they are, building nothing (the
#            package test: the suite's other tests run these very files)
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=build
gui=""  # as the build directory was configured; ON for a new one
clean=0
build=1
deps_args=(--package)
while [ $# -gt 0 ]; do
  case "$1" in
    --no-gui) gui=OFF; deps_args+=(--no-gui) ;;
    --build-dir) build_dir="$2"; shift ;;
    --clean) clean=1 ;;
    --built) build=0 ;;
    -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "package.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
  esac
  shift
done

if [ "$(id -u)" -eq 0 ]; then
  scripts/install-deps.sh "${deps_args[@]}"
fi
[ "$clean" -eq 1 ] && rm -rf "$build_dir"

# Only what the packages hold is built (not the tests); in a tree built
# before, this is quick.
configured=$(sed -n 's/^LOCKSCOPE_GUI:BOOL=//p' "$build_dir/CMakeCache.txt" 2>/dev/null || true)
gui=${gui:-${configured:-ON}}
# A new tree needs no GoogleTest; one configured with the tests keeps them.
tests=$(sed -n 's/^LOCKSCOPE_TESTS:BOOL=//p' "$build_dir/CMakeCache.txt" 2>/dev/null || true)
# A tree configured as asked is not configured again (the build does that
# itself when a CMakeLists.txt changed).
if [ "$gui" != "$configured" ]; then
  cmake -S . -B "$build_dir" -DLOCKSCOPE_GUI="$gui" -DLOCKSCOPE_TESTS="${tests:-OFF}" >/dev/null
fi
targets=(lockscope lockscope_docs)
[ "$gui" = ON ] && targets+=(lockscope-gui)
if [ "$build" -eq 1 ]; then
  cmake --build "$build_dir" -j"$(nproc)" --target "${targets[@]}" >/dev/null
elif [ ! -x "$build_dir/lockscope" ]; then
  echo "package.sh: --built, but $build_dir has no lockscope program: build it first" >&2
  exit 1
fi

rm -rf "$build_dir/packages"
(cd "$build_dir" && cpack -G DEB --config CPackConfig.cmake >/dev/null)
# CPack's staging trees are not packages.
rm -rf "$build_dir/packages/_CPack_Packages"
ls "$build_dir"/packages/*.deb
