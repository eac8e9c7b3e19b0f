// Random sessions for the property test of the doors (doors_test.cpp),
// written through the real SessionWriter: runs of intervals over kernel
// locks (some sharing a class, an rwsem's read and write rows), sampled
// waiter stacks with user code above some, tasks, and user-space locks with
// their stacks. Every lock's wait is made of its four parts, and each
// interval's maxima follow the kernel's running maximum as the recorder
// stores it: a measurement where it rose, an upper bound elsewhere.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>

namespace lockscope::testing {

struct GeneratedSession {
    // Per (run, interval index): the longest wait over its locks where the
    // session can know it, nullopt where only a bound is stored.
    std::map<std::pair<int64_t, int64_t>, std::optional<uint64_t>> interval_max;
};

GeneratedSession write_generated_session(const std::string& path, uint64_t seed);

}  // namespace lockscope::testing
