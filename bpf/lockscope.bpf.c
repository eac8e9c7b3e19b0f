// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * lockscope's in-kernel half: a per-task contention episode state machine
 * (episode.h) on lock:contention_begin/end, off-CPU accounting on
 * sched_switch, wakers on sched_waking, CPU idle time, and aggregation by
 * (lock address, kind). Nothing is copied per event to user space: it
 * drains the maps once per interval.
 */
#include "kernel_types.h"
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/usdt.bpf.h>

#include "lockscope_abi.h"
#include "episode.h"
#include "identity.h"
#include "contention_state.h"
#include "user_stack.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/*
 * record -- COMMAND and -p PID follow the process tree: every process the
 * target creates after the attach, and theirs, is traced too (key: tgid,
 * value: the parent's tgid). A child enters the map in sched_process_fork,
 * which the parent runs inside fork() before the child can run at all, so
 * no fast fork escapes. When a process exits its entry is marked
 * (LS_TREE_EXITED), so that user space still sees every process the tree had;
 * user space deletes marked entries after reading them, so the map holds the
 * living and a pid reused much later is not traced by mistake.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, u32);
	__type(value, u32);
} traced_tgids SEC(".maps");

/* Set through the skeleton's rodata before load. */
const volatile __u32 targ_tgid = 0;     /* 0: every process */
const volatile __u32 targ_tree = 0;     /* 1: targ_tgid and every process created under it */
const volatile __u32 targ_kinds = 0;    /* record --kind: 1 << ls_kind_bit() of the kinds kept; 0: all */
const volatile __u32 targ_tid = 0;      /* record --tid: only this thread; 0: every thread */
/* record -C/--cpu: only waits that begin on these CPUs (a bit per CPU); 0: all */
const volatile __u32 targ_cpus = 0;
const volatile __u64 targ_cpu_mask[LS_MAX_CPU_MASK_WORDS] = {};
/* record --cgroup: tasks in these cgroups v2 or below them; 0 cgroups: all */
const volatile __u32 targ_cgroups = 0;
const volatile __u64 targ_cgroup_ids[LS_MAX_CGROUPS] = {};
const volatile __u32 targ_cgroup_levels[LS_MAX_CGROUPS] = {};
const volatile __u32 stack_period = 256; /* sample one episode stack in N per CPU; 0: never */
/* sample the holder at one queued begin in N per CPU (a waiter about to
 * sleep, the slow path); 0: never */
const volatile __u32 holder_period = 16;
/* A running holder's stack from its own CPU (on_cpu_clock): a registration
 * is fresh for this long (user space: two ticks) and gives at most this
 * many stacks (a tick that finds the budget spent is counted as dropped). */
const volatile __u32 oncpu_holders = 0; /* 1: user space attached on_cpu_clock */
const volatile __u64 oncpu_fresh_ns = 20 * 1000 * 1000;
const volatile __u32 oncpu_budget = 2;
const volatile __u32 trace_episodes = 0; /* 1: stream finished episodes (record --trace) */
const volatile __u32 max_locks = LS_MAX_LOCKS_DEFAULT; /* entries of lock_index and lock_stats */
/* record --sample N: time about one episode in N per CPU; 1: every one. The
 * verifier prunes the sampling code when it is 1 (a frozen constant). */
const volatile __u32 time_period = 1;

/* Next free row of lock_stats (user space reads the rows lock_index names). */
__u32 next_lock_row = 0;

/*
 * Aggregation by (lock address, kind) in two parts: lock_index gives each key
 * a row once, and the row of lock_stats (a per-CPU array: an inlined lookup)
 * holds its counters. The end of an episode, which runs with the lock held,
 * finds the row in the per-CPU row cache and pays no hash lookup.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LS_MAX_LOCKS_DEFAULT); /* max_locks: resized by user space before load */
	__type(key, struct ls_lock_key);
	__type(value, u32);
} lock_index SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LS_MAX_LOCKS_DEFAULT); /* max_locks */
	__type(key, u32);
	__type(value, struct ls_lock_stats);
} lock_stats SEC(".maps");

/* Row by row with lock_stats: what the kernel says about each lock, written
 * once by the CPU that creates the row, before the row is published in
 * lock_index, so user space never reads a half-written identity. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LS_MAX_LOCKS_DEFAULT); /* max_locks */
	__type(key, u32);
	__type(value, struct ls_lock_identity);
} lock_identity SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, LS_MAX_STACKS_DEFAULT); /* max_stacks */
	__uint(key_size, sizeof(u32));
	__uint(value_size, LS_MAX_STACK_DEPTH * sizeof(u64));
} stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, LS_MAX_STACKS_DEFAULT); /* max_stacks */
	__type(key, struct ls_stack_key);
	__type(value, struct ls_stack_stats);
} stack_samples SEC(".maps");

/* Frames of the holder stacks (their ids carry LS_HOLDER_STACK_BIT). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, u32);
	__type(value, struct ls_holder_stack);
} holder_stacks SEC(".maps");

/* Slot 0 for the begin programs, slot 1 for on_cpu_clock, which may
 * interrupt them on the same CPU, slot 2 for the waking program (which an
 * interrupt may run within a begin program too). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 3);
	__type(key, u32);
	__type(value, struct ls_holder_stack);
} holder_scratch SEC(".maps");

/*
 * Holders a waiter saw running on another CPU, by thread id: on_cpu_clock
 * takes their stack on their own CPU, where it can be read. LRU: a full map
 * forgets the registrations not refreshed for longest, which are the stale
 * ones (a registration is fresh for oncpu_fresh_ns only).
 */
struct ls_running_holder {
	u64 lock;
	u64 task; /* the owner word's task: the tid may be reused */
	u64 registered_ns;
	u32 flags;
	u32 budget; /* stacks left to take */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, u32);
	__type(value, struct ls_running_holder);
} running_holders SEC(".maps");

/* The sampled holders' tasks per lock row (samples only: the wait behind a
 * holder is on its stack's row). Full: the holder stack still counts; user
 * space sees fewer task samples than holder samples and says so. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LS_MAX_HOLDER_TASKS);
	__type(key, struct ls_holder_task_key);
	__type(value, struct ls_holder_task);
} holder_tasks SEC(".maps");

/* The cgroups of the sampled waiters per lock row (ls_lock_cgroup_key). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LS_MAX_LOCK_CGROUPS);
	__type(key, struct ls_lock_cgroup_key);
	__type(value, u64);
} lock_cgroups SEC(".maps");

/* Wait-chain edges between lock rows, from the sampled holders. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct ls_edge_key);
	__type(value, struct ls_stack_stats);
} chain_edges SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, u32); /* pid */
	__type(value, struct ls_task_stats);
} task_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct ls_cpu_idle);
} cpu_idle SEC(".maps");

/*
 * Trace mode only. A task's episodes being traced, slot for slot with its
 * ls_task_state.ep[]: kept apart so the state machine's per-CPU state (copied
 * at every context switch) does not grow, and untouched when tracing is off.
 */
struct ls_trace_task {
	struct ls_trace_episode ep[LS_MAX_DEPTH];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct ls_trace_task);
} trace_state SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096); /* sized by user space before load */
} trace_events SEC(".maps");

/*
 * User stacks of kernel lock waiters (record with user locks): the sampled
 * waiters of sleeping locks send their user registers and stack, which user
 * space unwinds. 0: off, and the ring buffer stays at its one-page minimum.
 */
const volatile __u32 max_user_stacks_per_sec = 0;
struct ls_user_stack_counts user_stack_counts = {};
static __u64 user_stack_window_ns;
static __u32 user_stack_window_sent;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096); /* sized by user space before load */
} user_stacks SEC(".maps");

/* One in `period` calls says yes, per CPU; a countdown, not a division. */
static __always_inline bool every(u64 *tick, u32 period)
{
	if (!period)
		return false;
	if (*tick) {
		(*tick)--;
		return false;
	}
	*tick = period - 1;
	return true;
}

/* Waiter stacks: one episode in stack_period. */
static __always_inline bool sample_due(struct ls_counters *cnt)
{
	return every(&cnt->sample_tick, stack_period);
}

/*
 * Whether the next new episode on this CPU is timed. The gaps between timed
 * episodes are drawn uniformly from 1..2N-1 (mean N) rather than fixed at N,
 * so that a workload whose episodes repeat with a period dividing N cannot
 * line up with the sampling: each episode is timed with probability 1/N, and
 * a timed one stands for N in the estimates.
 */
static __always_inline bool time_due(struct ls_cpu_state *cpu_state)
{
	if (cpu_state->time_tick) {
		cpu_state->time_tick--;
		return false;
	}
	cpu_state->time_tick = bpf_get_prandom_u32() % (2 * time_period - 1);
	return true;
}

/* A begin on the top episode's lock continues it (ls_begin), timed or not;
 * any other starts a new one. */
static __always_inline bool begin_timed(struct ls_cpu_state *cpu_state, struct ls_task_state *ts,
					u64 lock)
{
	struct ls_episode *top;

	if (time_period <= 1)
		return true;
	top = ls_top(ts);
	if (top && top->lock == lock)
		return top->timed;
	return time_due(cpu_state);
}

static __always_inline struct ls_cpu_state *this_cpu_state(void)
{
	u32 zero = 0;

	return bpf_map_lookup_elem(&cpu_states, &zero);
}

/* Adds the CPU's pending episode (lockscope_abi.h, ls_pending) to its lock row. */
static __always_inline void fold_pending(struct ls_cpu_state *cpu_state)
{
	struct ls_pending *p = &cpu_state->pending;
	struct ls_lock_stats *s;
	u32 row = p->row_plus1;

	if (!row)
		return;
	row--;
	p->row_plus1 = 0;
	s = bpf_map_lookup_elem(&lock_stats, &row);
	if (s)
		ls_account(s, &p->ep, p->end_ns, p->ret, time_period > 1);
}

/*
 * Events that fire inside our own begin/end programs. The kernel skips a
 * program nested in itself, not begin nested in end: of such an episode we
 * would see one event only. A lone begin would stay open on the interrupted
 * task's stack and later pair with an end that is not its own; a lone end
 * could close an episode that is not its own. So every event that arrives
 * while this CPU runs one of those programs is left alone:
 *  - inside a helper that takes kernel locks (creating task or trace state,
 *    writing to the ring buffer), the contention is lockscope's own, and is
 *    not the workload's: ignored (LS_BUSY_OWN_LOCKS);
 *  - anywhere else in the program, it is an interrupt's, and is counted as
 *    lost (lost_nested).
 * The tracepoint programs run with preemption off, so what they set is seen
 * only by an interrupt on the same CPU. The USDT programs run preemptible:
 * they mark only their own lock-taking helpers, as before.
 */
#define LS_BUSY_HANDLER   1
#define LS_BUSY_OWN_LOCKS 2

static __always_inline bool nested_in_own(struct ls_counters *cnt)
{
	if (!cnt->busy)
		return false;
	if (cnt->busy == LS_BUSY_HANDLER)
		cnt->lost_nested++;
	return true;
}

/* Around a helper that may take a contended kernel lock; returns what to restore. */
static __always_inline u64 own_locks_enter(struct ls_counters *cnt)
{
	u64 was = cnt->busy;

	cnt->busy = LS_BUSY_OWN_LOCKS;
	return was;
}

/* Trace mode: notes a phase boundary of the top episode (a new episode, a
 * spin phase, a queueing with the owner state seen). */
static __always_inline void trace_phase(struct ls_task_state *ts, int action, u64 now, u32 owner,
					struct ls_counters *cnt)
{
	struct ls_episode *ep = ls_top(ts);
	struct ls_trace_episode *te;
	struct ls_trace_task *tt;
	u64 busy;
	u32 n;

	if (!ep)
		return;
	/* a repeated begin that starts no new spin phase is no boundary */
	if (action == LS_BEGIN_PHASE && !(ep->in_spin && ep->phase_ns == now))
		return;
	busy = own_locks_enter(cnt);
	tt = bpf_task_storage_get(&trace_state, bpf_get_current_task_btf(), 0,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	cnt->busy = busy;
	if (!tt)
		return; /* the end finds no record and counts the episode as not traced */
	te = &tt->ep[(ts->depth - 1) & (LS_MAX_DEPTH - 1)];
	if (action == LS_BEGIN_NEW || (action == LS_BEGIN_QUEUED && ep->begin_ns == now &&
					!ep->spin_failures)) {
		te->lock = ep->lock;
		te->begin_ns = now;
		te->nphases = 0;
		te->truncated = 0;
		te->waker = 0;
		te->waker_tgid = 0;
		te->wake_ns = 0;
	} else if (te->lock != ep->lock || te->begin_ns != ep->begin_ns) {
		/* the slot holds another episode's record: never mix their
		 * phases; the end counts this episode as not traced */
		return;
	}
	n = te->nphases;
	if (n >= LS_TRACE_MAX_PHASES) {
		te->truncated = 1;
		return;
	}
	n &= LS_TRACE_MAX_PHASES - 1;
	te->phases[n].start_ns = now;
	te->phases[n].kind = (ep->in_spin || ls_is_spinlock(ep->flags)) ? LS_PHASE_SPIN : LS_PHASE_QUEUED;
	te->phases[n].owner = action == LS_BEGIN_QUEUED ? owner : LS_OWNER_UNKNOWN;
	te->nphases = n + 1;
}

/* Trace mode: sends the finished episode @ep (slot @slot of the current
 * task) to user space, or counts it as lost. */
static __always_inline void trace_episode(const struct ls_episode *ep, u32 slot, u64 now, s32 ret,
					  u64 pid_tgid, struct ls_counters *cnt)
{
	struct ls_trace_episode *te;
	struct ls_trace_task *tt;
	u64 busy;
	u32 n;

	tt = bpf_task_storage_get(&trace_state, bpf_get_current_task_btf(), 0, 0);
	if (!tt) {
		cnt->lost_ring_buffer++;
		return;
	}
	te = &tt->ep[slot & (LS_MAX_DEPTH - 1)];
	if (te->lock != ep->lock || te->begin_ns != ep->begin_ns) {
		cnt->lost_ring_buffer++;
		return;
	}
	te->end_ns = now;
	te->spin_ns = ep->spin_ns;
	te->sleep_ns = ep->sleep_ns;
	te->preempt_ns = ep->preempt_ns;
	te->flags = ep->flags;
	te->tid = (u32)pid_tgid;
	te->tgid = pid_tgid >> 32;
	te->ret = ret;
	te->sleeps = ep->sleeps;
	te->preemptions = ep->preemptions;
	n = te->nphases;
	if (n > LS_TRACE_MAX_PHASES)
		n = LS_TRACE_MAX_PHASES;
	busy = own_locks_enter(cnt);
	if (bpf_ringbuf_output(&trace_events, te,
			       offsetof(struct ls_trace_episode, phases) + n * sizeof(struct ls_trace_phase), 0))
		cnt->lost_ring_buffer++;
	cnt->busy = busy;
	te->lock = 0;
}

#include "samples.h"

/* An exited process stays traced until user space has read and deleted its
 * entry (within an interval): sched_process_exit comes before the process
 * releases its mm and files, whose locks it may still wait for. A pid is
 * not handed out again that soon. */
static __always_inline bool traced_process(u32 tgid)
{
	if (!targ_tgid || tgid == targ_tgid)
		return true;
	return targ_tree && bpf_map_lookup_elem(&traced_tgids, &tgid);
}

/* The running task is in one of the --cgroup cgroups, or below one. */
static __always_inline bool traced_cgroup(void)
{
	for (u32 i = 0; i < LS_MAX_CGROUPS; i++) {
		if (i >= targ_cgroups)
			break;
		if (bpf_get_current_ancestor_cgroup_id(targ_cgroup_levels[i]) == targ_cgroup_ids[i])
			return true;
	}
	return false;
}

/* A wait that begins on this CPU is kept (record -C): as in perf lock
 * contention, the CPU of a wait's first begin decides; its later phases and
 * its end count wherever the task runs then. */
static __always_inline bool traced_begin_cpu(void)
{
	u32 cpu = bpf_get_smp_processor_id();

	if (!targ_cpus)
		return true;
	if (cpu >= LS_MAX_CPU_MASK_WORDS * 64)
		return false;
	return (targ_cpu_mask[cpu / 64] >> (cpu % 64)) & 1;
}

/* The CPU's state when the running task is traced (the -p/command, --tid
 * and --cgroup filters), else NULL. */
static __always_inline struct ls_cpu_state *traced_cpu_state(u64 pid_tgid)
{
	if (!traced_process(pid_tgid >> 32))
		return 0;
	if (targ_tid && (u32)pid_tgid != targ_tid)
		return 0;
	if (targ_cgroups && !traced_cgroup())
		return 0;
	return this_cpu_state();
}

/*
 * The running task's state: the CPU's when the task owns it, else its task
 * storage. The check is not redundant: a sched_switch program does not see
 * every switch (bench/switch_gaps.sh shows bpftrace missing the switches out
 * of some threads too), and a task switched in unseen must not write into the
 * state of the task seen last.
 */
static __always_inline struct ls_task_state *current_state(struct ls_cpu_state *cpu_state,
							    u64 pid_tgid, bool create)
{
	struct ls_task_state *ts;
	u64 busy;

	if (cpu_state->resident == (u64)(u32)pid_tgid + 1)
		return &cpu_state->ts;
	if (!create)
		return bpf_task_storage_get(&task_state, bpf_get_current_task_btf(), 0, 0);
	busy = own_locks_enter(&cpu_state->cnt);
	ts = bpf_task_storage_get(&task_state, bpf_get_current_task_btf(), 0,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	cpu_state->cnt.busy = busy;
	return ts;
}

/* The holder split's programs' part: it uses the definitions above. */
#include "holder_split.h"
#include "holder_chain.h"

static __always_inline void begin_event(struct ls_cpu_state *cpu_state, struct ls_counters *cnt,
					u64 pid_tgid, u64 lock, u32 flags, bool holders)
{
	struct task_struct *holder;
	struct ls_task_state *ts;
	struct ls_episode *ep;
	u64 now = 0;
	u32 owner = LS_OWNER_UNKNOWN;
	int action, timed;

	cnt->begins++;
	ts = current_state(cpu_state, pid_tgid, true);
	if (!ts) {
		cnt->lost_task_storage++;
		return;
	}
	if (!traced_begin_cpu()) {
		/* a later phase of a wait begun on a traced CPU goes on */
		ep = ls_top(ts);
		if (!ep || ep->lock != lock)
			return;
	}
	timed = begin_timed(cpu_state, ts, lock);
	if (timed)
		now = bpf_ktime_get_ns();
	action = ls_begin_timed(ts, lock, flags, now, timed);
	if (action == LS_BEGIN_TOO_DEEP) {
		cnt->lost_depth++;
		return;
	}
	if (action == LS_BEGIN_PHASE || (flags & LS_F_USER)) {
		if (trace_episodes)
			trace_phase(ts, action, now, owner, cnt);
		return;
	}
	ep = ls_top(ts);
	if (!ep)
		return;
	if (action == LS_BEGIN_QUEUED) {
		owner = owner_of(lock, ep->flags, &holder);
		ls_note_owner(ts, owner);
		holder_queued(cnt, ep, lock, holder, owner, LS_CLOSED_CONTENTION);
		if (holders && holder && holder_due(cnt))
			sample_holder(cnt, lock, ep, holder);
		if (oncpu_holders && owner == LS_OWNER_ON_CPU)
			register_running_holder(lock, ep->flags, holder, now);
	} else if (oncpu_holders && (flags & LCB_F_MUTEX) && (flags & LCB_F_SPIN) &&
		   every(&cnt->oncpu_tick, holder_period)) {
		/* a mutex spinner waits for an owner on a CPU: mostly it wins
		 * without queueing, so spins are where running owners are seen */
		if (owner_of(lock, ep->flags, &holder) == LS_OWNER_ON_CPU)
			register_running_holder(lock, ep->flags, holder, now);
	}
	if (trace_episodes)
		trace_phase(ts, action, now, owner, cnt);
}

static __always_inline int handle_begin(u64 lock, u32 flags, bool holders)
{
	u64 pid_tgid = bpf_get_current_pid_tgid();
	struct ls_cpu_state *cpu_state = traced_cpu_state(pid_tgid);
	bool kernel = !(flags & LS_F_USER);

	if (!cpu_state || nested_in_own(&cpu_state->cnt))
		return 0;
	if (kernel) {
		cpu_state->cnt.busy = LS_BUSY_HANDLER;
		/* the end just before, out of its critical section now */
		fold_pending(cpu_state);
	}
	begin_event(cpu_state, &cpu_state->cnt, pid_tgid, lock, flags, holders);
	if (kernel)
		cpu_state->cnt.busy = 0;
	return 0;
}

/* Two entries like the end's: user space loads the second where the kernel
 * has bpf_task_from_pid (6.2+); it alone samples holder stacks. */
SEC("tp_btf/contention_begin")
int BPF_PROG(on_contention_begin, void *lock, unsigned int flags)
{
	return handle_begin((u64)lock, flags, false);
}

SEC("tp_btf/contention_begin")
int BPF_PROG(on_contention_begin_holders, void *lock, unsigned int flags)
{
	return handle_begin((u64)lock, flags, true);
}

/*
 * A CPU-clock tick on each CPU (user space opens one perf event per CPU):
 * when the task it interrupts is a holder a waiter saw running, and the
 * lock's owner word still names it, its kernel stack is taken here, from
 * its own CPU, the one place a running task's stack can be read. Stored as
 * the queueing samples' holder stacks are, with role LS_ROLE_HOLDER_ON_CPU
 * and no wait: no waiter's episode is attached to a tick. It writes only
 * its own counters: it may interrupt a begin or end program on this CPU.
 */
SEC("perf_event")
int on_cpu_clock(struct bpf_perf_event_data *ctx)
{
	u64 pid_tgid = bpf_get_current_pid_tgid();
	u32 tid = (u32)pid_tgid, one = 1, id;
	struct ls_holder_task who = { .samples = 1, .tgid = pid_tgid >> 32 };
	struct ls_holder_task_key task_key = { .tid = tid };
	struct ls_stack_key key = { .role = LS_ROLE_HOLDER_ON_CPU };
	struct task_struct *current = (struct task_struct *)bpf_get_current_task(), *owner;
	struct ls_running_holder *reg;
	struct ls_holder_stack *buf;
	struct ls_cpu_state *cpu_state;
	long n;

	reg = bpf_map_lookup_elem(&running_holders, &tid);
	if (!reg || reg->task != (u64)current)
		return 0;
	if (bpf_ktime_get_ns() - reg->registered_ns > oncpu_fresh_ns ||
	    owner_of(reg->lock, reg->flags, &owner) != LS_OWNER_ON_CPU || owner != current)
		return 0; /* the contention is over, or the lock is no longer its */
	cpu_state = this_cpu_state();
	buf = bpf_map_lookup_elem(&holder_scratch, &one);
	if (!cpu_state || !buf)
		return 0;
	if (!reg->budget) {
		cpu_state->cnt.holder_oncpu_dropped++;
		return 0;
	}
	reg->budget--;
	n = bpf_get_stack(ctx, buf->ips, sizeof(buf->ips), 0);
	id = n > 0 ? store_holder_stack(buf, n) : 0;
	key.lock = task_key.lock = reg->lock;
	key.flags = task_key.flags = reg->flags;
	key.stack_id = (s32)id;
	if (!id || !add_stack_sample(&key, 0)) {
		cpu_state->cnt.holder_oncpu_dropped++;
		return 0;
	}
	cpu_state->cnt.holder_oncpu_samples++;
	bpf_get_current_comm(&who.comm, sizeof(who.comm));
	note_holder_task(&task_key, &who);
	return 0;
}

/* The reference userspace locks (collector/reflock) fire USDT probes with
 * the kernel tracepoints' semantics; their keys carry LS_F_USER. */
SEC("usdt")
int BPF_USDT(on_user_begin, void *lock, unsigned int flags)
{
	return handle_begin((u64)lock, flags | LS_F_USER, false);
}

/*
 * Sends a sampled waiter's user stack with its kernel stack id. Only for
 * sleeping locks: they are never taken in an interrupt, so the task's user
 * registers (bpf_task_pt_regs) are the waiter's own, as it entered the
 * kernel. A kernel thread has none and sends nothing.
 */
static __always_inline void send_user_stack(u64 lock, u32 flags, s32 stack_id, u64 wait_ns)
{
	struct ls_kernel_user_sample *sample;
	void *regs = ls_current_user_regs();
	struct ls_user_regs user;
	u64 now, pid_tgid;

	if (ls_user_regs_read(&user, regs)) {
		__sync_fetch_and_add(&user_stack_counts.no_user, 1);
		return;
	}
	now = bpf_ktime_get_ns();
	if (now - user_stack_window_ns >= 1000000000ULL) {
		user_stack_window_ns = now;
		user_stack_window_sent = 0;
	}
	if (__sync_fetch_and_add(&user_stack_window_sent, 1) >= max_user_stacks_per_sec) {
		__sync_fetch_and_add(&user_stack_counts.rate_limited, 1);
		return;
	}
	sample = bpf_ringbuf_reserve(&user_stacks, sizeof(*sample), 0);
	if (!sample) {
		__sync_fetch_and_add(&user_stack_counts.lost, 1);
		return;
	}
	if (ls_user_stack_copy(&sample->stack, regs)) {
		bpf_ringbuf_discard(sample, 0);
		__sync_fetch_and_add(&user_stack_counts.no_user, 1);
		return;
	}
	pid_tgid = bpf_get_current_pid_tgid();
	sample->lock = lock;
	sample->flags = flags;
	sample->stack_id = stack_id;
	sample->tgid = pid_tgid >> 32;
	sample->tid = (u32)pid_tgid;
	sample->wait_ns = wait_ns;
	bpf_ringbuf_submit(sample, 0);
	__sync_fetch_and_add(&user_stack_counts.sent, 1);
}

static __always_inline void sample_stack(void *ctx, struct ls_counters *cnt, u64 lock, u32 flags,
					 u32 role, u64 wait_ns)
{
	struct ls_stack_key key = { .lock = lock, .flags = flags, .role = role };
	long id;

	id = bpf_get_stackid(ctx, &stacks, 0);
	if (id < 0) {
		cnt->lost_stack++;
		return;
	}
	cnt->stack_samples++;
	key.stack_id = (s32)id;
	count_stack_sample(cnt, &key, wait_ns);
	if (role == LS_ROLE_WAITER && max_user_stacks_per_sec && !ls_is_spinlock(flags))
		send_user_stack(lock, flags, key.stack_id, wait_ns);
	if (role == LS_ROLE_WAITER) {
		/* whose container waited: on the sampled path only */
		struct ls_lock_cgroup_key ck = { .lock = lock, .flags = flags,
						 .cgroup = bpf_get_current_cgroup_id() };
		u64 one = 1, *n = bpf_map_lookup_elem(&lock_cgroups, &ck);

		if (n)
			__sync_fetch_and_add(n, 1);
		else
			bpf_map_update_elem(&lock_cgroups, &ck, &one, BPF_NOEXIST);
	}
}

/* Publishes a task's totals; called when it is switched out (and so at exit). */
static __always_inline void flush_task(struct task_struct *task, struct ls_task_state *ts,
				       struct ls_counters *cnt)
{
	u32 pid = task->pid;
	struct ls_task_stats *t;

	t = bpf_map_lookup_elem(&task_stats, &pid);
	if (!t) {
		struct ls_task_stats init = { .tgid = task->tgid };

		bpf_probe_read_kernel_str(init.comm, sizeof(init.comm), task->comm);
		bpf_map_update_elem(&task_stats, &pid, &init, BPF_NOEXIST);
		t = bpf_map_lookup_elem(&task_stats, &pid);
		if (!t) {
			cnt->lost_task_map_full++;
			return;
		}
	}
	t->contentions = ts->totals.contentions;
	t->spin_attempts = ts->totals.spin_attempts;
	t->spin_failures = ts->totals.spin_failures;
	t->wait_ns = ts->totals.wait_ns;
	t->spin_ns = ts->totals.spin_ns;
	t->sleep_ns = ts->totals.sleep_ns;
	t->preempt_ns = ts->totals.preempt_ns;
	t->sleeps = ts->totals.sleeps;
	t->timed = ts->totals.timed;
	t->spin_offcpu_ns = ts->totals.spin_offcpu_ns;
	/* Read here, off the episode path: a task is counted in the cgroup it
	 * is in when it is switched out (a task moved during recording is
	 * counted wholly in its last one). Plain loads through the trusted
	 * task, not four helper calls. */
	t->cgroup = task->cgroups->dfl_cgrp->kn->id;
	ts->dirty = 0;
}


/*
 * The lock_stats row of (lock, flags), plus one: from the CPU's row cache,
 * else from lock_index, else a new row (*created), identified first (never
 * per event). 0 when max_locks rows are taken.
 */
static __always_inline u32 lock_row(struct ls_cpu_state *cpu_state, u64 lock, u32 flags,
				    struct ls_counters *cnt, bool *created, bool identify, bool kmem)
{
	struct ls_row_slot *slot =
		&cpu_state->rows[((lock >> 4) ^ (lock >> 12) ^ flags) & (LS_ROW_CACHE - 1)];
	struct ls_lock_key key = {};
	struct ls_lock_identity *identity;
	u32 row, *found;

	if (slot->row_plus1 && slot->lock == lock && slot->flags == flags)
		return slot->row_plus1;
	key.lock = lock;
	key.flags = flags;
	found = bpf_map_lookup_elem(&lock_index, &key);
	if (found) {
		row = *found;
	} else {
		/* The plain read keeps the counter from running on (and wrapping)
		 * once every row is taken; the fetch-add hands out each row once. */
		if (next_lock_row >= max_locks)
			goto full;
		row = __sync_fetch_and_add(&next_lock_row, 1);
		if (row >= max_locks)
			goto full;
		identity = identify ? bpf_map_lookup_elem(&lock_identity, &row) : NULL;
		if (identity)
			identify_lock(identity, lock, flags, kmem);
		if (bpf_map_update_elem(&lock_index, &key, &row, BPF_NOEXIST)) {
			/* another CPU added this key first (its row wins; ours stays
			 * unused and unread), or the index is full */
			found = bpf_map_lookup_elem(&lock_index, &key);
			if (!found)
				goto full;
			row = *found;
		} else {
			*created = true;
		}
	}
	slot->lock = lock;
	slot->flags = flags;
	slot->row_plus1 = row + 1;
	return row + 1;
full:
	cnt->lost_lock_map_full++;
	return 0;
}

/*
 * The end of an episode runs with the lock held: a kernel end only stashes
 * the finished episode in the CPU's pending slot (lockscope_abi.h, ls_pending),
 * and the CPU's next begin or switch adds it to the lock's counters. What
 * needs the end's own moment stays here: its stack, the task's totals, a
 * traced episode. An episode whose holder was sampled adds its wait to the
 * holder's stack and chain edge here too (hash lookups, at one queued
 * episode in holder_period); one whose holder was followed, its holder
 * split (holder_split.h: queued episodes only, a lookup of its following).
 * USDT programs run preemptible, where a switch
 * could fold a half-written slot: they account at once, as they always did.
 */
static __always_inline void end_event(void *ctx, struct ls_cpu_state *cpu_state,
				      struct ls_counters *cnt, u64 pid_tgid, u64 lock, s32 ret,
				      bool user, bool kmem)
{
	struct ls_task_state *ts;
	struct ls_lock_stats *s;
	struct ls_episode user_ep, *ep;
	u64 now, parts[LS_HOLDER_PARTS];
	u32 abandoned = 0, row;
	bool sample, created = false, split = false;

	cnt->ends++;
	ts = current_state(cpu_state, pid_tgid, false);
	/* an end nested in this one's episode, with no begin or switch between */
	if (!user)
		fold_pending(cpu_state);
	ep = user ? &user_ep : &cpu_state->pending.ep;
	if (!ts || !ls_pop(ts, lock, ret, ep, &abandoned)) {
		cnt->unmatched_ends++;
		return;
	}
	/* an untimed episode's timestamps are 0, and so is its end's */
	now = time_period <= 1 || ep->timed ? bpf_ktime_get_ns() : 0;
	ls_stop_clock(ep, now);
	cnt->lost_abandoned += abandoned;
	/* --kind: the state machine saw the episode (its end must pair with its
	 * begin), but it is neither counted nor sampled. */
	if (targ_kinds && !(targ_kinds & (1U << (ls_kind_bit(ep->flags) & 31))))
		return;

	row = lock_row(cpu_state, lock, ep->flags, cnt, &created, !user, kmem);
	if (!row)
		return;
	/* A kernel stack says nothing about a user-space lock; every lock
	 * gets at least one stack. */
	sample = !user && (created ? stack_period != 0 : sample_due(cnt));
	ls_account_task(ts, ep, now, time_period > 1);
	if (sample)
		sample_stack(ctx, cnt, lock, ep->flags, LS_ROLE_WAITER, now - ep->begin_ns);
	if (trace_episodes)
		trace_episode(ep, ts->depth, now, ret, pid_tgid, cnt);
	if (!user && ep->timed && (ep->holder_follow || holder_successor_kind(ep->flags)))
		split = holder_ended(cnt, ep, lock, ret, now, parts);
	if (!user && !ep->holder_stack && !ep->chain_lock && !split) {
		cpu_state->pending.end_ns = now;
		cpu_state->pending.ret = ret;
		cpu_state->pending.row_plus1 = row;
		return;
	}
	row--;
	s = bpf_map_lookup_elem(&lock_stats, &row);
	if (!s)
		return;
	ls_account(s, ep, now, ret, time_period > 1);
	if (split)
		holder_end(s, parts);
	if (ep->holder_stack) {
		/* the wait its holder's stack explains ("held while") */
		struct ls_stack_key hk = { .lock = lock, .flags = ep->flags, .stack_id = (s32)ep->holder_stack,
					   .role = ep->holder_role };
		struct ls_stack_stats *hs = bpf_map_lookup_elem(&stack_samples, &hk);

		if (hs)
			hs->wait_ns += now - ep->begin_ns;
	}
	if (ep->chain_lock) {
		struct ls_edge_key ek = { .lock = lock, .flags = ep->flags, .holder_lock = ep->chain_lock,
					  .holder_flags = ep->chain_flags };
		struct ls_stack_stats *es, init = {};

		es = bpf_map_lookup_elem(&chain_edges, &ek);
		if (!es) {
			bpf_map_update_elem(&chain_edges, &ek, &init, BPF_NOEXIST);
			es = bpf_map_lookup_elem(&chain_edges, &ek);
		}
		if (es) {
			es->samples++;
			es->wait_ns += now - ep->begin_ns;
		} else {
			cnt->lost_stack_map_full++;
		}
	}
}

static __always_inline int handle_end(void *ctx, u64 lock, s32 ret, bool user, bool kmem)
{
	u64 pid_tgid = bpf_get_current_pid_tgid();
	struct ls_cpu_state *cpu_state = traced_cpu_state(pid_tgid);

	if (!cpu_state || nested_in_own(&cpu_state->cnt))
		return 0;
	if (!user)
		cpu_state->cnt.busy = LS_BUSY_HANDLER;
	end_event(ctx, cpu_state, &cpu_state->cnt, pid_tgid, lock, ret, user, kmem);
	if (!user)
		cpu_state->cnt.busy = 0;
	return 0;
}

/* One body, two entries: user space loads the second where the kernel has
 * bpf_get_kmem_cache (6.13+), the first elsewhere; they differ only in the
 * slab lookup when a lock's row is created. */
SEC("tp_btf/contention_end")
int BPF_PROG(on_contention_end, void *lock, int ret)
{
	return handle_end(ctx, (u64)lock, ret, false, false);
}

SEC("tp_btf/contention_end")
int BPF_PROG(on_contention_end_kmem, void *lock, int ret)
{
	return handle_end(ctx, (u64)lock, ret, false, true);
}

SEC("usdt")
int BPF_USDT(on_user_end, void *lock, int ret)
{
	return handle_end(ctx, (u64)lock, ret, true, false);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	struct ls_task_state *prev_ts, *next_ts;
	struct ls_cpu_idle *idle;
	struct ls_cpu_state *cpu_state;
	u32 zero = 0;
	u64 now = 0;
	int blocked;

	/* Reading the clock costs as much as the rest here: only when needed. */
	if (prev->pid == 0 || next->pid == 0) {
		idle = bpf_map_lookup_elem(&cpu_idle, &zero);
		if (idle) {
			now = bpf_ktime_get_ns();
			if (prev->pid == 0 && idle->idle_since)
				idle->idle_ns += now - idle->idle_since;
			idle->idle_since = next->pid == 0 ? now : 0;
		}
	}

	cpu_state = this_cpu_state();
	if (!cpu_state)
		return 0;
	/* Before prev's totals are published, and before it can run elsewhere. */
	fold_pending(cpu_state);
	/* A preempted task stays runnable whatever its state says. */
	blocked = !preempt && prev_state != 0;
	holder_switch(prev, next, blocked);
	if (cpu_state->resident == (u64)prev->pid + 1) {
		if (cpu_state->ts.depth || cpu_state->ts.dirty) {
			if (!now)
				now = bpf_ktime_get_ns();
			ls_switch_out(&cpu_state->ts, now, blocked);
			holder_waiter_out(&cpu_state->cnt, &cpu_state->ts, prev, blocked);
			prev_ts = bpf_task_storage_get(&task_state, prev, 0,
						       BPF_LOCAL_STORAGE_GET_F_CREATE);
			if (prev_ts) {
				ls_move_episodes(prev_ts, &cpu_state->ts);
				ls_take_early_wake(prev_ts);
				ls_add_totals(prev_ts, &cpu_state->ts);
				flush_task(prev, prev_ts, &cpu_state->cnt);
			} else {
				cpu_state->cnt.lost_task_storage++;
			}
		}
	} else {
		/* prev was switched in unseen, or has not run here since attach */
		prev_ts = bpf_task_storage_get(&task_state, prev, 0, 0);
		if (prev_ts) {
			if (!now && prev_ts->depth)
				now = bpf_ktime_get_ns();
			ls_switch_out(prev_ts, now, blocked);
			ls_take_early_wake(prev_ts);
			if (prev_ts->dirty)
				flush_task(prev, prev_ts, &cpu_state->cnt);
		}
	}
	/* whatever is left (a failed hand-over) must not follow the next task */
	cpu_state->ts.depth = 0;
	cpu_state->ts.switched_out_ns = 0;
	if (cpu_state->ts.dirty)
		__builtin_memset(&cpu_state->ts.totals, 0, sizeof(cpu_state->ts.totals));
	cpu_state->ts.dirty = 0;
	cpu_state->resident = (u64)next->pid + 1;

	next_ts = bpf_task_storage_get(&task_state, next, 0, 0);
	if (next_ts && next_ts->woken_early_ns)
		next_ts->woken_early_ns = 0; /* a wakeup of a switch-out not followed */
	if (next_ts && (next_ts->depth || next_ts->switched_out_ns)) {
		ls_move_episodes(&cpu_state->ts, next_ts);
		if (cpu_state->ts.switched_out_ns) {
			if (!now)
				now = bpf_ktime_get_ns();
			ls_switch_in(&cpu_state->ts, now);
		}
		holder_spin_in(&cpu_state->cnt, &cpu_state->ts, next);
	}
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(on_sched_waking, struct task_struct *p)
{
	struct ls_task_state *ts;
	struct ls_cpu_state *cpu_state;
	struct ls_episode *ep;

	holder_task_woken(p);
	ts = bpf_task_storage_get(&task_state, p, 0, 0);
	if (!ts)
		return 0;
	/* Its switch-out program has not run yet: its episodes are on its CPU,
	 * out of reach, and that switch-out will take this wakeup. */
	if (!ts->switched_out_ns && switching_out_asleep(p)) {
		ts->woken_early_ns = bpf_ktime_get_ns();
		return 0;
	}
	ep = ls_top(ts);
	if (!ep || ep->in_spin)
		return 0;
	ls_woken(ts);
	if (ls_wants_wake_time(ts))
		ls_mark_woken(ts, bpf_ktime_get_ns());
	holder_waiter_woken(p, ep);
	if (trace_episodes) {
		struct ls_trace_task *tt = bpf_task_storage_get(&trace_state, p, 0, 0);

		if (tt) {
			struct ls_trace_episode *te = &tt->ep[(ts->depth - 1) & (LS_MAX_DEPTH - 1)];

			if (te->lock == ep->lock) {
				u64 waker = bpf_get_current_pid_tgid();

				/* trace mode only: the flow arrow waker -> waiter */
				te->waker = (u32)waker;
				te->waker_tgid = waker >> 32;
				te->wake_ns = bpf_ktime_get_ns();
			}
		}
	}
	cpu_state = this_cpu_state();
	if (cpu_state && sample_due(&cpu_state->cnt))
		sample_stack(ctx, &cpu_state->cnt, ep->lock, ep->flags, LS_ROLE_WAKER, 0);
	return 0;
}

/* Loaded only when following a process tree (targ_tree). */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_process_fork, struct task_struct *parent, struct task_struct *child)
{
	u32 parent_tgid = parent->tgid, child_tgid = child->tgid;
	struct ls_cpu_state *cpu_state;

	if (child_tgid == parent_tgid || !traced_process(parent_tgid))
		return 0; /* a new thread, or not ours */
	if (bpf_map_update_elem(&traced_tgids, &child_tgid, &parent_tgid, BPF_ANY)) {
		cpu_state = this_cpu_state();
		if (cpu_state)
			cpu_state->cnt.lost_process_map_full++;
	}
	return 0;
}

/* The last thread of a process marks its entry (a leader may exit before
 * its other threads; do_exit has counted this one out of signal->live). */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_process_exit, struct task_struct *task)
{
	u32 tgid = task->tgid;
	u32 *parent;

	if (task->signal->live.counter != 0)
		return 0;
	parent = bpf_map_lookup_elem(&traced_tgids, &tgid);
	if (parent)
		__sync_fetch_and_or(parent, LS_TREE_EXITED);
	return 0;
}

/* Where each CPU's copy of the per-CPU area lies: the address of its run
 * queue (struct rq, the per-CPU variable `runqueues`). User space runs this
 * once on every CPU (BPF_PROG_TEST_RUN with BPF_F_TEST_RUN_ON_CPU; it is
 * never attached), subtracts the variable's offset in BTF's .data..percpu
 * and names per-CPU locks ("rq.__lock") by their offset. Typed ksyms would
 * be simpler, but the verifier finds their address through kallsyms, which
 * lists no per-CPU variables without CONFIG_KALLSYMS_ALL; the running task's
 * cfs_rq points into its CPU's run queue on every kernel. */
__u64 runqueue_of_cpu[LS_MAX_CPUS];

SEC("raw_tp")
int read_percpu_bases(void *ctx)
{
	u32 cpu = bpf_get_smp_processor_id();

	if (cpu < LS_MAX_CPUS)
		runqueue_of_cpu[cpu] = (u64)task_runqueue((struct task_struct *)bpf_get_current_task());
	return 0;
}
