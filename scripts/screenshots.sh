#!/usr/bin/env bash
# Records two real sessions (the pipe workload at 2 and at 4 threads, three
# runs each) with the built lockscope and renders the dashboard's pages into
# docs/screenshots/ for docs/dashboard.md and docs/diff.md.
#
#   scripts/screenshots.sh [BUILD_DIR]      (default: build; needs root or
#                                            CAP_BPF + CAP_PERFMON to record)
#
# Set SESSIONS_DIR to keep the recorded sessions (default: a temporary dir).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$repo/build}
lockscope=$build/lockscope
gui=$build/lockscope-gui
out=$repo/docs/screenshots
for tool in "$lockscope" "$gui"; do
  if [[ ! -x $tool ]]; then
    echo "screenshots.sh: $tool not found; build it first (cmake --build $build --target lockscope lockscope-gui)" >&2
    exit 1
  fi
done

sessions=${SESSIONS_DIR:-$(mktemp -d)}
[[ -n ${SESSIONS_DIR:-} ]] || trap 'rm -rf "$sessions"' EXIT
mkdir -p "$sessions" "$out"

two="$sessions/pipe-2threads.lockscope"
four="$sessions/pipe-4threads.lockscope"
"$lockscope" record --workload pipe -t 2 -d 5 --repeat 3 -f -o "$two"
"$lockscope" record --workload pipe -t 4 -d 5 --repeat 3 -f -o "$four"

export QT_QPA_PLATFORM=offscreen
"$gui" --screenshot "$out/overview.png" --page overview "$four"
"$gui" --screenshot "$out/locks.png" --page locks "$four"
"$gui" --screenshot "$out/holders.png" --page holders "$four"
# A is the baseline: what do two more threads do to the same lock?
"$gui" --screenshot "$out/diff.png" --page diff "$two" "$four"
echo "wrote $out/overview.png, $out/locks.png, $out/holders.png, $out/diff.png"
