#include "pipeline/sampled_timing.h"

#include <cmath>

namespace lockscope {

void scale_timed(LockCounters& c, uint32_t period)
{
    if (period <= 1)
        return;
    const uint64_t n = period;
    auto scale = [n](uint64_t& v) {
        uint64_t r;
        v = __builtin_mul_overflow(v, n, &r) ? UINT64_MAX : r;
    };
    scale(c.wait_ns);  // the timed episodes' on-CPU wait
    c.wait_ns = sat_add(c.wait_ns, c.offcpu_ns());
    scale(c.spin_ns);
    scale(c.spin_offcpu_ns);  // of the timed episodes' spin phases, as spin_ns
    // the holder split is kept for the timed episodes only
    scale(c.holder_running_ns);
    scale(c.holder_runnable_ns);
    scale(c.holder_asleep_ns);
    for (uint64_t& b : c.hist)
        scale(b);
    // Read from the kernel, the field holds the timed waits' sum of squares
    // in (256 ns)^2 units, 0.065536 us^2 each; stored, the variance in us^2.
    const uint64_t timed_wait_squares_256ns2 = c.wait_var_us2;
    const double var = double(timed_wait_squares_256ns2) * 0.065536 * double(n) * double(n - 1);
    c.wait_var_us2 = var >= 1.8e19 ? UINT64_MAX : uint64_t(std::llround(var));
}

}  // namespace lockscope
