// Filters in perf's vocabulary (--kind, --lock, --caller): the names they
// accept, the kernel's kind bits they map to, and what a filtered session
// adds up to.
#include <gtest/gtest.h>

#include "core/analysis/lock_filter.h"
#include "core/analysis/lock_vocabulary.h"
#include "core/analysis/report.h"
#include "core/error.h"
#include "episode.h"
#include "lockscope_abi.h"
#include "sample_session.h"

namespace lockscope {
namespace {

LockFilter kinds(const std::string& list)
{
    LockFilter f;
    add_kind_filter(f, list);
    return f;
}

TEST(LockFilter, LockscopesKindsAndPerfsSpellings)
{
    EXPECT_TRUE(kinds("mutex").matches_kind("mutex", ""));
    EXPECT_FALSE(kinds("mutex").matches_kind("rwsem", "write"));
    // perf lock contention -Y spellings
    EXPECT_TRUE(kinds("rwsem:W").matches_kind("rwsem", "write"));
    EXPECT_FALSE(kinds("rwsem:W").matches_kind("rwsem", "read"));
    EXPECT_TRUE(kinds("rwsem:R").matches_kind("rwsem", "read"));
    EXPECT_TRUE(kinds("rwsem").matches_kind("rwsem", "read"));
    EXPECT_TRUE(kinds("rwlock:R").matches_kind("rwlock", "read"));
    EXPECT_TRUE(kinds("rt-mutex").matches_kind("rtmutex", ""));
    EXPECT_TRUE(kinds("rwlock-rt:W").matches_kind("rt-rwlock", "write"));
    EXPECT_TRUE(kinds("pcpu-sem:R").matches_kind("percpu-rwsem", "read"));
    EXPECT_TRUE(kinds("pcpu_sem").matches_kind("percpu-rwsem", "write"));
    EXPECT_TRUE(kinds("mutex-spin").matches_kind("mutex", ""));
    EXPECT_TRUE(kinds("rwsem/write").matches_kind("rwsem", "write"));
    const LockFilter two = kinds("mutex,spinlock");
    EXPECT_TRUE(two.matches_kind("spinlock", ""));
    EXPECT_EQ(two.describe(), "kind mutex, spinlock");
}

TEST(LockFilter, BadKindsAndPatternsAreUsageErrorsThatSayWhy)
{
    LockFilter f;
    try {
        add_kind_filter(f, "mutex,bogus");
        FAIL() << "accepted an unknown kind";
    } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("unknown lock kind 'bogus'"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("pcpu-sem"), std::string::npos) << "lists the names";
        EXPECT_NE(std::string(e.what()).find(":R or :W"), std::string::npos) << "and the sides";
    }
    EXPECT_THROW(add_kind_filter(f, "mutex:R"), UsageError);  // no sides
    EXPECT_THROW(add_kind_filter(f, "mutex,,rwsem"), UsageError);
    EXPECT_THROW(add_pattern_filter(f.locks, "", "--lock"), UsageError);
    EXPECT_THROW(add_pattern_filter(f.locks, "inode.[abc", "--lock"), UsageError);
    EXPECT_NO_THROW(add_pattern_filter(f.locks, "inode.[ai]*", "--lock"));
    EXPECT_NO_THROW(add_pattern_filter(f.locks, "weird\\[name", "--lock"));
}

TEST(LockFilter, KindBitsAreTheKernelsOwn)
{
    // Every kind maps to the bit ls_kind_bit() gives an episode of it.
    struct Case {
        const char* name;
        uint32_t flags;
    } cases[] = {{"mutex", LCB_F_MUTEX},
                 {"rwsem:R", LCB_F_READ},
                 {"rwsem:W", LCB_F_WRITE},
                 {"spinlock", LCB_F_SPIN},
                 {"rwlock:R", LCB_F_SPIN | LCB_F_READ},
                 {"rt-mutex", LCB_F_RT},
                 {"rwlock-rt:R", LCB_F_RT | LCB_F_READ},
                 {"pcpu-sem:W", LCB_F_PERCPU | LCB_F_WRITE},
                 {"semaphore", 0},
                 {"user-mutex", LS_F_USER | LCB_F_MUTEX}};
    for (const Case& c : cases) {
        EXPECT_EQ(kinds(c.name).kind_bits(), 1u << ls_kind_bit(c.flags)) << c.name;
        const LockKindInfo k = lock_kind(c.flags);
        EXPECT_TRUE(kinds(c.name).matches_kind(k.kind, k.mode)) << c.name;
    }
    EXPECT_EQ(kinds("rwsem").kind_bits(), (1u << ls_kind_bit(LCB_F_READ)) | (1u << ls_kind_bit(LCB_F_WRITE)));
    EXPECT_EQ(LockFilter{}.kind_bits(), 0u);
}

TEST(LockFilter, AFilteredSessionAddsUpToItsKeptLocks)
{
    testing::TempDir dir;
    testing::write_sample(dir.file("s.lockscope"), 2, 3, 6);
    const Session s = load_session(dir.file("s.lockscope"));
    LockFilter f;
    add_kind_filter(f, "rwsem");
    add_pattern_filter(f.callers, "caller_[0-3]", "--caller");
    const Session kept = filter_session(s, f);
    ASSERT_FALSE(kept.locks.empty());
    for (const LockInfo& l : kept.locks)
        EXPECT_TRUE(l.kind == "rwsem" && l.caller != "caller_4") << l.name;
    const Report all = build_report(kept, ReportOptions{.top = 0});
    LockCounters sum;
    for (const ReportRow& r : all.rows)
        sum.add(r.counters);
    EXPECT_EQ(all.totals.counters.contentions, sum.contentions);
    EXPECT_EQ(all.totals.counters.wait_ns, sum.wait_ns);
    EXPECT_LT(all.totals.counters.contentions, build_report(s, ReportOptions{.top = 0}).totals.counters.contentions);
    EXPECT_EQ(kept.meta_value("filters"), "kind rwsem; caller caller_[0-3]");
    EXPECT_NE(format_text(all).find("filters            kind rwsem; caller caller_[0-3]"), std::string::npos);
}

TEST(LockFilter, MutexSpinKeepsTheSpinPhasesOnly)
{
    const LockFilter spin = kinds("mutex:spin");
    EXPECT_TRUE(spin.matches_kind("mutex", ""));
    EXPECT_FALSE(spin.matches_kind("rwsem", ""));
    EXPECT_TRUE(spin.spin_phases_only("mutex", ""));
    // With plain mutex too, the whole waits are kept.
    EXPECT_FALSE(kinds("mutex:spin,mutex").spin_phases_only("mutex", ""));
    EXPECT_FALSE(kinds("mutex").spin_phases_only("mutex", ""));
    // The kernel still counts mutexes: the spin phases are part of their waits.
    EXPECT_EQ(spin.kind_bits(), kinds("mutex").kind_bits());
    EXPECT_EQ(spin.describe(), "kind mutex:spin");

    LockCounters whole;
    whole.contentions = 10;
    whole.spin_attempts = 14;  // a woken waiter may spin again
    whole.spin_failures = 6;
    whole.spin_successes = 8;
    whole.wait_ns = 9000;
    whole.spin_ns = 2000;
    whole.spin_offcpu_ns = 300;
    whole.sleep_ns = 5000;
    whole.sleeps = 6;
    whole.max_wait_ns = 4000;
    whole.timed = 10;
    const LockCounters s = spin_phase_counters(whole);
    EXPECT_EQ(s.contentions, 14u);
    EXPECT_EQ(s.wait_ns, 2000u);
    EXPECT_EQ(s.spin_failures, 6u);
    EXPECT_EQ(s.sleep_ns, 0u);
    EXPECT_EQ(s.sleeps, 0u);
    EXPECT_EQ(s.runnable_ns(), 300u);
    EXPECT_EQ(s.spinning_ns() + s.queued_on_cpu_ns() + s.asleep_ns() + s.runnable_ns(), s.wait_ns)
        << "the four parts still add up";
    EXPECT_EQ(s.max_wait_ns, 0u) << "a whole wait's maximum is not a spin phase's";
    EXPECT_EQ(s.timed, 14u);
}

TEST(LockFilter, LockListsAndCallstacks)
{
    LockFilter f;
    add_lock_list_filter(f, "rtnl_mutex,inode.*");
    EXPECT_EQ(f.locks, (std::vector<std::string>{"rtnl_mutex", "inode.*"}));
    EXPECT_THROW(add_lock_list_filter(f, "0xffff8881234"), UsageError);
    EXPECT_THROW(add_callstack_filter(f, ""), UsageError);
    add_callstack_filter(f, "pipe_");
    EXPECT_EQ(f.describe(), "lock rtnl_mutex, inode.*; callstack pipe_");
}

// A session's user-space locks: two mutexes and a rwlock's readers, each
// with a sampled stack and a waker.
Session with_user_locks()
{
    Session s;
    auto row = [&](const char* name, const char* kind, const char* caller, const char* frame) {
        UserLockRow r;
        r.run = 1;
        r.pid = 40;
        r.name = name;
        r.kind = kind;
        r.caller = caller;
        r.waits = 10;
        s.user_locks.push_back(r);
        s.user_lock_stacks.push_back({1, 40, name, kind, {"__lll_lock_wait", frame}, 3, 300});
        s.user_lock_wakers.push_back({1, 40, name, kind, 41, 40, "worker", 2});
    };
    row("g_cache_lock", "pthread_mutex", "Cache::get", "Cache::refill");
    row("pthread_mutex@Queue::pop", "pthread_mutex", "Queue::pop", "Queue::pop");
    row("g_table_lock", "pthread_rwlock/r", "lookup_table", "lookup_table");
    return s;
}

std::vector<std::string> user_lock_names(const Session& s)
{
    std::vector<std::string> names;
    for (const UserLockRow& r : s.user_locks)
        names.push_back(r.name);
    return names;
}

TEST(LockFilter, UserLocksAreFilteredByKindNameCallerAndStack)
{
    const Session s = with_user_locks();
    auto kept = [&](auto add) {
        LockFilter f;
        add(f);
        return user_lock_names(filter_session(s, f));
    };
    using Names = std::vector<std::string>;
    EXPECT_EQ(kept([](LockFilter& f) { add_kind_filter(f, "pthread_mutex", "-Y"); }),
              (Names{"g_cache_lock", "pthread_mutex@Queue::pop"}));
    EXPECT_EQ(kept([](LockFilter& f) { add_kind_filter(f, "pthread_rwlock:R", "-Y"); }), Names{"g_table_lock"});
    EXPECT_TRUE(kept([](LockFilter& f) { add_kind_filter(f, "pthread_rwlock:W", "-Y"); }).empty());
    EXPECT_TRUE(kept([](LockFilter& f) { add_kind_filter(f, "mutex", "-Y"); }).empty()) << "a kernel kind";
    EXPECT_EQ(kept([](LockFilter& f) { add_lock_list_filter(f, "g_*"); }), (Names{"g_cache_lock", "g_table_lock"}));
    EXPECT_EQ(kept([](LockFilter& f) { add_pattern_filter(f.callers, "Queue::*", "--caller"); }),
              Names{"pthread_mutex@Queue::pop"});
    EXPECT_EQ(kept([](LockFilter& f) { add_callstack_filter(f, "refill"); }), Names{"g_cache_lock"});
    LockFilter sides;
    EXPECT_THROW(add_kind_filter(sides, "pthread_mutex:R", "-Y"), UsageError) << "a mutex has no sides";
    // What belongs to a dropped row goes with it.
    LockFilter one;
    add_lock_list_filter(one, "g_cache_lock");
    const Session cut = filter_session(s, one);
    ASSERT_EQ(cut.user_lock_stacks.size(), 1u);
    EXPECT_EQ(cut.user_lock_stacks[0].name, "g_cache_lock");
    ASSERT_EQ(cut.user_lock_wakers.size(), 1u);
    EXPECT_EQ(cut.user_lock_wakers[0].name, "g_cache_lock");
}

}  // namespace
}  // namespace lockscope
