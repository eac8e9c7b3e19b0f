// Wait chains: lock classes linked by sampled holders that were themselves
// waiting. A waiter of lock A queued behind A's holder; that holder was
// waiting for lock B (an edge A -> B, bpf/lockscope.bpf.c sample_holder);
// B's holder may wait for C, and so on down to the root: the last holder,
// and what it was doing (running, preempted, asleep, in I/O wait).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/model.h"

namespace lockscope {

// A class-level edge: waiters of `from` behind holders waiting for `to`.
struct ChainEdge {
    std::string from;
    std::string to;
    uint64_t samples = 0;
    uint64_t wait_ns = 0;    // of the sampled waiters of `from`
    bool from_user = false;  // `from` is a user-space lock (user_lock_label)
};

// What a lock class's sampled holders were doing.
struct HolderSummary {
    std::map<std::string, uint64_t> samples_by_state;  // running, preempted, sleeping, io-wait
    std::vector<std::string> frames;                   // the stack with the most wait behind it
    uint64_t frames_wait_ns = 0;
    // The on-CPU ticks' stack with the most samples: where a holder seen
    // running was, for a root whose queueing samples have no frames.
    std::vector<std::string> on_cpu_frames;
    uint64_t on_cpu_frames_samples = 0;
    std::string task;  // the task sampled holding it most often: "comm[tid]"
    uint64_t task_samples = 0;
    uint64_t reader_owned = 0;  // queueings that found the lock reader-owned (no single holder)
    uint64_t one_owner = 0;     // queueings that found one owner
};

struct ChainRoot {
    std::string lock;
    // running, preempted, sleeping, io-wait; "reader-owned" (no single
    // holder); "cycle" (the chain comes back to one of its locks); "" when
    // no holder of the lock was sampled.
    std::string state;
    std::vector<std::string> frames;  // the root's heaviest holder stack; empty if none or unreadable
    std::string task;                 // the root's most sampled holder task, "comm[tid]"; "" unknown
};

struct Chain {
    std::vector<std::string> locks;  // waiter's lock first
    uint64_t samples = 0;            // of the first edge
    uint64_t wait_ns = 0;            // the first edge's: the wait the chain explains
    bool cycle = false;              // the last lock is already in the chain
    bool truncated = false;          // went on beyond the depth limit
    ChainRoot root;
    bool from_user = false;  // the first lock is a user-space lock (user_lock_label), the others the kernel's
};

inline constexpr size_t kChainDepth = 5;  // locks in a chain at most (four hops)

// One chain per edge, each followed along the heaviest edge out of its last
// lock (ties: more samples, then the name), heaviest chains first.
std::vector<Chain> assemble_chains(const std::vector<ChainEdge>& edges,
                                   const std::map<std::string, HolderSummary>& holders, size_t depth = kChainDepth);

// A user-space lock in a chain: its name and kind, "g_cache_lock (user pthread_mutex)".
std::string user_lock_label(const std::string& name, const std::string& kind);

// The session's chains (one run, or all), by lock name. A user lock's chain
// (table user_lock_chains) counts waits, not samples: every wait whose
// owner was seen waiting for the kernel lock is on it.
std::vector<Chain> session_chains(const Session& session, std::optional<int64_t> run = std::nullopt);

}  // namespace lockscope
