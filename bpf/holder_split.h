/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The holder split's watched holders: their slots, the maps of the waiting
 * they caused, and the scheduler programs' part (the states and their
 * times, in plain C: holder_track.h, which says how it is followed; the
 * locks and their waiters: holder_chain.h). Included by lockscope.bpf.c
 * where what it uses is defined (this_cpu_state(), own_locks_enter(),
 * owner_of()).
 */
#ifndef LOCKSCOPE_HOLDER_SPLIT_H
#define LOCKSCOPE_HOLDER_SPLIT_H

#include "holder_track.h"
#include "holder_task.h"

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

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LS_MAX_HOLDER_TIMES);
	__type(key, struct ls_holder_time_key);
	__type(value, struct ls_holder_time);
} holder_times SEC(".maps");

/* A slot whose followers have neither joined nor left for this long has
 * lost them (episodes that ended unseen): it may be given to another task. */
#define LS_HOLDER_STALE_NS (30ULL * 1000000000ULL)

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

/* A hold's holder no longer followed by @f (its lock's record). */
static __always_inline void holder_unfollow(struct ls_holder_keys *keys, const struct ls_holder_follow *f, u64 now)
{
	struct ls_holder_track *t = holder_track((int)f->slot);
	u32 s = f->slot & (LS_HOLDER_SLOTS - 1);

	if (!t || !holder_lock(t)) {
		holder_missed();
		return;
	}
	if (keys->task[s] == f->task && t->gen == f->gen) {
		if (t->followers)
			t->followers--;
		t->touched_ns = now;
		if (!t->followers)
			keys->task[s] = 0; /* the scheduler programs stop looking */
	}
	holder_unlock(t);
}

/* One more hold's waiting on a task's holder_times row. */
static __always_inline void holder_time_add(struct ls_counters *cnt, u64 lock, u32 flags, u32 tid, u32 role,
					    u32 tgid, const char *comm, const u64 ns[LS_HOLDER_PARTS], u64 waits)
{
	struct ls_holder_time_key key = { .lock = lock, .flags = flags, .tid = tid, .role = role };
	struct ls_holder_time *v = holder_time_row(&holder_times, &key, tgid, comm);

	if (v)
		holder_time_credit(v, ns, waits);
	else
		cnt->holder_untracked++;
}

/* @f begins a hold of @holder (the lock's owner, in owner state @owner) at @now. */
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
 * A watched holder @p woken from a sleep of @slept ns with its lock held
 * (@key): its kernel stack, where it slept (it is not running yet), on the
 * lock's asleep row of that stack. Taken at each such wakeup, so that a
 * sleep under way when the holder was first followed has its stack too.
 */
static __always_inline void holder_slept(struct task_struct *p, struct ls_stack_key *key, u64 slept)
{
	struct ls_cpu_state *cpu_state = this_cpu_state();
	struct ls_holder_stack *buf;
	u32 two = 2;
	long n;

	buf = bpf_map_lookup_elem(&holder_scratch, &two);
	if (!buf || !cpu_state)
		return;
	n = bpf_get_task_stack(p, buf->ips, sizeof(buf->ips), 0);
	key->stack_id = n > 0 ? (s32)store_holder_stack(buf, n) : 0;
	if (n > 0 && !key->stack_id)
		cpu_state->cnt.lost_stack_map_full++;
	else if (n <= 0)
		cpu_state->cnt.lost_stack++;
	else
		count_stack_sample(&cpu_state->cnt, key, slept);
}

/* sched_waking of @p, if it is a watched holder: asleep -> runnable. */
static __always_inline void holder_task_woken(struct task_struct *p)
{
	struct ls_holder_keys *keys = holder_key_table();
	struct ls_stack_key key = { .role = LS_ROLE_HOLDER_ASLEEP };
	struct ls_holder_track *t;
	int slot, going_to_sleep;
	u64 now, slept = 0;

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
	if (keys->task[(u32)slot & (LS_HOLDER_SLOTS - 1)] == (u64)p) {
		/* asleep holding its lock: the owner word said so at its switch-out */
		if (t->state == LS_HOLDER_ASLEEP && t->holds && t->lock && now > t->since_ns) {
			slept = now - t->since_ns;
			key.lock = t->lock;
			key.flags = t->lock_flags;
		}
		ls_holder_woken(t, now, going_to_sleep);
	}
	holder_unlock(t);
	if (slept)
		holder_slept(p, &key, slept); /* a stack walk: out of the slot's lock */
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

#endif /* LOCKSCOPE_HOLDER_SPLIT_H */
