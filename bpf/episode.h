/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The per-task contention episode state machine (DESIGN.md "Metrics").
 *
 * Plain C with no helpers and no maps, so that the BPF program and the
 * C++ unit tests run the very same code: the caller passes timestamps in
 * and acts on what the functions return (read the owner word, aggregate a
 * finished episode, count a loss). The state it works on (ls_task_state,
 * ls_cpu_state) is declared in lockscope_abi.h: user space reads it too.
 *
 * Sequences this kernel emits (flags: SPIN=1 READ=2 WRITE=4 RT=8 PERCPU=16 MUTEX=32):
 *   mutex:   B(MUTEX|SPIN) E             spin (or trylock) win
 *            B(MUTEX|SPIN) B(MUTEX) ... E  spin failed, queued
 *            ... B(MUTEX|SPIN) E | B(MUTEX)  woken first waiter spins again
 *   rwsem:   B(READ|WRITE) E             queued waits only
 *   RT:      B(RT[|READ|WRITE]) E        PREEMPT_RT's rtmutex-based locks: queued
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

/*
 * @timed: whether a new episode is timed (record --sample times one in N). An
 * untimed episode runs the same state machine with every timestamp 0 (the
 * caller passes now = 0 to its begins and end): its wait and spin are 0,
 * while its counts are kept. Its switches are timed all the same: a waiter
 * switched out costs microseconds, the clock there little, and the rare long
 * waits are off CPU, which sampling would estimate worst.
 */
LS_INLINE int ls_begin_timed(struct ls_task_state *ts, __u64 lock, __u32 flags, __u64 now, int timed)
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

	/* A task that begins runs: a switch-out left from before a switch-in
	 * the programs did not see must not be charged to this episode, and an
	 * untimed one (begin_ns 0) has no begin to bound it with. */
	if (d == 0)
		ts->switched_out_ns = 0;
	ep = &ts->ep[d];
	__builtin_memset(ep, 0, sizeof(*ep));
	ep->lock = lock;
	ep->begin_ns = now;
	ep->phase_ns = now;
	ep->flags = flags & LS_F_KIND_MASK;
	ep->timed = timed != 0;
	if (ls_is_spinlock(flags))
		ep->flags |= LCB_F_SPIN; /* keeps spinlock and rwlock apart from rwsem */
	if (ls_is_sleeping_spinner(flags) && spin) {
		ep->spin_attempts = 1;
		ep->in_spin = 1;
	}
	ts->depth = d + 1;
	/* A mutex or rwsem entered without a spin phase queues right away; so
	 * does every PREEMPT_RT lock (rtmutex-based: its begin is the
	 * task_blocks_on_rt_mutex() that enqueues the waiter). */
	if ((flags & (LCB_F_RT | LS_F_USER)) == LCB_F_RT ||
	    (!spin && (flags & (LCB_F_MUTEX | LCB_F_READ | LCB_F_WRITE)) && !(flags & (LCB_F_PERCPU | LS_F_USER)))) {
		ep->queued = 1;
		return LS_BEGIN_QUEUED;
	}
	return LS_BEGIN_NEW;
}

/* A begin with every episode timed. */
LS_INLINE int ls_begin(struct ls_task_state *ts, __u64 lock, __u32 flags, __u64 now)
{
	return ls_begin_timed(ts, lock, flags, now, 1);
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

/* Ends the popped episode's clock at @now: its last spin phase, a spinlock's wait. */
LS_INLINE void ls_stop_clock(struct ls_episode *out, __u64 now)
{
	if (out->in_spin)
		out->spin_ns += now - out->phase_ns;
	if (ls_is_spinlock(out->flags))
		out->spin_ns = now - out->begin_ns;
}

/* ls_end() without the clock: the caller learns from out->timed whether to
 * read it (0 for an untimed episode) and calls ls_stop_clock(). */
LS_INLINE int ls_pop(struct ls_task_state *ts, __u64 lock, __s32 ret, struct ls_episode *out,
		     __u32 *abandoned)
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
		if (out->in_spin)
			out->spin_success = ret == 0;
		if (ret != 0)
			out->queued = 1;
		*abandoned = d - 1 - (__u32)i;
		ts->depth = (__u32)i;
		return 1;
	}
	return 0;
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
	if (!ls_pop(ts, lock, ret, out, abandoned))
		return 0;
	ls_stop_clock(out, now);
	return 1;
}

LS_INLINE void ls_switch_out(struct ls_task_state *ts, __u64 now, int blocked)
{
	if (ts->depth == 0)
		return;
	ts->switched_out_ns = now;
	ts->woken_ns = 0;
	ts->out_blocked = blocked != 0;
}

/* Whether a waker's clock is wanted: the task sleeps and was not woken yet. */
LS_INLINE int ls_wants_wake_time(const struct ls_task_state *ts)
{
	return ts->switched_out_ns && ts->out_blocked && !ts->woken_ns;
}

/* A sleeping waiter was woken at @now: from then on, until it runs, it is
 * runnable, not asleep (it waits for a CPU, not for the lock). */
LS_INLINE void ls_mark_woken(struct ls_task_state *ts, __u64 now)
{
	if (ls_wants_wake_time(ts) && now >= ts->switched_out_ns)
		ts->woken_ns = now;
}

LS_INLINE void ls_switch_in(struct ls_task_state *ts, __u64 now)
{
	__u64 off, woke = ts->woken_ns, ready;
	__u32 d = ts->depth;
	int i;

	if (ts->switched_out_ns == 0)
		return;
	off = now - ts->switched_out_ns;
	/* a sleep's tail after its wakeup waited for a CPU: runnable */
	ready = ts->out_blocked && woke >= ts->switched_out_ns && woke <= now ? now - woke : 0;
	ts->switched_out_ns = 0;
	ts->woken_ns = 0;
	/* Every open episode waited through this switch. */
	for (i = 0; i < LS_MAX_DEPTH; i++) {
		struct ls_episode *ep = &ts->ep[i];

		if ((__u32)i >= d)
			break;
		if (ep->begin_ns > now - off)
			off = now - ep->begin_ns; /* opened while out: cannot happen, be safe */
		if (ready > off)
			ready = off;
		if (ts->out_blocked) {
			ep->sleep_ns += off - ready;
			ep->preempt_ns += ready;
			ep->sleeps++;
		} else {
			ep->preempt_ns += off;
			ep->preemptions++;
		}
		/* The tracepoints still say "spinning" for a spinner that gave
		 * up its CPU (mutex_optimistic_spin() reschedules on
		 * need_resched before the begin that marks queueing): that time
		 * is off CPU, and the wait's parts must not count it twice. An
		 * untimed episode has no spin time to take it from. */
		if (ep->timed && (ep->in_spin || ls_is_spinlock(ep->flags)))
			ep->spin_offcpu_ns += off;
		if (ep->in_spin && !ts->out_blocked)
			ep->spin_yields++;
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

/* At a switch-out, blocked, seen after its wakeup (woken_early_ns): the task
 * waited for a CPU, not for the lock, from the switch on. Spin phases take no
 * wake time (on_sched_waking). */
LS_INLINE void ls_take_early_wake(struct ls_task_state *ts)
{
	__u64 early = ts->woken_early_ns;
	struct ls_episode *ep = ls_top(ts);

	ts->woken_early_ns = 0;
	if (!early || !ep || ep->in_spin || !ls_wants_wake_time(ts))
		return;
	ts->woken_ns = ts->switched_out_ns;
	ls_woken(ts);
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

/* The part of a finished timed episode's wait that is not off CPU: what
 * record --sample estimates (its off-CPU time is measured in every episode). */
LS_INLINE __u64 ls_on_cpu_wait(const struct ls_episode *ep, __u64 now)
{
	__u64 wait = now - ep->begin_ns, off = ep->sleep_ns + ep->preempt_ns;

	return wait > off ? wait - off : 0;
}

/*
 * A kernel mutex spins only while its owner runs on a CPU: mutex_spin_on_owner()
 * stops when the owner is not on one. A spin phase's time on CPU is thus time
 * its holder ran (the holder split, holder_track.h), by the kernel's rule.
 */
LS_INLINE __u64 ls_spin_holder_running(const struct ls_episode *ep)
{
	if ((ep->flags & (LCB_F_MUTEX | LS_F_USER)) != LCB_F_MUTEX)
		return 0;
	return ep->spin_ns > ep->spin_offcpu_ns ? ep->spin_ns - ep->spin_offcpu_ns : 0;
}

/* Adds a finished episode to the task's own totals; @sampled as ls_account's. */
LS_INLINE void ls_account_task(struct ls_task_state *ts, const struct ls_episode *ep, __u64 now, int sampled)
{
	struct ls_task_totals *t = &ts->totals;

	t->contentions++;
	t->spin_attempts += ep->spin_attempts;
	if (ep->timed)
		t->wait_ns += sampled ? ls_on_cpu_wait(ep, now) : now - ep->begin_ns;
	t->spin_ns += ep->spin_ns;
	t->spin_offcpu_ns += ep->spin_offcpu_ns;
	if (ep->queued) {
		t->spin_failures += ep->spin_failures;
		t->sleep_ns += ep->sleep_ns;
		t->preempt_ns += ep->preempt_ns;
		t->sleeps += ep->sleeps;
	}
	t->timed += ep->timed;
	ts->dirty = 1;
}

/* Hands a task's open episodes from one state to another (dst holds none). */
LS_INLINE void ls_move_episodes(struct ls_task_state *dst, struct ls_task_state *src)
{
	int i;

	dst->depth = src->depth;
	dst->switched_out_ns = src->switched_out_ns;
	dst->woken_ns = src->woken_ns;
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

	/* Each of the totals' counters: the list that declares them. */
#define LS_ADD_TOTAL(name) d->name += s->name;
	LS_TASK_COUNTERS(LS_ADD_TOTAL)
#undef LS_ADD_TOTAL
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
 *
 * @sampled (record --sample): an untimed episode (now and its timestamps 0)
 * adds its counts and its off-CPU times, measured in every episode; a timed
 * one adds, as wait_ns, only the rest of its wait (on CPU), and its square,
 * for the variance of the estimate. User space adds the two parts back
 * together (collector/pipeline/sampled_timing.h).
 */
LS_INLINE void ls_account(struct ls_lock_stats *s, const struct ls_episode *ep, __u64 now, __s32 ret,
			  int sampled)
{
	__u64 wait = now - ep->begin_ns, w;
	__u32 b;
	int i;

	s->contentions++;
	s->spin_attempts += ep->spin_attempts;
	s->spin_successes += ep->spin_success;
	s->timed += ep->timed;
	if (ep->timed) {
		s->wait_ns += sampled ? ls_on_cpu_wait(ep, now) : wait;
		s->spin_ns += ep->spin_ns;
		s->spin_offcpu_ns += ep->spin_offcpu_ns;
		/* a followed episode's end added all its holder parts */
		if (!ep->holder_follow)
			s->holder_running_ns += ls_spin_holder_running(ep);
		if (wait > s->max_wait_ns)
			s->max_wait_ns = wait;
		b = ls_log2_bucket(wait);
		if (b >= LS_HIST_BUCKETS)
			b = LS_HIST_BUCKETS - 1;
		s->hist[b]++;
		if (sampled) {
			/* 256 ns units, rounded: a square of ns overflows past 4 s.
			 * Here wait_var_us2 holds the sum of these squares, in
			 * (256 ns)^2; user space makes it the variance in us^2. */
			w = (ls_on_cpu_wait(ep, now) + 128) >> 8;
			if (w > 0xffffffffull)
				w = 0xffffffffull;
			s->wait_var_us2 += w * w;
		}
	}
	if (!ep->queued)
		return;
	s->spin_failures += ep->spin_failures;
	s->sleep_ns += ep->sleep_ns;
	s->preempt_ns += ep->preempt_ns;
	s->sleeps += ep->sleeps;
	s->preemptions += ep->preemptions;
	s->spin_yields += ep->spin_yields;
	s->wakeups += ep->wakeups;
	if (ret != 0)
		s->errors++;
	for (i = 0; i < LS_OWNER_STATES; i++)
		s->owner[i] += ep->owner_seen[i];
}

#endif /* LOCKSCOPE_EPISODE_H */
