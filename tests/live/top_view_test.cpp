// The `top` view: one interval rolled up by each grouping, sorted by each
// key, tasks and user locks shown per interval although the recorder hands
// them over cumulative, and a frame that fits the terminal.
#include <gtest/gtest.h>

#include <algorithm>

#include "cli/top_view.h"
#include "core/error.h"
#include "core/format.h"

namespace lockscope::cli {
namespace {

LockInfo lock(int64_t id, const std::string& name, const std::string& caller, const std::string& kind = "mutex")
{
    LockInfo l;
    l.id = id;
    l.name = name;
    l.kind = kind;
    l.caller = caller;
    return l;
}

LockInterval row(int64_t id, uint64_t contentions, uint64_t wait_ns, uint64_t spin_failures)
{
    LockInterval li;
    li.lock_id = id;
    li.counters.contentions = contentions;
    li.counters.wait_ns = wait_ns;
    li.counters.spin_attempts = contentions;
    li.counters.spin_failures = spin_failures;
    return li;
}

IntervalBatch interval(int64_t index, std::vector<LockInterval> locks, std::vector<TaskStats> tasks = {})
{
    IntervalBatch b;
    b.totals.run = 1;
    b.totals.index = index;
    b.totals.start_ns = uint64_t(index) * 2000000000ull;
    b.totals.end_ns = b.totals.start_ns + 2000000000ull;  // 2 s intervals
    b.totals.cpu_ns = 4000000000ull;
    b.totals.idle_ns = 1000000000ull;
    for (const LockInterval& l : locks)
        b.totals.counters.add(l.counters);
    b.locks = std::move(locks);
    b.tasks = std::move(tasks);
    return b;
}

const std::vector<LockInfo> kLocks{lock(1, "pipe->mutex", "anon_pipe_read"), lock(2, "i_rwsem", "do_unlinkat", "rwsem"),
                                   lock(3, "pipe->mutex", "anon_pipe_write")};

std::vector<std::string> names(const TopFrame& f)
{
    std::vector<std::string> out;
    for (const ReportRow& r : f.rows)
        out.push_back(r.name);
    return out;
}

TEST(TopView, SortsByTheChosenKey)
{
    TopModel model;
    EXPECT_FALSE(model.has_interval());
    // i_rwsem: most wait; pipe->mutex: most contentions and spin failures.
    model.update(interval(0, {row(1, 500, 1000, 9), row(2, 10, 90000, 0), row(3, 300, 1000, 1)}), kLocks, "run");
    ASSERT_TRUE(model.has_interval());
    TopSettings s;
    EXPECT_EQ(names(model.frame(s)), (std::vector<std::string>{"i_rwsem", "pipe->mutex"}));
    s.sort = TopSort::Contentions;
    EXPECT_EQ(names(model.frame(s)), (std::vector<std::string>{"pipe->mutex", "i_rwsem"}));
    EXPECT_EQ(model.frame(s).rows[0].counters.contentions, 800u);
    s.sort = TopSort::SpinFailures;
    EXPECT_EQ(model.frame(s).rows[0].counters.spin_failures, 10u);
    s.lines = 1;
    EXPECT_EQ(model.frame(s).rows.size(), 1u);
    EXPECT_EQ(model.frame(s).rows_total, 2u);
}

TEST(TopView, GroupsByCallerKindAndTaskPerInterval)
{
    TopModel model;
    TaskStats t;
    t.run = 1;
    t.pid = 77;
    t.comm = "worker";
    t.counters.contentions = 100;
    t.counters.wait_ns = 5000;
    model.update(interval(0, {row(1, 100, 5000, 0)}, {t}), kLocks, "run");
    t.counters.contentions = 130;  // cumulative over the run: 30 in this interval
    t.counters.wait_ns = 6000;
    model.update(interval(1, {row(1, 20, 700, 0), row(3, 10, 300, 0), row(2, 1, 50, 0)}, {t}), kLocks, "run");

    TopSettings s;
    s.by = GroupBy::Caller;
    EXPECT_EQ(names(model.frame(s)), (std::vector<std::string>{"anon_pipe_read", "anon_pipe_write", "do_unlinkat"}));
    s.by = GroupBy::Kind;
    EXPECT_EQ(names(model.frame(s)), (std::vector<std::string>{"mutex", "rwsem"}));
    s.by = GroupBy::Task;
    const TopFrame f = model.frame(s);
    ASSERT_EQ(f.rows.size(), 1u);
    EXPECT_EQ(f.rows[0].name, "worker[77]");
    EXPECT_EQ(f.rows[0].counters.contentions, 30u);
    EXPECT_EQ(f.rows[0].counters.wait_ns, 1000u);
    EXPECT_DOUBLE_EQ(f.run_seconds, 4.0);
}

TEST(TopView, FrameShowsRatesIdleAndFitsTheWidth)
{
    TopModel model;
    model.update(interval(0, {row(1, 4000, 2000000, 40)}), kLocks, "run");
    TopSettings s;
    const std::vector<std::string> lines = render_top(model.frame(s), s, "system-wide", 80, true);
    std::string all;
    for (const std::string& l : lines) {
        EXPECT_LE(display_width(l), 80u) << l;
        all += l + "\n";
    }
    EXPECT_NE(all.find("lockscope top: system-wide"), std::string::npos) << all;
    EXPECT_NE(all.find("contentions 2.00k/s"), std::string::npos) << all;  // 4000 in 2 s
    EXPECT_NE(all.find("spin-failure rate 1.0%"), std::string::npos) << all;
    EXPECT_NE(all.find("CPU idle 25.0%"), std::string::npos) << all;
    EXPECT_NE(all.find("keys:"), std::string::npos) << all;
    EXPECT_NE(all.find("pipe->mutex"), std::string::npos) << all;
    EXPECT_EQ(render_top(model.frame(s), s, "x", 80, false).size(), lines.size() - 1);
    EXPECT_EQ(all.find("SCOPE"), std::string::npos) << "no user locks recorded: no scope column\n" << all;
}

// A run's user-lock rows, cumulative over the run as the recorder hands them over.
UserLockRow user_lock(const std::string& name, uint64_t waits, uint64_t wait_ns)
{
    // Half of the wait asleep, a quarter runnable, the rest on a CPU.
    UserLockRow u{{.name = name,
                   .name_source = "user-symbol",
                   .module = "app",
                   .kind = "pthread_mutex",
                   .waits = waits,
                   .wait_ns = wait_ns,
                   .oncpu_ns = wait_ns - wait_ns / 2 - wait_ns / 4,
                   .asleep_ns = wait_ns / 2,
                   .runnable_ns = wait_ns / 4}};
    u.run = 1;
    u.pid = 4242;
    return u;
}

// By lock, the recorded process's user locks are rows beside the kernel's,
// with their waits in the interval (not the run's so far), ordered with
// them by wait; the header gives the user locks' totals.
TEST(TopView, UserLocksAreRowsWithTheirScope)
{
    TopModel model;
    IntervalBatch first = interval(0, {row(1, 100, 5000, 0)});
    first.user_lock_runs.push_back({.run = 1, .status = "recorded", .pids = "4242"});
    first.user_locks = {user_lock("g_cache_lock", 300, 900000), user_lock("g_idle_lock", 5, 100)};
    model.update(first, kLocks, "run");
    IntervalBatch second = interval(1, {row(1, 100, 5000, 0)});
    second.user_lock_runs = first.user_lock_runs;
    // g_cache_lock: 100 more waits and 2000 ns more wait; g_idle_lock: none.
    second.user_locks = {user_lock("g_cache_lock", 400, 902000), user_lock("g_idle_lock", 5, 100)};
    model.update(second, kLocks, "run");

    TopSettings s;
    const TopFrame f = model.frame(s);
    ASSERT_EQ(f.rows.size(), 2u);
    EXPECT_EQ(f.rows[0].name, "pipe->mutex");  // 5000 ns of wait
    EXPECT_EQ(f.rows[0].scope, LockScope::Kernel);
    EXPECT_EQ(f.rows[1].name, "g_cache_lock");  // 2000 ns
    EXPECT_EQ(f.rows[1].scope, LockScope::User);
    EXPECT_EQ(f.rows[1].counters.contentions, 100u);
    EXPECT_EQ(f.rows[1].counters.wait_ns, 2000u);
    EXPECT_EQ(f.rows[1].counters.sleep_ns, 1000u);
    EXPECT_EQ(f.user_waits, 100u);

    const std::vector<std::string> lines = render_top(f, s, "command app", 100, false);
    std::string all;
    for (const std::string& l : lines)
        all += l + "\n";
    EXPECT_NE(all.find("user locks: 50 waits/s"), std::string::npos) << all;  // 100 in 2 s
    const auto user_line =
        std::find_if(lines.begin(), lines.end(), [](const std::string& l) { return l.starts_with("g_cache_lock"); });
    ASSERT_NE(user_line, lines.end()) << all;
    EXPECT_NE(user_line->find(" user "), std::string::npos) << *user_line;
    EXPECT_NE(all.find("SCOPE"), std::string::npos) << all;

    s.by = GroupBy::Caller;  // the kernel's callers alone
    for (const ReportRow& r : model.frame(s).rows)
        EXPECT_EQ(r.scope, LockScope::Kernel) << r.name;
}

TEST(TopView, KeysCycleAndBadNamesAreUsageErrors)
{
    EXPECT_EQ(next_sort(next_sort(next_sort(TopSort::Wait))), TopSort::Wait);
    EXPECT_EQ(next_group(GroupBy::Lock), GroupBy::Caller);
    // lock → caller → task → cgroup → kind → lock
    GroupBy by = GroupBy::Lock;
    for (int i = 0; i < 5; i++)
        by = next_group(by);
    EXPECT_EQ(by, GroupBy::Lock);
    EXPECT_EQ(next_group(GroupBy::Task), GroupBy::Cgroup);
    // From a grouping or sort the keys do not step through (given on the
    // command line), the first key press goes back to the start.
    EXPECT_EQ(next_group(GroupBy::Instance), GroupBy::Lock);
    EXPECT_EQ(next_sort(TopSort::AvgWait), TopSort::Wait);
    EXPECT_EQ(parse_top_sort("spinfail"), TopSort::SpinFailures);
    EXPECT_THROW(parse_top_sort("fast"), UsageError);
}

}  // namespace
}  // namespace lockscope::cli
