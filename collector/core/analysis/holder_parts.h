// The holder split's four parts (DESIGN.md "Metrics"; LockCounters::
// holder_unknown_ns()), a second partition of the wait, in the order and
// under the names the doors show them: the report's JSON and CSV keys, the
// Prometheus series' part label, the diff's share metrics. They add up to
// the wait in sessions that keep the split (holder_split_kept()).
#pragma once

#include "core/model.h"

#include <array>
#include <cstddef>
#include <cstdint>

namespace lockscope {

struct HolderPart {
    const char* key;    // the JSON key and CSV column: "holder_runnable_ns"
    const char* name;   // Prometheus' part label: "runnable"
    const char* share;  // the diff's metric: "holder_runnable_share"
    uint64_t (*ns)(const LockCounters&);
};

inline constexpr std::array<HolderPart, 4> kHolderParts = {{
    {"holder_running_ns", "running", "holder_running_share", [](const LockCounters& c) { return c.holder_running_ns; }},
    {"holder_runnable_ns", "runnable", "holder_runnable_share",
     [](const LockCounters& c) { return c.holder_runnable_ns; }},
    {"holder_asleep_ns", "asleep", "holder_asleep_share", [](const LockCounters& c) { return c.holder_asleep_ns; }},
    {"holder_unknown_ns", "unknown", "holder_unknown_share",
     [](const LockCounters& c) { return c.holder_unknown_ns(); }},
}};

}  // namespace lockscope
