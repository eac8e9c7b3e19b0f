#!/usr/bin/env bash
# Installs the Debian 12 packages lockscope builds and tests with.
# Usage: scripts/install-deps.sh [--no-gui]
# Runs as root (a minimal Debian has no sudo); idempotent.
set -euo pipefail

with_gui=1
for arg in "$@"; do
  case "$arg" in
    --no-gui) with_gui=0 ;;
    -h|--help) sed -n '2,4p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install-deps: unknown option '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: needs root to install Debian packages (run it as root)" >&2
  exit 1
fi

packages=(
  build-essential cmake pkg-config git
  clang llvm                       # BPF target compiler and llvm-strip
  libbpf-dev bpftool libelf-dev zlib1g-dev
  systemtap-sdt-dev                # <sys/sdt.h> for the USDT probes in reflock
  libboost-program-options-dev libboost-math-dev
  libsqlite3-dev sqlite3 nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  procps util-linux python3
)
if [ "$with_gui" -eq 1 ]; then
  packages+=(qt6-base-dev qt6-charts-dev libqt6opengl6-dev libgl-dev libxkbcommon-dev)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ "${#missing[@]}" -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages already installed"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
