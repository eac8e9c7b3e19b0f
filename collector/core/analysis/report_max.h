// Which stored maxima are measurements. The kernel keeps one running
// maximum wait per lock (per probe, so per run). An interval's max_wait_ns
// is that maximum where it rose in the interval, a measured longest wait;
// where it did not rise, the interval's own longest wait is not known, and
// the recorder stores an upper bound instead (the top histogram bucket
// that changed, 2^k - 1 ns, or the interval's wait). So a stored value is
// a measurement exactly when it exceeds every value stored before it for
// that lock in its run, and a roll-up of rows knows its maximum where the
// largest measured value is at least every bound.
#pragma once

#include "core/model.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

namespace lockscope {

// The longest wait of some rows: what was measured, and what was only bounded.
struct MaxWait {
    uint64_t measured = 0;
    uint64_t bound = 0;  // the largest value not measured (0: none)

    void add(uint64_t value, bool is_measured)
    {
        (is_measured ? measured : bound) = std::max(is_measured ? measured : bound, value);
    }
    void add(const MaxWait& o)
    {
        measured = std::max(measured, o.measured);
        bound = std::max(bound, o.bound);
    }
    bool known() const { return measured >= bound; }
    uint64_t upper_bound() const { return std::max(measured, bound); }
};

// Parallel to session.lock_intervals: whether each row's max_wait_ns was
// measured (rows of one lock and run taken in interval order; per-run
// totals, index kRunTotalIndex, are the run's maximum and so measured).
std::vector<bool> measured_maxima(const Session& session);

// Parallel to session.intervals: each interval's longest wait over its
// locks where it is known, nullopt where it is not (or the session was
// loaded without per-interval lock rows).
std::vector<std::optional<uint64_t>> interval_max_waits(const Session& session);

}  // namespace lockscope
