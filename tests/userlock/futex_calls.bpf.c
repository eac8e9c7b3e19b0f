// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * programs_test's independent observer of futex calls, per process: the
 * futex(FUTEX_LOCK_PI or FUTEX_LOCK_PI2) calls (each one a contended lock:
 * the uncontended path never enters the kernel) and of them those that
 * slept (switched out blocked inside the call); the futex(FUTEX_WAIT or
 * FUTEX_WAIT_BITSET) calls. Nothing shared with bpf/userlock.bpf.c: raw
 * tracepoints, counted at exit.
 */
#include "kernel_types.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile long observed_syscall = -1;

struct counts {
	__u64 pi_calls;
	__u64 pi_slept;
	__u64 wait_calls;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32); /* tgid */
	__type(value, struct counts);
} per_process SEC(".maps");

struct call {
	__u32 tgid;
	__u16 slept;
	__u16 pi;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32); /* tid */
	__type(value, struct call);
} in_call SEC(".maps");

#if defined(__TARGET_ARCH_x86)
struct pt_regs___calls {
	unsigned long si;
} __attribute__((preserve_access_index));
#define CALLS_OP(r) BPF_CORE_READ((r), si)
#else
struct pt_regs___calls {
	unsigned long regs[31];
} __attribute__((preserve_access_index));
#define CALLS_OP(r) BPF_CORE_READ((r), regs[1])
#endif

SEC("raw_tp/sys_enter")
int calls_enter(struct bpf_raw_tracepoint_args *ctx)
{
	struct pt_regs___calls *regs = (void *)ctx->args[0];
	__u64 id = bpf_get_current_pid_tgid(), cmd;
	__u32 tid = (__u32)id;
	struct call c = { .tgid = id >> 32 };

	if (ctx->args[1] != observed_syscall)
		return 0;
	cmd = CALLS_OP(regs) & 127;
	if (cmd == 6 || cmd == 13) /* FUTEX_LOCK_PI, FUTEX_LOCK_PI2 */
		c.pi = 1;
	else if (cmd != 0 && cmd != 9) /* FUTEX_WAIT, FUTEX_WAIT_BITSET */
		return 0;
	bpf_map_update_elem(&in_call, &tid, &c, BPF_ANY);
	return 0;
}

/* raw_tp args: preempt, prev, next, prev_state */
SEC("raw_tp/sched_switch")
int calls_switch(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *prev = (struct task_struct *)ctx->args[1];
	__u32 tid = BPF_CORE_READ(prev, pid);
	struct call *c = bpf_map_lookup_elem(&in_call, &tid);

	if (c && !ctx->args[0] && ctx->args[3] != 0)
		c->slept = 1;
	return 0;
}

SEC("raw_tp/sys_exit")
int calls_exit(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct call *c = bpf_map_lookup_elem(&in_call, &tid);
	struct counts zero = {}, *n;

	if (!c)
		return 0;
	n = bpf_map_lookup_elem(&per_process, &c->tgid);
	if (!n) {
		bpf_map_update_elem(&per_process, &c->tgid, &zero, BPF_NOEXIST);
		n = bpf_map_lookup_elem(&per_process, &c->tgid);
	}
	if (n && c->pi) {
		__sync_fetch_and_add(&n->pi_calls, 1);
		if (c->slept)
			__sync_fetch_and_add(&n->pi_slept, 1);
	} else if (n) {
		__sync_fetch_and_add(&n->wait_calls, 1);
	}
	bpf_map_delete_elem(&in_call, &tid);
	return 0;
}
