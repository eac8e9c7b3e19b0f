/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The kernel recorder's per-task contention state, and how to read it about
 * another task: which lock a task is waiting for (inside contention_begin ..
 * end), who owns a lock, and what a task is doing. lockscope.bpf.c writes
 * the two maps; userlock.bpf.c declares the same maps and, when the kernel
 * recorder runs, is given their file descriptors before it loads
 * (bpf_map__reuse_fd), so that a user lock's owner can be followed into the
 * kernel lock it waits for. The maps' definitions live here so that the two
 * objects cannot disagree about them.
 */
#ifndef LOCKSCOPE_CONTENTION_STATE_H
#define LOCKSCOPE_CONTENTION_STATE_H

#include "lockscope_abi.h"

/* 6.2+: a counted reference to a task found by pid, the only way to a task
 * pointer bpf_get_task_stack() accepts from an owner word. */
extern struct task_struct *bpf_task_from_pid(s32 pid) __ksym __weak;
extern void bpf_task_release(struct task_struct *p) __ksym __weak;

/* A task's open episodes and totals while it is switched out (the running
 * task's are in its CPU's cpu_states slot). */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct ls_task_state);
} task_state SEC(".maps");

/*
 * Each CPU's state (lockscope_abi.h): contention events touch only this (an
 * inlined array lookup) instead of task storage. sched_switch hands its task
 * state over: the outgoing task's open episodes and totals go to its task
 * storage, the incoming task's open episodes come out of it.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct ls_cpu_state);
} cpu_states SEC(".maps");

/* The owner of PREEMPT_RT's sleeping locks, all rtmutex-based: the rtmutex
 * itself (mutex, spinlock_t), or the rwbase_rt whose rtmutex a writer holds. */
static __always_inline u32 rt_owner_of(u64 lock, u32 flags, struct task_struct **task)
{
	struct task_struct *owner;

	if (flags & LCB_F_WRITE)
		/* a writer that holds the rtmutex waits for the readers to leave */
		return LS_OWNER_READER;
	/* a reader waits only while a writer holds the lock: its rwbase_rt's rtmutex */
	if (flags & LCB_F_READ)
		lock += RWBASE_RT_RTMUTEX_OFFSET;
	owner = BPF_CORE_READ((struct rt_mutex_base *)lock, owner);
	owner = (struct task_struct *)((unsigned long)owner & ~RT_MUTEX_HAS_WAITERS);
	if (!owner)
		return LS_OWNER_NONE;
	*task = owner;
	return BPF_CORE_READ(owner, on_cpu) ? LS_OWNER_ON_CPU : LS_OWNER_OFF_CPU;
}

/* The owner of a mutex, rwsem or rtmutex at the moment a waiter queues: its
 * state (LS_OWNER_*), and in *task the owning task when one task owns it. */
static __always_inline u32 owner_of(u64 lock, u32 flags, struct task_struct **task)
{
	struct task_struct *owner;
	long word;

	*task = 0;
	if (flags & LCB_F_RT)
		return rt_owner_of(lock, flags, task);
	/* PREEMPT_RT's mutex and rwsem are rtmutex-based (LCB_F_RT above): a
	 * kernel without these owner words emits no other mutex or rwsem. */
	if (!bpf_core_field_exists(((struct mutex *)0)->owner) ||
	    !bpf_core_field_exists(((struct rw_semaphore *)0)->owner))
		return LS_OWNER_UNKNOWN;
	if (flags & LCB_F_MUTEX) {
		word = BPF_CORE_READ((struct mutex *)lock, owner.counter);
		owner = (struct task_struct *)(word & ~MUTEX_FLAGS_MASK);
	} else {
		word = BPF_CORE_READ((struct rw_semaphore *)lock, owner.counter);
		if (word & RWSEM_NONSPINNABLE)
			return LS_OWNER_NONSPINNABLE;
		if (word & RWSEM_READER_OWNED)
			return LS_OWNER_READER;
		owner = (struct task_struct *)(word & ~RWSEM_OWNER_FLAGS_MASK);
	}
	if (!owner)
		return LS_OWNER_NONE;
	*task = owner;
	return BPF_CORE_READ(owner, on_cpu) ? LS_OWNER_ON_CPU : LS_OWNER_OFF_CPU;
}

/*
 * The lock a holder is itself waiting for, if it is inside an episode that
 * lockscope tracks: in its CPU's slot while it runs, else in its task
 * storage. A sample: the holder's state may move on while it is read.
 */
static __always_inline void holder_waits_on(struct task_struct *t, u64 *lock, u32 *flags)
{
	struct ls_task_state *hts = 0;
	struct ls_cpu_state *other;
	struct ls_episode *top;
	u32 zero = 0, cpu, depth;

	if (BPF_CORE_READ(t, on_cpu) && bpf_core_field_exists(t->cpu)) {
		cpu = BPF_CORE_READ(t, cpu);
		other = bpf_map_lookup_percpu_elem(&cpu_states, &zero, cpu);
		if (other && other->resident == (u64)BPF_CORE_READ(t, pid) + 1)
			hts = &other->ts;
	}
	if (!hts)
		hts = bpf_task_storage_get(&task_state, t, 0, 0);
	if (!hts)
		return;
	depth = hts->depth;
	if (!depth || depth > LS_MAX_DEPTH)
		return;
	top = &hts->ep[(depth - 1) & (LS_MAX_DEPTH - 1)];
	*lock = top->lock;
	*flags = top->flags;
}

/* What a task is doing now, as a holder's role: LS_ROLE_HOLDER_RUNNING (on a
 * CPU), _PREEMPTED (runnable), _IOWAIT or _SLEEPING (blocked). */
static __always_inline u32 task_role(struct task_struct *t)
{
	if (BPF_CORE_READ(t, on_cpu))
		return LS_ROLE_HOLDER_RUNNING;
	if (BPF_CORE_READ(t, __state) == 0)
		return LS_ROLE_HOLDER_PREEMPTED;
	if (BPF_CORE_READ_BITFIELD_PROBED(t, in_iowait))
		return LS_ROLE_HOLDER_IOWAIT;
	return LS_ROLE_HOLDER_SLEEPING;
}

/*
 * Whether @p has gone to sleep in a schedule still under way on its CPU:
 * taken off the run queue (or, since EEVDF's delayed dequeue, left on it
 * marked sched_delayed) and not switched out yet. A waker on another CPU can
 * wake it there, before the sched_switch programs run; without this, that
 * sleep would count as asleep to its end, though the task only waited for a
 * CPU from the switch on.
 */
static __always_inline int switching_out_asleep(struct task_struct *p)
{
	if (!p->on_cpu)
		return 0;
	if (!p->on_rq)
		return 1;
	if (bpf_core_field_exists(p->se.sched_delayed))
		return p->se.sched_delayed != 0;
	return 0;
}

#endif /* LOCKSCOPE_CONTENTION_STATE_H */
