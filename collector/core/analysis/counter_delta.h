// What cumulative counters counted between two readings: the roll-up's
// intervals, and live consumers' deltas between intervals (top, the
// Prometheus exporter).
#pragma once

#include "core/model.h"

namespace lockscope {

// Counters of `now` minus `before` (cumulative values; max_wait is kept from now).
LockCounters counter_delta(const LockCounters& now, const LockCounters& before);

}  // namespace lockscope
