/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The owner a user-lock waiter slept behind (bpf/userlock.bpf.c, which
 * includes it where what it uses is defined: the threads' waits, the
 * counters): the holder split, where a waiter going to sleep follows its
 * lock's holds from the owner it read, the owners' states kept in their
 * task storage by the scheduler programs with the kernel locks' holder code
 * (holder_track.h, holder_task.h); and the chain into the kernel, where
 * that owner itself waits for a kernel lock. Only userlock.bpf.c includes
 * it.
 */
#ifndef LOCKSCOPE_USERLOCK_HOLDERS_H
#define LOCKSCOPE_USERLOCK_HOLDERS_H

/*
 * A user lock's known holders, one hold after another (as the kernel
 * locks' in holder_track.h): a hold begins when a waiter going to sleep
 * reads an owner the lock's record does not have, or, for a PI futex,
 * when a holder's unlock hands it to the waiter it wakes; it ends when its
 * holder wakes a waiter (its unlock). The record keeps the closed holds'
 * parts summed, and the open hold's holder, its times when the hold began
 * and what was seen of the hold since (added to the sum if the hold ends
 * unseen: another owner read). A waiter takes the sum as it goes to sleep
 * and as its sleep ends: the difference is its holder split.
 */
struct ulock_holds {
	__u32 seq;
	__u32 holder_tid; /* the open hold's holder; 0: no hold open */
	__u64 snap[LS_HOLDER_PARTS];
	__u64 seen[LS_HOLDER_PARTS];
	__u64 sum[LS_HOLDER_PARTS];
};

/*
 * The owners waiters have followed: each one's running, runnable and asleep
 * times (holder_track.h), kept by the scheduler programs from the first
 * time a waiter slept behind it, for as long as the thread lives. Only
 * threads of the target processes that held a lock someone slept on have
 * one; every other task's switch costs a look at its storage.
 */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct ls_holder_track);
} holders SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LS_ULOCK_MAX_HOLDERS);
	__type(key, struct ls_ulock_holder_key);
	__type(value, struct ls_holder_time);
} holder_waits SEC(".maps");

/* The locks' holds (ulock_holds), by (process, futex word); the least
 * recently used goes when it is full. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, LS_ULOCK_MAX_HOLDERS);
	__type(key, struct ls_ulock_key);
	__type(value, struct ulock_holds);
} ulock_holds SEC(".maps");

/*
 * @owner's record in `holders`, made the first time a hold of it begins,
 * in the state the task is in then (@woken: it is being woken), and kept
 * from then on by the scheduler programs (owner_switch(), owner_woken()),
 * locked; NULL (counted lost) if it cannot be had.
 */
static __always_inline struct ls_holder_track *holder_record(struct task_struct *owner, __u64 now, bool woken)
{
	struct ls_holder_preempter by = {};
	struct ls_holder_track *h;
	__u32 state;

	h = bpf_task_storage_get(&holders, owner, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!h || !holder_lock(h)) {
		__sync_fetch_and_add(&counters.lost_holders, 1);
		return 0;
	}
	if (!h->tid) {
		if (woken) {
			state = LS_HOLDER_RUNNABLE;
		} else if (BPF_CORE_READ(owner, on_cpu)) {
			state = LS_HOLDER_RUNNING;
		} else if (BPF_CORE_READ(owner, __state) == 0) {
			state = LS_HOLDER_RUNNABLE;
			holder_cpu_current(owner, &by);
		} else {
			state = LS_HOLDER_ASLEEP;
		}
		ls_holder_start(h, now, state);
		h->tid = BPF_CORE_READ(owner, pid);
		h->tgid = BPF_CORE_READ(owner, tgid);
		BPF_CORE_READ_STR_INTO(&h->comm, owner, comm);
		if (by.tid)
			holder_set_preempter(h, &by);
	}
	return h;
}

/* The lock's holds record, made if it has none yet; NULL (counted lost)
 * if it cannot be had. */
static __always_inline struct ulock_holds *holds_of(__u32 tgid, __u64 uaddr, bool create)
{
	struct ls_ulock_key key = {.tgid = tgid, .uaddr = uaddr};
	struct ulock_holds *l = bpf_map_lookup_elem(&ulock_holds, &key);

	if (!l && create) {
		struct ulock_holds zero = {};

		bpf_map_update_elem(&ulock_holds, &key, &zero, BPF_NOEXIST);
		l = bpf_map_lookup_elem(&ulock_holds, &key);
	}
	if (!l)
		__sync_fetch_and_add(&counters.lost_holders, 1);
	return l;
}

/* The open hold of @l, by a holder whose times are @v now: seen so far. */
static __always_inline void holds_look(struct ulock_holds *l, const __u64 v[LS_HOLDER_PARTS])
{
	for (int i = 0; i < LS_HOLDER_PARTS; i++)
		l->seen[i] = v[i] > l->snap[i] ? v[i] - l->snap[i] : 0;
}

/* A hold of @tid begins, its holder's times @v: the open one before it, if
 * any, ended unseen, and keeps what was seen of it. */
static __always_inline void holds_open(struct ulock_holds *l, __u32 tid, const __u64 v[LS_HOLDER_PARTS])
{
	for (int i = 0; i < LS_HOLDER_PARTS; i++) {
		l->sum[i] += l->holder_tid ? l->seen[i] : 0;
		l->snap[i] = v[i];
		l->seen[i] = 0;
	}
	l->holder_tid = tid;
}

/*
 * The holder split: the waiter, going to sleep for the first time in its
 * wait, follows its lock's holds from the owner it read on (a new hold if
 * the lock's record has another holder, or none), and takes the holds' sum
 * as it is now.
 */
static __always_inline void follow_owner(struct ulock_thread *th, struct task_struct *owner, __u32 tgid,
					 __u64 now)
{
	__u64 v[LS_HOLDER_PARTS];
	struct ls_holder_track *h;
	struct ulock_holds *l;
	__u32 tid = th->in.w.owner_tid;

	th->hold.state = ULOCK_HOLD_NONE;
	h = holder_record(owner, now, false);
	if (!h)
		return;
	ls_holder_times(h, now, v);
	holder_unlock(h);
	l = holds_of(tgid, th->in.w.uaddr, true);
	if (!l)
		return;
	if (!seq_lock(&l->seq)) {
		__sync_fetch_and_add(&counters.lost_holders, 1);
		return;
	}
	if (l->holder_tid != tid)
		holds_open(l, tid, v);
	holds_look(l, v);
	for (int i = 0; i < LS_HOLDER_PARTS; i++)
		th->hold.sum[i] = l->sum[i] + l->seen[i];
	seq_unlock(&l->seq);
	th->hold.token = th->in.w.token;
	th->hold.state = ULOCK_HOLD_FOLLOWING;
}

/* One more wait's holder split on a task's row of holder_waits. */
static __always_inline void credit_holder(__u32 tgid, __u64 uaddr, __u32 tid, __u32 role, __u32 task_tgid,
					  const char *comm, const __u64 ns[LS_HOLDER_PARTS])
{
	struct ls_ulock_holder_key key = {.tgid = tgid, .tid = tid, .uaddr = uaddr, .role = role};
	struct ls_holder_time *v = holder_time_row(&holder_waits, &key, task_tgid, comm);

	if (v)
		holder_time_credit(v, ns, 1);
	else
		__sync_fetch_and_add(&counters.lost_holders, 1);
}

/*
 * A wakeup ends a followed waiter's sleep, in the waker's context. If the
 * waker holds the lock's open hold, it let the lock go (a mutex's unlock
 * wakes a waiter): the hold closes, and for a PI futex the kernel has
 * handed the lock to the waiter woken, whose hold opens. The waiter's split
 * is the holds' sum now less the sum it took; the part behind the hold
 * that ended is credited to its holder and its last preemptor. Another
 * waker (a timeout, a signal, a thread that took the lock unseen) closes
 * nothing: the open hold's part since its last look is unknown.
 */
static __always_inline void waiter_woken(struct ulock_thread *th, struct task_struct *p, __u64 now,
					 __u32 waker_tid)
{
	struct ls_holder_preempter by = {};
	__u64 v[LS_HOLDER_PARTS], last[LS_HOLDER_PARTS] = {}, zero[LS_HOLDER_PARTS] = {};
	struct ls_holder_track *h = 0, *next;
	struct ulock_holds *l;
	bool released = false;
	__u32 tgid = p->tgid;

	if (th->hold.state != ULOCK_HOLD_FOLLOWING || th->hold.token != th->in.w.token)
		return;
	th->hold.state = ULOCK_HOLD_NONE;
	l = holds_of(tgid, th->in.w.uaddr, false);
	if (!l)
		return;
	if (l->holder_tid == waker_tid) {
		h = bpf_task_storage_get(&holders, bpf_get_current_task_btf(), 0, 0);
		if (h && holder_lock(h)) {
			ls_holder_times(h, now, v);
			by.tid = h->preempt_tid;
			by.tgid = h->preempt_tgid;
			__builtin_memcpy(by.comm, h->preempt_comm, sizeof(by.comm));
			holder_unlock(h);
			released = true;
		}
	}
	if (!seq_lock(&l->seq)) {
		__sync_fetch_and_add(&counters.lost_holders, 1);
		return;
	}
	if (released && l->holder_tid == waker_tid) {
		holds_look(l, v);
		/* the waiter's part of this hold: all of it, or since it joined */
		for (int i = 0; i < LS_HOLDER_PARTS; i++) {
			__u64 joined = th->hold.sum[i] > l->sum[i] ? th->hold.sum[i] - l->sum[i] : 0;

			last[i] = l->seen[i] > joined ? l->seen[i] - joined : 0;
			l->sum[i] += l->seen[i];
			l->seen[i] = 0;
		}
		l->holder_tid = 0;
	} else {
		released = false;
	}
	for (int i = 0; i < LS_HOLDER_PARTS; i++)
		th->hold.ns[i] = l->sum[i] > th->hold.sum[i] ? l->sum[i] - th->hold.sum[i] : 0;
	seq_unlock(&l->seq);
	th->hold.state = ULOCK_HOLD_DONE;
	if (!released)
		return;
	credit_holder(tgid, th->in.w.uaddr, waker_tid, LS_ULOCK_HOLDER, th->in.w.waker_tgid, th->in.w.waker_comm,
		      last);
	if (last[LS_HOLDER_RUNNABLE] && by.tid) {
		zero[LS_HOLDER_RUNNABLE] = last[LS_HOLDER_RUNNABLE];
		credit_holder(tgid, th->in.w.uaddr, by.tid, LS_ULOCK_PREEMPTOR, by.tgid, by.comm, zero);
	}
	/* a PI futex's unlock hands the lock to the waiter it wakes */
	if (!(th->in.w.op & (LS_ULOCK_OP_LOCK_PI | LS_ULOCK_OP_LOCK_PI2 | LS_ULOCK_OP_WAIT_REQUEUE_PI)))
		return;
	next = holder_record(p, now, true);
	if (!next)
		return;
	ls_holder_times(next, now, v);
	holder_unlock(next);
	if (seq_lock(&l->seq)) {
		if (!l->holder_tid)
			holds_open(l, p->pid, v);
		seq_unlock(&l->seq);
	}
}

/* sched_switch: an owner a waiter has followed switched out (@blocked:
 * asleep; else @next preempted it) or in. */
static __always_inline void owner_switch(struct task_struct *prev, struct task_struct *next, bool blocked)
{
	struct ls_holder_preempter by = {};
	struct ls_holder_track *h;

	h = bpf_task_storage_get(&holders, prev, 0, 0);
	if (h) {
		if (!blocked) {
			by.tid = next->pid;
			by.tgid = next->tgid;
			bpf_probe_read_kernel_str(by.comm, sizeof(by.comm), next->comm);
		}
		if (holder_lock(h)) {
			ls_holder_switch_out(h, bpf_ktime_get_ns(), blocked);
			if (!blocked)
				holder_set_preempter(h, &by);
			holder_unlock(h);
		} else {
			__sync_fetch_and_add(&counters.lost_holders, 1);
		}
	}
	h = bpf_task_storage_get(&holders, next, 0, 0);
	if (h) {
		if (holder_lock(h)) {
			ls_holder_switch_in(h, bpf_ktime_get_ns());
			holder_unlock(h);
		} else {
			__sync_fetch_and_add(&counters.lost_holders, 1);
		}
	}
}

/* sched_waking of an owner a waiter has followed: asleep -> runnable. */
static __always_inline void owner_woken(struct task_struct *p)
{
	struct ls_holder_track *h = bpf_task_storage_get(&holders, p, 0, 0);
	int going_to_sleep;

	if (!h)
		return;
	going_to_sleep = switching_out_asleep(p);
	if (holder_lock(h)) {
		ls_holder_woken(h, bpf_ktime_get_ns(), going_to_sleep);
		holder_unlock(h);
	} else {
		__sync_fetch_and_add(&counters.lost_holders, 1);
	}
}

/*
 * Whether the lock's owner is, now, inside a kernel lock wait the kernel
 * recorder tracks, and if so that lock and what its holder is doing.
 */
static __always_inline void owner_in_kernel(struct ulock_wait *w, struct task_struct *owner)
{
	struct task_struct *root;
	__u64 lock = 0;
	__u32 flags = 0, state;

	holder_waits_on(owner, &lock, &flags);
	/* reflock's episodes (USDT) are user locks, with no kernel owner word */
	if (!lock || (flags & LS_F_USER))
		return;
	w->kernel_lock = lock;
	w->kernel_flags = flags;
	w->root_tid = 0;
	state = owner_of(lock, flags, &root);
	if (root) {
		w->root_tid = BPF_CORE_READ(root, pid);
		w->root_state = task_role(root) - LS_ROLE_HOLDER_RUNNING;
	} else if (state == LS_OWNER_READER) {
		w->root_state = LS_ULOCK_ROOT_READERS;
	} else if (state == LS_OWNER_NONE) {
		w->root_state = LS_ULOCK_ROOT_NO_OWNER;
	} else {
		w->root_state = LS_ULOCK_ROOT_UNKNOWN;
	}
}

/* The thread whose task storage holds @in (a wait that has left its CPU). */
static __always_inline struct ulock_thread *thread_of(struct ulock_inflight *in)
{
	return (struct ulock_thread *)in;
}

/*
 * The owner a sleeping waiter read, if it is a thread of the waiter's own
 * process (glibc keeps the TID of the process's pid namespace,
 * bpf_task_from_pid() looks in the initial one): followed for the holder
 * split (unless a wakeup already ended the sleep), and looked at for a
 * chain into the kernel.
 */
static __always_inline void owner_seen(struct ulock_thread *th, __u32 tgid, __u64 now)
{
	struct task_struct *owner;

	owner = bpf_task_from_pid(th->in.w.owner_tid);
	if (!owner)
		return;
	if (BPF_CORE_READ(owner, tgid) == tgid) {
		owner_in_kernel(&th->in.w, owner);
		if (!th->in.w.woken)
			follow_owner(th, owner, tgid, now);
	}
	bpf_task_release(owner);
}

#endif /* LOCKSCOPE_USERLOCK_HOLDERS_H */
