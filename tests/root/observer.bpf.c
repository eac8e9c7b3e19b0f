// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * An independent observer for the integration tests: counts the raw
 * lock:contention_* events of one process through the classic tracepoint
 * interface (not tp_btf), with no episode logic at all. Wakeups come from a
 * raw tracepoint: a woken task's state is read from its task_struct.
 */
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile __u32 targ_tgid = 0;
/* 1: also count the target's descendants, found by walking the current
 * task's ancestors (not by following forks, as lockscope does); 2: its
 * descendants only, not the target itself. */
const volatile __u32 targ_tree = 0;

struct sched_entity {
	unsigned char sched_delayed;
} __attribute__((preserve_access_index));

struct task_struct {
	int pid;
	int tgid;
	int on_cpu;
	int on_rq;
	struct sched_entity se;
	struct task_struct *real_parent;
} __attribute__((preserve_access_index));

/* index: 0 begin with SPIN, 1 begin without SPIN, 2 begin MUTEX|SPIN, 3 begin MUTEX, 4 end;
 * then the wait's times (below), OBS_TIMES of them per class */
#define OBS_COUNTS 5
#define OBS_WAIT 0      /* end - first begin */
#define OBS_SPIN 1      /* time from a begin with SPIN to the next begin without it, or the end */
#define OBS_SPIN_OFF 2  /* time switched out while in such a spin phase */
#define OBS_ASLEEP 3    /* time switched out blocked, until woken */
#define OBS_RUNNABLE 4  /* time switched out runnable, or woken and not yet running */
#define OBS_YIELDS 5    /* switch-outs in a spin phase, runnable */
#define OBS_RACED 6     /* time off CPU of sleeps woken while still on their CPU (below) */
#define OBS_TIMES 7
#define OBS_MUTEX 0     /* class of the task's outermost lock: a mutex, */
#define OBS_RWSEM 1     /* a rwsem (READ or WRITE, no SPIN), */
#define OBS_OTHER 2     /* anything else */
#define OBS_CLASSES 3
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, OBS_COUNTS + OBS_TIMES * OBS_CLASSES);
	__type(key, __u32);
	__type(value, __u64);
} events SEC(".maps");

/* The wait of a task's outermost lock, with a lock of its own: only that
 * lock's begins and end move it (a nested lock's wait is not followed). */
struct wait {
	__u64 lock;
	__u64 begin_ns;
	__u64 phase_ns;   /* start of the current spin phase */
	__u64 out_ns;     /* when it was switched out; 0 while on CPU */
	__u64 woken_ns;   /* when it was woken while switched out blocked; 0: not yet */
	__u64 early_ns;   /* woken after it went to sleep, before its switch-out was seen */
	__u32 in_spin;
	__u32 out_blocked;
	__u32 class;
	__u32 raced;      /* woken while still on its CPU, before its switch-out was seen */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct wait);
} waits SEC(".maps");

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

static void add(__u32 idx, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&events, &idx);

	if (v)
		*v += n;
}

static void bump(__u32 idx)
{
	add(idx, 1);
}

static void add_time(const struct wait *w, __u32 what, __u64 ns)
{
	add(OBS_COUNTS + w->class * OBS_TIMES + what, ns);
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

static void begin_wait(__u64 lock, __u32 flags)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct wait *w = bpf_map_lookup_elem(&waits, &tid);
	__u64 now = bpf_ktime_get_ns();
	__u32 spin = flags & 1;

	if (!w) {
		struct wait init = { .lock = lock, .begin_ns = now, .phase_ns = now, .in_spin = spin };

		init.class = (flags & 0x20) ? OBS_MUTEX : (!spin && (flags & 6)) ? OBS_RWSEM : OBS_OTHER;
		bpf_map_update_elem(&waits, &tid, &init, BPF_ANY);
		return;
	}
	if (w->lock != lock)
		return;
	if (w->in_spin && !spin) {
		add_time(w, OBS_SPIN, now - w->phase_ns);
		w->in_spin = 0;
	} else if (!w->in_spin && spin) {
		w->in_spin = 1;
		w->phase_ns = now;
	}
}

static void end_wait(__u64 lock)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct wait *w = bpf_map_lookup_elem(&waits, &tid);
	__u64 now = bpf_ktime_get_ns();

	if (!w || w->lock != lock)
		return;
	if (w->in_spin)
		add_time(w, OBS_SPIN, now - w->phase_ns);
	add_time(w, OBS_WAIT, now - w->begin_ns);
	bpf_map_delete_elem(&waits, &tid);
}

SEC("tracepoint/sched/sched_switch")
int observe_switch(struct switch_args *args)
{
	__u32 prev = (__u32)args->prev_pid, next = (__u32)args->next_pid;
	struct wait *w;
	__u64 now;

	w = bpf_map_lookup_elem(&waits, &prev);
	if (w) {
		w->out_ns = bpf_ktime_get_ns();
		/* the classic format reports a preemption as TASK_REPORT_MAX
		 * (0x100), a runnable task as 0 */
		w->out_blocked = (args->prev_state & 0xff) != 0;
		/* woken before this switch-out: waiting for a CPU from here on */
		if (w->out_blocked && w->early_ns)
			w->woken_ns = w->out_ns;
		w->early_ns = 0;
		if (w->in_spin && !w->out_blocked)
			add_time(w, OBS_YIELDS, 1);
	}
	w = bpf_map_lookup_elem(&waits, &next);
	if (w && w->out_ns) {
		__u64 ready = 0;

		now = bpf_ktime_get_ns();
		/* A sleep woken as its sleeper went to sleep: whether it was
		 * still on its run queue depends on the instant its state is
		 * read, so another program reading it a moment apart (lockscope)
		 * may take it as woken when this one did not, or the reverse. */
		if (w->out_blocked && w->raced)
			add_time(w, OBS_RACED, now - w->out_ns);
		/* woken, then waiting for a CPU: runnable */
		if (w->out_blocked && w->woken_ns)
			ready = now - w->woken_ns;
		add_time(w, w->out_blocked ? OBS_ASLEEP : OBS_RUNNABLE, now - w->out_ns - ready);
		add_time(w, OBS_RUNNABLE, ready);
		if (w->in_spin)
			add_time(w, OBS_SPIN_OFF, now - w->out_ns);
		w->out_ns = 0;
		w->woken_ns = 0;
	}
	if (w) {
		w->early_ns = 0;
		w->raced = 0;
	}
	return 0;
}

/* Gone to sleep in a schedule still under way on its CPU: off the run queue
 * (or left on it, sched_delayed) and not switched out yet. */
static int switching_out_asleep(struct task_struct *p)
{
	if (!BPF_CORE_READ(p, on_cpu))
		return 0;
	if (!BPF_CORE_READ(p, on_rq))
		return 1;
	if (bpf_core_field_exists(p->se.sched_delayed))
		return BPF_CORE_READ(p, se.sched_delayed) != 0;
	return 0;
}

SEC("raw_tracepoint/sched_waking")
int observe_waking(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *p = (struct task_struct *)ctx->args[0];
	__u32 pid = (__u32)BPF_CORE_READ(p, pid);
	struct wait *w = bpf_map_lookup_elem(&waits, &pid);

	if (!w)
		return 0;
	if (w->out_ns) {
		if (w->out_blocked && !w->woken_ns)
			w->woken_ns = bpf_ktime_get_ns();
	} else if (BPF_CORE_READ(p, on_cpu)) {
		w->raced = 1;
		if (switching_out_asleep(p))
			w->early_ns = bpf_ktime_get_ns();
	}
	return 0;
}

static int mine(void)
{
	struct task_struct *t;

	if ((__u32)(bpf_get_current_pid_tgid() >> 32) == targ_tgid)
		return targ_tree != 2;
	if (!targ_tree)
		return 0;
	t = (struct task_struct *)bpf_get_current_task();
	for (int i = 0; i < 16; i++) {
		t = BPF_CORE_READ(t, real_parent);
		if (!t)
			return 0;
		if ((__u32)BPF_CORE_READ(t, tgid) == targ_tgid)
			return 1;
	}
	return 0;
}

SEC("tracepoint/lock/contention_begin")
int count_begin(struct begin_args *args)
{
	if (!mine())
		return 0;
	bump(args->flags & 1 ? 0 : 1);
	if (args->flags == 0x21)
		bump(2);
	else if (args->flags == 0x20)
		bump(3);
	begin_wait(args->lock_addr, args->flags);
	return 0;
}

SEC("tracepoint/lock/contention_end")
int count_end(struct end_args *args)
{
	if (mine()) {
		bump(4);
		end_wait(args->lock_addr);
	}
	return 0;
}
