#!/usr/bin/env bash
# The kernel lab's two-kernel comparison in one command: Debian's 6.1 kernel
# and its PREEMPT_RT build, each booted under qemu (nothing is installed on
# the host), the pipe workload recorded in each with repeats, then
# `lockscope diff` of the two sessions. This is the diff the README shows.
#
# Both guests run one after another with the same CPUs, memory and workload,
# so what differs is the kernel: PREEMPT_RT turns pipe->mutex into an
# rtmutex (no optimistic spinning on the owner, waiters sleep in priority
# order), and the diff lists that config difference first.
#
# usage: bench/lab_diff.sh [extra lockscope lab options, e.g. --cpus 4]
# environment: LOCKSCOPE (binary; default: build/lockscope, else PATH),
#   KERNEL_A (6.1), KERNEL_B (6.1-rt), WORKLOAD (pipe), THREADS (2),
#   DURATION (3 s), REPEAT (5), OUT (a new directory under $TMPDIR).
# Five runs of 3 s: under TCG, which runs both vCPUs on one host thread, a
# vCPU often waits on an owner whose vCPU is not running, and throughput
# varies a lot between runs; three runs of 2 s can miss significance.
# Needs root (apt-get download into the lab cache) and qemu-system-x86 +
# busybox-static (scripts/install-deps.sh installs them).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/bench/find_lockscope.sh"

out=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/lockscope-lab-diff.XXXXXX")}
mkdir -p "$out"

load=$(cut -d' ' -f1 /proc/loadavg)
cpus=$(nproc)
if awk -v l="$load" -v c="$cpus" 'BEGIN { exit !(l > c / 2) }'; then
    echo "lab_diff.sh: load average $load on $cpus CPUs: emulated guests slow down and their" \
         "throughput varies more between runs" >&2
fi

"$lockscope" lab --debian-kernel "${KERNEL_A:-6.1}" --debian-kernel "${KERNEL_B:-6.1-rt}" \
    --workload "${WORKLOAD:-pipe}" -t "${THREADS:-2}" -d "${DURATION:-3}" --repeat "${REPEAT:-5}" \
    -o "$out" --force --diff "$@"
echo "lab_diff.sh: sessions kept in $out" >&2
