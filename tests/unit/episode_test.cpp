// Replays scripted tracepoint sequences through bpf/episode.h, the code the
// BPF programs run, and checks the metrics DESIGN.md defines.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

extern "C" {
#include "episode.h"
}

namespace {

constexpr __u32 MUTEX_SPIN = LCB_F_MUTEX | LCB_F_SPIN;
constexpr __u32 MUTEX = LCB_F_MUTEX;
constexpr __u64 kLock = 0xffff888012345678ull;
constexpr __u64 kWaitLock = kLock + 8;

// A task and its lock statistics, driven like the BPF programs drive them.
struct Task {
    ls_task_state ts{};
    ls_lock_stats stats{};
    int queued = 0;
    int unmatched = 0;
    __u32 abandoned = 0;

    int begin(__u64 lock, __u32 flags, __u64 now, bool timed = true)
    {
        int a = ls_begin_timed(&ts, lock, flags, now, timed);
        if (a == LS_BEGIN_QUEUED) {
            queued++;
            ls_note_owner(&ts, LS_OWNER_OFF_CPU);
        }
        return a;
    }
    void end(__u64 lock, __s32 ret, __u64 now, ls_lock_stats* into = nullptr)
    {
        ls_episode ep;
        __u32 ab = 0;
        if (!ls_end(&ts, lock, ret, now, &ep, &ab)) {
            unmatched++;
            return;
        }
        abandoned += ab;
        ls_account(into ? into : &stats, &ep, now, ret, 0);
    }
};

TEST(Episode, SpinWinIsOneAttemptOneSuccess)
{
    Task t;
    EXPECT_EQ(t.begin(kLock, MUTEX_SPIN, 100), LS_BEGIN_NEW);
    t.end(kLock, 0, 350);
    EXPECT_EQ(t.stats.contentions, 1u);
    EXPECT_EQ(t.stats.spin_attempts, 1u);
    EXPECT_EQ(t.stats.spin_successes, 1u);
    EXPECT_EQ(t.stats.spin_failures, 0u);
    EXPECT_EQ(t.stats.wait_ns, 250u);
    EXPECT_EQ(t.stats.spin_ns, 250u);
    EXPECT_EQ(t.ts.depth, 0u);
}

TEST(Episode, SpinFailThenSleepSplitsSpinQueuedAndOffCpu)
{
    Task t;
    t.begin(kLock, MUTEX_SPIN, 1000);
    EXPECT_EQ(t.begin(kLock, MUTEX, 1400), LS_BEGIN_QUEUED);  // spin failed: queue
    ls_switch_out(&t.ts, 1500, /*blocked=*/1);
    ls_woken(&t.ts);
    ls_switch_in(&t.ts, 9500);
    t.end(kLock, 0, 9700);
    EXPECT_EQ(t.stats.spin_attempts, 1u);
    EXPECT_EQ(t.stats.spin_failures, 1u);
    EXPECT_EQ(t.stats.spin_successes, 0u);
    EXPECT_EQ(t.stats.spin_ns, 400u);
    EXPECT_EQ(t.stats.wait_ns, 8700u);
    EXPECT_EQ(t.stats.sleep_ns, 8000u);
    EXPECT_EQ(t.stats.sleeps, 1u);
    EXPECT_EQ(t.stats.wakeups, 1u);
    EXPECT_EQ(t.stats.owner[LS_OWNER_OFF_CPU], 1u);
    EXPECT_EQ(t.queued, 1);
}

TEST(Episode, WokenFirstWaiterSpinsAgain)
{
    Task t;
    t.begin(kLock, MUTEX_SPIN, 0);
    t.begin(kLock, MUTEX, 100);  // failure 1
    ls_switch_out(&t.ts, 100, 1);
    ls_switch_in(&t.ts, 1100);
    EXPECT_EQ(t.begin(kLock, MUTEX_SPIN, 1100), LS_BEGIN_PHASE);  // re-spin
    t.begin(kLock, MUTEX, 1300);                                  // failure 2
    ls_switch_out(&t.ts, 1300, 1);
    ls_switch_in(&t.ts, 2300);
    t.begin(kLock, MUTEX_SPIN, 2300);  // re-spin, wins
    t.end(kLock, 0, 2400);
    EXPECT_EQ(t.stats.contentions, 1u);
    EXPECT_EQ(t.stats.spin_attempts, 3u);
    EXPECT_EQ(t.stats.spin_failures, 2u);
    EXPECT_EQ(t.stats.spin_successes, 1u);
    EXPECT_EQ(t.stats.spin_ns, 100u + 200u + 100u);
    EXPECT_EQ(t.stats.sleeps, 2u);
    EXPECT_EQ(t.stats.sleep_ns, 2000u);
    EXPECT_EQ(t.stats.wait_ns, 2400u);
    // attempts = failures + successes: the failure rate follows the definition
    EXPECT_EQ(t.stats.spin_attempts, t.stats.spin_failures + t.stats.spin_successes);
}

TEST(Episode, NestedWaitLockInsideMutexEpisode)
{
    Task t;
    ls_lock_stats wait_lock{};
    t.begin(kLock, MUTEX_SPIN, 0);
    t.begin(kLock, MUTEX, 50);
    EXPECT_EQ(t.begin(kWaitLock, LCB_F_SPIN, 60), LS_BEGIN_NEW);
    EXPECT_EQ(t.ts.depth, 2u);
    t.end(kWaitLock, 0, 90, &wait_lock);
    EXPECT_EQ(t.ts.depth, 1u);
    t.end(kLock, 0, 500);
    EXPECT_EQ(wait_lock.contentions, 1u);
    EXPECT_EQ(wait_lock.spin_attempts, 0u);  // a spinlock wait is not an optimistic-spin attempt
    EXPECT_EQ(wait_lock.spin_ns, 30u);       // but all of it is spinning
    EXPECT_EQ(wait_lock.wait_ns, 30u);
    EXPECT_EQ(t.stats.contentions, 1u);
    EXPECT_EQ(t.stats.wait_ns, 500u);
    EXPECT_EQ(t.stats.spin_failures, 1u);
}

TEST(Episode, EndWithoutBeginIsUnmatchedAndCountsNothing)
{
    Task t;
    t.end(kLock, 0, 10);
    EXPECT_EQ(t.unmatched, 1);
    EXPECT_EQ(t.stats.contentions, 0u);
}

TEST(Episode, BeginWithoutEndAtExitIsNeverCounted)
{
    Task t;
    t.begin(kLock, MUTEX_SPIN, 0);
    t.begin(kLock, MUTEX, 10);
    // the recording stops here: the open episode stays in the task state
    EXPECT_EQ(t.ts.depth, 1u);
    EXPECT_EQ(t.stats.contentions, 0u);
}

TEST(Episode, OuterEndDropsInnerEpisodesWhoseEndWasMissed)
{
    Task t;
    t.begin(kLock, MUTEX_SPIN, 0);
    t.begin(kWaitLock, LCB_F_SPIN, 5);  // its end never arrives
    t.end(kLock, 0, 100);
    EXPECT_EQ(t.abandoned, 1u);
    EXPECT_EQ(t.ts.depth, 0u);
    EXPECT_EQ(t.stats.contentions, 1u);
}

TEST(Episode, NestingDeeperThanTheStackIsReportedNotCorrupted)
{
    Task t;
    for (__u32 i = 0; i < LS_MAX_DEPTH; i++)
        EXPECT_EQ(t.begin(kLock + 64 * i, LCB_F_SPIN, i), LS_BEGIN_NEW);
    EXPECT_EQ(t.begin(kLock + 4096, LCB_F_SPIN, 9), LS_BEGIN_TOO_DEEP);
    EXPECT_EQ(t.ts.depth, __u32(LS_MAX_DEPTH));
}

TEST(Episode, RwsemWriterQueuesAtOnceAndPreemptionIsNotASleep)
{
    Task t;
    EXPECT_EQ(t.begin(kLock, LCB_F_WRITE, 0), LS_BEGIN_QUEUED);
    ls_switch_out(&t.ts, 10, /*blocked=*/0);
    ls_switch_in(&t.ts, 110);
    t.end(kLock, 0, 200);
    EXPECT_EQ(t.stats.spin_attempts, 0u);
    EXPECT_EQ(t.stats.preemptions, 1u);
    EXPECT_EQ(t.stats.preempt_ns, 100u);
    EXPECT_EQ(t.stats.sleeps, 0u);
}

// PREEMPT_RT's locks are rtmutex-based: the begin enqueues the waiter, so
// the owner is read at once; a nested rtmutex (an RT reader's rwbase_rt,
// then its rtmutex) is its own queued episode, and the user's locks are not RT.
TEST(Episode, PreemptRtLocksQueueAtTheirBeginAndSeeTheirOwner)
{
    Task t;
    EXPECT_EQ(t.begin(kLock, LCB_F_RT, 0), LS_BEGIN_QUEUED);
    t.end(kLock, 0, 100);
    EXPECT_EQ(t.stats.contentions, 1u);
    EXPECT_EQ(t.stats.owner[LS_OWNER_OFF_CPU], 1u);

    Task rw;
    EXPECT_EQ(rw.begin(kLock, LCB_F_RT | LCB_F_READ, 0), LS_BEGIN_QUEUED);
    EXPECT_EQ(rw.begin(kWaitLock, LCB_F_RT, 5), LS_BEGIN_QUEUED);
    rw.end(kWaitLock, 0, 50);
    rw.end(kLock, 0, 60);
    EXPECT_EQ(rw.queued, 2);
    EXPECT_EQ(rw.stats.contentions, 2u);
    EXPECT_EQ(rw.stats.owner[LS_OWNER_OFF_CPU], 2u);

    Task user;
    EXPECT_EQ(user.begin(kLock, LCB_F_RT | LS_F_USER, 0), LS_BEGIN_NEW);
}

TEST(Episode, InterruptedWaitCountsAnError)
{
    Task t;
    t.begin(kLock, MUTEX_SPIN, 0);
    t.begin(kLock, MUTEX, 10);
    t.end(kLock, -4 /* -EINTR */, 20);
    EXPECT_EQ(t.stats.errors, 1u);
    EXPECT_EQ(t.stats.spin_successes, 0u);
}

// record --sample: an untimed episode runs with its begin and end at 0 (the
// programs read no clock for them) and must keep every count of the timed
// one, and its off-CPU time, which the switches measure for every episode.
TEST(Episode, UntimedEpisodeKeepsEveryCountAndItsOffCpuTime)
{
    Task timed, untimed;
    for (Task* t : {&timed, &untimed}) {
        const bool clock = t == &timed;
        auto at = [&](__u64 ns) { return clock ? ns : 0; };
        t->begin(kLock, MUTEX_SPIN, at(1000), clock);
        t->begin(kLock, MUTEX, at(1400), clock);  // spin failed: queued
        ls_switch_out(&t->ts, 1500, /*blocked=*/1);
        ls_switch_in(&t->ts, 9500);
        t->begin(kLock, MUTEX_SPIN, at(9600), clock);  // woken first waiter spins again
        ls_episode ep;
        __u32 ab = 0;
        ASSERT_TRUE(ls_pop(&t->ts, kLock, 0, &ep, &ab));
        EXPECT_EQ(ep.timed, clock ? 1 : 0);
        ls_stop_clock(&ep, at(9900));
        ls_account(&t->stats, &ep, at(9900), 0, /*sampled=*/1);
    }
    EXPECT_EQ(untimed.stats.contentions, timed.stats.contentions);
    EXPECT_EQ(untimed.stats.spin_attempts, 2u);
    EXPECT_EQ(untimed.stats.spin_attempts, timed.stats.spin_attempts);
    EXPECT_EQ(untimed.stats.spin_failures, timed.stats.spin_failures);
    EXPECT_EQ(untimed.stats.spin_successes, timed.stats.spin_successes);
    EXPECT_EQ(untimed.stats.sleeps, timed.stats.sleeps);
    EXPECT_EQ(untimed.stats.wakeups, timed.stats.wakeups);
    EXPECT_EQ(untimed.stats.owner[LS_OWNER_OFF_CPU], timed.stats.owner[LS_OWNER_OFF_CPU]);
    EXPECT_EQ(untimed.stats.sleep_ns, 8000u);
    EXPECT_EQ(timed.stats.sleep_ns, 8000u);
    EXPECT_EQ(timed.stats.timed, 1u);
    EXPECT_EQ(timed.stats.wait_ns, 900u);  // sampled: the wait's on-CPU part, 8900 - 8000 off CPU
    EXPECT_EQ(timed.stats.spin_ns, 700u);
    EXPECT_EQ(timed.stats.max_wait_ns, 8900u);
    EXPECT_EQ(timed.stats.wait_var_us2, 4u * 4u);  // (900 ns / 256, rounded)^2
    EXPECT_EQ(untimed.stats.timed, 0u);
    for (__u64 v :
         {untimed.stats.wait_ns, untimed.stats.spin_ns, untimed.stats.max_wait_ns, untimed.stats.wait_var_us2})
        EXPECT_EQ(v, 0u);
    for (__u64 b : untimed.stats.hist)
        EXPECT_EQ(b, 0u);
}

// The parts of a wait, added up from what the programs keep, as the report does.
__u64 parts_sum(const ls_lock_stats& s)
{
    const __u64 spinning = s.spin_ns - s.spin_offcpu_ns;
    const __u64 off = s.sleep_ns + s.preempt_ns;
    const __u64 queued_on_cpu = s.wait_ns - spinning - off;
    return spinning + queued_on_cpu + s.sleep_ns + s.preempt_ns;
}

// mutex_optimistic_spin() reschedules on need_resched before the begin that
// marks queueing: the tracepoints' spin phase holds runnable off-CPU time,
// which belongs to "runnable", not "spinning", and is a spin yield.
TEST(Episode, ASpinnerThatGivesUpItsCpuIsRunnableNotSpinning)
{
    Task t;
    t.begin(kLock, MUTEX_SPIN, 1000);
    ls_switch_out(&t.ts, 1300, /*blocked=*/0);  // need_resched: yields, still runnable
    ls_switch_in(&t.ts, 6300);
    t.begin(kLock, MUTEX, 6400);                // then queues
    ls_switch_out(&t.ts, 6500, /*blocked=*/1);  // and sleeps
    ls_switch_in(&t.ts, 9500);
    t.begin(kLock, MUTEX_SPIN, 9600);  // woken first waiter spins again
    t.end(kLock, 0, 9800);
    EXPECT_EQ(t.stats.wait_ns, 8800u);
    EXPECT_EQ(t.stats.spin_ns, 5400u + 200u);  // the tracepoints' spin phases
    EXPECT_EQ(t.stats.spin_offcpu_ns, 5000u);  // of which switched out
    EXPECT_EQ(t.stats.spin_yields, 1u);
    EXPECT_EQ(t.stats.preempt_ns, 5000u);
    EXPECT_EQ(t.stats.sleep_ns, 3000u);
    // spinning 600 (300 + 100 + 200), queued on CPU 200 (100 + 100), asleep 3000, runnable 5000
    EXPECT_EQ(t.stats.spin_ns - t.stats.spin_offcpu_ns, 600u);
    EXPECT_EQ(parts_sum(t.stats), t.stats.wait_ns);
}

// A spinlock's wait is all spin phase; a switch-out inside it (an RT kernel's
// preemption of a queued spinner, say) is off CPU, not spinning.
TEST(Episode, SpinlockWaitSwitchedOutIsNotSpinning)
{
    Task t;
    t.begin(kWaitLock, LCB_F_SPIN, 100);
    ls_switch_out(&t.ts, 200, /*blocked=*/0);
    ls_switch_in(&t.ts, 1200);
    t.end(kWaitLock, 0, 1300);
    EXPECT_EQ(t.stats.spin_ns, 1200u);
    EXPECT_EQ(t.stats.spin_offcpu_ns, 1000u);
    EXPECT_EQ(t.stats.spin_yields, 0u);  // not an optimistic spin giving up
    EXPECT_EQ(parts_sum(t.stats), t.stats.wait_ns);
}

// An untimed episode (record --sample) has no spin time, so no off-CPU time
// is taken from it; its off-CPU parts are still counted.
TEST(Episode, UntimedSpinPhaseKeepsNoOffCpuSpinTime)
{
    Task t;
    t.begin(kLock, MUTEX_SPIN, 0, /*timed=*/false);
    ls_switch_out(&t.ts, 1300, /*blocked=*/0);
    ls_switch_in(&t.ts, 6300);
    t.begin(kLock, MUTEX, 0, false);
    t.end(kLock, 0, 0);
    EXPECT_EQ(t.stats.spin_ns, 0u);
    EXPECT_EQ(t.stats.spin_offcpu_ns, 0u);
    EXPECT_EQ(t.stats.preempt_ns, 5000u);
    EXPECT_EQ(t.stats.spin_yields, 1u);
}

// A sleeping waiter woken while every CPU is busy waits for one: that tail of
// its time off CPU is runnable, not asleep.
TEST(Episode, AWokenWaiterWaitingForACpuIsRunnable)
{
    Task t;
    t.begin(kLock, MUTEX, 1000);
    ls_switch_out(&t.ts, 1100, /*blocked=*/1);
    ASSERT_TRUE(ls_wants_wake_time(&t.ts));
    ls_woken(&t.ts);
    ls_mark_woken(&t.ts, 5100);
    EXPECT_FALSE(ls_wants_wake_time(&t.ts));
    ls_mark_woken(&t.ts, 5500);  // a second wakeup changes nothing
    ls_switch_in(&t.ts, 7100);
    t.end(kLock, 0, 7200);
    EXPECT_EQ(t.stats.sleep_ns, 4000u);
    EXPECT_EQ(t.stats.preempt_ns, 2000u);
    EXPECT_EQ(t.stats.sleeps, 1u);
    EXPECT_EQ(t.stats.preemptions, 0u);  // switched out once, blocked
    EXPECT_EQ(parts_sum(t.stats), t.stats.wait_ns);
    // a later preemption is not taken for a wakeup
    Task p;
    p.begin(kLock, MUTEX, 0);
    ls_switch_out(&p.ts, 100, /*blocked=*/0);
    EXPECT_FALSE(ls_wants_wake_time(&p.ts));
    ls_switch_in(&p.ts, 600);
    p.end(kLock, 0, 700);
    EXPECT_EQ(p.stats.preempt_ns, 500u);
    EXPECT_EQ(p.stats.sleep_ns, 0u);
}

// A waiter woken on another CPU while its own switch-out, blocked, was under
// way (its sched_switch programs not yet run) waited for a CPU from the switch
// on: all of its time off CPU is runnable. A wakeup left over from a
// switch-out not followed is dropped there, and never applies to a spin phase.
TEST(Episode, AWakeupBeforeTheSwitchOutWasSeenMakesTheWholeSleepRunnable)
{
    Task t;
    t.begin(kLock, MUTEX, 1000);
    t.ts.woken_early_ns = 1090;
    ls_switch_out(&t.ts, 1100, /*blocked=*/1);
    ls_take_early_wake(&t.ts);
    EXPECT_EQ(t.ts.woken_early_ns, 0u);
    EXPECT_FALSE(ls_wants_wake_time(&t.ts));
    ls_mark_woken(&t.ts, 5100);  // a later wakeup changes nothing
    ls_switch_in(&t.ts, 7100);
    t.end(kLock, 0, 7200);
    EXPECT_EQ(t.stats.sleep_ns, 0u);
    EXPECT_EQ(t.stats.preempt_ns, 6000u);
    EXPECT_EQ(t.stats.sleeps, 1u);
    EXPECT_EQ(t.stats.wakeups, 1u);
    EXPECT_EQ(parts_sum(t.stats), t.stats.wait_ns);

    // without it, the sleep lasts until the wakeup seen while switched out
    Task late;
    late.begin(kLock, MUTEX, 1000);
    ls_switch_out(&late.ts, 1100, /*blocked=*/1);
    ls_take_early_wake(&late.ts);
    ASSERT_TRUE(ls_wants_wake_time(&late.ts));
    ls_mark_woken(&late.ts, 5100);
    ls_switch_in(&late.ts, 7100);
    late.end(kLock, 0, 7200);
    EXPECT_EQ(late.stats.sleep_ns, 4000u);
    EXPECT_EQ(late.stats.preempt_ns, 2000u);

    // a preemption, and a spin phase, take no wakeup
    Task p;
    p.begin(kLock, MUTEX, 0);
    p.ts.woken_early_ns = 90;
    ls_switch_out(&p.ts, 100, /*blocked=*/0);
    ls_take_early_wake(&p.ts);
    EXPECT_EQ(p.ts.woken_early_ns, 0u);
    EXPECT_EQ(p.ts.woken_ns, 0u);
    Task s;
    s.begin(kLock, MUTEX_SPIN, 0);
    s.ts.woken_early_ns = 90;
    ls_switch_out(&s.ts, 100, /*blocked=*/1);
    ls_take_early_wake(&s.ts);
    EXPECT_EQ(s.ts.woken_ns, 0u);
}

// Two episodes nested (a mutex, and its wait_lock spinlock inside the queued
// phase): a switch-out while both are open is in both waits, and each row's
// parts add up on their own.
TEST(Episode, NestedEpisodesEachSplitTheirOwnWait)
{
    Task t;
    ls_lock_stats mutex{}, wait_lock{};
    t.begin(kLock, MUTEX_SPIN, 1000);
    t.begin(kLock, MUTEX, 1500);
    t.begin(kWaitLock, LCB_F_SPIN, 1600);
    ls_switch_out(&t.ts, 1700, /*blocked=*/0);
    ls_switch_in(&t.ts, 2700);
    t.end(kWaitLock, 0, 2800, &wait_lock);
    t.end(kLock, 0, 3000, &mutex);
    EXPECT_EQ(wait_lock.spin_offcpu_ns, 1000u);
    EXPECT_EQ(mutex.spin_offcpu_ns, 0u);  // the mutex was queued, not spinning
    EXPECT_EQ(mutex.preempt_ns, 1000u);
    EXPECT_EQ(parts_sum(wait_lock), wait_lock.wait_ns);
    EXPECT_EQ(parts_sum(mutex), mutex.wait_ns);
    EXPECT_EQ(mutex.spin_ns - mutex.spin_offcpu_ns, 500u);
}

// A switch-in the programs did not see leaves the task's switch-out behind;
// a later episode must not be charged with the time since then, timed or not.
TEST(Episode, StaleSwitchOutIsNotChargedToALaterEpisode)
{
    for (bool timed : {true, false}) {
        Task t;
        t.begin(kLock, MUTEX, 1000);
        ls_switch_out(&t.ts, 1100, 1);  // switched in unseen
        t.end(kLock, 0, 5000);
        t.begin(kLock, MUTEX, timed ? 6000 : 0, timed);
        ls_switch_in(&t.ts, 7000);  // the next switch the programs see
        ls_episode ep;
        __u32 ab = 0;
        ASSERT_TRUE(ls_pop(&t.ts, kLock, 0, &ep, &ab));
        EXPECT_EQ(ep.sleep_ns, 0u) << timed;
        EXPECT_EQ(ep.sleeps, 0u) << timed;
    }
}

TEST(Episode, HistogramBucketsAreLog2)
{
    EXPECT_EQ(ls_log2_bucket(0), 0u);
    EXPECT_EQ(ls_log2_bucket(1), 0u);
    EXPECT_EQ(ls_log2_bucket(1023), 9u);
    EXPECT_EQ(ls_log2_bucket(1024), 10u);
    EXPECT_EQ(ls_log2_bucket(~0ull), __u32(LS_HIST_BUCKETS - 1));
    // every power of two and its neighbours, against a plain loop
    for (int k = 0; k < 64; k++) {
        for (__u64 v : {(1ull << k) - 1, 1ull << k, (1ull << k) + 1}) {
            __u32 expect = 0;
            for (__u64 x = v; x > 1; x >>= 1)
                expect++;
            expect = std::min<__u32>(expect, LS_HIST_BUCKETS - 1);
            EXPECT_EQ(ls_log2_bucket(v), expect) << v;
        }
    }
    Task t;
    t.begin(kLock, MUTEX_SPIN, 0);
    t.end(kLock, 0, 3000);
    EXPECT_EQ(t.stats.hist[11], 1u);  // 2048 <= 3000 < 4096
}

}  // namespace
