// The handoff decisions that separate policy "5.3-rc-tip" from "5.4", and the
// NONSPINNABLE marking (5.3+) seen by a second writer, driven with test hooks.
//
// Kernel reference (kernel/locking/rwsem.c):
//   - Before 91d2a812dfb9 ("locking/rwsem: Make handoff writer optimistically
//     spin on owner"), rwsem_spin_on_owner() begins every iteration of its
//     loop with `if (count & RWSEM_FLAG_HANDOFF) return OWNER_NONSPINNABLE`,
//     and the handoff writer sleeps after setting the bit.
//   - 91d2a812dfb9 removes that check (spinners ignore HANDOFF) and adds, after
//     rwsem_try_write_lock() sets the bit, `if (wstate == WRITER_HANDOFF &&
//     rwsem_spin_on_owner(sem, 0) == OWNER_NULL) goto trylock_again;`.
//   - 5.3+ rwsem_can_spin_on_owner(): RWSEM_NONSPINNABLE in owner -> no spin.
//
// Which thread asks "is the owner running?" is chosen by the oracle below: a
// waiter is made to queue at once by answering "off CPU" to it alone.
#include "reflock/counters.h"
#include "reflock/rwsem.h"
#include "test_support.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace reflock {
namespace {

using test::blind_writer;
using test::BlindWaiterOracle;
using test::eventually;
using test::gettid_now;
using test::TuningScope;

constexpr std::int64_t kHandoffBit = 1 << 2;  // RWSEM_FLAG_HANDOFF

// --- 1. A spinner meets a pending handoff -----------------------------------
//
// M holds the lock; spinner S starts spin_on_owner(M) and is held at its
// entry. M releases; Y takes the lock (fast path). Waiter W (blind: queues at
// once) becomes first waiter and sets HANDOFF (timeout 0), then sleeps. S is
// let go: its owner word changed to Y, a writer, with HANDOFF set.
//   5.3-rc-tip (kernel before 91d2a812dfb9): S stops spinning and queues:
//       its rwsem_spin_on_owner() returns NONSPINNABLE at the loop's HANDOFF
//       check while a writer owns the lock.
//   5.4 (91d2a812dfb9): S ignores HANDOFF, spins on Y, then on W (who gets
//       the lock by handoff), and takes it after W without sleeping.
struct SpinnerResult {
    Counters spinner, waiter;
    int spinner_watch_count = 0;  // spin_on_owner entries on a writer owner
    int spinner_sleeps = 0;       // BeforeSleep hooks in S
};

SpinnerResult spinner_meets_handoff(Policy policy)
{
    TuningScope tuning(10'000'000'000ULL, /*handoff_timeout_ns=*/0);
    BlindWaiterOracle oracle;
    set_owner_oracle(&oracle);
    RwSem sem(policy);
    std::atomic<std::uint32_t> s_tid{0};
    std::atomic<int> s_watch{0}, s_sleeps{0}, w_sleeps{0};
    std::atomic<bool> s_failed{false}, release_s{false}, y_holds{false}, release_y{false};
    set_test_hook([&](HookPoint point, const void* lock) {
        if (lock != &sem)
            return;
        const std::uint32_t me = gettid_now();
        if (me == s_tid.load()) {
            switch (point) {
                case HookPoint::SpinOnOwner:
                    if (++s_watch == 1) {
                        EXPECT_TRUE(eventually([&] { return release_s.load(); }));
                    }
                    break;
                case HookPoint::SpinFailed:
                    s_failed = true;
                    break;
                case HookPoint::BeforeSleep:
                    ++s_sleeps;
                    break;
                default:
                    break;
            }
        } else if (me == oracle.blind_tid.load() && point == HookPoint::BeforeSleep) {
            ++w_sleeps;
        }
    });

    SpinnerResult result;
    sem.lock();  // M
    std::thread s([&] {
        s_tid = gettid_now();
        const Counters before = this_thread_counters();
        sem.lock();
        sem.unlock();
        result.spinner = this_thread_counters() - before;
    });
    EXPECT_TRUE(eventually([&] { return s_watch.load() >= 1; }));
    sem.unlock();  // M leaves; S is still held inside spin_on_owner(M)
    std::thread y([&] {
        sem.lock();
        y_holds = true;
        EXPECT_TRUE(eventually([&] { return release_y.load(); }));
        sem.unlock();
    });
    EXPECT_TRUE(eventually([&] { return y_holds.load(); }));
    std::atomic<bool> w_started{false};
    std::thread w([&] {
        oracle.blind_tid = gettid_now();
        w_started = true;
        const Counters before = this_thread_counters();
        sem.lock();
        sem.unlock();
        result.waiter = this_thread_counters() - before;
    });
    // W queued first, set HANDOFF and went to sleep (in 5.4 too: Y is "off CPU"
    // to W, so its handoff spin ends at once).
    EXPECT_TRUE(eventually([&] { return w_sleeps.load() >= 1; }));
    EXPECT_TRUE(sem.count() & kHandoffBit);
    EXPECT_NE(sem.owner_tid(), 0u);  // Y
    release_s = true;
    // S decides: queue (and sleep), or spin on Y.
    EXPECT_TRUE(eventually([&] { return (s_failed.load() && s_sleeps.load() >= 1) || s_watch.load() >= 2; }));
    EXPECT_TRUE(sem.count() & kHandoffBit) << "HANDOFF must still be pending when S decided";
    release_y = true;
    y.join();
    w.join();
    s.join();
    result.spinner_watch_count = s_watch.load();
    result.spinner_sleeps = s_sleeps.load();
    return result;
}

TEST(RwSemHandoff, V5_3RcTipSpinnerQueuesOnPendingHandoff)
{
    const SpinnerResult r = spinner_meets_handoff(Policy::V5_3_RcTip);
    EXPECT_EQ(r.spinner.spin_attempts, 1u);
    EXPECT_EQ(r.spinner.spin_successes, 0u);
    EXPECT_EQ(r.spinner.spin_failures, 1u);
    EXPECT_EQ(r.spinner.failures(SpinFail::Handoff), 1u);
    EXPECT_EQ(r.spinner.acquisitions, 1u);
    EXPECT_EQ(r.spinner_watch_count, 1);  // never watched Y
    EXPECT_GE(r.spinner_sleeps, 1);
    EXPECT_EQ(r.waiter.failures(SpinFail::OwnerOffCpu), 1u);
    EXPECT_EQ(r.waiter.acquisitions, 1u);
    EXPECT_EQ(r.waiter.handoffs, 1u);  // W set HANDOFF once
}

TEST(RwSemHandoff, V5_4SpinnerIgnoresPendingHandoff)
{
    const SpinnerResult r = spinner_meets_handoff(Policy::V5_4);
    EXPECT_EQ(r.spinner.spin_attempts, 1u);
    EXPECT_EQ(r.spinner.spin_successes, 1u);
    EXPECT_EQ(r.spinner.spin_failures, 0u);
    EXPECT_EQ(r.spinner.failures(SpinFail::Handoff), 0u);
    EXPECT_EQ(r.spinner.acquisitions, 1u);
    EXPECT_GE(r.spinner_watch_count, 2);  // spun on Y (and then on W)
    EXPECT_EQ(r.spinner_sleeps, 0);
    EXPECT_EQ(r.spinner.sleeps, 0u);
    EXPECT_EQ(r.spinner.handoffs, 0u);
    EXPECT_EQ(r.waiter.failures(SpinFail::OwnerOffCpu), 1u);
    EXPECT_EQ(r.waiter.acquisitions, 1u);
    EXPECT_EQ(r.waiter.handoffs, 1u);  // W set HANDOFF once
}

// --- 2. The handoff writer: sleep (5.3-rc-tip) or spin on the running owner (5.4)
//
// M holds the lock. W's optimistic spin is refused (blind), then W sees M on
// CPU again; W queues first and sets HANDOFF (timeout 0). M releases only
// once W has either gone to sleep or started spin_on_owner(M) as a waiter.
struct HandoffWriterResult {
    Counters waiter;
    int queued_watch = 0;  // spin_on_owner entries after W queued
    int sleeps = 0;        // BeforeSleep hooks in W
};

HandoffWriterResult handoff_writer(Policy policy)
{
    TuningScope tuning(10'000'000'000ULL, /*handoff_timeout_ns=*/0);
    BlindWaiterOracle oracle;
    set_owner_oracle(&oracle);
    RwSem sem(policy);
    std::atomic<bool> queued{false};
    std::atomic<int> queued_watch{0}, sleeps{0};
    set_test_hook([&](HookPoint point, const void* lock) {
        if (lock != &sem || gettid_now() != oracle.blind_tid.load())
            return;
        switch (point) {
            case HookPoint::SpinFailed:
                queued = true;
                oracle.blind = false;  // from now on W sees M running
                break;
            case HookPoint::SpinOnOwner:
                if (queued.load())
                    ++queued_watch;
                break;
            case HookPoint::BeforeSleep:
                ++sleeps;
                break;
            default:
                break;
        }
    });
    sem.lock();  // M
    HandoffWriterResult result;
    std::thread w = blind_writer(sem, oracle, result.waiter);
    EXPECT_TRUE(eventually([&] { return sleeps.load() >= 1 || queued_watch.load() >= 1; }));
    EXPECT_TRUE(sem.count() & kHandoffBit);
    sem.unlock();
    w.join();
    result.queued_watch = queued_watch.load();
    result.sleeps = sleeps.load();
    return result;
}

TEST(RwSemHandoff, V5_3RcTipHandoffWriterSleeps)
{
    const HandoffWriterResult r = handoff_writer(Policy::V5_3_RcTip);
    EXPECT_EQ(r.waiter.failures(SpinFail::OwnerOffCpu), 1u);
    EXPECT_EQ(r.queued_watch, 0);
    EXPECT_GE(r.sleeps, 1);
    EXPECT_EQ(r.waiter.acquisitions, 1u);
}

TEST(RwSemHandoff, V5_4HandoffWriterSpinsOnRunningOwner)
{
    const HandoffWriterResult r = handoff_writer(Policy::V5_4);
    EXPECT_EQ(r.waiter.failures(SpinFail::OwnerOffCpu), 1u);
    EXPECT_GE(r.queued_watch, 1);
    EXPECT_EQ(r.sleeps, 0);
    EXPECT_EQ(r.waiter.sleeps, 0u);
    EXPECT_EQ(r.waiter.acquisitions, 1u);
}

// --- 3. 5.3+: a second writer finds the reader-owned lock NONSPINNABLE ------
//
// A reader holds the lock. W1 spins on it until its deadline, marks it
// NONSPINNABLE (7d43f1ce9dd0, v5.3) and sleeps. W2 then does not spin at all
// (rwsem_can_spin_on_owner() sees RWSEM_NONSPINNABLE). rwsem-xadd (4.7) has
// no marking: W2 decides afresh, and fails like W1.
Counters second_writer_on_reader_owned(Policy policy)
{
    TuningScope tuning(20'000'000);
    RwSem sem(policy);
    std::atomic<std::uint32_t> w1_tid{0}, w2_tid{0};
    std::atomic<bool> w1_sleeps{false}, w2_sleeps{false};
    set_test_hook([&](HookPoint point, const void* lock) {
        if (lock != &sem || point != HookPoint::BeforeSleep)
            return;
        const std::uint32_t me = gettid_now();
        if (me == w1_tid.load())
            w1_sleeps = true;
        if (me == w2_tid.load())
            w2_sleeps = true;
    });
    sem.lock_shared();
    auto writer = [&](std::atomic<std::uint32_t>& tid, Counters& out) {
        tid = gettid_now();
        const Counters before = this_thread_counters();
        sem.lock();
        sem.unlock();
        out = this_thread_counters() - before;
    };
    Counters c1, c2;
    std::thread w1([&] { writer(w1_tid, c1); });
    EXPECT_TRUE(eventually([&] { return w1_sleeps.load(); }));
    EXPECT_EQ(sem.owner_nonspinnable(), !traits(policy).xadd_model);
    std::thread w2([&] { writer(w2_tid, c2); });
    EXPECT_TRUE(eventually([&] { return w2_sleeps.load(); }));
    sem.unlock_shared();
    w1.join();
    w2.join();
    EXPECT_EQ(c1.spin_failures, 1u);
    EXPECT_EQ(c1.acquisitions, 1u);
    return c2;
}

TEST(RwSemHandoff, SecondWriterSeesNonSpinnableFrom5_3)
{
    for (Policy policy : {Policy::V5_3_RcTip, Policy::V5_4, Policy::V5_19, Policy::V6_3}) {
        const Counters c = second_writer_on_reader_owned(policy);
        EXPECT_EQ(c.spin_attempts, 1u) << to_string(policy);
        EXPECT_EQ(c.spin_failures, 1u) << to_string(policy);
        EXPECT_EQ(c.failures(SpinFail::NonSpinnable), 1u) << to_string(policy);
        EXPECT_EQ(c.acquisitions, 1u) << to_string(policy);
    }
}

TEST(RwSemHandoff, V4_7SecondWriterFailsAfresh)
{
    const Counters c = second_writer_on_reader_owned(Policy::V4_2);
    EXPECT_EQ(c.spin_failures, 1u);
    EXPECT_EQ(c.failures(SpinFail::OwnerNullCountBusy), 1u);
    EXPECT_EQ(c.failures(SpinFail::NonSpinnable), 0u);
    EXPECT_EQ(c.acquisitions, 1u);
}

// --- 4. HANDOFF set while a 5.3-rc-tip spinner watches a running writer. Kernel
// (4f23dbc1e657 .. before 91d2a812dfb9): rwsem_spin_on_owner() checks
// `count & RWSEM_FLAG_HANDOFF` at the top of every loop iteration and returns
// OWNER_NONSPINNABLE, so the spinner queues while the owner still holds the
// lock.
TEST(RwSemHandoff, V5_3RcTipSpinnerOnRunningOwnerStopsWhenHandoffIsSet)
{
    TuningScope tuning(10'000'000'000ULL, /*handoff_timeout_ns=*/0);
    BlindWaiterOracle oracle;
    set_owner_oracle(&oracle);
    RwSem sem(Policy::V5_3_RcTip);
    std::atomic<std::uint32_t> s_tid{0};
    std::atomic<bool> s_watching{false}, s_failed{false}, w_sleeps{false};
    set_test_hook([&](HookPoint point, const void* lock) {
        if (lock != &sem)
            return;
        const std::uint32_t me = gettid_now();
        if (me == s_tid.load() && point == HookPoint::SpinOnOwner)
            s_watching = true;
        if (me == s_tid.load() && point == HookPoint::SpinFailed)
            s_failed = true;
        if (me == oracle.blind_tid.load() && point == HookPoint::BeforeSleep)
            w_sleeps = true;
    });
    sem.lock();  // M
    Counters spinner;
    std::thread s([&] {
        s_tid = gettid_now();
        const Counters before = this_thread_counters();
        sem.lock();
        sem.unlock();
        spinner = this_thread_counters() - before;
    });
    EXPECT_TRUE(eventually([&] { return s_watching.load(); }));
    Counters waiter;
    std::thread w = blind_writer(sem, oracle, waiter);
    EXPECT_TRUE(eventually([&] { return w_sleeps.load(); }));
    EXPECT_TRUE(sem.count() & kHandoffBit);
    // S gives up while M still holds the lock (bounded wait: a replica that
    // kept spinning fails here instead of hanging).
    EXPECT_TRUE(eventually([&] { return s_failed.load(); }, std::chrono::seconds(2)));
    sem.unlock();
    w.join();
    s.join();
    EXPECT_EQ(spinner.failures(SpinFail::Handoff), 1u);
    EXPECT_EQ(spinner.spin_successes, 0u);
}

// --- 5. HANDOFF pending while no writer owns the lock: 5.3-rc-tip spins on.
// Kernel (4f23dbc1e657 .. before 91d2a812dfb9): the HANDOFF check sits inside
// rwsem_spin_on_owner()'s loop, which runs only while a writer owns the lock;
// with the owner cleared (up_write between rwsem_clear_owner() and the count
// release) it returns OWNER_NULL, rwsem_optimistic_spin() goes round again and
// rwsem_try_write_lock_unqueued() refuses the lock while HANDOFF is set. The
// spinner neither queues nor takes the lock from the handoff writer; it gets
// the lock after that writer has had it.
TEST(RwSemHandoff, V5_3RcTipSpinnerKeepsSpinningOnNullOwnerWithHandoffPending)
{
    TuningScope tuning(10'000'000'000ULL, /*handoff_timeout_ns=*/0);
    BlindWaiterOracle oracle;
    set_owner_oracle(&oracle);
    RwSem sem(Policy::V5_3_RcTip);
    const std::uint32_t main_tid = gettid_now();
    std::atomic<std::uint32_t> s_tid{0};
    std::atomic<bool> go_s{false}, s_failed{false}, w_sleeps{false}, held_once{false};
    std::atomic<bool> handoff_while_held{false}, failed_while_held{true};
    std::atomic<int> s_null_seen{0};
    set_test_hook([&](HookPoint point, const void* lock) {
        if (lock != &sem)
            return;
        const std::uint32_t me = gettid_now();
        if (me == s_tid.load() && point == HookPoint::SpinOwnerNull)
            ++s_null_seen;
        if (me == s_tid.load() && point == HookPoint::SpinFailed)
            s_failed = true;
        if (me == oracle.blind_tid.load() && point == HookPoint::BeforeSleep)
            w_sleeps = true;
        if (me == main_tid && point == HookPoint::UpWriteOwnerCleared && !held_once.exchange(true)) {
            // M has cleared the owner but still holds the count: let S arrive now.
            go_s = true;
            EXPECT_TRUE(eventually([&] { return s_failed.load() || s_null_seen.load() >= 1000; }));
            handoff_while_held = (sem.count() & kHandoffBit) != 0;
            failed_while_held = s_failed.load();
        }
    });
    sem.lock();  // M
    Counters waiter;
    std::thread w = blind_writer(sem, oracle, waiter);
    EXPECT_TRUE(eventually([&] { return w_sleeps.load(); }));
    ASSERT_TRUE(sem.count() & kHandoffBit);
    Counters spinner;
    std::thread s([&] {
        s_tid = gettid_now();
        EXPECT_TRUE(eventually([&] { return go_s.load(); }));
        const Counters before = this_thread_counters();
        sem.lock();
        sem.unlock();
        spinner = this_thread_counters() - before;
    });
    sem.unlock();
    w.join();
    s.join();
    EXPECT_TRUE(handoff_while_held.load());
    EXPECT_FALSE(failed_while_held.load()) << "S gave up on HANDOFF with no writer owning the lock";
    EXPECT_EQ(spinner.spin_attempts, 1u);
    EXPECT_EQ(spinner.spin_successes, 1u);
    EXPECT_EQ(spinner.failures(SpinFail::Handoff), 0u);
    EXPECT_EQ(spinner.sleeps, 0u);
}

// --- 6. 6.3's direct handoff. Kernel ("locking/rwsem: Enable direct rwsem
// lock handoff", v6.3): rwsem_mark_wake(), called by the releaser under
// wait_lock, finds the first waiter a writer, the lock free and HANDOFF set,
// and gives it the lock at once: owner set, WRITER_LOCKED added and HANDOFF
// taken away, the waiter dequeued. Before (5.19), the releaser only wakes the
// writer, which must take the lock itself in rwsem_try_write_lock().
//
// M holds the lock; W (blind: queues at once) sets HANDOFF and sleeps. M
// releases; W is held at its wake-up until the test has looked at the lock.
struct ReleaseState {
    std::uint32_t owner = 0;
    std::int64_t count = 0;
    std::uint32_t waiter_tid = 0;
    Counters waiter;
};

ReleaseState state_after_release_to_handoff_writer(Policy policy)
{
    TuningScope tuning(10'000'000'000ULL, /*handoff_timeout_ns=*/0);
    BlindWaiterOracle oracle;
    set_owner_oracle(&oracle);
    RwSem sem(policy);
    std::atomic<bool> w_sleeps{false}, w_woken{false}, release_w{false};
    set_test_hook([&](HookPoint point, const void* lock) {
        if (lock != &sem || gettid_now() != oracle.blind_tid.load())
            return;
        if (point == HookPoint::BeforeSleep)
            w_sleeps = true;
        if (point == HookPoint::Woken) {
            w_woken = true;
            EXPECT_TRUE(eventually([&] { return release_w.load(); }));
        }
    });
    sem.lock();  // M
    ReleaseState result;
    std::thread w = blind_writer(sem, oracle, result.waiter);
    EXPECT_TRUE(eventually([&] { return w_sleeps.load(); }));
    EXPECT_TRUE(sem.count() & kHandoffBit);
    sem.unlock();
    EXPECT_TRUE(eventually([&] { return w_woken.load(); }));
    result.owner = sem.owner_tid();
    result.count = sem.count();
    result.waiter_tid = oracle.blind_tid.load();
    release_w = true;
    w.join();
    return result;
}

TEST(RwSemHandoff, V6_3ReleaserHandsTheLockToTheHandoffWriter)
{
    const ReleaseState r = state_after_release_to_handoff_writer(Policy::V6_3);
    EXPECT_EQ(r.owner, r.waiter_tid);     // W owns it before it has run
    EXPECT_EQ(r.count, std::int64_t{1});  // WRITER_LOCKED only: HANDOFF and WAITERS gone
    EXPECT_EQ(r.waiter.acquisitions, 1u);
    EXPECT_EQ(r.waiter.failures(SpinFail::OwnerOffCpu), 1u);
}

TEST(RwSemHandoff, V5_19ReleaserOnlyWakesTheHandoffWriter)
{
    const ReleaseState r = state_after_release_to_handoff_writer(Policy::V5_19);
    EXPECT_EQ(r.owner, 0u);              // free until W takes it
    EXPECT_FALSE(r.count & 1);           // not WRITER_LOCKED
    EXPECT_TRUE(r.count & kHandoffBit);  // HANDOFF still keeps others out
    EXPECT_EQ(r.waiter.acquisitions, 1u);
}

}  // namespace
}  // namespace reflock
