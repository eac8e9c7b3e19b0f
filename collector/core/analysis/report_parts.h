// The wait's four parts (DESIGN.md "Metrics"; LockCounters::spinning_ns()
// and the rest), in the order and under the names every door shows them:
// the report's text, JSON and CSV, the pprof sample types, the Prometheus
// series' part label, the dashboard. Each nanosecond of a wait is in
// exactly one part; where the session splits the wait they add up to it.
#pragma once

#include "core/model.h"

#include <array>
#include <cstddef>
#include <cstdint>

namespace lockscope {

struct WaitPart {
    const char* key;    // the JSON key and CSV column: "queued_on_cpu_ns"
    const char* name;   // pprof's sample type, Prometheus' part label: "queued_on_cpu"
    const char* label;  // in text: "queued on CPU"
    uint64_t (LockCounters::*ns)() const;
};

inline constexpr std::array<WaitPart, 4> kWaitParts = {{
    {"spinning_ns", "spinning", "spinning", &LockCounters::spinning_ns},
    {"queued_on_cpu_ns", "queued_on_cpu", "queued on CPU", &LockCounters::queued_on_cpu_ns},
    {"asleep_ns", "asleep", "asleep", &LockCounters::asleep_ns},
    {"runnable_ns", "runnable", "runnable", &LockCounters::runnable_ns},
}};
inline constexpr size_t kWaitPartCount = kWaitParts.size();

// c's parts in kWaitParts' order.
inline std::array<uint64_t, kWaitPartCount> wait_parts(const LockCounters& c)
{
    std::array<uint64_t, kWaitPartCount> out{};
    for (size_t i = 0; i < kWaitPartCount; ++i)
        out[i] = (c.*kWaitParts[i].ns)();
    return out;
}

}  // namespace lockscope
