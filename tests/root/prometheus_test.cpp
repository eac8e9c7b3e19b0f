// A real Prometheus server scrapes `lockscope record --prometheus` while a
// workload runs; what Prometheus stored must be what the session file holds:
// every scraped counter equals the session's cumulative count at some
// interval, the counters rise, and none exceeds the report's total.

#include <sys/utsname.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "core/analysis/report.h"
#include "core/storage/session_store.h"
#include "prometheus_server.h"
#include "root_helpers.h"
#include "subprocess.h"
#include "temp_dir.h"

namespace lockscope::test {
namespace {

namespace fs = std::filesystem;

using lockscope::testing::TempDir;

// The value of an unlabelled sample in an exposition body; -1 when absent.
double sample_value(const std::string& body, const std::string& name)
{
    std::istringstream lines(body);
    for (std::string line; std::getline(lines, line);)
        if (line.starts_with(name + " "))
            return std::stod(line.substr(name.size() + 1));
    return -1;
}

// The raw samples Prometheus stored for one series selector, oldest first.
std::vector<double> stored_samples(unsigned port, const std::string& selector)
{
    const std::string body = http_get(port, "/api/v1/query?query=" + url_encode(selector + "[10m]"));
    if (body.empty())
        return {};
    const nlohmann::json j = nlohmann::json::parse(body);
    std::vector<double> values;
    if (j.value("status", "") != "success" || j["data"]["result"].size() != 1)
        return values;
    for (const auto& sample : j["data"]["result"][0]["values"])
        values.push_back(std::stod(sample[1].get<std::string>()));
    return values;
}

// Cumulative values of one lock's counter after each interval of the session.
std::set<uint64_t> prefix_sums(const Session& s, const std::string& name, uint64_t (*value)(const LockCounters&))
{
    std::map<int64_t, const LockInfo*> locks;
    for (const LockInfo& l : s.locks)
        locks[l.id] = &l;
    std::map<std::pair<int64_t, int64_t>, uint64_t> per_interval;
    for (const IntervalTotals& in : s.intervals)
        per_interval[{in.run, in.index}] = 0;
    for (const LockInterval& li : s.lock_intervals) {
        const LockInfo* l = locks[li.lock_id];
        if (l && l->name == name && l->kind == "mutex" && l->mode.empty())
            per_interval[{li.run, li.index}] += value(li.counters);
    }
    std::set<uint64_t> sums{0};
    uint64_t sum = 0;
    for (const auto& [key, v] : per_interval)
        sums.insert(sum += v);
    return sums;
}

void expect_consistent(const std::vector<double>& scraped, const std::set<uint64_t>& sums, const char* what)
{
    std::set<uint64_t> distinct;
    double previous = 0;
    for (double v : scraped) {
        EXPECT_GE(v, previous) << what << " went backwards";
        previous = v;
        EXPECT_TRUE(sums.count(uint64_t(v)))
            << what << " " << uint64_t(v) << " is not the session's count after any interval";
        distinct.insert(uint64_t(v));
    }
    distinct.erase(0);
    EXPECT_GE(distinct.size(), 3u) << what << ": Prometheus saw it rise fewer than three times";
    if (!scraped.empty()) {
        EXPECT_LE(uint64_t(scraped.back()), *sums.rbegin()) << what;
    }
}

TEST(Prometheus, ScrapedCountersRiseAndMatchTheSession)
{
    LOCKSCOPE_REQUIRE_BPF();
    ASSERT_TRUE(fs::exists("/usr/bin/prometheus"))
        << "Debian's prometheus package is missing (scripts/install-deps.sh installs it)";

    TempDir dir;
    const unsigned exporter_port = free_port();
    const PrometheusServer server(scrape_every_second(dir.path(), {exporter_port}), dir.path() / "data");
    const unsigned server_port = server.port();

    const std::string session = (dir.path() / "run.lockscope").string();
    Finished rec =
        run({lockscope_bin(), "record", "--workload", "pipe", "-t", "2", "-d", "8", "-i", "1", "--prometheus",
             "127.0.0.1:" + std::to_string(exporter_port), "--prometheus-cgroups", "4", "-o", session},
            180);
    ASSERT_EQ(rec.exit_code, 0) << rec.err;
    ASSERT_NE(rec.err.find("serving Prometheus metrics at http://127.0.0.1:" + std::to_string(exporter_port)),
              std::string::npos)
        << rec.err;

    const Session s = load_session(session);
    const Report report = build_report(s, {});
    uint64_t pipe_total = 0;
    for (const ReportRow& r : report.rows) {
        if (r.name == "pipe_inode_info.mutex" && r.kind == "mutex")
            pipe_total = r.counters.contentions;
    }
    ASSERT_GT(pipe_total, 0u) << "the workload did not contend";

    const std::string pipe = "{lock=\"pipe_inode_info.mutex\",kind=\"mutex\",job=\"lockscope\"}";
    const std::vector<double> contentions = stored_samples(server_port, "lockscope_contentions_total" + pipe);
    ASSERT_FALSE(contentions.empty()) << "Prometheus stored no samples";
    const std::set<uint64_t> sums =
        prefix_sums(s, "pipe_inode_info.mutex", [](const LockCounters& c) { return c.contentions; });
    EXPECT_EQ(*sums.rbegin(), pipe_total);
    expect_consistent(contentions, sums, "contentions");

    expect_consistent(stored_samples(server_port, "lockscope_wait_duration_seconds_count" + pipe),
                      prefix_sums(s, "pipe_inode_info.mutex",
                                  [](const LockCounters& c) {
                                      uint64_t n = 0;
                                      for (uint64_t b : c.hist)
                                          n += b;
                                      return n;
                                  }),
                      "wait histogram count");

    // Per cgroup (--prometheus-cgroups): the workload's cgroup rises to what
    // the session's tasks in it counted, never beyond.
    std::map<std::string, uint64_t> by_cgroup;
    for (const TaskStats& t : s.tasks)
        by_cgroup[t.cgroup] += t.counters.contentions;
    const auto busiest = std::max_element(by_cgroup.begin(), by_cgroup.end(),
                                          [](const auto& a, const auto& b) { return a.second < b.second; });
    ASSERT_NE(busiest, by_cgroup.end());
    const std::vector<double> per_cgroup = stored_samples(
        server_port, "lockscope_cgroup_contentions_total{cgroup=\"" + busiest->first + "\",job=\"lockscope\"}");
    ASSERT_FALSE(per_cgroup.empty()) << "no samples for cgroup " << busiest->first;
    EXPECT_GT(per_cgroup.back(), 0.5 * double(busiest->second));
    EXPECT_LE(uint64_t(per_cgroup.back()), busiest->second);

    const std::string info = http_get(server_port, "/api/v1/query?query=" + url_encode("lockscope_build_info[10m]"));
    // The version of the binary that ran (asked of it, not stamped into this
    // test when it was built: the two can be built at different commits).
    const Finished version = run_lockscope({"--version"});
    ASSERT_EQ(version.exit_code, 0) << version.err;
    const std::string running = version.out.substr(0, version.out.find('\n')).substr(std::string("lockscope ").size());
    EXPECT_NE(info.find("\"version\":\"" + running + "\""), std::string::npos) << info;
}

// Two hosts' exporters (two recorders with their own --prometheus-label),
// scraped by a real server: the per-lock series carry no kernel, and the
// join on (instance, job) with lockscope_build_info gives them each
// exporter's kernel and labels, as docs/fleet-diff.md tells users to write it.
TEST(Prometheus, BuildInfoJoinsToEachExportersLockSeries)
{
    LOCKSCOPE_REQUIRE_BPF();
    TempDir dir;
    const unsigned port_a = free_port(), port_b = free_port();
    const PrometheusServer server(scrape_every_second(dir.path(), {port_a, port_b}), dir.path() / "data");
    std::vector<Process> exporters;
    for (const auto& [port, role] : {std::pair{port_a, "db"}, std::pair{port_b, "web"}})
        exporters.push_back(
            Process::start({lockscope_bin(), "record", "--prometheus", "127.0.0.1:" + std::to_string(port), "-w",
                            "pipe", "-t", "2", "-d", "180", "--prometheus-label", std::string("role=") + role}));
    // Each serves before the clock below starts (on a busy machine, loading
    // the programs and reading the kernel's names takes seconds); both are
    // stopped by SIGINT once the checks have their answers.
    for (Process& p : exporters)
        ASSERT_TRUE(p.wait_for_stderr("serving Prometheus metrics", 60)) << p.stderr_so_far();

    // What the docs' join returns: per lock, the role and kernel of its host.
    const std::string join =
        "sum by (lock, kind, role, kernel, cpus) (lockscope_contentions_total"
        "{lock=\"pipe_inode_info.mutex\"} * on (instance, job) group_left (role, kernel, cpus) "
        "lockscope_build_info)";
    nlohmann::json result;
    const bool both = wait_until(
        [&] {
            const nlohmann::json j = server.query(join);
            result = j.is_object() ? j["data"]["result"] : nlohmann::json();
            return result.is_array() && result.size() == 2;
        },
        60);
    // The fleet diff over the same join: one host a side is not enough.
    // (After a few scrapes, so that the window holds some of both.)
    EXPECT_TRUE(wait_until(
        [&] { return server.query("count_over_time(lockscope_build_info[1m]) >= 3")["data"]["result"].size() == 2; },
        30));
    const Finished fleet = run({lockscope_bin(), "diff", "--prometheus", server.url(), "--a", "role=\"db\"", "--b",
                                "role=\"web\"", "--window", "1m", "--format", "json"});
    for (Process& p : exporters)
        p.signal(SIGINT);
    ASSERT_TRUE(both) << "the join did not give both exporters' pipe lock: " << result.dump()
                      << "\nbuild info: " << server.query("lockscope_build_info").dump() << "\npipe lock: "
                      << server.query("lockscope_contentions_total{lock=\"pipe_inode_info.mutex\"}").dump()
                      << "\nthe locks each served: "
                      << server.query("count by (instance, lock, kind) (lockscope_contentions_total)").dump()
                      << "\nexporters said:\n"
                      << exporters[0].stderr_so_far() << exporters[1].stderr_so_far();
    ASSERT_EQ(fleet.exit_code, 0) << fleet.err;
    const nlohmann::json diff = nlohmann::json::parse(fleet.out);
    EXPECT_EQ(diff["hosts"], (nlohmann::json{{"a", 1}, {"b", 1}}));
    bool pipe_compared = false;
    for (const auto& lock : diff["locks"])
        if (lock["name"] == "pipe_inode_info.mutex") {
            pipe_compared = true;
            EXPECT_EQ(lock["metrics"][0]["verdict"], "not enough data");
            EXPECT_NE(lock["metrics"][0].value("reason", "").find("not enough hosts"), std::string::npos);
        }
    EXPECT_TRUE(pipe_compared) << fleet.out.substr(0, 600);

    utsname u{};
    ASSERT_EQ(uname(&u), 0);
    std::set<std::string> roles;
    for (const auto& r : result) {
        roles.insert(r["metric"].value("role", ""));
        EXPECT_EQ(r["metric"].value("kernel", ""), u.release) << r.dump();
        EXPECT_EQ(r["metric"].value("cpus", ""), std::to_string(sysconf(_SC_NPROCESSORS_ONLN))) << r.dump();
        EXPECT_GT(std::stod(r["value"][1].get<std::string>()), 0) << r.dump();
    }
    EXPECT_EQ(roles, (std::set<std::string>{"db", "web"}));
    // The lock series themselves carry no kernel: that is the join's job.
    const nlohmann::json lock_series = server.query("lockscope_contentions_total{kernel!=\"\"}");
    EXPECT_TRUE(lock_series["data"]["result"].empty()) << lock_series.dump();
    for (Process& p : exporters)
        EXPECT_EQ(p.wait(60).exit_code, 0);
}

// Always-on use: --prometheus without -o records and serves, but leaves no file.
TEST(Prometheus, WithoutOutputNoSessionFileIsWritten)
{
    LOCKSCOPE_REQUIRE_BPF();
    TempDir dir;
    Finished rec =
        run({"sh", "-c",
             "cd '" + dir.path().string() + "' && exec '" + lockscope_bin() + "' record -d 1 --prometheus 127.0.0.1:0"},
            120);
    ASSERT_EQ(rec.exit_code, 0) << rec.err;
    EXPECT_NE(rec.err.find("without a session file"), std::string::npos) << rec.err;
    EXPECT_NE(rec.err.find("serving Prometheus metrics at http://127.0.0.1:"), std::string::npos) << rec.err;
    EXPECT_TRUE(dir.empty()) << "a file was written: " << fs::directory_iterator(dir.path())->path();
}

// The exporter alone (no session file) gives its probe's tables a fresh
// start once they are half full (40 pipes in a table of 64, whatever else
// contends); the lock series go on rising with their
// names, and count what a second recorder of the workload alone counts.
TEST(Prometheus, AFreshProbeTakesOverAndTheSeriesGoOn)
{
    LOCKSCOPE_REQUIRE_BPF();
    const unsigned port = free_port();
    Process exporter = Process::start({lockscope_bin(), "record", "--prometheus", "127.0.0.1:" + std::to_string(port),
                                       "-i", "0.25", "--max-locks", "64"});
    ASSERT_TRUE(exporter.wait_for_stderr("recording system-wide", 60)) << exporter.stderr_so_far();
    Process load = Process::start({lockscope_bin(), "workload", "pipes", "--locks", "40", "-t", "2", "-d", "5"},
                                  /*hold=*/true);
    const pid_t load_pid = load.pid();
    TempDir dir;
    const std::string single = (dir.path() / "single.lockscope").string();
    Process one = Process::start({lockscope_bin(), "record", "-p", std::to_string(load_pid), "-o", single});
    ASSERT_TRUE(one.wait_for_stderr("lockscope: recording", 60)) << one.stderr_so_far();
    load.release();
    ASSERT_EQ(load.wait(60).exit_code, 0);
    ASSERT_EQ(one.wait(60).exit_code, 0);
    // The exporter's window must hold the workload's end: two more of its
    // intervals drained (the first may have begun before the end).
    const double drained = sample_value(http_get(port, "/metrics"), "lockscope_intervals_total");
    ASSERT_GE(drained, 0) << "the exporter serves no lockscope_intervals_total";
    std::string body;
    ASSERT_TRUE(wait_until(
        [&] {
            body = http_get(port, "/metrics");
            return sample_value(body, "lockscope_intervals_total") >= drained + 2;
        },
        60))
        << "the exporter drained no interval after the workload ended";
    exporter.signal(SIGTERM);
    Finished f = exporter.wait(60);
    ASSERT_EQ(f.exit_code, 0) << f.err;
    EXPECT_NE(f.err.find("a fresh probe takes over\n"), std::string::npos) << f.err;

    double exported = 0;
    std::istringstream lines(body);
    for (std::string line; std::getline(lines, line);)
        if (line.starts_with("lockscope_contentions_total{") &&
            line.find("lock=\"pipe_inode_info.mutex\"") != std::string::npos)
            exported += std::stod(line.substr(line.rfind(' ') + 1));
    uint64_t recorded = 0;
    for (const ReportRow& r : build_report(load_session(single), {}).rows)
        if (r.name == "pipe_inode_info.mutex")
            recorded += r.counters.contentions;
    ASSERT_GT(recorded, 1000u) << "the workload contended too little to judge";
    // System-wide, the exporter also counts other processes' pipes: at least
    // the workload's, less only the moments between two probes.
    EXPECT_GE(exported, 0.98 * double(recorded)) << body.substr(0, 2000);
}

}  // namespace
}  // namespace lockscope::test
