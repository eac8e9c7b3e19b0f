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
 */
#include "kernel_types.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Set through the skeleton's rodata before load. */
const volatile __u32 targ_tgid = 0;
const volatile __u32 slot_mask = 4095; /* entries - 1; entries a power of two */

/*
 * One element holding the whole table, not one element per slot: an array
 * map stores each element in 8 bytes, and reflock's OnCpuTableOracle reads
 * packed u32s. No BTF value type, so user space can size it before load.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(u32));
	__uint(value_size, 4096 * sizeof(u32)); /* (slot_mask + 1) * 4, set before load */
} oncpu SEC(".maps");

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	u32 tgid = targ_tgid, zero = 0, slot;
	u32 *table;

	/* Runs on every switch in the system: leave others' switches at once. */
	if (prev->tgid != tgid && next->tgid != tgid)
		return 0;
	table = bpf_map_lookup_elem(&oncpu, &zero);
	if (!table)
		return 0;
	if (prev->tgid == tgid) {
		/*
		 * Only our own mark: a colliding tid may own the slot now. Check
		 * and store are not atomic (no cmpxchg before -mcpu=v3); losing
		 * that race makes a colliding thread look off CPU until its next
		 * switch, which only shortens a spin.
		 */
		slot = (u32)prev->pid & slot_mask;
		if (table[slot] == (u32)prev->pid)
			table[slot] = 0;
	}
	if (next->tgid == tgid)
		table[(u32)next->pid & slot_mask] = (u32)next->pid;
	return 0;
}
