// The roll-up turns cumulative map snapshots into exact interval deltas.
#include <gtest/gtest.h>

#include "pipeline/rollup.h"
#include "lockscope_abi.h"

namespace lockscope {
namespace {

RawLock lock_with(uint64_t addr, uint64_t contentions, uint64_t wait_ns)
{
    RawLock l;
    l.address = addr;
    l.flags = LCB_F_MUTEX;
    l.counters.contentions = contentions;
    l.counters.spin_attempts = contentions;
    l.counters.wait_ns = wait_ns;
    return l;
}

TEST(Rollup, IntervalsAreDeltasAndSumToTheRun)
{
    Rollup r(KernelSymbols::parse(""));
    RawSnapshot s0;
    s0.taken_ns = 1'000'000'000;
    s0.cpus = 2;
    s0.locks = {lock_with(0x1000, 5, 500)};  // counted before the run: not charged to it
    r.baseline(s0);

    RawSnapshot s1 = s0;
    s1.taken_ns += 1'000'000'000;
    s1.idle_ns = 500'000'000;
    s1.locks = {lock_with(0x1000, 15, 1500), lock_with(0x2000, 3, 30)};
    s1.counters.begins = 40;
    s1.counters.ends = 20;
    IntervalBatch b1 = r.next(s1, 1, 0);
    EXPECT_EQ(b1.new_locks.size(), 2u);
    EXPECT_EQ(b1.totals.counters.contentions, 13u);
    EXPECT_EQ(b1.totals.counters.wait_ns, 1030u);
    EXPECT_DOUBLE_EQ(b1.totals.idle_fraction(), 0.25);
    EXPECT_EQ(b1.totals.events, 60u);

    RawSnapshot s2 = s1;
    s2.taken_ns += 1'000'000'000;
    s2.locks = {lock_with(0x1000, 16, 1600), lock_with(0x2000, 3, 30)};
    IntervalBatch b2 = r.next(s2, 1, 1);
    EXPECT_TRUE(b2.new_locks.empty());
    ASSERT_EQ(b2.locks.size(), 1u);  // unchanged locks are not stored
    EXPECT_EQ(b2.locks[0].counters.contentions, 1u);
}

TEST(Rollup, ANewProbeForTheNextRunStartsFromZero)
{
    Rollup r(KernelSymbols::parse(""));
    RawSnapshot s0;
    s0.cpus = 1;
    r.baseline(s0);
    RawSnapshot s1 = s0;
    s1.taken_ns = 10;
    s1.locks = {lock_with(0x1000, 100, 100)};
    IntervalBatch b1 = r.next(s1, 1, 0);
    const int64_t id = b1.new_locks.at(0).id;

    // second run: fresh maps, the same lock counts 7 again from zero
    r.reset_stacks();
    RawSnapshot t0;
    t0.cpus = 1;
    t0.taken_ns = 20;
    r.baseline(t0);
    RawSnapshot t1 = t0;
    t1.taken_ns = 30;
    t1.locks = {lock_with(0x1000, 7, 7)};
    IntervalBatch b2 = r.next(t1, 2, 0);
    EXPECT_TRUE(b2.new_locks.empty());
    ASSERT_EQ(b2.locks.size(), 1u);
    EXPECT_EQ(b2.locks[0].lock_id, id);
    EXPECT_EQ(b2.locks[0].counters.contentions, 7u);
}

}  // namespace
}  // namespace lockscope
