// Sampled timing (record --sample N, core/analysis/estimate.h): the
// kernel's sums, as the probe reads them, into the estimates a session
// stores.
#pragma once

#include <cstdint>

#include "core/model.h"

namespace lockscope {

// wait_ns as estimate.h says, spin_ns and the histogram times N, sleep_ns
// and preempt_ns as measured, max_wait_ns as it is (the longest timed wait),
// wait_var_us2 from the kernel's sum of squares. Counts stay. With N = 1,
// nothing changes.
void scale_timed(LockCounters& c, uint32_t period);

}  // namespace lockscope
