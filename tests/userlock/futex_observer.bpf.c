// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * userlock_test's independent observer: counts the futex wait syscalls
 * (FUTEX_WAIT, FUTEX_WAIT_BITSET) of one process whose futex word lies in
 * one of a few address ranges (the test program's locks). Nothing shared
 * with bpf/userlock.bpf.c: another attach type (raw_tp), counted at entry.
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
		if (uaddr - range_start[i] < range_bytes[i])
			__sync_fetch_and_add(&range_waits[i], 1);
	}
	return 0;
}
