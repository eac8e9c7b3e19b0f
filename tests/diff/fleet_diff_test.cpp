// `lockscope diff --prometheus` against a real Prometheus server whose TSDB
// holds generated data with a known truth (fleet_data.h): 8 independent
// fleets of 40 hosts, half on one kernel release and half on the next, where
// lock_03 got 30% worse and lock_07 30% better.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <memory>
#include <set>

#include "fleet_data.h"
#include "subprocess.h"

namespace lockscope::test {
namespace {

constexpr int kSeeds = 8;
static_assert(kSeeds < kMixed);

class FleetDiff : public ::testing::Test {
protected:
    static void SetUpTestSuite() { fleet_ = std::make_unique<FleetPrometheus>(kSeeds); }
    static void TearDownTestSuite() { fleet_.reset(); }

    // `lockscope diff --prometheus` as JSON, at alpha 0.001. The suite makes
    // 15 diffs that must all stay quiet where nothing changed; at 0.05 (each
    // diff's own family-wise level over everything it tests) one diff in
    // twenty would call something by chance, so each is held to less than
    // 0.05 / 15 (Bonferroni over the diffs). Eight fleets are as many as the
    // suite needs: a diff without family-wise control calls something in
    // each A/A diff of 30 locks far more often than 1 in 1000.
    static nlohmann::json diff(const std::string& a, const std::string& b, const std::string& extra = "")
    {
        std::vector<std::string> argv{lockscope_bin(), "diff", "--prometheus", fleet_->url(),
                                      "--a",           a,      "--b",          b,
                                      "--window",      "5m",   "--end",        std::to_string(long(fleet_->end())),
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

    static inline std::unique_ptr<FleetPrometheus> fleet_;
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
    const Finished f = run({lockscope_bin(), "diff", "--prometheus", fleet_->url(), "--by", "kernel", "--window", "5m",
                            "--end", std::to_string(long(fleet_->end())), "--format", "json", "--alpha", "0.001"});
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
            const nlohmann::json j = fleet_->server().query(expr, std::to_string(long(fleet_->end())));
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
            // Over the 8 fleets' 160 hosts a side, the mean is within a few % of the truth.
            EXPECT_NEAR(worse[kNew] / worse[kOld], 1.3, 0.05);
        }
    EXPECT_EQ(queries, 5u);
}

TEST_F(FleetDiff, AnUnknownGroupIsAnErrorThatSaysWhichSelector)
{
    const Finished f = run({lockscope_bin(), "diff", "--prometheus", fleet_->url(), "--a", "kernel=\"5.10.0\"", "--b",
                            group(1, kNew), "--window", "5m", "--end", std::to_string(long(fleet_->end()))});
    EXPECT_EQ(f.exit_code, 1);
    EXPECT_NE(f.err.find("lockscope_build_info{kernel=\"5.10.0\"}"), std::string::npos) << f.err;
}

}  // namespace
}  // namespace lockscope::test
