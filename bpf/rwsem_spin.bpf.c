// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The rwsem writer's optimistic spin, which no tracepoint shows: counted
 * with fentry/fexit where the kernel allows them (not on every kernel, so
 * user space probes and loads this object separately from lockscope.bpf.c
 * and records everything else when it is refused).
 *
 * Two ways in, chosen at load time with bpf_program__set_autoload():
 *  - rwsem_optimistic_spin() is a traceable function (kernels that do not
 *    inline it): fentry counts an attempt, fexit returning false a failure.
 *  - it is inlined into rwsem_down_write_slowpath() (Debian 6.1, 6.x with
 *    GCC's inlining): a writer entering the slow path that then calls
 *    rwsem_spin_on_owner() on the same lock has started spinning; if the same
 *    task then queues (lock:contention_begin with LCB_F_WRITE on that lock)
 *    the spin failed. Writers that give up before spinning on the owner
 *    (osq_lock refused, or rwsem_can_spin_on_owner() said no) are not counted.
 */
#include "kernel_types.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "lockscope_abi.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Cumulative per lock; user space merges them into the lock's WRITE row. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64); /* struct rw_semaphore * */
	__type(value, struct ls_rwsem_spin);
} rwsem_spin SEC(".maps");

/* Keys that did not fit in rwsem_spin: counted, never silent. */
__u64 lost_locks = 0;

/* A writer inside rwsem_down_write_slowpath(), for the inlined case. */
struct writer_state {
	__u64 sem;
	__u32 spun;
	__u32 queued;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32); /* tid */
	__type(value, struct writer_state);
} writers SEC(".maps");

static __always_inline struct ls_rwsem_spin *stats_for(__u64 sem)
{
	struct ls_rwsem_spin *s = bpf_map_lookup_elem(&rwsem_spin, &sem);
	if (s)
		return s;
	struct ls_rwsem_spin zero = {};
	bpf_map_update_elem(&rwsem_spin, &sem, &zero, BPF_NOEXIST);
	s = bpf_map_lookup_elem(&rwsem_spin, &sem);
	if (!s)
		__sync_fetch_and_add(&lost_locks, 1);
	return s;
}

static __always_inline void count(__u64 sem, int failed)
{
	struct ls_rwsem_spin *s = stats_for(sem);
	if (!s)
		return;
	if (failed)
		__sync_fetch_and_add(&s->spin_failures, 1);
	else
		__sync_fetch_and_add(&s->spin_attempts, 1);
}

static __always_inline __u32 current_tid(void)
{
	return (__u32)bpf_get_current_pid_tgid();
}

SEC("fentry/rwsem_optimistic_spin")
int BPF_PROG(spin_enter, struct rw_semaphore *sem)
{
	count((__u64)sem, 0);
	return 0;
}

SEC("fexit/rwsem_optimistic_spin")
int BPF_PROG(spin_exit, struct rw_semaphore *sem, bool taken)
{
	if (!taken)
		count((__u64)sem, 1);
	return 0;
}

SEC("fentry/rwsem_down_write_slowpath")
int BPF_PROG(slowpath_enter, struct rw_semaphore *sem)
{
	__u32 tid = current_tid();
	struct writer_state st = { .sem = (__u64)sem };
	bpf_map_update_elem(&writers, &tid, &st, BPF_ANY);
	return 0;
}

SEC("fentry/rwsem_spin_on_owner")
int BPF_PROG(spin_on_owner, struct rw_semaphore *sem)
{
	__u32 tid = current_tid();
	struct writer_state *st = bpf_map_lookup_elem(&writers, &tid);
	/* Later calls are the same spin, or a queued handoff waiter's (5.3+). */
	if (!st || st->sem != (__u64)sem || st->spun || st->queued)
		return 0;
	st->spun = 1;
	count(st->sem, 0);
	return 0;
}

SEC("tp_btf/contention_begin")
int BPF_PROG(writer_queued, void *lock, unsigned int flags)
{
	if (!(flags & LCB_F_WRITE))
		return 0;
	__u32 tid = current_tid();
	struct writer_state *st = bpf_map_lookup_elem(&writers, &tid);
	if (!st || st->sem != (__u64)lock || st->queued)
		return 0;
	st->queued = 1;
	if (st->spun)
		count(st->sem, 1);
	return 0;
}
