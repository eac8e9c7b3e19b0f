/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The processes whose futex waits bpf/userlock.bpf.c records: the test of
 * a waiting thread's process, and, with follow_children, the processes a
 * target creates. Only userlock.bpf.c includes it, where the CPUs' state
 * and the targets map are defined.
 */
#ifndef LOCKSCOPE_USERLOCK_TARGETS_H
#define LOCKSCOPE_USERLOCK_TARGETS_H

/* Whether the running process is a target. The CPU keeps the last one it
 * found to be one and the last it found not to be (most futex calls on a CPU
 * come from the process that ran last), so that another process's waits
 * leave without a hash lookup; a followed process that exits, and a new one,
 * are forgotten on every CPU (forget_on_cpus). */
static __always_inline bool target_process(struct ulock_cpu *cpu, __u32 tgid)
{
	/* before any setting is read: those are on a page of their own */
	if (tgid == cpu->target_tgid)
		return true;
	if (tgid == cpu->other_tgid)
		return false;
	if (all_processes ? tgid == self_tgid : !bpf_map_lookup_elem(&targets, &tgid)) {
		cpu->other_tgid = tgid;
		return false;
	}
	cpu->target_tgid = tgid;
	return true;
}

/* No CPU may take tgid for what it was: a followed process's pid, once
 * reused, is no target, and a new target's pid may have been another's. */
static __always_inline void forget_on_cpus(__u32 tgid)
{
	struct ulock_cpu *state;
	__u32 cpu, key;

	for (cpu = 0; cpu < nr_cpus && cpu < LS_MAX_CPUS; cpu++) {
		/* the counter itself stays in a register, where the verifier
		 * sees it grow (its address taken, it would not) */
		key = cpu;
		state = bpf_map_lookup_elem(&ulock_cpus, &key);
		if (!state)
			continue;
		if (state->target_tgid == tgid)
			state->target_tgid = 0;
		if (state->other_tgid == tgid)
			state->other_tgid = 0;
	}
}

/* A process a target creates becomes a target before it can run: the parent
 * runs this inside fork(). A new thread is no new process. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(userlock_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 parent_tgid = parent->tgid, child_tgid = child->tgid;
	__u8 followed = 2; /* user space's own targets are 1 */

	if (!follow_children || child_tgid == parent_tgid ||
	    !bpf_map_lookup_elem(&targets, &parent_tgid))
		return 0;
	if (bpf_map_update_elem(&targets, &child_tgid, &followed, BPF_ANY))
		__sync_fetch_and_add(&counters.lost_targets, 1);
	else
		forget_on_cpus(child_tgid);
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
	if (!mark || *mark != 2)
		return 0;
	bpf_map_delete_elem(&targets, &tgid);
	forget_on_cpus(tgid);
	return 0;
}

#endif /* LOCKSCOPE_USERLOCK_TARGETS_H */
