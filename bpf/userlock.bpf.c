// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * User-space lock waits: the futex sleeps of target processes (the tgids
 * the loader puts in `targets`), timed from the syscall's entry to its exit
 * per thread and added up per (tgid, futex address). A bounded subset of
 * waits (the first of each address, then 1 in sample_one_in of those that
 * slept, at most max_samples_per_sec) is sent to user space, as the wait
 * ends, with the waiter's registers and
 * the top of its user stack, for unwinding there with the binaries' CFI: the
 * stack is what tells a mutex from a condition variable.
 *
 * The syscall tracepoints through BTF: no tracefs, no kprobes, no uprobes.
 *
 * Each wait is split into on CPU, asleep and runnable (userlock_wait.h) by
 * sched_switch and sched_waking programs that look only at threads timed in
 * `waiting`; the thread whose sched_waking ended a wait's sleep is its waker.
 *
 * Chains into the kernel: when the kernel recorder (lockscope.bpf.c) runs,
 * user space gives this object its task_state and cpu_states maps before
 * loading (contention_state.h) and loads userlock_enter_chains instead of
 * userlock_enter: a waiter whose lock's owner is known looks, as it goes to
 * sleep, whether that owner is itself waiting for a kernel lock, and who
 * holds that one.
 */
#include "kernel_types.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "lockscope_abi.h"
#include "user_stack.h"
#include "userlock_abi.h"
#include "userlock_wait.h"
#include "episode.h"
#include "contention_state.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Syscall numbers of this architecture, set by the loader; -1: absent. */
const volatile long nr_futex = -1;
const volatile long nr_futex_waitv = -1;
const volatile long nr_futex_wait = -1;
const volatile __u32 sample_one_in = 16;
const volatile __u32 max_samples_per_sec = 200;
/* 1: a process that a target creates is a target too (record's default). */
const volatile __u32 follow_children = 0;
/* 1: every process is a target but self_tgid (the recorder's own), and the
 * targets map is not looked at. */
const volatile __u32 all_processes = 0;
const volatile __u32 self_tgid = 0;
/* 1: every finished wait is sent through events (record --trace). */
const volatile __u32 trace_waits = 0;

#define FUTEX_WAIT	      0
#define FUTEX_LOCK_PI	      6
#define FUTEX_WAIT_BITSET     9
#define FUTEX_WAIT_REQUEUE_PI 11
#define FUTEX_LOCK_PI2	      13
/* The command without FUTEX_PRIVATE_FLAG (128) and FUTEX_CLOCK_REALTIME (256). */
#define FUTEX_CMD_MASK 127
#define FUTEX_TID_MASK 0x3fffffff
/* glibc (nptl): pthread_mutex_t is int __lock (the futex word), unsigned
 * int __count, int __owner. */
#define GLIBC_MUTEX_OWNER_OFFSET 8
#define NSEC_PER_SEC		 1000000000ULL
#define LS_EAGAIN		 11

struct inflight {
	struct ls_ulock_timing t;
	__u64 uaddr;
	__u32 op;
	__u32 owner_tid;
	__u64 kernel_lock; /* the kernel lock the owner was waiting for; 0: none (or not looked for) */
	__u32 kernel_flags;
	__u32 root_tid;	  /* that lock's holder */
	__u32 root_state; /* LS_ULOCK_ROOT_* */
	__u32 waker_tid;  /* whose wakeup ended its last sleep; 0: none, or an idle CPU's interrupt */
	__u32 waker_tgid;
	__u32 woken;	  /* a wakeup ended one of its sleeps */
	char waker_comm[16];
	__u64 wake_ns; /* when that wakeup came */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LS_ULOCK_MAX_TARGETS);
	__type(key, __u32);
	__type(value, __u8);
} targets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32); /* tid */
	__type(value, struct inflight);
} waiting SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LS_ULOCK_MAX_KEYS);
	__type(key, struct ls_ulock_key);
	__type(value, struct ls_ulock_stats);
} waits SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LS_ULOCK_MAX_CHAINS);
	__type(key, struct ls_ulock_chain_key);
	__type(value, struct ls_ulock_chain_stats);
} chain_waits SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LS_ULOCK_MAX_WAKERS);
	__type(key, struct ls_ulock_waker_key);
	__type(value, struct ls_ulock_waker);
} wakers SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);
} samples SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096); /* sized by user space before load (trace_waits) */
} events SEC(".maps");

struct ls_ulock_counters counters = {};
__u64 sample_seq = 0;
__u64 window_start_ns = 0;
__u64 window_samples = 0;
/* A new key's first value: too big for the stack. */
const struct ls_ulock_stats zero_stats = {};

/* The futex op's LS_ULOCK_OP_* bit, or 0 for an op that is not a wait. */
static __always_inline __u32 futex_wait_op(__u64 op)
{
	switch (op & FUTEX_CMD_MASK) {
	case FUTEX_WAIT:
		return LS_ULOCK_OP_WAIT;
	case FUTEX_WAIT_BITSET:
		return LS_ULOCK_OP_WAIT_BITSET;
	case FUTEX_LOCK_PI:
		return LS_ULOCK_OP_LOCK_PI;
	case FUTEX_LOCK_PI2:
		return LS_ULOCK_OP_LOCK_PI2;
	case FUTEX_WAIT_REQUEUE_PI:
		return LS_ULOCK_OP_WAIT_REQUEUE_PI;
	}
	return 0;
}

/* Who holds the lock, as the waiter sees it now: PI futexes keep the
 * owner's TID in the futex word, glibc's mutexes in __data.__owner. For a
 * futex that is no mutex the value means nothing; user space keeps it only
 * for waits it classifies as mutex waits. */
static __always_inline __u32 read_owner(__u64 uaddr, __u32 op)
{
	__u32 word = 0;

	if (op & (LS_ULOCK_OP_LOCK_PI | LS_ULOCK_OP_LOCK_PI2 | LS_ULOCK_OP_WAIT_REQUEUE_PI)) {
		if (bpf_probe_read_user(&word, sizeof(word), (void *)uaddr))
			return 0;
		return word & FUTEX_TID_MASK;
	}
	if (bpf_probe_read_user(&word, sizeof(word), (void *)(uaddr + GLIBC_MUTEX_OWNER_OFFSET)))
		return 0;
	return word;
}

/* Whether this wait's stack is sent: the first wait on each address, so
 * that every address can be classified (bounded by the per-address map's
 * size), then 1 in sample_one_in, at most max_samples_per_sec. */
static __always_inline bool take_sample(bool first_on_key, __u64 now)
{
	if (first_on_key)
		return true;
	if (__sync_fetch_and_add(&sample_seq, 1) % sample_one_in)
		return false;
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

static __always_inline void send_sample(struct pt_regs *regs, __u64 pid_tgid, struct inflight *w, __u64 wait_ns)
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
	ls_user_stack_copy(&sample->stack, regs);
	bpf_ringbuf_submit(sample, 0);
}

/*
 * Whether the lock's owner is, now, inside a kernel lock wait the kernel
 * recorder tracks, and if so that lock and what its holder is doing. Only an
 * owner in the waiter's own process: glibc keeps the TID of the process's
 * pid namespace, bpf_task_from_pid() looks in the initial one.
 */
static __always_inline void owner_in_kernel(struct inflight *w, __u32 tgid)
{
	struct task_struct *owner, *root;
	__u64 lock = 0;
	__u32 flags = 0, state;

	owner = bpf_task_from_pid(w->owner_tid);
	if (!owner)
		return;
	if (BPF_CORE_READ(owner, tgid) == tgid)
		holder_waits_on(owner, &lock, &flags);
	bpf_task_release(owner);
	/* reflock's episodes (USDT) are user locks, with no kernel owner word */
	if (!lock || (flags & LS_F_USER))
		return;
	w->kernel_lock = lock;
	w->kernel_flags = flags;
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

/* A finished wait that queued behind an owner waiting for a kernel lock. */
static __always_inline void add_chain_wait(__u32 tgid, struct inflight *w, __u64 wait_ns)
{
	struct ls_ulock_chain_key key = { .tgid = tgid, .kernel_flags = w->kernel_flags,
					  .uaddr = w->uaddr, .kernel_lock = w->kernel_lock };
	struct ls_ulock_chain_stats *stats, fresh = {};

	stats = bpf_map_lookup_elem(&chain_waits, &key);
	if (!stats) {
		bpf_map_update_elem(&chain_waits, &key, &fresh, BPF_NOEXIST);
		stats = bpf_map_lookup_elem(&chain_waits, &key);
		if (!stats) {
			__sync_fetch_and_add(&counters.lost_chains, 1);
			return;
		}
	}
	__sync_fetch_and_add(&stats->waits, 1);
	__sync_fetch_and_add(&stats->wait_ns, wait_ns);
	if (wait_ns > stats->max_wait_ns)
		stats->max_wait_ns = wait_ns;
	__sync_fetch_and_add(&stats->roots[w->root_state & (LS_ULOCK_ROOT_STATES - 1)], 1);
	stats->owner_tid = w->owner_tid;
	stats->root_tid = w->root_tid;
}

static __always_inline int enter(struct pt_regs *regs, long id, bool chains)
{
	struct pt_regs___ls *r = (void *)regs;
	__u64 pid_tgid;
	__u32 tgid, tid;
	struct inflight w = {};

	if (id != nr_futex && id != nr_futex_waitv && id != nr_futex_wait)
		return 0;
	pid_tgid = bpf_get_current_pid_tgid();
	tgid = pid_tgid >> 32;
	tid = (__u32)pid_tgid;
	if (all_processes ? tgid == self_tgid : !bpf_map_lookup_elem(&targets, &tgid))
		return 0;

	if (id == nr_futex) {
		w.op = futex_wait_op(LS_REGS_ARG2(r));
		w.uaddr = LS_REGS_ARG1(r);
	} else if (id == nr_futex_wait) {
		w.op = LS_ULOCK_OP_FUTEX_WAIT;
		w.uaddr = LS_REGS_ARG1(r);
	} else {
		/* struct futex_waitv { u64 val; u64 uaddr; u32 flags; u32 __reserved; } */
		w.op = LS_ULOCK_OP_WAITV;
		if (bpf_probe_read_user(&w.uaddr, sizeof(w.uaddr), (void *)(LS_REGS_ARG1(r) + 8)))
			w.uaddr = 0;
	}
	if (!w.op)
		return 0;
	if (w.op != LS_ULOCK_OP_WAITV)
		w.owner_tid = read_owner(w.uaddr, w.op);
	if (chains && w.owner_tid && w.owner_tid != tid)
		owner_in_kernel(&w, tgid);
	w.t.start_ns = bpf_ktime_get_ns();
	if (bpf_map_update_elem(&waiting, &tid, &w, BPF_ANY))
		__sync_fetch_and_add(&counters.lost_inflight, 1);
	return 0;
}

/* Two entries: user space loads the second when it has the kernel
 * recorder's maps and the kernel has bpf_task_from_pid (6.2+). */
SEC("tp_btf/sys_enter")
int BPF_PROG(userlock_enter, struct pt_regs *regs, long id)
{
	return enter(regs, id, false);
}

SEC("tp_btf/sys_enter")
int BPF_PROG(userlock_enter_chains, struct pt_regs *regs, long id)
{
	return enter(regs, id, true);
}

/* A finished wait that a thread's wakeup ended: to that waker's count. */
static __always_inline void add_waker(__u32 tgid, struct inflight *w)
{
	struct ls_ulock_waker_key key = { .tgid = tgid, .waker_tid = w->waker_tid, .uaddr = w->uaddr };
	struct ls_ulock_waker *waker, fresh = {};

	waker = bpf_map_lookup_elem(&wakers, &key);
	if (!waker) {
		bpf_map_update_elem(&wakers, &key, &fresh, BPF_NOEXIST);
		waker = bpf_map_lookup_elem(&wakers, &key);
		if (!waker) {
			__sync_fetch_and_add(&counters.lost_wakers, 1);
			return;
		}
	}
	__sync_fetch_and_add(&waker->wakes, 1);
	waker->waker_tgid = w->waker_tgid;
	__builtin_memcpy(waker->comm, w->waker_comm, sizeof(waker->comm));
}

static __always_inline void add_wait(struct ls_ulock_stats *stats, struct inflight *w,
				     const struct ls_ulock_parts *p)
{
	__sync_fetch_and_add(&stats->waits, 1);
	__sync_fetch_and_add(&stats->wait_ns, p->wait_ns);
	__sync_fetch_and_add(&stats->oncpu_ns, p->oncpu_ns);
	__sync_fetch_and_add(&stats->asleep_ns, p->asleep_ns);
	__sync_fetch_and_add(&stats->runnable_ns, p->runnable_ns);
	__sync_fetch_and_add(&stats->hist[ls_log2_bucket(p->wait_ns)], 1);
	if (w->woken)
		__sync_fetch_and_add(&stats->wakes, 1);
	if (p->wait_ns > stats->max_wait_ns)
		stats->max_wait_ns = p->wait_ns;
	__sync_fetch_and_or(&stats->ops, w->op);
	if (w->owner_tid)
		stats->owner_tid = w->owner_tid;
}

/* record --trace: the finished wait, whole, for the Chrome-trace export. */
static __always_inline void trace_wait(__u64 pid_tgid, struct inflight *w, struct ls_ulock_parts *parts, __u64 now,
				       long ret)
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

SEC("tp_btf/sys_exit")
int BPF_PROG(userlock_exit, struct pt_regs *regs, long ret)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid;
	struct ls_ulock_key key = {};
	struct ls_ulock_stats *stats;
	struct ls_ulock_parts parts;
	struct inflight *w;
	__u64 now;
	bool first_on_key;
	long id;

	/* Every syscall of the machine passes here: the number first, and the
	 * in-flight lookup only for the futex calls that enter() may have timed. */
	id = LS_REGS_SYSCALL_NR((struct pt_regs___ls *)regs);
	if (id != nr_futex && id != nr_futex_waitv && id != nr_futex_wait)
		return 0;
	w = bpf_map_lookup_elem(&waiting, &tid);
	if (!w)
		return 0;
	now = bpf_ktime_get_ns();
	parts = ls_ulock_end(&w->t, now);
	key.tgid = pid_tgid >> 32;
	key.uaddr = w->uaddr;
	stats = bpf_map_lookup_elem(&waits, &key);
	first_on_key = !stats;
	/* The stack is taken here, not at the entry: the user registers and
	 * stack are the same, and only now is it known whether the waiter
	 * slept. A wait the kernel refused at once (-EAGAIN: the word changed
	 * before the waiter was queued) is counted but not sampled, except as
	 * its address's first: such a waiter read the owner word while the
	 * lock was being released, and its owner says nothing. */
	if ((first_on_key || ret != -LS_EAGAIN) && take_sample(first_on_key, now))
		send_sample(regs, pid_tgid, w, parts.wait_ns);
	if (!stats) {
		bpf_map_update_elem(&waits, &key, &zero_stats, BPF_NOEXIST);
		if (!(stats = bpf_map_lookup_elem(&waits, &key))) {
			__sync_fetch_and_add(&counters.lost_keys, 1);
			bpf_map_delete_elem(&waiting, &tid);
			return 0;
		}
	}
	add_wait(stats, w, &parts);
	if (trace_waits)
		trace_wait(pid_tgid, w, &parts, now, ret);
	if (w->waker_tid)
		add_waker(key.tgid, w);
	if (w->kernel_lock)
		add_chain_wait(key.tgid, w, parts.wait_ns);
	bpf_map_delete_elem(&waiting, &tid);
	return 0;
}

/* The wait's parts: only threads inside a timed wait are looked at, and the
 * clock is read only for them. */
SEC("tp_btf/sched_switch")
int BPF_PROG(userlock_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	__u32 prev_tid = prev->pid, next_tid = next->pid;
	struct inflight *w;
	__u64 now = 0;

	w = bpf_map_lookup_elem(&waiting, &prev_tid);
	if (w) {
		now = bpf_ktime_get_ns();
		/* a preempted task stays runnable whatever its state says */
		ls_ulock_switch_out(&w->t, now, !preempt && prev_state != 0);
	}
	w = bpf_map_lookup_elem(&waiting, &next_tid);
	if (w) {
		if (!now)
			now = bpf_ktime_get_ns();
		ls_ulock_switch_in(&w->t, now);
	}
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(userlock_waking, struct task_struct *p)
{
	__u32 tid = p->pid;
	__u64 waker;
	struct inflight *w;

	w = bpf_map_lookup_elem(&waiting, &tid);
	if (!w)
		return 0;
	if (!ls_ulock_woken(&w->t, bpf_ktime_get_ns(), !w->t.off_ns && switching_out_asleep(p)))
		return 0;
	w->woken = 1;
	if (trace_waits)
		w->wake_ns = bpf_ktime_get_ns();
	waker = bpf_get_current_pid_tgid();
	/* An interrupt's wakeup (a timeout) runs on whatever task it found; on
	 * an idle CPU that is no thread, and the wait has no waker. */
	w->waker_tid = (__u32)waker;
	w->waker_tgid = waker >> 32;
	bpf_get_current_comm(w->waker_comm, sizeof(w->waker_comm));
	return 0;
}

/* A process a target creates becomes a target before it can run: the parent
 * runs this inside fork(). A new thread is no new process. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(userlock_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 parent_tgid = parent->tgid, child_tgid = child->tgid;
	__u8 followed = 2; /* user space's own targets are 1 */

	if (!follow_children || child_tgid == parent_tgid || !bpf_map_lookup_elem(&targets, &parent_tgid))
		return 0;
	if (bpf_map_update_elem(&targets, &child_tgid, &followed, BPF_ANY))
		__sync_fetch_and_add(&counters.lost_targets, 1);
	return 0;
}

/* A followed process leaves the targets as its main thread exits, so that
 * short-lived children (a build's compilers) do not fill the map; its waits
 * stay counted. The processes user space named stay. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(userlock_exit_process, struct task_struct *task)
{
	__u32 tgid = task->tgid;
	__u8 *mark;

	if (!follow_children || task->pid != tgid)
		return 0;
	mark = bpf_map_lookup_elem(&targets, &tgid);
	if (mark && *mark == 2)
		bpf_map_delete_elem(&targets, &tgid);
	return 0;
}
