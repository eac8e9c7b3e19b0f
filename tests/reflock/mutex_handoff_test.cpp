// A woken first waiter that loses the mutex to a thief asks for a handoff,
// and the next unlock gives the lock to it directly (PICKUP).
#include "reflock/counters.h"
#include "reflock/mutex.h"
#include "test_support.h"

#include <gtest/gtest.h>

#include <thread>

namespace reflock {
namespace {

using test::eventually;
using test::gettid_now;
using test::TuningScope;

TEST(MutexHandoff, WokenWaiterThatLostTheRaceGetsTheLockNext)
{
    TuningScope tuning(200'000);  // short spins: the waiter queues quickly
    Mutex mutex;
    std::atomic<std::uint32_t> waiter_tid{0};
    std::atomic<bool> sleeping{false}, thief_has_it{false}, handoff_requested{false}, held_once{false};
    std::atomic<bool> checked{false}, held_twice{false};
    set_test_hook([&](HookPoint point, const void* lock) {
        if (lock != &mutex || gettid_now() != waiter_tid.load())
            return;
        if (point == HookPoint::BeforeSleep)
            sleeping = true;
        // Hold the waiter right where it asked for the handoff, until main has
        // looked: let go, it could pick the handed-off lock up (and release it)
        // before main looks, however briefly it runs.
        if (point == HookPoint::MutexHandoffSet && !held_twice.exchange(true)) {
            handoff_requested = true;
            EXPECT_TRUE(eventually([&] { return checked.load(); }));
        }
        // Hold the woken waiter until the thief (main) has re-taken the lock.
        if (point == HookPoint::Woken && !held_once.exchange(true)) {
            EXPECT_TRUE(eventually([&] { return thief_has_it.load(); }));
        }
    });

    mutex.lock();
    Counters waiter_counters;
    std::thread waiter([&] {
        waiter_tid = gettid_now();
        const Counters before = this_thread_counters();
        mutex.lock();
        mutex.unlock();
        waiter_counters = this_thread_counters() - before;
    });
    ASSERT_TRUE(eventually([&] { return waiter_tid.load() != 0 && sleeping.load(); }));
    EXPECT_TRUE(mutex.owner_flags() & Mutex::kWaiters);

    const Counters thief_before = this_thread_counters();
    mutex.unlock();  // wakes the waiter, which the hook holds
    mutex.lock();    // the thief steals the free lock
    thief_has_it = true;
    ASSERT_TRUE(eventually([&] { return handoff_requested.load(); }));
    EXPECT_TRUE(mutex.owner_flags() & Mutex::kHandoff);

    mutex.unlock();  // must hand off, not release
    EXPECT_EQ(mutex.owner_tid(), waiter_tid.load());
    EXPECT_TRUE(mutex.owner_flags() & Mutex::kPickup);
    EXPECT_FALSE(mutex.try_lock());
    checked = true;
    waiter.join();
    // One handoff, counted once, by the waiter that asked for it.
    EXPECT_EQ(waiter_counters.handoffs, 1u);
    EXPECT_EQ((this_thread_counters() - thief_before).handoffs, 0u);
    EXPECT_EQ(mutex.owner_tid(), 0u);
    EXPECT_TRUE(mutex.try_lock());
    mutex.unlock();
}

TEST(MutexEvents, UncontendedLockIsNoEpisode)
{
    Mutex mutex;
    const Counters before = this_thread_counters();
    for (int i = 0; i < 100; ++i) {
        mutex.lock();
        mutex.unlock();
    }
    const Counters c = this_thread_counters() - before;
    EXPECT_EQ(c.acquisitions, 100u);
    EXPECT_EQ(c.contended, 0u);
    EXPECT_EQ(c.spin_attempts, 0u);
}

}  // namespace
}  // namespace reflock
