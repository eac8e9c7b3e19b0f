/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The per-task contention episode state machine (DESIGN.md "Metrics").
 *
 * Plain C with no helpers and no maps, so that the BPF program and the
 * C++ unit tests run the very same code: the caller passes timestamps in
 * and acts on what the functions return (read the owner word, aggregate a
 * finished episode, count a loss).
 *
 * Sequences this kernel emits (flags: SPIN=1 READ=2 WRITE=4 RT=8 PERCPU=16 MUTEX=32):
 *   mutex:   B(MUTEX|SPIN) E             spin (or trylock) win
 *            B(MUTEX|SPIN) B(MUTEX) ... E  spin failed, queued
 *            ... B(MUTEX|SPIN) E | B(MUTEX)  woken first waiter spins again
 *   rwsem:   B(READ|WRITE) E             queued waits only
 *   others:  B(flags) E
 * A contended spinlock (the mutex's wait_lock) may nest inside an episode.
 */
#ifndef LOCKSCOPE_EPISODE_H
#define LOCKSCOPE_EPISODE_H

#include "lockscope_abi.h"

#ifdef __bpf__
#define LS_INLINE static __always_inline
#else
#define LS_INLINE static inline
#endif

#ifdef __cplusplus
static_assert((LS_MAX_DEPTH & (LS_MAX_DEPTH - 1)) == 0, "LS_MAX_DEPTH must be a power of two");
#else
_Static_assert((LS_MAX_DEPTH & (LS_MAX_DEPTH - 1)) == 0, "LS_MAX_DEPTH must be a power of two");
#endif

struct ls_episode {
	__u64 lock;
	__u64 begin_ns;   /* first begin */
	__u64 phase_ns;   /* start of the current spin phase */
	__u64 spin_ns;
	__u64 sleep_ns;
	__u64 preempt_ns;
	__u32 flags;      /* kind bits of the first begin */
	__u16 spin_attempts;
	__u16 spin_failures;
	__u16 sleeps;
	__u16 preemptions;
	__u16 wakeups;
	__u8 in_spin;      /* current phase is an optimistic spin */
	__u8 spin_success; /* the episode ended in a spin phase */
	__u8 owner_seen[LS_OWNER_STATES]; /* owner state at each queueing */
	__u8 queued;       /* the task queued (or slept, was preempted, was woken): see ls_account */
	__u8 holder_role;  /* LS_ROLE_HOLDER_* of the holder stack sampled when it queued */
	__u8 pad;
	__u32 holder_stack; /* that stack's id (LS_HOLDER_STACK_BIT set); 0: none sampled */
	__u64 chain_lock;   /* the lock that sampled holder was itself waiting for; 0: none */
	__u32 chain_flags;  /* and its kind bits (a lock row's key, as flags above) */
	__u32 pad2;
};

/* A task's cumulative totals; copied to the task_stats map when it is
 * switched out, so the per-episode path needs no hash lookup for them. */
struct ls_task_totals {
	LS_TASK_COUNTERS(LS_U64_FIELD)
};

struct ls_task_state {
	__u64 switched_out_ns; /* 0 while on CPU */
	__u32 depth;
	__u32 out_blocked;     /* switched out in a blocked state (a sleep) */
	__u32 dirty;           /* totals changed since the last flush */
	__u32 pad;
	struct ls_task_totals totals;
	struct ls_episode ep[LS_MAX_DEPTH];
};

/*
 * Each CPU's state (lockscope.bpf.c's hot_state map): the state of the task
 * running there, handed over at every context switch, the CPU's counters,
 * and a direct-mapped cache of (lock, kind) -> lock_stats row. Rows are
 * assigned once and never move, so a stale or evicted slot costs one hash
 * lookup and never loses or misplaces a count. User space reads cnt, and
 * pending once the programs are detached.
 */
#define LS_ROW_CACHE 16
struct ls_row_slot {
	__u64 lock;
	__u32 flags;
	__u32 row_plus1; /* 0: empty */
};

/*
 * A finished episode not yet added to its lock's counters. contention_end
 * runs with the lock held, and every nanosecond there lengthens the critical
 * section everyone queues on: it only stashes the episode here, and the CPU's
 * next contention_begin or sched_switch (which comes before the task's
 * totals are published, and before it can run anywhere else) adds it with
 * ls_account(). So the counters lag by at most one episode per CPU while
 * recording, and never go back; the final snapshot, taken once the programs
 * are detached, adds what is still pending (collector/probe/probe.cpp).
 */
struct ls_pending {
	struct ls_episode ep;
	__u64 end_ns;
	__s32 ret;
	__u32 row_plus1; /* the lock_stats row + 1; 0: nothing pending */
};

struct ls_cpu_state {
	__u64 owner;            /* pid + 1 of the task whose state ts holds; 0: none */
	struct ls_counters cnt;
	struct ls_pending pending;
	struct ls_task_state ts;
	struct ls_row_slot rows[LS_ROW_CACHE];
};

/* What the caller must do after a begin. */
enum ls_begin_action {
	LS_BEGIN_NEW = 0,      /* new episode pushed */
	LS_BEGIN_PHASE = 1,    /* same episode, phase bookkeeping only */
	LS_BEGIN_QUEUED = 2,   /* the task queues now: read the owner state */
	LS_BEGIN_TOO_DEEP = 3, /* nesting limit: count a loss */
};

LS_INLINE int ls_is_sleeping_spinner(__u32 flags)
{
	/* Only mutexes emit SPIN for an optimistic spin phase; spinlocks and
	 * rwlocks emit SPIN for their whole (spinning) wait. The reference
	 * userspace locks also announce an rwsem writer's spin, which the
	 * kernel only shows through fentry. */
	return (flags & (LCB_F_MUTEX | LS_F_USER)) != 0;
}

/* A spinlock or rwlock: the whole wait is spinning. */
LS_INLINE int ls_is_spinlock(__u32 flags)
{
	return (flags & (LCB_F_SPIN | LCB_F_MUTEX | LCB_F_RT | LCB_F_PERCPU | LS_F_USER)) == LCB_F_SPIN;
}

/*
 * A finished episode's kind as one bit (record --kind filters in the kernel
 * with a mask of them; user space maps the names to the same bits through
 * this function): flags are an episode's, SPIN kept for spinlocks.
 */
#define LS_KIND_BITS 14
LS_INLINE __u32 ls_kind_bit(__u32 flags)
{
	const __u32 rw = flags & (LCB_F_READ | LCB_F_WRITE);

	if (flags & LS_F_USER)
		return (flags & LCB_F_MUTEX) ? 12 : 13;       /* user-mutex, user-rwsem */
	if (flags & LCB_F_RT)
		return rw == LCB_F_READ ? 7 : rw ? 8 : 6;     /* rt-rwlock r/w, rtmutex */
	if (flags & LCB_F_PERCPU)
		return rw == LCB_F_WRITE ? 10 : 9;            /* percpu-rwsem w/r */
	if (flags & LCB_F_MUTEX)
		return 0;
	if (flags & LCB_F_SPIN)
		return rw == LCB_F_READ ? 4 : rw ? 5 : 3;     /* rwlock r/w, spinlock */
	if (rw)
		return rw == LCB_F_READ ? 1 : 2;              /* rwsem r/w */
	return 11;                                            /* semaphore */
}

LS_INLINE int ls_begin(struct ls_task_state *ts, __u64 lock, __u32 flags, __u64 now)
{
	__u32 d = ts->depth;
	struct ls_episode *ep;
	int spin = (flags & LCB_F_SPIN) != 0;

	if (d > 0 && d <= LS_MAX_DEPTH) {
		ep = &ts->ep[d - 1];
		if (ep->lock == lock) {
			if (!ls_is_sleeping_spinner(ep->flags))
				return LS_BEGIN_PHASE;
			if (ep->in_spin && !spin) {
				ep->spin_failures++;
				ep->spin_ns += now - ep->phase_ns;
				ep->in_spin = 0;
				ep->queued = 1;
				return LS_BEGIN_QUEUED;
			}
			if (!ep->in_spin && spin) {
				/* a woken first waiter spins again */
				ep->spin_attempts++;
				ep->in_spin = 1;
				ep->phase_ns = now;
			}
			return LS_BEGIN_PHASE;
		}
	}
	if (d >= LS_MAX_DEPTH)
		return LS_BEGIN_TOO_DEEP;

	ep = &ts->ep[d];
	__builtin_memset(ep, 0, sizeof(*ep));
	ep->lock = lock;
	ep->begin_ns = now;
	ep->phase_ns = now;
	ep->flags = flags & LS_F_KIND_MASK;
	if (ls_is_spinlock(flags))
		ep->flags |= LCB_F_SPIN; /* keeps spinlock and rwlock apart from rwsem */
	if (ls_is_sleeping_spinner(flags) && spin) {
		ep->spin_attempts = 1;
		ep->in_spin = 1;
	}
	ts->depth = d + 1;
	/* A mutex or rwsem entered without a spin phase queues right away. */
	if (!spin && (flags & (LCB_F_MUTEX | LCB_F_READ | LCB_F_WRITE)) &&
	    !(flags & (LCB_F_RT | LCB_F_PERCPU | LS_F_USER))) {
		ep->queued = 1;
		return LS_BEGIN_QUEUED;
	}
	return LS_BEGIN_NEW;
}

/* The episode that was pushed or advanced by the last ls_begin(). */
LS_INLINE struct ls_episode *ls_top(struct ls_task_state *ts)
{
	__u32 d = ts->depth;

	if (d == 0 || d > LS_MAX_DEPTH)
		return 0;
	/* the mask keeps the verifier's bound whatever the compiler does */
	return &ts->ep[(d - 1) & (LS_MAX_DEPTH - 1)];
}

/*
 * Ends the innermost episode on @lock into *out. Inner episodes above it
 * (their end was missed) are dropped and counted in *abandoned. Returns 0
 * when no begin was seen for this lock.
 *
 * The episode is copied out, not finished in place: once it is popped, its
 * slot belongs to whatever comes next on this CPU, and something can come
 * before the caller is done with it: an interrupt contending on a spinlock,
 * or (a USDT program runs preemptible) another task's state handed over.
 */
LS_INLINE int ls_end(struct ls_task_state *ts, __u64 lock, __s32 ret, __u64 now,
		     struct ls_episode *out, __u32 *abandoned)
{
	__u32 d = ts->depth;
	int i;

	if (d > LS_MAX_DEPTH)
		d = LS_MAX_DEPTH;
	for (i = LS_MAX_DEPTH - 1; i >= 0; i--) {
		struct ls_episode *ep;

		if ((__u32)i >= d)
			continue;
		ep = &ts->ep[i];
		if (ep->lock != lock)
			continue;
		*out = *ep;
		if (out->in_spin) {
			out->spin_ns += now - out->phase_ns;
			out->spin_success = ret == 0;
		}
		if (ls_is_spinlock(out->flags))
			out->spin_ns = now - out->begin_ns;
		if (ret != 0)
			out->queued = 1;
		*abandoned = d - 1 - (__u32)i;
		ts->depth = (__u32)i;
		return 1;
	}
	return 0;
}

LS_INLINE void ls_switch_out(struct ls_task_state *ts, __u64 now, int blocked)
{
	if (ts->depth == 0)
		return;
	ts->switched_out_ns = now;
	ts->out_blocked = blocked != 0;
}

LS_INLINE void ls_switch_in(struct ls_task_state *ts, __u64 now)
{
	__u64 off;
	__u32 d = ts->depth;
	int i;

	if (ts->switched_out_ns == 0)
		return;
	off = now - ts->switched_out_ns;
	ts->switched_out_ns = 0;
	/* Every open episode waited through this switch. */
	for (i = 0; i < LS_MAX_DEPTH; i++) {
		struct ls_episode *ep = &ts->ep[i];

		if ((__u32)i >= d)
			break;
		if (ep->begin_ns > now - off)
			off = now - ep->begin_ns; /* opened while out: cannot happen, be safe */
		if (ts->out_blocked) {
			ep->sleep_ns += off;
			ep->sleeps++;
		} else {
			ep->preempt_ns += off;
			ep->preemptions++;
		}
		ep->queued = 1;
	}
}

/* Records the owner state seen when the top episode queued. */
LS_INLINE void ls_note_owner(struct ls_task_state *ts, __u32 state)
{
	struct ls_episode *ep = ls_top(ts);

	if (!ep)
		return;
	ep->queued = 1;
	if (state < LS_OWNER_STATES && ep->owner_seen[state] < 255)
		ep->owner_seen[state]++;
}

/* A waiter was woken (sched_waking on it): credit its innermost queued episode. */
LS_INLINE void ls_woken(struct ls_task_state *ts)
{
	struct ls_episode *ep = ls_top(ts);

	if (ep) {
		ep->wakeups++;
		ep->queued = 1;
	}
}

/* 1 when x (below 2^32) is not zero, without a branch. */
#define LS_NONZERO32(x) ((((__u64)(x)) + 0xffffffffull) >> 32)

/*
 * floor(log2(v)) (0 for 0), capped at the last bucket. Branch-free: wait
 * times are data, and every mispredicted branch here would be paid at the
 * end of an episode, with the lock held.
 */
LS_INLINE __u32 ls_log2_bucket(__u64 v)
{
	__u64 r, t;

	r = LS_NONZERO32(v >> 32) << 5;
	v >>= r;
	t = LS_NONZERO32(v >> 16) << 4;
	v >>= t;
	r |= t;
	t = LS_NONZERO32(v >> 8) << 3;
	v >>= t;
	r |= t;
	t = LS_NONZERO32(v >> 4) << 2;
	v >>= t;
	r |= t;
	t = LS_NONZERO32(v >> 2) << 1;
	v >>= t;
	r |= t;
	r |= LS_NONZERO32(v >> 1);
	return r < LS_HIST_BUCKETS ? (__u32)r : LS_HIST_BUCKETS - 1;
}

/* Adds a finished episode to the task's own totals. */
LS_INLINE void ls_account_task(struct ls_task_state *ts, const struct ls_episode *ep, __u64 now)
{
	struct ls_task_totals *t = &ts->totals;

	t->contentions++;
	t->spin_attempts += ep->spin_attempts;
	t->wait_ns += now - ep->begin_ns;
	t->spin_ns += ep->spin_ns;
	if (ep->queued) {
		t->spin_failures += ep->spin_failures;
		t->sleep_ns += ep->sleep_ns;
		t->preempt_ns += ep->preempt_ns;
		t->sleeps += ep->sleeps;
	}
	ts->dirty = 1;
}

/* Hands a task's open episodes from one state to another (dst holds none). */
LS_INLINE void ls_move_episodes(struct ls_task_state *dst, struct ls_task_state *src)
{
	int i;

	dst->depth = src->depth;
	dst->switched_out_ns = src->switched_out_ns;
	dst->out_blocked = src->out_blocked;
	for (i = 0; i < LS_MAX_DEPTH; i++)
		dst->ep[i] = src->ep[i];
	src->depth = 0;
	src->switched_out_ns = 0;
}

/* Folds the totals gathered since a task was switched in into its own. */
LS_INLINE void ls_add_totals(struct ls_task_state *dst, struct ls_task_state *delta)
{
	struct ls_task_totals *d = &dst->totals, *s = &delta->totals;

	d->contentions += s->contentions;
	d->spin_attempts += s->spin_attempts;
	d->spin_failures += s->spin_failures;
	d->wait_ns += s->wait_ns;
	d->spin_ns += s->spin_ns;
	d->sleep_ns += s->sleep_ns;
	d->preempt_ns += s->preempt_ns;
	d->sleeps += s->sleeps;
	__builtin_memset(s, 0, sizeof(*s));
	dst->dirty = 1;
	delta->dirty = 0;
}

/*
 * Adds a finished episode to a lock's per-CPU counters. Most episodes are a
 * spin that won or a spinlock's wait: every counter that only a queueing,
 * sleep, preemption, wakeup or error moves is left alone for them (ep->queued
 * is 0 exactly when all of those are zero), which keeps the end of an
 * episode, run with the lock held, short.
 */
LS_INLINE void ls_account(struct ls_lock_stats *s, const struct ls_episode *ep, __u64 now, __s32 ret)
{
	__u64 wait = now - ep->begin_ns;
	__u32 b;
	int i;

	s->contentions++;
	s->spin_attempts += ep->spin_attempts;
	s->spin_successes += ep->spin_success;
	s->wait_ns += wait;
	s->spin_ns += ep->spin_ns;
	if (wait > s->max_wait_ns)
		s->max_wait_ns = wait;
	b = ls_log2_bucket(wait);
	if (b >= LS_HIST_BUCKETS)
		b = LS_HIST_BUCKETS - 1;
	s->hist[b]++;
	if (!ep->queued)
		return;
	s->spin_failures += ep->spin_failures;
	s->sleep_ns += ep->sleep_ns;
	s->preempt_ns += ep->preempt_ns;
	s->sleeps += ep->sleeps;
	s->preemptions += ep->preemptions;
	s->wakeups += ep->wakeups;
	if (ret != 0)
		s->errors++;
	for (i = 0; i < LS_OWNER_STATES; i++)
		s->owner[i] += ep->owner_seen[i];
}

#endif /* LOCKSCOPE_EPISODE_H */
