// Cumulative counters as read from the BPF maps at one instant, in plain
// C++ types. The probe layer fills it; rollup.h turns successive snapshots
// into session intervals. Keeping it free of libbpf lets the roll-up be
// tested without root.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/model.h"

namespace lockscope {

// What the kernel said about a lock when its row was created (the BPF
// ls_lock_ident, in plain types): the evidence lock identity is built from.
struct RawIdentity {
    uint32_t sources = 0;  // LS_IDENT_*: which lookups ran
    uint64_t cache = 0;    // struct kmem_cache *, 0: not in a slab (or not looked up)
    std::string cache_name;
    uint32_t object_size = 0;
    uint32_t slab_size = 0;  // object plus metadata: the stride within a slab
    uint32_t red_left_pad = 0;
    uint16_t order = 0, min_order = 0;
    uint32_t task_member = 0;  // LS_TASK_*
    uint64_t object = 0;       // LS_TASK_PIPE: the pipe_inode_info the lock lies in
    uint32_t tgid = 0;         // the task that created the row
    uint64_t inode_ino = 0;    // the inode whose i_rwsem (LS_IDENT_INODE_READ) or pipe (LS_TASK_PIPE) it is
    uint32_t inode_dev = 0;
    std::string fs_type;
    std::string dentry_name;
};

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

struct RawEdge {
    uint64_t address = 0;
    uint32_t flags = 0;
    uint64_t holder_address = 0;  // the lock the sampled holder was waiting for
    uint32_t holder_flags = 0;
    uint64_t samples = 0;
    uint64_t wait_ns = 0;
};

struct RawHolderTask {
    uint64_t address = 0;
    uint32_t flags = 0;
    uint32_t tid = 0;
    uint32_t tgid = 0;
    std::string comm;
    uint64_t samples = 0;
};

struct RawLockCgroup {
    uint64_t address = 0;
    uint32_t flags = 0;
    uint64_t cgroup_id = 0;
    uint64_t samples = 0;  // sampled waiter stacks of tasks in that cgroup
};

struct RawTask {
    uint32_t pid = 0;
    uint32_t tgid = 0;
    std::string comm;
    uint64_t cgroup_id = 0;  // cgroup v2 id when the task was last switched out
    LockCounters counters;
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
    std::vector<RawLockCgroup> lock_cgroups;       // the sampled waiters' cgroups, per lock row
    std::map<uint64_t, std::string> cgroup_paths;  // the tasks' cgroup ids, as paths ("/" the root)
    uint64_t idle_ns = 0;                          // summed over CPUs, including ongoing idle periods
    uint32_t cpus = 0;                             // online CPUs
    RawCounters counters;
};

}  // namespace lockscope
