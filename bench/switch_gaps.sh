#!/bin/bash
# Does a sched_switch BPF program see every context switch? Independently of
# lockscope: a bpftrace program on the sched:sched_switch tracepoint remembers
# each CPU's last `next` and counts the switches whose `prev` is someone else
# (a switch onto that CPU it never saw), while the pipe workload and two busy
# loops keep the CPUs switching. Prints the counts by the comm of the task
# that ran unseen and the pid last seen switched in. Needs root and bpftrace
# (scripts/install-deps.sh --bench).
#
# usage: bench/switch_gaps.sh [SECONDS]   (default 6)
set -euo pipefail
source "$(dirname "$0")/find_lockscope.sh"
seconds=${1:-6}
command -v bpftrace >/dev/null || { echo "switch_gaps: bpftrace not found (scripts/install-deps.sh --bench)" >&2; exit 2; }
[[ $(id -u) -eq 0 ]] || { echo "switch_gaps: needs root" >&2; exit 2; }

for _ in 1 2; do timeout "$((seconds + 1))" sh -c 'while :; do :; done' & done
"$lockscope" workload pipe -t 4 -d "$seconds" >/dev/null &
timeout "$seconds" bpftrace -e '
tracepoint:sched:sched_switch {
	if (@last[cpu] != 0 && @last[cpu] != args->prev_pid + 1) {
		@unseen[args->prev_comm, @last[cpu] - 1] = count();
		@gaps = count();
	}
	@last[cpu] = args->next_pid + 1;
	@switches = count();
}
END { clear(@last); }' 2>&1 | grep -v RLIMIT_MEMLOCK || true
wait
