// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * An independent observer for the integration tests: counts the raw
 * lock:contention_* events of one process through the classic tracepoint
 * interface (not tp_btf), with no episode logic at all.
 */
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile __u32 targ_tgid = 0;

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
	return (__u32)(bpf_get_current_pid_tgid() >> 32) == targ_tgid;
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
