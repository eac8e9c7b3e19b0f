// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Reference programs on lockscope's hooks, measured side by side with it
 * (bench/bpf_cost.py):
 *  - floor_*: empty programs, the per-event floor any tp_btf program pays
 *    here (trampoline and dispatch); on request also on the syscall hooks;
 *  - timed_*: on the contention hooks, the least a program that times waits
 *    per task must do: ask who runs (bpf_get_current_pid_tgid) and read the
 *    clock (bpf_ktime_get_ns), kept in a per-CPU slot so nothing is elided;
 *  - hash_*: the usual way to time a wait per task, clock + hash lookup: the
 *    begin keeps the time in a hash map by thread id, the end looks it up
 *    and adds the wait to a per-CPU slot (what a bpftrace script does,
 *    without the per-lock aggregation);
 *  - locks_*: the least a per-lock profiler pays: hash_'s begin, and an end
 *    that also adds the wait and a count to the lock's entry in a hash map
 *    keyed by the lock's address (bpftrace's @[arg0] = sum(...)). Its cost
 *    grows with the number of distinct locks as any per-lock table's does
 *    (bench/scale.py --floor);
 *  - hist_*: the least a per-lock latency histogram pays, what lockscope
 *    keeps per lock: hash_'s begin, and an end that adds the count, the
 *    wait, its maximum and a log2 histogram bucket to the lock's per-CPU
 *    entry in a hash map keyed by the lock's address (bpftrace's
 *    @[arg0] = hist(...)). The scale floor for lockscope (bench/scale.py
 *    --floor-mode hist): its entry is a lockscope row;
 *  - count_*: exact per-lock counts and no clock, the always-on mode's
 *    yardstick (below).
 */
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "../bpf/episode.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} sink SEC(".maps");

SEC("tp_btf/contention_begin")
int floor_contention_begin(void *ctx) { return 0; }

SEC("tp_btf/contention_end")
int floor_contention_end(void *ctx) { return 0; }

SEC("tp_btf/sched_switch")
int floor_sched_switch(void *ctx) { return 0; }

SEC("tp_btf/sched_waking")
int floor_sched_waking(void *ctx) { return 0; }

/* The syscall hooks that recording a process's user locks adds (bpf_floor's
 * "syscalls"); loaded only when asked for. */
SEC("tp_btf/sys_enter")
int floor_sys_enter(void *ctx) { return 0; }

SEC("tp_btf/sys_exit")
int floor_sys_exit(void *ctx) { return 0; }

static __always_inline int timed(void)
{
	__u64 who = bpf_get_current_pid_tgid();
	__u64 now = bpf_ktime_get_ns();
	__u32 zero = 0;
	__u64 *slot = bpf_map_lookup_elem(&sink, &zero);

	if (slot)
		*slot += who ^ now;
	return 0;
}

SEC("tp_btf/contention_begin")
int timed_contention_begin(void *ctx) { return timed(); }

SEC("tp_btf/contention_end")
int timed_contention_end(void *ctx) { return timed(); }

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u64);
} started SEC(".maps");

SEC("tp_btf/contention_begin")
int hash_contention_begin(void *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 now = bpf_ktime_get_ns();
	__u64 *t = bpf_map_lookup_elem(&started, &tid);

	if (t)
		*t = now;
	else
		bpf_map_update_elem(&started, &tid, &now, BPF_ANY);
	return 0;
}

SEC("tp_btf/contention_end")
int hash_contention_end(void *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 now = bpf_ktime_get_ns();
	__u64 *t = bpf_map_lookup_elem(&started, &tid);
	__u32 zero = 0;
	__u64 *slot = bpf_map_lookup_elem(&sink, &zero);

	if (t && slot)
		*slot += now - *t;
	return 0;
}

struct lock_total {
	__u64 count;
	__u64 wait_ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, struct lock_total);
} per_lock SEC(".maps");

/* The lock's entry in @map, created on first use (NULL when the map is full). */
static __always_inline void *lock_entry(void *map, __u64 lock, const void *init)
{
	void *v = bpf_map_lookup_elem(map, &lock);

	if (v)
		return v;
	bpf_map_update_elem(map, &lock, init, BPF_NOEXIST);
	return bpf_map_lookup_elem(map, &lock);
}

/* tp_btf context: the tracepoint's arguments as u64s (lock, ret) */
SEC("tp_btf/contention_end")
int locks_contention_end(__u64 *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 now = bpf_ktime_get_ns();
	__u64 *t = bpf_map_lookup_elem(&started, &tid);
	struct lock_total *lt, init = {};

	if (!t)
		return 0;
	lt = lock_entry(&per_lock, ctx[0], &init);
	if (lt) {
		__sync_fetch_and_add(&lt->count, 1);
		__sync_fetch_and_add(&lt->wait_ns, now - *t);
	}
	return 0;
}

/* hist_*'s entry is lockscope's own row (bpf/lockscope_abi.h), so the two
 * keep the same bytes per lock, and its bucket is lockscope's (episode.h). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, struct ls_lock_stats);
} per_lock_hist SEC(".maps");

SEC("tp_btf/contention_end")
int hist_contention_end(__u64 *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 now = bpf_ktime_get_ns();
	__u64 *t = bpf_map_lookup_elem(&started, &tid);
	static const struct ls_lock_stats init;
	struct ls_lock_stats *lh;
	__u64 wait;
	__u32 b;

	if (!t)
		return 0;
	lh = lock_entry(&per_lock_hist, ctx[0], &init);
	if (!lh)
		return 0;
	wait = now - *t;
	lh->contentions++;
	lh->wait_ns += wait;
	if (wait > lh->max_wait_ns)
		lh->max_wait_ns = wait;
	b = ls_log2_bucket(wait);
	lh->hist[b < LS_HIST_BUCKETS ? b : LS_HIST_BUCKETS - 1]++;
	return 0;
}

/*
 * count_*: the least an exact per-lock counter pays without timing anything
 * (the always-on mode's yardstick): both hooks ask who runs and keep it in
 * the CPU's slot, and the end adds one to the lock's count in a hash map
 * keyed by the lock's address. No clock is read.
 */
static __always_inline int who_runs(void)
{
	__u32 zero = 0;
	__u64 *slot = bpf_map_lookup_elem(&sink, &zero);

	if (slot)
		*slot += bpf_get_current_pid_tgid();
	return 0;
}

SEC("tp_btf/contention_begin")
int count_contention_begin(void *ctx) { return who_runs(); }

SEC("tp_btf/contention_end")
int count_contention_end(__u64 *ctx)
{
	struct lock_total *lt, init = {};

	who_runs();
	lt = lock_entry(&per_lock, ctx[0], &init);
	if (lt)
		__sync_fetch_and_add(&lt->count, 1);
	return 0;
}
