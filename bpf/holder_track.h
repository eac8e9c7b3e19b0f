/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The holder split (DESIGN.md "Metrics"): each waiter's wait in the parts
 * its lock's holder spent running on a CPU, runnable and asleep; the rest
 * of the wait is "unknown". lockscope_abi.h declares the state.
 *
 * How it is followed, with the scheduler events lockscope already takes:
 *  - A lock's known holders are followed for its queued waiters, one hold
 *    after another. A waiter that queues reads its lock's owner
 *    (owner_of()); a waiter that acquires the lock (its contention_end,
 *    ret 0, as a mutex, rtmutex or rwsem writer) is its successor; a woken
 *    waiter that finds another task in the owner word saw a holder take it
 *    unseen. Each begins a hold on the lock's record (holder_locks, one
 *    hash lookup at a queueing, a followed wakeup and an end), which ends
 *    the hold before it.
 *  - A hold's holder is watched: it gets a slot in holder_tracks, where
 *    sched_switch and sched_waking keep, while it is followed, the time it
 *    spends in each state (cumulative times, its current state and since
 *    when). A task no one follows costs a context switch a look at one
 *    cache line.
 *  - A hold's part is what its holder did from the hold's start up to its
 *    first release of the lock. A release is seen where it wakes a waiter
 *    (sched_waking in the releasing holder's context), or placed at the
 *    start of the running period at whose end the holder no longer owns
 *    the lock. The lock's record adds its holds' parts up; a waiter takes
 *    that sum as it begins following and as it stops (its end, or back on
 *    its CPU spinning), and the difference is its wait's parts. The time
 *    between a release and the next known hold is in no hold: unknown.
 *  - A mutex's optimistic spin lasts only while its owner runs on a CPU
 *    (mutex_spin_on_owner() stops when it does not): a spin phase's time on
 *    CPU is holder running, by that rule rather than by following.
 *  - Everything else is unknown: spinlocks and rwlocks (no owner field),
 *    reader-owned rwsems, a lock with no owner, a hold whose release was
 *    not seen, a switch the programs missed.
 *
 * This file is plain C with no helpers and no maps, so that unit tests run
 * the very code of the programs (as episode.h); holder_split.h, for BPF
 * only, has the maps and the programs' part.
 */
#ifndef LOCKSCOPE_HOLDER_TRACK_H
#define LOCKSCOPE_HOLDER_TRACK_H

#include "lockscope_abi.h"
#include "episode.h"

/* The holder's running, runnable and asleep times at @now. */
LS_INLINE void ls_holder_times(const struct ls_holder_track *t, __u64 now, __u64 v[LS_HOLDER_PARTS])
{
	__u64 d = now > t->since_ns ? now - t->since_ns : 0;

	v[LS_HOLDER_RUNNING] = t->cum[LS_HOLDER_RUNNING] + (t->state == LS_HOLDER_RUNNING ? d : 0);
	v[LS_HOLDER_RUNNABLE] = t->cum[LS_HOLDER_RUNNABLE] + (t->state == LS_HOLDER_RUNNABLE ? d : 0);
	v[LS_HOLDER_ASLEEP] = t->cum[LS_HOLDER_ASLEEP] + (t->state == LS_HOLDER_ASLEEP ? d : 0);
}

/* The state so far goes to cum[@from]; @to begins at @now. */
LS_INLINE void ls_holder_enter(struct ls_holder_track *t, __u64 now, __u32 from, __u32 to)
{
	if (now > t->since_ns) {
		t->cum[from & (LS_HOLDER_STATES - 1)] += now - t->since_ns;
		t->since_ns = now;
	}
	t->state = to;
}

/* Followed from @now on, in @state (read from the task by the first follower). */
LS_INLINE void ls_holder_start(struct ls_holder_track *t, __u64 now, __u32 state)
{
	t->since_ns = now;
	t->state = state;
	t->early_wake = 0;
}

/* Switched out: runnable (preempted, yielding, or woken before this switch
 * was seen) or asleep. A switch-out of a holder not seen running means a
 * switch-in was missed: the time since its last event is unseen. */
LS_INLINE void ls_holder_switch_out(struct ls_holder_track *t, __u64 now, int blocked)
{
	__u32 from = t->state == LS_HOLDER_RUNNING ? LS_HOLDER_RUNNING : LS_HOLDER_UNSEEN;

	ls_holder_enter(t, now, from, blocked && !t->early_wake ? LS_HOLDER_ASLEEP : LS_HOLDER_RUNNABLE);
	t->early_wake = 0;
}

/* Switched in; a switch-in of a holder seen running means a switch-out was missed. */
LS_INLINE void ls_holder_switch_in(struct ls_holder_track *t, __u64 now)
{
	__u32 from = t->state == LS_HOLDER_RUNNING ? LS_HOLDER_UNSEEN : t->state;

	ls_holder_enter(t, now, from, LS_HOLDER_RUNNING);
	t->early_wake = 0;
}

/* Woken (sched_waking): asleep -> runnable. @going_to_sleep: still on its CPU
 * in a schedule under way (switching_out_asleep()), whose switch-out, seen
 * later, is then runnable from its start. */
LS_INLINE void ls_holder_woken(struct ls_holder_track *t, __u64 now, int going_to_sleep)
{
	if (t->state == LS_HOLDER_ASLEEP)
		ls_holder_enter(t, now, LS_HOLDER_ASLEEP, LS_HOLDER_RUNNABLE);
	else if (t->state == LS_HOLDER_RUNNING && going_to_sleep)
		t->early_wake = 1;
}

/* The holder woke a waiter of @lock at @now: it released it. */
LS_INLINE void ls_holder_released(struct ls_holder_track *t, __u64 lock, __u64 now)
{
	struct ls_holder_release *r = &t->rel[t->releases & (LS_HOLDER_RELEASES - 1)];

	r->lock = lock;
	r->ns = now;
	ls_holder_times(t, now, r->v);
	t->releases++;
	if (lock == t->lock)
		t->holds = 0;
}

/*
 * Switched out (before ls_holder_switch_out()) no longer owning the lock it
 * held (t->lock) with no waiter woken: a release nobody queued for. Only a
 * running owner lets a lock go, so it did in the running period now ending;
 * the release is placed at its start, and that period is unknown to its
 * followers rather than guessed.
 */
LS_INLINE void ls_holder_let_go(struct ls_holder_track *t)
{
	if (t->holds && t->state == LS_HOLDER_RUNNING)
		ls_holder_released(t, t->lock, t->since_ns);
	t->holds = 0;
}

/* A follower takes the holder's times at @now. */
LS_INLINE void ls_follow_begin(struct ls_holder_follow *f, const struct ls_holder_track *t, __u64 task, __u32 slot,
			       __u64 now)
{
	f->task = task;
	f->slot = slot;
	f->gen = t->gen;
	f->releases = t->releases;
	f->snap_ns = now;
	ls_holder_times(t, now, f->snap);
}

/*
 * What the holder did since @f's snapshot, into @d: up to its first release
 * of the followed lock since then, else up to @now. @changed: the lock is
 * no longer its (the follower saw another owner, or took the lock itself),
 * so it let it go: where no release was seen, in its current running period
 * (ls_holder_let_go()), up to whose start it is followed. 0 when it is
 * unknown: a release not seen and not placed, or more releases than it
 * keeps (the first of them, not kept, may have been this lock's: a later
 * one is no stand-in).
 */
LS_INLINE int ls_follow_end(const struct ls_holder_follow *f, const struct ls_holder_track *t, __u64 now, int changed,
			    __u64 d[LS_HOLDER_PARTS])
{
	__u32 seen = t->releases - f->releases, first = f->releases;
	const __u64 *v = 0;
	__u64 at_now[LS_HOLDER_PARTS];
	int i;

	if (seen > LS_HOLDER_RELEASES)
		return 0;
	for (i = 0; i < LS_HOLDER_RELEASES; i++) {
		const struct ls_holder_release *r = &t->rel[(first + (__u32)i) & (LS_HOLDER_RELEASES - 1)];

		if (first + (__u32)i == t->releases)
			break;
		if (r->lock == f->lock) {
			v = r->v;
			break;
		}
	}
	if (!v) {
		if (changed) {
			/* let go unseen: in its current running period, if it runs
			 * and the switch-outs have checked this lock before */
			if (f->lock != t->lock || !t->holds || t->state != LS_HOLDER_RUNNING)
				return 0;
			now = t->since_ns;
		}
		ls_holder_times(t, now, at_now);
		v = at_now;
	}
	for (i = 0; i < LS_HOLDER_PARTS; i++)
		d[i] = v[i] > f->snap[i] ? v[i] - f->snap[i] : 0;
	return 1;
}

/*
 * A look at a lock's known holders: @d, the hold under way's part so far
 * (ls_follow_end(); 0: unknown), never taken as less than a look took
 * before, so that the lock's sum only grows. The hold's growth since the
 * last look, times the waiters following it, is waiting it caused. Into
 * @sum: the lock's sum, its closed holds' parts and this one's.
 */
LS_INLINE void ls_lock_look(struct ls_holder_lock *l, const __u64 *d, __u64 sum[LS_HOLDER_PARTS])
{
	int i;

	for (i = 0; i < LS_HOLDER_PARTS; i++) {
		__u64 v = d && d[i] > l->seen[i] ? d[i] : l->seen[i];

		l->caused[i] += (__u64)l->following * (v - l->mark[i]);
		l->seen[i] = v;
		l->mark[i] = v;
		sum[i] = l->cum[i] + v;
	}
}

/* The hold under way ends, after a look: its part joins the closed ones. */
LS_INLINE void ls_lock_close(struct ls_holder_lock *l)
{
	int i;

	for (i = 0; i < LS_HOLDER_PARTS; i++) {
		l->cum[i] += l->seen[i];
		l->seen[i] = 0;
		l->mark[i] = 0;
		l->caused[i] = 0;
	}
	l->cur.task = 0;
	l->joined = 0;
}

/* A hold begins (ls_follow_begin() on l->cur): the waiters following now follow it. */
LS_INLINE void ls_lock_open(struct ls_holder_lock *l)
{
	int i;

	for (i = 0; i < LS_HOLDER_PARTS; i++) {
		l->seen[i] = 0;
		l->mark[i] = 0;
		l->caused[i] = 0;
	}
	l->joined = l->following;
}

/* A waiter begins following its lock, at a look's @sum. */
LS_INLINE void ls_waiter_join(struct ls_waiter_follow *w, struct ls_holder_lock *l, const __u64 sum[LS_HOLDER_PARTS])
{
	int i;

	for (i = 0; i < LS_HOLDER_PARTS; i++)
		w->snap[i] = sum[i];
	w->following = 1;
	/* atomic: a waiter that cannot take the record's lock word at its end
	 * still leaves the count (ls_waiter_drop()) */
	__sync_fetch_and_add(&l->following, 1);
	l->joined++;
}

/* It stops, at a look's @sum: what the known holders did meanwhile is its. */
LS_INLINE void ls_waiter_leave(struct ls_waiter_follow *w, struct ls_holder_lock *l, const __u64 sum[LS_HOLDER_PARTS])
{
	int i;

	for (i = 0; i < LS_HOLDER_PARTS; i++)
		w->part[i] += sum[i] > w->snap[i] ? sum[i] - w->snap[i] : 0;
	w->following = 0;
	if (l->following)
		__sync_fetch_and_sub(&l->following, 1);
}

/* A waiter's episode on @l ends where the record's lock word could not be
 * taken: it leaves the counts (its last stretch of following is unknown). */
LS_INLINE void ls_waiter_drop(struct ls_waiter_follow *w, struct ls_holder_lock *l)
{
	if (w->following && l->following)
		__sync_fetch_and_sub(&l->following, 1);
	w->following = 0;
	if (l->waiters)
		__sync_fetch_and_sub(&l->waiters, 1);
}

/*
 * A followed episode's parts at its end (@now, timed): its following's, and
 * its spin phases' time on CPU as holder running (ls_spin_holder_running()).
 * A first spin comes before the queueing that starts the following; a woken
 * first waiter that spins again may be following then, so that its spin and
 * its following's running may be the same time: the larger of the two is
 * taken. Never more than its wait.
 */
LS_INLINE void ls_holder_episode_parts(const struct ls_episode *ep, const __u64 part[LS_HOLDER_PARTS], __u64 now,
				       __u64 out[LS_HOLDER_PARTS])
{
	__u64 wait = now > ep->begin_ns ? now - ep->begin_ns : 0, left = wait, spin;
	int i;

	for (i = LS_HOLDER_PARTS - 1; i >= 0; i--) {
		out[i] = part[i] < left ? part[i] : left;
		left -= out[i];
	}
	spin = ls_spin_holder_running(ep);
	if (ep->spin_attempts > 1)
		spin = spin > out[LS_HOLDER_RUNNING] ? spin - out[LS_HOLDER_RUNNING] : 0;
	out[LS_HOLDER_RUNNING] += spin < left ? spin : left;
}

#endif /* LOCKSCOPE_HOLDER_TRACK_H */
