// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The floor of user-lock recording (bpf/userlock.bpf.c), measured side by
 * side with it (bench/userlock_cost.cpp): empty programs on the same four
 * attach points, the syscall tracepoints and sched_switch and sched_waking
 * through BTF. Every syscall and context switch on the machine runs them, as
 * it runs userlock's, so what they cost (trampoline and dispatch) is what
 * any program there pays before it does anything.
 */
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("tp_btf/sys_enter")
int floor_sys_enter(void *ctx) { return 0; }

SEC("tp_btf/sys_exit")
int floor_sys_exit(void *ctx) { return 0; }

SEC("tp_btf/sched_switch")
int floor_sched_switch(void *ctx) { return 0; }

SEC("tp_btf/sched_waking")
int floor_sched_waking(void *ctx) { return 0; }
