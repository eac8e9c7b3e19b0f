// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * userlock_test's independent observer: counts the futex wait syscalls
 * (FUTEX_WAIT, FUTEX_WAIT_BITSET) of one process whose futex word lies in
 * one of a few address ranges (the test program's locks). Nothing shared
 * with bpf/userlock.bpf.c: another attach type (raw_tp), counted at entry.
 *
 * It also times those waits (entry to exit) and splits each with its own
 * bookkeeping: switched out blocked until woken is asleep; switched out
 * runnable, or woken and not yet running, is runnable. A sleep woken while
 * its sleeper was still on its CPU (its switch-out not seen yet) is timed
 * from its switch-out as runnable, and its off-CPU time also kept apart
 * (range_raced_ns): whether it was still on its run queue depends on the
 * instant its state is read, so two programs may disagree about it.
 */
#include "kernel_types.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define OBSERVED_RANGES 8

const volatile __u32 observed_tgid = 0;
const volatile long observed_syscall = -1;

__u64 range_start[OBSERVED_RANGES] = {};
__u64 range_bytes[OBSERVED_RANGES] = {};
__u64 range_waits[OBSERVED_RANGES] = {};
__u64 range_wait_ns[OBSERVED_RANGES] = {};
__u64 range_asleep_ns[OBSERVED_RANGES] = {};
__u64 range_runnable_ns[OBSERVED_RANGES] = {};
__u64 range_woken[OBSERVED_RANGES] = {}; /* waits a wakeup ended a sleep of */
__u64 range_raced_ns[OBSERVED_RANGES] = {};

struct timed {
	__u64 begin_ns;
	__u64 out_ns;	/* switched out at; 0 on a CPU */
	__u64 woken_ns; /* woken while switched out blocked */
	__u32 range;
	__u32 out_blocked;
	__u32 early; /* woken asleep before its switch-out was seen */
	__u32 woken;
	__u32 raced;
	__u32 pad;
	__u64 asleep_ns;
	__u64 runnable_ns;
	__u64 raced_ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct timed);
} timing SEC(".maps");

#if defined(__TARGET_ARCH_x86)
struct pt_regs___obs {
	unsigned long di;
	unsigned long si;
} __attribute__((preserve_access_index));
#define OBS_UADDR(r) BPF_CORE_READ((r), di)
#define OBS_OP(r)    BPF_CORE_READ((r), si)
#else
struct pt_regs___obs {
	unsigned long regs[31];
} __attribute__((preserve_access_index));
#define OBS_UADDR(r) BPF_CORE_READ((r), regs[0])
#define OBS_OP(r)    BPF_CORE_READ((r), regs[1])
#endif

SEC("raw_tp/sys_enter")
int observe_futex(struct bpf_raw_tracepoint_args *ctx)
{
	struct pt_regs___obs *regs = (void *)ctx->args[0];
	__u64 uaddr, cmd;
	int i;

	if (ctx->args[1] != observed_syscall || bpf_get_current_pid_tgid() >> 32 != observed_tgid)
		return 0;
	cmd = OBS_OP(regs) & 127;
	if (cmd != 0 && cmd != 9)
		return 0;
	uaddr = OBS_UADDR(regs);
	for (i = 0; i < OBSERVED_RANGES; i++) {
		if (uaddr - range_start[i] < range_bytes[i]) {
			struct timed t = { .begin_ns = bpf_ktime_get_ns(), .range = i };
			__u32 tid = (__u32)bpf_get_current_pid_tgid();

			__sync_fetch_and_add(&range_waits[i], 1);
			bpf_map_update_elem(&timing, &tid, &t, BPF_ANY);
			break;
		}
	}
	return 0;
}

SEC("raw_tp/sys_exit")
int observe_futex_exit(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct timed *t = bpf_map_lookup_elem(&timing, &tid);
	__u32 i;

	if (!t)
		return 0;
	i = t->range;
	if (i < OBSERVED_RANGES) {
		__sync_fetch_and_add(&range_wait_ns[i], bpf_ktime_get_ns() - t->begin_ns);
		__sync_fetch_and_add(&range_asleep_ns[i], t->asleep_ns);
		__sync_fetch_and_add(&range_runnable_ns[i], t->runnable_ns);
		__sync_fetch_and_add(&range_raced_ns[i], t->raced_ns);
		if (t->woken)
			__sync_fetch_and_add(&range_woken[i], 1);
	}
	bpf_map_delete_elem(&timing, &tid);
	return 0;
}

/* raw_tp args: preempt, prev, next, prev_state */
SEC("raw_tp/sched_switch")
int observe_switch(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *prev = (struct task_struct *)ctx->args[1];
	struct task_struct *next = (struct task_struct *)ctx->args[2];
	__u32 prev_tid = BPF_CORE_READ(prev, pid), next_tid = BPF_CORE_READ(next, pid);
	struct timed *t;

	t = bpf_map_lookup_elem(&timing, &prev_tid);
	if (t) {
		t->out_ns = bpf_ktime_get_ns();
		t->out_blocked = !ctx->args[0] && ctx->args[3] != 0;
		if (t->out_blocked && t->early)
			t->woken_ns = t->out_ns; /* already woken: waits for a CPU from here */
		t->early = 0;
	}
	t = bpf_map_lookup_elem(&timing, &next_tid);
	if (t && t->out_ns) {
		__u64 now = bpf_ktime_get_ns(), off = now - t->out_ns, ready = 0;

		if (t->out_blocked && t->woken_ns)
			ready = now - t->woken_ns;
		if (t->out_blocked)
			t->asleep_ns += off - ready;
		else
			t->runnable_ns += off;
		t->runnable_ns += ready;
		if (t->raced)
			t->raced_ns += off;
		t->out_ns = 0;
		t->woken_ns = 0;
	}
	if (t) {
		t->early = 0;
		t->raced = 0;
	}
	return 0;
}

SEC("raw_tp/sched_waking")
int observe_waking(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *p = (struct task_struct *)ctx->args[0];
	__u32 tid = BPF_CORE_READ(p, pid);
	struct timed *t = bpf_map_lookup_elem(&timing, &tid);

	if (!t)
		return 0;
	if (t->out_ns) {
		if (t->out_blocked && !t->woken_ns) {
			t->woken_ns = bpf_ktime_get_ns();
			t->woken = 1;
		}
		return 0;
	}
	if (!BPF_CORE_READ(p, on_cpu))
		return 0;
	t->raced = 1;
	/* gone to sleep, its switch-out still under way */
	if (!BPF_CORE_READ(p, on_rq) ||
	    (bpf_core_field_exists(p->se.sched_delayed) && BPF_CORE_READ(p, se.sched_delayed))) {
		t->early = 1;
		t->woken = 1;
	}
	return 0;
}
