// Futex wrappers and the pause of a spinning reflock thread.
#pragma once

#include <atomic>
#include <cstdint>

namespace reflock::detail {

// FUTEX_WAIT_PRIVATE: returns when woken, on a signal, or at once if *word != expected.
void futex_wait(std::atomic<std::uint32_t>* word, std::uint32_t expected) noexcept;
void futex_wake(std::atomic<std::uint32_t>* word, int count) noexcept;

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
