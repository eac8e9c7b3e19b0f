// The split of one user-lock wait (bpf/userlock_wait.h), the code the BPF
// program runs, replayed with chosen timestamps: the parts add up to the
// wait, a sleep is asleep until its wakeup and runnable from there, and a
// wakeup that beats its sleeper's switch-out makes that switch-out runnable.

#include <gtest/gtest.h>

#include "userlock_wait.h"

namespace {

ls_ulock_timing started(uint64_t at)
{
    ls_ulock_timing t{};
    t.start_ns = at;
    return t;
}

TEST(UserLockWaitParts, AWaitThatNeverLeftItsCpuIsAllOnCpu)
{
    ls_ulock_timing t = started(100);
    const ls_ulock_parts p = ls_ulock_end(&t, 350);
    EXPECT_EQ(p.wait_ns, 250u);
    EXPECT_EQ(p.oncpu_ns, 250u);
    EXPECT_EQ(p.asleep_ns, 0u);
    EXPECT_EQ(p.runnable_ns, 0u);
}

TEST(UserLockWaitParts, ASleepIsAsleepUntilItsWakeupThenRunnableUntilItRuns)
{
    ls_ulock_timing t = started(0);
    ls_ulock_switch_out(&t, 10, 1);
    EXPECT_EQ(ls_ulock_woken(&t, 110, 0), 1);
    ls_ulock_switch_in(&t, 140);
    const ls_ulock_parts p = ls_ulock_end(&t, 150);
    EXPECT_EQ(p.asleep_ns, 100u);
    EXPECT_EQ(p.runnable_ns, 30u);
    EXPECT_EQ(p.oncpu_ns, 20u);
    EXPECT_EQ(p.oncpu_ns + p.asleep_ns + p.runnable_ns, p.wait_ns);
}

TEST(UserLockWaitParts, APreemptionIsRunnableAndNoWakeup)
{
    ls_ulock_timing t = started(0);
    ls_ulock_switch_out(&t, 5, 0);
    EXPECT_EQ(ls_ulock_woken(&t, 7, 0), 0) << "a runnable task's wakeup ends no sleep";
    ls_ulock_switch_in(&t, 25);
    const ls_ulock_parts p = ls_ulock_end(&t, 30);
    EXPECT_EQ(p.asleep_ns, 0u);
    EXPECT_EQ(p.runnable_ns, 20u);
    EXPECT_EQ(p.oncpu_ns, 10u);
}

TEST(UserLockWaitParts, AWakeupBeforeTheSleepersSwitchOutMakesThatSwitchOutRunnable)
{
    ls_ulock_timing t = started(0);
    EXPECT_EQ(ls_ulock_woken(&t, 8, 1), 1) << "woken while its switch-out is under way";
    ls_ulock_switch_out(&t, 10, 1);
    ls_ulock_switch_in(&t, 40);
    const ls_ulock_parts p = ls_ulock_end(&t, 45);
    EXPECT_EQ(p.asleep_ns, 0u);
    EXPECT_EQ(p.runnable_ns, 30u);
    EXPECT_EQ(p.oncpu_ns, 15u);
}

TEST(UserLockWaitParts, AWakeupOfATaskStillRunningIsNoWakeup)
{
    ls_ulock_timing t = started(0);
    EXPECT_EQ(ls_ulock_woken(&t, 8, 0), 0);
    ls_ulock_switch_out(&t, 10, 1);
    ls_ulock_switch_in(&t, 40);
    const ls_ulock_parts p = ls_ulock_end(&t, 45);
    EXPECT_EQ(p.asleep_ns, 30u) << "its sleep was not ended by that wakeup";
}

TEST(UserLockWaitParts, SeveralSleepsInOneWaitAddUp)
{
    ls_ulock_timing t = started(0);
    for (uint64_t at = 10; at < 100; at += 30) {
        ls_ulock_switch_out(&t, at, 1);
        ls_ulock_woken(&t, at + 10, 0);
        ls_ulock_switch_in(&t, at + 15);
    }
    const ls_ulock_parts p = ls_ulock_end(&t, 100);
    EXPECT_EQ(p.asleep_ns, 30u);
    EXPECT_EQ(p.runnable_ns, 15u);
    EXPECT_EQ(p.oncpu_ns, 55u);
}

TEST(UserLockWaitParts, ASwitchInNotSeenEndsAtTheExit)
{
    ls_ulock_timing t = started(0);
    ls_ulock_switch_out(&t, 10, 1);
    const ls_ulock_parts p = ls_ulock_end(&t, 50);
    EXPECT_EQ(p.asleep_ns, 40u);
    EXPECT_EQ(p.oncpu_ns + p.asleep_ns + p.runnable_ns, p.wait_ns);
}

}  // namespace
