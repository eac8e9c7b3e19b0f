/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * One user-lock wait's parts (bpf/userlock.bpf.c): a futex wait runs from
 * the syscall's entry to its exit, and every nanosecond of it is in one of
 * three parts, as for kernel locks (DESIGN.md "Metrics"):
 *
 *   on CPU    in the syscall, running (queueing on the futex, the wakeup's
 *             return path)
 *   asleep    switched out blocked, until sched_waking
 *   runnable  switched out runnable (preempted, or woken and waiting for a
 *             CPU), until switched in
 *
 * on CPU is what is left, so the three add up to the wait exactly.
 *
 * Plain C with no helpers and no maps, like episode.h: the BPF program and
 * the C++ unit tests run the same code, passing timestamps in.
 *
 * A waker on another CPU can wake the waiter while its blocked switch-out is
 * still under way (it has left the run queue, its sched_switch has not run):
 * that wakeup is kept (woken_early_ns) and the switch-out then counts as
 * runnable, since the waiter only waits for a CPU from there.
 */
#ifndef LOCKSCOPE_USERLOCK_WAIT_H
#define LOCKSCOPE_USERLOCK_WAIT_H

#ifdef __bpf__
#define LS_UL_INLINE static __always_inline
#else
#include <linux/types.h>
#define LS_UL_INLINE static inline
#endif

struct ls_ulock_timing {
	__u64 start_ns;	      /* the syscall's entry */
	__u64 off_ns;	      /* when it was switched out; 0 while on a CPU */
	__u64 woken_early_ns; /* woken while its blocked switch-out was under way; 0: not */
	__u64 asleep_ns;
	__u64 runnable_ns;
	__u32 off_blocked; /* switched out blocked and not woken since */
	__u32 pad;
};

struct ls_ulock_parts {
	__u64 wait_ns;
	__u64 oncpu_ns;
	__u64 asleep_ns;
	__u64 runnable_ns;
};

LS_UL_INLINE void ls_ulock_switch_out(struct ls_ulock_timing *t, __u64 now, int blocked)
{
	if (t->woken_early_ns) {
		blocked = 0; /* its wakeup came first: from here it waits for a CPU */
		t->woken_early_ns = 0;
	}
	t->off_ns = now;
	t->off_blocked = blocked != 0;
}

LS_UL_INLINE void ls_ulock_switch_in(struct ls_ulock_timing *t, __u64 now)
{
	t->woken_early_ns = 0; /* a wakeup whose switch-out never came */
	if (!t->off_ns)
		return;
	if (t->off_blocked)
		t->asleep_ns += now - t->off_ns;
	else
		t->runnable_ns += now - t->off_ns;
	t->off_ns = 0;
	t->off_blocked = 0;
}

/*
 * sched_waking for the waiter. switching_out_asleep: it has gone to sleep on
 * its CPU and its switch-out has not been seen yet. Returns 1 when this
 * wakeup ended a sleep (the caller keeps its waker), 0 otherwise.
 */
LS_UL_INLINE int ls_ulock_woken(struct ls_ulock_timing *t, __u64 now, int switching_out_asleep)
{
	if (!t->off_ns) {
		if (!switching_out_asleep)
			return 0;
		t->woken_early_ns = now;
		return 1;
	}
	if (!t->off_blocked)
		return 0;
	t->asleep_ns += now - t->off_ns;
	t->off_ns = now;
	t->off_blocked = 0;
	return 1;
}

/* The wait's parts at the syscall's exit. */
LS_UL_INLINE struct ls_ulock_parts ls_ulock_end(struct ls_ulock_timing *t, __u64 now)
{
	struct ls_ulock_parts p;
	__u64 off;

	/* a switch-in not seen (the programs attached while it was out) */
	if (t->off_ns)
		ls_ulock_switch_in(t, now);
	p.wait_ns = now - t->start_ns;
	p.asleep_ns = t->asleep_ns < p.wait_ns ? t->asleep_ns : p.wait_ns;
	off = p.wait_ns - p.asleep_ns;
	p.runnable_ns = t->runnable_ns < off ? t->runnable_ns : off;
	p.oncpu_ns = off - p.runnable_ns;
	return p;
}

#endif /* LOCKSCOPE_USERLOCK_WAIT_H */
