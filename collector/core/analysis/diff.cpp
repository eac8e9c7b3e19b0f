// Comparing two sessions: each side's runs as samples, every metric a ratio
// of sums over them. Rendering is in diff_format.cpp.
#include "core/analysis/diff.h"
#include "core/analysis/diff_sides.h"
#include "core/analysis/diff_verdicts.h"
#include "core/analysis/estimate.h"
#include "core/analysis/holder_parts.h"
#include "core/analysis/report.h"

#include "core/error.h"
#include "core/format.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

namespace lockscope {
namespace {

using namespace diff_detail;

// A metric of one unit as (numerator, denominator); nullopt where the unit
// has none (no workload counts). A unit whose denominator is 0 has no value.
using Ratio = std::function<std::optional<std::pair<double, double>>(const LockCounters&, const Unit&)>;

struct Metric {
    const char* name;
    const char* unit;
    Direction direction;
    Ratio ratio;
};

std::optional<std::pair<double, double>> of(double num, double den)
{
    return std::pair{num, den};
}

std::string workload_identity(const Session& s)
{
    std::string w = s.meta_value("workload");
    return w.empty() ? s.meta_value("command") : w;
}

// Metadata a reader needs to judge whether the numbers are comparable,
// in the order they matter: kernel, its config, machine, what ran, tooling.
int meta_rank(const std::string& key)
{
    // PREEMPT_RT first: it swaps mutexes and rwsems for rtmutex-based locks,
    // which changes what every lock row means.
    static const char* const order[] = {"config.CONFIG_PREEMPT_RT",
                                        "kernel_release",
                                        "kernel_version",
                                        "config.",
                                        "cpu_model",
                                        "online_cpus",
                                        "recorder",
                                        "workload",
                                        "command",
                                        "scope",
                                        "interval_ms",
                                        "repeat",
                                        "stack_period",
                                        "tool_version"};
    for (size_t i = 0; i < std::size(order); ++i) {
        const std::string prefix = order[i];
        if (key == prefix || (prefix.back() == '.' && key.starts_with(prefix)) ||
            (prefix == "workload" && key.starts_with("workload.")))
            return int(i);
    }
    return -1;
}

std::vector<MetaDifference> meta_differences(const Session& a, const Session& b)
{
    std::set<std::string> keys;
    for (const auto* s : {&a, &b})
        for (const auto& [key, value] : s->meta)
            if (meta_rank(key) >= 0)
                keys.insert(key);
    std::vector<MetaDifference> out;
    for (const std::string& key : keys) {
        std::string va = a.meta_value(key), vb = b.meta_value(key);
        if (va != vb)
            out.push_back({key, va, vb});
    }
    std::stable_sort(out.begin(), out.end(), [](const MetaDifference& x, const MetaDifference& y) {
        return meta_rank(x.key) < meta_rank(y.key);
    });
    return out;
}

void require_data(const Session& s, const std::string& label)
{
    if (s.runs.empty() && s.intervals.empty())
        throw Error("cannot diff session", label, 0,
                    "it has no runs; it was probably interrupted before recording started");
    if (s.intervals.empty())
        throw Error("cannot diff session", label, 0, "it has no recorded intervals; record at least one full interval");
}

OneSidedLock one_sided(const LockKey& key, const std::vector<LockCounters>& series, const Side& side)
{
    OneSidedLock o{key.name, key.kind, key.mode};
    double seconds = 0;
    for (size_t i = 0; i < series.size(); ++i) {
        o.contentions += series[i].contentions;
        o.wait_ns += series[i].wait_ns;
        seconds += side.units[i].seconds;
    }
    o.wait_per_s = seconds > 0 ? double(o.wait_ns) / seconds : 0.0;
    return o;
}

// False for a session that counted contentions but never timed a wait:
// `lockscope bench` sessions count spin outcomes and sleeps from the
// reference locks' own counters, which do not time waits.
bool times_waits(const Session& s)
{
    uint64_t contentions = 0, wait_ns = 0;
    for (const IntervalTotals& in : s.intervals) {
        contentions += in.counters.contentions;
        wait_ns += in.counters.wait_ns;
    }
    return contentions == 0 || wait_ns > 0;
}

// Damaged rows and losses on either side; returns whether the sessions ran
// unrelated workloads (also a warning).
bool warn_about_sessions(const Session& a, const Session& b, DiffResult& d)
{
    for (const auto& [s, label] : {std::pair{&a, &d.label_a}, std::pair{&b, &d.label_b}}) {
        if (!s->warnings.empty())
            d.warnings.push_back(*label + ": " + std::to_string(s->warnings.size()) +
                                 " damaged rows were skipped while loading");
        uint64_t lost = 0;
        for (const IntervalTotals& in : s->intervals)
            lost += in.lost;
        if (lost)
            d.warnings.push_back(*label + " lost " + format_count(lost) +
                                 " events or keys; its counts are lower bounds");
    }
    const std::string wa = workload_identity(a), wb = workload_identity(b);
    const bool unrelated = !wa.empty() && !wb.empty() && wa != wb;
    if (unrelated)
        d.warnings.push_back("the sessions ran unrelated workloads ('" + wa + "' vs '" + wb +
                             "'): differences reflect the workloads as much as the kernels");
    return unrelated;
}

// The wait's four parts (DESIGN.md, "Metrics"), each as a share of their
// sum: the wait itself in sessions that split it, so the shares add up to
// 100% as report's do.
uint64_t part_ns(const LockCounters& c, int part)
{
    switch (part) {
        case 0:
            return c.spinning_ns();
        case 1:
            return c.queued_on_cpu_ns();
        case 2:
            return c.asleep_ns();
        default:
            return c.runnable_ns();
    }
}

Metric share_metric(const char* name, int part)
{
    return {name, "fraction", Direction::Neutral, [part](const LockCounters& c, const Unit&) {
                uint64_t whole = 0;
                for (int p = 0; p < 4; ++p)
                    whole = sat_add(whole, part_ns(c, p));
                return of(double(part_ns(c, part)), double(whole));
            }};
}

// The holder split's parts (core/analysis/holder_parts.h), each as a share
// of the wait they add up to.
Metric holder_share_metric(const HolderPart& part)
{
    return {part.share, "fraction", Direction::Neutral,
            [ns = part.ns](const LockCounters& c, const Unit&) { return of(double(ns(c)), double(c.wait_ns)); }};
}

// What diff compares, per unit (a run, or a host).
struct Metrics {
    Metric throughput, wait, contentions, spin_failures;
    std::vector<Metric> parts;         // spinning, queued on CPU, asleep, runnable
    std::vector<Metric> holder_parts;  // holder running, runnable, asleep, unknown: where both sides keep them
    Metric idle;
};

Metrics make_metrics(bool per_op, bool holder_split)
{
    std::vector<Metric> holder_parts;
    if (holder_split)
        for (const HolderPart& part : kHolderParts)
            holder_parts.push_back(holder_share_metric(part));
    auto ops = [](const Unit& u) { return u.ops.value_or(0); };
    return Metrics{
        {"throughput", "ops/s", Direction::HigherIsBetter,
         [](const LockCounters&, const Unit& u) { return u.ops ? of(*u.ops, u.seconds) : std::nullopt; }},
        per_op ? Metric{"wait_per_op", "ns/op", Direction::LowerIsBetter,
                        [ops](const LockCounters& c, const Unit& u) { return of(double(c.wait_ns), ops(u)); }}
               : Metric{"wait_per_s", "ns/s", Direction::LowerIsBetter,
                        [](const LockCounters& c, const Unit& u) { return of(double(c.wait_ns), u.seconds); }},
        {"contentions_per_s", "/s", Direction::LowerIsBetter,
         [](const LockCounters& c, const Unit& u) { return of(double(c.contentions), u.seconds); }},
        {"spin_failure_rate", "fraction", Direction::LowerIsBetter,
         [](const LockCounters& c, const Unit&) { return of(double(c.spin_failures), double(c.spin_attempts)); }},
        {share_metric("spinning_share", 0), share_metric("queued_on_cpu_share", 1), share_metric("asleep_share", 2),
         share_metric("runnable_share", 3)},
        std::move(holder_parts),
        {"idle_fraction", "fraction", Direction::Neutral,
         [](const LockCounters&, const Unit& u) { return of(double(u.idle_ns), double(u.cpu_ns)); }}};
}

// Why a metric has no verdict, in the words of what to do about it.
std::string not_enough_reason(const stats::TestResult& t, const DiffResult& d)
{
    const std::string samples = d.by_hosts ? "hosts" : "runs";
    const std::string need = "the test needs at least " + std::to_string(kMinRuns) + " " + samples +
                             " with a value on each side (A has " + std::to_string(t.n_a) + ", B has " +
                             std::to_string(t.n_b) + ")";
    if (d.by_hosts)
        return "not enough hosts: " + need;
    if (d.runs_a < kMinRuns || d.runs_b < kMinRuns)
        return need + ": record each side with --repeat " + std::to_string(kMinRuns) + " or more";
    return need +
           ": the other runs have none of what the metric divides by (no spin attempts, no wait), or, for a fraction, "
           "less than a hundredth of the median run's";
}

// Each side's value over its runs (of one lock, or of all), and the test.
MetricDiff compare(const Metric& metric, const Side& a, const Side& b, const std::vector<LockCounters>* lock_a,
                   const std::vector<LockCounters>* lock_b, const DiffResult& d)
{
    MetricDiff m{metric.name, metric.unit, metric.direction};
    auto estimate = [&](const Side& side, const std::vector<LockCounters>* lock) {
        std::vector<double> num, den;
        for (size_t i = 0; i < side.units.size(); ++i)
            if (auto r = metric.ratio(lock ? (*lock)[i] : side.units[i].counters, side.units[i])) {
                num.push_back(r->first);
                den.push_back(r->second);
            }
        return stats::ratio_samples(num, den);
    };
    m.test = stats::ratio_test(estimate(a, lock_a), estimate(b, lock_b), d.alpha, m.fraction(), kMinRuns);
    if (!m.test.enough_data)
        m.test.reason = not_enough_reason(m.test, d);
    m.p_adjusted = m.test.p_value;
    return m;
}

// What the totals leave out, and why.
void totals_notes(const Session& a, const Session& b, const Side& sa, const Side& sb, bool unrelated, bool timed,
                  DiffResult& d)
{
    if (unrelated)
        d.warnings.push_back("throughput omitted: operations of different workloads are not comparable");
    else if (!(sa.all_ops && sb.all_ops))
        d.notes.push_back("throughput omitted: " + (sa.all_ops ? d.label_b : d.label_a) +
                          " has no workload operation counts");
    // A wait that was never timed is not a wait of 0 ns: leave it out.
    if (!timed)
        d.notes.push_back("wait per op and the wait's parts omitted: " + (times_waits(a) ? d.label_b : d.label_a) +
                          " counts contentions but does not time waits (bench sessions count spin outcomes "
                          "and sleeps only)");
    for (const auto& [s, label] : {std::pair{&a, &d.label_a}, std::pair{&b, &d.label_b}}) {
        if (const uint32_t period = timing_period(s->meta).value_or(1); period > 1)
            d.notes.push_back(*label + " timed one episode in " + std::to_string(period) +
                              " (record --sample): its wait and its parts are unbiased estimates. The tests "
                              "compare their spread between runs, which contains the sampling error, so they "
                              "stay valid but need larger differences to call one");
        if (timed && !wait_parts_split(s->schema_version))
            d.notes.push_back(*label +
                              " was recorded before the wait's parts were kept apart: its spinning includes "
                              "time switched out inside spin phases, so its parts overlap and its shares are of "
                              "their sum, not of the wait");
    }
}

// A part of the wait that is none of it in both sessions (a lock that never
// spins), or all of it in both (a wait not split), says nothing.
bool says_something(const MetricDiff& md)
{
    if (md.test.n_a + md.test.n_b == 0)
        return false;  // no spin attempts anywhere
    const double a = md.test.center_a, b = md.test.center_b;
    return !md.metric.ends_with("_share") || !((a == 0 && b == 0) || (a == 1 && b == 1));
}

// The totals: the few questions asked up front (did throughput, the
// spin-failure rate, the wait... change?).
void compare_totals(const Side& sa, const Side& sb, const Metrics& m, bool unrelated, bool timed, DiffResult& d)
{
    std::vector<const Metric*> total_metrics;
    if (!unrelated && sa.all_ops && sb.all_ops)
        total_metrics.push_back(&m.throughput);
    total_metrics.push_back(&m.contentions);
    total_metrics.push_back(&m.spin_failures);
    if (timed) {
        total_metrics.push_back(&m.wait);  // its parts under it
        for (const Metric& part : m.parts)
            total_metrics.push_back(&part);
        for (const Metric& part : m.holder_parts)
            total_metrics.push_back(&part);
    }
    total_metrics.push_back(&m.idle);
    for (const Metric* metric : total_metrics)
        if (MetricDiff md = compare(*metric, sa, sb, nullptr, nullptr, d);
            says_something(md) || !md.metric.ends_with("_share"))
            d.totals.push_back(std::move(md));
}

// The lock rows of the matches, largest change in wait first; the locks of
// one session only apart.
void compare_locks(const Side& sa, const Side& sb, const std::vector<Match>& matches, const Metrics& m, bool timed,
                   DiffResult& d)
{
    // The wait first (the headline, by which the rows are ordered), its parts under it.
    std::vector<const Metric*> lock_metrics;
    if (timed) {
        lock_metrics.push_back(&m.wait);
        for (const Metric& part : m.parts)
            lock_metrics.push_back(&part);
        for (const Metric& part : m.holder_parts)
            lock_metrics.push_back(&part);
    }
    lock_metrics.push_back(&m.contentions);
    lock_metrics.push_back(&m.spin_failures);
    const auto holder_part = [&m](const Metric* metric) {
        return !m.holder_parts.empty() && metric >= &m.holder_parts.front() && metric <= &m.holder_parts.back();
    };
    for (const Match& match : matches) {
        LockDiff l{match.a.name, match.a.kind, match.a.mode, match.name_b, match.kind_b};
        // A user lock of an older format on either side: its holder parts
        // read 0, an unknown of 100% that is no change of the lock's.
        const bool holder_split = !sa.no_holder_split.contains(match.a) && !sb.no_holder_split.contains(match.b);
        for (const Metric* metric : lock_metrics) {
            if (!holder_split && holder_part(metric))
                continue;
            MetricDiff md = compare(*metric, sa, sb, &sa.locks.at(match.a), &sb.locks.at(match.b), d);
            if (says_something(md))
                l.metrics.push_back(std::move(md));
        }
        const double effect = l.metrics.empty() ? 0.0 : std::fabs(l.metrics.front().test.difference);
        l.effect = std::isfinite(effect) ? effect : 0.0;
        d.locks.push_back(std::move(l));
    }
    for (const auto& [side, list, in_a] : {std::tuple{&sa, &d.only_a, true}, std::tuple{&sb, &d.only_b, false}}) {
        for (const auto& [key, series] : side->locks)
            if (std::none_of(matches.begin(), matches.end(),
                             [&, &k = key, a = in_a](const Match& mt) { return (a ? mt.a : mt.b) == k; }))
                list->push_back(one_sided(key, series, *side));
        std::stable_sort(list->begin(), list->end(),
                         [](const OneSidedLock& x, const OneSidedLock& y) { return x.wait_ns > y.wait_ns; });
    }
    std::stable_sort(d.locks.begin(), d.locks.end(),
                     [](const LockDiff& x, const LockDiff& y) { return x.effect > y.effect; });
}

// How the numbers were tested, said with them.
void method_notes(DiffResult& d)
{
    const std::string samples = d.by_hosts ? "hosts" : "runs";
    char buf[600];
    std::snprintf(buf, sizeof buf,
                  "values are report's, each side's sums over its %s (%zu vs %zu); the test takes each of the %s "
                  "as one sample: Welch's t-test on the log of the %s' values for rates and times (the interval is "
                  "a ratio, never below -100%%), on their values for fractions and shares (the interval, in "
                  "points, kept within 0-100%%). A metric with fewer than %zu %s on a side gets no verdict",
                  samples.c_str(), d.runs_a, d.runs_b, samples.c_str(), samples.c_str(), kMinRuns, samples.c_str());
    d.notes.push_back(buf);
    std::snprintf(buf, sizeof buf,
                  "alpha %.3g is the chance that the diff calls anything at all by chance: its %zu p-values are "
                  "adjusted together (Holm's weighted procedure%s); nothing below --min-effect %.3g is called (a "
                  "rate's relative change, a fraction's change in points); confidence intervals are %.3g%% per "
                  "comparison",
                  d.alpha, d.hypotheses, d.stack_paths_compared ? ", the call paths sharing a quarter of alpha" : "",
                  d.min_effect, 100 * (1 - d.alpha));
    d.notes.push_back(buf);
    if (!d.by_hosts)
        d.notes.push_back(
            "the test takes the runs as alike but for chance: two sessions recorded apart, on a "
            "machine whose other load changed between them, can differ by more than their runs do; "
            "runs of both sides interleaved in one session (--runs-a, --runs-b) cannot");
    if (d.stack_paths_compared)
        d.notes.push_back(
            "call paths: each path's share of its lock's sampled waiter (or holder) stacks, the runs as "
            "samples; " +
            std::to_string(d.stack_paths_compared) +
            " paths compared. Stacks are samples: a path missing from a few samples is not proof that it is gone");
}

}  // namespace

DiffResult diff_sessions(const Session& a, const Session& b, const DiffOptions& options)
{
    if (!(options.alpha > 0 && options.alpha <= 0.5))
        throw Error("cannot diff", "", 0, "alpha must be in (0, 0.5], e.g. 0.05");
    if (!(options.min_effect >= 0 && options.min_effect < 1))
        throw Error("cannot diff", "", 0, "the minimum effect must be in [0, 1), e.g. 0.05");
    require_data(a, options.label_a);
    require_data(b, options.label_b);

    DiffResult d;
    d.label_a = options.label_a;
    d.label_b = options.label_b;
    d.alpha = options.alpha;
    d.min_effect = options.min_effect;
    d.by_hosts = options.runs_are_hosts;
    const Side sa = collect(a);
    const Side sb = collect(b);
    const std::vector<Match> matches = match_locks(a, b, sa, sb, options, d);
    d.runs_a = sa.runs;
    d.runs_b = sb.runs;
    d.intervals_a = sa.intervals;
    d.intervals_b = sb.intervals;
    d.metadata = meta_differences(a, b);

    const bool unrelated = warn_about_sessions(a, b, d);
    const Metrics metrics = make_metrics(sa.all_ops && sb.all_ops,
                                         holder_split_kept(a.schema_version) && holder_split_kept(b.schema_version));
    const bool timed = times_waits(a) && times_waits(b);
    totals_notes(a, b, sa, sb, unrelated, timed, d);
    compare_totals(sa, sb, metrics, unrelated, timed, d);
    compare_locks(sa, sb, matches, metrics, timed, d);
    decide_verdicts(d, compare_stacks(sa, sb, matches, d.alpha));
    method_notes(d);
    return d;
}

}  // namespace lockscope
