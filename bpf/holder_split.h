/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The holder split's maps and its part of the BPF programs (the states and
 * their times, in plain C: holder_track.h, which says how it is followed).
 * Included by lockscope.bpf.c where what it uses is defined
 * (this_cpu_state(), own_locks_enter(), owner_of()).
 */
#ifndef LOCKSCOPE_HOLDER_SPLIT_H
#define LOCKSCOPE_HOLDER_SPLIT_H

#include "holder_track.h"

/* The watched holders' task pointers (ls_holder_keys): read on every context switch. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct ls_holder_keys);
} holder_keys SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LS_HOLDER_SLOTS);
	__type(key, u32);
	__type(value, struct ls_holder_track);
} holder_tracks SEC(".maps");

/* A kernel-lock waiter's following (ls_holder_follow). */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct ls_holder_follow);
} holder_follow SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LS_MAX_HOLDER_TIMES);
	__type(key, struct ls_holder_time_key);
	__type(value, struct ls_holder_time);
} holder_times SEC(".maps");

/* A slot whose followers have neither joined nor left for this long has
 * lost them (episodes that ended unseen): it may be given to another task. */
#define LS_HOLDER_STALE_NS (30ULL * 1000000000ULL)
#define LS_HOLDER_LOCK_TRIES 64

/* A runnable holder's CPU and what runs there: the holder's run queue, from
 * its cfs_rq as percpu_bases.bpf.c finds it (every task has one). */
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

/* The task that preempted a holder (what its CPU switched to). */
struct ls_holder_preempter {
	u32 tid, tgid;
	char comm[16];
};

/* Who held a lock, as a leaving follower copies it out of the slot. */
struct ls_holder_who {
	u32 tid, tgid, preempt_tid, preempt_tgid;
	char comm[16];
	char preempt_comm[16];
};

static __always_inline struct ls_holder_keys *holder_key_table(void)
{
	u32 zero = 0;

	return bpf_map_lookup_elem(&holder_keys, &zero);
}

static __always_inline struct ls_holder_track *holder_track(int slot)
{
	u32 key = (u32)slot & (LS_HOLDER_SLOTS - 1);

	return bpf_map_lookup_elem(&holder_tracks, &key);
}

/* The first of a task's LS_HOLDER_WAYS places, from its thread id. */
static __always_inline u32 holder_base(u32 tid)
{
	return ((tid * 0x9E3779B1U) >> (32 - LS_HOLDER_SLOT_BITS)) & ~(LS_HOLDER_WAYS - 1);
}

/* The slot of a watched task, or -1. */
static __always_inline int holder_slot(struct ls_holder_keys *keys, u64 task, u32 tid)
{
	u32 base = holder_base(tid);

	for (u32 w = 0; w < LS_HOLDER_WAYS; w++)
		if (keys->task[(base + w) & (LS_HOLDER_SLOTS - 1)] == task)
			return (int)((base + w) & (LS_HOLDER_SLOTS - 1));
	return -1;
}

/* A slot's lock word: held by at most one program at a time, which may run
 * on another CPU or, interrupted, below this one: a few tries, then give up
 * (the caller counts the event as missed). */
static __always_inline bool holder_lock(struct ls_holder_track *t)
{
	for (int i = 0; i < LS_HOLDER_LOCK_TRIES; i++) {
		u32 s = *(volatile u32 *)&t->seq;

		if (!(s & 1) && __sync_val_compare_and_swap(&t->seq, s, s + 1) == s)
			return true;
	}
	return false;
}

static __always_inline void holder_unlock(struct ls_holder_track *t)
{
	__sync_fetch_and_add(&t->seq, 1);
}

/* A slot for @holder: its own, else a free one (or a stale one) of its
 * places, given to it. -1: all its places are taken. */
static __always_inline int holder_claim(struct ls_holder_keys *keys, struct task_struct *holder, u32 tid, u64 now)
{
	u64 task = (u64)holder;
	u32 base = holder_base(tid);
	int slot = holder_slot(keys, task, tid);

	if (slot >= 0)
		return slot;
	for (u32 w = 0; w < LS_HOLDER_WAYS; w++) {
		u32 s = (base + w) & (LS_HOLDER_SLOTS - 1);
		struct ls_holder_track *t = holder_track((int)s);
		u64 cur;

		if (!t || !holder_lock(t))
			continue;
		cur = keys->task[s];
		if (cur == task) {
			holder_unlock(t);
			return (int)s;
		}
		if (cur && t->followers && now - t->touched_ns < LS_HOLDER_STALE_NS) {
			holder_unlock(t);
			continue;
		}
		keys->task[s] = task;
		t->gen++;
		t->followers = 0;
		t->touched_ns = now;
		t->tid = tid;
		t->tgid = BPF_CORE_READ(holder, tgid);
		BPF_CORE_READ_STR_INTO(&t->comm, holder, comm);
		t->preempt_tid = 0;
		t->preempt_tgid = 0;
		t->preempt_comm[0] = 0;
		t->lock = 0;
		t->holds = 0;
		holder_unlock(t);
		return (int)s;
	}
	return -1;
}

/* What runs on the CPU of @holder, runnable: the task that preempted it,
 * for a first follower, which did not see the switch. */
static __always_inline void holder_cpu_current(struct task_struct *holder, struct ls_holder_preempter *who)
{
	struct task_struct___holder *h = (void *)holder;
	struct cfs_rq___holder *cfs = BPF_CORE_READ(h, se.cfs_rq);
	struct rq___holder *rq;
	struct task_struct *curr;

	if (!cfs)
		return;
	if (bpf_core_field_exists(cfs->rq))
		rq = BPF_CORE_READ(cfs, rq);
	else /* without group scheduling every task is on its rq's own cfs */
		rq = (void *)((u64)cfs - bpf_core_field_offset(struct rq___holder, cfs));
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

/* A scheduler event of a watched holder not kept: its slot was too busy. */
static __always_inline void holder_missed(void)
{
	struct ls_cpu_state *cpu_state = this_cpu_state();

	if (cpu_state)
		cpu_state->cnt.holder_untracked++;
}

/* @f follows the holder in @slot from @now; its first follower says what
 * it is doing (@state) and, runnable, what preempted it (@by). 0: the slot
 * changed hands meanwhile. */
static __always_inline bool holder_join(struct ls_holder_keys *keys, int slot, u64 task, u32 state,
					const struct ls_holder_preempter *by, struct ls_holder_follow *f, u64 now)
{
	struct ls_holder_track *t = holder_track(slot);
	u32 s = (u32)slot & (LS_HOLDER_SLOTS - 1);
	bool ok;

	if (!t || !holder_lock(t))
		return false;
	ok = keys->task[s] == task;
	if (ok) {
		if (t->followers++ == 0) {
			ls_holder_start(t, now, state);
			if (by->tid)
				holder_set_preempter(t, by);
		}
		if (!t->lock) {
			t->lock = f->lock;
			t->lock_flags = f->flags;
		}
		if (t->lock == f->lock)
			t->holds = 1; /* its owner word said so */
		t->touched_ns = now;
		ls_follow_begin(f, t, task, s, now);
	}
	holder_unlock(t);
	return ok;
}

/* @f stops following at @now (@changed: the lock is another's now, see
 * ls_follow_end()): what the holder did meanwhile into @d, and who it was
 * into @who. 0: unknown (the slot was taken, or too busy; no release seen). */
static __always_inline bool holder_leave(struct ls_holder_follow *f, u64 now, int changed, u64 d[LS_HOLDER_PARTS],
					 struct ls_holder_who *who)
{
	struct ls_holder_keys *keys = holder_key_table();
	struct ls_holder_track *t = holder_track((int)f->slot);
	u32 s = f->slot & (LS_HOLDER_SLOTS - 1);
	bool ok = false;

	if (!keys || !t || !holder_lock(t)) {
		holder_missed();
		f->task = 0;
		return false;
	}
	if (keys->task[s] == f->task && t->gen == f->gen) {
		ok = ls_follow_end(f, t, now, changed, d);
		who->tid = t->tid;
		who->tgid = t->tgid;
		who->preempt_tid = t->preempt_tid;
		who->preempt_tgid = t->preempt_tgid;
		__builtin_memcpy(who->comm, t->comm, sizeof(who->comm));
		__builtin_memcpy(who->preempt_comm, t->preempt_comm, sizeof(who->preempt_comm));
		if (t->followers)
			t->followers--;
		t->touched_ns = now;
		if (!t->followers)
			keys->task[s] = 0; /* the scheduler programs stop looking */
	}
	holder_unlock(t);
	f->task = 0;
	return ok;
}

/* One more following's times on a task's holder_times row. */
static __always_inline void holder_time_add(struct ls_counters *cnt, const struct ls_holder_follow *f, u32 tid,
					    u32 role, u32 tgid, const char *comm, const u64 ns[LS_HOLDER_PARTS])
{
	struct ls_holder_time_key key = { .lock = f->lock, .flags = f->flags, .tid = tid, .role = role };
	struct ls_holder_time *v = bpf_map_lookup_elem(&holder_times, &key);

	if (!v) {
		struct ls_holder_time init = { .tgid = tgid };

		__builtin_memcpy(init.comm, comm, sizeof(init.comm));
		bpf_map_update_elem(&holder_times, &key, &init, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&holder_times, &key);
		if (!v) {
			cnt->holder_untracked++;
			return;
		}
	}
	for (int i = 0; i < LS_HOLDER_PARTS; i++)
		__sync_fetch_and_add(&v->ns[i], ns[i]);
	__sync_fetch_and_add(&v->waits, 1);
}

/* @f's following ends at @now (@changed as holder_leave's): its times go
 * to the episode's parts and to the holder's (and its preempter's)
 * holder_times rows. */
static __always_inline void holder_stop(struct ls_counters *cnt, struct ls_holder_follow *f, u64 now, int changed)
{
	struct ls_holder_who who = {};
	u64 d[LS_HOLDER_PARTS] = {};

	if (!holder_leave(f, now, changed, d, &who) || !(d[0] | d[1] | d[2]))
		return;
	for (int i = 0; i < LS_HOLDER_PARTS; i++)
		f->part[i] += d[i];
	holder_time_add(cnt, f, who.tid, LS_HOLDER_TIME_HOLDER, who.tgid, who.comm, d);
	if (d[LS_HOLDER_RUNNABLE] && who.preempt_tid) {
		u64 runnable[LS_HOLDER_PARTS] = { 0, d[LS_HOLDER_RUNNABLE], 0 };

		holder_time_add(cnt, f, who.preempt_tid, LS_HOLDER_TIME_PREEMPTOR, who.preempt_tgid,
				who.preempt_comm, runnable);
	}
}

/* @f follows @holder (the lock's owner, in owner state @owner) from @now. */
static __always_inline void holder_start(struct ls_counters *cnt, struct ls_holder_follow *f,
					 struct task_struct *holder, u32 owner, u64 now)
{
	struct ls_holder_keys *keys = holder_key_table();
	struct ls_holder_preempter by = {};
	u32 tid = BPF_CORE_READ(holder, pid), state;
	int slot;

	if (!keys)
		return;
	if (owner == LS_OWNER_ON_CPU)
		state = LS_HOLDER_RUNNING;
	else
		state = BPF_CORE_READ(holder, __state) == 0 ? LS_HOLDER_RUNNABLE : LS_HOLDER_ASLEEP;
	if (state == LS_HOLDER_RUNNABLE)
		holder_cpu_current(holder, &by);
	/* twice: a slot its last follower frees between the claim and the join */
	for (int i = 0; i < 2; i++) {
		slot = holder_claim(keys, holder, tid, now);
		if (slot < 0)
			break;
		if (holder_join(keys, slot, (u64)holder, state, &by, f, now))
			return;
	}
	cnt->holder_untracked++;
}

/*
 * contention_begin, the current task queueing: @ep (timed) waits for @lock
 * behind @holder (the owner word's task, 0: none, in owner state @owner).
 * A new episode starts following; one that queues again follows its new
 * owner, or goes on following the same one.
 */
static __always_inline void holder_queued(struct ls_counters *cnt, struct ls_episode *ep, u64 lock,
					  struct task_struct *holder, u32 owner)
{
	struct ls_holder_follow *f;
	u64 now, busy;

	if (!ep->timed || (!holder && !ep->holder_follow))
		return;
	busy = own_locks_enter(cnt);
	f = bpf_task_storage_get(&holder_follow, bpf_get_current_task_btf(), 0,
				 holder ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
	cnt->busy = busy;
	if (!f) {
		if (holder)
			cnt->lost_task_storage++;
		return;
	}
	if (f->task && f->task == (u64)holder && ep->holder_follow && f->lock == lock)
		return;
	now = bpf_ktime_get_ns();
	if (!ep->holder_follow || f->lock != lock) {
		struct ls_holder_who who;
		u64 d[LS_HOLDER_PARTS];

		/* an episode that ended unseen left its following open */
		if (f->task)
			holder_leave(f, now, 1, d, &who);
		__builtin_memset(f, 0, sizeof(*f));
		f->lock = lock;
		f->flags = ep->flags;
		ep->holder_follow = 1;
	} else if (f->task) {
		holder_stop(cnt, f, now, 1);
	}
	if (holder)
		holder_start(cnt, f, holder, owner, now);
}

/*
 * sched_waking of @p, a queued waiter of @lock (@flags) whose episode is
 * followed: the owner word says whether its holder changed. The current
 * task, if a watched holder, has just let @lock go.
 */
static __always_inline void holder_waiter_woken(struct task_struct *p, const struct ls_episode *ep)
{
	struct ls_holder_keys *keys = holder_key_table();
	struct ls_cpu_state *cpu_state;
	u64 lock = ep->lock;
	u64 current = bpf_get_current_task(), now = 0;
	struct ls_holder_follow *f;
	struct ls_holder_track *t;
	struct task_struct *owner;
	u32 state;
	int slot;

	if (!keys)
		return;
	slot = holder_slot(keys, current, (u32)bpf_get_current_pid_tgid());
	t = slot >= 0 ? holder_track(slot) : 0;
	if (t && t->followers) {
		now = bpf_ktime_get_ns();
		if (holder_lock(t)) {
			if (keys->task[(u32)slot & (LS_HOLDER_SLOTS - 1)] == current)
				ls_holder_released(t, lock, now);
			holder_unlock(t);
		} else {
			holder_missed();
		}
	}
	if (!ep->holder_follow)
		return;
	f = bpf_task_storage_get(&holder_follow, p, 0, 0);
	cpu_state = this_cpu_state();
	if (!f || f->lock != lock || !cpu_state)
		return;
	state = owner_of(lock, ep->flags, &owner);
	if (f->task == (u64)owner)
		return;
	if (!now)
		now = bpf_ktime_get_ns();
	if (f->task)
		holder_stop(&cpu_state->cnt, f, now, 1);
	if (owner && owner != p)
		holder_start(&cpu_state->cnt, f, owner, state, now);
}

/* sched_waking of @p, if it is a watched holder: asleep -> runnable. */
static __always_inline void holder_task_woken(struct task_struct *p)
{
	struct ls_holder_keys *keys = holder_key_table();
	struct ls_holder_track *t;
	int slot, going_to_sleep;
	u64 now;

	if (!keys)
		return;
	slot = holder_slot(keys, (u64)p, p->pid);
	t = slot >= 0 ? holder_track(slot) : 0;
	if (!t || !t->followers)
		return;
	now = bpf_ktime_get_ns();
	going_to_sleep = switching_out_asleep(p);
	if (!holder_lock(t)) {
		holder_missed();
		return;
	}
	if (keys->task[(u32)slot & (LS_HOLDER_SLOTS - 1)] == (u64)p)
		ls_holder_woken(t, now, going_to_sleep);
	holder_unlock(t);
}

/* sched_switch: a watched holder switched out (@blocked: asleep; else what
 * runs instead, @next, preempted it) or in. */
static __always_inline void holder_switch(struct task_struct *prev, struct task_struct *next, int blocked)
{
	struct ls_holder_keys *keys = holder_key_table();
	struct ls_holder_preempter by = {};
	struct ls_holder_track *t;
	int slot;
	u64 now;

	if (!keys)
		return;
	slot = holder_slot(keys, (u64)prev, prev->pid);
	t = slot >= 0 ? holder_track(slot) : 0;
	if (t && t->followers) {
		struct task_struct *owner = 0;

		now = bpf_ktime_get_ns();
		if (!blocked) {
			by.tid = next->pid;
			by.tgid = next->tgid;
			bpf_probe_read_kernel_str(by.comm, sizeof(by.comm), next->comm);
		}
		if (t->lock)
			owner_of(t->lock, t->lock_flags, &owner);
		if (holder_lock(t)) {
			if (keys->task[(u32)slot & (LS_HOLDER_SLOTS - 1)] == (u64)prev) {
				if (owner == prev)
					t->holds = 1; /* it took it again */
				else
					ls_holder_let_go(t);
				ls_holder_switch_out(t, now, blocked);
				if (!blocked)
					holder_set_preempter(t, &by);
			}
			holder_unlock(t);
		} else {
			holder_missed();
		}
	}
	slot = holder_slot(keys, (u64)next, next->pid);
	t = slot >= 0 ? holder_track(slot) : 0;
	if (t && t->followers) {
		now = bpf_ktime_get_ns();
		if (holder_lock(t)) {
			if (keys->task[(u32)slot & (LS_HOLDER_SLOTS - 1)] == (u64)next)
				ls_holder_switch_in(t, now);
			holder_unlock(t);
		} else {
			holder_missed();
		}
	}
}

/*
 * sched_switch of the waiter @ts (on its CPU), switched out runnable in a
 * mutex's spin phase: the spinner gave up its CPU (need_resched) and waits
 * on, off CPU, where the spin rule says nothing: it follows the owner it
 * spun on until it runs again.
 */
static __always_inline void holder_spin_out(struct ls_counters *cnt, struct ls_task_state *ts, int blocked)
{
	struct ls_episode *ep = ls_top(ts);
	struct task_struct *owner;
	u32 state;

	if (blocked || !ep || !ep->in_spin || !ep->timed || (ep->flags & (LCB_F_MUTEX | LS_F_USER)) != LCB_F_MUTEX)
		return;
	state = owner_of(ep->lock, ep->flags, &owner);
	holder_queued(cnt, ep, ep->lock, owner, state);
}

/* sched_switch of @next, whose episodes are in @ts now: a spinner back on
 * its CPU stops following (its spin is holder running again). A holder
 * that let the lock go while no one was queued woke no one: where the owner
 * changed and no release was seen, the time is unknown. */
static __always_inline void holder_spin_in(struct ls_counters *cnt, struct ls_task_state *ts, struct task_struct *next)
{
	struct ls_episode *ep = ls_top(ts);
	struct ls_holder_follow *f;
	struct task_struct *owner;

	if (!ep || !ep->in_spin || !ep->holder_follow)
		return;
	f = bpf_task_storage_get(&holder_follow, next, 0, 0);
	if (!f || f->lock != ep->lock || !f->task)
		return;
	owner_of(ep->lock, ep->flags, &owner);
	holder_stop(cnt, f, bpf_ktime_get_ns(), (u64)owner != f->task);
}

/* contention_end of a followed episode @ep on @lock at @now, just added to
 * its lock's counters @s: its following ends, and its parts go there too. */
static __always_inline void holder_end(struct ls_counters *cnt, struct ls_lock_stats *s, const struct ls_episode *ep,
				       u64 lock, u64 now)
{
	struct ls_holder_follow *f = bpf_task_storage_get(&holder_follow, bpf_get_current_task_btf(), 0, 0);
	u64 none[LS_HOLDER_PARTS] = {}, out[LS_HOLDER_PARTS];

	if (f && f->lock == lock) {
		/* the lock is the ender's: its holder let it go before */
		if (f->task)
			holder_stop(cnt, f, now, 1);
		ls_holder_episode_parts(ep, f->part, now, out);
		f->lock = 0;
	} else {
		ls_holder_episode_parts(ep, none, now, out);
	}
	s->holder_running_ns += out[LS_HOLDER_RUNNING];
	s->holder_runnable_ns += out[LS_HOLDER_RUNNABLE];
	s->holder_asleep_ns += out[LS_HOLDER_ASLEEP];
}

#endif /* LOCKSCOPE_HOLDER_SPLIT_H */
