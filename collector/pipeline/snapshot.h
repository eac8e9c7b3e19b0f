// The recording pipeline's first step: cumulative counters as read from the
// BPF maps at one instant, in plain C++ types. The probe fills it;
// pipeline/rollup.h turns successive snapshots into session intervals.
// Keeping it free of libbpf lets the roll-up be tested without root.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/model.h"
#include "identity/evidence.h"

namespace lockscope {

// The kernel's key of a lock, as its BPF maps hold it: (address, the
// contention_begin kind bits, LS_F_KIND_MASK). The raw rows below carry it
// as their address and flags.
using KernelLockKey = std::pair<uint64_t, uint32_t>;

struct RawLock {
    uint64_t address = 0;
    uint32_t flags = 0;  // contention_begin kind bits (LS_F_KIND_MASK)
    RawIdentity identity;
    LockCounters counters;  // summed over CPUs, max over CPUs for max_wait_ns
};

struct RawStack {
    uint64_t address = 0;
    uint32_t flags = 0;
    int32_t stack_id = 0;
    uint32_t role = 0;  // 0 waiter, 1 waker
    uint64_t samples = 0;
    uint64_t wait_ns = 0;
};

// The user code above one sampled kernel stack of a kernel lock's waiters
// (the user-lock probe's, where record records user locks), per process,
// under the RawStack it was taken with; it is filed under that stack's lock row and
// frames as the run's KernelUserStack rows.
struct RawUserStack {
    uint64_t address = 0;
    uint32_t flags = 0;
    int32_t stack_id = 0;
    uint32_t tgid = 0;
    std::vector<std::string> frames;  // user frames, innermost first (as UserLockStack's)
    uint64_t samples = 0;
    uint64_t wait_ns = 0;
};

struct RawEdge {
    uint64_t address = 0;
    uint32_t flags = 0;
    uint64_t holder_address = 0;  // the lock the sampled holder was waiting for
    uint32_t holder_flags = 0;
    uint64_t samples = 0;
    uint64_t wait_ns = 0;
};

// A sampled holder's task under the kernel's key of its lock; the roll-up
// files it under the session's run and lock id.
struct RawHolderTask {
    uint64_t address = 0;
    uint32_t flags = 0;
    HolderTask task;  // run and lock_id are 0 here
};

// A holder's (or its preempter's) followed times under the kernel's key of
// its lock; the roll-up files it under the session's run and lock id.
struct RawHolderTime {
    uint64_t address = 0;
    uint32_t flags = 0;
    HolderTime time;  // run and lock_id are 0 here
};

struct RawLockCgroup {
    uint64_t address = 0;
    uint32_t flags = 0;
    uint64_t cgroup_id = 0;
    uint64_t samples = 0;  // sampled waiter stacks of tasks in that cgroup
};

// A task's cumulative counters since the probe was loaded; the roll-up
// turns them into the run's deltas and the cgroup id into its path.
struct RawTask {
    uint64_t cgroup_id = 0;  // cgroup v2 id when the task was last switched out
    TaskStats task;          // run is 0 and cgroup "" here
};

struct RawCounters {
    uint64_t begins = 0;
    uint64_t ends = 0;
#define LOCKSCOPE_X(name, version) uint64_t name = 0;
    LS_RUN_COUNTS(LOCKSCOPE_X)  // as RunInfo's, since the probe was loaded
#undef LOCKSCOPE_X
    LostCounters lost;
};

struct RawSnapshot {
    uint64_t taken_ns = 0;  // CLOCK_MONOTONIC (the BPF clock)
    std::vector<RawLock> locks;
    std::vector<RawStack> stacks;
    std::map<int32_t, std::vector<uint64_t>> stack_ips;  // only ids not delivered before
    std::vector<RawTask> tasks;
    std::vector<RawEdge> edges;
    std::vector<RawHolderTask> holder_tasks;       // the sampled holders' tasks, per lock row
    std::vector<RawHolderTime> holder_times;       // the followed holders' and preempters' times, per lock row
    std::vector<RawLockCgroup> lock_cgroups;       // the sampled waiters' cgroups, per lock row
    std::map<uint64_t, std::string> cgroup_paths;  // the tasks' cgroup ids, as paths ("/" the root)
    uint64_t idle_ns = 0;                          // summed over CPUs, including ongoing idle periods
    uint32_t cpus = 0;                             // online CPUs
    RawCounters counters;
};

}  // namespace lockscope
