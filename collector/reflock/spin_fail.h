// Why a reflock spinner gave up: the reasons its counters and its
// lockscope:spin_fail USDT probe report.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace reflock {

// Why an optimistic spin phase ended without the lock. The numeric values are
// the `reason` argument of the lockscope:spin_fail USDT probe: keep them.
enum class SpinFail : std::uint8_t {
    OwnerOffCpu = 0,         // the owner is not running (oracle said so)
    OwnerNullCountBusy = 1,  // rwsem 4.1-4.7: owner cleared but the count still active
    ReaderOwned = 2,         // readers hold the rwsem (owner NULL or READER_OWNED)
    Handoff = 3,             // a handoff is pending, or a mutex waiter is no longer first
    BudgetExhausted = 4,     // the spin budget (user-space stand-in for need_resched) ran out
    NoOwner = 5,             // rwsem 3.16: no owner recorded, do not spin
    NonSpinnable = 6,        // rwsem 5.3+: owner marked RWSEM_NONSPINNABLE
    OwnerChanged = 7,        // rwsem 3.16-rc2, 3.16: a new writer took over while we spun
};
inline constexpr std::size_t kSpinFailReasons = 8;

std::string_view to_string(SpinFail reason) noexcept;

}  // namespace reflock
