#include "core/analysis/counter_delta.h"

#include <algorithm>

namespace lockscope {

// max_wait_ns, a running maximum handled below, is the only field the table
// (LS_LOCK_COUNTERS) merges by max: every other one is a sum to subtract.
static_assert(std::ranges::all_of(kCounterFields, [](const CounterField& f) {
    return (f.merge == Merge::max) == (f.member == &LockCounters::max_wait_ns);
}));

LockCounters counter_delta(const LockCounters& now, const LockCounters& before)
{
    auto d = [](uint64_t a, uint64_t b) { return a >= b ? a - b : 0; };
    LockCounters c;
    for (const CounterField& f : kCounterFields)
        if (f.merge == Merge::sum)
            c.*f.member = d(now.*f.member, before.*f.member);
    for (size_t i = 0; i < c.owner.size(); i++)
        c.owner[i] = d(now.owner[i], before.owner[i]);
    uint64_t top_bucket_changed = 0;
    for (size_t i = 0; i < c.hist.size(); i++) {
        c.hist[i] = d(now.hist[i], before.hist[i]);
        if (c.hist[i])
            top_bucket_changed = i + 1;
    }
    // The kernel keeps a running max; an interval's max is only known when it
    // rose, otherwise bound it by the top histogram bucket that changed.
    if (now.max_wait_ns > before.max_wait_ns)
        c.max_wait_ns = now.max_wait_ns;
    else if (top_bucket_changed)
        c.max_wait_ns = std::min<uint64_t>(now.max_wait_ns, (uint64_t(2) << (top_bucket_changed - 1)) - 1);
    // No wait exceeds the interval's sum of waits. (Maps are read while the
    // programs update them, so a sum can also lag its max by one interval.)
    c.max_wait_ns = std::min(c.max_wait_ns, c.wait_ns);
    return c;
}

}  // namespace lockscope
