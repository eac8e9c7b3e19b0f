// reflock::Mutex - a replica of the Linux sleeping mutex
// (kernel/locking/mutex.c, v4.10 "locking/mutex: Rework mutex::owner" and
// later, as in 6.x): the owner word holds the owner's thread id and the
// WAITERS / HANDOFF / PICKUP flags; lock and unlock are one compare-and-swap
// when uncontended; a contended locker spins while the owner runs, queued
// behind other spinners in an MCS queue (OSQ) so only one polls the lock
// word; then it sleeps in a FIFO queue. A woken first waiter that loses the
// lock to a spinner sets HANDOFF, and the next unlock hands the lock to it
// directly (PICKUP), bounding starvation.
//
// Meets the Lockable requirements (std::lock_guard, std::unique_lock).
#pragma once

#include "reflock/detail/osq.h"
#include "reflock/detail/thread_slot.h"
#include "reflock/detail/wait_list.h"
#include "reflock/detail/wait_lock.h"

#include <atomic>
#include <cstdint>

namespace reflock {

class Mutex {
public:
    static constexpr std::uint64_t kWaiters = 0x1;  // non-empty wait list: unlock must wake
    static constexpr std::uint64_t kHandoff = 0x2;  // unlock must hand the lock to the first waiter
    static constexpr std::uint64_t kPickup = 0x4;   // handed off; the named owner must pick it up
    static constexpr std::uint64_t kFlags = 0x7;
    static constexpr unsigned kOwnerShift = 3;

    Mutex() = default;
    Mutex(const Mutex&) = delete;
    Mutex& operator=(const Mutex&) = delete;

    void lock() noexcept
    {
        std::uint64_t expected = 0;
        if (owner_.compare_exchange_strong(expected, self_word(), std::memory_order_acquire, std::memory_order_relaxed))
            [[likely]] {
            detail::bump(detail::my_counters().acquisitions);
            return;
        }
        lock_slow();
    }

    bool try_lock() noexcept;

    void unlock() noexcept
    {
        std::uint64_t expected = self_word();
        if (owner_.compare_exchange_strong(expected, 0, std::memory_order_release, std::memory_order_relaxed))
            [[likely]]
            return;
        unlock_slow();
    }

    // Thread id of the owner (0 if free); for tests and diagnostics.
    std::uint32_t owner_tid() const noexcept
    {
        return static_cast<std::uint32_t>(owner_.load(std::memory_order_relaxed) >> kOwnerShift);
    }
    std::uint64_t owner_flags() const noexcept { return owner_.load(std::memory_order_relaxed) & kFlags; }

private:
    static std::uint64_t self_word() noexcept { return std::uint64_t{detail::self_tid()} << kOwnerShift; }

    void lock_slow() noexcept;
    void unlock_slow() noexcept;
    // __mutex_trylock_common(): true if acquired; otherwise *owner_out = owner's tid.
    bool trylock_common(bool handoff, std::uint32_t* owner_out = nullptr) noexcept;
    bool optimistic_spin(detail::Waiter* waiter, SpinFail& why) noexcept;
    bool spin_on_owner(std::uint32_t owner, detail::Waiter* waiter, detail::SpinBudget& budget, SpinFail& why) noexcept;
    void handoff_to(std::uint32_t tid) noexcept;

    std::atomic<std::uint64_t> owner_{0};
    detail::Osq osq_;
    detail::WaitLock wait_lock_;
    detail::WaitList waiters_;
};

}  // namespace reflock
