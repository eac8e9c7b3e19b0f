#include "reflock/detail/futex.h"

#include "reflock/detail/thread_slot.h"

#include <ctime>

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace reflock::detail {
namespace {

std::uint64_t now_ns() noexcept
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

}  // namespace

void futex_wait(std::atomic<std::uint32_t>* word, std::uint32_t expected) noexcept
{
    static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t));
    ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
}

void futex_wake(std::atomic<std::uint32_t>* word, int count) noexcept
{
    ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAKE_PRIVATE, count, nullptr, nullptr, 0);
}

// The protocol of Rust std's futex parker: EMPTY -> PARKED by the sleeper,
// -> NOTIFIED by the waker; only a waker that saw PARKED pays for a syscall.
void Parker::park() noexcept
{
    if (state_.fetch_sub(1, std::memory_order_acquire) == kNotified)
        return;  // NOTIFIED -> EMPTY
    auto& counters = my_counters();
    for (;;) {
        const std::uint64_t start = now_ns();
        futex_wait(&state_, kParked);
        bump(counters.sleeps);
        bump(counters.sleep_ns, now_ns() - start);
        std::uint32_t expected = kNotified;
        if (state_.compare_exchange_strong(expected, kEmpty, std::memory_order_acquire))
            return;
        // Spurious wake-up (signal, stale futex wake): sleep again.
    }
}

bool Parker::unpark() noexcept
{
    if (state_.exchange(kNotified, std::memory_order_release) != kParked)
        return false;
    futex_wake(&state_, 1);
    bump(my_counters().wakeups);
    return true;
}

}  // namespace reflock::detail
