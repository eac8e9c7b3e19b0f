// `lockscope bench` results as session rows (bench_session) and as the
// summary table (bench_table): the conversion keeps every number, lock rows
// are shared across runs, a stored bench session loads and reports, and the
// table's medians and per-repeat ratios are what they claim.
#include "benchlib/bench_session.h"
#include "benchlib/bench_table.h"
#include "core/analysis/report.h"
#include "core/storage/session_store.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <cstdio>
#include <string>

namespace lockscope {
namespace {

namespace rb = reflock::harness;

rb::Params params(const char* lock, unsigned threads = 4, unsigned read_percent = 0)
{
    rb::Params p;
    p.lock = rb::parse_lock(lock);
    p.threads = threads;
    p.read_percent = read_percent;
    return p;
}

TEST(BenchSession, RunLabelNamesVariantThreadsAndRepeat)
{
    EXPECT_EQ(bench_session::run_label(params("rwsem@4.2"), 1), "rwsem@4.2 t=4 #2");
    EXPECT_EQ(bench_session::run_label(params("pthread_mutex", 1), 0), "pthread_mutex t=1 #1");
}

TEST(BenchSession, LockInfoKindAndMode)
{
    const LockInfo m = bench_session::lock_info(params("mutex"));
    EXPECT_EQ(m.name, "mutex");
    EXPECT_EQ(m.kind, "user-mutex");
    EXPECT_EQ(m.mode, "write");
    EXPECT_EQ(bench_session::lock_info(params("pthread_mutex")).kind, "user-mutex");
    const LockInfo r = bench_session::lock_info(params("rwsem@4.7-hacked"));
    EXPECT_EQ(r.name, "rwsem@4.7-hacked");
    EXPECT_EQ(r.kind, "user-rwsem");
    EXPECT_EQ(bench_session::lock_info(params("std_shared_mutex", 4, 100)).mode, "read");
    EXPECT_EQ(bench_session::lock_info(params("pthread_rwlock", 4, 30)).mode, "");  // mixed: not split
}

TEST(BenchSession, CountersMapOneToOne)
{
    reflock::Counters c;
    c.acquisitions = 1000;
    c.contended = 400;
    c.spin_attempts = 300;
    c.spin_successes = 100;
    c.spin_failures = 200;
    c.sleeps = 150;
    c.sleep_ns = 1'500'000;
    c.wakeups = 140;
    const LockCounters l = bench_session::lock_counters(c);
    EXPECT_EQ(l.contentions, 400u);
    EXPECT_EQ(l.spin_attempts, 300u);
    EXPECT_EQ(l.spin_successes, 100u);
    EXPECT_EQ(l.spin_failures, 200u);
    EXPECT_EQ(l.sleeps, 150u);
    EXPECT_EQ(l.sleep_ns, 1'500'000u);
    EXPECT_EQ(l.wakeups, 140u);
}

TEST(BenchSession, LockRowsAreSharedAcrossRuns)
{
    bench_session::LockTable table;
    std::vector<LockInfo> fresh;
    const int64_t a = table.id_for(params("mutex", 2), fresh);
    const int64_t b = table.id_for(params("rwsem@4.2", 2), fresh);
    EXPECT_EQ(table.id_for(params("mutex", 8), fresh), a);  // other thread count, same lock
    EXPECT_NE(a, b);
    ASSERT_EQ(fresh.size(), 2u);
    EXPECT_EQ(fresh[0].id, a);
    EXPECT_EQ(fresh[1].name, "rwsem@4.2");
}

TEST(BenchSession, IntervalBatchKeepsEveryNumber)
{
    rb::Sample s;
    s.ops = 5000;
    s.wall_s = 0.5;
    s.idle_fraction = 0.25;
    s.counters.contended = 70;
    s.counters.spin_attempts = 60;
    s.counters.spin_failures = 45;
    bench_session::LockTable table;
    const IntervalBatch b =
        bench_session::interval_batch(s, params("rwsem@4.2"), 2, 7, 3, 10'000'000'000ull, 1200, table);
    EXPECT_EQ(b.totals.run, 7);
    EXPECT_EQ(b.totals.index, 3);
    EXPECT_EQ(b.totals.end_ns, 10'000'000'000ull);
    EXPECT_EQ(b.totals.start_ns, 9'500'000'000ull);
    EXPECT_EQ(b.totals.cpu_ns, 1'000'000'000ull);  // 0.5 s x 2 CPUs
    EXPECT_EQ(b.totals.idle_ns, 250'000'000ull);
    EXPECT_DOUBLE_EQ(b.totals.idle_fraction(), 0.25);
    ASSERT_TRUE(b.totals.ops.has_value());
    EXPECT_EQ(*b.totals.ops, 5000);
    EXPECT_EQ(b.totals.counters.contentions, 70u);
    EXPECT_EQ(b.totals.counters.spin_failures, 45u);
    ASSERT_EQ(b.new_locks.size(), 1u);
    ASSERT_EQ(b.locks.size(), 1u);
    EXPECT_EQ(b.locks[0].lock_id, b.new_locks[0].id);
    EXPECT_EQ(b.locks[0].counters, b.totals.counters);
    ASSERT_TRUE(b.run.ops.has_value());
    EXPECT_EQ(*b.run.ops, 6200);  // cumulative over the run
}

TEST(BenchSession, MetaDescribesTheSweep)
{
    bench_session::SweepInfo sweep;
    sweep.locks = {"mutex", "rwsem@4.2"};
    sweep.threads = "1-4";
    sweep.release_window_ns = 500;
    sweep.repeat = 5;
    const auto m = bench_session::sweep_meta(sweep);
    EXPECT_EQ(m.at("recorder"), "bench");
    EXPECT_EQ(m.at("workload"), "bench");
    EXPECT_EQ(m.at("bench.locks"), "mutex,rwsem@4.2");
    EXPECT_EQ(m.at("bench.threads"), "1-4");
    EXPECT_EQ(m.at("bench.release_window_ns"), "500");
    EXPECT_EQ(m.at("bench.repeat"), "5");
}

// A real (short) run stored the way cmd_bench stores it loads and reports.
TEST(BenchSession, StoredRunLoadsAndReports)
{
    const std::string path = ::testing::TempDir() + "bench_session_test." + std::to_string(getpid()) + ".lockscope";
    rb::Params p = params("rwsem@4.2", 3);
    p.critical_ns = 500;
    p.outside_ns = 200;
    p.duration = std::chrono::milliseconds(200);
    p.interval = std::chrono::milliseconds(100);
    const rb::RunResult run = rb::run(p);
    {
        SessionWriter w = SessionWriter::create(path, true);
        w.set_meta(bench_session::sweep_meta({{"rwsem@4.2"}, "3", 500, 200, 0, 0, 200, 100, 1}));
        bench_session::LockTable table;
        const int64_t id = w.begin_run(bench_session::run_label(p, 0), 1'000'000'000);
        uint64_t ops = 0, end = 1'000'000'000;
        for (size_t i = 0; i < run.intervals.size(); i++) {
            end += uint64_t(run.intervals[i].wall_s * 1e9);
            w.write_interval(
                bench_session::interval_batch(run.intervals[i], p, run.cpus, id, int64_t(i), end, ops, table));
            ops += run.intervals[i].ops;
        }
        RunInfo info;
        info.id = id;
        info.end_ns = end;
        info.status = "complete";
        info.ops = double(ops);
        w.end_run(info);
        w.set_meta({{bench_session::kHandoffsKey,
                     bench_session::append_handoffs("", bench_session::run_label(p, 0), run.total.counters.handoffs)}});
        w.close();
    }
    const Session s = load_session(path);
    std::remove(path.c_str());
    EXPECT_TRUE(s.warnings.empty());
    EXPECT_EQ(s.meta_value("recorder"), "bench");
    ASSERT_EQ(s.runs.size(), 1u);
    EXPECT_EQ(s.runs[0].label, "rwsem@4.2 t=3 #1");
    EXPECT_EQ(s.meta_value("bench.handoffs"), "rwsem@4.2 t=3 #1=0");  // 4.7 never hands off
    EXPECT_EQ(s.intervals.size(), run.intervals.size());
    ASSERT_EQ(s.locks.size(), 1u);
    EXPECT_EQ(s.locks[0].kind, "user-rwsem");
    const Report rep = build_report(s, ReportOptions{});
    EXPECT_EQ(rep.totals.counters.contentions, run.total.counters.contended);
    EXPECT_EQ(rep.totals.counters.spin_failures, run.total.counters.spin_failures);
    ASSERT_TRUE(rep.totals.ops_per_s.has_value());
    EXPECT_GT(*rep.totals.ops_per_s, 0);
}

rb::RunResult fake_run(const char* lock, double ops_per_s, uint64_t attempts, uint64_t failures)
{
    rb::RunResult r;
    r.params = params(lock, 2);
    r.total.wall_s = 1;
    r.total.ops = uint64_t(ops_per_s);
    r.total.counters.acquisitions = attempts ? r.total.ops : 0;
    r.total.counters.spin_attempts = attempts;
    r.total.counters.spin_failures = failures;
    r.total.counters.sleeps = failures / 2;
    r.total.counters.handoffs = attempts ? r.total.ops / 100 : 0;
    return r;
}

TEST(BenchSession, HandoffsListEveryRunInOrder)
{
    const std::string one = bench_session::append_handoffs("", "rwsem@5.4 t=4 #1", 7);
    EXPECT_EQ(one, "rwsem@5.4 t=4 #1=7");
    EXPECT_EQ(bench_session::append_handoffs(one, "rwsem@4.8 t=4 #1", 0), "rwsem@5.4 t=4 #1=7; rwsem@4.8 t=4 #1=0");
}

TEST(BenchTable, MedianSpreadAndPerRepeatRatios)
{
    // Repeat 2 is slow for both locks (a noisy neighbour): the raw numbers
    // spread widely, the per-repeat ratio does not.
    std::vector<std::vector<rb::RunResult>> results(2);
    const double base[] = {1000, 400, 1100};
    for (int r = 0; r < 3; r++) {
        results[0].push_back(fake_run("pthread_mutex", base[r], 0, 0));
        results[1].push_back(fake_run("rwsem@4.2", base[r] / 2, 100, 80));
    }
    const auto rows = bench_table::summarize(results, 2);
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[0].lock, "pthread_mutex");
    EXPECT_FALSE(rows[0].has_counters);
    EXPECT_DOUBLE_EQ(rows[0].ops_per_s.median, 1000);
    EXPECT_DOUBLE_EQ(rows[0].ops_per_s.min, 400);
    EXPECT_DOUBLE_EQ(rows[0].ops_per_s.max, 1100);
    EXPECT_EQ(rows[1].baseline, "pthread_mutex");
    EXPECT_TRUE(rows[1].has_counters);
    EXPECT_DOUBLE_EQ(rows[1].ratio.min, 0.5);
    EXPECT_DOUBLE_EQ(rows[1].ratio.max, 0.5);
    EXPECT_DOUBLE_EQ(rows[1].spin_failure_rate.median, 0.8);
    EXPECT_EQ(bench_table::spread_of({4, 1, 3, 2}).median, 2.5);

    const std::string md = bench_table::format_markdown(rows, "ctx");
    EXPECT_NE(md.find("| `rwsem@4.2` | 2 |"), std::string::npos) << md;
    EXPECT_NE(md.find("80.0% (80.0–80.0%)"), std::string::npos) << md;
    EXPECT_NE(md.find("| handoffs/kop |"), std::string::npos) << md;
    EXPECT_NE(md.find("| 10.0 (9.09–10.0) |"), std::string::npos) << md;  // ops / 100 handoffs: 5 for 550 ops
    EXPECT_NE(bench_table::format_text(rows, "ctx").find("vs pthread_mutex"), std::string::npos);
    const auto json = nlohmann::json::parse(bench_table::to_json(rows, "ctx").dump());
    EXPECT_EQ(json.at("params"), "ctx");
    EXPECT_EQ(json.at("rows").at(1).at("ratio").at("values"), nlohmann::json({0.5, 0.5, 0.5}));
}

}  // namespace
}  // namespace lockscope
