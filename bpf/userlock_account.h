/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What a finished user-lock wait adds (bpf/userlock.bpf.c, which includes
 * this after its maps): its row's counters, its waker, its chain into the
 * kernel, a sampled stack, a traced event. Only userlock.bpf.c includes it.
 */
#ifndef LOCKSCOPE_USERLOCK_ACCOUNT_H
#define LOCKSCOPE_USERLOCK_ACCOUNT_H

/*
 * This CPU's entry of the row of (tgid, uaddr) in wait_rows, plus one: from
 * the CPU's row cache, else from wait_index, else a new row (*created). 0
 * when max_rows rows are taken.
 */
static __always_inline __u32 wait_entry(struct ulock_cpu *cpu, __u32 tgid, __u64 uaddr,
					bool *created)
{
	struct ulock_row_slot *slot =
		&cpu->rows[((uaddr >> 2) ^ (uaddr >> 12) ^ tgid) & (ULOCK_ROW_CACHE - 1)];
	struct ls_ulock_key key = {.tgid = tgid, .uaddr = uaddr};
	__u32 row, *found;

	if (slot->entry_plus1 && slot->uaddr == uaddr && slot->tgid == tgid)
		return slot->entry_plus1;
	found = bpf_map_lookup_elem(&wait_index, &key);
	if (found) {
		row = *found;
	} else {
		/* The plain read keeps the counter from running on (and wrapping)
		 * once every row is taken; the fetch-add hands out each row once. */
		if (next_wait_row >= max_rows)
			return 0;
		row = __sync_fetch_and_add(&next_wait_row, 1);
		if (row >= max_rows)
			return 0;
		if (bpf_map_update_elem(&wait_index, &key, &row, BPF_NOEXIST)) {
			/* another CPU added this key first (its row wins; ours stays
			 * unused and unread), or the index is full */
			found = bpf_map_lookup_elem(&wait_index, &key);
			if (!found)
				return 0;
			row = *found;
		} else {
			*created = true;
		}
	}
	slot->uaddr = uaddr;
	slot->tgid = tgid;
	slot->entry_plus1 = row * nr_cpus + bpf_get_smp_processor_id() + 1;
	return slot->entry_plus1;
}

/* This CPU's row: plain adds, no other CPU writes it. */
static __always_inline void add_wait(struct ls_ulock_stats *stats, struct ulock_wait *w,
				     const struct ls_ulock_parts *p)
{
	__u32 bucket = ls_log2_bucket(p->wait_ns);

	stats->waits++;
	stats->wait_ns += p->wait_ns;
	stats->oncpu_ns += p->oncpu_ns;
	stats->asleep_ns += p->asleep_ns;
	stats->runnable_ns += p->runnable_ns;
	stats->hist[bucket < LS_HIST_BUCKETS ? bucket : LS_HIST_BUCKETS - 1]++;
	if (w->woken)
		stats->wakes++;
	if (p->wait_ns > stats->max_wait_ns)
		stats->max_wait_ns = p->wait_ns;
	stats->ops |= w->op;
	if (!w->left) {
		stats->oncpu_waits++;
		stats->oncpu_timed++;
		stats->oncpu_timed_ns += p->wait_ns;
	} else if (w->timing == ULOCK_LATE) {
		stats->late++;
	} else {
		stats->left_timed++;
		stats->left_first_oncpu_ns += w->first_oncpu_ns;
	}
	if (w->owner_tid)
		stats->owner_tid = w->owner_tid;
}

/* A wait whose owner woke it: its holder split (owner_woke()). */
static __always_inline void add_holder_split(struct ls_ulock_stats *stats, const struct ulock_thread *th)
{
	if (th->hold.state != ULOCK_HOLD_DONE || th->hold.token != th->in.w.token)
		return;
	for (int i = 0; i < LS_HOLDER_PARTS; i++)
		stats->holder_ns[i] += th->hold.ns[i];
	stats->holder_waits++;
}

/*
 * Whether this wait's stack is sent: the first wait on each address, so
 * that every address can be classified (bounded by the per-address map's
 * size), then 1 in sample_one_in, at most max_samples_per_sec. The count
 * down is the CPU's own (no cache line shared by every wait), and its gaps
 * are drawn from 1..2N-1 (mean N), so that threads that take turns on
 * several call sites in a period dividing N are not sampled at one alone.
 */
static __always_inline bool take_sample(struct ulock_cpu *cpu, bool first_on_key, __u64 now)
{
	if (first_on_key)
		return true;
	if (cpu->counts.sample_tick) {
		cpu->counts.sample_tick--;
		return false;
	}
	cpu->counts.sample_tick = bpf_get_prandom_u32() % (2 * sample_one_in - 1);
	if (now - window_start_ns >= NSEC_PER_SEC) {
		window_start_ns = now;
		window_samples = 0;
	}
	if (__sync_fetch_and_add(&window_samples, 1) >= max_samples_per_sec) {
		__sync_fetch_and_add(&counters.rate_limited, 1);
		return false;
	}
	return true;
}

/* Only the fields forked_from() reads: their own flavours (CO-RE drops the
 * suffix), so that kernel_types.h does not grow for them. */
struct mm_struct___forked {
	void *exe_file;
} __attribute__((preserve_access_index));

struct task_struct___forked {
	int tgid;
	struct mm_struct___forked *mm;
	struct task_struct___forked *real_parent;
} __attribute__((preserve_access_index));

/* The current process's ancestors that run its executable as it was opened
 * once (mm->exe_file: fork copies the pointer, exec opens the file again),
 * nearest first. Read for samples only. */
static __always_inline void forked_from(__u32 *out)
{
	struct task_struct___forked *task = (void *)bpf_get_current_task();
	void *exe = BPF_CORE_READ(task, mm, exe_file);
	int i;

	for (i = 0; i < LS_ULOCK_FORKED_FROM; i++)
		out[i] = 0;
	for (i = 0; i < LS_ULOCK_FORKED_FROM && exe; i++) {
		task = BPF_CORE_READ(task, real_parent);
		if (!task || BPF_CORE_READ(task, mm, exe_file) != exe)
			break;
		out[i] = BPF_CORE_READ(task, tgid);
	}
}

static __always_inline void send_sample(struct pt_regs *regs, __u64 pid_tgid, struct ulock_wait *w,
					__u64 wait_ns)
{
	struct ls_ulock_sample *sample;

	sample = bpf_ringbuf_reserve(&samples, sizeof(*sample), 0);
	if (!sample) {
		__sync_fetch_and_add(&counters.lost_samples, 1);
		return;
	}
	sample->tgid = pid_tgid >> 32;
	sample->tid = (__u32)pid_tgid;
	sample->uaddr = w->uaddr;
	sample->op = w->op;
	sample->owner_tid = w->owner_tid;
	sample->wait_ns = wait_ns;
	forked_from(sample->forked_from);
	ls_user_stack_copy(&sample->stack, regs);
	bpf_ringbuf_submit(sample, 0);
}

/* The entry of key in a hash map, made from fresh at its first use (by this
 * CPU or another); NULL when the map is full. */
static __always_inline void *map_entry(void *map, const void *key, const void *fresh)
{
	void *value = bpf_map_lookup_elem(map, key);

	if (value)
		return value;
	bpf_map_update_elem(map, key, fresh, BPF_NOEXIST);
	return bpf_map_lookup_elem(map, key);
}

/* A finished wait that a thread's wakeup ended: to that waker's count. */
static __always_inline void add_waker(__u32 tgid, struct ulock_wait *w)
{
	struct ls_ulock_waker_key key = {
		.tgid = tgid, .waker_tid = w->waker_tid, .uaddr = w->uaddr};
	struct ls_ulock_waker *waker, fresh = {};

	waker = map_entry(&wakers, &key, &fresh);
	if (!waker) {
		__sync_fetch_and_add(&counters.lost_wakers, 1);
		return;
	}
	__sync_fetch_and_add(&waker->wakes, 1);
	waker->waker_tgid = w->waker_tgid;
	__builtin_memcpy(waker->comm, w->waker_comm, sizeof(waker->comm));
}

/* A finished wait that queued behind an owner waiting for a kernel lock. */
static __always_inline void add_chain_wait(__u32 tgid, struct ulock_wait *w, __u64 wait_ns)
{
	struct ls_ulock_chain_key key = {.tgid = tgid,
					 .kernel_flags = w->kernel_flags,
					 .uaddr = w->uaddr,
					 .kernel_lock = w->kernel_lock};
	struct ls_ulock_chain_stats *stats, fresh = {};

	stats = map_entry(&chain_waits, &key, &fresh);
	if (!stats) {
		__sync_fetch_and_add(&counters.lost_chains, 1);
		return;
	}
	__sync_fetch_and_add(&stats->waits, 1);
	__sync_fetch_and_add(&stats->wait_ns, wait_ns);
	if (wait_ns > stats->max_wait_ns)
		stats->max_wait_ns = wait_ns;
	__sync_fetch_and_add(&stats->roots[w->root_state & (LS_ULOCK_ROOT_STATES - 1)], 1);
	stats->owner_tid = w->owner_tid;
	stats->root_tid = w->root_tid;
}

/* record --trace: the finished wait, whole, for the Chrome-trace export. */
static __always_inline void trace_wait(__u64 pid_tgid, struct ulock_wait *w,
				       struct ls_ulock_parts *parts, __u64 now, long ret)
{
	struct ls_ulock_event ev = {
		.tgid = pid_tgid >> 32,
		.tid = (__u32)pid_tgid,
		.uaddr = w->uaddr,
		.start_ns = now - parts->wait_ns,
		.end_ns = now,
		.oncpu_ns = parts->oncpu_ns,
		.asleep_ns = parts->asleep_ns,
		.runnable_ns = parts->runnable_ns,
		.wake_ns = w->woken ? w->wake_ns : 0,
		.waker_tid = w->waker_tid,
		.waker_tgid = w->waker_tgid,
		.op = w->op,
		.ret = (__s32)ret,
	};

	if (bpf_ringbuf_output(&events, &ev, sizeof(ev), 0))
		__sync_fetch_and_add(&counters.lost_events, 1);
}

#endif /* LOCKSCOPE_USERLOCK_ACCOUNT_H */
