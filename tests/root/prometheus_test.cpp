// A real Prometheus server scrapes `lockscope record --prometheus` while a
// workload runs; what Prometheus stored must be what the session file holds:
// every scraped counter equals the session's cumulative count at some
// interval, the counters rise, and none exceeds the report's total.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "core/analysis/report.h"
#include "core/storage/session_store.h"
#include "lockscope_version.h"
#include "root_helpers.h"
#include "subprocess.h"
#include "temp_dir.h"

namespace lockscope::test {
namespace {

namespace fs = std::filesystem;

using lockscope::testing::TempDir;

unsigned free_port()
{
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
        throw std::runtime_error("cannot find a free port");
    close(fd);
    return ntohs(a.sin_port);
}

// Body of an HTTP/1.0 GET on loopback; "" when nothing answers or not 200.
std::string http_get(unsigned port, const std::string& target)
{
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(uint16_t(port));
    std::string response;
    if (fd >= 0 && connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
        const std::string request = "GET " + target + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
        if (write(fd, request.data(), request.size()) == ssize_t(request.size())) {
            char buf[65536];
            ssize_t n;
            while ((n = read(fd, buf, sizeof buf)) > 0)
                response.append(buf, size_t(n));
        }
    }
    if (fd >= 0)
        close(fd);
    const size_t body = response.find("\r\n\r\n");
    if (response.compare(0, 12, "HTTP/1.0 200") != 0 && response.compare(0, 12, "HTTP/1.1 200") != 0)
        return {};
    return body == std::string::npos ? std::string() : response.substr(body + 4);
}

std::string url_encode(const std::string& s)
{
    std::string out;
    for (unsigned char c : s) {
        if (isalnum(c) || c == '_' || c == '.' || c == '-' || c == '~') {
            out += char(c);
        } else {
            char hex[4];
            std::snprintf(hex, sizeof hex, "%%%02X", c);
            out += hex;
        }
    }
    return out;
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

bool wait_until(const std::function<bool()>& ready, double timeout_s)
{
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (!ready()) {
        if (std::chrono::steady_clock::now() > deadline)
            return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return true;
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
    const char* server = "/usr/bin/prometheus";
    ASSERT_TRUE(fs::exists(server)) << "Debian's prometheus package is missing (scripts/install-deps.sh installs it)";

    TempDir dir;
    const unsigned exporter_port = free_port(), server_port = free_port();
    const fs::path config = dir.path() / "prometheus.yml";
    std::ofstream(config) << "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                             "scrape_configs:\n  - job_name: lockscope\n    static_configs:\n"
                             "      - targets: ['127.0.0.1:"
                          << exporter_port << "']\n";
    Process prometheus = Process::start(
        {server, "--config.file=" + config.string(), "--storage.tsdb.path=" + (dir.path() / "data").string(),
         "--web.listen-address=127.0.0.1:" + std::to_string(server_port), "--log.level=warn"});
    ASSERT_TRUE(wait_until([&] { return !http_get(server_port, "/-/ready").empty(); }, 60))
        << "Prometheus did not become ready";

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
    EXPECT_NE(info.find(std::string("\"version\":\"") + LOCKSCOPE_VERSION + "\""), std::string::npos) << info;
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

}  // namespace
}  // namespace lockscope::test
