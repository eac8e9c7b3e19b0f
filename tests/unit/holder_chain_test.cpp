// Replays a lock's holds through bpf/holder_track.h, the code the BPF
// programs run: the lock's record adds up what its known holders did, one
// hold after another (its owner at a queueing, then each waiter that
// acquires it), and each waiter's parts are that sum's growth over its wait.
#include <gtest/gtest.h>

extern "C" {
#include "holder_track.h"
}

// Named: its helpers share names with other tests' built in the same batch.
namespace holder_chain {
namespace {

constexpr __u64 kLock = 0xffff888012345678ull;
constexpr __u64 kOtherLock = kLock + 0x1000;

struct Parts {
    __u64 running = 0, runnable = 0, asleep = 0;
    bool operator==(const Parts&) const = default;
};

Parts parts(const __u64 v[LS_HOLDER_PARTS])
{
    return {v[LS_HOLDER_RUNNING], v[LS_HOLDER_RUNNABLE], v[LS_HOLDER_ASLEEP]};
}

// A lock's record and the watched holders' tracks, as the BPF programs
// keep them (holder_look(), holder_close(), holder_open() in holder_split.h).
struct Lock {
    ls_holder_lock rec{};
    ls_holder_track tracks[4]{};
    Parts caused;  // the waiting the closed holds caused, added up

    Lock() { rec.cur.lock = kLock; }
    // @changed: the lock is no longer the current holder's
    void look(__u64 now, int changed, __u64 sum[LS_HOLDER_PARTS])
    {
        __u64 d[LS_HOLDER_PARTS] = {};
        const int ok = rec.cur.task ? ls_follow_end(&rec.cur, &tracks[rec.cur.slot], now, changed, d) : 0;
        ls_lock_look(&rec, ok ? d : nullptr, sum);
    }
    void close(__u64 now, int changed)
    {
        __u64 sum[LS_HOLDER_PARTS];
        if (!rec.cur.task)
            return;
        look(now, changed, sum);
        caused.running += rec.caused[LS_HOLDER_RUNNING];
        caused.runnable += rec.caused[LS_HOLDER_RUNNABLE];
        caused.asleep += rec.caused[LS_HOLDER_ASLEEP];
        ls_lock_close(&rec);
    }
    // holder @h begins a hold at @now, in @state
    void open(__u32 h, __u64 now, __u32 state)
    {
        ls_holder_track& t = tracks[h];
        t.gen = 1;
        ls_holder_start(&t, now, state);
        ls_follow_begin(&rec.cur, &t, 0x1000 + h, h, now);
        ls_lock_open(&rec);
    }
    void join(ls_waiter_follow& w, __u64 now)
    {
        __u64 sum[LS_HOLDER_PARTS];
        look(now, 0, sum);
        ls_waiter_join(&w, &rec, sum);
    }
    Parts leave(ls_waiter_follow& w, __u64 now)
    {
        __u64 sum[LS_HOLDER_PARTS];
        look(now, 0, sum);
        ls_waiter_leave(&w, &rec, sum);
        return parts(w.part);
    }
};

TEST(HolderSplit, TheWaitersBehindAWaiterThatAcquiredFollowItsHold)
{
    Lock l;
    ls_waiter_follow w1{}, w2{}, w3{};
    l.open(0, 0, LS_HOLDER_RUNNING);  // the owner the first waiter read
    l.join(w1, 0);
    l.join(w2, 100);
    l.join(w3, 200);
    ls_holder_switch_out(&l.tracks[0], 300, /*blocked=*/0);  // preempted, holding
    ls_holder_switch_in(&l.tracks[0], 700);
    ls_holder_released(&l.tracks[0], kLock, 800);  // wakes w1
    // w1 waits for its CPU, the lock free: no known holder, unknown
    l.close(1000, 1);
    EXPECT_EQ(l.leave(w1, 1000), (Parts{300 + 100, 400, 0}));
    l.open(1, 1000, LS_HOLDER_RUNNING);                       // w1 acquired: its successor
    ls_holder_switch_out(&l.tracks[1], 1100, /*blocked=*/1);  // asleep in a fault, holding
    ls_holder_woken(&l.tracks[1], 1600, 0);
    ls_holder_switch_in(&l.tracks[1], 1700);
    ls_holder_released(&l.tracks[1], kLock, 1750);  // wakes w2
    l.close(1800, 1);
    EXPECT_EQ(l.leave(w2, 1800), (Parts{200 + 100 + 150, 400 + 100, 500}));
    l.open(2, 1800, LS_HOLDER_RUNNING);
    // w3 gives up (a signal) while w2 holds it
    EXPECT_EQ(l.leave(w3, 1900), (Parts{100 + 100 + 150 + 100, 400 + 100, 500}));
    l.close(1900, 0);
    // each hold's part, times the waiters that followed it
    EXPECT_EQ(l.caused.runnable, 3u * 400 + 2u * 100);
    EXPECT_EQ(l.caused.asleep, 2u * 500);
    EXPECT_EQ(l.caused.running, (400u + 300 + 200) + 2u * 150 + 100);
}

TEST(HolderSplit, AWaitersPartsComeOnlyFromHoldsDuringItsFollowing)
{
    Lock l;
    ls_waiter_follow early{}, late{};
    l.open(0, 0, LS_HOLDER_ASLEEP);
    l.join(early, 0);
    ls_holder_woken(&l.tracks[0], 500, 0);
    ls_holder_switch_in(&l.tracks[0], 600);
    ls_holder_released(&l.tracks[0], kLock, 650);
    l.close(700, 1);
    l.open(1, 700, LS_HOLDER_RUNNING);
    l.join(late, 800);  // after the first hold: none of it is its
    ls_holder_switch_out(&l.tracks[1], 900, /*blocked=*/0);
    EXPECT_EQ(l.leave(late, 1000), (Parts{100, 100, 0}));
    EXPECT_EQ(l.leave(early, 1000), (Parts{50 + 200, 100 + 100, 500}));
}

TEST(HolderSplit, ALockWithNoKnownHolderAddsNothing)
{
    Lock l;
    ls_waiter_follow w{};
    l.join(w, 0);  // the owner word was empty
    EXPECT_EQ(l.leave(w, 1000), (Parts{}));
}

TEST(HolderSplit, AHoldWhoseEndIsUnknownKeepsWhatWasSeenOfIt)
{
    Lock l;
    ls_waiter_follow a{}, b{};
    l.open(0, 0, LS_HOLDER_RUNNING);
    l.join(a, 0);
    ls_holder_switch_out(&l.tracks[0], 100, /*blocked=*/1);
    l.join(b, 300);  // the holder asleep 200 so far
    // its release is not seen; it no longer runs: where it let go is unknown,
    // and the sum never goes back on what a waiter took at its snapshot
    ls_holder_woken(&l.tracks[0], 400, 0);
    l.close(500, 1);
    const Parts pa = l.leave(a, 600), pb = l.leave(b, 600);
    EXPECT_EQ(pa, (Parts{100, 0, 200}));
    EXPECT_EQ(pb, (Parts{}));
}

TEST(HolderSplit, AReleaseOfAnotherLockDoesNotEndAHold)
{
    Lock l;
    ls_waiter_follow w{};
    l.open(0, 0, LS_HOLDER_RUNNING);
    l.join(w, 0);
    ls_holder_released(&l.tracks[0], kOtherLock, 100);
    ls_holder_switch_out(&l.tracks[0], 200, /*blocked=*/0);
    EXPECT_EQ(l.leave(w, 500), (Parts{200, 300, 0}));
}

// The lock's holder found owning it again after it let a lock go (the
// programs' holder_released_since()): its hold ends, as it goes on (the
// lock not another's), and a new one begins.
TEST(HolderSplit, AHolderFoundOwningTheLockAfterItsReleaseHoldsItAnew)
{
    Lock l;
    ls_waiter_follow w{};
    l.open(0, 0, LS_HOLDER_RUNNING);
    l.join(w, 0);
    ls_holder_released(&l.tracks[0], kLock, 100);  // wakes a waiter that spins, and loses
    // it takes the lock again unseen; a waiter going back to sleep finds it
    // in the owner word at 300: 100..300 is in no known hold
    l.close(300, 0);
    l.open(0, 300, LS_HOLDER_RUNNING);
    ls_holder_switch_out(&l.tracks[0], 400, /*blocked=*/0);
    EXPECT_EQ(l.leave(w, 500), (Parts{100 + 100, 100, 0}));
}

TEST(HolderSplit, AHoldEndedAsItGoesOnLosesNoTime)
{
    Lock l;
    ls_waiter_follow w{};
    l.open(0, 0, LS_HOLDER_RUNNING);
    l.join(w, 0);
    ls_holder_released(&l.tracks[0], kOtherLock, 100);  // another lock: it still holds this one
    l.close(300, 0);
    ls_follow_begin(&l.rec.cur, &l.tracks[0], 0x1000, 0, 300);  // the same slot, followed on
    ls_lock_open(&l.rec);
    ls_holder_switch_out(&l.tracks[0], 400, /*blocked=*/1);
    EXPECT_EQ(l.leave(w, 500), (Parts{400, 0, 100}));
}

TEST(HolderSplit, AWaiterThatSpinsAgainAfterItsWakeupIsNotCountedTwice)
{
    ls_episode ep{};
    ep.lock = kLock;
    ep.flags = LCB_F_MUTEX;
    ep.timed = 1;
    ep.holder_follow = 1;
    ep.spin_ns = 300;
    ep.spin_attempts = 2;  // a woken first waiter spun again, following
    const __u64 part[LS_HOLDER_PARTS] = {200, 100, 0};
    __u64 out[LS_HOLDER_PARTS];
    ls_holder_episode_parts(&ep, part, 1000, out);
    EXPECT_EQ(out[LS_HOLDER_RUNNING], 300u);  // the larger, not the sum
    EXPECT_EQ(out[LS_HOLDER_RUNNABLE], 100u);
    ep.spin_attempts = 1;  // its only spin came before it queued
    ls_holder_episode_parts(&ep, part, 1000, out);
    EXPECT_EQ(out[LS_HOLDER_RUNNING], 500u);
}

}  // namespace
}  // namespace holder_chain
