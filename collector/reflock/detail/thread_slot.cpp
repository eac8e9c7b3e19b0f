#include "reflock/detail/thread_slot.h"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <vector>

#include <sys/syscall.h>
#include <unistd.h>

namespace reflock::detail {
namespace {

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

}  // namespace reflock::detail
