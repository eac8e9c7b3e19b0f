// Shared by the stack exports (folded, pprof): each lock's exact totals
// shared among its sampled waiter stacks by the one rule of
// core/analysis/report_split.h (counts by samples, times by sampled wait;
// the wait's parts each on its own, adding up to the share's wait), so that
// weights add up to the report's totals per lock, and in all, and a stack
// weighs the same in every export and in `report --by caller`. A kernel
// stack whose waiters' user stacks were sampled (KernelUserStack) is
// continued by them: innermost first, the kernel frames, then the user
// frames above them. Kernel locks and user-space locks alike: a user lock's
// counters are its futex waits (contentions), their wait, and its asleep
// and runnable parts (sleep_ns, preempt_ns); on CPU is queued on CPU.
#pragma once

#include "core/analysis/stack_frames.h"  // stack_function, is_tracepoint_plumbing
#include "core/model.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace lockscope {

// One quantity to weigh a stack by: its value in the stack's share of its
// lock's counters.
using StackMeasure = std::function<uint64_t(const LockCounters&)>;

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

// Per run and lock, its sampled waiter stacks of that run with their shares
// of the lock's totals (kernel_stack_shares, user_stack_shares), each
// weighed by every measure. Stacks whose measures are all zero are left
// out. Kernel locks first, then user locks (per run, process, name and kind).
std::vector<WeightedStack> weigh_stacks(const Session& session, const std::vector<StackMeasure>& measures);

}  // namespace lockscope
