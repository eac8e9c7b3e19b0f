/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The samples a contention takes beside its counts: a waiter's kernel stack
 * (add_stack_sample, count_stack_sample) and, when a waiter queues behind a
 * single owner, that holder's stack and task (sample_holder), with a holder
 * running on another CPU registered for the CPU-clock timer to sample there
 * (register_running_holder). Included by lockscope.bpf.c where what it uses
 * is defined (its maps, every(), holder_period).
 */
#pragma once

/* One queued begin with a single owner in holder_period, per CPU, samples
 * the holder. */
static __always_inline bool holder_due(struct ls_counters *cnt)
{
	return every(&cnt->holder_tick, holder_period);
}

/* False when the map is full (the caller counts the loss). */
static __always_inline bool add_stack_sample(struct ls_stack_key *key, u64 wait_ns)
{
	struct ls_stack_stats *ss, init = {};

	ss = bpf_map_lookup_elem(&stack_samples, key);
	if (!ss) {
		/* fails when another CPU added the key first (the lookup finds
		 * it) or when the map is full (the lookup does not) */
		bpf_map_update_elem(&stack_samples, key, &init, BPF_NOEXIST);
		ss = bpf_map_lookup_elem(&stack_samples, key);
		if (!ss)
			return false;
	}
	/* a per-CPU value: no other CPU writes it */
	ss->samples++;
	ss->wait_ns += wait_ns;
	return true;
}

static __always_inline void count_stack_sample(struct ls_counters *cnt, struct ls_stack_key *key, u64 wait_ns)
{
	if (!add_stack_sample(key, wait_ns))
		cnt->lost_stack_map_full++;
}

/*
 * Files n bytes of frames (the rest zeroed) in holder_stacks under an id
 * made of their hash, shared by every sample of the same stack. 0: the map
 * is full.
 */
static __always_inline u32 store_holder_stack(struct ls_holder_stack *buf, long n)
{
	u64 h = 14695981039346656037ULL; /* FNV-1a over the frames */
	u32 id;

	for (int i = 0; i < LS_MAX_STACK_DEPTH; i++) {
		if ((long)(i * sizeof(u64)) >= n)
			buf->ips[i] = 0;
		h = (h ^ buf->ips[i]) * 1099511628211ULL;
	}
	id = LS_HOLDER_STACK_BIT | ((u32)(h ^ (h >> 32)) & (LS_HOLDER_STACK_BIT - 1));
	if (bpf_map_update_elem(&holder_stacks, &id, buf, BPF_NOEXIST) &&
	    !bpf_map_lookup_elem(&holder_stacks, &id))
		return 0;
	return id;
}

/* One more sample of a holder task on a lock row. Full: the holder stack
 * still counts; user space sees fewer task samples and says so. */
static __always_inline void note_holder_task(struct ls_holder_task_key *key, struct ls_holder_task *who)
{
	struct ls_holder_task *known = bpf_map_lookup_elem(&holder_tasks, key);

	if (known)
		__sync_fetch_and_add(&known->samples, 1);
	else
		bpf_map_update_elem(&holder_tasks, key, who, BPF_NOEXIST);
}

/*
 * A waiter saw `holder` own the lock while running on another CPU, whose
 * stack it cannot read: on_cpu_clock takes it there, while it still holds
 * the lock, for oncpu_fresh_ns and at most oncpu_budget stacks. The same
 * holder and lock again is written in place (no map update on the waiters'
 * path). A refused update (the map busy in an interrupted update) does no
 * harm: the next waiter registers it again. @now: the begin's clock, if it
 * read one (0: not timed, read here).
 */
static __always_inline void register_running_holder(u64 lock, u32 flags, struct task_struct *holder, u64 now)
{
	struct ls_running_holder *known, fresh = { .lock = lock, .flags = flags, .task = (u64)holder,
						   .budget = oncpu_budget };
	u32 tid = BPF_CORE_READ(holder, pid);

	if (!now)
		now = bpf_ktime_get_ns();
	known = bpf_map_lookup_elem(&running_holders, &tid);
	if (known && known->lock == lock && known->flags == flags && known->task == (u64)holder) {
		known->registered_ns = now;
		known->budget = oncpu_budget;
		return;
	}
	fresh.registered_ns = now;
	bpf_map_update_elem(&running_holders, &tid, &fresh, BPF_ANY);
}

/*
 * The holder's kernel stack, what it was doing, and which lock row it is
 * for; the episode keeps the stack's id so that its end adds its wait. The
 * owner word is read again after the stack is taken: if the lock changed
 * hands meanwhile the stack may be another task's moment, and it is
 * counted as holder_changed instead of guessed at.
 */
static __always_inline void sample_holder(struct ls_counters *cnt, u64 lock, struct ls_episode *ep,
					  struct task_struct *holder)
{
	struct ls_stack_key key = { .lock = lock, .flags = ep->flags };
	struct task_struct *t, *now_owner;
	struct ls_holder_stack *buf;
	struct ls_holder_task_key task_key = { .lock = lock, .flags = ep->flags };
	struct ls_holder_task who = { .samples = 1 };
	u32 zero = 0, id, role, chain_flags = 0;
	u64 chain_lock = 0;
	bool same;
	long n;

	buf = bpf_map_lookup_elem(&holder_scratch, &zero);
	if (!buf)
		return;
	t = bpf_task_from_pid(BPF_CORE_READ(holder, pid));
	if (!t) {
		cnt->holder_changed++;
		return;
	}
	/* Reads go through t, which the verifier trusts: the compiler must not
	 * swap in `holder` (a plain number to it) once it knows they are equal. */
	asm volatile("" : "+r"(t));
	role = task_role(t);
	n = bpf_get_task_stack(t, buf->ips, sizeof(buf->ips), 0);
	holder_waits_on(t, &chain_lock, &chain_flags);
	who.tgid = BPF_CORE_READ(t, tgid);
	BPF_CORE_READ_STR_INTO(&who.comm, t, comm);
	task_key.tid = BPF_CORE_READ(t, pid);
	same = (u64)t == (u64)holder; /* the pid now names another task */
	asm volatile("" : "+r"(t));
	bpf_task_release(t);
	if (!same) {
		cnt->holder_changed++;
		return;
	}
	/* A task running on another CPU has no saved stack to read: its
	 * sample says so with no frames. */
	if (n < 0 && role != LS_ROLE_HOLDER_RUNNING) {
		cnt->lost_stack++;
		return;
	}
	if (n < 0)
		n = 0;
	owner_of(lock, ep->flags, &now_owner);
	if (now_owner != holder) {
		cnt->holder_changed++;
		return;
	}
	id = store_holder_stack(buf, n);
	if (!id) {
		cnt->lost_stack_map_full++;
		return;
	}
	key.stack_id = (s32)id;
	key.role = role;
	count_stack_sample(cnt, &key, 0);
	cnt->holder_samples++;
	note_holder_task(&task_key, &who);
	ep->holder_stack = id;
	ep->holder_role = role;
	ep->chain_lock = chain_lock;
	ep->chain_flags = chain_flags;
}
