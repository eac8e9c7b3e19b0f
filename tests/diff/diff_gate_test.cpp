// A diff a CI gate can act on, checked on many generated noisy sessions
// (noisy_sessions.h): diffs of one system against itself call nothing
// (almost ever), intervals stay inside what each metric can take, the wait's
// four parts are shares adding up to the whole as report shows them, the
// locks compared are report's rows, --pair compares two locks that both
// sessions have, and nothing smaller than the minimum effect is called.
#include "core/analysis/diff.h"
#include "core/analysis/report.h"
#include "core/error.h"
#include "noisy_sessions.h"

#include <gtest/gtest.h>

#include <cmath>
#include <regex>
#include <set>
#include <tuple>

using namespace lockscope;
using namespace lockscope::testing;

namespace {

NoisySpec spec(uint64_t seed, int runs = 4)
{
    NoisySpec s;
    s.locks = noisy_locks();
    s.runs = runs;
    s.seed = seed;
    return s;
}

// Every metric and path the diff called (anything a --fail-on any-change gate trips on).
std::vector<std::string> calls(const DiffResult& d)
{
    std::vector<std::string> out;
    auto called = [](const MetricDiff& m) {
        return m.verdict == Verdict::Better || m.verdict == Verdict::Worse || m.verdict == Verdict::Higher ||
               m.verdict == Verdict::Lower;
    };
    for (const MetricDiff& m : d.totals)
        if (called(m))
            out.push_back("total " + m.metric);
    for (const LockDiff& l : d.locks)
        for (const MetricDiff& m : l.metrics)
            if (called(m))
                out.push_back(l.name + " " + m.metric);
    for (const StackShift& sh : d.stack_shifts)
        out.push_back(sh.name + " path " + sh.functions.front());
    return out;
}

const MetricDiff* find_metric(const std::vector<MetricDiff>& metrics, const std::string& name)
{
    for (const MetricDiff& m : metrics)
        if (m.metric == name)
            return &m;
    return nullptr;
}

const LockDiff* find_lock(const DiffResult& d, const std::string& name)
{
    for (const LockDiff& l : d.locks)
        if (l.name == name)
            return &l;
    return nullptr;
}

}  // namespace

// The false-alarm rate that a CI gate sees: over 1000 pairs of sessions of the
// same noisy system, 4 runs a side, one run in ten with a long sleep of
// another program's that outweighs the other runs' wait, the share of diffs
// that call anything at all (totals, lock rows, call paths) stays near
// alpha. Each total tested at alpha on its own, lock rows and call paths in
// families of their own, and call-path samples taken as independent, called
// something in half of them. With --min-effect 0, so the family-wise
// control alone is what is tested.
TEST(DiffGate, DiffsOfOneSystemAgainstItselfCallNothingAtAlmostAlpha)
{
    constexpr int kDiffs = 1000;
    DiffOptions o;
    o.min_effect = 0;
    int alarms = 0;
    std::vector<std::string> examples;
    for (int i = 0; i < kDiffs; ++i) {
        NoisySpec a = spec(1000 + 2 * i), b = spec(1001 + 2 * i);
        a.burst_chance = b.burst_chance = 0.1;
        const DiffResult d = diff_sessions(noisy_session(a), noisy_session(b), o);
        ASSERT_GE(d.locks.size(), 3u);
        ASSERT_GT(d.stack_paths_compared, 0u);
        const std::vector<std::string> c = calls(d);
        if (!c.empty()) {
            ++alarms;
            if (examples.size() < 5)
                examples.push_back(c.front());
        }
    }
    const double rate = double(alarms) / kDiffs;
    // alpha plus three standard errors of a rate of alpha over kDiffs diffs.
    const double bound = o.alpha + 3 * std::sqrt(o.alpha * (1 - o.alpha) / kDiffs);
    EXPECT_LE(rate, bound) << alarms << " of " << kDiffs << " A/A diffs called something, e.g. "
                           << (examples.empty() ? "" : examples.front());
    // The test is not simply mute: a real change is called in the same setting.
    NoisySpec worse = spec(7);
    worse.locks[1].contentions_per_s *= 3;
    const DiffResult d = diff_sessions(noisy_session(spec(6)), noisy_session(worse), o);
    const LockDiff* dir = find_lock(d, "inode.i_rwsem");
    ASSERT_NE(dir, nullptr);
    EXPECT_EQ(find_metric(dir->metrics, "contentions_per_s")->verdict, Verdict::Worse) << format_diff_text(d);
}

// Rates and counts cannot fall by more than 100%, fractions stay in [0, 1]:
// over many diffs where B's locks collapse or explode, no interval says
// otherwise, in the result or in the text.
TEST(DiffGate, IntervalsStayInsideWhatEachMetricCanTake)
{
    const std::regex lower_bound(R"(\[-(\d+\.\d)%)");
    for (int i = 0; i < 60; ++i) {
        NoisySpec a = spec(3000 + i, 3), b = spec(5000 + i, 3);
        a.run_sigma = b.run_sigma = 0.6;  // very noisy: wide intervals
        b.locks[0].contentions_per_s *= i % 2 ? 0.05 : 20;
        b.locks[1].wait_ns_per_contention *= i % 3 ? 0.1 : 10;
        b.locks[1].spin_failure = i % 2 ? 0.9 : 0.01;
        const DiffResult d = diff_sessions(noisy_session(a), noisy_session(b), {});
        auto check = [&](const MetricDiff& m, const std::string& where) {
            const stats::TestResult& t = m.test;
            if (!t.enough_data)
                return;
            if (std::isfinite(t.rel_low)) {
                EXPECT_GE(t.rel_low, -1.0) << where << " " << m.metric;
            }
            if (std::isfinite(t.diff_low)) {
                EXPECT_GE(t.center_a + t.diff_low, -1e-12) << where << " " << m.metric << ": B's value below 0";
            }
            if (m.fraction() && std::isfinite(t.diff_high)) {
                EXPECT_LE(t.center_a + t.diff_high, 1 + 1e-12) << where << " " << m.metric << ": a fraction above 1";
            }
        };
        for (const MetricDiff& m : d.totals)
            check(m, "total");
        for (const LockDiff& l : d.locks)
            for (const MetricDiff& m : l.metrics)
                check(m, l.name);
        const std::string text = format_diff_text(d);
        for (auto it = std::sregex_iterator(text.begin(), text.end(), lower_bound); it != std::sregex_iterator(); ++it)
            EXPECT_LE(std::stod((*it)[1]), 100.0) << text;
    }
}

// The diff's values are report's, and the wait's four parts are shares of
// it that add up to 100%, in the totals and in each lock row (the spin
// share and off-CPU share they replace overlapped: 148.6% together).
TEST(DiffGate, TheWaitsFourPartsAreSharesThatAddUpAsReportShowsThem)
{
    const Session a = noisy_session(spec(11)), b = noisy_session(spec(12));
    const DiffResult d = diff_sessions(a, b, {});
    const char* const parts[] = {"spinning_share", "queued_on_cpu_share", "asleep_share", "runnable_share"};
    ReportOptions all;
    all.top = 0;
    const Report ra = build_report(a, all), rb = build_report(b, all);
    auto check = [&](const std::vector<MetricDiff>& metrics, const LockCounters& ca, const LockCounters& cb,
                     const std::string& where) {
        double sum_a = 0, sum_b = 0;
        for (const char* part : parts) {
            const MetricDiff* m = find_metric(metrics, part);
            ASSERT_NE(m, nullptr) << where << " has no " << part;
            sum_a += m->test.center_a;
            sum_b += m->test.center_b;
        }
        EXPECT_NEAR(sum_a, 1.0, 1e-12) << where;
        EXPECT_NEAR(sum_b, 1.0, 1e-12) << where;
        // Report's shares of the same counters (its spin%, que%, slp%, run%).
        EXPECT_NEAR(find_metric(metrics, "spinning_share")->test.center_a,
                    double(ca.spinning_ns()) / double(ca.wait_ns), 1e-12)
            << where;
        EXPECT_NEAR(find_metric(metrics, "runnable_share")->test.center_b,
                    double(cb.runnable_ns()) / double(cb.wait_ns), 1e-12)
            << where;
        EXPECT_EQ(find_metric(metrics, "spin_share"), nullptr) << where;
        EXPECT_EQ(find_metric(metrics, "offcpu_share"), nullptr) << where;
    };
    check(d.totals, ra.totals.counters, rb.totals.counters, "totals");
    auto row = [](const Report& r, const std::string& name) {
        for (const ReportRow& candidate : r.rows)
            if (candidate.name == name)
                return candidate.counters;
        ADD_FAILURE() << "no report row " << name;
        return LockCounters{};
    };
    const LockDiff* pipe = find_lock(d, "pipe_inode_info.mutex");
    ASSERT_NE(pipe, nullptr);
    check(pipe->metrics, row(ra, pipe->name), row(rb, pipe->name), pipe->name);
    // Contentions per second are report's too: its total over its duration.
    EXPECT_NEAR(find_metric(d.totals, "contentions_per_s")->test.center_a,
                double(ra.totals.counters.contentions) / ra.totals.duration_s, 1e-9);
    const std::string text = format_diff_text(d);
    for (const char* label : {"  spinning ", "  queued on CPU ", "  asleep ", "  runnable "})
        EXPECT_NE(text.find(label), std::string::npos) << label << "\n" << text;
    EXPECT_EQ(text.find("spin share"), std::string::npos) << text;
    EXPECT_EQ(text.find("off-CPU share"), std::string::npos) << text;
}

// The holder split's four parts are shares of the wait too, adding up to
// 100%, where both sessions keep them (a session of an older format keeps
// none: no such metric, rather than an unknown part of 100%).
TEST(DiffGate, TheHolderSplitsPartsAreSharesOfTheWait)
{
    Session a = noisy_session(spec(13)), b = noisy_session(spec(14));
    // B's holders more often runnable than A's, in every lock and interval
    auto split = [](LockCounters& c, uint64_t runnable_divisor, size_t i) {
        c.holder_running_ns = c.wait_ns / 2;
        c.holder_runnable_ns = c.wait_ns / runnable_divisor;
        c.holder_asleep_ns = (c.wait_ns - c.holder_running_ns - c.holder_runnable_ns) / (i % 2 ? 2 : 3);
    };
    for (Session* s : {&a, &b}) {
        for (size_t i = 0; i < s->lock_intervals.size(); ++i)
            split(s->lock_intervals[i].counters, s == &a ? 8 : 3, i);
        for (size_t i = 0; i < s->intervals.size(); ++i)
            split(s->intervals[i].counters, s == &a ? 8 : 3, i);
    }
    const char* const parts[] = {"holder_running_share", "holder_runnable_share", "holder_asleep_share",
                                 "holder_unknown_share"};
    const DiffResult d = diff_sessions(a, b, {});
    const LockDiff* pipe = find_lock(d, "pipe_inode_info.mutex");
    ASSERT_NE(pipe, nullptr);
    for (const auto& [metrics, where] : {std::pair{&d.totals, "totals"}, std::pair{&pipe->metrics, "pipe"}}) {
        double sum_a = 0, sum_b = 0;
        for (const char* part : parts) {
            const MetricDiff* m = find_metric(*metrics, part);
            ASSERT_NE(m, nullptr) << where << " has no " << part;
            sum_a += m->test.center_a;
            sum_b += m->test.center_b;
        }
        EXPECT_NEAR(sum_a, 1.0, 1e-9) << where;
        EXPECT_NEAR(sum_b, 1.0, 1e-9) << where;
        EXPECT_NEAR(find_metric(*metrics, "holder_runnable_share")->test.center_a, 1.0 / 8, 1e-3) << where;
        EXPECT_NEAR(find_metric(*metrics, "holder_runnable_share")->test.center_b, 1.0 / 3, 1e-3) << where;
    }
    const std::string text = format_diff_text(d);
    for (const char* label : {"  holder running ", "  holder runnable ", "  holder asleep ", "  holder unknown "})
        EXPECT_NE(text.find(label), std::string::npos) << label << "\n" << text;

    a.schema_version = 6;  // before the holder split
    const DiffResult older = diff_sessions(a, b, {});
    for (const char* part : parts)
        EXPECT_EQ(find_metric(older.totals, part), nullptr) << part;
}

// A lock the session knows but never counted (its first episode had not
// ended when the recording stopped, as mutex@arch_jump_label_transform_apply
// in a real session) is no row of report, so no lock of the diff.
TEST(DiffGate, TheLocksComparedAreTheRowsReportShows)
{
    Session a = noisy_session(spec(21)), b = noisy_session(spec(22));
    for (Session* s : {&a, &b})
        s->locks.push_back({99, "mutex@arch_jump_label_transform_apply", "mutex", "", "arch_jump_label_transform_apply",
                            0xffffffff81000000ull, 33, "caller"});
    // A lock in one session only is a row of that session's report.
    b.locks.push_back({98, "rtnl_mutex", "mutex", "", "rtnl_lock", 0xffffffff82000000ull, 33, "global"});
    LockCounters once;
    once.contentions = once.spin_attempts = 2;
    once.wait_ns = 5000;
    b.lock_intervals.push_back({b.runs.front().id, 0, 98, once});
    const DiffResult d = diff_sessions(a, b, {});
    ReportOptions all;
    all.top = 0;
    using Key = std::tuple<std::string, std::string, std::string>;
    auto report_rows = [&](const Session& s) {
        std::set<Key> rows;
        for (const ReportRow& r : build_report(s, all).rows)
            rows.insert({r.name, r.kind, r.mode});
        return rows;
    };
    std::set<Key> diff_a, diff_b;
    for (const LockDiff& l : d.locks) {
        diff_a.insert({l.name, l.kind, l.mode});
        diff_b.insert({l.name_b.empty() ? l.name : l.name_b, l.kind_b.empty() ? l.kind : l.kind_b, l.mode});
    }
    for (const OneSidedLock& l : d.only_a)
        diff_a.insert({l.name, l.kind, l.mode});
    for (const OneSidedLock& l : d.only_b)
        diff_b.insert({l.name, l.kind, l.mode});
    EXPECT_EQ(diff_a, report_rows(a));
    EXPECT_EQ(diff_b, report_rows(b));
    EXPECT_EQ(format_diff_text(d).find("arch_jump_label"), std::string::npos) << format_diff_text(d);
    ASSERT_EQ(d.only_b.size(), 1u);
    EXPECT_EQ(d.only_b[0].name, "rtnl_mutex");
}

// --pair A's lock with another lock of B when both sessions hold both (a
// session diffed against itself, or two kernels that both have both locks):
// the pair is compared, beside each lock's match by name, and no warning
// says it matched nothing.
TEST(DiffGate, APairOfLocksThatBothSessionsHoldIsCompared)
{
    const Session a = noisy_session(spec(31)), b = noisy_session(spec(32));
    DiffOptions o;
    o.pairs = {{"pipe_inode_info.mutex", "rwlock@do_exit"}};
    const DiffResult d = diff_sessions(a, b, o);
    for (const std::string& w : d.warnings)
        EXPECT_EQ(w.find("matched no lock"), std::string::npos) << w;
    int pipe_rows = 0;
    bool paired = false;
    for (const LockDiff& l : d.locks)
        if (l.name == "pipe_inode_info.mutex") {
            ++pipe_rows;
            paired |= l.name_b == "rwlock@do_exit" && l.kind_b == "rwlock" && l.mode == "";
        }
    EXPECT_TRUE(paired) << format_diff_text(d);
    EXPECT_EQ(pipe_rows, 2) << "the pair and the match by name";
    EXPECT_NE(find_lock(d, "rwlock@do_exit"), nullptr) << "B's rwlock still matches A's by name";
    EXPECT_TRUE(d.only_a.empty());
    EXPECT_TRUE(d.only_b.empty());
    EXPECT_NE(format_diff_text(d).find("pipe_inode_info.mutex (mutex → rwlock) (A) vs rwlock@do_exit (B)"),
              std::string::npos);
}

// A change measured very precisely (1% more contention, runs alike to a
// tenth of a percent) is significant, but smaller than the minimum effect:
// it is not called, and --fail-on would not trip on it.
TEST(DiffGate, NothingSmallerThanTheMinimumEffectIsCalled)
{
    NoisySpec a = spec(41, 6), b = spec(42, 6);
    for (NoisySpec* s : {&a, &b}) {
        s->run_sigma = 0.001;
        s->locks = {noisy_locks()[0]};
        s->locks[0].contentions_per_s = 2e6;  // Poisson noise of 0.07%
        s->locks[0].paths.clear();
    }
    b.locks[0].contentions_per_s *= 1.01;
    const Session sa = noisy_session(a), sb = noisy_session(b);
    const DiffResult d = diff_sessions(sa, sb, {});
    const MetricDiff* c = find_metric(d.totals, "contentions_per_s");
    ASSERT_NE(c, nullptr);
    EXPECT_LT(c->p_adjusted, 0.001) << format_diff_text(d);
    EXPECT_EQ(c->verdict, Verdict::BelowMinEffect) << format_diff_text(d);
    EXPECT_FALSE(d.any_change()) << format_diff_text(d);
    EXPECT_NE(format_diff_text(d).find("below min effect"), std::string::npos);

    DiffOptions any;
    any.min_effect = 0.005;
    EXPECT_EQ(find_metric(diff_sessions(sa, sb, any).totals, "contentions_per_s")->verdict, Verdict::Worse);
    any.min_effect = 1.5;
    EXPECT_THROW(diff_sessions(sa, sb, any), Error);
}
