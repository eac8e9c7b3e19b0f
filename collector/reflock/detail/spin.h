// Spin-phase helpers: the budget that stands in for need_resched(), and the
// owner-running question.
#pragma once

#include "reflock/counters.h"
#include "reflock/detail/futex.h"
#include "reflock/oracle.h"

#include <cstdint>
#include <ctime>

namespace reflock::detail {

inline std::uint64_t mono_ns() noexcept
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

// Checks the clock once every 16 polls, as the kernel's rwsem reader-spin
// deadline does, so a spinner reacts to a released lock without a clock
// read in between.
class SpinBudget {
public:
    SpinBudget() noexcept : deadline_(mono_ns() + Tuning::spin_budget_ns.load(std::memory_order_relaxed)) {}
    // The user-space need_resched(): true once the phase has used its budget.
    bool exhausted() noexcept
    {
        if (expired_)
            return true;
        if ((++polls_ & 0xf) != 0)
            return false;
        expired_ = mono_ns() >= deadline_;
        return expired_;
    }
    // The same, recording BudgetExhausted as the reason the spin ends.
    bool exhausted(SpinFail& why) noexcept
    {
        if (!exhausted())
            return false;
        why = SpinFail::BudgetExhausted;
        return true;
    }

private:
    std::uint64_t deadline_;
    std::uint32_t polls_ = 0;
    bool expired_ = false;
};

inline bool owner_on_cpu(std::uint32_t tid) noexcept
{
    return owner_oracle().on_cpu(tid);
}

// The loop of every *_spin_on_owner(): poll while `still_owner()` and the
// owner runs. True when the owner changed; false, with `why`, when it went
// off CPU or the budget (need_resched) ran out.
template <typename StillOwner>
bool spin_while_owner(std::uint32_t owner, StillOwner still_owner, SpinBudget& budget, SpinFail& why) noexcept
{
    while (still_owner()) {
        if (!owner_on_cpu(owner)) {
            why = SpinFail::OwnerOffCpu;
            return false;
        }
        if (budget.exhausted(why))
            return false;
        cpu_relax();
    }
    return true;
}

// The release window of up_write() and the 4.6 mutex_unlock(): a busy-wait
// between clearing the owner and releasing the count (0: natural timing).
inline void release_window(std::uint64_t ns) noexcept
{
    if (ns == 0)
        return;
    const std::uint64_t until = mono_ns() + ns;
    while (mono_ns() < until)
        cpu_relax();
}

}  // namespace reflock::detail
