// The lock that guards a wait queue (kernel: raw_spinlock_t wait_lock).
// A pure spinlock is unsafe in user space: its holder can be preempted and
// every other thread then spins out a time slice. So: a short spin, then a
// futex (Drepper's "mutex3": 0 free, 1 locked, 2 locked with sleepers).
// Its contention is not traced or counted; the kernel would trace it as a
// nested spinlock episode, which reflock does not model.
#pragma once

#include "reflock/detail/futex.h"

#include <atomic>
#include <cstdint>

namespace reflock::detail {

class WaitLock {
public:
    void lock() noexcept
    {
        std::uint32_t expected = 0;
        if (state_.compare_exchange_strong(expected, 1, std::memory_order_acquire, std::memory_order_relaxed))
            return;
        lock_slow();
    }
    bool try_lock() noexcept
    {
        std::uint32_t expected = 0;
        return state_.compare_exchange_strong(expected, 1, std::memory_order_acquire, std::memory_order_relaxed);
    }
    void unlock() noexcept
    {
        if (state_.exchange(0, std::memory_order_release) == 2)
            futex_wake(&state_, 1);
    }

private:
    void lock_slow() noexcept
    {
        for (int i = 0; i < 100; ++i) {
            std::uint32_t expected = 0;
            if (state_.load(std::memory_order_relaxed) == 0 &&
                state_.compare_exchange_strong(expected, 1, std::memory_order_acquire, std::memory_order_relaxed))
                return;
            cpu_relax();
        }
        while (state_.exchange(2, std::memory_order_acquire) != 0)
            futex_wait(&state_, 2);
    }
    std::atomic<std::uint32_t> state_{0};
};

class WaitLockGuard {
public:
    explicit WaitLockGuard(WaitLock& lock) noexcept : lock_(lock) { lock_.lock(); }
    ~WaitLockGuard() { lock_.unlock(); }
    WaitLockGuard(const WaitLockGuard&) = delete;
    WaitLockGuard& operator=(const WaitLockGuard&) = delete;

private:
    WaitLock& lock_;
};

}  // namespace reflock::detail
