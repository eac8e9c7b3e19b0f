/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What bpf/userlock.bpf.c shares with collector/userlock: user-space lock
 * waits (futex sleeps of target processes), per (tgid, futex address), and
 * the sampled waits' user stacks. Fixed-width types, explicit padding.
 */
#ifndef LOCKSCOPE_USERLOCK_ABI_H
#define LOCKSCOPE_USERLOCK_ABI_H

#include "lockscope_abi.h"

/* The futex operations a wait was seen with (ls_ulock_stats.ops, a mask). */
#define LS_ULOCK_OP_WAIT	    (1U << 0) /* futex(FUTEX_WAIT) */
#define LS_ULOCK_OP_WAIT_BITSET	    (1U << 1) /* futex(FUTEX_WAIT_BITSET) */
#define LS_ULOCK_OP_LOCK_PI	    (1U << 2) /* futex(FUTEX_LOCK_PI) */
#define LS_ULOCK_OP_LOCK_PI2	    (1U << 3) /* futex(FUTEX_LOCK_PI2) */
#define LS_ULOCK_OP_WAIT_REQUEUE_PI (1U << 4) /* futex(FUTEX_WAIT_REQUEUE_PI) */
#define LS_ULOCK_OP_WAITV	    (1U << 5) /* futex_waitv(), keyed by its first futex */
#define LS_ULOCK_OP_FUTEX_WAIT	    (1U << 6) /* futex_wait() (6.7+) */

/* The numbers of the futex wait calls, which the programs test as constants
 * (every syscall of the machine passes that test). futex_waitv (5.16) and
 * futex_wait (6.7) have the same numbers in every table. */
#if defined(__TARGET_ARCH_x86) || defined(__x86_64__)
#define LS_ULOCK_NR_FUTEX 202
#elif defined(__TARGET_ARCH_arm64) || defined(__aarch64__)
#define LS_ULOCK_NR_FUTEX 98
#else
#error "userlock_abi.h: no futex syscall number for this architecture"
#endif
#define LS_ULOCK_NR_FUTEX_WAITV 449
#define LS_ULOCK_NR_FUTEX_WAIT	455

#define LS_ULOCK_MAX_KEYS    16384
#define LS_ULOCK_MAX_TARGETS 1024

struct ls_ulock_key {
	__u32 tgid;
	__u32 pad;
	__u64 uaddr; /* the futex word's user address */
};

struct ls_ulock_stats {
	__u64 waits;
	__u64 wait_ns;
	__u64 max_wait_ns;
	__u32 ops;	 /* LS_ULOCK_OP_* seen */
	__u32 owner_tid; /* the last owner read at a wait, 0 if none */
	/* wait_ns in parts that add up to it (userlock_wait.h) */
	__u64 oncpu_ns;
	__u64 asleep_ns;
	__u64 runnable_ns;
	__u64 wakes;		     /* waits whose sleep a sched_waking ended */
	__u64 hist[LS_HIST_BUCKETS]; /* timed waits per log2(wait ns), as the kernel locks' */
	/*
	 * About 1 wait in LS_ULOCK_TIME_ONE_IN is timed from its entry
	 * (bpf/userlock.bpf.c wait_begins). Of the others, one that never
	 * leaves its CPU is counted in waits and oncpu_waits only, and one that
	 * does is timed from its first switch-out (late); user space adds what
	 * they miss at the timed waits' means (userlock/word_waits.cpp).
	 */
	__u64 oncpu_waits;	   /* waits that never left their CPU */
	__u64 oncpu_timed;	   /* of them, timed (their time is in wait_ns) */
	__u64 oncpu_timed_ns;	   /* their time */
	__u64 late;		   /* waits timed from their first switch-out */
	__u64 left_timed;	   /* waits timed from their entry that left their CPU */
	__u64 left_first_oncpu_ns; /* their time on CPU before their first switch-out */
	/*
	 * The holder split (lockscope_abi.h LS_HOLDER_*): of the waits that
	 * slept behind an owner they read (a glibc mutex's __owner, a PI
	 * futex's TID) and that this owner woke, what the owner did from the
	 * waiter's first sleep to that wakeup: running, runnable, asleep. The
	 * rest of wait_ns is unknown: the time on CPU before the sleep, after
	 * the wakeup (the lock was free), and waits another thread woke (the
	 * lock changed hands unseen) or that read no owner.
	 */
	__u64 holder_ns[LS_HOLDER_PARTS];
	__u64 holder_waits; /* the waits with a followed owner */
};

/* One wait in this many is timed from its entry, on average (the gaps are
 * drawn from 1..2N-1 per CPU). */
#define LS_ULOCK_TIME_ONE_IN 16

/*
 * Who woke the waiters (map wakers): per (process, waker thread, futex word),
 * the waits whose sleep that thread's sched_waking ended (its unlock, for a
 * mutex). The last wakeup of a wait counts.
 */
#define LS_ULOCK_MAX_WAKERS 16384

struct ls_ulock_waker_key {
	__u32 tgid;
	__u32 waker_tid;
	__u64 uaddr;
};

struct ls_ulock_waker {
	__u64 wakes;
	__u32 waker_tgid;
	__u32 pad;
	char comm[16]; /* the waker thread's name at its last wakeup */
};

/*
 * The holder split's tasks (map holder_waits): per (process, task, futex
 * word), as the owner the waiters followed (role LS_ULOCK_HOLDER), the
 * waiters' wait behind it in each state; as the task its CPU ran instead of
 * it while it was runnable (role LS_ULOCK_PREEMPTOR, the owner's last
 * preemptor at the wakeup), the wait behind it runnable. Values are
 * struct ls_holder_time (lockscope_abi.h), as the kernel recorder's.
 */
#define LS_ULOCK_MAX_HOLDERS 4096
#define LS_ULOCK_HOLDER	  0
#define LS_ULOCK_PREEMPTOR 1

struct ls_ulock_holder_key {
	__u32 tgid;
	__u32 tid;
	__u64 uaddr;
	__u32 role;
	__u32 pad;
};

#define LS_ULOCK_FORKED_FROM 4

/* One sampled wait, sent at the syscall's exit with the waiter's stack (as at its entry). */
struct ls_ulock_sample {
	__u32 tgid;
	__u32 tid;
	__u64 uaddr;
	__u32 op;	 /* one LS_ULOCK_OP_* */
	__u32 owner_tid; /* glibc mutex __data.__owner (uaddr + 8), or the PI futex word's TID; 0 if
			    unread */
	__u64 wait_ns;	 /* the wait's length: samples are sent as waits end */
	/* Its parent, the parent's parent, ... for as long as each runs the
	 * executable it runs, opened once (forked from it without exec: their
	 * memory maps were its own at the fork), nearest first; 0 after. Where
	 * the process has exited before user space read its maps, theirs
	 * unwind its stack and name its data. */
	__u32 forked_from[LS_ULOCK_FORKED_FROM];
	struct ls_user_stack stack;
};

/*
 * Chains into the kernel (map chain_waits, only when the kernel recorder's
 * contention state is shared): waits on a user lock whose owner was, as the
 * waiter went to sleep, itself inside a kernel lock wait the kernel recorder
 * tracks. Keyed by the user lock's futex word and the kernel lock as the
 * kernel recorder keys its lock rows (ls_lock_key: address, kind bits).
 */
#define LS_ULOCK_MAX_CHAINS 4096

/* What the kernel lock's holder (the chain's root) was doing then. */
#define LS_ULOCK_ROOT_RUNNING	0 /* on a CPU */
#define LS_ULOCK_ROOT_PREEMPTED 1 /* runnable, not running */
#define LS_ULOCK_ROOT_SLEEPING	2 /* blocked */
#define LS_ULOCK_ROOT_IOWAIT	3 /* blocked in I/O wait */
#define LS_ULOCK_ROOT_READERS	4 /* an rwsem held by readers: no single holder */
#define LS_ULOCK_ROOT_NO_OWNER	5 /* no owner in the lock word (released, or a handoff in flight) */
#define LS_ULOCK_ROOT_UNKNOWN	6 /* the owner word unreadable, or marked non-spinnable */
#define LS_ULOCK_ROOT_STATES	8 /* array size; the last slot is unused */

struct ls_ulock_chain_key {
	__u32 tgid;
	__u32 kernel_flags; /* the kernel lock's kind bits, as ls_lock_key.flags */
	__u64 uaddr;	    /* the user lock's futex word */
	__u64 kernel_lock;  /* the kernel lock's address, as ls_lock_key.lock */
};

struct ls_ulock_chain_stats {
	__u64 waits;
	__u64 wait_ns;
	__u64 max_wait_ns;
	__u64 roots[LS_ULOCK_ROOT_STATES]; /* waits per LS_ULOCK_ROOT_* */
	__u32 owner_tid;		   /* the last user lock owner seen waiting on the kernel lock */
	__u32 root_tid;			   /* the last holder of the kernel lock seen; 0: none */
};

/* Each CPU's own counts, the head of its entry in ulock_cpus (an array with
 * one entry per possible CPU, indexed by the CPU's number; the rest of the
 * entry is the program's own): no other CPU writes them. The waits in
 * flight are the sum of in_flight over the CPUs. */
struct ls_ulock_cpu {
	__s64 in_flight;   /* waits begun on this CPU minus waits ended on it */
	__u64 sample_tick; /* sampled waits: countdown to the next */
	__u64 time_tick;   /* waits: countdown to the next timed from its entry */
};

/* Counters in the program's .bss (userlock_bpf::bss). */
struct ls_ulock_counters {
	__u64 lost_keys;     /* waits not counted: the per-key map was full */
	__u64 lost_samples;  /* samples not sent: the ring buffer was full */
	__u64 lost_inflight; /* waits not timed: no room for the thread's wait state */
	__u64 rate_limited;  /* samples skipped by the per-second cap */
	__u64 lost_chains;   /* chained waits not counted: chain_waits was full */
	__u64 lost_targets;  /* processes a target created, not followed: targets was full */
	__u64 lost_wakers;   /* wakeups not credited to their waker: wakers was full */
	__u64 lost_events;   /* traced waits not sent: the events ring buffer was full */
	__u64 lost_holders;  /* owners not followed: no room, or their record busy */
};

/*
 * One finished wait (ring buffer events, record --trace): every futex wait
 * of a target, sent as it ends; user space keeps those on words it finds to
 * be locks, for the Chrome-trace export.
 */
struct ls_ulock_event {
	__u32 tgid;
	__u32 tid;
	__u64 uaddr;
	__u64 start_ns; /* the syscall's entry (bpf_ktime_get_ns) */
	__u64 end_ns;	/* its exit */
	__u64 oncpu_ns; /* the wait's parts (userlock_wait.h): they add up to end - start */
	__u64 asleep_ns;
	__u64 runnable_ns;
	__u64 wake_ns;	   /* when its last sleep's wakeup came; 0: none */
	__u32 waker_tid;   /* who sent it; 0: none, or an idle CPU's interrupt */
	__u32 waker_tgid;
	__u32 op;	   /* one LS_ULOCK_OP_* */
	__s32 ret;	   /* the syscall's return value */
};

#endif /* LOCKSCOPE_USERLOCK_ABI_H */
