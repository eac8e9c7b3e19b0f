/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The holder split's locks: each lock's known holders followed one after
 * another for its queued waiters, and the waiters' part of the BPF programs
 * (holder_track.h says how; holder_split.h has the watched holders' slots).
 * Included by lockscope.bpf.c after holder_split.h.
 */
#ifndef LOCKSCOPE_HOLDER_CHAIN_H
#define LOCKSCOPE_HOLDER_CHAIN_H

#include "holder_split.h"

/* A kernel-lock waiter's following of its lock (ls_waiter_follow). */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct ls_waiter_follow);
} holder_follow SEC(".maps");

/* The locks' known holders (ls_holder_lock), by the lock's address; the
 * least recently used goes when it is full. */
#define LS_MAX_HOLDER_LOCKS 4096
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, LS_MAX_HOLDER_LOCKS);
	__type(key, u64);
	__type(value, struct ls_holder_lock);
} holder_locks SEC(".maps");

/* A zeroed record, for a new lock's. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct ls_holder_lock);
} holder_lock_zero SEC(".maps");

/* A closed hold: who held the lock, and the waiting it caused. */
struct ls_holder_closed {
	struct ls_holder_who who;
	u64 caused[LS_HOLDER_PARTS];
	u64 waits;
};

/* Off the stack: one per CPU for each kind of program that closes holds
 * (these may run nested in one another, in an interrupt). */
#define LS_CLOSED_CONTENTION 0
#define LS_CLOSED_WAKING     1
#define LS_CLOSED_SWITCH     2
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 3);
	__type(key, u32);
	__type(value, struct ls_holder_closed);
} holder_closed SEC(".maps");

/* The CPU's zeroed closed-hold record for programs of kind @kind. */
static __always_inline struct ls_holder_closed *holder_closed_buf(u32 kind)
{
	struct ls_holder_closed *c = bpf_map_lookup_elem(&holder_closed, &kind);

	if (c)
		__builtin_memset(c, 0, sizeof(*c));
	return c;
}

/* A look at @l (held) at @now (@changed: the lock is no longer its current
 * holder's, see ls_follow_end()): the lock's sum into @sum (ls_lock_look()),
 * and who holds it into @who (if not 0). */
static __always_inline void holder_look(struct ls_holder_keys *keys, struct ls_holder_lock *l, u64 now, int changed,
					u64 sum[LS_HOLDER_PARTS], struct ls_holder_who *who)
{
	struct ls_holder_track *t = l->cur.task ? holder_track((int)l->cur.slot) : 0;
	u32 s = l->cur.slot & (LS_HOLDER_SLOTS - 1);
	u64 d[LS_HOLDER_PARTS] = {};
	int ok = 0;

	if (t && holder_lock(t)) {
		if (keys->task[s] == l->cur.task && t->gen == l->cur.gen) {
			ok = ls_follow_end(&l->cur, t, now, changed, d);
			if (who) {
				who->tid = t->tid;
				who->tgid = t->tgid;
				who->preempt_tid = t->preempt_tid;
				who->preempt_tgid = t->preempt_tgid;
				__builtin_memcpy(who->comm, t->comm, sizeof(who->comm));
				__builtin_memcpy(who->preempt_comm, t->preempt_comm, sizeof(who->preempt_comm));
			}
		}
		holder_unlock(t);
	} else if (t) {
		holder_missed();
	}
	ls_lock_look(l, ok ? d : 0, sum);
}

/* Whether the holder of the hold under way on @l has let a lock go since
 * the hold began (read without its slot's lock word: a hint). Found owning
 * the lock, it may have taken it anew: its hold ends (at its release of the
 * lock, if that was one; else now, as it goes on) and a new one begins. */
static __always_inline bool holder_released_since(struct ls_holder_lock *l)
{
	struct ls_holder_track *t = holder_track((int)l->cur.slot);

	return !t || *(volatile u32 *)&t->releases != l->cur.releases;
}

/* The hold under way on @l (held) ends at @now (@changed as holder_look's);
 * what it caused into @c, for holder_rows() once @l is let go. */
static __always_inline bool holder_close(struct ls_holder_keys *keys, struct ls_holder_lock *l, u64 now, int changed,
					 struct ls_holder_closed *c)
{
	u64 sum[LS_HOLDER_PARTS];

	if (!l->cur.task)
		return false;
	holder_look(keys, l, now, changed, sum, &c->who);
	for (int i = 0; i < LS_HOLDER_PARTS; i++)
		c->caused[i] = l->caused[i];
	c->waits = l->joined;
	holder_unfollow(keys, &l->cur, now);
	ls_lock_close(l);
	return c->who.tid && (c->caused[0] | c->caused[1] | c->caused[2]);
}

/* @l (held) begins a hold of @holder (in owner state @owner) at @now. */
static __always_inline void holder_open(struct ls_counters *cnt, struct ls_holder_lock *l, struct task_struct *holder,
					u32 owner, u64 now)
{
	holder_start(cnt, &l->cur, holder, owner, now);
	if (l->cur.task)
		ls_lock_open(l);
}

/* A closed hold's waiting on its holder's (and its preempter's) holder_times rows. */
static __always_inline void holder_rows(struct ls_counters *cnt, u64 lock, u32 flags, const struct ls_holder_closed *c)
{
	holder_time_add(cnt, lock, flags, c->who.tid, LS_HOLDER_TIME_HOLDER, c->who.tgid, c->who.comm, c->caused,
			c->waits);
	if (c->caused[LS_HOLDER_RUNNABLE] && c->who.preempt_tid) {
		u64 runnable[LS_HOLDER_PARTS] = { 0, c->caused[LS_HOLDER_RUNNABLE], 0 };

		holder_time_add(cnt, lock, flags, c->who.preempt_tid, LS_HOLDER_TIME_PREEMPTOR, c->who.preempt_tgid,
				c->who.preempt_comm, runnable, c->waits);
	}
}

/* The record of @lock (@flags), made if @create and there is none. */
static __always_inline struct ls_holder_lock *holder_record(struct ls_counters *cnt, u64 lock, u32 flags, bool create)
{
	struct ls_holder_lock *l = bpf_map_lookup_elem(&holder_locks, &lock), *zero;
	u32 key = 0;

	if (l || !create)
		return l;
	zero = bpf_map_lookup_elem(&holder_lock_zero, &key);
	if (!zero)
		return 0;
	bpf_map_update_elem(&holder_locks, &lock, zero, BPF_NOEXIST);
	l = bpf_map_lookup_elem(&holder_locks, &lock);
	if (!l)
		cnt->holder_untracked++;
	return l;
}

/*
 * A waiter (@w, 0: one not followed) of @l (held) ends at @now; @acquired:
 * it holds the lock now, the hold before its own is over (if it was not
 * its own). While waiters remain the acquirer's hold begins; when none do,
 * the hold under way is no longer followed. At most one hold closes, into @c.
 */
static __always_inline bool holder_waiter_ends(struct ls_counters *cnt, struct ls_holder_keys *keys,
					       struct ls_holder_lock *l, struct ls_waiter_follow *w, bool acquired,
					       u64 now, struct ls_holder_closed *c)
{
	u64 current = bpf_get_current_task(), sum[LS_HOLDER_PARTS];
	bool closed = false;

	/* its own hold, if it was known as the holder already, ends here too:
	 * up to now, or to its release if it took the lock anew */
	if (acquired)
		closed = holder_close(keys, l, now, l->cur.task != current, c);
	if (w && w->following) {
		holder_look(keys, l, now, 0, sum, 0);
		ls_waiter_leave(w, l, sum);
	}
	if (w && l->waiters)
		__sync_fetch_and_sub(&l->waiters, 1);
	if (!l->waiters)
		closed |= holder_close(keys, l, now, 0, c);
	else if (acquired && !l->cur.task)
		holder_open(cnt, l, bpf_get_current_task_btf(), LS_OWNER_ON_CPU, now);
	return closed;
}

/* @w's episode is over unseen (a new one began): it leaves its lock's record. */
static __always_inline void holder_waiter_gone(struct ls_counters *cnt, struct ls_holder_keys *keys,
					       struct ls_waiter_follow *w, u32 kind)
{
	struct ls_holder_lock *l = holder_record(cnt, w->lock, w->flags, false);
	struct ls_holder_closed *c = holder_closed_buf(kind);
	bool closed;

	if (!l || !c)
		return;
	if (!seq_lock(&l->seq)) {
		ls_waiter_drop(w, l);
		return;
	}
	closed = holder_waiter_ends(cnt, keys, l, w, false, bpf_ktime_get_ns(), c);
	seq_unlock(&l->seq);
	if (closed)
		holder_rows(cnt, w->lock, w->flags, c);
}

/*
 * contention_begin, the current task queueing: @ep (timed) waits for @lock
 * behind @holder (the owner word's task, 0: none, in owner state @owner).
 * A new episode joins its lock's record; a holder that is not the record's
 * current one, or one that may have taken it anew, begins a hold; and the
 * waiter follows the lock's holds, if it does not already.
 */
static __always_inline void holder_queued(struct ls_counters *cnt, struct ls_episode *ep, u64 lock,
					  struct task_struct *holder, u32 owner, u32 kind)
{
	struct ls_holder_keys *keys = holder_key_table();
	struct ls_holder_closed *c;
	struct ls_waiter_follow *w;
	struct ls_holder_lock *l;
	u64 now, busy, sum[LS_HOLDER_PARTS];
	bool closed = false;

	if (!keys || !ep->timed || (!holder && owner != LS_OWNER_NONE && !ep->holder_follow))
		return;
	busy = own_locks_enter(cnt);
	w = bpf_task_storage_get(&holder_follow, bpf_get_current_task_btf(), 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	cnt->busy = busy;
	if (!w) {
		cnt->lost_task_storage++;
		return;
	}
	if (w->lock && (w->lock != lock || !ep->holder_follow))
		holder_waiter_gone(cnt, keys, w, kind);
	l = holder_record(cnt, lock, ep->flags, true);
	c = holder_closed_buf(kind);
	if (!l || !c)
		return;
	if (!seq_lock(&l->seq)) {
		holder_missed();
		return;
	}
	if (!l->cur.lock) {
		l->cur.lock = lock;
		l->cur.flags = ep->flags;
	}
	now = bpf_ktime_get_ns();
	if (w->lock != lock || !ep->holder_follow) {
		__builtin_memset(w, 0, sizeof(*w));
		w->lock = lock;
		w->flags = ep->flags;
		ep->holder_follow = 1;
		__sync_fetch_and_add(&l->waiters, 1);
	}
	if (holder && ((u64)holder != l->cur.task || holder_released_since(l))) {
		closed = holder_close(keys, l, now, (u64)holder != l->cur.task, c);
		holder_open(cnt, l, holder, owner, now);
	}
	if (!w->following) {
		holder_look(keys, l, now, 0, sum, 0);
		ls_waiter_join(w, l, sum);
	}
	seq_unlock(&l->seq);
	if (closed)
		holder_rows(cnt, lock, ep->flags, c);
}

/*
 * A waiter of @ep's lock, followed, found @owner (in owner state @owner_state)
 * in its owner word: if it is not the lock's known holder, or is one that
 * may have taken it anew (holder_released_since()), its hold begins. @kind: the program's (holder_closed_buf()).
 */
static __always_inline void holder_seen(struct ls_counters *cnt, struct ls_holder_keys *keys,
					const struct ls_episode *ep, struct task_struct *owner, u32 owner_state, u32 kind)
{
	struct ls_holder_lock *l = holder_record(cnt, ep->lock, ep->flags, false);
	struct ls_holder_closed *c;
	bool closed = false;

	if (!l)
		return;
	c = holder_closed_buf(kind);
	if (!c || !seq_lock(&l->seq))
		return;
	if (l->waiters && (l->cur.task != (u64)owner || holder_released_since(l))) {
		u64 now = bpf_ktime_get_ns();

		closed = holder_close(keys, l, now, l->cur.task != (u64)owner, c);
		holder_open(cnt, l, owner, owner_state, now);
	}
	seq_unlock(&l->seq);
	if (closed)
		holder_rows(cnt, ep->lock, ep->flags, c);
}

/*
 * sched_waking of @p, a queued waiter of @lock (@flags) whose episode is
 * followed. The current task, if a watched holder, has just let @lock go;
 * a task in the owner word that is neither the lock's known holder nor @p
 * took it unseen.
 */
static __always_inline void holder_waiter_woken(struct task_struct *p, const struct ls_episode *ep)
{
	struct ls_holder_keys *keys = holder_key_table();
	struct ls_cpu_state *cpu_state;
	u64 current = bpf_get_current_task();
	struct ls_holder_track *t;
	struct task_struct *owner;
	u32 state;
	int slot;

	if (!keys)
		return;
	slot = holder_slot(keys, current, (u32)bpf_get_current_pid_tgid());
	t = slot >= 0 ? holder_track(slot) : 0;
	if (t && t->followers) {
		u64 now = bpf_ktime_get_ns();

		if (holder_lock(t)) {
			if (keys->task[(u32)slot & (LS_HOLDER_SLOTS - 1)] == current)
				ls_holder_released(t, ep->lock, now);
			holder_unlock(t);
		} else {
			holder_missed();
		}
	}
	if (!ep->holder_follow)
		return;
	state = owner_of(ep->lock, ep->flags, &owner);
	cpu_state = this_cpu_state();
	if (owner && owner != p && cpu_state)
		holder_seen(&cpu_state->cnt, keys, ep, owner, state, LS_CLOSED_WAKING);
}

/*
 * sched_switch of the waiter @prev (its episodes in @ts, on its CPU).
 * Switched out runnable in a mutex's spin phase, the spinner gave up its
 * CPU (need_resched) and waits on, off CPU, where the spin rule says
 * nothing: it follows the lock again until it runs. Switched out asleep in
 * a followed wait, it looks at the owner word once more: a woken waiter
 * that found the lock taken by a task that did not queue goes back to
 * sleep here, and that task's hold begins.
 */
static __always_inline void holder_waiter_out(struct ls_counters *cnt, struct ls_task_state *ts,
					      struct task_struct *prev, int blocked)
{
	struct ls_episode *ep = ls_top(ts);
	struct ls_holder_keys *keys;
	struct task_struct *owner;
	u32 state;

	if (!ep || !ep->timed)
		return;
	if (!blocked && ep->in_spin && (ep->flags & (LCB_F_MUTEX | LS_F_USER)) == LCB_F_MUTEX) {
		state = owner_of(ep->lock, ep->flags, &owner);
		holder_queued(cnt, ep, ep->lock, owner, state, LS_CLOSED_SWITCH);
		return;
	}
	if (!blocked || ep->in_spin || !ep->holder_follow)
		return;
	state = owner_of(ep->lock, ep->flags, &owner);
	keys = holder_key_table();
	if (keys && owner && owner != prev)
		holder_seen(cnt, keys, ep, owner, state, LS_CLOSED_SWITCH);
}

/* sched_switch of @next, whose episodes are in @ts now: a spinner back on
 * its CPU stops following (its spin is holder running again). */
static __always_inline void holder_spin_in(struct ls_counters *cnt, struct ls_task_state *ts, struct task_struct *next)
{
	struct ls_holder_keys *keys = holder_key_table();
	struct ls_episode *ep = ls_top(ts);
	struct ls_waiter_follow *w;
	struct ls_holder_lock *l;
	struct task_struct *owner;
	u64 sum[LS_HOLDER_PARTS];

	if (!keys || !ep || !ep->in_spin || !ep->holder_follow)
		return;
	w = bpf_task_storage_get(&holder_follow, next, 0, 0);
	if (!w || w->lock != ep->lock || !w->following)
		return;
	l = holder_record(cnt, ep->lock, ep->flags, false);
	if (!l)
		return;
	owner_of(ep->lock, ep->flags, &owner);
	if (!seq_lock(&l->seq)) {
		holder_missed();
		return;
	}
	holder_look(keys, l, bpf_ktime_get_ns(), (u64)owner != l->cur.task, sum, 0);
	ls_waiter_leave(w, l, sum);
	seq_unlock(&l->seq);
}

/* A lock whose waiter, acquiring it, is its next holder: mutexes, rtmutexes
 * and rwsems taken as a writer. */
static __always_inline bool holder_successor_kind(u32 flags)
{
	return !(flags & (LCB_F_READ | LCB_F_SPIN | LCB_F_PERCPU | LS_F_USER)) &&
	       (flags & (LCB_F_MUTEX | LCB_F_RT | LCB_F_WRITE));
}

/* The waiters bits of a mutex's owner word (kernel/locking/mutex.h) and of
 * an rwsem's count (kernel/locking/rwsem.c). */
#define LS_MUTEX_FLAG_WAITERS 0x01UL
#define LS_RWSEM_FLAG_WAITERS (1UL << 1)

/* Whether @lock (@flags, a holder_successor_kind()) may have waiters queued:
 * a mutex's or an rwsem's own word says; an rtmutex is looked up, and so is
 * any lock of a kernel without these words (PREEMPT_RT's mutex and rwsem
 * are rtmutex-based: reading a field it lacks would fail the load). */
static __always_inline bool holder_lock_has_waiters(u64 lock, u32 flags)
{
	if ((flags & LCB_F_RT) || !bpf_core_field_exists(((struct mutex *)0)->owner) ||
	    !bpf_core_field_exists(((struct rw_semaphore *)0)->count))
		return true;
	if (flags & LCB_F_MUTEX)
		return BPF_CORE_READ((struct mutex *)lock, owner.counter) & LS_MUTEX_FLAG_WAITERS;
	return BPF_CORE_READ((struct rw_semaphore *)lock, count.counter) & LS_RWSEM_FLAG_WAITERS;
}

/*
 * contention_end of @ep (timed) on @lock at @now, @ret: a followed episode's
 * following ends (its parts into @out, returned true), and a waiter that
 * acquired the lock begins the lock's next hold, if it has a record.
 */
static __always_inline bool holder_ended(struct ls_counters *cnt, const struct ls_episode *ep, u64 lock, s32 ret,
					 u64 now, u64 out[LS_HOLDER_PARTS])
{
	struct ls_holder_keys *keys = holder_key_table();
	struct ls_waiter_follow *w = 0;
	struct ls_holder_closed *c = 0;
	struct ls_holder_lock *l;
	u64 none[LS_HOLDER_PARTS] = {};
	bool closed = false, acquired = ret == 0 && holder_successor_kind(ep->flags);

	if (ep->holder_follow) {
		w = bpf_task_storage_get(&holder_follow, bpf_get_current_task_btf(), 0, 0);
		if (w && w->lock != lock)
			w = 0;
	}
	/* an acquirer nobody queued behind costs a word's read, not a lookup */
	if (!w && acquired)
		acquired = holder_lock_has_waiters(lock, ep->flags);
	if (keys && (w || acquired)) {
		l = holder_record(cnt, lock, ep->flags, false);
		c = l ? holder_closed_buf(LS_CLOSED_CONTENTION) : 0;
		if (c && seq_lock(&l->seq)) {
			closed = holder_waiter_ends(cnt, keys, l, w, acquired, now, c);
			seq_unlock(&l->seq);
		} else if (c) {
			holder_missed();
			if (w)
				ls_waiter_drop(w, l);
		}
	}
	if (closed && c)
		holder_rows(cnt, lock, ep->flags, c);
	if (!ep->holder_follow)
		return false;
	ls_holder_episode_parts(ep, w ? w->part : none, now, out);
	if (w)
		w->lock = 0;
	return true;
}

/* contention_end of a followed episode @ep on @lock at @now, just added to
 * its lock's counters @s: its parts go there too. */
static __always_inline void holder_end(struct ls_lock_stats *s, const u64 out[LS_HOLDER_PARTS])
{
	s->holder_running_ns += out[LS_HOLDER_RUNNING];
	s->holder_runnable_ns += out[LS_HOLDER_RUNNABLE];
	s->holder_asleep_ns += out[LS_HOLDER_ASLEEP];
}

#endif /* LOCKSCOPE_HOLDER_CHAIN_H */
