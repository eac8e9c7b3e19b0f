#include "core/analysis/estimate.h"

#include "core/format.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace lockscope {

void set_timing_meta(std::map<std::string, std::string>& meta, uint32_t period)
{
    meta[kTimingKey] = period > 1 ? "sampled" : "full";
    meta[kTimingPeriodKey] = std::to_string(period > 1 ? period : 1);
}

std::optional<uint32_t> timing_period(const std::map<std::string, std::string>& meta)
{
    auto mode = meta.find(kTimingKey);
    if (mode == meta.end())
        return 1;  // recorded before sampled timing: every episode timed
    if (mode->second == "full")
        return 1;
    auto period = meta.find(kTimingPeriodKey);
    if (mode->second != "sampled" || period == meta.end())
        return std::nullopt;
    uint32_t n = 0;
    const std::string& text = period->second;
    auto r = std::from_chars(text.data(), text.data() + text.size(), n);
    if (r.ec != std::errc() || r.ptr != text.data() + text.size() || n < 2)
        return std::nullopt;
    return n;
}

bool is_timed_field(std::string_view name)
{
    // sleep_ns, preempt_ns and offcpu_ns are measured in every episode
    for (std::string_view timed : {"wait_ns", "spin_ns", "max_wait_ns", "wait_var_us2", "queued_ns", "mean_wait_ns",
                                   "spin_offcpu_ns", "spinning_ns", "queued_on_cpu_ns", "holder_running_ns",
                                   "holder_runnable_ns", "holder_asleep_ns", "holder_unknown_ns"})
        if (name == timed)
            return true;
    return false;
}

double wait_stderr_ns(const LockCounters& c)
{
    return std::sqrt(double(c.wait_var_us2)) * 1000.0;
}

std::string format_wait_estimate(const LockCounters& c, uint32_t period, bool compact)
{
    if (!times_measured(c, period))
        return compact ? "n/t" : "not timed";
    std::string out = format_duration(double(c.wait_ns), compact);
    if (period <= 1)
        return out;
    // the error in the total's unit (format_duration's): "1.23 s ± 0.05"
    const double total = double(c.wait_ns);
    const double unit = total < 999.5 ? 1 : total < 999.5e3 ? 1e3 : total < 999.5e6 ? 1e6 : 1e9;
    if (!stderr_known(c, period))
        return out + (compact ? "±?" : " ± ?");
    const double se = wait_stderr_ns(c) / unit;
    char buf[32];
    std::snprintf(buf, sizeof buf, se >= 99.5 ? "%.0f" : "%.2g", se);
    return out + (compact ? "±" : " ± ") + buf;
}

}  // namespace lockscope
