#!/usr/bin/env bash
# Installs the Debian 12 packages lockscope builds (and, asked, tests) with.
# Usage: scripts/install-deps.sh [--no-gui] [--tests] [--package] [--bench] [--bench-perf]
#   (none):       what building the programs needs (lockscope, and the dashboard
#                 unless --no-gui)
#   --tests:      also what the test suite runs: GoogleTest, the Prometheus server,
#                 go tool pprof, perf, qemu and busybox for the kernel lab, lintian, ...
#   --package:    also what scripts/package.sh needs (dpkg-shlibdeps)
#   --bench:      also bpftrace and perf, which the cost benchmarks compare with
#   --bench-perf: --bench, and Debian's Linux source and what perf's build needs,
#                 then builds perf with its BPF skeletons (perf lock contention -b)
#                 into build/perf (bench/build_perf.sh)
# Runs as root (a minimal Debian has no sudo); idempotent.
set -euo pipefail

with_gui=1
with_tests=0
with_package=0
with_bench=0
with_perf=0
for arg in "$@"; do
  case "$arg" in
    --no-gui) with_gui=0 ;;
    --tests) with_tests=1 ;;
    --package) with_package=1 ;;
    --bench) with_bench=1 ;;
    --bench-perf) with_bench=1; with_perf=1 ;;
    -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install-deps: unknown option '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: needs root to install Debian packages (run it as root)" >&2
  exit 1
fi

packages=(
  build-essential cmake pkg-config git python3
  clang llvm                       # BPF target compiler and llvm-strip
  libbpf-dev bpftool libelf-dev zlib1g-dev
  libdw-dev                        # elfutils' libdwfl: unwinds copied user stacks with the binaries' CFI
  systemtap-sdt-dev                # <sys/sdt.h> for the USDT probes in reflock
  libboost-program-options-dev libboost-math-dev
  libsqlite3-dev nlohmann-json3-dev
  prometheus-cpp-dev               # record --prometheus (prometheus-cpp core + pull)
  libcurl4-openssl-dev             # diff --prometheus: queries Prometheus' HTTP API (libcurl4 at run time)
  libyaml-cpp-dev libssl-dev libcrypt-dev  # record --web-config: the YAML file, TLS, bcrypt passwords
  libprotobuf-dev protobuf-compiler  # export --format pprof (profile.proto)
)
if [ "$with_gui" -eq 1 ]; then
  packages+=(qt6-base-dev qt6-charts-dev libqt6opengl6-dev libgl-dev libxkbcommon-dev)
fi
if [ "$with_tests" -eq 1 ]; then
  packages+=(
    libgtest-dev libgmock-dev libbenchmark-dev
    clang-format                   # the style check (scripts/check_format.sh)
    libclang-rt-14-dev             # libFuzzer and sanitizer runtimes for clang (tests/fuzz)
    sqlite3 procps util-linux
    apache2-utils                  # htpasswd: the bcrypt hashes of the web-config tests
    golang-go                      # go tool pprof, which the pprof export test reads profiles with
    prometheus                     # the server the Prometheus tests scrape with, and promtool (fleet diff test)
    dpkg-dev lintian man-db        # scripts/package.sh (dpkg-shlibdeps) and the package tests
    curl systemd                   # the exporter service's tests: scrape it, systemd-analyze verify
    qemu-system-x86 busybox-static # the kernel lab: guests and their initramfs
    xz-utils zstd                  # compressed kernel modules for the lab
    linux-perf                     # perf bench: the perf lock contention test's workload, and PI futexes
    stress-ng                      # a stripped Debian program with pthread mutexes (user-lock names)
  )
fi
if [ "$with_package" -eq 1 ]; then
  packages+=(dpkg-dev)
fi
if [ "$with_bench" -eq 1 ]; then
  packages+=(bpftrace linux-perf)
fi
if [ "$with_perf" -eq 1 ]; then
  # the newest Linux source Debian packages, and perf's build dependencies
  source_pkg=$(apt-cache search --names-only '^linux-source-[0-9.]+$' | cut -d' ' -f1 | sort -V | tail -1)
  [ -n "$source_pkg" ] || { echo "install-deps: no linux-source package known to apt (apt-get update?)" >&2; exit 1; }
  packages+=("$source_pkg" flex bison libtraceevent-dev libtracefs-dev libzstd-dev libslang2-dev libunwind-dev
             libnuma-dev)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

build_perf() {
  [ "$with_perf" -eq 1 ] || return 0
  "$(dirname "$0")/../bench/build_perf.sh"
}

if [ "${#missing[@]}" -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages already installed"
  build_perf
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# Debian's prometheus package enables and starts a server on :9090; lockscope's
# test starts its own on a free loopback port, so do not leave one running.
if [[ " ${missing[*]} " == *" prometheus "* ]] && [ -d /run/systemd/system ]; then
  systemctl disable --now prometheus.service >/dev/null 2>&1 || true
fi
build_perf
echo "install-deps: done"
