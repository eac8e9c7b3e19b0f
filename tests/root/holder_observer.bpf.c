// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * An independent observer of the holder split for the root tests: one
 * holder task (its thread id set by the test), followed through the classic
 * sched_switch tracepoint and a raw sched_waking tracepoint, and the queued
 * waits of the other threads of one process on the lock it holds. No
 * following by waiters, no snapshots at wakeups: while the holder is off
 * CPU the lock cannot change hands (only a running owner lets it go), so
 * each of its off-CPU periods is wholly behind the lock or not, which the
 * lock's owner word, read as it is switched out, says. A waiter's holder
 * runnable and asleep times are the parts of those periods inside its wait
 * (its first queued begin to its end).
 */
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile __u32 targ_tgid = 0;
const volatile __u32 lock_is_rwsem = 0; /* the holder's lock: 0 a mutex, 1 an rwsem (writer) */
__u32 holder_tid = 0;                   /* set by the test once its holder thread runs */

/* What the observer found: the lock, and the waiters' time behind the holder. */
__u64 lock_addr = 0;
__u64 observed_runnable_ns = 0;
__u64 observed_asleep_ns = 0;
__u64 observed_waits = 0;

struct sched_entity {
	unsigned char sched_delayed;
} __attribute__((preserve_access_index));

struct task_struct {
	int pid;
	int on_cpu;
	int on_rq;
	struct sched_entity se;
} __attribute__((preserve_access_index));

struct mutex {
	struct {
		long counter;
	} owner;
} __attribute__((preserve_access_index));

struct rw_semaphore {
	struct {
		long counter;
	} owner;
} __attribute__((preserve_access_index));

/* The holder's off-CPU time while it held the lock: completed periods, and
 * the one under way. */
struct holder_state {
	__u64 runnable_ns, asleep_ns;
	__u64 out_ns;   /* switched out at; 0 while on CPU */
	__u64 woken_ns; /* woken during a blocked period; 0: not yet */
	__u32 holding;  /* the period under way is behind the lock */
	__u32 blocked;
	__u32 early;    /* woken as it went to sleep, before its switch-out */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct holder_state);
} holder SEC(".maps");

static struct holder_state *the_holder(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&holder, &zero);
}

struct snapshot {
	__u64 runnable_ns, asleep_ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct snapshot);
} waiting SEC(".maps");

/* The holder's off-CPU times behind the lock at @now. */
static void holder_times(const struct holder_state *h, __u64 now, struct snapshot *s)
{
	s->runnable_ns = h->runnable_ns;
	s->asleep_ns = h->asleep_ns;
	if (!h->out_ns || !h->holding || now < h->out_ns)
		return;
	if (!h->blocked) {
		s->runnable_ns += now - h->out_ns;
	} else if (h->woken_ns) {
		s->asleep_ns += h->woken_ns - h->out_ns;
		s->runnable_ns += now - h->woken_ns;
	} else {
		s->asleep_ns += now - h->out_ns;
	}
}

static long owner_word(__u64 lock)
{
	if (lock_is_rwsem)
		return BPF_CORE_READ((struct rw_semaphore *)lock, owner.counter);
	return BPF_CORE_READ((struct mutex *)lock, owner.counter);
}

/* /sys/kernel/tracing/events/sched/sched_switch/format */
struct switch_args {
	__u64 common;
	char prev_comm[16];
	__s32 prev_pid;
	__s32 prev_prio;
	__s64 prev_state;
	char next_comm[16];
	__s32 next_pid;
	__s32 next_prio;
};

SEC("tracepoint/sched/sched_switch")
int observe_holder_switch(struct switch_args *args)
{
	struct holder_state *h = the_holder();
	__u32 holder = holder_tid;
	struct snapshot now_times;
	__u64 now;

	if (!holder || !h)
		return 0;
	if ((__u32)args->prev_pid == holder) {
		now = bpf_ktime_get_ns();
		h->out_ns = now;
		h->woken_ns = 0;
		/* the classic format says TASK_REPORT_MAX (0x100) for a preemption */
		h->blocked = (args->prev_state & 0xff) != 0;
		if (h->blocked && h->early)
			h->woken_ns = now;
		h->early = 0;
		/* the current task is the one switching out */
		h->holding = lock_addr && (owner_word(lock_addr) & ~7L) == (long)bpf_get_current_task();
	} else if ((__u32)args->next_pid == holder && h->out_ns) {
		holder_times(h, bpf_ktime_get_ns(), &now_times);
		h->runnable_ns = now_times.runnable_ns;
		h->asleep_ns = now_times.asleep_ns;
		h->out_ns = 0;
		h->woken_ns = 0;
	}
	return 0;
}

SEC("raw_tracepoint/sched_waking")
int observe_holder_waking(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *p = (struct task_struct *)ctx->args[0];
	struct holder_state *h = the_holder();

	if (!h || !holder_tid || (__u32)BPF_CORE_READ(p, pid) != holder_tid)
		return 0;
	if (h->out_ns) {
		if (h->blocked && !h->woken_ns)
			h->woken_ns = bpf_ktime_get_ns();
	} else if (BPF_CORE_READ(p, on_cpu) &&
		   (!BPF_CORE_READ(p, on_rq) ||
		    (bpf_core_field_exists(p->se.sched_delayed) && BPF_CORE_READ(p, se.sched_delayed)))) {
		h->early = 1;
	}
	return 0;
}

/* /sys/kernel/tracing/events/lock/contention_begin/format */
struct begin_args {
	__u64 common;
	__u64 lock_addr;
	__u32 flags;
};

struct end_args {
	__u64 common;
	__u64 lock_addr;
	__s32 ret;
};

static int a_waiter(void)
{
	__u64 id = bpf_get_current_pid_tgid();

	return (__u32)(id >> 32) == targ_tgid && holder_tid && (__u32)id != holder_tid;
}

SEC("tracepoint/lock/contention_begin")
int observe_waiter_begin(struct begin_args *args)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct holder_state *h = the_holder();
	struct snapshot snap;
	long owner;

	if (!h)
		return 0;
	/* a queued wait (no SPIN) on a mutex, or on an rwsem */
	if (!a_waiter() || (args->flags & 1) || !(args->flags & (lock_is_rwsem ? 6 : 0x20)))
		return 0;
	if (!lock_addr) {
		/* the holder's lock is the one whose owner word names it */
		owner = owner_word(args->lock_addr) & ~7L;
		if (!owner || (__u32)BPF_CORE_READ((struct task_struct *)owner, pid) != holder_tid)
			return 0;
		lock_addr = args->lock_addr;
		/* switched out before the lock was known, it held it then too */
		if (h->out_ns)
			h->holding = 1;
	}
	if (args->lock_addr != lock_addr || bpf_map_lookup_elem(&waiting, &tid))
		return 0;
	holder_times(h, bpf_ktime_get_ns(), &snap);
	bpf_map_update_elem(&waiting, &tid, &snap, BPF_NOEXIST);
	return 0;
}

SEC("tracepoint/lock/contention_end")
int observe_waiter_end(struct end_args *args)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct holder_state *h = the_holder();
	struct snapshot *snap, now_times;

	if (!h || !a_waiter() || !lock_addr || args->lock_addr != lock_addr)
		return 0;
	snap = bpf_map_lookup_elem(&waiting, &tid);
	if (!snap)
		return 0;
	holder_times(h, bpf_ktime_get_ns(), &now_times);
	__sync_fetch_and_add(&observed_runnable_ns, now_times.runnable_ns - snap->runnable_ns);
	__sync_fetch_and_add(&observed_asleep_ns, now_times.asleep_ns - snap->asleep_ns);
	__sync_fetch_and_add(&observed_waits, 1);
	bpf_map_delete_elem(&waiting, &tid);
	return 0;
}
