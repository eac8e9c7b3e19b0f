// Shared by the stack exports (folded, pprof): each lock's exact totals
// spread over its sampled waiter stacks, so that weights add up to the
// report's totals per lock, and in all.
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
    const LockInfo* lock = nullptr;
    const StackSample* stack = nullptr;  // nullptr: no stack was sampled for the lock in that run
    std::vector<uint64_t> values;        // one per measure
};

// Per run and lock, every measure's total apportioned over the waiter stacks
// sampled in that run (largest remainders: integers that add up exactly).
// Locks whose measures are all zero are left out.
std::vector<WeightedStack> weigh_stacks(const Session& session, const std::vector<StackMeasure>& measures);

}  // namespace lockscope
