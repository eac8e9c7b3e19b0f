// Futex wrappers and the per-thread parker every reflock waiter sleeps on.
#pragma once

#include <atomic>
#include <cstdint>

namespace reflock::detail {

// FUTEX_WAIT_PRIVATE: returns when woken, on a signal, or at once if *word != expected.
void futex_wait(std::atomic<std::uint32_t>* word, std::uint32_t expected) noexcept;
void futex_wake(std::atomic<std::uint32_t>* word, int count) noexcept;

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

inline void cpu_relax() noexcept
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield" ::: "memory");
#else
    std::atomic_signal_fence(std::memory_order_seq_cst);
#endif
}

}  // namespace reflock::detail
