// User-space lock waits of a program built without frame pointers, recorded
// by collector/userlock: its two global pthread mutexes named by their
// symbols, its heap std::mutex by the method that takes it, its
// std::shared_mutex as a rwlock, its condition variable left out of lock
// waits; and the wait counts per lock agree with an independent BPF
// observer (futex_observer.bpf.c) within 2%.

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "observed_run.h"
#include "probe/user_probe.h"

namespace {

using lockscope::userlock::Recorder;
using lockscope::userlock::Recording;
using lockscope::userlock::UserLock;

using lockscope::test::Program;
using namespace lockscope::userlock_test;  // the program's protocol and the observer

constexpr int kRunMs = 1500;

struct ProgCost {
    uint64_t run_ns = 0;
    uint64_t runs = 0;
};

ProgCost cost_of(int prog_fd)
{
    bpf_prog_info info{};
    uint32_t size = sizeof(info);
    if (bpf_obj_get_info_by_fd(prog_fd, &info, &size) != 0) {
        return {};
    }
    return {info.run_time_ns, info.run_cnt};
}

// Turns kernel.bpf_stats_enabled on while it lives, as it was afterwards.
class BpfStats {
public:
    BpfStats()
    {
        std::ifstream("/proc/sys/kernel/bpf_stats_enabled") >> before_;
        std::ofstream("/proc/sys/kernel/bpf_stats_enabled") << "1";
    }
    ~BpfStats() { std::ofstream("/proc/sys/kernel/bpf_stats_enabled") << before_; }

private:
    std::string before_ = "0";
};

struct Result {
    std::string failure;
    Recording recording;
    std::map<std::string, LockRange> locks;               // as the program printed them
    std::map<std::string, uint64_t> observed;             // futex waits the observer counted per lock
    std::map<std::string, ObservedTimes> observed_times;  // and their time, split its own way
    pid_t pid = 0;                                        // the program's
    std::map<std::string, long> contended;                // as the program counted them
    ProgCost progs;                                       // all of the recorder's programs
    uint64_t in_flight_after = 0;                         // timing entries left once the program has exited
};

Result run()
{
    Result r;
    Program program(USERLOCK_PROG, {std::to_string(kRunMs)});
    if (!read_locks(program, r.locks, 10000)) {
        r.failure = "the test program did not start";
        return r;
    }
    BpfStats stats;
    try {
        Recorder recorder = Recorder::prepare({.tgids = {program.pid()}});
        FutexObserver observer(program.pid(), r.locks);
        if (!observer.failure().empty()) {
            r.failure = observer.failure();
            return r;
        }
        recorder.start();
        program.say("go\n");
        const bool done = read_until_done(
            program, r.contended, 15000, [](void* rec) { static_cast<Recorder*>(rec)->poll(50); }, &recorder);
        r.observed = observer.stop();
        r.observed_times = observer.times();
        r.pid = program.pid();
        if (!done) {
            r.failure = "the test program did not finish";
            return r;
        }
        for (int fd : recorder.prog_fds()) {
            const ProgCost one = cost_of(fd);
            r.progs.run_ns += one.run_ns;
            r.progs.runs += one.runs;
        }
        r.recording = recorder.read();  // while the program still runs: its maps name the globals
        if (!program.finish()) {
            r.failure = "the test program did not exit";
            return r;
        }
        r.in_flight_after = recorder.in_flight();
        recorder.stop();
    } catch (const lockscope::Error& e) {
        r.failure = e.what();
    }
    return r;
}

std::vector<const UserLock*> rows_named(const Recording& recording, const std::string& name)
{
    std::vector<const UserLock*> rows;
    for (const auto& lock : recording.locks) {
        if (lock.name == name) {
            rows.push_back(&lock);
        }
    }
    return rows;
}

std::string describe(const Recording& recording)
{
    std::string out;
    for (const auto& lock : recording.locks) {
        char row[512];
        std::snprintf(row, sizeof(row),
                      "  %-32s %-18s %-12s waits %8llu  wait %8.3f ms  max %8.3f ms  samples %llu  caller %s (%llu)\n",
                      lock.name.c_str(), lock.kind.c_str(), lock.name_source.c_str(),
                      static_cast<unsigned long long>(lock.waits), lock.wait_ns / 1e6, lock.max_wait_ns / 1e6,
                      static_cast<unsigned long long>(lock.samples), lock.caller.c_str(),
                      static_cast<unsigned long long>(lock.caller_samples));
        out += row;
    }
    for (const auto& [reason, left] : recording.left_out) {
        out += "  left out (" + reason + "): " + std::to_string(left.waits) + " waits on " +
               std::to_string(left.addresses) + " futex addresses\n";
    }
    return out;
}

class UserLocks : public ::testing::Test {
protected:
    static void SetUpTestSuite()
    {
        if (geteuid() == 0) {
            result_ = new Result(run());
            if (result_->failure.empty()) {
                std::printf("user locks recorded:\n%s", describe(result_->recording).c_str());
            }
        }
    }
    static void TearDownTestSuite()
    {
        delete result_;
        result_ = nullptr;
    }
    void SetUp() override
    {
        if (result_ == nullptr) {
            GTEST_SKIP() << "needs root to load BPF programs and read another process's maps";
        }
        ASSERT_EQ(result_->failure, "");
    }
    static Result* result_;
};

Result* UserLocks::result_ = nullptr;

TEST_F(UserLocks, GlobalMutexesAreNamedByTheirSymbols)
{
    for (const char* name : {"g_cache_lock", "g_stats_lock"}) {
        const auto rows = rows_named(result_->recording, name);
        ASSERT_EQ(rows.size(), 1u) << name << " is not one row:\n" << describe(result_->recording);
        EXPECT_EQ(rows[0]->kind, "pthread_mutex");
        EXPECT_EQ(rows[0]->name_source, "user-symbol");
        EXPECT_EQ(rows[0]->module, "userlock_prog");
        EXPECT_FALSE(rows[0]->owner_tids.empty()) << "no waiter saw the mutex's owner";
    }
}

TEST_F(UserLocks, TheHeapMutexIsNamedByTheMethodThatTakesIt)
{
    const auto rows = rows_named(result_->recording, "pthread_mutex@Cache::get");
    ASSERT_EQ(rows.size(), 1u) << describe(result_->recording);
    EXPECT_EQ(rows[0]->kind, "pthread_mutex");
    EXPECT_EQ(rows[0]->name_source, "user-caller");
    EXPECT_EQ(rows[0]->caller, "Cache::get");
}

TEST_F(UserLocks, TheSharedMutexIsARwlockWithReadersAndWriters)
{
    const auto rows = rows_named(result_->recording, "g_table_lock");
    std::set<std::string> kinds;
    for (const auto* row : rows) {
        kinds.insert(row->kind);
    }
    EXPECT_TRUE(kinds.count("pthread_rwlock/w")) << describe(result_->recording);
    EXPECT_TRUE(kinds.count("pthread_rwlock/r")) << describe(result_->recording);
    EXPECT_EQ(kinds.size(), rows.size()) << "only rwlock kinds, one row each";
    for (const auto& kind : kinds) {
        EXPECT_EQ(kind.rfind("pthread_rwlock/", 0), 0u) << kind;
    }
}

TEST_F(UserLocks, TheConditionVariableIsLeftOutAndCounted)
{
    const auto& recording = result_->recording;
    EXPECT_TRUE(rows_named(recording, "g_queue_cv").empty()) << describe(recording);
    // The mutex a woken waiter re-takes is a lock like any other.
    for (const auto* row : rows_named(recording, "g_queue_mutex")) {
        EXPECT_EQ(row->kind, "pthread_mutex");
    }
    const auto condition = recording.left_out.find("condition");
    ASSERT_NE(condition, recording.left_out.end()) << describe(recording);
    EXPECT_GT(condition->second.waits, 0u);
    // The observer counts the condition variable's futex waits too.
    EXPECT_GE(condition->second.waits, result_->observed.at("g_queue_cv"));
}

TEST_F(UserLocks, WaitCountsAgreeWithAnIndependentObserverWithinTwoPercent)
{
    for (const auto& [lock, row_name] : kRowNames) {
        uint64_t recorded = 0;
        for (const auto* row : rows_named(result_->recording, row_name)) {
            recorded += row->waits;
        }
        const long contended = result_->contended.count(lock) ? result_->contended.at(lock) : -1;
        std::printf("%-14s contended lock attempts (program) %7ld\n", lock.c_str(), contended);
        EXPECT_EQ(disagreement(lock, recorded, result_->observed.at(lock)), "");
    }
}

// Every row's wait is on CPU, asleep or runnable, to the nanosecond.
TEST_F(UserLocks, EachWaitsPartsAddUpToItExactly)
{
    for (const auto& lock : result_->recording.locks) {
        EXPECT_EQ(lock.oncpu_ns + lock.asleep_ns + lock.runnable_ns, lock.wait_ns) << lock.name << " " << lock.kind;
        uint64_t hist = 0;
        for (uint64_t n : lock.hist) {
            hist += n;
        }
        EXPECT_EQ(hist, lock.waits) << lock.name << " " << lock.kind << ": the histogram counts every wait";
    }
}

// The observer times the same futex waits from its own programs (raw
// tracepoints, its own state) and splits them its own way. Its clock reads
// sit beside lockscope's, so the totals differ by the programs' run time
// (allowed: 2 µs a wait) and by sleeps woken while their sleeper was still on
// its CPU, which each may take as asleep or runnable (allowed: their time).
TEST_F(UserLocks, AsleepRunnableAndWakesAgreeWithTheObserversOwnBookkeeping)
{
    for (const auto& [lock, row_name] : kRowNames) {
        uint64_t waits = 0, wait = 0, asleep = 0, runnable = 0, wakes = 0;
        for (const auto* row : rows_named(result_->recording, row_name)) {
            waits += row->waits;
            wait += row->wait_ns;
            asleep += row->asleep_ns;
            runnable += row->runnable_ns;
            wakes += row->wakes;
        }
        const ObservedTimes& o = result_->observed_times.at(lock);
        std::printf(
            "%-14s wait %10.3f ms (observer %10.3f)  asleep %10.3f (%10.3f)  runnable %10.3f (%10.3f)  "
            "wakes %7llu (%7llu)  raced %.3f ms\n",
            lock.c_str(), wait / 1e6, o.wait_ns / 1e6, asleep / 1e6, o.asleep_ns / 1e6, runnable / 1e6,
            o.runnable_ns / 1e6, static_cast<unsigned long long>(wakes), static_cast<unsigned long long>(o.woken),
            o.raced_ns / 1e6);
        const auto close = [&](uint64_t got, uint64_t want, uint64_t slack) {
            const uint64_t diff = got > want ? got - want : want - got;
            return double(diff) <= 0.05 * double(want) + double(slack);
        };
        const uint64_t program_time = 2000 * waits;
        EXPECT_TRUE(close(wait, o.wait_ns, program_time)) << lock;
        EXPECT_TRUE(close(asleep, o.asleep_ns, program_time + o.raced_ns)) << lock;
        EXPECT_TRUE(close(runnable, o.runnable_ns, program_time + o.raced_ns)) << lock;
        EXPECT_TRUE(close(wakes, o.woken, 2 + o.woken / 50)) << lock;
    }
}

// The threads that woke a mutex's waiters are the program's own (its
// unlocks), and every wake is credited to one of them.
TEST_F(UserLocks, TheWakersOfAMutexAreTheProgramsThreads)
{
    EXPECT_EQ(result_->recording.counts.lost_wakers, 0u);
    for (const char* name : {"g_cache_lock", "g_stats_lock", "pthread_mutex@Cache::get"}) {
        const auto rows = rows_named(result_->recording, name);
        ASSERT_EQ(rows.size(), 1u) << name;
        ASSERT_GT(rows[0]->wakes, 0u) << name << ": no wait was woken";
        uint64_t credited = 0;
        for (const auto& waker : rows[0]->wakers) {
            EXPECT_EQ(waker.waker_pid, static_cast<uint32_t>(result_->pid)) << name << " woken by " << waker.waker_tid;
            EXPECT_EQ(waker.waker_comm, "userlock_prog") << name;
            credited += waker.wakes;
        }
        EXPECT_EQ(credited, rows[0]->wakes) << name;
        EXPECT_GE(rows[0]->wakers.size(), 2u) << name << ": several threads take and release it";
    }
}

// Built without frame pointers, the program's functions are still found
// above glibc's lock code in almost every sampled stack.
TEST_F(UserLocks, TheWaitingFunctionIsNamedInNineOfTenSampledStacks)
{
    const std::map<std::string, std::string> callers = {
        {"g_cache_lock", "update_cache"}, {"g_stats_lock", "record_stats"}, {"pthread_mutex@Cache::get", "Cache::get"}};
    for (const auto& [name, caller] : callers) {
        const auto rows = rows_named(result_->recording, name);
        ASSERT_EQ(rows.size(), 1u) << name;
        EXPECT_EQ(rows[0]->caller, caller);
        EXPECT_GE(rows[0]->caller_samples * 10, rows[0]->samples * 9)
            << name << ": " << rows[0]->caller_samples << " of " << rows[0]->samples << " samples name " << caller;
    }
    for (const auto* row : rows_named(result_->recording, "g_table_lock")) {
        EXPECT_EQ(row->caller, row->kind == "pthread_rwlock/r" ? "lookup_table" : "update_table");
        EXPECT_GE(row->caller_samples * 10, row->samples * 9) << row->kind;
    }
}

// Threads killed inside a wait by their process's exit (the program exits
// with two threads asleep on a mutex) still pass the syscall's exit: no
// timing entry is left behind to fill the map over a long recording.
TEST_F(UserLocks, NoWaitIsLeftInFlightOnceTheThreadsAreGone)
{
    EXPECT_EQ(result_->in_flight_after, 0u);
}

TEST_F(UserLocks, NothingWasLostAndSampledStacksWereUnwound)
{
    const auto& recording = result_->recording;
    EXPECT_EQ(recording.counts.lost_keys, 0u);
    EXPECT_EQ(recording.counts.lost_inflight, 0u);
    EXPECT_GT(recording.counts.samples, 0u);
    EXPECT_GE(recording.counts.samples_unwound * 10, recording.counts.samples * 9)
        << recording.counts.samples_unwound << " of " << recording.counts.samples << " sampled stacks named a frame";
    std::printf("samples: %llu (%llu unwound to a named frame), %llu over the rate cap, %llu lost\n",
                static_cast<unsigned long long>(recording.counts.samples),
                static_cast<unsigned long long>(recording.counts.samples_unwound),
                static_cast<unsigned long long>(recording.counts.rate_limited),
                static_cast<unsigned long long>(recording.counts.lost_samples));
}

TEST_F(UserLocks, PrintsTheCostPerWait)
{
    const auto& r = *result_;
    uint64_t waits = 0;
    for (const auto& lock : r.recording.locks) {
        waits += lock.waits;
    }
    for (const auto& [reason, left] : r.recording.left_out) {
        waits += left.waits;
    }
    const auto per = [](uint64_t ns, uint64_t n) { return n != 0 ? double(ns) / double(n) : 0.0; };
    std::printf(
        "cost (kernel.bpf_stats_enabled; every syscall and context switch of the machine runs them): %llu "
        "program runs, %.0f ns each; per recorded futex wait (%llu waits): %.0f ns\n",
        static_cast<unsigned long long>(r.progs.runs), per(r.progs.run_ns, r.progs.runs),
        static_cast<unsigned long long>(waits), per(r.progs.run_ns, waits));
    SUCCEED();
}

}  // namespace
