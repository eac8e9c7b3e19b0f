// Reports as users read them: totals that add up, rankings, and the public
// JSON/CSV shapes that scripts depend on.
#include "core/analysis/report.h"
#include "core/error.h"
#include "core/format.h"
#include "core/storage/session_store.h"
#include "sample_session.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include <array>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using namespace lockscope;
using lockscope::testing::TempDir;
using lockscope::testing::write_sample;

namespace {

const Session& sample()
{
    return lockscope::testing::loaded_sample();
}

LockCounters sum_rows(const Report& rep)
{
    LockCounters sum;
    for (const auto& r : rep.rows)
        sum.add(r.counters);
    return sum;
}

std::vector<std::string> lines_of(const std::string& text)
{
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        out.push_back(line);
    return out;
}

}  // namespace

TEST(ReportTest, TotalsEqualSumOfRowsWhenTopIsUnlimited)
{
    for (GroupBy by : {GroupBy::Lock, GroupBy::Caller, GroupBy::Kind}) {
        Report rep = build_report(sample(), {.by = by, .top = 0});
        LockCounters rows = sum_rows(rep);
        EXPECT_EQ(rows, rep.totals.counters) << group_by_name(by);
        double shares = 0;
        for (const auto& r : rep.rows)
            shares += r.share_of_wait;
        EXPECT_NEAR(shares, 1.0, 1e-9);
        EXPECT_EQ(rep.rows_total, rep.rows.size());
    }
    Report rep = build_report(sample(), {.top = 0});
    EXPECT_EQ(rep.totals.runs, 2u);
    EXPECT_EQ(rep.totals.intervals, 12u);
    EXPECT_DOUBLE_EQ(rep.totals.duration_s, 12.0);
    // Runs count 6 drops by cause each, intervals only 3: the larger is shown.
    EXPECT_EQ(rep.totals.lost, 12u);
    EXPECT_EQ(rep.totals.lost_by_cause.depth, 2u);
    EXPECT_EQ(rep.totals.lost_by_cause.ring_buffer, 10u);
    EXPECT_EQ(rep.totals.events, 2 * (6 * 10'000u + 15));
    EXPECT_NEAR(rep.totals.idle_fraction, (12 * 1.5e9 + 2 * 15 * 1000) / (12 * 4e9), 1e-12);
    ASSERT_TRUE(rep.totals.ops_per_s);
    EXPECT_NEAR(*rep.totals.ops_per_s, 50'002.5, 1e-6);
    EXPECT_EQ(rep.session.at("host"), "testhost");
}

TEST(ReportTest, GroupsByLockNameAndNamesTheHeaviestCaller)
{
    Report rep = build_report(sample(), {.top = 0});
    ASSERT_EQ(rep.rows.size(), 7u);  // locks 1 and 2 share "pipe->mutex"
    for (size_t i = 1; i < rep.rows.size(); ++i)
        EXPECT_GE(rep.rows[i - 1].counters.wait_ns, rep.rows[i].counters.wait_ns);
    auto pipe =
        std::find_if(rep.rows.begin(), rep.rows.end(), [](const ReportRow& r) { return r.name == "pipe->mutex"; });
    ASSERT_NE(pipe, rep.rows.end());
    // Named after caller_1 and caller_2, but every waiter stack sampled on
    // them is in pipe_write: the caller that waited is pipe_write, as by caller.
    EXPECT_EQ(pipe->caller, "pipe_write");
    EXPECT_EQ(pipe->callers, 3u);
    EXPECT_EQ(pipe->kind, "mutex");
    EXPECT_EQ(pipe->counters.contentions, 2u * ((10 + 20) * 6 + 2 * 21));
    EXPECT_EQ(rep.rows[0].name, "lock_8");

    Report top = build_report(sample(), {.top = 3});
    EXPECT_EQ(top.rows.size(), 3u);
    EXPECT_EQ(top.rows_total, 7u);
    EXPECT_EQ(top.rows[0].name, "lock_8");
}

TEST(ReportTest, GroupsByKindCallerAndTask)
{
    Report kinds = build_report(sample(), {.by = GroupBy::Kind, .top = 0});
    ASSERT_EQ(kinds.rows.size(), 2u);
    EXPECT_EQ(kinds.rows[0].name, "mutex");
    EXPECT_EQ(kinds.rows[1].name, "rwsem/write");
    EXPECT_EQ(kinds.rows[1].mode, "write");

    // Locks 1 and 2 were named after caller_1 and caller_2, but every waiter
    // stack sampled on them is in pipe_write: they are pipe_write's, next to
    // caller_0 .. caller_4 of the other locks.
    Report callers = build_report(sample(), {.by = GroupBy::Caller, .top = 0});
    EXPECT_EQ(callers.rows.size(), 6u);
    EXPECT_EQ(callers.rows[0].name, callers.rows[0].caller);
    EXPECT_TRUE(std::any_of(callers.rows.begin(), callers.rows.end(),
                            [](const ReportRow& r) { return r.name == "pipe_write"; }));

    Report tasks = build_report(sample(), {.by = GroupBy::Task, .top = 0});
    ASSERT_EQ(tasks.rows.size(), 2u);
    EXPECT_EQ(tasks.rows[0].name, "worker[100]");
    EXPECT_EQ(tasks.rows[1].name, "worker, \"2\"[101]");
}

// Tasks publish their totals when switched out, so a recording can stop with
// some contention in no task: by cgroup, that is a row of its own and the
// rows still add up to the totals.
TEST(ReportTest, GroupsByCgroupAndKeepsWhatNoTaskPublished)
{
    Session s = sample();
    const LockCounters all = build_report(s, {.top = 0, .run = 1}).totals.counters;
    for (TaskStats& t : s.tasks) {
        t.counters = LockCounters{};
        if (t.pid == 100) {
            t.cgroup = "/system.slice/db.service";
            t.counters.contentions = all.contentions / 2;
            t.counters.wait_ns = all.wait_ns / 2;
        } else {
            t.cgroup = t.run == 1 ? "" : "/user.slice";  // an old session's task has no cgroup
            t.counters.contentions = 1;
            t.counters.wait_ns = 10;
        }
    }
    const Report rep = build_report(s, {.by = GroupBy::Cgroup, .top = 0, .run = 1});
    std::map<std::string, LockCounters> rows;
    for (const ReportRow& r : rep.rows)
        rows[r.name] = r.counters;
    ASSERT_EQ(rows.size(), 3u);
    EXPECT_EQ(rows["/system.slice/db.service"].contentions, all.contentions / 2);
    EXPECT_EQ(rows["(cgroup unknown)"].contentions, 1u);
    EXPECT_EQ(rows["(not attributed)"].contentions, all.contentions - all.contentions / 2 - 1);
    EXPECT_EQ(rows["(not attributed)"].wait_ns, all.wait_ns - all.wait_ns / 2 - 10);
    EXPECT_EQ(sum_rows(rep).contentions, rep.totals.counters.contentions);
    EXPECT_EQ(sum_rows(rep).wait_ns, rep.totals.counters.wait_ns);
    EXPECT_NE(format_text(rep).find("\ncgroup "), std::string::npos) << format_text(rep);
}

TEST(ReportTest, SelectsOneRun)
{
    Report one = build_report(sample(), {.top = 0, .run = 2});
    EXPECT_EQ(one.totals.runs, 1u);
    EXPECT_EQ(one.totals.intervals, 6u);
    EXPECT_EQ(sum_rows(one), one.totals.counters);
    try {
        build_report(sample(), {.run = 9});
        FAIL();
    } catch (const UsageError& e) {
        EXPECT_STREQ(e.what(), "no run 9 in this session (runs: 1, 2)");
    }
}

TEST(ReportTest, ParsesGroupingOrListsTheChoices)
{
    EXPECT_EQ(parse_group_by("caller"), GroupBy::Caller);
    EXPECT_EQ(parse_group_by("task"), GroupBy::Task);
    try {
        parse_group_by("stack");
        FAIL();
    } catch (const UsageError& e) {
        EXPECT_STREQ(e.what(), "invalid grouping 'stack': use one of lock, caller, task, kind, instance, cgroup");
    }
}

TEST(ReportTest, JsonHasThePublicKeysAndParsesBack)
{
    Report rep = build_report(sample(), {.top = 5});
    auto j = nlohmann::json::parse(format_json(rep));
    for (const char* key : {"session", "totals", "locks"})
        ASSERT_TRUE(j.contains(key)) << key;
    EXPECT_EQ(j["session"]["host"], "testhost");
    const char* counters[] = {"contentions", "spin_attempts", "spin_failures", "spin_failure_rate",
                              "wait_ns",     "spin_ns",       "offcpu_ns",     "sleeps"};
    for (const char* key : counters)
        EXPECT_TRUE(j["totals"].contains(key)) << key;
    for (const char* key : {"idle_fraction", "lost", "lost_by_cause", "ops_per_s", "duration_s"})
        EXPECT_TRUE(j["totals"].contains(key)) << key;
    EXPECT_EQ(j["totals"]["contentions"].get<uint64_t>(), rep.totals.counters.contentions);
    EXPECT_EQ(j["totals"]["lost"].get<uint64_t>(), rep.totals.lost);
    EXPECT_EQ(j["totals"]["hist"].size(), size_t(kHistBuckets));
    EXPECT_DOUBLE_EQ(j["totals"]["spin_failure_rate"].get<double>(), rep.totals.counters.spin_failure_rate());
    ASSERT_EQ(j["locks"].size(), 5u);
    for (const auto& lock : j["locks"]) {
        for (const char* key : {"name", "kind", "mode", "caller"})
            EXPECT_TRUE(lock[key].is_string()) << key;
        for (const char* key : counters)
            EXPECT_TRUE(lock[key].is_number()) << key;
    }
    EXPECT_EQ(j["locks"][0]["name"], rep.rows[0].name);
    EXPECT_EQ(j["locks"][0]["wait_ns"].get<uint64_t>(), rep.rows[0].counters.wait_ns);
}

TEST(ReportTest, CsvQuotesPerRfc4180)
{
    Report rep;
    ReportRow plain, awkward;
    plain.name = "rtnl_mutex";
    plain.kind = "mutex";
    plain.counters.contentions = 4;
    plain.counters.spin_attempts = 4;
    plain.counters.spin_failures = 1;
    awkward.name = "a \"quoted\", name";
    awkward.caller = "line\nbreak";
    rep.rows = {plain, awkward};
    auto lines = lines_of(format_csv(rep));
    ASSERT_EQ(lines.size(), 4u);  // header, plain, awkward split by its embedded newline
    EXPECT_EQ(lines[0].substr(0, 42), "name,kind,mode,caller,contentions,spin_att");
    EXPECT_EQ(lines[1].substr(0, 34), "rtnl_mutex,mutex,,,4,4,1,0,0.25,0,");
    EXPECT_EQ(lines[2], "\"a \"\"quoted\"\", name\",,,\"line");
    size_t header_fields = std::count(lines[0].begin(), lines[0].end(), ',');
    EXPECT_EQ(std::count(lines[1].begin(), lines[1].end(), ','), long(header_fields));
}

TEST(ReportTest, TextStatesTheDefinitionsAndFitsHundredColumns)
{
    Session s = sample();
    s.locks[3].name = std::string(150, 'n');  // names that would blow the table
    s.locks[4].caller = std::string(150, 'c');
    s.meta["kernel_version"] = std::string(200, 'v');
    for (GroupBy by : {GroupBy::Lock, GroupBy::Caller, GroupBy::Task, GroupBy::Kind}) {
        std::string text = format_text(build_report(s, {.by = by, .top = 0}));
        for (const auto& line : lines_of(text))
            EXPECT_LE(display_width(line), 100u) << group_by_name(by) << ": " << line;
        for (const char* phrase : {"contentions", "spin attempts", "spin failures", "spin-failure rate",
                                   "failures / attempts", "spinning", "queued on CPU", "asleep", "runnable", "CPU idle",
                                   "events", "lost", "ring", "testhost", "pipe, 4 threads", "ops/s"})
            EXPECT_NE(text.find(phrase), std::string::npos) << phrase << "\n" << text;
    }
}

TEST(ReportTest, LostIsPrintedEvenWhenZeroAndEmptySessionsReport)
{
    Session empty;
    Report rep = build_report(empty, {});
    std::string text = format_text(rep);
    EXPECT_NE(text.find("lost               0"), std::string::npos) << text;
    EXPECT_NE(text.find("no contention recorded"), std::string::npos) << text;
    auto j = nlohmann::json::parse(format_json(rep));
    EXPECT_EQ(j["totals"]["lost"], 0);
    EXPECT_TRUE(j["totals"]["ops_per_s"].is_null());
    EXPECT_TRUE(j["locks"].is_array());
    EXPECT_EQ(lines_of(format_csv(rep)).size(), 1u);
}

namespace {

Session load_summary(const std::string& path)
{
    LoadOptions options;
    options.lock_intervals = false;
    return load_session(path, options);
}

void exec_sql(const std::string& path, const std::string& sql)
{
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    sqlite3_close(db);
}

// Every grouping, all runs and each run alone: the same report, to the byte.
void expect_same_reports(const Session& full, const Session& summary)
{
    for (GroupBy by : {GroupBy::Lock, GroupBy::Caller, GroupBy::Kind, GroupBy::Task}) {
        std::vector<std::optional<int64_t>> runs = {std::nullopt};
        for (const RunInfo& r : full.runs)
            runs.push_back(r.id);
        for (const auto& run : runs) {
            ReportOptions o;
            o.by = by;
            o.top = 0;
            o.run = run;
            Report a = build_report(full, o), b = build_report(summary, o);
            EXPECT_EQ(a.totals.counters, b.totals.counters);
            EXPECT_EQ(a.totals.duration_s, b.totals.duration_s);
            EXPECT_EQ(a.rows_total, b.rows_total);
            ASSERT_EQ(a.rows.size(), b.rows.size());
            for (size_t i = 0; i < a.rows.size(); ++i) {
                EXPECT_EQ(a.rows[i].name, b.rows[i].name);
                EXPECT_EQ(a.rows[i].kind, b.rows[i].kind);
                EXPECT_EQ(a.rows[i].mode, b.rows[i].mode);
                EXPECT_EQ(a.rows[i].caller, b.rows[i].caller);
                EXPECT_EQ(a.rows[i].counters, b.rows[i].counters);
                EXPECT_EQ(a.rows[i].share_of_wait, b.rows[i].share_of_wait);
            }
            EXPECT_EQ(format_json(a), format_json(b));
            EXPECT_EQ(format_text(a), format_text(b));
        }
    }
}

}  // namespace

TEST(ReportTest, SummaryLoadGivesTheFullLoadsReport)
{
    TempDir dir;
    const std::string path = dir.file("s.lockscope");
    write_sample(path, 3, 7, 9);
    const Session full = load_session(path);
    const Session summary = load_summary(path);
    // One row per run and lock instead of one per interval and lock.
    ASSERT_EQ(summary.lock_intervals.size(), size_t(3 * 9));
    for (const LockInterval& li : summary.lock_intervals)
        EXPECT_EQ(li.index, kRunTotalIndex);
    EXPECT_GT(full.lock_intervals.size(), summary.lock_intervals.size());
    // Everything else is loaded as in full.
    EXPECT_EQ(summary.meta, full.meta);
    EXPECT_EQ(summary.runs.size(), full.runs.size());
    EXPECT_EQ(summary.intervals.size(), full.intervals.size());
    EXPECT_EQ(summary.locks.size(), full.locks.size());
    EXPECT_EQ(summary.stacks.size(), full.stacks.size());
    EXPECT_EQ(summary.tasks.size(), full.tasks.size());
    EXPECT_TRUE(summary.warnings.empty());
    // Histograms and owner states are merged, not dropped.
    LockCounters hist_sum;
    for (const LockInterval& li : summary.lock_intervals)
        hist_sum.add(li.counters);
    uint64_t buckets = 0;
    for (uint64_t v : hist_sum.hist)
        buckets += v;
    EXPECT_GT(buckets, 0u);
    expect_same_reports(full, summary);
}

TEST(ReportTest, SummaryLoadOfADamagedFileFallsBackToTheFullRows)
{
    TempDir dir;
    const std::string path = dir.file("s.lockscope");
    write_sample(path, 2, 5, 6);
    // One malformed histogram, one negative counter, one row of a lock that
    // does not exist, one '|' that must not pass as a separator.
    exec_sql(path,
             "UPDATE lock_intervals SET hist = 'x:1' WHERE run = 1 AND idx = 1 AND lock_id = 2;"
             "UPDATE lock_intervals SET contentions = -4 WHERE run = 1 AND idx = 2 AND lock_id = 3;"
             "UPDATE lock_intervals SET owner = '0:1|1:2' WHERE run = 2 AND idx = 0 AND lock_id = 1;"
             "INSERT INTO lock_intervals(run, idx, lock_id) VALUES (1, 0, 999);");
    const Session full = load_session(path);
    const Session summary = load_summary(path);
    EXPECT_FALSE(full.warnings.empty());
    EXPECT_EQ(summary.warnings, full.warnings);
    for (const LockInterval& li : summary.lock_intervals)
        EXPECT_EQ(li.index, kRunTotalIndex);
    expect_same_reports(full, summary);
}

TEST(ReportTest, SummaryLoadOfAnOverflowingSumMatchesTheFullLoad)
{
    TempDir dir;
    const std::string path = dir.file("s.lockscope");
    write_sample(path, 1, 4, 3);
    // sum() in SQLite would overflow; the full load saturates.
    exec_sql(path, "UPDATE lock_intervals SET wait_ns = 9223372036854775807 WHERE lock_id = 1;");
    const Session full = load_session(path);
    const Session summary = load_summary(path);
    EXPECT_TRUE(summary.warnings.empty());
    expect_same_reports(full, summary);
}

TEST(ReportTest, ByCallerSplitsALockAmongItsSampledCallers)
{
    // One lock, waited on from pipe_write (3/4 of the sampled wait) and
    // pipe_read (1/4); another with no stack stays with the caller it was
    // named after.
    Session s;
    s.runs.push_back({});
    s.runs[0].id = 1;
    s.locks.push_back({1, "pipe->mutex", "mutex", "", "pipe_write", 0x1000, 33});
    s.locks.push_back({2, "spinlock@foo", "spinlock", "", "foo", 0x2000, 1});
    LockInterval pipe{1, 0, 1, {}};
    pipe.counters.contentions = 1001;
    pipe.counters.wait_ns = 4'000'000;
    pipe.counters.max_wait_ns = 9'000;
    pipe.counters.hist[12] = 1001;
    LockInterval foo{1, 0, 2, {}};
    foo.counters.contentions = 10;
    foo.counters.wait_ns = 1'000;
    s.lock_intervals = {pipe, foo};
    IntervalTotals t;
    t.run = 1;
    t.counters = pipe.counters;
    t.counters.add(foo.counters);
    s.intervals.push_back(t);
    s.stacks.push_back(
        {1, 1, "waiter", {"__mutex_lock.constprop.0+0x1b", "pipe_write+0x54", "vfs_write+0x2a1"}, 30, 3000});
    s.stacks.push_back({1, 1, "waiter", {"mutex_lock+0x12", "pipe_read+0x40", "vfs_read+0x99"}, 10, 1000});
    s.stacks.push_back({1, 1, "waker", {"mutex_unlock+0x12", "pipe_read+0x80"}, 99, 0});

    const Report rep = build_report(s, {.by = GroupBy::Caller, .top = 0});
    ASSERT_EQ(rep.rows.size(), 3u) << format_text(rep);
    EXPECT_EQ(rep.rows[0].name, "pipe_write");
    EXPECT_EQ(rep.rows[0].counters.wait_ns, 3'000'000u);
    EXPECT_EQ(rep.rows[1].name, "pipe_read");
    EXPECT_EQ(rep.rows[1].counters.wait_ns, 1'000'000u);
    EXPECT_EQ(rep.rows[2].name, "foo");
    // Split exactly: the parts add up to the lock's counts.
    EXPECT_EQ(rep.rows[0].counters.contentions + rep.rows[1].counters.contentions, 1001u);
    EXPECT_EQ(rep.rows[0].counters.hist[12] + rep.rows[1].counters.hist[12], 1001u);
    EXPECT_EQ(sum_rows(rep), rep.totals.counters);
    ASSERT_EQ(rep.notes.size(), 1u);
    EXPECT_NE(format_text(rep).find("note: a lock taken from several callers is split"), std::string::npos)
        << format_text(rep);

    // By lock nothing is split or estimated.
    const Report locks = build_report(s, {.top = 0});
    EXPECT_EQ(locks.rows.size(), 2u);
    EXPECT_TRUE(locks.notes.empty());
}

namespace {

// One run, one interval, a lock per (name, kind, mode, caller), the first
// waiting longest.
Session named_locks(const std::vector<std::array<std::string, 4>>& locks)
{
    Session s;
    s.runs.push_back({});
    s.runs[0].id = 1;
    IntervalTotals t;
    t.run = 1;
    for (size_t i = 0; i < locks.size(); ++i) {
        const auto& [name, kind, mode, caller] = locks[i];
        const int64_t id = int64_t(i) + 1;
        s.locks.push_back({id, name, kind, mode, caller, 0x1000 * uint64_t(id), 0});
        LockInterval li{1, 0, id, {}};
        li.counters.contentions = 100;
        li.counters.wait_ns = 1'000'000 * (locks.size() - i);
        s.lock_intervals.push_back(li);
        t.counters.add(li.counters);
    }
    s.intervals.push_back(t);
    return s;
}

// The name cell of each table row: up to the first two spaces.
std::vector<std::string> table_names(const std::string& text, const std::string& header)
{
    std::vector<std::string> names;
    bool in_table = false;
    for (const std::string& line : lines_of(text)) {
        if (line.rfind(header + " ", 0) == 0) {
            in_table = true;
            continue;
        }
        if (!in_table)
            continue;
        if (line.empty() || line.find("fail% =") == 0 || line.find("(top ") == 0)
            break;
        names.push_back(line.substr(0, line.find("  ")));
    }
    return names;
}

}  // namespace

TEST(ReportTest, NamesSharingALongPrefixPrintApartInHundredColumns)
{
    const std::string caller = "anon_pipe_read_with_a_long_name";
    const Session s = named_locks({{"pipe_inode_info.mutex", "mutex", "", caller},
                                   {"pipe_inode_info.mutex.wait_lock", "spinlock", "", caller},
                                   {"some_structure_with_a_long_name.member_a", "mutex", "", caller},
                                   {"some_structure_with_a_long_name.member_b", "mutex", "", caller},
                                   {"percpu_rw_semaphore.rw_sem", "percpu-rwsem", "read", caller},
                                   {"percpu_rw_semaphore.rw_sem", "percpu-rwsem", "write", caller}});
    const std::string text = format_text(build_report(s, {.top = 0}));
    for (const auto& line : lines_of(text))
        EXPECT_LE(display_width(line), 100u) << line;
    const std::vector<std::string> names = table_names(text, "name");
    ASSERT_EQ(names.size(), 6u) << text;
    // The two rw_sem rows share a name: their kinds tell them apart.
    EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), 5u) << text;
    EXPECT_NE(text.find("…/read "), std::string::npos) << text;
    EXPECT_NE(text.find("…/write "), std::string::npos) << text;
    // Cut, they keep their ends.
    EXPECT_EQ(names[1].substr(names[1].size() - 5), "_lock") << text;
    EXPECT_EQ(names[2].substr(names[2].size() - 2), "_a") << text;
    EXPECT_EQ(names[3].substr(names[3].size() - 2), "_b") << text;

    // By instance the "#N" that tells instances apart is never cut off.
    Session two = named_locks({{"some_structure_with_a_long_name.member_a", "mutex", "", caller},
                               {"some_structure_with_a_long_name.member_a", "mutex", "", caller}});
    const std::string by_instance = format_text(build_report(two, {.by = GroupBy::Instance, .top = 0}));
    const std::vector<std::string> instances = table_names(by_instance, "name");
    ASSERT_EQ(instances.size(), 2u) << by_instance;
    EXPECT_EQ(instances[0].substr(instances[0].size() - 2), "#1") << by_instance;
    EXPECT_EQ(instances[1].substr(instances[1].size() - 2), "#2") << by_instance;
}

TEST(ReportTest, FullNamesPrintWhole)
{
    const std::string name = "some_structure_with_a_long_name.member_a_with_a_long_name_too";
    const Session s = named_locks({{name, "mutex", "", "a_caller_with_a_rather_long_function_name"}});
    const Report rep = build_report(s, {.top = 0});
    EXPECT_EQ(format_text(rep).find(name), std::string::npos);
    const std::string wide = format_text(rep, {.full_names = true});
    EXPECT_NE(wide.find(name + "  mutex  a_caller_with_a_rather_long_function_name"), std::string::npos) << wide;
}

TEST(ReportTest, CallerColumnCountsTheOtherCallers)
{
    // Lock identity names pipe_read; waiter stacks add pipe_write, which
    // waited longer and so is the caller shown.
    Session s = named_locks({{"pipe_inode_info.mutex", "mutex", "", "pipe_read"}, {"other", "mutex", "", "f"}});
    s.stacks.push_back({1, 1, "waiter", {"mutex_lock+0x12", "pipe_read+0x40"}, 10, 1000});
    s.stacks.push_back({1, 1, "waiter", {"mutex_lock+0x12", "pipe_write_and_then_some_more+0x54"}, 30, 3000});
    const Report rep = build_report(s, {.top = 0});
    ASSERT_EQ(rep.rows.size(), 2u);
    EXPECT_EQ(rep.rows[0].callers, 2u);
    EXPECT_EQ(rep.rows[1].callers, 1u);
    const std::string text = format_text(rep, {.full_names = true});
    EXPECT_EQ(rep.rows[0].caller, "pipe_write_and_then_some_more");
    EXPECT_NE(text.find("pipe_write_and_then_some_more +1"), std::string::npos) << text;
    EXPECT_EQ(text.find("f +"), std::string::npos) << text;
    // Cut to fit, the count stays.
    EXPECT_NE(format_text(rep).find("… +1"), std::string::npos) << format_text(rep);
}

TEST(ReportTest, CsvNumbersArePlainDecimals)
{
    Session s = named_locks({{"big", "mutex", "", "f"}, {"tiny", "mutex", "", "g"}});
    s.lock_intervals[0].counters.wait_ns = 100'000'000'000;  // the other's share: 1e-5
    s.lock_intervals[0].counters.spin_attempts = 300'000;
    s.lock_intervals[0].counters.spin_failures = 1;
    s.intervals[0].counters = s.lock_intervals[0].counters;
    s.intervals[0].counters.add(s.lock_intervals[1].counters);
    const std::string csv = format_csv(build_report(s, {.top = 0}));
    EXPECT_EQ(csv.find("e-"), std::string::npos) << csv;
    EXPECT_EQ(csv.find("e+"), std::string::npos) << csv;
    EXPECT_NE(csv.find(",0.00000333333,"), std::string::npos) << csv;  // 1 failure in 300,000 attempts
}

TEST(ReportTest, OneSleepAndOneSwitchOutAreSaidInTheSingular)
{
    Report rep = build_report(sample(), {.top = 0});
    rep.totals.counters.sleeps = 1;
    rep.totals.counters.preemptions = 1;
    std::string text = format_text(rep);
    EXPECT_NE(text.find("switched out blocked, 1 sleep\n"), std::string::npos) << text;
    EXPECT_NE(text.find("switched out runnable, once\n"), std::string::npos) << text;
    EXPECT_EQ(text.find("1 sleeps"), std::string::npos) << text;
    rep.totals.counters.sleeps = 2;
    rep.totals.counters.preemptions = 2;
    text = format_text(rep);
    EXPECT_NE(text.find("switched out blocked, 2 sleeps\n"), std::string::npos) << text;
    EXPECT_NE(text.find("switched out runnable, 2 times\n"), std::string::npos) << text;
}
