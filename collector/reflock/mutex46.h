// reflock::Mutex46 - the Linux mutex of 4.5/4.6 (kernel/locking/mutex.c
// before "locking/mutex: Rework mutex::owner", v4.10): the
// baseline of the 4.7 rwsem regression, whose report compared 4.7's i_rwsem
// with the i_mutex of the commit before. An atomic count (1 free, 0 locked,
// negative: locked with waiters) and a separate owner field; mutex_unlock()
// clears the owner before it releases the count, as up_write() does. Unlike
// the 4.x rwsem, a spinner that sees the owner leave spins on whatever the
// count says (mutex_spin_on_owner() returns true when the owner changed), so
// it rides through that window. Optimistic spin behind the OSQ; FIFO wait
// queue; no handoff, no spinning by woken waiters.
//
// Meets the Lockable requirements (std::lock_guard, std::unique_lock).
#pragma once

#include "reflock/detail/osq.h"
#include "reflock/detail/wait_list.h"
#include "reflock/detail/wait_lock.h"
#include "reflock/counters.h"

#include <atomic>
#include <cstdint>

namespace reflock {

class Mutex46 {
public:
    // release_window_ns: busy-wait between clearing the owner and releasing the
    // count in unlock(), as RwSemOptions::release_window_ns does for up_write().
    explicit Mutex46(std::uint64_t release_window_ns = 0) noexcept : release_window_ns_(release_window_ns) {}
    Mutex46(const Mutex46&) = delete;
    Mutex46& operator=(const Mutex46&) = delete;

    void lock() noexcept;
    bool try_lock() noexcept;
    void unlock() noexcept;

    // Raw state, for tests and diagnostics.
    std::int32_t count() const noexcept { return count_.load(std::memory_order_relaxed); }
    std::uint32_t owner_tid() const noexcept { return owner_.load(std::memory_order_relaxed); }

private:
    void lock_slow() noexcept;
    void unlock_slow() noexcept;
    bool optimistic_spin(SpinFail& why) noexcept;
    bool spin_on_owner(std::uint32_t owner, detail::SpinBudget& budget, SpinFail& why) noexcept;

    std::uint64_t release_window_ns_;
    std::atomic<std::int32_t> count_{1};
    std::atomic<std::uint32_t> owner_{0};  // tid, 0 = none recorded
    detail::Osq osq_;
    detail::WaitLock wait_lock_;
    detail::WaitList waiters_;
};

}  // namespace reflock
