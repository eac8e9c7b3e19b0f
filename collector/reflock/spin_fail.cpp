#include "reflock/spin_fail.h"

#include <array>

namespace reflock {

std::string_view to_string(SpinFail reason) noexcept
{
    // In SpinFail's order: a reason's value is its index.
    static constexpr std::array<std::string_view, kSpinFailReasons> kNames{
        "owner-off-cpu", "owner-null-count-busy", "reader-owned", "handoff", "budget-exhausted",
        "no-owner",      "non-spinnable",         "owner-changed"};
    static_assert(kSpinFailReasons == std::size_t(SpinFail::OwnerChanged) + 1, "a name for each reason");
    const auto i = static_cast<std::size_t>(reason);
    return i < kNames.size() ? kNames[i] : "unknown";
}

}  // namespace reflock
