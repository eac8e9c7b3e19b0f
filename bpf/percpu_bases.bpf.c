// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Where each CPU's copy of the per-CPU area lies: the address of its run
 * queue (struct rq, the per-CPU variable `runqueues`). User space runs this
 * once on every CPU (BPF_PROG_TEST_RUN with BPF_F_TEST_RUN_ON_CPU),
 * subtracts the variable's offset in BTF's .data..percpu and names per-CPU
 * locks ("rq.__lock") by their offset. Typed ksyms would be simpler, but the
 * verifier finds their address through kallsyms, which lists no per-CPU
 * variables without CONFIG_KALLSYMS_ALL; the running task's cfs_rq points
 * into its CPU's run queue on every kernel.
 */
#include "kernel_types.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

#include "lockscope_abi.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct rq;

struct cfs_rq {
	struct rq *rq; /* CONFIG_FAIR_GROUP_SCHED */
} __attribute__((preserve_access_index));

struct rq {
	struct cfs_rq cfs;
} __attribute__((preserve_access_index));

struct task_struct___sched {
	struct sched_entity se;
} __attribute__((preserve_access_index));

__u64 runqueue_of_cpu[LS_MAX_CPUS];

SEC("raw_tp")
int read_percpu_bases(void *ctx)
{
	struct task_struct___sched *task = (void *)bpf_get_current_task();
	__u32 cpu = bpf_get_smp_processor_id();
	struct cfs_rq *cfs;
	__u64 rq;

	if (cpu >= LS_MAX_CPUS)
		return 0;
	cfs = BPF_CORE_READ(task, se.cfs_rq);
	if (!cfs)
		return 0;
	if (bpf_core_field_exists(cfs->rq))
		rq = (__u64)BPF_CORE_READ(cfs, rq);
	else /* without group scheduling every task is on its rq's own cfs */
		rq = (__u64)cfs - bpf_core_field_offset(struct rq, cfs);
	runqueue_of_cpu[cpu] = rq;
	return 0;
}
