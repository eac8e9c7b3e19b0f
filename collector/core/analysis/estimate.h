// Sampled timing (record --sample N): every count is exact, and so is the
// time waiters spent off CPU (the clock is read when a waiter is switched,
// which costs far more than the read), but only about one episode in N per
// CPU is timed at its begin and end, each with probability 1/N. A timed
// episode stands for N (Horvitz-Thompson): the wait is the measured off-CPU
// time plus N times the timed episodes' on-CPU wait, unbiased as sampling
// goes (a timed episode's own clock read at its begin delays it a little,
// which on a lock raced for within tens of ns shifts the estimate by a few
// percent: tests/root/sampled_timing_test.cpp);
// spin time and the histogram are N times the timed episodes'. The variance
// of the wait estimate is estimated as N(N-1) times the sum of the timed
// on-CPU waits' squares (each episode timed independently with probability
// 1/N; the kernel's random gaps between timed episodes make that a close
// approximation). Splitting off the off-CPU time matters: the rare long
// waits of a preempted or sleeping waiter dominate a total, and a sample
// would miss them, and its standard error with them. The recorder turns the
// kernel's sums into estimates as it reads them (pipeline/sampled_timing.h)
// and the session stores the estimates, so everything that reads it (report,
// diff, export, the GUI) needs no special case beyond showing the standard
// error and what was not measured.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "core/model.h"

namespace lockscope {

// Metadata keys: "timing" is "full" or "sampled"; "timing.period" is N.
inline constexpr const char* kTimingKey = "timing";
inline constexpr const char* kTimingPeriodKey = "timing.period";

// Adds the keys above for period N (1: full timing).
void set_timing_meta(std::map<std::string, std::string>& meta, uint32_t period);
// N of a session's metadata: 1 for full timing and for sessions recorded
// before sampled timing existed; nullopt when the keys are malformed.
std::optional<uint32_t> timing_period(const std::map<std::string, std::string>& meta);

// The standard error of wait_ns, in ns (0 when every wait was timed).
double wait_stderr_ns(const LockCounters& c);
// False where a sampled estimate has no variance to go with it: per-task
// totals (LS_TASK_COUNTERS) keep none, so their error is unknown, not 0.
inline bool stderr_known(const LockCounters& c, uint32_t period)
{
    return period <= 1 || c.wait_var_us2 > 0 || c.timed == 0;
}

// False when, in a session of period N > 1, episodes ended but none was
// timed: their times are then unknown, not 0.
inline bool times_measured(const LockCounters& c, uint32_t period)
{
    return period <= 1 || c.timed > 0 || c.contentions == 0;
}

// The counter columns (fields and derived ones: core/render/counter_columns.h)
// that only timed episodes feed: unknown, not 0, where times_measured() is false.
bool is_timed_field(std::string_view name);

// The wait total as text: "1.23 s" with full timing, "1.23 s ± 0.05" (the
// standard error, in the total's unit) for an estimate, "not timed" ("n/t"
// when `compact`, as in format_duration) when no episode was.
std::string format_wait_estimate(const LockCounters& c, uint32_t period, bool compact = false);

}  // namespace lockscope
