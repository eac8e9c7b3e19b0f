/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The whole ABI between lockscope's BPF programs and user space.
 * Fixed-width types only, explicit padding, no bool/enum/pointer members:
 * the C++ side checks every size with static_assert (collector/probe/
 * abi_check.cpp).
 */
#ifndef LOCKSCOPE_ABI_H
#define LOCKSCOPE_ABI_H

#ifdef __bpf__
/* types come from kernel_types.h */
#else
#include <linux/types.h>
#endif

/* lock:contention_begin flags (include/trace/events/lock.h) */
#define LCB_F_SPIN   (1U << 0)
#define LCB_F_READ   (1U << 1)
#define LCB_F_WRITE  (1U << 2)
#define LCB_F_RT     (1U << 3)
#define LCB_F_PERCPU (1U << 4)
#define LCB_F_MUTEX  (1U << 5)
/* Bits lockscope adds in its own keys for user-space (USDT) replica locks. */
#define LS_F_USER    (1U << 16)
/* Never in the kernel's maps: an episode of the session's episodes table
 * that is a user-space lock's futex wait (record --trace with user locks). */
#define LS_F_FUTEX_WAIT (1U << 17)
#define LS_F_KIND_MASK (LCB_F_READ | LCB_F_WRITE | LCB_F_RT | LCB_F_PERCPU | LCB_F_MUTEX | LS_F_USER)

#define LS_MAX_DEPTH 4          /* nested episodes per task */
#define LS_HIST_BUCKETS 36      /* log2(ns) buckets; the last holds >= 2^35 ns */
#define LS_MAX_STACK_DEPTH 16   /* frames kept per sampled stack */
#define LS_MAX_CPUS 1024        /* CPUs whose per-CPU area is located (read_percpu_bases, lockscope.bpf.c) */
#define LS_MAX_CGROUPS 8        /* record --cgroup PATH, at most this many */
#define LS_MAX_CPU_MASK_WORDS 16 /* record -C: CPUs 0-1023 */
/* Default entries of the lock rows (lock_index, lock_stats, lock_identity) and
 * of the stack maps; user space sizes the maps before load (record
 * --max-locks). */
#define LS_MAX_LOCKS_DEFAULT  16384
#define LS_MAX_STACKS_DEFAULT 16384

/* traced_tgids values: the parent's tgid, with this bit once the process
 * exited (user space lists it in the session, then deletes the entry). */
#define LS_TREE_EXITED (1U << 31)

/* Owner state read from the lock word when a waiter queues. */
#define LS_OWNER_ON_CPU       0 /* owned by a task that is running */
#define LS_OWNER_OFF_CPU      1 /* owned by a task that is not running */
#define LS_OWNER_READER       2 /* rwsem owned by readers */
#define LS_OWNER_NONSPINNABLE 3 /* rwsem marked non-spinnable */
#define LS_OWNER_NONE         4 /* no owner recorded (released, or mid-release) */
#define LS_OWNER_STATES       5
#define LS_OWNER_UNKNOWN      0xff

/*
 * What the kernel says about a lock, read once when its row is created (the
 * first finished episode on it), never per event: the slab cache that holds
 * it, the creating task's well-known member it is, and for a lock that may be
 * an inode's i_rwsem, that inode. User space turns it into a class name with
 * the kernel's BTF (collector/identity).
 */
#define LS_IDENTITY_SLAB_LOOKUP (1U << 0) /* bpf_get_kmem_cache ran (6.13+) */
#define LS_IDENTITY_TASK_LOOKUP (1U << 1) /* the task's members were compared */
#define LS_IDENTITY_INODE_READ  (1U << 2) /* the inode fields below were read */
#define LS_IDENTITY_FD_SCAN     (1U << 3) /* the task's open pipes were compared */

/* The creating task's members (task_member). */
#define LS_TASK_NONE        0
#define LS_TASK_MMAP_LOCK   1 /* mm->mmap_lock */
#define LS_TASK_SIGLOCK     2 /* sighand->siglock */
#define LS_TASK_CRED_GUARD  3 /* signal->cred_guard_mutex */
#define LS_TASK_EXEC_UPDATE 4 /* signal->exec_update_lock */
#define LS_TASK_FILE_LOCK   5 /* files->file_lock */
#define LS_TASK_FS_LOCK     6 /* fs->seq.lock (fs->lock before 6.x) */
#define LS_TASK_RENAME      7 /* the cwd's super_block s_vfs_rename_mutex */
#define LS_TASK_PIPE        8 /* inside a pipe the task has open: object = its pipe_inode_info */
#define LS_TASK_FUTEX_HASH  9 /* inside mm->futex_phash: object = the futex_private_hash */

struct ls_lock_identity {
	__u64 cache;          /* struct kmem_cache * holding the lock; 0: none found */
	__u32 object_size;    /* the cache's object_size */
	__u32 slab_size;      /* its size: object plus metadata, the stride within a slab */
	__u32 red_left_pad;   /* 0 without SLUB red zones */
	__u16 order;          /* the cache's slab order (oo), and its fallback (min) */
	__u16 min_order;
	__u32 task_member;    /* LS_TASK_* */
	__u32 tgid;           /* the creating task's process */
	__u32 sources;        /* LS_IDENTITY_* */
	__u32 inode_dev;      /* if the lock is an inode's i_rwsem (or in its pipe): the super_block's s_dev, */
	__u64 inode_ino;      /* the inode number, */
	__u64 object;         /* LS_TASK_PIPE, _FUTEX_HASH: the object's address (the lock is inside it) */
	char cache_name[32];
	char fs_type[16];     /* the file system's name, */
	char dentry_name[32]; /* and the name of the inode's first dentry */
};

/* Key of the per-lock aggregation map. */
struct ls_lock_key {
	__u64 lock;  /* lock address */
	__u32 flags; /* begin flags & LS_F_KIND_MASK */
	__u32 pad;
};

/*
 * The field tables. Each name is the same in BPF, in user space's structs
 * (core/model.h), in the session's columns and in the report's JSON and CSV:
 * everything that sums, subtracts, stores, loads or prints these counters
 * walks these lists (core/model.h's kCounterFields and kLostFields).
 *
 * LS_LOCK_COUNTERS: the counters of one lock, in ls_lock_stats order.
 * X(name, merge, help): merge is how CPUs and intervals combine (sum, or
 * max: a running maximum, not a count); help says what it counts (also the
 * Prometheus help).
 */
#define LS_LOCK_COUNTERS(X)                                                                     \
	X(contentions, sum, "Contention episodes that ended")                                   \
	X(spin_attempts, sum, "Optimistic spin phases of sleeping locks")                       \
	X(spin_failures, sum, "Spin phases that ended with the waiter queueing")                \
	X(spin_successes, sum, "Spin phases that ended with the lock taken")                    \
	X(wait_ns, sum, "Time waiters waited")                                                  \
	X(spin_ns, sum, "Time in optimistic spin phases, as the tracepoints mark them")         \
	X(sleep_ns, sum, "Time waiters were switched out blocked, until woken")                 \
	X(preempt_ns, sum, "Time waiters were switched out runnable: preempted, or woken")      \
	X(sleeps, sum, "Times a waiter was switched out blocked")                               \
	X(preemptions, sum, "Times a waiter was switched out runnable")                         \
	X(max_wait_ns, max, "Longest wait")                                                     \
	X(errors, sum, "Waits that ended with an error (signal, timeout)")                      \
	X(wakeups, sum, "Times another task woke a queued waiter")                              \
	X(timed, sum, "Episodes whose times were measured (all, unless record --sample)")        \
	X(wait_var_us2, sum, "Variance of the wait_ns estimate in us^2 (0: every wait timed)")  \
	X(spin_offcpu_ns, sum, "Time inside spin phases that waiters were switched out")         \
	X(spin_yields, sum, "Spin phases in which the spinner gave up its CPU, still runnable")  \
	X(holder_running_ns, sum, "Time waiters waited while the lock's holder ran on a CPU")    \
	X(holder_runnable_ns, sum, "Time waiters waited while the lock's holder was runnable, not running") \
	X(holder_asleep_ns, sum, "Time waiters waited while the lock's holder was blocked")

/* The subset a task keeps (ls_task_stats, episode.h's ls_task_totals): X(name). */
#define LS_TASK_COUNTERS(X)                                                                     \
	X(contentions) X(spin_attempts) X(spin_failures) X(wait_ns) X(spin_ns) X(sleep_ns)      \
	X(preempt_ns) X(sleeps) X(timed) X(spin_offcpu_ns)

/*
 * Sampled timing (record --sample N): every count above stays exact, but only
 * about one episode in N per CPU is timed at its begin and end; the others
 * add nothing to wait_ns, spin_ns, max_wait_ns or hist. Off-CPU times
 * (sleep_ns, preempt_ns) are measured in every episode. In the kernel wait_ns
 * then holds the timed episodes' on-CPU wait (wait minus off CPU) and
 * wait_var_us2 the sum of its squares in (256 ns)^2 units; user space turns
 * them into estimates and the variance of the wait estimate
 * (collector/pipeline/sampled_timing.h) before anything stores or prints them. With
 * full timing (N = 1) wait_var_us2 stays 0.
 */

/*
 * Drops, by cause: ls_counters.lost_<name>, user space's LostCounters.<name>,
 * the session's runs.lost_<name>, the JSON's lost_by_cause.<name>.
 * X(name, label): label names the cause in the text report.
 */
#define LS_LOST_CAUSES(X)                                                                       \
	X(depth, "depth")                         /* nesting deeper than LS_MAX_DEPTH */        \
	X(lock_map_full, "lock-map")              /* lock map full: episode not aggregated */   \
	X(stack, "stack")                         /* bpf_get_stackid failed */                  \
	X(stack_map_full, "stack-map")            /* stack sample map full */                   \
	X(task_map_full, "task-map")              /* task map full */                           \
	X(task_storage, "task-storage")           /* task storage could not be created */       \
	X(ring_buffer, "ringbuf")                 /* finished episodes not streamed */          \
	X(nested, "nested in lockscope")          /* events of an interrupt in our own program */ \
	X(abandoned, "end never seen")            /* inner episodes popped by an outer end */   \
	X(process_map_full, "process-map")        /* a traced tree's process not followed */

/*
 * Per-run counts beside the losses: ls_counters.<name>, user space's
 * RunInfo.<name>, the session's runs.<name>. X(name, version): the session
 * schema version from which the runs table has the column (older files read 0).
 */
#define LS_RUN_COUNTS(X)                                                                        \
	X(unmatched_ends, 1) /* ends without a begin seen (started before recording) */         \
	X(stack_samples, 1)  /* stacks captured */                                              \
	X(holder_samples, 3) /* holder stacks captured */                                       \
	X(holder_changed, 3) /* holder stacks dropped: the lock changed hands while one was taken */ \
	X(holder_oncpu_samples, 5) /* running holders' stacks taken on their own CPU (timer) */  \
	X(holder_oncpu_dropped, 5) /* timer ticks on a holder still holding its lock, no stack taken */ \
	X(holder_untracked, 7) /* holders not followed, or their times not kept: holder maps full or busy */

#define LS_U64_COUNTER(name, merge, help) __u64 name;
#define LS_U64_FIELD(name) __u64 name;

/* Per-CPU cumulative counters of one lock key; user space sums CPUs (and
 * takes the max of max_wait_ns, which is per CPU). */
struct ls_lock_stats {
	LS_LOCK_COUNTERS(LS_U64_COUNTER)
	__u64 owner[LS_OWNER_STATES];
	__u64 hist[LS_HIST_BUCKETS];
};

/* Key of the sampled-stack map: which stacks contended (or woke) a lock. */
#define LS_ROLE_WAITER 0
#define LS_ROLE_WAKER  1
/* The holder's stack when a waiter queued, by what the holder was doing. */
#define LS_ROLE_HOLDER_RUNNING   2 /* on a CPU */
#define LS_ROLE_HOLDER_PREEMPTED 3 /* runnable, not running */
#define LS_ROLE_HOLDER_SLEEPING  4 /* blocked */
#define LS_ROLE_HOLDER_IOWAIT    5 /* blocked in I/O wait (io_schedule) */
/* A holder seen running by a waiter, its stack taken later on its own CPU by
 * a timer while it still held the lock: samples only, no waiter's wait. */
#define LS_ROLE_HOLDER_ON_CPU    6
/* A followed holder's stack where it slept holding the lock, taken as it is
 * woken (the holder split's asleep part): each sleep one sample, wait_ns the
 * time it slept there while waiters followed it. Followed, not sampled. */
#define LS_ROLE_HOLDER_ASLEEP    7
#define LS_ROLE_HOLDER_FIRST     LS_ROLE_HOLDER_RUNNING
#define LS_ROLE_HOLDER_LAST      LS_ROLE_HOLDER_ASLEEP
/* Holder stacks are not in the stack-trace map (that takes only the current
 * task's): their ids have this bit, and their frames are in holder_stacks. */
#define LS_HOLDER_STACK_BIT 0x40000000
struct ls_stack_key {
	__u64 lock;
	__u32 flags;
	__s32 stack_id;
	__u32 role;
	__u32 pad;
};

struct ls_stack_stats {
	__u64 samples;
	__u64 wait_ns; /* wait time of the sampled episodes (waiter and holder roles) */
};

/* A wait-chain edge: waiters of (lock, flags) queued behind a holder that
 * was itself waiting for (holder_lock, holder_flags); value ls_stack_stats. */
struct ls_edge_key {
	__u64 lock;
	__u64 holder_lock;
	__u32 flags;
	__u32 holder_flags;
};

/* Which task held a lock when a waiter queued (sampled holders): map
 * holder_tasks, keyed by the lock row and the holder's thread id. */
#define LS_MAX_HOLDER_TASKS 4096
struct ls_holder_task_key {
	__u64 lock;
	__u32 flags;
	__u32 tid;
};

struct ls_holder_task {
	__u64 samples;
	__u32 tgid;
	__u32 pad;
	char comm[16];
};

/* Which cgroups' tasks waited on a lock: counted at the sampled waiter
 * stacks (the first episode of each lock and one in stack_period per CPU),
 * so every lock has at least one. Map lock_cgroups, value: samples. */
#define LS_MAX_LOCK_CGROUPS 8192
struct ls_lock_cgroup_key {
	__u64 lock;
	__u64 cgroup; /* cgroup v2 id of the waiting task */
	__u32 flags;
	__u32 pad;
};

/* The frames of a holder stack (ids with LS_HOLDER_STACK_BIT). */
struct ls_holder_stack {
	__u64 ips[LS_MAX_STACK_DEPTH];
};

/* Per-task totals, keyed by pid (thread id), as of the task's last switch-out. */
struct ls_task_stats {
	__u32 tgid;
	__u32 pad;
	char comm[16];
	LS_TASK_COUNTERS(LS_U64_FIELD)
	__u64 cgroup; /* the task's cgroup v2 id (its directory's inode) when last flushed */
};

/* Per-CPU idle accounting from sched_switch. */
struct ls_cpu_idle {
	__u64 idle_ns;    /* completed idle periods */
	__u64 idle_since; /* 0 when not idle (or not yet known) */
};

/* Per-CPU event and loss counters (the cnt of each CPU's ls_cpu_state).
 * The first four share a cache line with the state's owner word. One
 * lost_<name> per LS_LOST_CAUSES entry (probe/abi_check.cpp checks). */
struct ls_counters {
	__u64 begins;
	__u64 ends;
	__u64 sample_tick;           /* countdown to the next stack sample */
	__u64 busy;                  /* 1 while a begin/end tracepoint program runs here: see nested_in_own() */
	__u64 unmatched_ends;        /* end without a begin seen (started before recording) */
	__u64 lost_depth;            /* nesting deeper than LS_MAX_DEPTH */
	__u64 lost_lock_map_full;    /* lock map full: episode not aggregated */
	__u64 lost_stack;            /* bpf_get_stackid failed (map full / collision) */
	__u64 lost_stack_map_full;   /* stack sample map full */
	__u64 lost_task_map_full;    /* task map full */
	__u64 lost_task_storage;     /* task storage could not be created */
	__u64 lost_abandoned;        /* inner episodes popped by an outer end */
	__u64 stack_samples;         /* stacks captured */
	__u64 lost_ring_buffer;      /* finished episodes not streamed (ring buffer full, no trace state) */
	__u64 lost_nested;           /* events of an interrupt nested in our own begin/end program */
	__u64 lost_process_map_full; /* a process of the traced tree not followed: traced_tgids full */
	__u64 holder_tick;           /* countdown to the next holder stack sample */
	__u64 holder_samples;        /* holder stacks captured */
	__u64 holder_changed;        /* holder stacks dropped: the lock changed hands while one was taken */
	__u64 oncpu_tick;            /* countdown to the next spin begin that registers a running owner */
	__u64 holder_untracked;      /* holders not followed, or their times not kept (holder_split.h) */
	/* written by the CPU-clock program only (an interrupt: it must not
	 * share a counter with the begin/end programs it may interrupt) */
	__u64 holder_oncpu_samples;  /* running holders' stacks taken on their own CPU */
	__u64 holder_oncpu_dropped;  /* ticks on a holder still holding its lock, no stack taken */
};

/*
 * The per-CPU and per-task state of the episode state machine (episode.h
 * holds its code). User space reads each CPU's ls_cpu_state (the cpu_states
 * map): its counters, and its pending episode once the programs are detached.
 */
struct ls_episode {
	__u64 lock;
	__u64 begin_ns;   /* first begin */
	__u64 phase_ns;   /* start of the current spin phase */
	__u64 spin_ns;
	__u64 sleep_ns;
	__u64 preempt_ns;
	__u64 spin_offcpu_ns; /* the part of spin_ns, sleep_ns + preempt_ns that was both */
	__u32 flags;      /* kind bits of the first begin */
	__u16 spin_attempts;
	__u16 spin_failures;
	__u16 sleeps;
	__u16 preemptions;
	__u16 wakeups;
	__u8 in_spin;      /* current phase is an optimistic spin */
	__u8 spin_success; /* the episode ended in a spin phase */
	__u8 owner_seen[LS_OWNER_STATES]; /* owner state at each queueing */
	__u8 queued;       /* the task queued (or slept, was preempted, was woken): see ls_account */
	__u8 holder_role;  /* LS_ROLE_HOLDER_* of the holder stack sampled when it queued */
	__u8 timed;        /* its times are measured: every episode, or one in N (record --sample) */
	__u32 holder_stack; /* that stack's id (LS_HOLDER_STACK_BIT set); 0: none sampled */
	__u64 chain_lock;   /* the lock that sampled holder was itself waiting for; 0: none */
	__u32 chain_flags;  /* and its kind bits (a lock row's key, as flags above) */
	__u16 spin_yields;  /* spin phases switched out runnable (the spinner gave up its CPU) */
	__u16 holder_follow; /* its holder is followed (holder_split.h): its end adds the holder's parts */
};

/* A task's cumulative totals; copied to the task_stats map when it is
 * switched out, so the per-episode path needs no hash lookup for them. */
struct ls_task_totals {
	LS_TASK_COUNTERS(LS_U64_FIELD)
};

struct ls_task_state {
	__u64 switched_out_ns; /* 0 while on CPU */
	__u64 woken_ns;        /* when a task switched out blocked was woken; 0: not yet */
	__u32 depth;
	__u32 out_blocked;     /* switched out in a blocked state (a sleep) */
	__u32 dirty;           /* totals changed since the last flush */
	__u32 pad;
	/* Woken while still on its CPU, already taken off the run queue: its
	 * switch-out, blocked, is under way and has not been seen yet (the
	 * waker runs on another CPU). That switch-out takes it as woken. */
	__u64 woken_early_ns;
	struct ls_task_totals totals;
	struct ls_episode ep[LS_MAX_DEPTH];
};

/*
 * Each CPU's state (lockscope.bpf.c's cpu_states map): the state of the task
 * running there, handed over at every context switch, the CPU's counters,
 * and a direct-mapped cache of (lock, kind) -> lock_stats row. Rows are
 * assigned once and never move, so a stale or evicted slot costs one hash
 * lookup and never loses or misplaces a count. User space reads cnt, and
 * pending once the programs are detached.
 */
#define LS_ROW_CACHE 16
struct ls_row_slot {
	__u64 lock;
	__u32 flags;
	__u32 row_plus1; /* 0: empty */
};

/*
 * A finished episode not yet added to its lock's counters. contention_end
 * runs with the lock held, and every nanosecond there lengthens the critical
 * section everyone queues on: it only stashes the episode here, and the CPU's
 * next contention_begin or sched_switch (which comes before the task's
 * totals are published, and before it can run anywhere else) adds it with
 * ls_account(). So the counters lag by at most one episode per CPU while
 * recording, and never go back; the final snapshot, taken once the programs
 * are detached, adds what is still pending (collector/probe/probe.cpp).
 */
struct ls_pending {
	struct ls_episode ep;
	__u64 end_ns;
	__s32 ret;
	__u32 row_plus1; /* the lock_stats row + 1; 0: nothing pending */
};

struct ls_cpu_state {
	__u64 resident;         /* tid + 1 of the task whose state ts holds (not a lock owner); 0: none */
	struct ls_counters cnt;
	struct ls_pending pending;
	struct ls_task_state ts;
	struct ls_row_slot rows[LS_ROW_CACHE];
	__u64 time_tick;        /* countdown to the next timed episode (record --sample) */
};

/*
 * Trace mode (record --trace): each finished episode is streamed through a
 * ring buffer with its phases. A record is sent only up to its last used
 * phase, so a spin win costs the header and one phase.
 */
#define LS_TRACE_MAX_PHASES 16  /* phase records kept per episode; more are truncated */
#define LS_PHASE_SPIN   0       /* optimistic spin, or a spinlock's whole wait */
#define LS_PHASE_QUEUED 1

struct ls_trace_phase {
	__u64 start_ns;
	__u32 kind;  /* LS_PHASE_* */
	__u32 owner; /* LS_OWNER_* when this phase is a queueing, else LS_OWNER_UNKNOWN */
};

struct ls_trace_episode {
	__u64 lock;
	__u64 begin_ns;    /* first begin */
	__u64 end_ns;
	__u64 spin_ns;
	__u64 sleep_ns;
	__u64 preempt_ns;
	__u64 wake_ns;     /* when the last waker woke it (sched_waking), 0: never woken */
	__u32 flags;       /* the episode's kind bits, as in ls_lock_key */
	__u32 tid;
	__u32 tgid;
	__u32 waker;       /* tid of the last task that woke it while queued, 0: none */
	__s32 ret;
	__u16 sleeps;
	__u16 preemptions;
	__u16 nphases;
	__u16 truncated;   /* 1: phases beyond LS_TRACE_MAX_PHASES were dropped */
	__u32 waker_tgid;  /* the waker's process */
	struct ls_trace_phase phases[LS_TRACE_MAX_PHASES];
};

/* Sampling: a stack is captured for the first episode of each lock key and
 * then for one episode in stack_period per CPU. */
/* rwsem_spin.bpf.c (fentry, where the kernel allows it): the rwsem writer's
 * optimistic spin per lock, merged into that lock's WRITE row. */
struct ls_rwsem_spin {
	__u64 spin_attempts;
	__u64 spin_failures; /* the writer queued after spinning */
};

/*
 * oncpu.bpf.c, the exact "is the owner running?" oracle for reflock: the map
 * oncpu has one value, which user space maps read-only, sized at load time
 * as LS_ONCPU_WORDS(entries, cpus) __u32 slots (entries a power of two, cpus
 * at most LS_ONCPU_MAX_CPUS):
 *
 *	__u32 tid[entries];  slot tid & (entries - 1): tid while that thread runs, else 0
 *	__u32 cpu[cpus];     per CPU, the tid the program believes runs there (0: none of ours)
 *
 * One value, not one element per slot: an array map stores each element in
 * 8 bytes, and reflock's OnCpuTableOracle reads packed __u32s.
 */
#define LS_ONCPU_DEFAULT_ENTRIES 4096
#define LS_ONCPU_MAX_CPUS 1024 /* CPUs with a belief slot; beyond it a CPU is never repaired */
#define LS_ONCPU_TID_SLOT(tid, entries) ((tid) & ((entries) - 1))
#define LS_ONCPU_CPU_SLOT(cpu, entries) ((entries) + (cpu))
#define LS_ONCPU_WORDS(entries, cpus) ((entries) + (cpus))

/*
 * A sampled thread's user registers and the top of its user stack, copied
 * by bpf/user_stack.h and unwound in user space (collector/unwind) with
 * the binaries' CFI, as `perf --call-graph dwarf` does: distribution
 * binaries have no frame pointers. data[0] is the byte at regs.sp.
 */
#define LS_USER_STACK_BYTES 8192
struct ls_user_regs {
	__u64 ip;
	__u64 sp;
	__u64 bp; /* x86_64 rbp, arm64 x29 */
};

struct ls_user_stack {
	struct ls_user_regs regs;
	__u32 size; /* bytes of data copied, 0 when the registers were not user ones */
	__u32 pad;
	__u8 data[LS_USER_STACK_BYTES];
};

/*
 * A kernel lock's sampled waiter with its user stack (ring buffer
 * user_stacks, when user space asked for them): sent where its kernel stack
 * is sampled, at the wait's end, for the sleeping kinds only (never in an
 * interrupt, so the registers are the waiter's), at most
 * max_user_stacks_per_sec. stack_id is the kernel stack's (map stacks).
 */
struct ls_kernel_user_sample {
	__u64 lock;
	__u32 flags;
	__s32 stack_id;
	__u32 tgid;
	__u32 tid;
	__u64 wait_ns;
	struct ls_user_stack stack;
};

/* What became of them (.bss user_stack_counts). */
struct ls_user_stack_counts {
	__u64 sent;	    /* records submitted */
	__u64 rate_limited; /* not sent: max_user_stacks_per_sec reached */
	__u64 lost;	    /* not sent: the ring buffer was full */
	__u64 no_user;	    /* not sent: the waiter had no user registers (a kernel thread) */
};

/*
 * The holder split (DESIGN.md "Metrics"; bpf/holder_track.h): each waiter's
 * wait in the parts its lock's holder spent running, runnable and asleep
 * (holder_*_ns of LS_LOCK_COUNTERS; the rest of the wait is unknown).
 *
 * A lock's known holders are watched: the owner a queued waiter finds in
 * the lock's owner word, and each waiter that then acquires it (its
 * successor). A watched holder has a slot in holder_tracks (its task
 * pointer in holder_keys, at one of LS_HOLDER_WAYS places its pointer
 * hashes to), where the scheduler programs keep the time it spent in each
 * state. The lock's record (holder_locks) adds up its known holders' parts,
 * each up to its release; a waiter takes that sum when it queues and again
 * at its end, and the difference is its wait's parts.
 */
#define LS_HOLDER_RUNNING  0 /* on a CPU */
#define LS_HOLDER_RUNNABLE 1 /* switched out runnable (preempted), or woken and not yet running */
#define LS_HOLDER_ASLEEP   2 /* switched out blocked */
#define LS_HOLDER_UNSEEN   3 /* between two events that do not follow on (a switch the programs missed) */
#define LS_HOLDER_PARTS    3 /* the parts a waiter's wait keeps: running, runnable, asleep */
#define LS_HOLDER_STATES   4
#define LS_HOLDER_SLOT_BITS 10
#define LS_HOLDER_SLOTS (1U << LS_HOLDER_SLOT_BITS)
#define LS_HOLDER_WAYS 4      /* places per task, in one cache line of holder_keys */
#define LS_HOLDER_RELEASES 4  /* releases a holder keeps (a power of two) */

/* A release seen: the holder woke a waiter of `lock`, having let it go. */
struct ls_holder_release {
	__u64 lock;
	__u64 ns;
	__u64 v[LS_HOLDER_PARTS]; /* the holder's times then (ls_holder_times()) */
};

/* One watched holder (map holder_tracks). Written under its lock word `seq`
 * (odd while held); user space does not read it. */
struct ls_holder_track {
	__u64 since_ns;              /* when the current state began */
	__u64 cum[LS_HOLDER_STATES]; /* time in each state before since_ns, while followed */
	__u64 touched_ns;            /* a follower's last join or leave: a slot untouched long is taken back */
	__u32 seq;
	__u32 gen;                   /* bumped when the slot is given to a task */
	__u32 state;                 /* LS_HOLDER_* */
	__u32 followers;             /* waiters following it; 0: the scheduler programs leave it alone */
	__u32 early_wake;            /* woken while still on its CPU, going to sleep */
	__u32 releases;              /* releases seen; rel[releases % LS_HOLDER_RELEASES] is the next */
	__u32 tid;
	__u32 tgid;
	__u32 preempt_tid;           /* the task its CPU switched to when it was last switched out runnable */
	__u32 preempt_tgid;
	__u64 lock;                  /* the lock its first follower waits for: checked at each switch-out */
	__u32 lock_flags;
	__u32 holds;                 /* it held that lock at its last look */
	char comm[16];
	char preempt_comm[16];
	struct ls_holder_release rel[LS_HOLDER_RELEASES];
};

/* The watched holders' task pointers, slot by slot (0: a free slot). */
struct ls_holder_keys {
	__u64 task[LS_HOLDER_SLOTS];
};

/* A hold followed: a lock's known holder since it was seen holding it,
 * with that holder's times then (ls_follow_begin()). */
struct ls_holder_follow {
	__u64 lock;                    /* the lock held */
	__u64 task;                    /* its holder; 0: none known now (its time is unknown) */
	__u64 snap_ns;
	__u64 snap[LS_HOLDER_PARTS];
	__u32 flags;                   /* the lock's kind bits */
	__u32 slot;
	__u32 gen;
	__u32 releases;                /* the holder's release count at the snapshot */
};

/* A lock's known holders, for its queued waiters (map holder_locks, keyed
 * by the lock's address). Written under its lock word `seq`. */
struct ls_holder_lock {
	struct ls_holder_follow cur;     /* the hold under way */
	__u64 cum[LS_HOLDER_PARTS];      /* the closed holds' parts, added up */
	__u64 seen[LS_HOLDER_PARTS];     /* the most of cur's part a look has taken */
	__u64 mark[LS_HOLDER_PARTS];     /* cur's part at the last change in `following` */
	__u64 caused[LS_HOLDER_PARTS];   /* cur's part times the waiters following it: the waiting it caused */
	__u32 seq;
	__u32 waiters;                   /* queued waits on the lock that follow it */
	__u32 following;                 /* of them, those following now (not spinning on a CPU) */
	__u32 joined;                    /* waiters that followed part of cur's hold */
};

/* A waiter's following of its lock (task storage holder_follow). */
struct ls_waiter_follow {
	__u64 lock;                    /* the followed episode's lock; 0: none */
	__u64 snap[LS_HOLDER_PARTS];   /* the lock's sum when it began following */
	__u64 part[LS_HOLDER_PARTS];   /* the episode's parts so far */
	__u32 flags;
	__u32 following;               /* 0: not now (spinning on its CPU, or no record) */
};

/*
 * Map holder_times: per lock row, the waiting each holder task caused in
 * each of its states (role HOLDER), and the holder-runnable wait behind the
 * task that had preempted the holder (role PREEMPTOR: ns[LS_HOLDER_RUNNABLE]
 * only). waits: the waiters that followed a hold of it with some time in it.
 */
#define LS_HOLDER_TIME_HOLDER    0
#define LS_HOLDER_TIME_PREEMPTOR 1
#define LS_MAX_HOLDER_TIMES 4096
struct ls_holder_time_key {
	__u64 lock;
	__u32 flags;
	__u32 tid;
	__u32 role;
	__u32 pad;
};

struct ls_holder_time {
	__u64 ns[LS_HOLDER_PARTS];
	__u64 waits;
	__u32 tgid;
	__u32 pad;
	char comm[16];
};

#endif /* LOCKSCOPE_ABI_H */
