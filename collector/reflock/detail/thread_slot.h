// Per-thread state shared by all reflock locks: the kernel keeps the same
// things in task_struct and per-CPU data (wake-up state, the OSQ node, lock
// event counts). Slots live in one static array and are recycled when a
// thread exits, so a lock may keep pointers into a slot after its thread is
// gone (as the kernel may keep a per-CPU OSQ node pointer) without ever
// touching freed memory.
#pragma once

#include "reflock/spin_fail.h"

#include <atomic>
#include <cstdint>

namespace reflock::detail {

// One node of the optimistic spin queue (kernel: struct optimistic_spin_node).
struct OsqNode {
    std::atomic<OsqNode*> next{nullptr};
    std::atomic<OsqNode*> prev{nullptr};
    std::atomic<bool> locked{false};
    std::uint32_t encoded = 0;  // this slot's index + 1, the value stored in the queue tail
};

// Counters written only by the slot's thread: relaxed load + store, no RMW.
struct CounterCells {
    std::atomic<std::uint64_t> acquisitions{0}, contended{0}, spin_attempts{0}, spin_successes{0}, spin_failures{0},
        sleeps{0}, sleep_ns{0}, wakeups{0}, handoffs{0};
    std::atomic<std::uint64_t> by_reason[kSpinFailReasons] = {};
};

inline void bump(std::atomic<std::uint64_t>& cell, std::uint64_t by = 1) noexcept
{
    cell.store(cell.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
}

// A binary permit (like the kernel's task state + wake_up_process): unpark()
// before park() is not lost, and park() may return spuriously, so every
// caller re-checks its own condition in a loop - as kernel waiters do
// around schedule(). Lives in static storage (ThreadSlot), so a waker may
// touch it after the waiter has returned without a use-after-free.
class Parker {
public:
    // Blocks until a permit is available and consumes it. Counts a sleep
    // (and its duration) in the caller's counters only if it really blocked.
    void park() noexcept;
    // Makes a permit available; wakes the owner thread if it is blocked.
    // Returns true if a futex wake was issued.
    bool unpark() noexcept;

private:
    static constexpr std::uint32_t kEmpty = 0, kNotified = 1, kParked = ~0u;
    std::atomic<std::uint32_t> state_{kEmpty};
};

struct alignas(64) ThreadSlot {
    std::uint32_t tid = 0;
    Parker parker;
    alignas(64) OsqNode osq;
    alignas(64) CounterCells counters;
};

inline constexpr std::uint32_t kMaxThreadSlots = 4096;

// Claims a slot for the calling thread (aborts past kMaxThreadSlots live
// threads: the replica's stand-in for NR_CPUS).
ThreadSlot* claim_slot() noexcept;
std::uint32_t query_tid() noexcept;

inline thread_local ThreadSlot* t_slot = nullptr;
inline thread_local std::uint32_t t_tid = 0;

// The calling thread's slot. Inline: the mutex fast path counts acquisitions.
inline ThreadSlot& self() noexcept
{
    if (!t_slot) [[unlikely]]
        t_slot = claim_slot();
    return *t_slot;
}
// The calling thread's kernel thread id, cached (the owner value of our locks).
inline std::uint32_t self_tid() noexcept
{
    if (t_tid == 0) [[unlikely]]
        t_tid = query_tid();
    return t_tid;
}
// Slot by OSQ encoding (index + 1).
ThreadSlot& slot_at(std::uint32_t encoded) noexcept;

// Number of slots ever claimed; slots [1, n] (OSQ encoding) hold counters.
std::uint32_t slots_in_use_high_water() noexcept;

inline CounterCells& my_counters() noexcept
{
    return self().counters;
}

}  // namespace reflock::detail
