// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Test program for bpf/user_stack.h: every FUTEX_WAIT of one process, from
 * the raw sys_enter tracepoint through BTF (no tracefs), with the waiter's
 * user registers, the top of its user stack and the mutex owner glibc
 * keeps beside the futex word; and, to compare, the kernel's frame-pointer
 * walk of the same stack.
 */
#include "kernel_types.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "lockscope_abi.h"
#include "user_stack.h"
#include "futex_sample.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile __u32 targ_tgid = 0;
const volatile long futex_nr = -1; /* the futex syscall's number on this architecture */

#define FUTEX_WAIT 0
#define FUTEX_CMD_MASK 127 /* without FUTEX_PRIVATE_FLAG and FUTEX_CLOCK_REALTIME */
/* glibc (nptl): pthread_mutex_t starts with int __lock (the futex word),
 * unsigned int __count, int __owner. */
#define GLIBC_MUTEX_OWNER_OFFSET 8

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} samples SEC(".maps");

__u64 lost = 0; /* waits not sent: the ring buffer was full */

SEC("tp_btf/sys_enter")
int BPF_PROG(futex_wait_enter, struct pt_regs *regs, long id)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct pt_regs___ls *r = (void *)regs;
	struct futex_sample *sample;
	__u64 uaddr;
	int owner = 0;
	long fp_bytes;

	if (id != futex_nr || pid_tgid >> 32 != targ_tgid)
		return 0;
	if ((LS_REGS_ARG2(r) & FUTEX_CMD_MASK) != FUTEX_WAIT)
		return 0;
	sample = bpf_ringbuf_reserve(&samples, sizeof(*sample), 0);
	if (!sample) {
		__sync_fetch_and_add(&lost, 1);
		return 0;
	}
	uaddr = LS_REGS_ARG1(r);
	sample->tid = (__u32)pid_tgid;
	sample->futex = uaddr;
	if (bpf_probe_read_user(&owner, sizeof(owner), (void *)(uaddr + GLIBC_MUTEX_OWNER_OFFSET)))
		owner = 0;
	sample->owner_tid = owner;
	fp_bytes = bpf_get_stack(ctx, sample->fp_stack, sizeof(sample->fp_stack), BPF_F_USER_STACK);
	sample->fp_frames = fp_bytes > 0 ? fp_bytes / sizeof(__u64) : 0;
	sample->pad = 0;
	ls_user_stack_copy(&sample->stack, regs);
	if (ls_user_regs_read(&sample->task_regs, ls_current_user_regs()))
		__builtin_memset(&sample->task_regs, 0, sizeof(sample->task_regs));
	bpf_ringbuf_submit(sample, 0);
	return 0;
}
