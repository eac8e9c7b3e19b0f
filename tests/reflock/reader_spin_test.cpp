// Reader optimistic spinning (5.3-5.10: "locking/rwsem: Enable readers
// spinning on writer", cf69482d62d9) and its adaptive disabling ("Adaptive
// disabling of reader optimistic spinning", 5cfd92e12e13), removed in 5.11
// (617f3ef95177), driven with test hooks.
//
// Kernel reference (kernel/locking/rwsem.c, v5.4):
//   - rwsem_down_read_slowpath(): unless rwsem_can_spin_on_owner(sem,
//     RWSEM_RD_NONSPINNABLE) refuses, undo the read bias and
//     rwsem_optimistic_spin(sem, false): spin on a running writer, then
//     rwsem_try_read_lock_unqueued().
//   - rwsem_down_write_slowpath(): a writer whose spin failed and that saw
//     RWSEM_NONSPINNABLE bits ORs RWSEM_RD_NONSPINNABLE into the owner once it
//     holds the lock, so readers arriving during that write phase queue at once.
#include "reflock/counters.h"
#include "reflock/rwsem.h"
#include "test_support.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace reflock {
namespace {

using test::eventually;
using test::gettid_now;
using test::TuningScope;

// A writer holds the lock and runs; a reader arrives, and the writer releases
// only once the reader has either started spinning on it or gone to sleep.
struct ReaderResult {
    Counters reader;
    bool spun_on_writer = false;
};

ReaderResult reader_meets_running_writer(Policy policy)
{
    TuningScope tuning(10'000'000'000ULL);
    RwSem sem(policy);
    std::atomic<std::uint32_t> r_tid{0};
    std::atomic<bool> r_watching{false}, r_sleeps{false};
    set_test_hook([&](HookPoint point, const void* lock) {
        if (lock != &sem || gettid_now() != r_tid.load())
            return;
        if (point == HookPoint::SpinOnOwner)
            r_watching = true;
        if (point == HookPoint::BeforeSleep)
            r_sleeps = true;
    });
    sem.lock();
    ReaderResult result;
    std::thread r([&] {
        r_tid = gettid_now();
        const Counters before = this_thread_counters();
        sem.lock_shared();
        sem.unlock_shared();
        result.reader = this_thread_counters() - before;
    });
    EXPECT_TRUE(eventually([&] { return r_watching.load() || r_sleeps.load(); }));
    result.spun_on_writer = r_watching.load();
    sem.unlock();
    r.join();
    return result;
}

TEST(RwSemReaderSpin, V5_4ReaderSpinsOnRunningWriterAndTakesTheLock)
{
    const ReaderResult r = reader_meets_running_writer(Policy::V5_4);
    EXPECT_TRUE(r.spun_on_writer);
    EXPECT_EQ(r.reader.spin_attempts, 1u);
    EXPECT_EQ(r.reader.spin_successes, 1u);
    EXPECT_EQ(r.reader.spin_failures, 0u);
    EXPECT_EQ(r.reader.sleeps, 0u);
    EXPECT_EQ(r.reader.acquisitions, 1u);
}

// Readers did not spin before cf69482d62d9 (4.8's xadd rwsem) nor after
// 617f3ef95177 (5.11+).
TEST(RwSemReaderSpin, V4_8AndV5_19ReaderQueuesBehindRunningWriter)
{
    for (Policy policy : {Policy::V4_8, Policy::V5_19}) {
        const ReaderResult r = reader_meets_running_writer(policy);
        EXPECT_FALSE(r.spun_on_writer) << to_string(policy);
        EXPECT_EQ(r.reader.spin_attempts, 0u) << to_string(policy);
        EXPECT_EQ(r.reader.contended, 1u) << to_string(policy);
        EXPECT_GE(r.reader.sleeps, 1u) << to_string(policy);
        EXPECT_EQ(r.reader.acquisitions, 1u) << to_string(policy);
    }
}

// A reader holds the lock. W1 spins on it past its deadline, marks it
// NONSPINNABLE and queues; when the reader leaves, W1 gets the lock from the
// queue and, having seen NONSPINNABLE, sets RD_NONSPINNABLE. A reader R that
// arrives while W1 holds the lock must not spin (5.4), where in the control
// above it spun on a writer that took the lock without queueing.
TEST(RwSemReaderSpin, V5_4WriterThatSawNonSpinnableStopsReadersSpinning)
{
    TuningScope tuning(20'000'000);  // longer than the ~10 us reader-owned deadline
    RwSem sem(Policy::V5_4);
    std::atomic<std::uint32_t> w_tid{0}, r_tid{0};
    std::atomic<bool> w_sleeps{false}, w_holds{false}, release_w{false}, r_sleeps{false};
    set_test_hook([&](HookPoint point, const void* lock) {
        if (lock != &sem || point != HookPoint::BeforeSleep)
            return;
        if (gettid_now() == w_tid.load())
            w_sleeps = true;
        if (gettid_now() == r_tid.load())
            r_sleeps = true;
    });
    sem.lock_shared();
    Counters writer, reader;
    std::thread w([&] {
        w_tid = gettid_now();
        const Counters before = this_thread_counters();
        sem.lock();
        w_holds = true;
        EXPECT_TRUE(eventually([&] { return release_w.load(); }));
        sem.unlock();
        writer = this_thread_counters() - before;
    });
    ASSERT_TRUE(eventually([&] { return w_sleeps.load(); }));
    EXPECT_TRUE(sem.owner_nonspinnable());  // W1's reader-owned deadline passed
    sem.unlock_shared();
    ASSERT_TRUE(eventually([&] { return w_holds.load(); }));
    EXPECT_TRUE(sem.owner_rd_nonspinnable());
    EXPECT_FALSE(sem.owner_nonspinnable());  // writers may spin on W1
    std::thread r([&] {
        r_tid = gettid_now();
        const Counters before = this_thread_counters();
        sem.lock_shared();
        sem.unlock_shared();
        reader = this_thread_counters() - before;
    });
    EXPECT_TRUE(eventually([&] { return r_sleeps.load(); }));
    release_w = true;
    w.join();
    r.join();
    EXPECT_EQ(writer.failures(SpinFail::ReaderOwned), 1u);
    EXPECT_EQ(reader.spin_attempts, 1u);
    EXPECT_EQ(reader.spin_failures, 1u);
    EXPECT_EQ(reader.failures(SpinFail::NonSpinnable), 1u);
    EXPECT_GE(reader.sleeps, 1u);
    EXPECT_EQ(reader.acquisitions, 1u);
}

}  // namespace
}  // namespace reflock
