// `lockscope diff` on sessions written through the real SessionWriter:
// verdicts in the right direction, honest "not enough data", locks matched
// by name across kernels, and one clear sentence for bad input.
#include "core/analysis/diff.h"
#include "core/error.h"
#include "core/format.h"
#include "core/storage/session_store.h"
#include "diff_fixture.h"

#include <algorithm>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include <fstream>
#include <sstream>

using namespace lockscope;
using namespace lockscope::testing;

namespace {

SessionSpec baseline(uint64_t seed, int runs = 5, int intervals = 4)
{
    SessionSpec s;
    s.meta = kernel_a_meta();
    s.locks = default_locks();
    s.runs = runs;
    s.intervals = intervals;
    s.seed = seed;
    return s;
}

DiffResult diff_specs(const TempDir& dir, const SessionSpec& a, const SessionSpec& b)
{
    write_session(dir.file("a.lockscope"), a);
    write_session(dir.file("b.lockscope"), b);
    DiffOptions o;
    o.label_a = "a.lockscope";
    o.label_b = "b.lockscope";
    return diff_sessions(load_session(dir.file("a.lockscope")), load_session(dir.file("b.lockscope")), o);
}

const MetricDiff& total(const DiffResult& d, const std::string& metric)
{
    for (const MetricDiff& m : d.totals)
        if (m.metric == metric)
            return m;
    throw std::runtime_error("no total " + metric);
}

const LockDiff& lock(const DiffResult& d, const std::string& name)
{
    for (const LockDiff& l : d.locks)
        if (l.name == name)
            return l;
    throw std::runtime_error("no lock " + name);
}

std::string error_of(const std::function<void()>& f)
{
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    return "(no error)";
}

// A `lockscope bench` session of one lock; wait_ns_per_op 0 as a real bench
// session, which times no waits.
SessionSpec bench_spec(uint64_t seed, const std::string& lock, double wait_ns_per_op, double spin_failure)
{
    SessionSpec s = baseline(seed);
    s.meta = {{"scope", "bench " + lock}};
    s.locks = {{lock, "user-rwsem", "write", 1000, wait_ns_per_op, spin_failure}};
    return s;
}

}  // namespace

TEST(DiffTest, SameSystemTwiceIsNoSignificantDifference)
{
    TempDir dir;
    const DiffResult d = diff_specs(dir, baseline(1), baseline(2));
    EXPECT_TRUE(d.by_runs);
    EXPECT_TRUE(d.metadata.empty());
    EXPECT_TRUE(d.warnings.empty());
    // Rates and times on the log scale, fractions as they are; the runs are
    // the samples (the false-alarm rate over many diffs: diff_property_test).
    for (const MetricDiff& m : d.totals) {
        EXPECT_EQ(m.test.method, m.fraction() ? stats::Method::Welch : stats::Method::WelchLog) << m.metric;
        EXPECT_EQ(m.test.n_a, 5u);
        EXPECT_EQ(m.test.n_b, 5u);
    }
    EXPECT_FALSE(d.any_change()) << format_diff_text(d);
    EXPECT_EQ(total(d, "throughput").verdict, Verdict::NoSignificantDifference);
    EXPECT_EQ(total(d, "spin_failure_rate").verdict, Verdict::NoSignificantDifference);
    EXPECT_EQ(total(d, "throughput").unit, "ops/s");
    // Lock rows are Holm-adjusted as a family: an A/A diff shows no change there.
    for (const LockDiff& l : d.locks)
        for (const MetricDiff& m : l.metrics)
            EXPECT_EQ(m.verdict, Verdict::NoSignificantDifference) << l.name << " " << m.metric;
    EXPECT_EQ(d.locks.size(), 3u);
}

TEST(DiffTest, StrongRegressionIsWorseAndTheReverseIsBetter)
{
    TempDir dir;
    SessionSpec slow = baseline(4);
    slow.ops = 40000;  // −20% throughput
    slow.locks[0].wait_ns_per_op *= 2;
    slow.locks[0].spin_failure = 0.8;
    const DiffResult d = diff_specs(dir, baseline(3), slow);
    EXPECT_EQ(total(d, "throughput").verdict, Verdict::Worse);
    EXPECT_NEAR(total(d, "throughput").test.relative, -0.2, 0.02);
    EXPECT_EQ(total(d, "wait_per_op").verdict, Verdict::Worse);
    EXPECT_EQ(total(d, "spin_failure_rate").verdict, Verdict::Worse);
    const LockDiff& pipe = lock(d, "pipe_inode_info.mutex");
    EXPECT_EQ(d.locks.front().name, "pipe_inode_info.mutex");  // largest effect first
    EXPECT_EQ(pipe.metrics.front().metric, "wait_per_op");
    EXPECT_EQ(pipe.metrics.front().verdict, Verdict::Worse);
    EXPECT_TRUE(d.any_worse());

    TempDir other;
    const DiffResult back = diff_specs(other, slow, baseline(3));
    EXPECT_EQ(total(back, "throughput").verdict, Verdict::Better);
    EXPECT_EQ(lock(back, "pipe_inode_info.mutex").metrics.front().verdict, Verdict::Better);
    EXPECT_FALSE(back.any_worse());
    EXPECT_TRUE(back.any_change());
}

TEST(DiffTest, OneOrTwoShortRunsAreNotEnoughData)
{
    for (auto [runs, intervals] : {std::pair{1, 1}, {1, 2}, {2, 1}}) {
        TempDir dir;
        SessionSpec slow = baseline(6, runs, intervals);
        slow.ops = 10000;  // a huge difference must still not produce a verdict
        const DiffResult d = diff_specs(dir, baseline(5, runs, intervals), slow);
        for (const MetricDiff& m : d.totals)
            EXPECT_EQ(m.verdict, Verdict::NotEnoughData) << m.metric << " " << runs << "x" << intervals;
        EXPECT_FALSE(d.any_change());
        EXPECT_NE(format_diff_text(d).find("not enough data"), std::string::npos);
    }
}

// Intervals of one run cannot show how much runs differ: a single long run
// a side, however many intervals, gets values and changes but no verdict,
// and the diff says how many runs are needed. (Intervals used to be tested
// with a rank test, which called changes between two runs of one system.)
TEST(DiffTest, FewerThanThreeRunsGetNoVerdictAndSayHowManyAreNeeded)
{
    TempDir dir;
    SessionSpec slow = baseline(8, 1, 20);
    slow.ops = 40000;
    const DiffResult d = diff_specs(dir, baseline(7, 1, 20), slow);
    const MetricDiff& tp = total(d, "throughput");
    EXPECT_EQ(tp.test.n_a, 1u);
    EXPECT_EQ(tp.verdict, Verdict::NotEnoughData);
    EXPECT_NEAR(tp.test.relative, -0.2, 0.02) << "the change is still shown";
    EXPECT_NE(tp.test.reason.find("at least 3 runs"), std::string::npos) << tp.test.reason;
    EXPECT_NE(tp.test.reason.find("--repeat 3"), std::string::npos) << tp.test.reason;
    EXPECT_FALSE(d.any_change());
    const std::string text = format_diff_text(d);
    EXPECT_NE(text.find("not enough data for throughput ops/s: the test needs at least 3 runs"), std::string::npos)
        << text;
    EXPECT_NE(tp.test.reason.find("(A has 1, B has 1)"), std::string::npos) << tp.test.reason;
}

TEST(DiffTest, AnotherKernelMatchesLocksByNameAndListsConfigFirst)
{
    TempDir dir;
    SessionSpec rt = baseline(10);
    rt.meta["kernel_release"] = "6.1.0-18-rt-amd64";
    rt.meta["kernel_version"] = "#1 SMP PREEMPT_RT Debian 6.1.76-1";
    rt.meta["config.CONFIG_PREEMPT_RT"] = "y";
    rt.address_base = 0xffff9a0000000000ull;         // other boot, other addresses
    std::reverse(rt.locks.begin(), rt.locks.end());  // other ids
    const DiffResult d = diff_specs(dir, baseline(9), rt);
    EXPECT_TRUE(d.only_a.empty());
    EXPECT_TRUE(d.only_b.empty());
    ASSERT_EQ(d.locks.size(), 3u);
    EXPECT_EQ(lock(d, "inode.i_rwsem").mode, "write");
    EXPECT_EQ(lock(d, "inode.i_rwsem").metrics.front().verdict, Verdict::NoSignificantDifference);
    // PREEMPT_RT changes what every mutex and rwsem row means: it comes first.
    ASSERT_EQ(d.metadata.size(), 3u);
    EXPECT_EQ(d.metadata[0].key, "config.CONFIG_PREEMPT_RT");
    EXPECT_EQ(d.metadata[0].a, "n");
    EXPECT_EQ(d.metadata[0].b, "y");
    EXPECT_EQ(d.metadata[1].key, "kernel_release");
    EXPECT_EQ(d.metadata[2].key, "kernel_version");
    const std::string text = format_diff_text(d);
    EXPECT_LT(text.find("config.CONFIG_PREEMPT_RT"), text.find("totals"));
}

TEST(DiffTest, LocksOnOneSideAreListed)
{
    TempDir dir;
    SessionSpec b = baseline(12);
    b.locks[2] = {"mm_struct.mmap_lock", "rwsem", "read", 300, 9000, 0};
    const DiffResult d = diff_specs(dir, baseline(11), b);
    ASSERT_EQ(d.only_a.size(), 1u);
    EXPECT_EQ(d.only_a[0].name, "rtnl_mutex");
    ASSERT_EQ(d.only_b.size(), 1u);
    EXPECT_EQ(d.only_b[0].name, "mm_struct.mmap_lock");
    EXPECT_GT(d.only_b[0].contentions, 0u);
    EXPECT_NE(format_diff_text(d).find("locks only in B"), std::string::npos);
}

TEST(DiffTest, UnrelatedWorkloadsWarnAndOmitThroughput)
{
    TempDir dir;
    SessionSpec other = baseline(14);
    other.meta["workload"] = "unlink1";
    const DiffResult d = diff_specs(dir, baseline(13), other);
    ASSERT_FALSE(d.warnings.empty());
    EXPECT_NE(d.warnings[0].find("unrelated workloads ('pipe' vs 'unlink1')"), std::string::npos);
    for (const MetricDiff& m : d.totals)
        EXPECT_NE(m.metric, "throughput");
    EXPECT_NE(format_diff_text(d).find("throughput omitted"), std::string::npos);
    EXPECT_EQ(d.metadata.front().key, "workload");
}

// Holders and callers are compared like the counters: a path's share of
// its lock's sampled stacks, per session, with an interval. Offsets differ
// between kernels; the path is matched by function names.
TEST(DiffTest, CallPathsThatAppearOrGrowAreReportedAndSameOnesAreQuiet)
{
    TempDir dir;
    auto with_stacks = [](SessionSpec s, uint64_t write_share, uint64_t io_holders, const char* off) {
        LockSpec& pipe = s.locks[0];
        EXPECT_EQ(pipe.name, "pipe_inode_info.mutex");
        pipe.stacks = {
            {"waiter", {std::string("anon_pipe_write+") + off, "vfs_write+0x1", "ksys_write+0x2"}, write_share},
            {"waiter", {std::string("anon_pipe_read+") + off, "vfs_read+0x1", "ksys_read+0x2"}, 40 - write_share},
            {"holder:running", {"copy_page_from_iter+0x9", "anon_pipe_write+0x3"}, 30},
        };
        if (io_holders)
            pipe.stacks.push_back({"holder:io-wait", {"io_schedule+0x1", "folio_wait_bit+0x5"}, io_holders});
        return s;
    };
    // A/A, other offsets: nothing moved.
    DiffResult same =
        diff_specs(dir, with_stacks(baseline(41), 20, 0, "0x10/0x200"), with_stacks(baseline(42), 20, 0, "0x14/0x210"));
    EXPECT_EQ(same.stack_paths_compared, 3u) << "offsets must not split a path";
    EXPECT_TRUE(same.stack_shifts.empty());
    EXPECT_NE(format_diff_text(same).find("3 paths compared, none moved beyond noise"), std::string::npos);

    // B: writers wait far more often (20 → 35 of 40 per run, 5 runs), and
    // holders now also sleep on I/O, a path A never sampled.
    TempDir dir2, dir3;
    const DiffResult d = diff_specs(dir2, with_stacks(baseline(43), 20, 0, "0x10/0x200"),
                                    with_stacks(baseline(44), 35, 20, "0x10/0x200"));
    ASSERT_EQ(d.stack_paths_compared, 4u);
    const StackShift* writer = nullptr;
    const StackShift* io = nullptr;
    for (const StackShift& sh : d.stack_shifts) {
        if (sh.role == "waiter" && sh.functions.front() == "anon_pipe_write")
            writer = &sh;
        if (sh.role == "holder:io-wait")
            io = &sh;
    }
    ASSERT_NE(writer, nullptr);
    EXPECT_EQ(writer->samples_a, 100u);
    EXPECT_EQ(writer->total_a, 200u);
    EXPECT_NEAR(writer->share.difference, 0.875 - 0.5, 1e-12);
    EXPECT_GT(writer->share.low, 0.0);
    EXPECT_LT(writer->p_adjusted, 0.05);
    ASSERT_NE(io, nullptr);
    EXPECT_TRUE(io->appeared());
    EXPECT_EQ(io->total_b, 250u) << "a holder path's share is of the lock's holder samples";
    EXPECT_NEAR(io->share.p_b, 100.0 / 250.0, 1e-12);
    EXPECT_EQ(io->functions, (std::vector<std::string>{"io_schedule", "folio_wait_bit"}));
    const std::string text = format_diff_text(d);
    EXPECT_NE(text.find("held while io-wait in"), std::string::npos) << text;
    EXPECT_NE(text.find("io_schedule <- folio_wait_bit"), std::string::npos);
    EXPECT_NE(text.find("new in B"), std::string::npos);
    const auto j = nlohmann::json::parse(format_diff_json(d));
    ASSERT_EQ(j["stack_shifts"].size(), d.stack_shifts.size());
    EXPECT_EQ(j["stack_paths_compared"], 4);

    // Too few samples on a side: nothing is compared, and the text says why.
    const DiffResult few = diff_specs(dir3, baseline(45), baseline(46));
    EXPECT_EQ(few.stack_paths_compared, 0u);
    EXPECT_NE(format_diff_text(few).find("none compared"), std::string::npos);
}

TEST(DiffTest, TextFitsHundredColumnsAndJsonIsComplete)
{
    TempDir dir;
    SessionSpec b = baseline(16);
    b.meta["kernel_version"] = std::string(150, 'v');
    b.locks[0].name = "a_lock_name_long_enough_to_need_truncation_in_any_hundred_column_table_at_all";
    const DiffResult d = diff_specs(dir, baseline(15), b);
    std::istringstream lines(format_diff_text(d));
    for (std::string line; std::getline(lines, line);)
        EXPECT_LE(display_width(line), 100u) << line;
    const auto j = nlohmann::json::parse(format_diff_json(d));
    EXPECT_EQ(j["samples"], "runs");
    EXPECT_EQ(j["totals"][0]["metric"], "throughput");
    EXPECT_EQ(j["totals"][0]["test"], "welch-t-log");
    EXPECT_EQ(j["totals"][0]["n_a"], 5);
    EXPECT_TRUE(j["totals"][0].contains("relative_ci"));
    EXPECT_TRUE(j["totals"][0].contains("p_adjusted"));
    EXPECT_EQ(j["locks"].size(), 2u);  // the renamed lock is one-sided
    EXPECT_EQ(j["only_a"].size(), 1u);
    EXPECT_EQ(j["metadata"][0]["key"], "kernel_version");
}

TEST(DiffTest, BadInputIsOneClearSentence)
{
    TempDir dir;
    write_session(dir.file("good.lockscope"), baseline(1));
    const Session good = load_session(dir.file("good.lockscope"));

    std::ofstream(dir.file("notes.txt")) << "not a session\n";
    EXPECT_NE(error_of([&] { load_session(dir.file("notes.txt")); }).find("is not a lockscope session"),
              std::string::npos);

    write_session(dir.file("future.lockscope"), baseline(2));
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(dir.file("future.lockscope").c_str(), &db), SQLITE_OK);
    sqlite3_exec(db, "PRAGMA user_version = 99;", nullptr, nullptr, nullptr);
    sqlite3_close(db);
    EXPECT_NE(error_of([&] { load_session(dir.file("future.lockscope")); }).find("use a newer lockscope"),
              std::string::npos);

    auto w = SessionWriter::create(dir.file("empty.lockscope"), false);
    w.set_meta(kernel_a_meta());
    w.close();
    const Session empty = load_session(dir.file("empty.lockscope"));
    DiffOptions o;
    o.label_b = "empty.lockscope";
    EXPECT_EQ(error_of([&] { diff_sessions(good, empty, o); }),
              "cannot diff session 'empty.lockscope' (it has no runs; it was probably interrupted before "
              "recording started)");

    auto w2 = SessionWriter::create(dir.file("started.lockscope"), false);
    w2.set_meta(kernel_a_meta());
    w2.begin_run("run 1", 1);
    w2.close();
    EXPECT_NE(error_of([&] {
                  diff_sessions(good, load_session(dir.file("started.lockscope")), o);
              }).find("no recorded intervals"),
              std::string::npos);

    o.alpha = 0;
    EXPECT_NE(error_of([&] { diff_sessions(good, good, o); }).find("alpha"), std::string::npos);
}

TEST(DiffTest, ALockWhoseKindChangedIsComparedUnderItsClassAndTheChangeShown)
{
    // PREEMPT_RT: the pipe's mutex is an rtmutex; its class stays the same.
    TempDir dir;
    SessionSpec b = baseline(16);
    b.locks[0].kind = "rtmutex";
    b.locks[0].wait_ns_per_op *= 3;
    write_session(dir.file("a.lockscope"), baseline(15));
    write_session(dir.file("b.lockscope"), b);
    const DiffResult d =
        diff_sessions(load_session(dir.file("a.lockscope")), load_session(dir.file("b.lockscope")), {});
    EXPECT_TRUE(d.only_a.empty());
    EXPECT_TRUE(d.only_b.empty());
    const LockDiff& l = lock(d, "pipe_inode_info.mutex");
    EXPECT_EQ(l.kind, "mutex");
    EXPECT_EQ(l.kind_b, "rtmutex");
    EXPECT_EQ(l.metrics.front().verdict, Verdict::Worse) << format_diff_text(d);
    EXPECT_NE(format_diff_text(d).find("pipe_inode_info.mutex (mutex → rtmutex)"), std::string::npos)
        << format_diff_text(d);
    EXPECT_EQ(nlohmann::json::parse(format_diff_json(d))["locks"][0]["kind_b"], "rtmutex");
}

TEST(DiffTest, SessionsFromBeforeLockIdentityPairWithTheirClasses)
{
    TempDir dir;
    SessionSpec old = baseline(15);
    old.locks[0].name = "pipe->mutex";  // as lockscope named it before kernel data did
    old.locks[1].name = "i_rwsem";
    write_session(dir.file("a.lockscope"), old);
    write_session(dir.file("b.lockscope"), baseline(16));
    const DiffResult d =
        diff_sessions(load_session(dir.file("a.lockscope")), load_session(dir.file("b.lockscope")), {});
    EXPECT_TRUE(d.only_a.empty()) << format_diff_text(d);
    EXPECT_TRUE(d.only_b.empty()) << format_diff_text(d);
    EXPECT_NO_THROW(lock(d, "pipe_inode_info.mutex"));
    EXPECT_NO_THROW(lock(d, "inode.i_rwsem"));
}

TEST(DiffTest, PairedLocksAreComparedAlthoughTheirNamesDiffer)
{
    TempDir dir;
    SessionSpec b = baseline(16);
    b.locks[0].name = "pipe_inode_info.mutex2";  // renamed on B's "kernel"
    b.locks[0].wait_ns_per_op *= 3;
    write_session(dir.file("a.lockscope"), baseline(15));
    write_session(dir.file("b.lockscope"), b);
    const Session sa = load_session(dir.file("a.lockscope")), sb = load_session(dir.file("b.lockscope"));

    const DiffResult unpaired = diff_sessions(sa, sb, {});
    EXPECT_EQ(unpaired.only_a.size(), 1u);
    EXPECT_EQ(unpaired.only_b.size(), 1u);

    DiffOptions o;
    o.pairs = {{"pipe_inode_info.mutex", "pipe_inode_info.mutex2"}, {"no_such_lock", "other"}};
    const DiffResult d = diff_sessions(sa, sb, o);
    EXPECT_TRUE(d.only_a.empty());
    EXPECT_TRUE(d.only_b.empty());
    const LockDiff& l = lock(d, "pipe_inode_info.mutex");
    EXPECT_EQ(l.name_b, "pipe_inode_info.mutex2");
    EXPECT_EQ(l.metrics.front().verdict, Verdict::Worse) << format_diff_text(d);
    EXPECT_NE(format_diff_text(d).find("pipe_inode_info.mutex (mutex) (A) vs pipe_inode_info.mutex2 (B)"),
              std::string::npos)
        << format_diff_text(d);
    EXPECT_EQ(nlohmann::json::parse(format_diff_json(d))["locks"][0]["name_b"], "pipe_inode_info.mutex2");
    ASSERT_EQ(d.warnings.size(), 1u);
    EXPECT_NE(d.warnings[0].find("--pair no_such_lock=other matched no lock"), std::string::npos);
}

TEST(DiffTest, TwoBenchSessionsOfOneLockEachComparePolicies)
{
    TempDir dir;
    SessionSpec a = bench_spec(17, "rwsem@4.7-hacked", 20000, 0.1), b = bench_spec(18, "rwsem@4.2", 20000, 0.4);
    const DiffResult d = diff_specs(dir, a, b);
    ASSERT_EQ(d.locks.size(), 1u) << format_diff_text(d);
    EXPECT_EQ(d.locks[0].name, "rwsem@4.7-hacked");
    EXPECT_EQ(d.locks[0].name_b, "rwsem@4.2");
    EXPECT_EQ(total(d, "spin_failure_rate").verdict, Verdict::Worse) << format_diff_text(d);
    EXPECT_NE(format_diff_text(d).find("bench sessions of one lock each"), std::string::npos);

    // Not bench sessions: one lock each is not reason enough to pair them.
    a.meta = b.meta = kernel_a_meta();
    TempDir other;
    const DiffResult k = diff_specs(other, a, b);
    EXPECT_TRUE(k.locks.empty());
    EXPECT_EQ(k.only_a.size(), 1u);
}

TEST(DiffTest, WaitsThatWereNeverTimedAreLeftOutNotShownAsZero)
{
    // A real bench session counts contentions and spin outcomes but times no
    // wait: "wait per op 0ns, no significant difference" would be a claim.
    TempDir dir;
    const DiffResult d =
        diff_specs(dir, bench_spec(20, "rwsem@4.7-hacked", 0, 0.1), bench_spec(21, "rwsem@4.2", 0, 0.4));
    for (const MetricDiff& m : d.totals) {
        EXPECT_NE(m.metric, "wait_per_op");
        EXPECT_NE(m.metric, "spin_share");
        EXPECT_NE(m.metric, "offcpu_share");
    }
    EXPECT_EQ(total(d, "spin_failure_rate").verdict, Verdict::Worse) << format_diff_text(d);
    ASSERT_EQ(d.locks.size(), 1u);
    for (const MetricDiff& m : d.locks[0].metrics)
        EXPECT_NE(m.metric, "wait_per_op");
    EXPECT_TRUE(std::any_of(d.notes.begin(), d.notes.end(), [](const std::string& n) {
        return n.find("does not time waits") != std::string::npos;
    })) << format_diff_text(d);
    EXPECT_NE(format_diff_text(d).find("largest change in contentions first"), std::string::npos);
}

TEST(DiffTest, SelectRunsKeepsTheMatchingRunsAndTheirLocks)
{
    TempDir dir;
    write_session(dir.file("s.lockscope"), baseline(19));  // runs "run 1" .. "run 5"
    const Session s = load_session(dir.file("s.lockscope"));
    const Session two = select_runs(s, "run [12]");
    ASSERT_EQ(two.runs.size(), 2u);
    EXPECT_EQ(two.runs[0].label, "run 1");
    EXPECT_EQ(two.runs[1].label, "run 2");
    for (const IntervalTotals& in : two.intervals)
        EXPECT_TRUE(in.run == two.runs[0].id || in.run == two.runs[1].id);
    EXPECT_EQ(two.intervals.size(), 2 * s.intervals.size() / 5);
    for (const LockInterval& li : two.lock_intervals)
        EXPECT_TRUE(li.run == two.runs[0].id || li.run == two.runs[1].id);
    EXPECT_EQ(two.locks.size(), s.locks.size());

    const std::string e = error_of([&] { select_runs(s, "rwsem*"); });
    EXPECT_NE(e.find("no run matches 'rwsem*'"), std::string::npos) << e;
    EXPECT_NE(e.find("'run 1'"), std::string::npos) << e;
}

TEST(DiffTest, UserLocksArePairedByNameAndKindAndComparedRunByRun)
{
    TempDir dir;
    SessionSpec a = baseline(21), b = baseline(22);
    a.user_locks = {{"g_cache_lock", "pthread_mutex"}, {"g_table_lock", "pthread_rwlock/r"}};
    b.user_locks = a.user_locks;
    b.user_locks[0].wait_ns_per_wait *= 2;  // the cache lock's waits last twice as long
    const DiffResult d = diff_specs(dir, a, b);
    ASSERT_TRUE(d.by_runs);
    const LockDiff& cache = lock(d, "g_cache_lock");
    EXPECT_EQ(cache.kind, "pthread_mutex");
    EXPECT_EQ(cache.metrics.front().verdict, Verdict::Worse);
    EXPECT_NEAR(cache.metrics.front().test.relative, 1.0, 0.15);
    const LockDiff& table = lock(d, "g_table_lock");
    EXPECT_EQ(table.kind, "pthread_rwlock/r");
    for (const MetricDiff& m : table.metrics)
        EXPECT_EQ(m.verdict, Verdict::NoSignificantDifference) << m.metric;
    // The kernel's totals are the kernel's: user-lock waits are not in them.
    EXPECT_EQ(total(d, "contentions_per_s").verdict, Verdict::NoSignificantDifference);

    // A user lock on one side only is listed, as a kernel lock is.
    TempDir one;
    SessionSpec without = baseline(23);
    const DiffResult gone = diff_specs(one, a, without);
    EXPECT_TRUE(std::any_of(gone.only_a.begin(), gone.only_a.end(), [](const OneSidedLock& l) {
        return l.name == "g_cache_lock" && l.kind == "pthread_mutex";
    }));
}

TEST(DiffTest, UserLocksOfSingleRunSessionsAreMatchedWithoutAVerdict)
{
    TempDir dir;
    SessionSpec a = baseline(24, 1, 6), b = baseline(25, 1, 6);
    a.user_locks = b.user_locks = {{"g_cache_lock", "pthread_mutex"}};
    const DiffResult d = diff_specs(dir, a, b);
    const LockDiff& cache = lock(d, "g_cache_lock");
    for (const MetricDiff& m : cache.metrics)
        EXPECT_EQ(m.verdict, Verdict::NotEnoughData) << m.metric;
}

// A user lock of a session older than format 9 keeps no holder split: its
// parts read 0, an unknown of 100%, which is no change against a newer
// session's parts (the kernel rows have their own rule, by format 7).
TEST(DiffTest, UserLocksOfAnOlderFormatHaveNoHolderParts)
{
    TempDir dir;
    SessionSpec spec_a = baseline(26), spec_b = baseline(27);
    spec_a.user_locks = spec_b.user_locks = {{"g_cache_lock", "pthread_mutex"}};
    write_session(dir.file("a.lockscope"), spec_a);
    write_session(dir.file("b.lockscope"), spec_b);
    Session a = load_session(dir.file("a.lockscope"));
    const Session b = [&] {
        Session s = load_session(dir.file("b.lockscope"));
        for (UserLockRow& u : s.user_locks)
            u.holder_running_ns = u.wait_ns / 2;  // B's holders ran half of the wait
        return s;
    }();
    const auto holder_metrics = [](const DiffResult& d) {
        const LockDiff& cache = lock(d, "g_cache_lock");
        return std::count_if(cache.metrics.begin(), cache.metrics.end(),
                             [](const MetricDiff& m) { return m.metric.starts_with("holder_"); });
    };
    ASSERT_GT(holder_metrics(diff_sessions(a, b, {})), 0) << "both of format 9: the parts are compared";
    a.schema_version = 8;
    const DiffResult d = diff_sessions(a, b, {});
    EXPECT_EQ(holder_metrics(d), 0);
    EXPECT_FALSE(lock(d, "g_cache_lock").metrics.empty()) << "the lock's other metrics are still compared";
}
