// The decisions that separate rwsem@4.8 (readers mark the owner
// READER_OWNED; no count check; no handoff) from its neighbours 4.7 /
// 4.7-hacked (no mark; "owner NULL and count active" refuses to spin) and
// 5.3-rc-tip (spins on readers until a deadline; a waiter that waited too
// long reserves the lock with HANDOFF). Each interleaving is driven by test
// hooks.
#include "reflock/counters.h"
#include "reflock/rwsem.h"
#include "test_support.h"

#include <gtest/gtest.h>

#include <thread>

namespace reflock {
namespace {

using test::blind_writer;
using test::BlindWaiterOracle;
using test::counted_locker;
using test::eventually;
using test::expect_one_failed_spin;
using test::gettid_now;
using test::TuningScope;

constexpr std::uint64_t kNoBudgetExpiry = 10'000'000'000ULL;

// A writer reaches the slow path while the previous writer is between
// clearing the owner and releasing the count: "owner NULL, count active".
Counters writer_arriving_in_release_window(Policy policy)
{
    TuningScope tuning(kNoBudgetExpiry);
    RwSem sem(policy);
    const std::uint32_t main_tid = gettid_now();
    std::atomic<bool> cleared{false}, failed{false}, held_once{false};
    std::atomic<int> owner_null_seen{0};
    set_test_hook([&](HookPoint point, const void* lock) {
        if (lock != &sem)
            return;
        if (point == HookPoint::SpinOwnerNull)
            ++owner_null_seen;
        if (point == HookPoint::SpinFailed)
            failed = true;
        if (point == HookPoint::UpWriteOwnerCleared && gettid_now() == main_tid && !held_once.exchange(true)) {
            cleared = true;
            EXPECT_TRUE(eventually([&] { return failed.load() || owner_null_seen.load() >= 1; }));
        }
    });
    sem.lock();
    Counters writer;
    std::thread t = counted_locker(sem, writer, [&] { EXPECT_TRUE(eventually([&] { return cleared.load(); })); });
    sem.unlock();
    t.join();
    return writer;
}

TEST(ReaderMark, V4_7RefusesToSpinOnNullOwnerWithActiveCount)
{
    for (Policy policy : {Policy::V4_2, Policy::V4_7_Hacked})
        expect_one_failed_spin(writer_arriving_in_release_window(policy), SpinFail::OwnerNullCountBusy,
                               to_string(policy));
}

TEST(ReaderMark, V4_8SpinsOnNullOwnerWithActiveCount)
{
    // No reader mark, so no reader: rwsem_can_spin_on_owner() says spin.
    const Counters c = writer_arriving_in_release_window(Policy::V4_8);
    EXPECT_EQ(c.spin_attempts, 1u);
    EXPECT_EQ(c.spin_failures, 0u);
    EXPECT_EQ(c.spin_successes, 1u);
    EXPECT_EQ(c.sleeps, 0u);
}

// The reader leaves after the writer missed the fast path and before it
// decides to spin: the lock is free, but readers leave their mark behind.
TEST(ReaderMark, StaleMarkStopsV4_8ButNotItsNeighbours)
{
    struct Case {
        Policy policy;
        bool spins;
    };
    for (const Case& expected : {Case{Policy::V4_2, true}, Case{Policy::V4_8, false}, Case{Policy::V5_3_RcTip, true}}) {
        TuningScope tuning(kNoBudgetExpiry);
        RwSem sem(expected.policy);
        std::atomic<bool> at_spin_begin{false}, reader_gone{false};
        set_test_hook([&](HookPoint point, const void* lock) {
            if (lock != &sem || point != HookPoint::SpinBegin)
                return;
            at_spin_begin = true;
            EXPECT_TRUE(eventually([&] { return reader_gone.load(); }));
        });
        sem.lock_shared();
        Counters writer;
        std::thread t = counted_locker(sem, writer);
        ASSERT_TRUE(eventually([&] { return at_spin_begin.load(); }));
        sem.unlock_shared();
        reader_gone = true;
        t.join();
        set_test_hook({});
        const std::string name(to_string(expected.policy));
        EXPECT_EQ(writer.spin_attempts, 1u) << name;
        EXPECT_EQ(writer.spin_successes, expected.spins ? 1u : 0u) << name;
        EXPECT_EQ(writer.failures(SpinFail::ReaderOwned), expected.spins ? 0u : 1u) << name;
        // Queued on a free lock, 4.8's writer takes it at once: no sleep.
        EXPECT_EQ(writer.sleeps, 0u) << name;
        EXPECT_EQ(writer.acquisitions, 1u) << name;
    }
}

// A spinner watches a writer; after the writer lets go, a reader gets in
// before the spinner's next look. 4.8 stops at the reader mark; 4.7 stopped
// already at "owner NULL, count active" (the spinner looks in between).
TEST(ReaderMark, ReaderTakingOverEndsTheSpin)
{
    struct Case {
        Policy policy;
        SpinFail reason;
    };
    for (const Case& expected :
         {Case{Policy::V4_2, SpinFail::OwnerNullCountBusy}, Case{Policy::V4_8, SpinFail::ReaderOwned}}) {
        TuningScope tuning(kNoBudgetExpiry);
        RwSem sem(expected.policy);
        const std::uint32_t main_tid = gettid_now();
        std::atomic<bool> watching{false}, saw_null{false}, reader_in{false}, queued{false};
        set_test_hook([&](HookPoint point, const void* lock) {
            if (lock != &sem)
                return;
            const bool main = gettid_now() == main_tid;
            switch (point) {
                case HookPoint::SpinOnOwner:
                    watching = true;
                    break;
                case HookPoint::SpinOwnerNull:
                    if (!saw_null.exchange(true)) {
                        EXPECT_TRUE(eventually([&] { return reader_in.load(); }));
                    }
                    break;
                case HookPoint::UpWriteOwnerCleared:
                    if (main) {
                        EXPECT_TRUE(eventually([&] { return saw_null.load(); }));
                    }
                    break;
                case HookPoint::BeforeSleep:
                    queued = true;
                    break;
                default:
                    break;
            }
        });
        sem.lock();
        Counters spinner;
        std::thread t = counted_locker(sem, spinner);
        ASSERT_TRUE(eventually([&] { return watching.load(); }));
        sem.unlock();
        sem.lock_shared();
        reader_in = true;
        ASSERT_TRUE(eventually([&] { return queued.load(); }));
        sem.unlock_shared();
        t.join();
        set_test_hook({});
        expect_one_failed_spin(spinner, expected.reason, to_string(expected.policy));
    }
}

// W waits in the queue past the handoff timeout (0 here); the holder T
// releases and at once wants the lock again, while W, woken, has not run yet.
// 4.8 has no handoff: T steals the lock by spinning. 5.3-rc-tip: W reserved
// it with HANDOFF when it queued, so T's spin cannot take it and T queues
// behind W. (T's spin ends on the budget: the only way it can end there.)
struct StealResult {
    Counters thief, waiter;
    bool thief_queued = false;  // reached the wait queue (its hook before sleeping)
};

StealResult thief_against_waiting_writer(Policy policy)
{
    TuningScope tuning(200'000, /*handoff_timeout_ns=*/0);
    BlindWaiterOracle oracle;
    set_owner_oracle(&oracle);
    RwSem sem(policy);
    const std::uint32_t main_tid = gettid_now();
    std::atomic<bool> w_sleeps{false}, thief_done{false}, thief_queued{false}, held_once{false};
    set_test_hook([&](HookPoint point, const void* lock) {
        if (lock != &sem)
            return;
        const std::uint32_t me = gettid_now();
        if (me == main_tid && point == HookPoint::BeforeSleep)
            thief_queued = true;
        if (me != oracle.blind_tid.load())
            return;
        if (point == HookPoint::BeforeSleep)
            w_sleeps = true;
        if (point == HookPoint::Woken && !held_once.exchange(true)) {
            EXPECT_TRUE(eventually([&] { return thief_done.load() || thief_queued.load(); }));
        }
    });
    StealResult result;
    sem.lock();
    std::thread w = blind_writer(sem, oracle, result.waiter);
    EXPECT_TRUE(eventually([&] { return w_sleeps.load(); }));
    const Counters before = this_thread_counters();
    sem.unlock();  // wakes W, which the hook holds
    sem.lock();
    thief_done = true;
    sem.unlock();
    result.thief = this_thread_counters() - before;
    result.thief_queued = thief_queued.load();
    w.join();
    return result;
}

TEST(ReaderMark, V4_8HasNoHandoffAndAThiefStealsFromAWaitingWriter)
{
    const StealResult r = thief_against_waiting_writer(Policy::V4_8);
    EXPECT_EQ(r.thief.spin_successes, 1u);
    EXPECT_EQ(r.thief.sleeps, 0u);
    EXPECT_FALSE(r.thief_queued);
    EXPECT_EQ(r.waiter.handoffs, 0u);
    EXPECT_EQ(r.waiter.acquisitions, 1u);
}

TEST(ReaderMark, V5_3RcTipWaiterReservesTheLockWithHandoff)
{
    const StealResult r = thief_against_waiting_writer(Policy::V5_3_RcTip);
    EXPECT_EQ(r.thief.spin_successes, 0u);
    EXPECT_EQ(r.thief.spin_failures, 1u);
    // Queued behind W, which took the lock first. Whether the thief then
    // sleeps is a race it may lose: W can take and release the lock before the
    // thief's futex wait, which then returns at once (seen under TSan).
    EXPECT_TRUE(r.thief_queued);
    EXPECT_EQ(r.thief.handoffs, 0u);
    EXPECT_EQ(r.waiter.handoffs, 1u);
    EXPECT_EQ(r.waiter.acquisitions, 1u);
}

}  // namespace
}  // namespace reflock
