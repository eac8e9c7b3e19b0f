#include "reflock/detail/thread_slot.h"

#include "reflock/detail/futex.h"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <vector>

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

std::array<ThreadSlot, kMaxThreadSlots> g_slots;

struct Registry {
    std::mutex mutex;
    std::uint32_t high_water = 0;  // slots ever handed out
    std::vector<std::uint32_t> free_list;
};

Registry& registry()
{
    static Registry* r = new Registry;  // never destroyed: threads may exit after static destructors run
    return *r;
}

struct SlotOwner {
    ThreadSlot* slot = nullptr;
    ~SlotOwner()
    {
        if (!slot)
            return;
        auto& r = registry();
        std::lock_guard guard(r.mutex);
        r.free_list.push_back(slot->osq.encoded - 1);  // counters stay: totals are cumulative
    }
};

thread_local SlotOwner t_owner;

}  // namespace

ThreadSlot* claim_slot() noexcept
{
    auto& r = registry();
    std::uint32_t index;
    {
        std::lock_guard guard(r.mutex);
        if (!r.free_list.empty()) {
            index = r.free_list.back();
            r.free_list.pop_back();
        } else if (r.high_water < kMaxThreadSlots) {
            index = r.high_water++;
            // Written once, before any other thread can learn the slot: neighbours
            // in an OSQ read it without synchronisation long after.
            g_slots[index].osq.encoded = index + 1;
        } else {
            std::fputs("reflock: more than kMaxThreadSlots live threads use reflock locks\n", stderr);
            std::abort();
        }
    }
    ThreadSlot& slot = g_slots[index];
    slot.tid = self_tid();
    t_owner.slot = &slot;  // returns the slot to the free list when this thread exits
    return &slot;
}

std::uint32_t query_tid() noexcept
{
    return static_cast<std::uint32_t>(::syscall(SYS_gettid));
}

ThreadSlot& slot_at(std::uint32_t encoded) noexcept
{
    return g_slots[encoded - 1];
}

std::uint32_t slots_in_use_high_water() noexcept
{
    auto& r = registry();
    std::lock_guard guard(r.mutex);
    return r.high_water;
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
