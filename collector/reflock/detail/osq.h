// The optimistic spin queue (kernel/locking/osq_lock.c): an MCS lock that
// lets only one spinner at a time poll the lock word, so N spinners do not
// hammer its cache line; a queued spinner may give up (kernel: need_resched
// or a preempted predecessor vCPU; here: the spin budget) and unlink itself.
#pragma once

#include "reflock/detail/spin.h"

#include <atomic>
#include <cstdint>

namespace reflock::detail {

struct OsqNode;

class Osq {
public:
    // Returns true once this thread heads the queue; false if it gave up.
    bool lock(SpinBudget& budget) noexcept;
    void unlock() noexcept;
    // A spinner is queued or spinning (kernel: osq_is_locked / rwsem_has_spinner).
    bool is_locked() const noexcept { return tail_.load(std::memory_order_relaxed) != 0; }

private:
    OsqNode* wait_next(OsqNode* node, OsqNode* prev) noexcept;
    std::atomic<std::uint32_t> tail_{0};  // encoded slot of the last queued spinner, 0 = empty
};

// mutex_can_spin_on_owner() then osq_lock(): a recorded owner (0: none) must
// be running, and this thread must reach the head of the spinner queue.
inline bool start_spin(Osq& osq, std::uint32_t owner, SpinBudget& budget, SpinFail& why) noexcept
{
    if (owner && !owner_on_cpu(owner)) {
        why = SpinFail::OwnerOffCpu;
        return false;
    }
    if (!osq.lock(budget)) {
        why = SpinFail::BudgetExhausted;
        return false;
    }
    return true;
}

}  // namespace reflock::detail
