// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * An independent observer for the integration tests: counts the raw
 * lock:contention_* events of one process through the classic tracepoint
 * interface (not tp_btf), with no episode logic at all.
 */
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile __u32 targ_tgid = 0;
/* 1: also count the target's descendants, found by walking the current
 * task's ancestors (not by following forks, as lockscope does); 2: its
 * descendants only, not the target itself. */
const volatile __u32 targ_tree = 0;

struct task_struct {
	int tgid;
	struct task_struct *real_parent;
} __attribute__((preserve_access_index));

/* index: 0 begin with SPIN, 1 begin without SPIN, 2 begin MUTEX|SPIN, 3 begin MUTEX, 4 end */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 5);
	__type(key, __u32);
	__type(value, __u64);
} events SEC(".maps");

/* /sys/kernel/tracing/events/lock/contention_begin/format */
struct begin_args {
	__u64 common;
	__u64 lock_addr;
	__u32 flags;
};

struct end_args {
	__u64 common;
	__u64 lock_addr;
	__s32 ret;
};

static void bump(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&events, &idx);

	if (v)
		(*v)++;
}

static int mine(void)
{
	struct task_struct *t;

	if ((__u32)(bpf_get_current_pid_tgid() >> 32) == targ_tgid)
		return targ_tree != 2;
	if (!targ_tree)
		return 0;
	t = (struct task_struct *)bpf_get_current_task();
	for (int i = 0; i < 16; i++) {
		t = BPF_CORE_READ(t, real_parent);
		if (!t)
			return 0;
		if ((__u32)BPF_CORE_READ(t, tgid) == targ_tgid)
			return 1;
	}
	return 0;
}

SEC("tracepoint/lock/contention_begin")
int count_begin(struct begin_args *args)
{
	if (!mine())
		return 0;
	bump(args->flags & 1 ? 0 : 1);
	if (args->flags == 0x21)
		bump(2);
	else if (args->flags == 0x20)
		bump(3);
	return 0;
}

SEC("tracepoint/lock/contention_end")
int count_end(struct end_args *args)
{
	if (mine())
		bump(4);
	return 0;
}
