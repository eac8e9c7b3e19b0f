// reflock::harness - the will-it-scale style harness core behind `lockscope
// bench`: N threads loop { lock; critical section; unlock; outside work }
// over one lock for a duration, sampled every interval. Plain result
// structs; printing and session storage belong to the caller.
#pragma once

#include "reflock/counters.h"
#include "reflock/harness/lock_spec.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace reflock::harness {

struct Params {
    LockSpec lock;
    unsigned threads = 2;
    std::uint64_t critical_ns = 1000;  // work inside the lock (calibrated loop, not a clock wait)
    std::uint64_t outside_ns = 1000;   // work between acquisitions
    unsigned read_percent = 0;         // share of acquisitions taken shared (rwlocks only)
    std::chrono::milliseconds duration{2000};
    std::chrono::milliseconds interval{500};
};
// Throws std::invalid_argument for impossible parameters (0 threads, read
// percentage > 100, reads on an exclusive-only lock, interval > duration ...).
void validate(const Params& params);

struct Sample {
    std::uint64_t ops = 0;
    Counters counters;  // reflock counters (zero for pthread/std locks)
    double wall_s = 0;
    double cpu_s = 0;          // process CPU time used
    double idle_fraction = 0;  // (wall x CPUs - CPU time) / (wall x CPUs)
    double ops_per_s() const noexcept { return wall_s > 0 ? ops / wall_s : 0; }
    double spin_failure_rate() const noexcept
    {
        return counters.spin_attempts ? double(counters.spin_failures) / double(counters.spin_attempts) : 0;
    }
};

struct RunResult {
    Params params;
    unsigned repeat = 0;
    unsigned cpus = 0;  // CPUs the process may run on
    Sample total;
    std::vector<Sample> intervals;
    std::vector<std::uint64_t> ops_per_thread;
};

// One run. on_interval, if set, sees each interval as it completes (for live output).
RunResult run(const Params& params, unsigned repeat = 0, const std::function<void(const Sample&)>& on_interval = {});

// Repeats of several variants, interleaved (A B C, A B C, ...) so that slow
// drifts of the machine hit every variant alike: result[variant][repeat].
std::vector<std::vector<RunResult>> run_interleaved(std::span<const Params> variants, unsigned repeats);

struct Stat {
    double mean = 0, stddev = 0, min = 0, max = 0;
    std::size_t n = 0;
};
Stat stat_of(std::span<const double> values);

}  // namespace reflock::harness
