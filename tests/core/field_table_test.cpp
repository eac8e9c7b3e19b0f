// The counter and loss field tables (kCounterFields, kLostFields, from
// bpf/lockscope_abi.h's LS_LOCK_COUNTERS and LS_LOST_CAUSES) drive every
// consumer: a field added there is summed, subtracted, stored, loaded and
// printed with no other edit. Each test fills every field with a distinct
// value through the table, so a consumer that names fields by hand and
// misses one fails here.
#include "core/analysis/report.h"
#include "pipeline/rollup.h"
#include "core/render/counter_columns.h"
#include "core/render/export.h"
#include "core/storage/session_schema.h"
#include "core/storage/session_store.h"
#include "sample_session.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <set>
#include <sstream>
#include <string>
#include <vector>

using namespace lockscope;
using lockscope::testing::TempDir;

namespace {

// Field i is base + i + 1; owner and histogram entries too, after them.
LockCounters distinct_counters(uint64_t base)
{
    LockCounters c;
    uint64_t v = base;
    for (const CounterField& f : kCounterFields)
        c.*f.member = ++v;
    for (uint64_t& o : c.owner)
        o = ++v;
    for (uint64_t& h : c.hist)
        h = ++v;
    return c;
}

LostCounters distinct_lost(uint64_t base)
{
    LostCounters l;
    uint64_t v = base;
    for (const LostField& f : kLostFields)
        l.*f.member = ++v;
    return l;
}

void expect_every_counter(const LockCounters& got, const LockCounters& want, const std::string& where)
{
    for (const CounterField& f : kCounterFields)
        EXPECT_EQ(got.*f.member, want.*f.member) << where << ": " << f.name;
    EXPECT_EQ(got.owner, want.owner) << where;
    EXPECT_EQ(got.hist, want.hist) << where;
}

void expect_every_loss(const LostCounters& got, const LostCounters& want, const std::string& where)
{
    for (const LostField& f : kLostFields)
        EXPECT_EQ(got.*f.member, want.*f.member) << where << ": " << f.name;
}

std::vector<std::string> split_csv_line(const std::string& line)
{
    std::vector<std::string> out(1);
    for (char ch : line) {
        if (ch == ',')
            out.emplace_back();
        else
            out.back() += ch;
    }
    return out;
}

// A one-run, one-lock, one-interval session with distinct counters.
Session one_lock_session(const LockCounters& c, const LostCounters& lost)
{
    Session s;
    RunInfo run;
    run.id = 1;
    run.label = "run";
    run.start_ns = 1'000'000'000;
    run.end_ns = 2'000'000'000;
    run.status = "complete";
    run.lost = lost;
    s.runs.push_back(run);
    LockInfo lock;
    lock.id = 1;
    lock.name = "pipe_inode_info.mutex";
    lock.kind = "mutex";
    s.locks.push_back(lock);
    IntervalTotals in;
    in.run = 1;
    in.start_ns = run.start_ns;
    in.end_ns = run.end_ns;
    in.cpu_ns = 2'000'000'000;
    in.counters = c;
    in.lost = lost.total();
    s.intervals.push_back(in);
    s.lock_intervals.push_back({1, 0, 1, c});
    return s;
}

}  // namespace

TEST(FieldTable, NamesAreUniqueAndAreTheSessionColumns)
{
    std::set<std::string> names;
    std::string columns;
    for (const CounterField& f : kCounterFields) {
        EXPECT_TRUE(names.insert(f.name).second) << f.name;
        EXPECT_NE(std::string(f.help), "") << f.name;
        columns += std::string(f.name) + ", ";
    }
    EXPECT_EQ(std::string(detail::kCounterColumns), columns + "owner, hist");
    EXPECT_EQ(detail::kCounterColumnCount, int(std::size(kCounterFields)) + 2);

    std::vector<std::string> lost_columns;
    for (const LostField& f : kLostFields) {
        EXPECT_TRUE(names.insert(std::string("lost:") + f.name).second) << f.name;
        EXPECT_EQ(std::string(f.column), std::string("lost_") + f.name);
        lost_columns.push_back(f.column);
    }
    EXPECT_EQ(detail::lost_column_names(), lost_columns);
    // The columns every version-1 file has are still read under their names.
    for (const char* v1 : detail::kLostColumnsInEveryVersion1)
        EXPECT_NE(std::find(lost_columns.begin(), lost_columns.end(), v1), lost_columns.end()) << v1;
}

TEST(FieldTable, AddSumsEveryCountAndKeepsTheLargestMax)
{
    const LockCounters a = distinct_counters(10), b = distinct_counters(1000);
    LockCounters sum = a;
    sum.add(b);
    for (const CounterField& f : kCounterFields)
        EXPECT_EQ(sum.*f.member, f.merge == Merge::max ? b.*f.member : a.*f.member + b.*f.member) << f.name;

    const LostCounters la = distinct_lost(10), lb = distinct_lost(1000);
    LostCounters lsum = la;
    lsum.add(lb);
    uint64_t total = 0;
    for (const LostField& f : kLostFields) {
        EXPECT_EQ(lsum.*f.member, la.*f.member + lb.*f.member) << f.name;
        EXPECT_EQ(lsum.since(la).*f.member, lb.*f.member) << f.name;
        EXPECT_EQ(la.since(lsum).*f.member, 0u) << f.name;  // never below zero
        total += la.*f.member;
    }
    EXPECT_EQ(la.total(), total);
}

// The run's lost counters are rebased on the counts before the run, every
// cause (rollup once missed ring_buffer: 8 of 9 were rebased by hand), and so
// are its other counts; every lock and task counter is an interval delta.
TEST(FieldTable, RollupSubtractsEveryCounterAndRebasesEveryLoss)
{
    const LockCounters before = distinct_counters(1'000'000), step = distinct_counters(0);
    LockCounters after = before;
    after.add(step);
    for (const CounterField& f : kCounterFields)
        if (f.merge == Merge::max)
            after.*f.member = before.*f.member + 1;  // a new longest wait

    RawSnapshot s0;
    s0.cpus = 1;
    s0.taken_ns = 1'000;
    RawLock lock;
    lock.address = 0x1000;
    lock.flags = LCB_F_MUTEX;
    lock.counters = before;
    s0.locks = {lock};
    RawTask task;
    task.task.pid = 7;
    task.task.counters = before;
    s0.tasks = {task};
    s0.counters.lost = distinct_lost(500);
    uint64_t v = 600;
#define LOCKSCOPE_X(name, version) s0.counters.name = ++v;
    LS_RUN_COUNTS(LOCKSCOPE_X)
#undef LOCKSCOPE_X

    Rollup r(KernelSymbols::parse(""));
    r.baseline(s0);
    RawSnapshot s1 = s0;
    s1.taken_ns = 2'000;
    s1.locks[0].counters = after;
    s1.tasks[0].task.counters = after;
    const LostCounters lost_step = distinct_lost(0);
    s1.counters.lost.add(lost_step);
    v = 0;
#define LOCKSCOPE_X(name, version) s1.counters.name += ++v;
    LS_RUN_COUNTS(LOCKSCOPE_X)
#undef LOCKSCOPE_X
    const IntervalBatch b = r.next(s1, 1, 0);

    LockCounters want = step;
    for (const CounterField& f : kCounterFields)
        if (f.merge == Merge::max)
            want.*f.member = std::min(after.*f.member, step.wait_ns);  // bounded by the interval's waits
    ASSERT_EQ(b.locks.size(), 1u);
    expect_every_counter(b.locks[0].counters, want, "lock delta");
    expect_every_counter(b.totals.counters, want, "interval totals");
    expect_every_counter(counter_delta(after, before), want, "counter_delta");
    ASSERT_EQ(b.tasks.size(), 1u);
    for (const CounterField& f : kCounterFields) {
        if (f.merge == Merge::sum) {
            EXPECT_EQ(b.tasks[0].counters.*f.member, step.*f.member) << "task: " << f.name;
        }
    }

    expect_every_loss(b.run.lost, lost_step, "run lost");
    v = 0;
    for (const RunField& f : kRunFields)
        EXPECT_EQ(b.run.*f.member, ++v) << "run: " << f.name;
    EXPECT_EQ(b.totals.lost, lost_step.total());
}

TEST(FieldTable, EveryCounterAndLossSurvivesASessionRoundTrip)
{
    TempDir dir;
    const std::string path = dir.file("fields.lockscope");
    IntervalBatch batch;
    RunInfo done;
    {
        auto w = SessionWriter::create(path, false);
        const int64_t run = w.begin_run("fields", 1'000);
        batch.totals.run = run;
        batch.totals.start_ns = 1'000;
        batch.totals.end_ns = 2'000;
        batch.totals.counters = distinct_counters(100);
        batch.totals.lost = 12;
        LockInfo lock;
        lock.id = 1;
        lock.name = "l";
        lock.kind = "mutex";
        batch.new_locks = {lock};
        batch.locks = {{run, 0, 1, distinct_counters(200)}};
        TaskStats task;
        task.run = run;
        task.pid = 9;
        task.comm = "t";
        task.counters = distinct_counters(300);
        batch.tasks = {task};
        batch.run.id = run;
        batch.run.lost = distinct_lost(400);
        w.write_interval(batch);
        done = batch.run;
        done.end_ns = 3'000;
        done.status = "complete";
        done.lost = distinct_lost(500);
        uint64_t v = 600;
        for (const RunField& f : kRunFields)
            done.*f.member = ++v;
        w.end_run(done);
    }
    const Session s = load_session(path);
    EXPECT_TRUE(s.warnings.empty());
    ASSERT_EQ(s.intervals.size(), 1u);
    expect_every_counter(s.intervals[0].counters, batch.totals.counters, "intervals");
    ASSERT_EQ(s.lock_intervals.size(), 1u);
    expect_every_counter(s.lock_intervals[0].counters, batch.locks[0].counters, "lock_intervals");
    ASSERT_EQ(s.tasks.size(), 1u);
    expect_every_counter(s.tasks[0].counters, batch.tasks[0].counters, "tasks");
    ASSERT_EQ(s.runs.size(), 1u);
    expect_every_loss(s.runs[0].lost, done.lost, "runs");
    for (const RunField& f : kRunFields)
        EXPECT_EQ(s.runs[0].*f.member, done.*f.member) << "runs: " << f.name;
}

TEST(FieldTable, JsonAndCsvCarryEveryFieldUnderItsName)
{
    const LockCounters c = distinct_counters(100);
    const LostCounters lost = distinct_lost(1000);
    const Session s = one_lock_session(c, lost);
    ReportOptions options;
    options.top = 0;
    const Report rep = build_report(s, options);

    const auto j = nlohmann::json::parse(format_json(rep));
    ASSERT_EQ(j["locks"].size(), 1u);
    for (const CounterField& f : kCounterFields) {
        EXPECT_EQ(j["totals"][f.name].get<uint64_t>(), c.*f.member) << f.name;
        EXPECT_EQ(j["locks"][0][f.name].get<uint64_t>(), c.*f.member) << f.name;
    }
    for (const LostField& f : kLostFields)
        EXPECT_EQ(j["totals"]["lost_by_cause"][f.name].get<uint64_t>(), lost.*f.member) << f.name;
    EXPECT_EQ(j["totals"]["lost_by_cause"].size(), std::size(kLostFields));

    // The text report names every cause that lost something.
    const std::string text = format_text(rep);
    for (const LostField& f : kLostFields)
        EXPECT_NE(text.find(std::string(f.label) + " "), std::string::npos) << f.label << "\n" << text;

    // Both CSV tables: every field is a column, holding its value.
    std::ostringstream locks_csv, intervals_csv;
    export_csv(s, CsvTable::Locks, locks_csv);
    export_csv(s, CsvTable::Intervals, intervals_csv);
    for (const std::string& table : {locks_csv.str(), intervals_csv.str()}) {
        std::istringstream lines(table);
        std::string header, row;
        std::getline(lines, header);
        std::getline(lines, row);
        const auto names = split_csv_line(header), values = split_csv_line(row);
        ASSERT_EQ(names.size(), values.size()) << table;
        for (const CounterField& f : kCounterFields) {
            auto at = std::find(names.begin(), names.end(), f.name);
            ASSERT_NE(at, names.end()) << f.name << " missing from " << header;
            EXPECT_EQ(values[size_t(at - names.begin())], std::to_string(c.*f.member)) << f.name;
        }
    }
}

// The public column order of both CSV tables, as released: the table must
// not reorder them (scripts read CSV by position).
TEST(FieldTable, CsvHeadersKeepTheirReleasedOrder)
{
    EXPECT_EQ(counter_csv_header({kSpinFailureRate, kOffcpuNs, kMeanWaitNs}),
              "contentions,spin_attempts,spin_failures,spin_successes,spin_failure_rate,wait_ns,spin_ns,"
              "offcpu_ns,sleep_ns,preempt_ns,sleeps,preemptions,max_wait_ns,mean_wait_ns,errors,wakeups,"
              "timed,wait_var_us2,spin_offcpu_ns,spin_yields");
    EXPECT_EQ(counter_csv_header({kOffcpuNs}),
              "contentions,spin_attempts,spin_failures,spin_successes,wait_ns,spin_ns,offcpu_ns,sleep_ns,"
              "preempt_ns,sleeps,preemptions,max_wait_ns,errors,wakeups,timed,wait_var_us2,spin_offcpu_ns,spin_yields");
}
