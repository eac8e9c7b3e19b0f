// A futex word's row is read one entry per CPU and added up
// (add_cpu_row): every count and time of the entry adds, a field added to
// ls_ulock_stats included, while the longest wait is the longest, the
// operations are or-ed and the owner is the last one seen.
#include <gtest/gtest.h>

#include <cstring>

#include "probe/user_word_waits.h"

namespace {

using lockscope::userlock::add_cpu_row;

// The struct as the u64 slots it is made of: 0 waits, 1 wait_ns,
// 2 max_wait_ns, 3 ops and owner_tid (two u32), then only u64 counts and times.
constexpr size_t kSlots = sizeof(ls_ulock_stats) / sizeof(__u64);
constexpr size_t kMaxSlot = 2, kOpsSlot = 3;

ls_ulock_stats with_slots(__u64 base)
{
    __u64 slots[kSlots];
    for (size_t i = 0; i < kSlots; ++i)
        slots[i] = base + i;
    ls_ulock_stats s;
    std::memcpy(&s, slots, sizeof(s));
    s.ops = LS_ULOCK_OP_WAIT;
    s.owner_tid = 0;
    return s;
}

TEST(WordWaits, EveryCountAndTimeOfACpusEntryAddsUp)
{
    static_assert(sizeof(ls_ulock_stats) % sizeof(__u64) == 0);
    ls_ulock_stats total{};
    add_cpu_row(total, with_slots(100));
    ls_ulock_stats second = with_slots(1000);
    second.ops = LS_ULOCK_OP_LOCK_PI;
    second.owner_tid = 4321;
    add_cpu_row(total, second);
    __u64 slots[kSlots];
    std::memcpy(slots, &total, sizeof(total));
    for (size_t i = 0; i < kSlots; ++i) {
        if (i == kOpsSlot)
            continue;
        const __u64 expected = i == kMaxSlot ? 1000 + i : 100 + i + 1000 + i;
        EXPECT_EQ(slots[i], expected) << "slot " << i << " of ls_ulock_stats";
    }
    EXPECT_EQ(total.ops, LS_ULOCK_OP_WAIT | LS_ULOCK_OP_LOCK_PI);
    EXPECT_EQ(total.owner_tid, 4321u);
}

}  // namespace
