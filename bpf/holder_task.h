/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A followed holder's record (struct ls_holder_track, holder_track.h says
 * how its states are kept), as both recorders write it: the kernel locks'
 * holders in the slots of holder_split.h, the user locks' owners in their
 * task storage (userlock.bpf.c). Its lock word, and what a runnable
 * holder's CPU runs instead of it. BPF only.
 */
#ifndef LOCKSCOPE_HOLDER_TASK_H
#define LOCKSCOPE_HOLDER_TASK_H

#include "holder_track.h"

#define LS_HOLDER_LOCK_TRIES 64

/*
 * A slot's lock word: held by at most one program at a time, which may run
 * on another CPU or, interrupted, below this one: a few tries, then give up
 * (the caller counts the event as missed). A global function (non-static,
 * never inlined), which the verifier checks once per program: inlined at
 * each of the places that take a lock word, it walked every try at each and
 * carried each way out of the loop on into the rest of the program, which
 * made each recording's start seconds longer. Its argument is a map value's
 * lock word (the verifier lets it be NULL: it checks) and it returns an int,
 * as global functions must.
 */
__noinline int seq_lock(u32 *seq)
{
	if (!seq)
		return 0;
	for (int i = 0; i < LS_HOLDER_LOCK_TRIES; i++) {
		u32 s = *(volatile u32 *)seq;

		if (!(s & 1) && __sync_val_compare_and_swap(seq, s, s + 1) == s)
			return 1;
	}
	return 0;
}

static __always_inline void seq_unlock(u32 *seq)
{
	__sync_fetch_and_add(seq, 1);
}

static __always_inline bool holder_lock(struct ls_holder_track *t)
{
	return seq_lock(&t->seq);
}

static __always_inline void holder_unlock(struct ls_holder_track *t)
{
	seq_unlock(&t->seq);
}

/* A task's run queue, from its cfs_rq (every task has one). */
struct rq___holder;

struct cfs_rq___holder {
	struct rq___holder *rq; /* CONFIG_FAIR_GROUP_SCHED */
} __attribute__((preserve_access_index));

struct rq___holder {
	struct cfs_rq___holder cfs;
	struct task_struct *curr;
} __attribute__((preserve_access_index));

struct task_struct___holder {
	struct sched_entity___holder {
		struct cfs_rq___holder *cfs_rq;
	} se;
} __attribute__((preserve_access_index));

static __always_inline struct rq___holder *task_runqueue(struct task_struct *task)
{
	struct task_struct___holder *t = (void *)task;
	struct cfs_rq___holder *cfs = BPF_CORE_READ(t, se.cfs_rq);

	if (!cfs)
		return NULL;
	if (bpf_core_field_exists(cfs->rq))
		return BPF_CORE_READ(cfs, rq);
	/* without group scheduling every task is on its rq's own cfs */
	return (void *)((u64)cfs - bpf_core_field_offset(struct rq___holder, cfs));
}

/* The task that preempted a holder (what its CPU switched to). */
struct ls_holder_preempter {
	u32 tid, tgid;
	char comm[16];
};

/* What runs on the CPU of @holder, runnable: the task that preempted it,
 * for a first follower, which did not see the switch. */
static __always_inline void holder_cpu_current(struct task_struct *holder, struct ls_holder_preempter *who)
{
	struct rq___holder *rq = task_runqueue(holder);
	struct task_struct *curr;

	if (!rq)
		return;
	curr = BPF_CORE_READ(rq, curr);
	if (!curr || curr == holder)
		return;
	who->tid = BPF_CORE_READ(curr, pid);
	who->tgid = BPF_CORE_READ(curr, tgid);
	BPF_CORE_READ_STR_INTO(&who->comm, curr, comm);
}

static __always_inline void holder_set_preempter(struct ls_holder_track *t, const struct ls_holder_preempter *by)
{
	t->preempt_tid = by->tid;
	t->preempt_tgid = by->tgid;
	__builtin_memcpy(t->preempt_comm, by->comm, sizeof(t->preempt_comm));
}

/*
 * A task's row of a map of struct ls_holder_time values (the waiting it
 * caused as a holder, or behind a holder it preempted), made with its
 * process and name if it has none (the map is the caller's: a constant once
 * inlined); NULL if the map is full.
 */
static __always_inline struct ls_holder_time *holder_time_row(void *map, const void *key, u32 tgid,
							      const char *comm)
{
	struct ls_holder_time *v = bpf_map_lookup_elem(map, key);

	if (!v) {
		struct ls_holder_time init = { .tgid = tgid };

		__builtin_memcpy(init.comm, comm, sizeof(init.comm));
		bpf_map_update_elem(map, key, &init, BPF_NOEXIST);
		v = bpf_map_lookup_elem(map, key);
	}
	return v;
}

/* Adds @waits waits' parts @ns to a task's row. */
static __always_inline void holder_time_credit(struct ls_holder_time *v, const u64 ns[LS_HOLDER_PARTS], u64 waits)
{
	for (int i = 0; i < LS_HOLDER_PARTS; i++)
		__sync_fetch_and_add(&v->ns[i], ns[i]);
	__sync_fetch_and_add(&v->waits, waits);
}

#endif /* LOCKSCOPE_HOLDER_TASK_H */
