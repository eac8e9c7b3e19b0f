// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The exact "is the owner running?" oracle for reflock (collector/reflock/
 * oracle.h, OnCpuTableOracle): on every context switch involving a thread of
 * one process, slot (tid % N) of an mmapable array holds the tid while that
 * thread is on a CPU. User space maps the array read-only, so a spinning
 * lock answers owner_on_cpu() with one load and no system call.
 *
 * sched_switch fires on the switching CPU before the previous task's
 * on_cpu is cleared, and another CPU cannot run that task until it is, so a
 * thread's switch-out here always precedes its next switch-in elsewhere.
 *
 * Switches can go unseen: some virtual machines never show the switches out
 * of certain host-agent threads to any tracer (bench/switch_gaps.sh finds
 * them). The thread switched in by such a switch would then read "off CPU"
 * until its next switch, which for a spinning thread on a quiet machine is
 * hundreds of milliseconds. So each CPU also keeps the tid it believes is
 * running there (0: none of ours), and every timer interrupt, which runs in
 * the context of the interrupted task, checks the belief against the task
 * actually running: a missed switch-in is repaired within one tick, and a
 * missed switch-out at the CPU's next tick or seen switch.
 */
#include "kernel_types.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "lockscope_abi.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Set through the skeleton's rodata before load. */
const volatile __u32 targ_tgid = 0;
const volatile __u32 slot_mask = LS_ONCPU_DEFAULT_ENTRIES - 1; /* entries - 1 */
const volatile __u32 nr_cpus = 1;      /* belief slots after the table, <= LS_ONCPU_MAX_CPUS */

/*
 * One element holding the whole table (its layout: lockscope_abi.h,
 * LS_ONCPU_*). No BTF value type, so user space can size it before load.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(u32));
	/* set before load */
	__uint(value_size, LS_ONCPU_WORDS(LS_ONCPU_DEFAULT_ENTRIES, 1) * sizeof(u32));
} oncpu SEC(".maps");

static __always_inline u32 *table_get(void)
{
	u32 zero = 0;

	return bpf_map_lookup_elem(&oncpu, &zero);
}

static __always_inline u32 ours(struct task_struct *t)
{
	return t->tgid == targ_tgid ? (u32)t->pid : 0;
}

/*
 * Only our own mark: a colliding tid may own the slot now. Check and store
 * are not atomic (no cmpxchg before -mcpu=v3); losing that race makes a
 * colliding thread look off CPU until its next switch or tick, which only
 * shortens a spin.
 */
static __always_inline void unmark(u32 *table, u32 tid)
{
	u32 slot = tid & slot_mask;

	if (table[slot] == tid)
		table[slot] = 0;
}

static __always_inline void mark(u32 *table, u32 tid)
{
	u32 slot = tid & slot_mask;

	if (table[slot] != tid)
		table[slot] = tid;
}

/*
 * `stale` was believed running on `cpu` but is not: unmark it unless
 * another CPU believes it runs there (it may have been switched in there,
 * seen). Racing that switch-in can unmark a running thread; the next tick
 * on its CPU marks it again.
 */
static __always_inline void forget(u32 *table, u32 cpu, u32 stale)
{
	u32 base = slot_mask + 1;

	for (u32 i = 0; i < LS_ONCPU_MAX_CPUS && i < nr_cpus; i++)
		if (i != cpu && table[base + i] == stale)
			return;
	unmark(table, stale);
}

/* The belief slot of this CPU, or NULL past LS_ONCPU_MAX_CPUS. */
static __always_inline u32 *belief(u32 *table, u32 cpu)
{
	if (cpu >= nr_cpus || cpu >= LS_ONCPU_MAX_CPUS)
		return NULL;
	return &table[slot_mask + 1 + cpu];
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	u32 prev_tid = ours(prev), next_tid = ours(next), cpu, *table, *cur;

	cpu = bpf_get_smp_processor_id();
	table = table_get();
	if (!table)
		return 0;
	cur = belief(table, cpu);
	/* Runs on every switch in the system: leave others' switches at once. */
	if (!prev_tid && !next_tid && (!cur || !*cur))
		return 0;
	if (cur && *cur && *cur != prev_tid)
		forget(table, cpu, *cur); /* its switch-out went unseen */
	if (prev_tid)
		unmark(table, prev_tid);
	if (next_tid)
		mark(table, next_tid);
	if (cur)
		*cur = next_tid;
	return 0;
}

/*
 * Every hrtimer expiry (the scheduler tick among them, HZ times a second
 * on a busy CPU) runs in the context of the task it interrupted, which is
 * the task running on this CPU.
 */
SEC("tp_btf/hrtimer_expire_entry")
int BPF_PROG(on_tick)
{
	u64 id = bpf_get_current_pid_tgid(); /* not the task pointer: that helper is 5.11+ */
	u32 now_tid = (u32)(id >> 32) == targ_tgid ? (u32)id : 0, cpu, *table, *cur;

	cpu = bpf_get_smp_processor_id();
	table = table_get();
	if (!table)
		return 0;
	cur = belief(table, cpu);
	if (!cur)
		return 0;
	if (*cur != now_tid) {
		if (*cur)
			forget(table, cpu, *cur);
		*cur = now_tid;
	}
	if (now_tid)
		mark(table, now_tid);
	return 0;
}
