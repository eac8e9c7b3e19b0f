// `lockscope record --trace` of a real workload, exported: the trace, the
// folded stacks and the CSV tables must agree with `lockscope report`,
// which reads the kernel's aggregated counters, a path the trace does not
// share (ring buffer and episodes table against per-lock BPF maps).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <tuple>
#include <sstream>

#include "doors.h"
#include "root_helpers.h"
#include "subprocess.h"

namespace lockscope {
namespace {

uint64_t ns_of(const nlohmann::json& us)
{
    return uint64_t(std::llround(us.get<double>() * 1000.0));
}

struct Slice {
    uint64_t start = 0, end = 0;
    bool spin = false;
};

class ExportReal : public ::testing::Test {
protected:
    static void SetUpTestSuite()
    {
        if (geteuid() != 0)
            return;
        session_ = new std::string(test::temp_path("trace.lockscope"));
        recorded_ =
            new test::Finished(test::run_lockscope({"record", "--trace", "-o", *session_, "--", test::lockscope_bin(),
                                                    "workload", "pipe", "-t", "4", "-d", "2"}));
        test::Finished report = test::run_lockscope({"report", *session_, "--format", "json", "--top", "0"});
        report_ = new nlohmann::json(report.exit_code == 0 ? nlohmann::json::parse(report.out) : nlohmann::json());
    }
    static void TearDownTestSuite()
    {
        delete session_;
        delete recorded_;
        delete report_;
    }
    void SetUp() override
    {
        LOCKSCOPE_REQUIRE_BPF();
        ASSERT_EQ(recorded_->exit_code, 0) << recorded_->err;
        ASSERT_TRUE(report_->contains("totals"));
        ASSERT_GT(totals()["contentions"].get<uint64_t>(), 1000u) << "the pipe workload did not contend";
    }
    static const nlohmann::json& totals() { return (*report_)["totals"]; }
    static uint64_t lost_episodes() { return totals()["lost_by_cause"]["ring_buffer"].get<uint64_t>(); }

    static std::string* session_;
    static test::Finished* recorded_;
    static nlohmann::json* report_;
};

std::string* ExportReal::session_ = nullptr;
test::Finished* ExportReal::recorded_ = nullptr;
nlohmann::json* ExportReal::report_ = nullptr;

TEST_F(ExportReal, ChromeTraceSlicesAddUpToTheReportsTotals)
{
    const std::string out = test::temp_path("trace.json");
    test::Finished f = test::run_lockscope({"export", *session_, "--format", "chrome-trace", "-o", out});
    ASSERT_EQ(f.exit_code, 0) << f.err;
    std::ifstream in(out);
    const nlohmann::json j = nlohmann::json::parse(in);  // throws (fails) on invalid JSON
    ASSERT_TRUE(j["traceEvents"].is_array());
    EXPECT_TRUE(j["otherData"]["traced"].get<bool>());

    std::map<std::pair<int, int>, std::vector<Slice>> by_thread;
    std::map<std::string, size_t> counters;
    std::set<std::pair<int, int>> named;  // threads with a thread_name
    uint64_t all_ns = 0, spin_ns = 0;
    for (const auto& e : j["traceEvents"]) {
        const std::string ph = e.at("ph");
        if (ph == "M") {
            if (e["name"] == "thread_name")
                named.insert({e.at("pid").get<int>(), e.at("tid").get<int>()});
        } else if (ph == "C") {
            counters[e.at("name")]++;
            EXPECT_TRUE(e.at("args").is_object());
        } else {
            if (ph == "s" || ph == "f")
                continue;  // wake-up flows: checked below
            ASSERT_EQ(ph, "X") << e.dump();
            const std::string cat = e.at("cat");
            ASSERT_TRUE(cat == "spin" || cat == "queued" || cat == "woken") << e.dump();
            if (e.at("name").get<std::string>().rfind("wakes ", 0) == 0)
                continue;  // the 1 ns mark on a waker's track: no wait of its own
            ASSERT_FALSE(e.at("name").get<std::string>().empty());
            ASSERT_TRUE(e.at("args").contains("lock"));
            const Slice s{ns_of(e.at("ts")), ns_of(e.at("ts")) + ns_of(e.at("dur")), cat == "spin"};
            by_thread[{e.at("pid").get<int>(), e.at("tid").get<int>()}].push_back(s);
            all_ns += s.end - s.start;
            spin_ns += s.spin ? s.end - s.start : 0;
        }
    }
    EXPECT_GE(by_thread.size(), 4u) << "the workload's threads each have a track";
    // Names come from the tasks table, which holds a task once it has been
    // switched out while recording: the workload's threads always are, a
    // system thread with one short episode may not be. The names and the
    // slices come from different tables (task totals, the episode trace), so
    // a named task may have no slice: names are not matched one for one.
    size_t named_tracks = 0;
    for (const auto& [thread, slices] : by_thread)
        named_tracks += named.count(thread);
    EXPECT_GE(named_tracks, 4u) << "the workload's threads' tracks are named";
    const size_t intervals = totals()["intervals"];
    EXPECT_EQ(counters["CPU idle"], intervals + 1);
    EXPECT_EQ(counters["contentions/s"], intervals + 1);

    // On one thread, slices never partly overlap: phases of one episode follow
    // each other, and an episode nested in another (a mutex's wait_lock) lies
    // inside one phase of the outer one.
    for (auto& [thread, slices] : by_thread) {
        std::sort(slices.begin(), slices.end(), [](const Slice& a, const Slice& b) {
            return a.start != b.start ? a.start < b.start : a.end > b.end;
        });
        std::vector<uint64_t> open_ends;
        for (const Slice& s : slices) {
            while (!open_ends.empty() && open_ends.back() <= s.start)
                open_ends.pop_back();
            ASSERT_TRUE(open_ends.empty() || s.end <= open_ends.back())
                << "thread " << thread.second << ": slice [" << s.start << ", " << s.end << ") overlaps one ending at "
                << open_ends.back();
            open_ends.push_back(s.end);
        }
    }

    const uint64_t episodes = j["otherData"]["episodes"];
    const uint64_t truncated = j["otherData"]["episodes_truncated"];
    EXPECT_EQ(j["otherData"]["episodes_lost"].get<uint64_t>(), lost_episodes());
    // Every episode the counters hold is in the trace, or counted as lost.
    EXPECT_EQ(episodes + lost_episodes(), totals()["contentions"].get<uint64_t>());
    if (lost_episodes() == 0) {
        EXPECT_EQ(all_ns, totals()["wait_ns"].get<uint64_t>());
        if (truncated == 0) {
            EXPECT_EQ(spin_ns, totals()["spin_ns"].get<uint64_t>());
        }
    } else {
        // Dropped episodes are missing from the slices, never invented.
        EXPECT_LT(all_ns, totals()["wait_ns"].get<uint64_t>());
        EXPECT_LE(spin_ns, totals()["spin_ns"].get<uint64_t>());
    }
    EXPECT_EQ(truncated, 0u) << "the pipe workload needs no more than a few phases per episode";
    // Streaming the trace contends on the ring buffer's own lock, inside
    // lockscope's program: that contention is lockscope's, ignored, never
    // counted as the workload's lost events. Only an interrupt nested in the
    // program is, and those are rare.
    EXPECT_LE(totals()["lost_by_cause"]["nested"].get<uint64_t>(), 10u);
}

// Who unblocked whom: each flow start sits on a "wakes" mark on the waker's
// track and has exactly one end, which lands on the woken waiter's "woken"
// slice starting at the same instant. Pipe waiters sleep on the pipe mutex
// and are woken by the reader or writer that releases it, so there are many.
TEST_F(ExportReal, ChromeTraceWakeupFlowsRunFromTheWakerToTheWokenWaiter)
{
    const std::string out = test::temp_path("flows.json");
    test::Finished f = test::run_lockscope({"export", *session_, "--format", "chrome-trace", "-o", out});
    ASSERT_EQ(f.exit_code, 0) << f.err;
    std::ifstream in(out);
    const nlohmann::json j = nlohmann::json::parse(in);
    using Key = std::tuple<int, int, std::string>;  // pid, tid, ts as written
    std::set<Key> marks, woken;
    std::map<uint64_t, std::vector<nlohmann::json>> by_id;
    for (const auto& e : j["traceEvents"]) {
        const std::string ph = e.at("ph");
        if (ph == "s" || ph == "f") {
            by_id[e.at("id").get<uint64_t>()].push_back(e);
        } else if (ph == "X" && e.at("cat") == "woken") {
            const Key k{e.at("pid").get<int>(), e.at("tid").get<int>(), e.at("ts").dump()};
            const bool mark = e.at("name").get<std::string>().rfind("wakes ", 0) == 0;
            (mark ? marks : woken).insert(k);
        }
    }
    const uint64_t flows = j["otherData"]["wakeup_flows"];
    EXPECT_EQ(by_id.size(), flows);
    // Cross-check with the kernel-side counters: every sched_waking on a
    // queued waiter counts one wakeup there; an episode draws one arrow, from
    // its last waker. Pipe waiters mostly win by spinning, but some sleep
    // and are woken by the task that releases the mutex.
    const uint64_t wakeups = totals()["wakeups"];
    EXPECT_GT(flows, 0u) << "no pipe waiter was woken in 2 s of 4 threads";
    if (lost_episodes() == 0) {
        EXPECT_LE(flows, wakeups);
        EXPECT_GE(flows * 10, wakeups * 9) << "most woken episodes are woken once";
    }
    for (const auto& [id, events] : by_id) {
        ASSERT_EQ(events.size(), 2u) << "flow " << id << " has one start and one end";
        const auto& s = events[0];
        const auto& e = events[1];
        ASSERT_EQ(s.at("ph"), "s");
        ASSERT_EQ(e.at("ph"), "f");
        EXPECT_EQ(s.at("ts"), e.at("ts"));
        EXPECT_EQ(s.at("cat"), e.at("cat"));
        EXPECT_TRUE(marks.count({s.at("pid").get<int>(), s.at("tid").get<int>(), s.at("ts").dump()}))
            << "flow " << id << " starts on no wake mark: " << s.dump();
        EXPECT_TRUE(woken.count({e.at("pid").get<int>(), e.at("tid").get<int>(), e.at("ts").dump()}))
            << "flow " << id << " ends on no woken slice: " << e.dump();
    }
    EXPECT_EQ(marks.size(), flows);
}

TEST_F(ExportReal, FoldedStacksAddUpToTheReportsTotals)
{
    for (const char* weight : {"wait", "contentions"}) {
        test::Finished f = test::run_lockscope({"export", *session_, "--format", "folded", "--weight", weight});
        ASSERT_EQ(f.exit_code, 0) << f.err;
        std::map<std::string, uint64_t> by_root;  // "name [kind/mode]"
        uint64_t sum = 0;
        std::istringstream lines(f.out);
        std::string line;
        while (std::getline(lines, line)) {
            const size_t space = line.rfind(' ');
            ASSERT_NE(space, std::string::npos) << line;
            const uint64_t w = std::stoull(line.substr(space + 1));
            sum += w;
            by_root[line.substr(0, line.find(';'))] += w;
        }
        const char* field = std::string(weight) == "wait" ? "wait_ns" : "contentions";
        EXPECT_EQ(sum, totals()[field].get<uint64_t>()) << weight;
        for (const auto& lock : (*report_)["locks"]) {
            const std::string mode = lock["mode"];
            const std::string root = lock["name"].get<std::string>() + " [" + lock["kind"].get<std::string>() +
                                     (mode.empty() ? "" : "/" + mode) + "]";
            EXPECT_EQ(by_root[root], lock[field].get<uint64_t>()) << weight << " of " << root;
        }
    }
}

TEST_F(ExportReal, CsvTablesMatchTheJsonReport)
{
    test::Finished f = test::run_lockscope({"export", *session_, "--format", "csv", "--table", "locks"});
    ASSERT_EQ(f.exit_code, 0) << f.err;
    const auto rows = doors::csv_records(f.out);
    const auto& locks = (*report_)["locks"];
    ASSERT_EQ(rows.size(), locks.size());
    for (size_t i = 0; i < locks.size(); ++i) {
        const auto& row = rows[i];
        SCOPED_TRACE(locks[i]["name"].get<std::string>());
        EXPECT_EQ(row.at("name"), locks[i]["name"]);
        EXPECT_EQ(row.at("kind"), locks[i]["kind"]);
        for (const char* counter : {"contentions", "spin_attempts", "spin_failures", "wait_ns", "spin_ns", "offcpu_ns",
                                    "sleeps", "max_wait_ns"})
            EXPECT_EQ(std::stoull(row.at(counter)), locks[i][counter].get<uint64_t>()) << counter;
    }

    f = test::run_lockscope({"export", *session_, "--format", "csv", "--table", "intervals"});
    ASSERT_EQ(f.exit_code, 0) << f.err;
    const auto intervals = doors::csv_records(f.out);
    ASSERT_EQ(intervals.size(), totals()["intervals"].get<size_t>());
    uint64_t contentions = 0, wait = 0;
    for (const auto& interval : intervals) {
        contentions += std::stoull(interval.at("contentions"));
        wait += std::stoull(interval.at("wait_ns"));
    }
    EXPECT_EQ(contentions, totals()["contentions"].get<uint64_t>());
    EXPECT_EQ(wait, totals()["wait_ns"].get<uint64_t>());
}

}  // namespace
}  // namespace lockscope
