// Shared by the stack exports (folded, pprof): each lock's exact totals
// spread over its sampled waiter stacks, so that weights add up to the
// report's totals per lock, and in all. A kernel stack whose waiters' user
// stacks were sampled (KernelUserStack) is continued by them: innermost
// first, the kernel frames, then the user frames above them, the kernel
// stack's share split among its user stacks in proportion to their samples
// (or wait). Kernel locks and user-space locks
// alike: a user lock's counters are its futex waits (contentions), their
// wait, and its asleep and runnable parts (sleep_ns, preempt_ns).
#pragma once

#include "core/analysis/stack_frames.h"  // stack_function, is_tracepoint_plumbing
#include "core/model.h"

#include <cstdint>
#include <string>
#include <vector>

namespace lockscope {

// One quantity to spread: its value in a lock's counters, and whether the
// stacks' sampled wait (else their sample counts) says how to split it.
struct StackMeasure {
    uint64_t (*value)(const LockCounters&);
    bool by_wait = true;
};

struct WeightedStack {
    std::string name;                 // the lock's
    std::string kind;                 // with its mode: "mutex", "rwsem/write", "pthread_mutex"
    std::string name_source;          // "" where the session has none
    bool user = false;                // a user-space lock
    std::vector<std::string> frames;  // functions, innermost first; empty: no stack sampled in that run
    std::vector<uint64_t> values;     // one per measure

    // "pipe_inode_info.mutex [mutex]", "g_cache_lock [user pthread_mutex]"
    std::string root() const { return name + " [" + (user ? "user " : "") + kind + "]"; }
};

// Per run and lock, every measure's total apportioned over the waiter stacks
// sampled in that run (largest remainders: integers that add up exactly).
// Locks whose measures are all zero are left out. Kernel locks first, then
// user locks (per run, process, name and kind).
std::vector<WeightedStack> weigh_stacks(const Session& session, const std::vector<StackMeasure>& measures);

}  // namespace lockscope
