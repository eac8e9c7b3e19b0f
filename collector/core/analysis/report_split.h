// How a lock's exact totals are shared among its sampled waiter stacks: the
// one rule that `report --by caller`, the folded and pprof exports (both
// weights) and the dashboard follow, so that no two of them split a lock
// differently.
//
// Stacks are sampled (one episode in --stack-period per CPU), each sample
// one episode: counts (contentions, spin attempts, sleeps, histogram
// buckets, ...) are shared in proportion to the stacks' samples, times
// (wait, its parts) in proportion to their sampled wait; where one of the
// two is all zero, the other serves. Each count and time is shared exactly
// (largest remainders: integers that add up to the lock's). The wait's four
// parts are shared each on its own and a share's wait is their sum, so that
// a share's parts add up to its wait as the lock's do. A maximum is the
// lock's: an upper bound for each share, not a measurement.
#pragma once

#include "core/model.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace lockscope {

// A sampled stack's weight in the split.
struct StackWeight {
    uint64_t samples = 0;
    uint64_t wait_ns = 0;  // the sampled episodes' wait
};

// `c` shared among `stacks` (one LockCounters per stack, in their order),
// adding up to `c` field by field (max_wait_ns: c's in each).
std::vector<LockCounters> split_counters(const LockCounters& c, const std::vector<StackWeight>& stacks);

// One sampled waiter stack of a kernel lock in one run, with its share of
// the lock's totals in that run. Where the waiters' user stacks were sampled
// above it (KernelUserStack), one share per user stack (UserCodeIndex).
struct StackShare {
    int64_t run = 0;
    int64_t lock_id = 0;
    const StackSample* kernel = nullptr;             // nullptr: no waiter stack sampled for it in that run
    const std::vector<std::string>* user = nullptr;  // the user frames above it, innermost first, where sampled
    LockCounters counters;
};

// Every kernel lock of the wanted runs, its totals per run shared among its
// sampled waiter stacks of that run (a lock without one: one share, all of
// it). Ordered by run, lock id, then the session's stack order. The session
// must outlive the result.
std::vector<StackShare> kernel_stack_shares(const Session& session, const std::function<bool(int64_t)>& wanted);

// The same for the user-space locks: each row's counters
// (UserLockWaits::counters()) shared among its sampled stacks.
struct UserStackShare {
    const UserLockRow* row = nullptr;
    const UserLockStack* stack = nullptr;  // nullptr: no stack sampled for the row
    LockCounters counters;
};
std::vector<UserStackShare> user_stack_shares(const Session& session, const std::function<bool(int64_t)>& wanted);

}  // namespace lockscope
