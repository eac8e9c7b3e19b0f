// One truth everywhere (DESIGN.md): on generated sessions, every door tells
// the same numbers, lock by lock, task by task and interval by interval: the
// report's text, JSON and CSV, the CSV, folded and pprof exports, the
// Prometheus exposition and the dashboard's tables. And the defects that
// once made two doors differ, each on the smallest session that shows it.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <sstream>

#include "core/analysis/report.h"
#include "core/analysis/report_parts.h"
#include "core/analysis/stack_frames.h"
#include "core/format.h"
#include "core/render/export.h"
#include "core/storage/session_store.h"
#include "doors.h"
#include "generated_session.h"
#include "sample_session.h"
#ifdef LOCKSCOPE_TEST_GUI
#include "doors_gui.h"
#endif

namespace lockscope {
namespace {

using doors::View;
using testing::TempDir;

std::string folded(const Session& s, FoldedWeight w)
{
    std::ostringstream out;
    export_folded(s, w, out);
    return out.str();
}

std::string pprof(const Session& s)
{
    std::ostringstream out;
    export_pprof(s, out);
    return out.str();
}

std::string csv(const Session& s, CsvTable table)
{
    std::ostringstream out;
    export_csv(s, table, out);
    return out.str();
}

Report every_row(const Session& s, GroupBy by = GroupBy::Lock)
{
    return build_report(s, {.by = by, .top = 0});
}

// Every lock door against the JSON report.
void expect_locks_agree(const std::string& path)
{
    const Session s = load_session(path);
    const View json = doors::from_json(format_json(every_row(s)));
    const View kernel = doors::kernel_only(json);
    doors::expect_same(kernel, "report json", doors::from_csv(format_csv(every_row(s))), "report csv");
    doors::expect_same(kernel, "report json", doors::from_csv(csv(s, CsvTable::Locks)), "export csv");
    // What `export` loads: per-run totals.
    const Session totals = load_session(path, {.lock_intervals = false});
    View users = doors::from_user_locks_csv(csv(totals, CsvTable::UserLocks));
    View kernel_csv = doors::from_csv(csv(totals, CsvTable::Locks));
    kernel_csv.merge(users);
    doors::expect_same(json, "report json", kernel_csv, "export csv (locks and user-locks)");
    doors::expect_same(
        json, "report json",
        doors::from_folded(folded(totals, FoldedWeight::WaitNs), folded(totals, FoldedWeight::Contentions)),
        "export folded");
    doors::expect_same(json, "report json", doors::from_pprof(pprof(totals)), "export pprof");
    doors::expect_same(json, "report json", doors::from_prometheus(doors::prometheus_of(s)), "prometheus");
#ifdef LOCKSCOPE_TEST_GUI
    doors::expect_same(json, "report json", doors::from_gui(path), "dashboard");
#endif
    doors::expect_text_matches(format_text(every_row(s), {.full_names = true}), json);
}

// The per-caller rows of `report --by caller` are the stack exports' lines
// summed by caller: one split of each lock among its stacks.
void expect_callers_agree(const Session& s)
{
    std::map<std::string, std::pair<uint64_t, uint64_t>> by_caller;  // contentions, wait
    const auto add_lines = [&](const std::string& lines, bool contentions) {
        std::istringstream in(lines);
        for (std::string line; std::getline(in, line);) {
            if ((line.find("[user ") != std::string::npos))
                continue;  // user locks are not among the kernel's callers
            // Root first, function names: the caller is found innermost first.
            std::vector<std::string> frames;
            std::istringstream parts(line.substr(0, line.rfind(' ')));
            for (std::string f; std::getline(parts, f, ';');)
                frames.insert(frames.begin(), f);
            const std::string root = frames.back();
            frames.pop_back();
            std::string caller = frames.size() == 1 && frames[0] == "[no stack sampled]" ? "" : caller_function(frames);
            if (caller.empty())  // a lock without a sampled stack stays with its identity's caller
                for (const LockInfo& l : s.locks)
                    if (doors::lock_key(l.name, l.kind, l.mode) == root)
                        caller = l.caller;
            (contentions ? by_caller[caller].first : by_caller[caller].second) +=
                std::stoull(line.substr(line.rfind(' ') + 1));
        }
    };
    add_lines(folded(s, FoldedWeight::Contentions), true);
    add_lines(folded(s, FoldedWeight::WaitNs), false);
    const Report rep = every_row(s, GroupBy::Caller);
    ASSERT_EQ(rep.rows.size(), by_caller.size()) << format_text(rep);
    for (const ReportRow& row : rep.rows) {
        EXPECT_EQ(row.counters.contentions, by_caller[row.caller].first) << row.caller;
        EXPECT_EQ(row.counters.wait_ns, by_caller[row.caller].second) << row.caller;
    }
}

// Task rows: text, JSON and CSV alike; what a task does not keep is null,
// empty or "-", never 0.
void expect_tasks_agree(const Session& s)
{
    const Report rep = every_row(s, GroupBy::Task);
    const nlohmann::json json = nlohmann::json::parse(format_json(rep));
    std::map<std::string, std::map<std::string, std::string>> csv_rows;
    for (auto& record : doors::csv_records(format_csv(rep)))
        csv_rows[record.at("name")] = record;
    const std::vector<doors::TextRow> text = doors::text_table(format_text(rep, {.full_names = true}), "task");
    ASSERT_EQ(json["locks"].size(), rep.rows.size());
    ASSERT_EQ(text.size(), rep.rows.size());
    for (size_t i = 0; i < rep.rows.size(); ++i) {
        const nlohmann::json& row = json["locks"][i];
        const std::string name = row["name"];
        for (const char* unkept :
             {"spin_successes", "preemptions", "max_wait_ns", "errors", "wakeups", "spin_yields", "holder_running_ns",
              "holder_runnable_ns", "holder_asleep_ns", "holder_unknown_ns"}) {
            EXPECT_TRUE(row[unkept].is_null()) << name << " " << unkept;
            EXPECT_EQ(csv_rows[name][unkept], "") << name << " " << unkept;
        }
        EXPECT_TRUE(row["hist"].is_null() && row["owner_at_queueing"].is_null()) << name;
        EXPECT_EQ(text[i].at("max"), "-") << name;
        EXPECT_EQ(text[i].at("task"), name);
        for (const char* kept : {"contentions", "spin_attempts", "spin_failures", "wait_ns", "sleeps", "spinning_ns",
                                 "queued_on_cpu_ns", "asleep_ns", "runnable_ns"})
            EXPECT_EQ(csv_rows[name][kept], std::to_string(row[kept].get<uint64_t>())) << name << " " << kept;
        EXPECT_EQ(text[i].at("contend"), format_count(row["contentions"].get<uint64_t>())) << name;
        EXPECT_EQ(text[i].at("wait"), format_duration(double(row["wait_ns"].get<uint64_t>()))) << name;
    }
}

// Interval rows: the JSON report's and the CSV export's, the same counts
// and parts, adding up to the totals; the CSV's maximum where measured.
void expect_intervals_agree(const Session& s, const testing::GeneratedSession& truth)
{
    const nlohmann::json json = nlohmann::json::parse(format_json(every_row(s)));
    size_t row = 0;
    LockCounters sum;
    for (auto& c : doors::csv_records(csv(s, CsvTable::Intervals))) {
        ASSERT_LT(row, json["intervals"].size());
        const nlohmann::json& j = json["intervals"][row++];
        EXPECT_EQ(c["run"], std::to_string(j["run"].get<int64_t>()));
        EXPECT_EQ(c["interval"], std::to_string(j["index"].get<int64_t>()));
        for (const char* key : {"contentions", "wait_ns", "spinning_ns", "queued_on_cpu_ns", "asleep_ns", "runnable_ns",
                                "holder_running_ns", "holder_runnable_ns", "holder_asleep_ns", "holder_unknown_ns"})
            EXPECT_EQ(c[key], std::to_string(j[key].get<uint64_t>())) << key;
        EXPECT_EQ(std::stoull(c["holder_running_ns"]) + std::stoull(c["holder_runnable_ns"]) +
                      std::stoull(c["holder_asleep_ns"]) + std::stoull(c["holder_unknown_ns"]),
                  std::stoull(c["wait_ns"]))
            << "interval " << row << ": the holder split adds up to the wait";
        const std::optional<uint64_t> max = truth.interval_max.at({j["run"].get<int64_t>(), j["index"].get<int64_t>()});
        EXPECT_EQ(c["max_wait_ns"], max ? std::to_string(*max) : std::string()) << "interval " << row;
        sum.contentions += std::stoull(c["contentions"]);
        sum.wait_ns += std::stoull(c["wait_ns"]);
    }
    EXPECT_EQ(row, s.intervals.size());
    EXPECT_EQ(sum.contentions, json["totals"]["contentions"].get<uint64_t>());
    EXPECT_EQ(sum.wait_ns, json["totals"]["wait_ns"].get<uint64_t>());
}

class GeneratedSessions : public ::testing::TestWithParam<uint64_t> {};

TEST_P(GeneratedSessions, EveryDoorTellsTheSameNumbers)
{
    TempDir dir;
    const std::string path = dir.file("generated.lockscope");
    const testing::GeneratedSession truth = testing::write_generated_session(path, GetParam());
    const Session s = load_session(path);
    ASSERT_TRUE(s.warnings.empty());
    expect_locks_agree(path);
    expect_callers_agree(load_session(path, {.lock_intervals = false}));
    expect_tasks_agree(s);
    expect_intervals_agree(s, truth);
}

INSTANTIATE_TEST_SUITE_P(Seeds, GeneratedSessions, ::testing::Range(uint64_t(1), uint64_t(25)));

// A lock sampled from two callers whose stacks' samples and sampled wait
// disagree (3:1 against 1:3): every door shares its contentions by samples
// and its wait by sampled wait. Folded --weight contentions once shared by
// samples while pprof and --by caller shared by wait.
Session two_caller_lock()
{
    Session s;
    s.runs.push_back({});
    s.runs[0].id = 1;
    s.locks.push_back({1, "pipe_inode_info.mutex", "mutex", "", "anon_pipe_read", 0x1000, 33});
    LockInterval li{1, 0, 1, {}};
    li.counters.contentions = 1000;
    li.counters.wait_ns = 8'000'000;
    li.counters.spin_ns = 2'000'000;
    li.counters.preempt_ns = 6'000'000;
    li.counters.timed = 1000;
    li.counters.max_wait_ns = 50'000;
    s.lock_intervals = {li};
    s.intervals.push_back({1, 0, 0, 1'000'000'000, li.counters});
    s.stacks.push_back({1, 1, "waiter", {"__mutex_lock+0x1b", "anon_pipe_read+0x54", "vfs_read+0x2a1"}, 30, 1'000});
    s.stacks.push_back({1, 1, "waiter", {"__mutex_lock+0x1b", "anon_pipe_write+0x54", "vfs_write+0x2a1"}, 10, 3'000});
    return s;
}

TEST(OneSplit, FoldedPprofAndByCallerShareContentionsAlike)
{
    const Session s = two_caller_lock();
    const Report callers = every_row(s, GroupBy::Caller);
    ASSERT_EQ(callers.rows.size(), 2u);
    std::map<std::string, const ReportRow*> row;
    for (const ReportRow& r : callers.rows)
        row[r.caller] = &r;
    EXPECT_EQ(row.at("anon_pipe_read")->counters.contentions, 750u);
    EXPECT_EQ(row.at("anon_pipe_write")->counters.contentions, 250u);
    EXPECT_EQ(row.at("anon_pipe_read")->counters.wait_ns, 2'000'000u);
    EXPECT_EQ(row.at("anon_pipe_write")->counters.wait_ns, 6'000'000u);
    EXPECT_EQ(folded(s, FoldedWeight::Contentions),
              "pipe_inode_info.mutex [mutex];vfs_read;anon_pipe_read;__mutex_lock 750\n"
              "pipe_inode_info.mutex [mutex];vfs_write;anon_pipe_write;__mutex_lock 250\n");
    EXPECT_EQ(folded(s, FoldedWeight::WaitNs),
              "pipe_inode_info.mutex [mutex];vfs_read;anon_pipe_read;__mutex_lock 2000000\n"
              "pipe_inode_info.mutex [mutex];vfs_write;anon_pipe_write;__mutex_lock 6000000\n");
    expect_callers_agree(s);
    // pprof's samples: the same contentions, and parts that add up to the delay.
    const View p = doors::from_pprof(pprof(s));
    ASSERT_EQ(p.size(), 1u);
    EXPECT_EQ(p.begin()->second.contentions, 1000u);
    // The split rows keep no measured maximum of their own.
    EXPECT_FALSE(row.at("anon_pipe_read")->keeps("max_wait_ns"));
}

// The interval table's max_wait_ns is a measurement or nothing: where the
// kernel's running maximum did not rise, the session holds only a bound
// (here 2^22 - 1 ns, the top histogram bucket that changed).
TEST(IntervalMaximum, ABoundIsNoMeasurement)
{
    Session s;
    s.runs.push_back({});
    s.runs[0].id = 1;
    s.locks.push_back({1, "pipe_inode_info.mutex", "mutex", "", "anon_pipe_read", 0x1000, 33});
    LockCounters first, second;
    first.contentions = second.contentions = 10;
    first.wait_ns = 30'000'000;
    first.max_wait_ns = 9'000'000;  // rose: measured
    second.wait_ns = 20'000'000;
    second.max_wait_ns = 4'194'303;  // did not rise: a bound
    s.lock_intervals = {{1, 0, 1, first}, {1, 1, 1, second}};
    s.intervals = {{1, 0, 0, 1'000'000'000, first}, {1, 1, 1'000'000'000, 2'000'000'000, second}};
    std::istringstream in(csv(s, CsvTable::Intervals));
    std::string header, row0, row1;
    std::getline(in, header);
    std::getline(in, row0);
    std::getline(in, row1);
    EXPECT_NE(row0.find(",9000000,"), std::string::npos) << row0;
    const std::map<std::string, std::string> second_row = doors::csv_records(header + "\n" + row1 + "\n").at(0);
    EXPECT_EQ(second_row.at("max_wait_ns"), "") << "a bound in max_wait_ns: " << row1;
    EXPECT_EQ(second_row.at("max_wait_bound_ns"), "4194303") << "the bound, named as one: " << row1;
    // Over both intervals the maximum is the measured one, by lock and in total.
    const Report rep = every_row(s);
    EXPECT_TRUE(rep.rows[0].keeps("max_wait_ns"));
    EXPECT_EQ(rep.rows[0].counters.max_wait_ns, 9'000'000u);
}

// A task keeps the per-task counters; the rest is unknown, and says so.
TEST(TaskRows, WhatATaskDoesNotKeepIsNullEmptyOrADash)
{
    TempDir dir;
    testing::write_sample(dir.file("s.lockscope"), 1, 2, 3);
    const Report rep = every_row(load_session(dir.file("s.lockscope")), GroupBy::Task);
    const nlohmann::json j = nlohmann::json::parse(format_json(rep));
    ASSERT_FALSE(j["locks"].empty());
    const nlohmann::json& task = j["locks"][0];
    for (const char* key : {"spin_successes", "preemptions", "max_wait_ns"})
        EXPECT_TRUE(task[key].is_null()) << key << ": " << task[key];
    EXPECT_GT(task["runnable_ns"].get<uint64_t>(), 0u);
    std::istringstream csv_in(format_csv(rep));
    std::string header, first;
    std::getline(csv_in, header);
    std::getline(csv_in, first);
    EXPECT_NE(first.find(",,"), std::string::npos) << first;
    expect_tasks_agree(load_session(dir.file("s.lockscope")));
}

}  // namespace
}  // namespace lockscope
