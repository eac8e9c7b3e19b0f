// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * User-space lock waits: the futex sleeps of target processes (the tgids
 * the loader puts in `targets`), timed from the syscall's entry to its exit
 * per thread (about 1 in LS_ULOCK_TIME_ONE_IN of them: wait_begins) and
 * added up per (tgid, futex address). A bounded subset of
 * waits (the first of each address, then 1 in sample_one_in of those that
 * slept, at most max_samples_per_sec) is sent to user space, as the wait
 * ends, with the waiter's registers and
 * the top of its user stack, for unwinding there with the binaries' CFI: the
 * stack is what tells a mutex from a condition variable.
 *
 * The syscall tracepoints through BTF: no tracefs, no kprobes, no uprobes.
 *
 * Each wait is split into on CPU, asleep and runnable (userlock_wait.h) by
 * sched_switch and sched_waking programs that look only at threads inside a
 * timed wait (their task storage, `threads`); the thread whose sched_waking
 * ended a wait's sleep is its waker.
 *
 * Chains into the kernel: when the kernel recorder (lockscope.bpf.c) runs,
 * user space gives this object its task_state and cpu_states maps before
 * loading (contention_state.h) and loads userlock_switch_chains instead of
 * userlock_switch: a waiter whose lock's owner is known looks, as it goes to
 * sleep, whether that owner is itself waiting for a kernel lock, and who
 * holds that one.
 *
 * What it costs: every syscall and context switch of the machine runs these
 * programs, and on a machine whose kernel entry flushes the TLB (page table
 * isolation) each page a program touches costs a miss. So each filters
 * first on what it was given (the syscall number, a constant), and a wait
 * lives on its CPU (ulock_cpus) until its thread is switched out: a futex
 * wait that never sleeps (-EAGAIN, the common case on a busy lock) touches
 * that CPU's state, its row and the clock, reads no owner and looks at no
 * kernel state. A wait whose thread is switched out moves to the thread's
 * task storage (`threads`), where the scheduler hooks, its waker and its
 * exit find it.
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
#include "holder_task.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile __u32 sample_one_in = 16;
const volatile __u32 max_samples_per_sec = 200;
/* 1: a process that a target creates is a target too (record's default). */
const volatile __u32 follow_children = 0;
/* 1: every process is a target but self_tgid (the recorder's own), and the
 * targets map is not looked at. */
const volatile __u32 all_processes = 0;
const volatile __u32 self_tgid = 0;
/* Rows of wait_rows (and keys of wait_index). */
const volatile __u32 max_rows = LS_ULOCK_MAX_KEYS;
/* Possible CPUs (a followed process that exits is forgotten on each). */
const volatile __u32 nr_cpus = 1;
/* 1: owners are followed for the holder split (userlock_switch_chains is
 * loaded): only then has any task an owner's record for the waking program
 * to keep, and only then does it look. */
const volatile __u32 follow_holders = 0;

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

/* What one wait learns as it goes: reset as it begins. */
struct ulock_wait {
	__u64 uaddr;
	__u32 op;
	__u32 owner_tid; /* read as it went to sleep; 0: not read (it has not slept) */
	__u32 slept;	 /* it has gone to sleep: its owner was read */
	__u32 woken;	 /* a wakeup ended one of its sleeps */
	__u32 waker_tid; /* whose wakeup ended its last sleep; 0: none, or an idle CPU's interrupt
			  */
	__u32 waker_tgid;
	char waker_comm[16];
	__u64 wake_ns;	   /* when that wakeup came */
	__u64 kernel_lock; /* the kernel lock the owner was waiting for; 0: none (or not looked for)
			    */
	__u32 kernel_flags;
	__u32 root_tid;	  /* that lock's holder */
	__u32 root_state; /* LS_ULOCK_ROOT_* */
	__u64 token;	  /* this wait, among every CPU's: its CPU's count of waits, and the CPU */
	__u32 timing;	  /* ULOCK_TIMED, ULOCK_UNTIMED or ULOCK_LATE */
	__u32 left;	  /* it has left its CPU */
	__u64 first_oncpu_ns; /* timed: from its entry to its first switch-out */
};

/* How a wait is timed (wait_begins): from its entry; not (yet); from its
 * first switch-out. */
#define ULOCK_TIMED   0
#define ULOCK_UNTIMED 1
#define ULOCK_LATE    2

/* A wait in flight: t.start_ns is 0 when there is none. */
struct ulock_inflight {
	struct ls_ulock_timing t;
	struct ulock_wait w;
};

/*
 * The holder split of a wait that slept behind an owner it read: its lock's
 * holds' sum (ulock_holds) at the waiter's first sleep and, once a wakeup
 * ended the sleep, what the lock's known holders did in between
 * (follow_owner(), waiter_woken()).
 */
#define ULOCK_HOLD_NONE	     0
#define ULOCK_HOLD_FOLLOWING 1
#define ULOCK_HOLD_DONE	     2
struct ulock_hold {
	__u64 token; /* the wait followed (ulock_wait.token) */
	__u64 sum[LS_HOLDER_PARTS];
	__u64 ns[LS_HOLDER_PARTS];
	__u32 state; /* ULOCK_HOLD_* */
	__u32 pad;
};

/*
 * A target thread's task storage: its wait once it has slept (moved here
 * from its CPU at its first switch-out, found again by the scheduler hooks
 * without a hash lookup), and a wakeup that came while that switch-out was
 * under way (the waker cannot reach the waiter's CPU): the switch-out takes
 * it over. Gone with the thread.
 */
struct ulock_thread {
	struct ulock_inflight in; /* first: a wait in here is its thread's (thread_of()) */
	struct ulock_hold hold;
	__u64 early_token; /* the wait an early wakeup woke (ulock_wait.token); 0: none */
	__u64 early_ns;	   /* when */
	__u32 early_waker_tid;
	__u32 early_waker_tgid;
	char early_waker_comm[16];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct ulock_thread);
} threads SEC(".maps");

/* A CPU's cache of rows: (process, futex word) -> this CPU's entry of its
 * row in wait_rows. */
#define ULOCK_ROW_CACHE 8
struct ulock_row_slot {
	__u64 uaddr;
	__u32 tgid;
	__u32 entry_plus1; /* 0: empty */
};

/*
 * Each CPU's state; no other CPU writes it. User space reads `counts`
 * (userlock_abi.h), the head of each CPU's entry. The wait of the task
 * running here lives in `in` until it ends or the task is switched out.
 */
struct ulock_cpu {
	struct ls_ulock_cpu counts;
	__u64 task; /* the task whose wait `in` holds; 0: none */
	struct ulock_inflight in;
	__u32 target_tgid; /* the last process found to be a target here; 0: none */
	__u32 other_tgid;  /* the last process found not to be one; 0: none */
	__u64 waits;	   /* waits begun here, for their tokens */
	struct ulock_row_slot rows[ULOCK_ROW_CACHE];
	__u64 spacing[8]; /* no cache line shared with the next CPU's entry */
};

/*
 * One entry per possible CPU (max_entries set by user space before load),
 * indexed by the CPU's number: a plain array's lookup is an address
 * computed from the map's, where a per-CPU array's reads a pointer on a
 * page of its own first, and every page a program touches costs a TLB
 * miss on a kernel whose entry flushes it.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ulock_cpu);
} ulock_cpus SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LS_ULOCK_MAX_TARGETS);
	__type(key, __u32);
	__type(value, __u8);
} targets SEC(".maps");

/*
 * The waits per (tgid, futex word) in two parts, as the kernel recorder keeps
 * its locks: wait_index gives each key a row once, and the row's entries of
 * wait_rows, one per possible CPU (entry row * nr_cpus + cpu: an inlined
 * lookup that reads no pointer on another page first, as a per-CPU array's
 * does; no atomics) hold its counters; user space adds the CPUs up. Each CPU
 * caches the entries it used last (ulock_cpu.rows), so that a wait on a word
 * seen before skips the hash lookup.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LS_ULOCK_MAX_KEYS); /* max_rows: resized by user space before load */
	__type(key, struct ls_ulock_key);
	__type(value, __u32);
} wait_index SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LS_ULOCK_MAX_KEYS); /* max_rows * nr_cpus, set by user space */
	__type(key, __u32);
	__type(value, struct ls_ulock_stats);
} wait_rows SEC(".maps");

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
	__uint(max_entries, 4096); /* sized by user space before load (userlock_exit_traced) */
} events SEC(".maps");

struct ls_ulock_counters counters = {};
__u64 window_start_ns = 0;
__u64 window_samples = 0;
/* Next free row of wait_rows (user space reads the rows wait_index names). */
__u32 next_wait_row = 0;

#include "userlock_account.h"
#include "userlock_holders.h"
#include "userlock_targets.h"

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

/* The LS_ULOCK_OP_* of a futex wait call, from its number and arguments
 * (at its exit too: the registers are the ones it entered with); 0 for any
 * other call, among them the wakes, which pay no more than this. */
static __always_inline __u32 wait_op(long id, struct pt_regs___ls *r)
{
	if (id == LS_ULOCK_NR_FUTEX)
		return futex_wait_op(LS_SYSCALL_ARG2(r));
	if (id == LS_ULOCK_NR_FUTEX_WAIT)
		return LS_ULOCK_OP_FUTEX_WAIT;
	if (id == LS_ULOCK_NR_FUTEX_WAITV)
		return LS_ULOCK_OP_WAITV;
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

/* This CPU's state; the CPU's number and the array's lookup are inlined. */
static __always_inline struct ulock_cpu *this_cpu(void)
{
	__u32 id = bpf_get_smp_processor_id();

	return bpf_map_lookup_elem(&ulock_cpus, &id);
}

/*
 * A futex wait begins, on this CPU: only the clock and what the call says.
 * Who holds the lock is read only if the waiter goes to sleep (switch_out):
 * most waits on a busy lock never do (the word changed, -EAGAIN), and those
 * pay for nothing they do not use.
 *
 * The clock is the costliest thing a wait reads (on a virtual machine whose
 * clock keeps every CPU's reads in order, each read writes a cache line all
 * CPUs share), and on a busy mutex nearly every wait is a syscall's round
 * trip that never leaves the CPU (the kernel refuses it: the word changed).
 * So unless time_all (record --trace), only about 1 in LS_ULOCK_TIME_ONE_IN
 * waits (random gaps per CPU) reads it here. A wait not timed that never
 * leaves its CPU is counted only, and user space gives it the mean of the
 * timed ones of its row (userlock/word_waits.cpp); one that leaves its CPU
 * is timed from its first switch-out, exactly from there (asleep, runnable,
 * and on CPU after), and user space adds the mean time timed waits spent on
 * CPU before their first switch-out.
 */
static __always_inline int wait_begins(struct pt_regs___ls *r, long id, bool time_all)
{
	__u64 task, uaddr;
	struct ulock_cpu *cpu;
	__u32 op, timing = ULOCK_TIMED;

	op = wait_op(id, r);
	if (!op)
		return 0;
	cpu = this_cpu();
	if (!cpu || !target_process(cpu, bpf_get_current_pid_tgid() >> 32))
		return 0;
	task = bpf_get_current_task();
	if (cpu->task != task) {
		if (cpu->task) {
			/* a wait whose task left this CPU unseen: lost */
			__sync_fetch_and_add(&counters.lost_inflight, 1);
			cpu->counts.in_flight--;
		}
		cpu->counts.in_flight++;
		cpu->task = task;
	}
	/* struct futex_waitv { u64 val; u64 uaddr; u32 flags; u32 __reserved; } */
	if (op == LS_ULOCK_OP_WAITV) {
		if (bpf_probe_read_user(&uaddr, sizeof(uaddr), (void *)(LS_SYSCALL_ARG1(r) + 8)))
			uaddr = 0;
	} else {
		uaddr = LS_SYSCALL_ARG1(r);
	}
	if (!time_all) {
		if (cpu->counts.time_tick) {
			cpu->counts.time_tick--;
			timing = ULOCK_UNTIMED;
		} else {
			cpu->counts.time_tick =
				bpf_get_prandom_u32() % (2 * LS_ULOCK_TIME_ONE_IN - 1);
		}
	}
	cpu->in.w = (struct ulock_wait){.uaddr = uaddr,
					.op = op,
					.timing = timing,
					.token = (++cpu->waits << 12) |
						 (bpf_get_smp_processor_id() & 0xfff)};
	/* start_ns 0: not timed (yet) */
	cpu->in.t = (struct ls_ulock_timing){.start_ns = timing == ULOCK_TIMED ? bpf_ktime_get_ns()
									       : 0};
	return 0;
}

/* Two entries, as for the exit: user space loads the second for record
 * --trace, which times every wait. */
SEC("tp_btf/sys_enter")
int BPF_PROG(userlock_enter, struct pt_regs *regs, long id)
{
	return wait_begins((void *)regs, id, false);
}

SEC("tp_btf/sys_enter")
int BPF_PROG(userlock_enter_traced, struct pt_regs *regs, long id)
{
	return wait_begins((void *)regs, id, true);
}

/* The current thread's wait in flight: on its CPU if it never left it,
 * else in its task storage; NULL for none (another thread's call). */
static __always_inline struct ulock_inflight *current_wait(struct ulock_cpu *cpu, bool *on_cpu)
{
	struct ulock_thread *th;

	*on_cpu = cpu->task == bpf_get_current_task();
	if (*on_cpu)
		return &cpu->in;
	th = bpf_task_storage_get(&threads, bpf_get_current_task_btf(), 0, 0);
	return th && th->in.t.start_ns ? &th->in : 0;
}

/* A wait not timed that never left the CPU it began on ends: its row counts
 * it; the first wait on an address still sends its stack. */
static __always_inline int untimed_wait_ends(struct ulock_cpu *cpu, struct pt_regs *regs,
					     struct ulock_inflight *in)
{
	struct ls_ulock_stats *stats;
	bool created = false;
	__u64 pid_tgid;
	__u32 entry;

	pid_tgid = bpf_get_current_pid_tgid();
	entry = wait_entry(cpu, pid_tgid >> 32, in->w.uaddr, &created);
	if (created)
		send_sample(regs, pid_tgid, &in->w, 0);
	entry--;
	stats = bpf_map_lookup_elem(&wait_rows, &entry);
	if (stats) {
		stats->waits++;
		stats->oncpu_waits++;
		stats->ops |= in->w.op;
	} else {
		__sync_fetch_and_add(&counters.lost_keys, 1);
	}
	cpu->task = 0;
	cpu->counts.in_flight--;
	return 0;
}

/* A futex wait ends: its parts, its row, a sample, its waker and chain. */
static __always_inline int wait_ends(__u64 *ctx, bool trace)
{
	struct pt_regs___ls *r = (void *)ctx[0];
	struct pt_regs *regs;
	struct ulock_inflight *in;
	struct ls_ulock_stats *stats;
	struct ls_ulock_parts parts;
	struct ulock_cpu *cpu;
	__u64 now, pid_tgid;
	bool on_cpu, created = false;
	__u32 entry;
	long ret;

	/* Every syscall of the machine passes here: the call first, and a
	 * thread's wait only for the futex waits. Nothing before this test
	 * may touch the stack: its page is one more per syscall. */
	if (!wait_op(LS_REGS_SYSCALL_NR(r), r))
		return 0;
	/* the arguments again, once past the test (sys_exit's: regs, ret) */
	asm volatile("" ::: "memory");
	regs = (void *)ctx[0];
	ret = (long)ctx[1];
	cpu = this_cpu();
	if (!cpu)
		return 0;
	in = current_wait(cpu, &on_cpu);
	if (!in)
		return 0;
	/* not timed, and it never left its CPU: counted only */
	if (!in->t.start_ns)
		return untimed_wait_ends(cpu, regs, in);
	now = bpf_ktime_get_ns();
	parts = ls_ulock_end(&in->t, now);
	pid_tgid = bpf_get_current_pid_tgid();
	entry = wait_entry(cpu, pid_tgid >> 32, in->w.uaddr, &created);
	/* The stack is taken here, not at the entry: the user registers and
	 * stack are the same, and only now is it known whether the waiter
	 * slept. A wait the kernel refused at once (-EAGAIN: the word changed
	 * before the waiter was queued) is counted but not sampled, except as
	 * its address's first. */
	if ((created || ret != -LS_EAGAIN) && take_sample(cpu, created, now))
		send_sample(regs, pid_tgid, &in->w, parts.wait_ns);
	/* 0 (no row): the lookup of entry -1 finds none */
	entry--;
	stats = bpf_map_lookup_elem(&wait_rows, &entry);
	if (stats) {
		add_wait(stats, &in->w, &parts);
		if (!on_cpu)
			add_holder_split(stats, thread_of(in));
		if (trace)
			trace_wait(pid_tgid, &in->w, &parts, now, ret);
		if (in->w.waker_tid)
			add_waker(pid_tgid >> 32, &in->w);
		if (in->w.kernel_lock)
			add_chain_wait(pid_tgid >> 32, &in->w, parts.wait_ns);
	} else {
		__sync_fetch_and_add(&counters.lost_keys, 1);
	}
	/* the wait is over */
	in->t.start_ns = 0;
	if (!on_cpu)
		thread_of(in)->hold.state = ULOCK_HOLD_NONE;
	if (on_cpu)
		cpu->task = 0;
	cpu->counts.in_flight--;
	return 0;
}

/* Two entries: user space loads the second for record --trace (a setting
 * read here would cost every wait a page of settings). */
SEC("tp_btf/sys_exit")
int userlock_exit(__u64 *ctx)
{
	return wait_ends(ctx, false);
}

SEC("tp_btf/sys_exit")
int userlock_exit_traced(__u64 *ctx)
{
	return wait_ends(ctx, true);
}

/*
 * Whether a task is inside a futex wait call: its registers at its kernel
 * entry, at the top of its own stack (hot while it switches), say. Nearly
 * every switch and wakeup of the machine is no such task's, and this test
 * spares them the maps.
 */
static __always_inline bool in_wait_call(struct task_struct *t)
{
	struct pt_regs___ls *r = (void *)bpf_task_pt_regs(t);

	return r && wait_op(LS_REGS_SYSCALL_NR(r), r);
}

/* The wait of prev, which leaves this CPU: moved to its task storage if it
 * was still here, with a wakeup that came meanwhile; NULL for none. */
static __always_inline struct ulock_inflight *leaving_wait(struct task_struct *prev)
{
	struct ulock_thread *th;
	struct ulock_cpu *cpu;

	if (!in_wait_call(prev))
		return 0;
	cpu = this_cpu();
	if (!cpu || cpu->task != (__u64)prev) {
		th = bpf_task_storage_get(&threads, prev, 0, 0);
		return th && th->in.t.start_ns ? &th->in : 0;
	}
	cpu->task = 0;
	th = bpf_task_storage_get(&threads, prev, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!th) {
		__sync_fetch_and_add(&counters.lost_inflight, 1);
		cpu->counts.in_flight--;
		return 0;
	}
	th->in = cpu->in;
	/* one not timed is in flight here from now on (its wakeup may come
	 * before on_switch times it): a start until then */
	if (th->in.w.timing == ULOCK_UNTIMED)
		th->in.t.start_ns = 1;
	if (th->early_token && th->early_token == th->in.w.token) {
		th->in.t.woken_early_ns = th->early_ns;
		th->in.w.woken = 1;
		th->in.w.wake_ns = th->early_ns;
		th->in.w.waker_tid = th->early_waker_tid;
		th->in.w.waker_tgid = th->early_waker_tgid;
		__builtin_memcpy(th->in.w.waker_comm, th->early_waker_comm,
				 sizeof(th->in.w.waker_comm));
	}
	th->early_token = 0;
	return &th->in;
}

/*
 * The wait's parts: only threads inside a timed wait are looked at, and the
 * clock is read only for them. A waiter's first sleep in a wait reads who
 * holds the lock (for its samples), and with chains whether that owner is
 * itself waiting for a kernel lock: once per sleep, never for the waits that
 * do not sleep.
 */
static __always_inline int on_switch(struct task_struct *prev, struct task_struct *next,
				     bool preempt, unsigned int prev_state, bool chains)
{
	bool blocked = !preempt && prev_state != 0;
	struct ulock_inflight *in;
	struct ulock_thread *th;
	__u64 now = 0;

	in = leaving_wait(prev);
	if (in) {
		now = bpf_ktime_get_ns();
		if (blocked && !in->w.slept) {
			in->w.slept = 1;
			if (in->w.op != LS_ULOCK_OP_WAITV)
				in->w.owner_tid = read_owner(in->w.uaddr, in->w.op);
			if (chains && in->w.owner_tid && in->w.owner_tid != prev->pid)
				owner_seen(thread_of(in), prev->tgid, now);
		}
		if (!in->w.left) {
			/* its first switch-out: one not timed is timed from here */
			in->w.left = 1;
			if (in->w.timing == ULOCK_UNTIMED) {
				in->t.start_ns = now;
				in->w.timing = ULOCK_LATE;
			} else {
				in->w.first_oncpu_ns = now - in->t.start_ns;
			}
		}
		/* a preempted task stays runnable whatever its state says */
		ls_ulock_switch_out(&in->t, now, blocked);
	}
	if (chains)
		owner_switch(prev, next, blocked);
	th = bpf_task_storage_get(&threads, next, 0, 0);
	if (!th || !th->in.t.start_ns)
		return 0;
	if (!now)
		now = bpf_ktime_get_ns();
	ls_ulock_switch_in(&th->in.t, now);
	return 0;
}

/* Two entries: user space loads the second when it has the kernel
 * recorder's maps and the kernel has bpf_task_from_pid (6.2+). */
SEC("tp_btf/sched_switch")
int BPF_PROG(userlock_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	return on_switch(prev, next, preempt, prev_state, false);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(userlock_switch_chains, bool preempt, struct task_struct *prev,
	     struct task_struct *next, unsigned int prev_state)
{
	return on_switch(prev, next, preempt, prev_state, true);
}

/*
 * A wakeup of a waiter whose switch-out is still under way on its CPU, its
 * wait still in that CPU's state: kept in its task storage, for the
 * switch-out to take over (leaving_wait).
 */
static __always_inline void wake_early(struct task_struct *p, __u64 now)
{
	struct ulock_cpu *other;
	struct ulock_thread *th;
	__u64 token, waker;
	__u32 id;

	if (!bpf_core_field_exists(p->cpu) || !switching_out_asleep(p) || !in_wait_call(p))
		return;
	id = BPF_CORE_READ(p, cpu);
	other = bpf_map_lookup_elem(&ulock_cpus, &id);
	if (!other || other->task != (__u64)p)
		return;
	token = other->in.w.token;
	th = token ? bpf_task_storage_get(&threads, p, 0, BPF_LOCAL_STORAGE_GET_F_CREATE) : 0;
	if (!th)
		return;
	waker = bpf_get_current_pid_tgid();
	th->early_ns = now;
	th->early_waker_tid = (__u32)waker;
	th->early_waker_tgid = waker >> 32;
	bpf_get_current_comm(th->early_waker_comm, sizeof(th->early_waker_comm));
	th->early_token = token;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(userlock_waking, struct task_struct *p)
{
	struct ulock_thread *th;
	__u64 waker, now;

	if (follow_holders)
		owner_woken(p);
	th = bpf_task_storage_get(&threads, p, 0, 0);
	if (!th || !th->in.t.start_ns) {
		if (p->on_cpu)
			wake_early(p, bpf_ktime_get_ns());
		return 0;
	}
	now = bpf_ktime_get_ns();
	if (!ls_ulock_woken(&th->in.t, now, !th->in.t.off_ns && switching_out_asleep(p)))
		return 0;
	th->in.w.woken = 1;
	th->in.w.wake_ns = now;
	waker = bpf_get_current_pid_tgid();
	/* An interrupt's wakeup (a timeout) runs on whatever task it found; on
	 * an idle CPU that is no thread, and the wait has no waker. */
	th->in.w.waker_tid = (__u32)waker;
	th->in.w.waker_tgid = waker >> 32;
	bpf_get_current_comm(th->in.w.waker_comm, sizeof(th->in.w.waker_comm));
	waiter_woken(th, p, now, (__u32)waker);
	return 0;
}
