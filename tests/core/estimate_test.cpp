// Sampled timing (record --sample N): the estimator and its standard error,
// the session's statement of the mode, and how reports show estimates and
// what was never measured.
#include "core/analysis/estimate.h"
#include "pipeline/sampled_timing.h"
#include "core/analysis/report.h"
#include "core/storage/session_store.h"
#include "sample_session.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <random>
#include <vector>

using namespace lockscope;
using lockscope::testing::TempDir;

namespace {

// What the kernel adds for one timed wait (on CPU) under --sample (episode.h's ls_account).
void add_timed(LockCounters& raw, uint64_t wait_ns)
{
    raw.timed++;
    raw.wait_ns += wait_ns;
    const uint64_t w = (wait_ns + 128) >> 8;
    raw.wait_var_us2 += w * w;
}

}  // namespace

TEST(EstimateTest, ScalesTimesByNAndKeepsCounts)
{
    LockCounters c;
    c.contentions = 640;
    c.spin_attempts = 500;
    c.spin_failures = 200;
    c.sleeps = 30;
    c.max_wait_ns = 9000;
    c.spin_ns = 100;
    c.sleep_ns = 200;
    c.preempt_ns = 300;
    c.hist[12] = 10;
    for (int i = 0; i < 10; ++i)
        add_timed(c, 4096);
    LockCounters scaled = c;
    scale_timed(scaled, 64);
    EXPECT_EQ(scaled.contentions, 640u);
    EXPECT_EQ(scaled.spin_attempts, 500u);
    EXPECT_EQ(scaled.spin_failures, 200u);
    EXPECT_EQ(scaled.sleeps, 30u);
    EXPECT_EQ(scaled.timed, 10u);
    EXPECT_EQ(scaled.max_wait_ns, 9000u);                // the longest timed wait: no estimate of a maximum
    EXPECT_EQ(scaled.wait_ns, 64u * 40960 + 200 + 300);  // off CPU: measured in every episode
    EXPECT_EQ(scaled.spin_ns, 6400u);
    EXPECT_EQ(scaled.sleep_ns, 200u);
    EXPECT_EQ(scaled.preempt_ns, 300u);
    EXPECT_EQ(scaled.hist[12], 640u);
    // N(N-1) * sum of squares: 64 * 63 * 10 * (4.096 us)^2
    EXPECT_NEAR(wait_stderr_ns(scaled), std::sqrt(64.0 * 63 * 10 * 4.096 * 4.096) * 1000, 2.0);

    LockCounters full = c;
    scale_timed(full, 1);
    EXPECT_EQ(full, c);
}

// The estimate is unbiased and its stated error is the real spread: many
// simulated recordings of the same waits (skewed, like real waits), each
// timing every episode with probability 1/N as the kernel does.
TEST(EstimateTest, EstimateIsUnbiasedAndItsStandardErrorMatchesTheSpread)
{
    std::mt19937_64 rng(17);
    std::lognormal_distribution<double> wait_dist(std::log(20'000.0), 1.0);
    std::vector<uint64_t> waits(20'000);
    double truth = 0;
    for (uint64_t& w : waits) {
        w = uint64_t(wait_dist(rng));
        truth += double(w);
    }
    const uint32_t n = 16;
    std::uniform_int_distribution<uint32_t> pick(0, n - 1);
    const int trials = 400;
    double sum = 0, sum_sq = 0, se_sum = 0;
    int covered = 0;
    for (int t = 0; t < trials; ++t) {
        LockCounters raw;
        raw.contentions = waits.size();
        for (uint64_t w : waits)
            if (pick(rng) == 0)
                add_timed(raw, w);
        scale_timed(raw, n);
        const double est = double(raw.wait_ns), se = wait_stderr_ns(raw);
        sum += est;
        sum_sq += est * est;
        se_sum += se;
        covered += std::abs(est - truth) <= 2 * se;
    }
    const double mean = sum / trials, sd = std::sqrt(sum_sq / trials - mean * mean);
    EXPECT_NEAR(mean, truth, 3 * sd / std::sqrt(double(trials)));
    EXPECT_NEAR(se_sum / trials, sd, 0.1 * sd);
    EXPECT_GE(covered, int(0.9 * trials));  // about 95% expected within 2 standard errors
}

TEST(EstimateTest, TimingMetadataRoundTrips)
{
    TempDir dir;
    const std::string path = dir.file("s.lockscope");
    {
        auto w = SessionWriter::create(path, false);
        auto meta = lockscope::testing::sample_meta();
        set_timing_meta(meta, 64);
        w.set_meta(meta);
        w.close();
    }
    const Session s = load_session(path);
    EXPECT_EQ(s.meta.at("timing"), "sampled");
    EXPECT_EQ(timing_period(s.meta), 64u);

    std::map<std::string, std::string> meta;
    EXPECT_EQ(timing_period(meta), 1u);  // recorded before sampled timing: every wait timed
    set_timing_meta(meta, 1);
    EXPECT_EQ(meta.at("timing"), "full");
    EXPECT_EQ(timing_period(meta), 1u);
    meta = {{"timing", "sampled"}, {"timing.period", "x"}};
    EXPECT_EQ(timing_period(meta), std::nullopt);
    meta = {{"timing", "sampled"}};
    EXPECT_EQ(timing_period(meta), std::nullopt);
    meta = {{"timing", "sampled"}, {"timing.period", "1"}};
    EXPECT_EQ(timing_period(meta), std::nullopt);
}

TEST(EstimateTest, WaitTextCarriesItsErrorOrSaysNotTimed)
{
    LockCounters c;
    c.contentions = 100;
    c.timed = 2;
    c.wait_ns = 1'230'000'000;
    c.wait_var_us2 = 2'500'000'000;  // 50 ms standard error
    EXPECT_EQ(format_wait_estimate(c, 64), "1.23 s ± 0.05");
    EXPECT_EQ(format_wait_estimate(c, 1), "1.23 s");
    LockCounters task = c;  // per-task totals keep no variance: unknown, not 0
    task.wait_var_us2 = 0;
    EXPECT_EQ(format_wait_estimate(task, 64), "1.23 s ± ?");
    c.timed = 0;
    c.wait_ns = 0;
    c.wait_var_us2 = 0;
    EXPECT_EQ(format_wait_estimate(c, 64), "not timed");
    EXPECT_EQ(format_wait_estimate(c, 1), "0 ns");  // full timing: a real 0
    EXPECT_FALSE(times_measured(c, 64));
    EXPECT_TRUE(times_measured(LockCounters{}, 64));  // nothing ended: nothing to time
}

namespace {

// A sampled session: one run of one interval with a timed lock and one whose
// few episodes were none of them timed.
Session sampled_session(const TempDir& dir)
{
    const std::string path = dir.file("sampled.lockscope");
    auto w = SessionWriter::create(path, false);
    auto meta = lockscope::testing::sample_meta();
    set_timing_meta(meta, 64);
    w.set_meta(meta);
    const int64_t run = w.begin_run("run 1", 1'000'000'000ull);
    IntervalBatch b = lockscope::testing::sample_batch(run, 0, 2);
    b.new_locks[1].name = "untimed_lock";  // the sample gives locks 1 and 2 one name
    b.totals.counters = {};
    for (LockInterval& li : b.locks) {
        LockCounters& c = li.counters;
        if (li.lock_id == 2 && c.contentions) {
            c = {};
            c.contentions = 3;  // none timed
            c.spin_attempts = 3;
            c.spin_failures = 1;
        } else if (c.contentions) {
            c.timed = 5;
            c.wait_ns = 1'230'000'000;
            c.wait_var_us2 = 2'500'000'000;
        }
        b.totals.counters.add(c);
    }
    w.write_interval(b);
    lockscope::testing::end_run_complete(w, b);
    w.close();
    return load_session(path);
}

}  // namespace

TEST(EstimateTest, ReportShowsErrorsAndNeverZeroForWhatWasNotTimed)
{
    TempDir dir;
    const Session s = sampled_session(dir);
    Report rep = build_report(s, {.top = 0});
    ASSERT_EQ(rep.rows.size(), 2u);

    const std::string text = format_text(rep);
    EXPECT_NE(text.find("sampled: one episode in 64"), std::string::npos) << text;
    EXPECT_NE(text.find("1.23s±0.05"), std::string::npos) << text;
    EXPECT_NE(text.find("n/t"), std::string::npos) << text;

    const auto j = nlohmann::json::parse(format_json(rep));
    EXPECT_EQ(j["timing"]["mode"], "sampled");
    EXPECT_EQ(j["timing"]["period"], 64);
    EXPECT_NEAR(j["totals"]["wait_ns_stderr"].get<double>(), 50e6, 1);
    int untimed = 0;
    for (const auto& lock : j["locks"]) {
        if (lock["timed"] == 0) {
            ++untimed;
            EXPECT_EQ(lock["contentions"], 3);
            EXPECT_EQ(lock["spin_failures"], 1);  // counts stay
            for (const char* key : {"wait_ns", "wait_ns_stderr", "mean_wait_ns", "max_wait_ns", "spin_ns", "hist"})
                EXPECT_TRUE(lock[key].is_null()) << key;
            EXPECT_EQ(lock["offcpu_ns"], 0);  // measured in every episode: a real 0
        } else {
            EXPECT_EQ(lock["wait_ns"], 1'230'000'000);
            EXPECT_NEAR(lock["wait_ns_stderr"].get<double>(), 50e6, 1);
        }
    }
    EXPECT_EQ(untimed, 1);
}
