// The counters as the JSON report and the CSV tables print them: every field
// of kCounterFields in its order, under its own name, with values computed
// from them placed after the field each follows. A field added to the table
// reaches every output without an edit here.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

#include "core/model.h"

namespace lockscope {

// A value computed from the stored counters, and the field it is printed after.
struct DerivedCounter {
    const char* after;
    const char* name;
    uint64_t (*count)(const LockCounters&) = nullptr;  // an integer, or
    double (*ratio)(const LockCounters&) = nullptr;    // a fraction or a mean
};

inline constexpr DerivedCounter kSpinFailureRate{"spin_successes", "spin_failure_rate", nullptr,
                                                 [](const LockCounters& c) { return c.spin_failure_rate(); }};
inline constexpr DerivedCounter kQueuedNs{"spin_ns", "queued_ns", [](const LockCounters& c) { return c.queued_ns(); }};
inline constexpr DerivedCounter kOffcpuNs{"spin_ns", "offcpu_ns", [](const LockCounters& c) { return c.offcpu_ns(); }};
// The wait's four parts (LockCounters::spinning_ns()), after the last field.
inline constexpr DerivedCounter kSpinningNs{"spin_yields", "spinning_ns",
                                            [](const LockCounters& c) { return c.spinning_ns(); }};
inline constexpr DerivedCounter kQueuedOnCpuNs{"spin_yields", "queued_on_cpu_ns",
                                               [](const LockCounters& c) { return c.queued_on_cpu_ns(); }};
inline constexpr DerivedCounter kAsleepNs{"spin_yields", "asleep_ns",
                                          [](const LockCounters& c) { return c.asleep_ns(); }};
inline constexpr DerivedCounter kRunnableNs{"spin_yields", "runnable_ns",
                                            [](const LockCounters& c) { return c.runnable_ns(); }};
// The holder split's rest (LockCounters::holder_unknown_ns()), after its last field.
inline constexpr DerivedCounter kHolderUnknownNs{"holder_asleep_ns", "holder_unknown_ns",
                                                 [](const LockCounters& c) { return c.holder_unknown_ns(); }};
inline constexpr DerivedCounter kMeanWaitNs{"max_wait_ns", "mean_wait_ns", nullptr, [](const LockCounters& c) {
                                                return c.contentions ? double(c.wait_ns) / double(c.contentions) : 0.0;
                                            }};

// Calls count(name, uint64_t) for each field and integral derived value,
// ratio(name, double) for each other derived value, in print order.
template <class Count, class Ratio>
void for_each_counter_column(const LockCounters& c, std::initializer_list<DerivedCounter> derived, Count&& count,
                             Ratio&& ratio)
{
    for (const CounterField& f : kCounterFields) {
        count(f.name, c.*f.member);
        for (const DerivedCounter& d : derived) {
            if (std::string_view(d.after) != f.name)
                continue;
            if (d.count)
                count(d.name, d.count(c));
            else
                ratio(d.name, d.ratio(c));
        }
    }
}

// The CSV tables keep their released columns in place (scripts read CSV by
// position): the holder split's counters (core/analysis/holder_parts.h)
// are not among a row's counter columns but follow all of its other columns.
inline bool csv_appended(std::string_view name)
{
    return name.starts_with("holder_");
}

// "contentions,spin_attempts,...": the CSV header of those columns, but
// the appended ones (csv_appended()).
inline std::string counter_csv_header(std::initializer_list<DerivedCounter> derived)
{
    std::string out;
    auto add = [&](const char* name, auto) {
        if (csv_appended(name))
            return;
        if (!out.empty())
            out += ',';
        out += name;
    };
    for_each_counter_column(LockCounters{}, derived, add, add);
    return out;
}

}  // namespace lockscope
