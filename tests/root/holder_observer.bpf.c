// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * An independent observer of the holder split for the root tests: the
 * threads that may hold one lock (their thread ids set by the test, up to
 * MAX_HOLDERS), each followed through the classic sched_switch tracepoint
 * and a raw sched_waking tracepoint, and the queued waits of the threads of
 * one process on that lock. No following by waiters, no snapshots at
 * wakeups: while a holder is off CPU the lock cannot leave it (only a
 * running owner lets it go), so each of its off-CPU periods is wholly
 * behind the lock or not, which the lock's owner word, read as it is
 * switched out, says. A waiter's holder runnable and asleep times are the
 * parts of those periods, of whichever thread held the lock, inside its
 * wait (its first queued begin to its end).
 */
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile __u32 targ_tgid = 0;
const volatile __u32 lock_is_rwsem = 0; /* the holders' lock: 0 a mutex, 1 an rwsem (writer) */
#define MAX_HOLDERS 8
__u32 holder_tids[MAX_HOLDERS];         /* set by the test as its holder threads run; 0: none */

/* What the observer found: the lock, and the waiters' time behind its holders. */
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

/* A holder's off-CPU time while it held the lock: completed periods, and
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
	__uint(max_entries, MAX_HOLDERS);
	__type(key, __u32);
	__type(value, struct holder_state);
} holder SEC(".maps");

/* The state of holder thread @tid, or 0 if it is not one. */
static struct holder_state *holder_of(__u32 tid)
{
	for (__u32 i = 0; i < MAX_HOLDERS; i++) {
		__u32 key = i;

		if (!tid || holder_tids[i & (MAX_HOLDERS - 1)] != tid)
			continue;
		return bpf_map_lookup_elem(&holder, &key);
	}
	return 0;
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

/* A holder's off-CPU times behind the lock at @now, into @s. */
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

/* All the holders' off-CPU times behind the lock at @now. */
static void all_holders_times(__u64 now, struct snapshot *s)
{
	struct snapshot one;

	s->runnable_ns = 0;
	s->asleep_ns = 0;
	for (__u32 i = 0; i < MAX_HOLDERS; i++) {
		__u32 key = i;
		struct holder_state *h = bpf_map_lookup_elem(&holder, &key);

		if (!h || !holder_tids[i & (MAX_HOLDERS - 1)])
			continue;
		holder_times(h, now, &one);
		s->runnable_ns += one.runnable_ns;
		s->asleep_ns += one.asleep_ns;
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
	struct holder_state *h = holder_of((__u32)args->prev_pid);
	struct snapshot now_times;
	__u64 now;

	if (h) {
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
	}
	h = holder_of((__u32)args->next_pid);
	if (h && h->out_ns) {
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
	struct holder_state *h = holder_of((__u32)BPF_CORE_READ(p, pid));

	if (!h)
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
	return (__u32)(bpf_get_current_pid_tgid() >> 32) == targ_tgid && holder_tids[0];
}

SEC("tracepoint/lock/contention_begin")
int observe_waiter_begin(struct begin_args *args)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct holder_state *h;
	struct snapshot snap;
	long owner;

	/* a queued wait (no SPIN) on a mutex, or on an rwsem */
	if (!a_waiter() || (args->flags & 1) || !(args->flags & (lock_is_rwsem ? 6 : 0x20)))
		return 0;
	if (!lock_addr) {
		/* the holders' lock is the one whose owner word names one of them */
		owner = owner_word(args->lock_addr) & ~7L;
		h = owner ? holder_of((__u32)BPF_CORE_READ((struct task_struct *)owner, pid)) : 0;
		if (!h)
			return 0;
		lock_addr = args->lock_addr;
		/* switched out before the lock was known, it held it then too */
		if (h->out_ns)
			h->holding = 1;
	}
	if (args->lock_addr != lock_addr || bpf_map_lookup_elem(&waiting, &tid))
		return 0;
	all_holders_times(bpf_ktime_get_ns(), &snap);
	bpf_map_update_elem(&waiting, &tid, &snap, BPF_NOEXIST);
	return 0;
}

SEC("tracepoint/lock/contention_end")
int observe_waiter_end(struct end_args *args)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct snapshot *snap, now_times;

	if (!a_waiter() || !lock_addr || args->lock_addr != lock_addr)
		return 0;
	snap = bpf_map_lookup_elem(&waiting, &tid);
	if (!snap)
		return 0;
	all_holders_times(bpf_ktime_get_ns(), &now_times);
	__sync_fetch_and_add(&observed_runnable_ns, now_times.runnable_ns - snap->runnable_ns);
	__sync_fetch_and_add(&observed_asleep_ns, now_times.asleep_ns - snap->asleep_ns);
	__sync_fetch_and_add(&observed_waits, 1);
	bpf_map_delete_elem(&waiting, &tid);
	return 0;
}
