// The bench core: parsing, validation, and a short run whose numbers add up.
#include "reflock/harness/harness.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace reflock::harness {
namespace {

TEST(BenchParse, LockNames)
{
    EXPECT_EQ(parse_lock("mutex").kind, LockKind::Mutex);
    const LockSpec rw = parse_lock("rwsem@4.7-hacked");
    EXPECT_EQ(rw.kind, LockKind::RwSem);
    EXPECT_EQ(rw.policy, Policy::V4_7_Hacked);
    EXPECT_EQ(to_string(rw), "rwsem@4.7-hacked");
    EXPECT_EQ(parse_lock("std_shared_mutex").kind, LockKind::StdSharedMutex);
    EXPECT_EQ(parse_lock("mutex@4.6").kind, LockKind::Mutex46);
    EXPECT_EQ(to_string(parse_lock("mutex@4.6")), "mutex@4.6");
}

TEST(BenchParse, UnknownLockListsValidNames)
{
    try {
        parse_lock("spinlock");
        FAIL();
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("pthread_rwlock"), std::string::npos);
    }
    EXPECT_THROW(parse_lock("rwsem@9.9"), std::invalid_argument);
}

TEST(BenchValidate, ImpossibleParameters)
{
    Params p;
    p.threads = 0;
    EXPECT_THROW(validate(p), std::invalid_argument);
    p = Params{};
    p.read_percent = 101;
    EXPECT_THROW(validate(p), std::invalid_argument);
    p = Params{};
    p.read_percent = 50;  // mutex has no shared mode
    EXPECT_THROW(validate(p), std::invalid_argument);
    p = Params{};
    p.interval = std::chrono::milliseconds(5000);
    EXPECT_THROW(validate(p), std::invalid_argument);
}

TEST(BenchRun, IntervalsSumToTotals)
{
    Params p;
    p.lock = parse_lock("rwsem@4.2");
    p.threads = 4;
    p.critical_ns = 200;
    p.outside_ns = 200;
    p.read_percent = 20;
    p.duration = std::chrono::milliseconds(300);
    p.interval = std::chrono::milliseconds(100);
    const RunResult r = run(p);
    ASSERT_EQ(r.intervals.size(), 3u);
    std::uint64_t ops = 0, attempts = 0;
    for (const auto& i : r.intervals) {
        ops += i.ops;
        attempts += i.counters.spin_attempts;
        EXPECT_GE(i.idle_fraction, 0.0);
        EXPECT_LE(i.idle_fraction, 1.0);
    }
    EXPECT_EQ(ops, r.total.ops);
    EXPECT_EQ(attempts, r.total.counters.spin_attempts);
    EXPECT_GT(r.total.ops, 0u);
    std::uint64_t per_thread = 0;
    for (auto n : r.ops_per_thread)
        per_thread += n;
    EXPECT_GE(per_thread, r.total.ops);  // threads finish their last op after the final sample
    EXPECT_GE(r.total.counters.acquisitions, r.total.ops);
}

TEST(BenchRun, PthreadLocksHaveNoReflockCounters)
{
    Params p;
    p.lock = parse_lock("pthread_mutex");
    p.duration = std::chrono::milliseconds(100);
    p.interval = std::chrono::milliseconds(100);
    const RunResult r = run(p);
    EXPECT_GT(r.total.ops, 0u);
    EXPECT_EQ(r.total.counters.spin_attempts, 0u);
}

}  // namespace
}  // namespace reflock::harness
