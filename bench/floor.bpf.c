// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Empty programs on lockscope's four hooks: the per-event floor that any
 * tp_btf program pays here (trampoline and dispatch), measured side by side. */
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("tp_btf/contention_begin")
int floor_contention_begin(void *ctx) { return 0; }

SEC("tp_btf/contention_end")
int floor_contention_end(void *ctx) { return 0; }

SEC("tp_btf/sched_switch")
int floor_sched_switch(void *ctx) { return 0; }

SEC("tp_btf/sched_waking")
int floor_sched_waking(void *ctx) { return 0; }
