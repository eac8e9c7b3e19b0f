// Each rwsem policy makes the decision its kernel version made, shown by
// driving the interleaving with test hooks and reading the spinner's
// counters (the same numbers the USDT probes report).
#include "reflock/counters.h"
#include "reflock/mutex.h"
#include "reflock/mutex46.h"
#include "reflock/rwsem.h"
#include "test_support.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <thread>

namespace reflock {
namespace {

using test::eventually;
using test::gettid_now;
using test::TuningScope;

TEST(RwSemPolicy, NamesRoundTrip)
{
    for (Policy p : all_policies())
        EXPECT_EQ(parse_policy(to_string(p)), p);
    EXPECT_EQ(policy_names(), "3.15, 3.16-rc2, 3.16, 4.2, 4.7-hacked, 4.8, 5.3-rc-tip, 5.4, 5.19, 6.3");
}

TEST(RwSemPolicy, UnknownNameListsValidOnes)
{
    try {
        parse_policy("4.9");
        FAIL() << "no exception";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("'4.9'"), std::string::npos);
        EXPECT_NE(std::string(e.what()).find("4.7-hacked"), std::string::npos);
    }
}

// The owner releases: unlock clears the owner, and is held at that point
// (`cleared`) until the spinner has decided. 4.7 sees "owner NULL, count != 0"
// and queues; 4.7-hacked and the 4.6 mutex keep spinning and take the lock
// without sleeping.
struct WindowResult {
    Counters spinner;
    int owner_null_seen = 0;  // spin iterations that saw no owner and a held count
};

template <typename Lock>
WindowResult spinner_across_release_window(Lock& sem, HookPoint cleared)
{
    TuningScope tuning(10'000'000'000ULL);  // no budget expiry during the test
    const std::uint32_t main_tid = gettid_now();
    std::atomic<bool> watching_owner{false}, failed{false}, held_once{false};
    std::atomic<int> owner_null_seen{0};
    set_test_hook([&](HookPoint point, const void* lock) {
        if (lock != &sem)
            return;
        switch (point) {
            case HookPoint::SpinOnOwner:
                watching_owner = true;
                break;
            case HookPoint::SpinOwnerNull:
                ++owner_null_seen;
                break;
            case HookPoint::SpinFailed:
                failed = true;
                break;
            default:
                if (point == cleared && gettid_now() == main_tid && !held_once.exchange(true)) {
                    EXPECT_TRUE(eventually([&] { return failed.load() || owner_null_seen.load() >= 1000; }));
                }
                break;
        }
    });
    sem.lock();
    Counters spinner;
    std::thread writer([&] {
        const Counters before = this_thread_counters();
        sem.lock();
        sem.unlock();
        spinner = this_thread_counters() - before;
    });
    EXPECT_TRUE(eventually([&] { return watching_owner.load(); }));
    sem.unlock();
    writer.join();
    return {spinner, owner_null_seen.load()};
}

Counters rwsem_spinner_across_release_window(Policy policy)
{
    RwSem sem(policy);
    return spinner_across_release_window(sem, HookPoint::UpWriteOwnerCleared).spinner;
}

TEST(RwSemPolicy, V4_2StopsSpinningWhenOwnerNullAndCountBusy)
{
    const Counters c = rwsem_spinner_across_release_window(Policy::V4_2);
    EXPECT_EQ(c.spin_attempts, 1u);
    EXPECT_EQ(c.spin_failures, 1u);
    EXPECT_EQ(c.failures(SpinFail::OwnerNullCountBusy), 1u);
    EXPECT_EQ(c.acquisitions, 1u);
}

TEST(RwSemPolicy, V4_7HackedAndV4_8KeepSpinningThroughReleaseWindow)
{
    // 4.8 dropped the count check with the reader mark (19c5d690e416).
    for (Policy policy : {Policy::V4_7_Hacked, Policy::V4_8}) {
        const Counters c = rwsem_spinner_across_release_window(policy);
        EXPECT_EQ(c.spin_attempts, 1u) << to_string(policy);
        EXPECT_EQ(c.spin_failures, 0u) << to_string(policy);
        EXPECT_EQ(c.spin_successes, 1u) << to_string(policy);
        EXPECT_EQ(c.sleeps, 0u) << to_string(policy);
    }
}

// Every owner off CPU: a spinner gives up at once (and is not spun on).
class OffCpuOracle final : public OwnerOracle {
public:
    bool on_cpu(std::uint32_t) const noexcept override { return false; }
};

// The seed's baseline: 4.6's mutex_unlock() also clears the owner before it
// releases the count, but mutex_spin_on_owner() returns true when the owner
// changed, so the spinner rides through the window the 4.7 rwsem stops in.
TEST(Mutex46Policy, KeepsSpinningThroughOwnerClearedBeforeRelease)
{
    Mutex46 mutex;
    const WindowResult r = spinner_across_release_window(mutex, HookPoint::MutexOwnerCleared);
    EXPECT_GE(r.owner_null_seen, 1000);  // it looked at "owner NULL, count held" and spun on
    EXPECT_EQ(r.spinner.spin_attempts, 1u);
    EXPECT_EQ(r.spinner.spin_failures, 0u);
    EXPECT_EQ(r.spinner.spin_successes, 1u);
    EXPECT_EQ(r.spinner.sleeps, 0u);
    EXPECT_EQ(r.spinner.acquisitions, 1u);
    EXPECT_EQ(mutex.count(), 1);
}

// A woken 4.6 waiter does not spin and gets no handoff: after sleeping it
// competes for the count like anyone else, so its episode has one spin phase.
TEST(Mutex46Policy, WaiterQueuesAfterOneSpinPhaseAndNeverSpinsAgain)
{
    TuningScope tuning(10'000'000'000ULL);
    OffCpuOracle oracle;
    set_owner_oracle(&oracle);
    Mutex46 mutex;
    std::atomic<bool> slept{false};
    set_test_hook([&](HookPoint point, const void* lock) {
        if (lock == &mutex && point == HookPoint::BeforeSleep)
            slept = true;
    });
    mutex.lock();
    EXPECT_EQ(mutex.count(), 0);
    Counters waiter;
    std::thread t([&] {
        const Counters before = this_thread_counters();
        mutex.lock();
        mutex.unlock();
        waiter = this_thread_counters() - before;
    });
    ASSERT_TRUE(eventually([&] { return slept.load(); }));
    EXPECT_EQ(mutex.count(), -1);  // locked with waiters: unlock takes the slow path
    mutex.unlock();
    t.join();
    EXPECT_EQ(waiter.spin_attempts, 1u);
    EXPECT_EQ(waiter.spin_failures, 1u);
    EXPECT_EQ(waiter.failures(SpinFail::OwnerOffCpu), 1u);
    EXPECT_EQ(waiter.acquisitions, 1u);
    EXPECT_EQ(mutex.count(), 1);
    EXPECT_EQ(mutex.owner_tid(), 0u);
}

TEST(MutexPolicy, KeepsSpinningWhenOwnerReleases)
{
    // The mutex has no window: releasing is one store to the owner word.
    TuningScope tuning(10'000'000'000ULL);
    Mutex mutex;
    std::atomic<bool> watching{false};
    set_test_hook([&](HookPoint point, const void* lock) {
        if (lock == &mutex && point == HookPoint::SpinOnOwner)
            watching = true;
    });
    mutex.lock();
    Counters spinner;
    std::thread t([&] {
        const Counters before = this_thread_counters();
        mutex.lock();
        mutex.unlock();
        spinner = this_thread_counters() - before;
    });
    ASSERT_TRUE(eventually([&] { return watching.load(); }));
    mutex.unlock();
    t.join();
    EXPECT_EQ(spinner.spin_successes, 1u);
    EXPECT_EQ(spinner.spin_failures, 0u);
    EXPECT_EQ(spinner.sleeps, 0u);
}

// A reader holds the rwsem; a writer arrives. What does each version do?
struct ReaderOwnedCase {
    Policy policy;
    std::uint64_t spin_attempts;
    bool fails;  // spin attempt fails (0 attempts: queued without spinning)
    SpinFail reason;
};

class ReaderOwned : public ::testing::TestWithParam<ReaderOwnedCase> {};

TEST_P(ReaderOwned, WriterDecision)
{
    const ReaderOwnedCase expected = GetParam();
    // A budget long enough for 5.3+'s 10.5 us reader deadline to end the spin
    // first, short enough that 3.16's spin on readers ends in the test.
    TuningScope tuning(20'000'000);
    RwSem sem(expected.policy);
    std::atomic<bool> queued{false};
    std::atomic<bool> nonspinnable_at_fail{false};
    set_test_hook([&](HookPoint point, const void* lock) {
        if (lock != &sem)
            return;
        if (point == HookPoint::SpinFailed)
            nonspinnable_at_fail = sem.owner_nonspinnable();
        if (point == HookPoint::BeforeSleep)
            queued = true;
    });
    sem.lock_shared();
    Counters writer_counters;
    std::thread writer([&] {
        const Counters before = this_thread_counters();
        sem.lock();
        sem.unlock();
        writer_counters = this_thread_counters() - before;
    });
    ASSERT_TRUE(eventually([&] { return queued.load(); }));
    sem.unlock_shared();
    writer.join();
    EXPECT_EQ(writer_counters.spin_attempts, expected.spin_attempts);
    if (expected.fails) {
        EXPECT_EQ(writer_counters.spin_failures, 1u);
        EXPECT_EQ(writer_counters.failures(expected.reason), 1u) << to_string(expected.reason);
    }
    EXPECT_EQ(writer_counters.acquisitions, 1u);
    // 5.3+ (7d43f1ce9dd0) marks the reader-owned lock NONSPINNABLE when its deadline passes.
    EXPECT_EQ(nonspinnable_at_fail.load(), !traits(expected.policy).xadd_model);
}

INSTANTIATE_TEST_SUITE_P(AllPolicies, ReaderOwned,
                         ::testing::Values(ReaderOwnedCase{Policy::V3_15, 0, false, SpinFail::BudgetExhausted},
                                           // 3.16-rc2 spins on the reader-owned lock until "need_resched" (the budget)
                                           ReaderOwnedCase{Policy::V3_16_Rc2, 1, true, SpinFail::BudgetExhausted},
                                           ReaderOwnedCase{Policy::V3_16, 1, true, SpinFail::NoOwner},
                                           ReaderOwnedCase{Policy::V4_2, 1, true, SpinFail::OwnerNullCountBusy},
                                           ReaderOwnedCase{Policy::V4_7_Hacked, 1, true, SpinFail::OwnerNullCountBusy},
                                           // 4.8: the reader marked the owner READER_OWNED
                                           ReaderOwnedCase{Policy::V4_8, 1, true, SpinFail::ReaderOwned},
                                           ReaderOwnedCase{Policy::V5_3_RcTip, 1, true, SpinFail::ReaderOwned},
                                           ReaderOwnedCase{Policy::V5_4, 1, true, SpinFail::ReaderOwned},
                                           ReaderOwnedCase{Policy::V5_19, 1, true, SpinFail::ReaderOwned},
                                           ReaderOwnedCase{Policy::V6_3, 1, true, SpinFail::ReaderOwned}),
                         [](const auto& param_info) {
                             std::string name(to_string(param_info.param.policy));
                             for (char& c : name)
                                 if (c == '.' || c == '-')
                                     c = '_';
                             return "v" + name;
                         });

TEST(OwnerOracle, OffCpuWriterOwnerStopsSpinning)
{
    TuningScope tuning(10'000'000'000ULL);
    OffCpuOracle oracle;
    set_owner_oracle(&oracle);
    for (Policy policy : {Policy::V3_16_Rc2, Policy::V4_2, Policy::V5_19}) {
        RwSem sem(policy);
        std::atomic<bool> queued{false};
        set_test_hook([&](HookPoint point, const void* lock) {
            if (lock == &sem && point == HookPoint::BeforeSleep)
                queued = true;
        });
        sem.lock();
        Counters c;
        std::thread t([&] {
            const Counters before = this_thread_counters();
            sem.lock();
            sem.unlock();
            c = this_thread_counters() - before;
        });
        ASSERT_TRUE(eventually([&] { return queued.load(); }));
        sem.unlock();
        t.join();
        set_test_hook({});
        EXPECT_EQ(c.failures(SpinFail::OwnerOffCpu), 1u) << to_string(policy);
    }
}

TEST(OwnerOracle, TableOracleReadsTidSlots)
{
    std::uint32_t table[8] = {};
    OnCpuTableOracle oracle(table, 8);
    EXPECT_FALSE(oracle.on_cpu(13));
    table[13 % 8] = 13;
    EXPECT_TRUE(oracle.on_cpu(13));
    EXPECT_FALSE(oracle.on_cpu(21));  // same slot, another thread
}

}  // namespace
}  // namespace reflock
