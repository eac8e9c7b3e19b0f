// `lockscope diff --prometheus` against a real Prometheus server whose TSDB
// holds generated data with a known truth: 20 independent fleets (label
// seed="N" on their build info), each of 40 hosts, half on one kernel release
// and half on the next, 30 locks. On the new release lock_03 waits and
// contends 30% more, lock_07 30% less; every other lock, and every spin-
// failure rate and CPU idle, is the same on both with host-to-host noise.
// Some hosts restart their exporter (a counter reset) inside the window.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <set>

#include "prometheus_server.h"
#include "subprocess.h"
#include "temp_dir.h"

namespace lockscope::test {
namespace {

namespace fs = std::filesystem;

constexpr int kSeeds = 20, kHosts = 40, kLocks = 30, kSamples = 6, kStep = 60;
constexpr int kWorse = 3, kBetter = 7;
constexpr const char* kOld = "6.1.0-47-amd64";
constexpr const char* kNew = "6.1.0-57-amd64";
// One more fleet, on two other releases, where nothing changes but the new
// release's hosts have twice the CPUs and twice the contention per host.
constexpr int kMixed = kSeeds + 1;
constexpr const char* kMixedOld = "6.2.0-1-amd64";
constexpr const char* kMixedNew = "6.2.0-2-amd64";

int cpus(int seed, int host)
{
    return seed == kMixed && host >= kHosts / 2 ? 4 : 2;
}

const char* kernel(int seed, int host)
{
    if (seed == kMixed)
        return host < kHosts / 2 ? kMixedOld : kMixedNew;
    return host < kHosts / 2 ? kOld : kNew;
}

std::string lock_name(int j)
{
    std::string name = std::to_string(j);
    return "lock_" + (name.size() < 2 ? "0" + name : name);
}

// Per-host rates of one fleet (seed): [host][lock] → contentions/s etc.
struct HostRates {
    std::vector<double> contentions, wait_s, attempts, failures;
    double idle_fraction = 0;
};

std::vector<HostRates> fleet_rates(int seed)
{
    std::mt19937_64 rng(uint64_t(seed) * 7919);
    std::normal_distribution<double> z(0, 1);
    std::vector<HostRates> hosts(kHosts);
    for (int i = 0; i < kHosts; ++i) {
        const bool new_kernel = i >= kHosts / 2 && seed != kMixed;
        const double host_factor = (1 + 0.05 * z(rng)) * cpus(seed, i) / 2;
        HostRates& h = hosts[size_t(i)];
        for (int j = 0; j < kLocks; ++j) {
            // Locks 3 and 7 share a base (and are the heaviest), so the
            // totals do not change: every total is null.
            const double base = j == kWorse || j == kBetter ? 2000 : 500 + 100 * (j % 4);
            const double effect = !new_kernel ? 1.0 : j == kWorse ? 1.3 : j == kBetter ? 0.7 : 1.0;
            const double c = base * effect * host_factor * (1 + 0.1 * z(rng));
            h.contentions.push_back(c);
            h.wait_s.push_back(2e-6 * base * effect * host_factor * (1 + 0.1 * z(rng)));
            h.attempts.push_back(0.9 * c * (1 + 0.05 * z(rng)));
            h.failures.push_back(0.2 * h.attempts.back() * (1 + 0.1 * z(rng)));
        }
        h.idle_fraction = 0.3 * (1 + 0.1 * z(rng));
    }
    return hosts;
}

std::string instance(int seed, int host)
{
    return "s" + std::to_string(seed) + "-h" + std::to_string(host) + ":9464";
}

// The counter's value at sample k for a steady rate: hosts with i % 9 == 4
// restarted their exporter right after sample 2, so their counters start
// again from 0 (rate() adds the count from before the reset back).
double cumulative(double rate, int host, int k)
{
    const double offset = 1000 * rate;  // the exporter ran before the window
    if (host % 9 == 4 && k > 2)
        return rate * kStep * (k - 2);
    return offset + rate * kStep * k;
}

// One OpenMetrics file with every fleet, for promtool's backfill.
void write_openmetrics(const fs::path& file, double t0)
{
    std::ofstream out(file);
    char line[512];
    auto series = [&](const std::string& name_labels, auto value_at) {
        for (int k = 0; k < kSamples; ++k) {
            std::snprintf(line, sizeof line, "%s %.6f %.0f\n", name_labels.c_str(), value_at(k), t0 + kStep * k);
            out << line;
        }
    };
    std::vector<std::vector<HostRates>> fleets;
    for (int s = 1; s <= kMixed; ++s)
        fleets.push_back(fleet_rates(s));
    auto host_labels = [](int s, int i) { return "instance=\"" + instance(s, i) + "\",job=\"lockscope\""; };
    out << "# TYPE lockscope_build_info gauge\n";
    for (int s = 1; s <= kMixed; ++s)
        for (int i = 0; i < kHosts; ++i)
            series("lockscope_build_info{" + host_labels(s, i) + ",version=\"test\",kernel=\"" + kernel(s, i) +
                       "\",cpus=\"" + std::to_string(cpus(s, i)) + "\",cpu_model=\"Test CPU\",rack=\"" +
                       (i % 2 ? "odd" : "even") + "\",seed=\"" + std::to_string(s) + "\"}",
                   [](int) { return 1.0; });
    const std::pair<const char*, std::vector<double> HostRates::*> counters[] = {
        {"contentions", &HostRates::contentions},
        {"wait_seconds", &HostRates::wait_s},
        {"spin_attempts", &HostRates::attempts},
        {"spin_failures", &HostRates::failures}};
    for (const auto& [name, member] : counters) {
        out << "# TYPE lockscope_" << name << " counter\n";
        for (int s = 1; s <= kMixed; ++s)
            for (int i = 0; i < kHosts; ++i)
                for (int j = 0; j < kLocks; ++j) {
                    const double rate = (fleets[size_t(s - 1)][size_t(i)].*member)[size_t(j)];
                    series("lockscope_" + std::string(name) + "_total{" + host_labels(s, i) + ",lock=\"" +
                               lock_name(j) + "\",kind=\"" + (j % 3 == 2 ? "rwsem/write" : "mutex") + "\"}",
                           [&](int k) { return cumulative(rate, i, k); });
                }
    }
    for (const char* name : {"cpu_idle_seconds", "cpu_seconds"}) {
        out << "# TYPE lockscope_" << name << " counter\n";
        for (int s = 1; s <= kMixed; ++s)
            for (int i = 0; i < kHosts; ++i) {
                const double idle = fleets[size_t(s - 1)][size_t(i)].idle_fraction;
                const double rate = cpus(s, i) * (std::string(name) == "cpu_seconds" ? 1.0 : idle);
                series("lockscope_" + std::string(name) + "_total{" + host_labels(s, i) + "}",
                       [&](int k) { return cumulative(rate, i, k); });
            }
    }
    out << "# EOF\n";
}

class FleetDiff : public ::testing::Test {
protected:
    static void SetUpTestSuite()
    {
        dir_ = std::make_unique<lockscope::testing::TempDir>();
        // Recent enough to be inside the server's retention, old enough to
        // be in blocks of their own.
        const double t0 = std::floor((double(time(nullptr)) - 3 * 3600) / 60) * 60;
        end_ = t0 + kStep * (kSamples - 1);
        const fs::path file = dir_->path() / "fleet.om", data = dir_->path() / "data";
        write_openmetrics(file, t0);
        const Finished blocks =
            run({"/usr/bin/promtool", "tsdb", "create-blocks-from", "openmetrics", file.string(), data.string()}, 600);
        ASSERT_EQ(blocks.exit_code, 0) << blocks.err << blocks.out;
        fs::remove(file);
        std::ofstream(dir_->path() / "prometheus.yml") << "global:\n  scrape_interval: 1m\n";
        server_ = std::make_unique<PrometheusServer>(dir_->path() / "prometheus.yml", data);
    }
    static void TearDownTestSuite()
    {
        server_.reset();
        dir_.reset();
    }

    // `lockscope diff --prometheus` as JSON, at alpha 0.001. The suite makes
    // 30 diffs that must all stay quiet where nothing changed; at 0.05 (each
    // diff's own family-wise level over its locks) one diff in twenty would
    // call something by chance, so each is held to about 0.05 / 30
    // (Bonferroni over the diffs).
    static nlohmann::json diff(const std::string& a, const std::string& b, const std::string& extra = "")
    {
        std::vector<std::string> argv{lockscope_bin(), "diff", "--prometheus", server_->url(),
                                      "--a",           a,      "--b",          b,
                                      "--window",      "5m",   "--end",        std::to_string(long(end_)),
                                      "--format",      "json", "--alpha",      "0.001"};
        if (!extra.empty())
            argv.insert(argv.end(), {"--top", extra});
        const Finished f = run(argv, 120);
        EXPECT_EQ(f.exit_code, 0) << f.err;
        return f.exit_code == 0 ? nlohmann::json::parse(f.out) : nlohmann::json();
    }

    static std::string group(int seed, const char* kernel, const char* rack = nullptr)
    {
        std::string s = "seed=\"" + std::to_string(seed) + "\",kernel=\"" + kernel + "\"";
        return rack ? s + ",rack=\"" + rack + "\"" : s;
    }

    // (lock or "total", metric, verdict) of every metric judged different.
    static std::set<std::tuple<std::string, std::string, std::string>> calls(const nlohmann::json& j)
    {
        std::set<std::tuple<std::string, std::string, std::string>> out;
        auto judged = [](const nlohmann::json& m) {
            const std::string v = m["verdict"];
            return v != "no significant difference" && v != "not enough data";
        };
        for (const auto& m : j["totals"])
            if (judged(m))
                out.insert({"total", m["metric"].get<std::string>(), m["verdict"].get<std::string>()});
        for (const auto& l : j["locks"])
            for (const auto& m : l["metrics"])
                if (judged(m))
                    out.insert({l["name"].get<std::string>(), m["metric"].get<std::string>(),
                                m["verdict"].get<std::string>()});
        return out;
    }

    static inline std::unique_ptr<lockscope::testing::TempDir> dir_;
    static inline std::unique_ptr<PrometheusServer> server_;
    static inline double end_ = 0;
};

TEST_F(FleetDiff, CallsExactlyTheLockThatGotWorseAndTheOneThatGotBetterInEveryFleet)
{
    const std::set<std::tuple<std::string, std::string, std::string>> expected{
        {lock_name(kWorse), "wait_per_s", "worse"},
        {lock_name(kWorse), "contentions_per_s", "worse"},
        {lock_name(kBetter), "wait_per_s", "better"},
        {lock_name(kBetter), "contentions_per_s", "better"}};
    for (int seed = 1; seed <= kSeeds; ++seed) {
        const nlohmann::json j = diff(group(seed, kOld), group(seed, kNew));
        ASSERT_TRUE(j.is_object());
        EXPECT_EQ(j["samples"], "hosts");
        EXPECT_EQ(j["hosts"]["a"], kHosts / 2) << "seed " << seed;
        EXPECT_EQ(j["hosts"]["b"], kHosts / 2) << "seed " << seed;
        EXPECT_EQ(calls(j), expected) << "seed " << seed;
        // 20 locks one by one, the other 10 summed as one row.
        EXPECT_EQ(j["locks"].size(), 21u) << "seed " << seed;
        bool rest = false;
        for (const auto& l : j["locks"])
            rest = rest || (l["name"] == "(rest)" && l["kind"] == "all");
        EXPECT_TRUE(rest) << "no (rest) row, seed " << seed;
    }
}

TEST_F(FleetDiff, HalvesOfOneReleaseCallNothing)
{
    // Half the fleets: each A/A diff is as expensive as a real one.
    for (int seed = 1; seed <= kSeeds / 2; ++seed) {
        const nlohmann::json j = diff(group(seed, kOld, "even"), group(seed, kOld, "odd"), "40");
        ASSERT_TRUE(j.is_object());
        EXPECT_EQ(j["hosts"]["a"], kHosts / 4);
        EXPECT_EQ(j["hosts"]["b"], kHosts / 4);
        EXPECT_EQ(j["locks"].size(), size_t(kLocks)) << "--top 40 compares every lock on its own";
        EXPECT_TRUE(calls(j).empty()) << "seed " << seed << ": " << j["locks"].dump().substr(0, 400);
    }
}

// --by kernel: the two releases are the two largest groups (all fleets
// together), the older one in A.
TEST_F(FleetDiff, ByKernelComparesTheTwoReleasesOlderFirst)
{
    const Finished f = run({lockscope_bin(), "diff", "--prometheus", server_->url(), "--by", "kernel", "--window", "5m",
                            "--end", std::to_string(long(end_)), "--format", "json", "--alpha", "0.001"});
    ASSERT_EQ(f.exit_code, 0) << f.err;
    const nlohmann::json j = nlohmann::json::parse(f.out);
    EXPECT_EQ(j["a"], std::string("hosts with lockscope_build_info{kernel=\"") + kOld + "\"}");
    EXPECT_EQ(j["hosts"]["a"], kSeeds * kHosts / 2);
    EXPECT_EQ(j["hosts"]["b"], kSeeds * kHosts / 2);
    const auto called = calls(j);
    EXPECT_TRUE(called.count({lock_name(kWorse), "wait_per_s", "worse"})) << j["locks"].dump().substr(0, 400);
    EXPECT_TRUE(called.count({lock_name(kBetter), "wait_per_s", "better"})) << j["locks"].dump().substr(0, 400);
}

// Hosts twice the size with twice the contention have the same contention
// per CPU: the rates become per CPU, and nothing is called.
TEST_F(FleetDiff, HostsOfDifferentSizesCompareRatesPerCpu)
{
    const nlohmann::json j = diff("seed=\"" + std::to_string(kMixed) + "\",kernel=\"" + kMixedOld + "\"",
                                  "seed=\"" + std::to_string(kMixed) + "\",kernel=\"" + kMixedNew + "\"");
    ASSERT_TRUE(j.is_object());
    std::set<std::string> metrics;
    for (const auto& l : j["locks"])
        for (const auto& m : l["metrics"])
            metrics.insert(m["metric"].get<std::string>());
    EXPECT_EQ(metrics, (std::set<std::string>{"wait_per_s_per_cpu", "contentions_per_s_per_cpu", "spin_failure_rate"}));
    EXPECT_TRUE(calls(j).empty()) << j["locks"].dump().substr(0, 600);
}

TEST_F(FleetDiff, TwoHostsAreNotEnoughAndSaySo)
{
    const nlohmann::json j = diff(group(1, kOld) + ",instance=~\"s1-h(0|1):9464\"", group(1, kNew));
    ASSERT_TRUE(j.is_object());
    EXPECT_EQ(j["hosts"]["a"], 2);
    ASSERT_FALSE(j["locks"].empty());
    for (const auto& l : j["locks"])
        for (const auto& m : l["metrics"]) {
            EXPECT_EQ(m["verdict"], "not enough data") << l["name"];
            EXPECT_NE(m.value("reason", "").find("not enough hosts"), std::string::npos) << m.dump();
        }
}

// The rollout dashboard's queries run on the same data: each returns series,
// and its per-host wait by kernel release shows lock_03 30% up on the new one.
TEST_F(FleetDiff, RolloutDashboardJoinsLocksToKernelReleases)
{
    std::ifstream file(std::string(LOCKSCOPE_SOURCE_DIR) + "/examples/grafana/lockscope-rollout-dashboard.json");
    const nlohmann::json dashboard = nlohmann::json::parse(file);
    size_t queries = 0;
    for (const auto& panel : dashboard["panels"])
        for (const auto& target : panel["targets"]) {
            std::string expr = target["expr"];
            for (const auto& [from, to] : {std::pair{"$__rate_interval", "5m"}, std::pair{"$kernel", ".*"}})
                for (size_t at; (at = expr.find(from)) != std::string::npos;)
                    expr.replace(at, std::string(from).size(), to);
            const nlohmann::json j = server_->query(expr, std::to_string(long(end_)));
            ++queries;
            ASSERT_EQ(j.value("status", ""), "success") << panel["title"] << ": " << expr;
            EXPECT_FALSE(j["data"]["result"].empty()) << panel["title"] << ": " << expr;
            if (panel["title"] != "Wait per host by lock and kernel release")
                continue;
            std::map<std::string, double> worse;  // kernel → per-host wait of lock_03
            for (const auto& r : j["data"]["result"])
                if (r["metric"].value("lock", "") == lock_name(kWorse))
                    worse[r["metric"].value("kernel", "")] = std::stod(r["value"][1].get<std::string>());
            ASSERT_TRUE(worse.count(kOld) && worse.count(kNew)) << "lock_03 is not split by kernel release";
            // Over the 20 fleets' 400 hosts a side, the mean is within a few % of the truth.
            EXPECT_NEAR(worse[kNew] / worse[kOld], 1.3, 0.05);
        }
    EXPECT_EQ(queries, 5u);
}

TEST_F(FleetDiff, AnUnknownGroupIsAnErrorThatSaysWhichSelector)
{
    const Finished f = run({lockscope_bin(), "diff", "--prometheus", server_->url(), "--a", "kernel=\"5.10.0\"", "--b",
                            group(1, kNew), "--window", "5m", "--end", std::to_string(long(end_))});
    EXPECT_EQ(f.exit_code, 1);
    EXPECT_NE(f.err.find("lockscope_build_info{kernel=\"5.10.0\"}"), std::string::npos) << f.err;
}

}  // namespace
}  // namespace lockscope::test
