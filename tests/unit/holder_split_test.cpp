// Replays scheduler and contention events through bpf/holder_track.h, the
// code the BPF programs run, and checks the holder split DESIGN.md defines:
// a waiter's wait by what its lock's holder was doing, parts that add up.
#include <gtest/gtest.h>

#include <cstring>

extern "C" {
#include "holder_track.h"
}

// Named: its helpers share names with other tests' built in the same batch.
namespace holder_split {
namespace {

constexpr __u64 kLock = 0xffff888012345678ull;
constexpr __u64 kOtherLock = kLock + 0x1000;
constexpr __u64 kTask = 0xffff888000abc000ull;

struct Parts {
    __u64 running = 0, runnable = 0, asleep = 0;
};

// A holder followed from `start` in `state`, and a waiter following it.
struct Scene {
    ls_holder_track holder{};
    ls_holder_follow waiter{};

    Scene(__u64 start, __u32 state)
    {
        holder.gen = 1;
        ls_holder_start(&holder, start, state);
        waiter.lock = kLock;
        ls_follow_begin(&waiter, &holder, kTask, 7, start);
    }
    // The waiter's parts if it stopped following at `now` (`changed`: it
    // saw another owner); `known` false when the holder's releases cannot tell.
    Parts end(__u64 now, bool* known = nullptr, bool changed = false)
    {
        __u64 d[LS_HOLDER_PARTS] = {};
        const int ok = ls_follow_end(&waiter, &holder, now, changed, d);
        if (known)
            *known = ok != 0;
        return {d[LS_HOLDER_RUNNING], d[LS_HOLDER_RUNNABLE], d[LS_HOLDER_ASLEEP]};
    }
};

TEST(HolderSplit, AHolderThatSleepsThenWakesThenRuns)
{
    Scene s(0, LS_HOLDER_RUNNING);
    ls_holder_switch_out(&s.holder, 100, /*blocked=*/1);
    ls_holder_woken(&s.holder, 600, 0);
    ls_holder_switch_in(&s.holder, 700);
    const Parts p = s.end(1000);
    EXPECT_EQ(p.running, 100u + 300u);
    EXPECT_EQ(p.asleep, 500u);
    EXPECT_EQ(p.runnable, 100u);  // woken, waiting for its CPU
}

TEST(HolderSplit, APreemptedHolderIsRunnableUntilItRunsAgain)
{
    Scene s(1000, LS_HOLDER_RUNNING);
    ls_holder_switch_out(&s.holder, 1200, /*blocked=*/0);
    ls_holder_switch_in(&s.holder, 5200);
    const Parts p = s.end(6000);
    EXPECT_EQ(p.running, 200u + 800u);
    EXPECT_EQ(p.runnable, 4000u);
    EXPECT_EQ(p.asleep, 0u);
}

TEST(HolderSplit, AFollowerSeesOnlyWhatCameAfterItsSnapshot)
{
    ls_holder_track h{};
    ls_holder_start(&h, 0, LS_HOLDER_RUNNING);
    ls_holder_switch_out(&h, 1000, 1);  // asleep 1000..3000, before the waiter came
    ls_holder_woken(&h, 3000, 0);
    ls_holder_switch_in(&h, 3500);
    ls_holder_follow f{};
    f.lock = kLock;
    ls_follow_begin(&f, &h, kTask, 0, 4000);
    ls_holder_switch_out(&h, 4500, 0);
    ls_holder_switch_in(&h, 4700);
    __u64 d[LS_HOLDER_PARTS];
    ASSERT_TRUE(ls_follow_end(&f, &h, 5000, 0, d));
    EXPECT_EQ(d[LS_HOLDER_RUNNING], 500u + 300u);
    EXPECT_EQ(d[LS_HOLDER_RUNNABLE], 200u);
    EXPECT_EQ(d[LS_HOLDER_ASLEEP], 0u);
}

TEST(HolderSplit, TheFollowingEndsAtTheReleaseOfItsLock)
{
    Scene s(0, LS_HOLDER_ASLEEP);
    ls_holder_woken(&s.holder, 400, 0);
    ls_holder_switch_in(&s.holder, 500);
    ls_holder_released(&s.holder, kLock, 600);
    // after the release the holder goes on, no longer this lock's holder
    ls_holder_switch_out(&s.holder, 700, 1);
    const Parts p = s.end(2000);
    EXPECT_EQ(p.asleep, 400u);
    EXPECT_EQ(p.runnable, 100u);
    EXPECT_EQ(p.running, 100u);
}

TEST(HolderSplit, AnOwnerChangedWithoutAReleaseSeenIsUnknown)
{
    Scene s(0, LS_HOLDER_RUNNING);
    ls_holder_released(&s.holder, kOtherLock, 100);
    bool known = true;
    s.end(1000, &known, /*changed=*/true);
    EXPECT_FALSE(known);  // it let the lock go unseen (no waiter to wake): when is not known
    ls_holder_released(&s.holder, kLock, 700);
    const Parts p = s.end(1000, &known, true);
    EXPECT_TRUE(known);
    EXPECT_EQ(p.running, 700u);
}

// A holder lets the lock go with no waiter queued (a spinner gave up its
// CPU): its next switch-out finds the owner word changed.
TEST(HolderSplit, AReleaseNoOneWasWokenForEndsAtTheRunningPeriodItWasIn)
{
    Scene s(0, LS_HOLDER_RUNNING);
    s.holder.lock = kLock;
    s.holder.holds = 1;
    ls_holder_switch_out(&s.holder, 100, 0);  // preempted, holding: 100 running, then runnable
    ls_holder_switch_in(&s.holder, 600);
    ls_holder_let_go(&s.holder);  // at its next switch-out, no longer the owner
    ls_holder_switch_out(&s.holder, 900, 0);
    bool known = false;
    const Parts p = s.end(1000, &known, /*changed=*/true);
    EXPECT_TRUE(known);
    EXPECT_EQ(p.running, 100u);  // 600..900 might be after the release: not counted
    EXPECT_EQ(p.runnable, 500u);
}

TEST(HolderSplit, AReleaseNotYetCheckedEndsWhereTheHolderLastRan)
{
    Scene s(0, LS_HOLDER_RUNNING);
    s.holder.lock = kLock;
    s.holder.holds = 1;
    ls_holder_switch_out(&s.holder, 100, 1);
    ls_holder_woken(&s.holder, 300, 0);
    ls_holder_switch_in(&s.holder, 400);
    // the follower sees another owner while the holder still runs
    bool known = false;
    const Parts p = s.end(700, &known, /*changed=*/true);
    EXPECT_TRUE(known);
    EXPECT_EQ(p.running, 100u);
    EXPECT_EQ(p.asleep, 200u);
    EXPECT_EQ(p.runnable, 100u);
    // not so for a lock its switch-outs do not check
    s.holder.lock = kOtherLock;
    s.end(700, &known, true);
    EXPECT_FALSE(known);
}

TEST(HolderSplit, AReleaseOfAnotherLockDoesNotEndIt)
{
    Scene s(0, LS_HOLDER_RUNNING);
    ls_holder_released(&s.holder, kOtherLock, 100);
    ls_holder_switch_out(&s.holder, 300, 0);
    const Parts p = s.end(1000);
    EXPECT_EQ(p.running, 300u);
    EXPECT_EQ(p.runnable, 700u);
}

TEST(HolderSplit, TheFirstReleaseOfItsLockCountsNotTheLast)
{
    Scene s(0, LS_HOLDER_RUNNING);
    ls_holder_released(&s.holder, kLock, 100);
    ls_holder_released(&s.holder, kLock, 900);  // taken again and let go again
    const Parts p = s.end(1000);
    EXPECT_EQ(p.running, 100u);
}

TEST(HolderSplit, TooManyReleasesOfOtherLocksLeaveItUnknown)
{
    Scene s(0, LS_HOLDER_RUNNING);
    for (__u64 i = 0; i <= LS_HOLDER_RELEASES; i++)
        ls_holder_released(&s.holder, kOtherLock + i, 10 * (i + 1));
    bool known = true;
    s.end(1000, &known);
    EXPECT_FALSE(known);  // the first of them may have been its own lock's
}

// Its own lock's first release fell out of the holder's few kept ones: a
// later release of the same lock (taken again, let go again) is no stand-in.
TEST(HolderSplit, AFirstReleaseNoLongerKeptLeavesItUnknown)
{
    Scene s(0, LS_HOLDER_RUNNING);
    ls_holder_released(&s.holder, kLock, 100);
    for (__u64 i = 0; i < LS_HOLDER_RELEASES - 1; i++)
        ls_holder_released(&s.holder, kOtherLock + i, 200 + 10 * i);
    ls_holder_released(&s.holder, kLock, 900);
    bool known = true;
    const Parts p = s.end(1000, &known);
    EXPECT_FALSE(known) << "running " << p.running;
}

TEST(HolderSplit, AMissedSwitchIsNeitherRunningNorOffCpu)
{
    Scene s(0, LS_HOLDER_RUNNING);
    ls_holder_switch_in(&s.holder, 400);  // its switch-out was not seen
    ls_holder_switch_out(&s.holder, 500, 0);
    ls_holder_switch_out(&s.holder, 900, 0);  // nor this switch-in
    const Parts p = s.end(1000);
    EXPECT_EQ(p.running, 100u);   // 400..500: seen both ends
    EXPECT_EQ(p.runnable, 100u);  // 900..1000
    EXPECT_EQ(p.asleep, 0u);
    // 0..400 and 500..900 are unseen: the waiter's unknown
    EXPECT_EQ(s.holder.cum[LS_HOLDER_UNSEEN], 800u);
}

TEST(HolderSplit, WokenBeforeItsSwitchOutWasSeenItWaitsForACpu)
{
    Scene s(0, LS_HOLDER_RUNNING);
    ls_holder_woken(&s.holder, 100, /*going_to_sleep=*/1);
    ls_holder_switch_out(&s.holder, 150, /*blocked=*/1);
    ls_holder_switch_in(&s.holder, 400);
    const Parts p = s.end(500);
    EXPECT_EQ(p.asleep, 0u);
    EXPECT_EQ(p.runnable, 250u);
    EXPECT_EQ(p.running, 150u + 100u);
}

TEST(HolderSplit, TheTimesAddUpToTheFollowedTime)
{
    Scene s(0, LS_HOLDER_RUNNING);
    const __u64 events[][2] = {{10, 1}, {50, 2}, {70, 3}, {200, 0}, {260, 3}, {300, 1}, {330, 3}};
    for (const auto& [t, what] : events) {
        if (what == 0)
            ls_holder_switch_out(&s.holder, t, 0);
        else if (what == 1)
            ls_holder_switch_out(&s.holder, t, 1);
        else if (what == 2)
            ls_holder_woken(&s.holder, t, 0);
        else
            ls_holder_switch_in(&s.holder, t);
    }
    const Parts p = s.end(400);
    EXPECT_EQ(p.running + p.runnable + p.asleep, 400u);
}

ls_episode episode(__u32 flags, __u64 begin, __u64 spin, __u64 spin_offcpu, int followed)
{
    ls_episode ep{};
    ep.lock = kLock;
    ep.flags = flags;
    ep.begin_ns = begin;
    ep.spin_ns = spin;
    ep.spin_offcpu_ns = spin_offcpu;
    ep.timed = 1;
    ep.holder_follow = __u16(followed);
    return ep;
}

TEST(HolderSplit, AMutexSpinOnCpuIsHolderRunning)
{
    const ls_episode mutex = episode(LCB_F_MUTEX, 0, 300, 100, 0);
    EXPECT_EQ(ls_spin_holder_running(&mutex), 200u);
    // a spinlock records no owner: its spinning says nothing of one
    const ls_episode spinlock = episode(LCB_F_SPIN, 0, 300, 0, 0);
    EXPECT_EQ(ls_spin_holder_running(&spinlock), 0u);
    // reflock's replicas spin by their own policies
    const ls_episode user = episode(LCB_F_MUTEX | LS_F_USER, 0, 300, 0, 0);
    EXPECT_EQ(ls_spin_holder_running(&user), 0u);

    ls_lock_stats s{};
    ls_account(&s, &mutex, 1000, 0, 0);
    EXPECT_EQ(s.holder_running_ns, 200u);
    const ls_episode followed = episode(LCB_F_MUTEX, 0, 300, 100, 1);
    ls_account(&s, &followed, 1000, 0, 0);
    EXPECT_EQ(s.holder_running_ns, 200u);  // its end added all its parts
}

TEST(HolderSplit, AFollowedEpisodesPartsNeverExceedItsWait)
{
    const ls_episode ep = episode(LCB_F_MUTEX, 1000, 300, 0, 1);
    const __u64 part[LS_HOLDER_PARTS] = {100, 400, 200};
    __u64 out[LS_HOLDER_PARTS];
    ls_holder_episode_parts(&ep, part, 2000, out);
    EXPECT_EQ(out[LS_HOLDER_RUNNABLE], 400u);
    EXPECT_EQ(out[LS_HOLDER_ASLEEP], 200u);
    EXPECT_EQ(out[LS_HOLDER_RUNNING], 100u + 300u);  // its spin phase came before the following
    ls_holder_episode_parts(&ep, part, 1800, out);   // a wait of 800: the spin overlaps
    EXPECT_EQ(out[LS_HOLDER_RUNNING] + out[LS_HOLDER_RUNNABLE] + out[LS_HOLDER_ASLEEP], 800u);
    EXPECT_EQ(out[LS_HOLDER_RUNNABLE], 400u);
    EXPECT_EQ(out[LS_HOLDER_ASLEEP], 200u);
}

}  // namespace
}  // namespace holder_split
