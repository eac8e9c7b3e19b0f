// record --sample N against full timing: the counts stay exact (the
// independent observer agrees in both modes) and the estimated wait lies
// within its stated error of the measured one.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "core/analysis/estimate.h"
#include "core/analysis/report.h"
#include "core/storage/session_store.h"
#include "observer.h"
#include "recording.h"
#include "root_helpers.h"
#include "subprocess.h"

namespace lockscope {
namespace {

constexpr uint32_t kTimingPeriod = 8;

struct MutexCounts {
    uint64_t attempts = 0, failures = 0;
};

MutexCounts mutex_counts(const Report& rep)
{
    MutexCounts m;
    for (const ReportRow& row : rep.rows)
        if (row.kind == "mutex") {
            m.attempts += row.counters.spin_attempts;
            m.failures += row.counters.spin_failures;
        }
    return m;
}

uint64_t unmatched_ends(const Session& s)
{
    uint64_t n = 0;
    for (const RunInfo& run : s.runs)
        n += run.unmatched_ends;
    return n;
}

// Exact counts against the observer, as RecordCounts checks them (1%: the
// observer also counts the rare episodes lost to nesting in our program).
void expect_counts_agree(const Report& rep, const Session& s, const test::Observed& o, const std::string& mode)
{
    SCOPED_TRACE(mode);
    const MutexCounts m = mutex_counts(rep);
    auto near = [](uint64_t ours, uint64_t theirs, const char* what) {
        EXPECT_NEAR(double(ours), double(theirs), std::max(1.0, 0.01 * double(theirs)))
            << what << ": lockscope " << ours << " vs observer " << theirs;
    };
    near(m.attempts, o.mutex_spin, "mutex spin attempts");
    near(m.failures, o.mutex_queued, "mutex spin failures");
    near(rep.totals.counters.contentions + unmatched_ends(s) + rep.totals.lost_by_cause.nested, o.ends,
         "contention ends");
    const LockCounters& c = rep.totals.counters;
    EXPECT_EQ(c.spin_successes + c.spin_failures, c.spin_attempts);
}

Report full_report(const Session& s)
{
    ReportOptions all;
    all.top = SIZE_MAX;
    return build_report(s, all);
}

// Two recorders attached to the same workload at once, one timing every
// episode and one timing one in kTimingPeriod: both see the same episodes, so the
// sampling error, which the standard error states, and the observer effect
// are all that set them apart. The latter is not sampling noise: a timed
// episode reads the clock at its begin, before it spins or queues, which an
// untimed one does not, and on pipe's mutex, whose spinners race for the lock
// within tens of ns, that delay changes who wins often enough to move the
// estimate by more than its standard error. With 4 threads, 16 runs of 2-3M
// episodes on one machine gave -2.2% to +7.2% of the full-timing wait, with
// the standard error at 0.15-0.7%; making every untimed begin read the clock
// too turned the shift negative (-0.6% to -3.1%), which is how it was told
// from a bias in the estimate. On a machine whose BPF programs cost more
// against pipe's sub-microsecond waits, 4 threads gave +8.5% to +12.7% over
// 13 runs. (8 threads, with more waiters asleep, gave +5.2% to +7.8% there
// over 20 runs, but once +61%, which no 4-thread run came near.) So the
// estimate must lie within 3 standard errors plus 15% of the measured wait:
// that still fails a wrong scale, a dropped off-CPU part or a lost timed
// episode, which are all tens of percent. The full recorder
// attaches first, so its programs run first on every event in every run.
TEST(SampledTiming, EstimateCoversTheMeasuredWaitOfTheSameEpisodes)
{
    LOCKSCOPE_REQUIRE_BPF();
    test::Process target =
        test::Process::start({test::lockscope_bin(), "workload", "pipe", "-t", "4", "-d", "2"}, /*hold=*/true);
    test::Observer observer(target.pid());
    const std::string full_out = test::temp_path("full.lockscope"), sampled_out = test::temp_path("sampled.lockscope");
    auto start = [&](const std::string& out, const std::vector<std::string>& extra) {
        std::vector<std::string> argv = {
            test::lockscope_bin(), "record", "-p", std::to_string(target.pid()), "-o", out, "-i", "0.5"};
        argv.insert(argv.end(), extra.begin(), extra.end());
        return test::Process::start(argv);
    };
    test::Process full = start(full_out, {});
    ASSERT_TRUE(full.wait_for_stderr("lockscope: recording", 30)) << "full-timing recorder did not attach";
    test::Process sampled = start(sampled_out, {"--sample", std::to_string(kTimingPeriod)});
    ASSERT_TRUE(sampled.wait_for_stderr("lockscope: recording", 30)) << "sampled recorder did not attach";
    target.release();
    EXPECT_EQ(target.wait(60).exit_code, 0);
    EXPECT_EQ(full.wait(60).exit_code, 0);
    EXPECT_EQ(sampled.wait(60).exit_code, 0);
    const test::Observed o = observer.read();
    ASSERT_GT(o.mutex_spin, 1000u) << "the pipe workload produced too little mutex contention";

    const Session fs = load_session(full_out), ss = load_session(sampled_out);
    EXPECT_EQ(timing_period(fs.meta), 1u);
    EXPECT_EQ(timing_period(ss.meta), kTimingPeriod);
    const Report fr = full_report(fs), sr = full_report(ss);
    expect_counts_agree(fr, fs, o, "full timing");
    expect_counts_agree(sr, ss, o, "sampled timing");

    const LockCounters &exact = fr.totals.counters, &est = sr.totals.counters;
    EXPECT_EQ(exact.timed, exact.contentions);
    // about one in kTimingPeriod timed (a binomial count: 5 standard deviations)
    const double expected_timed = double(est.contentions) / kTimingPeriod;
    EXPECT_NEAR(double(est.timed), expected_timed, 5 * std::sqrt(expected_timed) + 1);
    const double se = wait_stderr_ns(est);
    EXPECT_GT(se, 0.0);
    EXPECT_NEAR(double(est.wait_ns), double(exact.wait_ns), 3 * se + 0.15 * double(exact.wait_ns))
        << "estimate " << est.wait_ns << " ± " << se << " vs measured " << exact.wait_ns;
    std::printf("estimate/measured wait: %.4f (standard error %.4f) over %llu episodes\n",
                double(est.wait_ns) / double(exact.wait_ns), se / double(exact.wait_ns),
                static_cast<unsigned long long>(exact.contentions));
}

// Interleaved runs, full timing and sampled in turn, each with its own
// observer: counts agree exactly in both modes, and the sampled runs' mean
// wait per contention agrees with the full runs' within the sampling error
// plus the runs' own spread (they are different runs), plus what the modes do
// to the workload itself: full timing reads the clock in contention_end, with
// the lock held, so its critical sections, and the waits behind them, are
// longer. On an idle 2-CPU machine the pipe workload's full-timing runs wait
// 35-45% longer per contention than its sampled runs (every waiter queues
// behind several hand-overs, each one slower), so a sampled mean may be up to
// half the full one. Its mean wait per contention also jumps between runs of
// either mode (880 to 6,440 ns on a virtual machine with kvm-clock, in four
// runs of this test), and three runs of one mode can all land high while the
// other's land low: one such run had the sampled mean at 1.8 times the full
// one. So the sampled mean may be up to twice the full one. An estimator that
// forgot to scale by its period is off by that period (64); the estimator
// itself is held tightly above, on the same episodes.
TEST(SampledTiming, InterleavedRunsAgreeWithinErrorAndRunSpread)
{
    LOCKSCOPE_REQUIRE_BPF();
    std::vector<double> full_means, sampled_means, sampled_se;
    for (int i = 0; i < 3; ++i) {
        for (bool sample : {false, true}) {
            std::vector<std::string> extra;
            if (sample)
                extra = {"--sample", std::to_string(kTimingPeriod)};
            test::Recorded r = test::record_workload({"pipe", "-t", "4", "-d", "1"}, extra);
            expect_counts_agree(r.report, r.session, r.observed, sample ? "sampled run" : "full run");
            const LockCounters& c = r.report.totals.counters;
            ASSERT_GT(c.contentions, 1000u);
            const double n = double(c.contentions);
            (sample ? sampled_means : full_means).push_back(double(c.wait_ns) / n);
            if (sample)
                sampled_se.push_back(wait_stderr_ns(c) / n);
        }
    }
    auto mean = [](const std::vector<double>& v) {
        double s = 0;
        for (double x : v)
            s += x;
        return s / double(v.size());
    };
    const double k = double(full_means.size()), mf = mean(full_means), ms = mean(sampled_means);
    double spread = 0, se2 = 0;
    for (double x : full_means)
        spread += (x - mf) * (x - mf);
    for (double x : sampled_means)
        spread += (x - ms) * (x - ms);
    // one run's variance around its mode's mean, pooled over both modes: three
    // runs alone give too unsteady a spread (the sampled runs' also holds
    // their sampling error, which only widens it)
    spread /= 2 * k - 2;
    for (double se : sampled_se)
        se2 += se * se / (k * k);
    const double tolerance = 3 * std::sqrt(se2 + 2 * spread / k);
    std::string runs;
    for (size_t i = 0; i < full_means.size(); ++i)
        runs += " " + std::to_string(int(full_means[i])) + "/" + std::to_string(int(sampled_means[i]));
    std::printf("mean wait per contention, full/sampled runs (ns):%s\n", runs.c_str());
    const std::string what = "mean wait per contention: sampled " + std::to_string(ms) + " ns, full " +
                             std::to_string(mf) + " ns (sampling error " + std::to_string(std::sqrt(se2)) +
                             ", run spread " + std::to_string(std::sqrt(spread)) + "; runs, full/sampled:" + runs + ")";
    EXPECT_GE(ms, 0.5 * mf - tolerance) << what;
    EXPECT_LE(ms, 2.0 * mf + tolerance) << what;
}

}  // namespace
}  // namespace lockscope
