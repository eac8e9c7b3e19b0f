#include "core/analysis/diff_verdicts.h"
#include "core/enum_names.h"

#include <algorithm>
#include <cmath>

namespace lockscope {
namespace {

bool called(const MetricDiff& m)
{
    return m.verdict == Verdict::Better || m.verdict == Verdict::Worse || m.verdict == Verdict::Higher ||
           m.verdict == Verdict::Lower;
}

}  // namespace

double MetricDiff::effect() const
{
    if (fraction())
        return std::fabs(test.difference);
    if (std::isfinite(test.relative))
        return std::fabs(test.relative);
    return test.difference != 0 ? INFINITY : 0.0;
}

Verdict judge(const MetricDiff& m, double alpha, double min_effect)
{
    if (!m.test.enough_data)
        return Verdict::NotEnoughData;
    if (!(m.p_adjusted < alpha))
        return Verdict::NoSignificantDifference;
    if (m.effect() < min_effect)
        return Verdict::BelowMinEffect;
    // The rank test's sign is whether U sits above its null mean (its shift
    // estimate can be 0 with many ties); the others' is the difference's.
    const bool rank = m.test.method == stats::Method::MannWhitney || m.test.method == stats::Method::MannWhitneyExact;
    const double sign = rank ? m.test.statistic - double(m.test.n_a * m.test.n_b) / 2.0 : m.test.difference;
    const bool up = sign > 0;
    switch (m.direction) {
        case Direction::HigherIsBetter:
            return up ? Verdict::Better : Verdict::Worse;
        case Direction::LowerIsBetter:
            return up ? Verdict::Worse : Verdict::Better;
        case Direction::Neutral:
            break;
    }
    return up ? Verdict::Higher : Verdict::Lower;
}

void decide_verdicts(DiffResult& d, std::vector<StackShift> paths)
{
    std::vector<MetricDiff*> tested;
    for (MetricDiff& m : d.totals)
        if (m.test.enough_data)
            tested.push_back(&m);
    for (LockDiff& l : d.locks)
        for (MetricDiff& m : l.metrics)
            if (m.test.enough_data)
                tested.push_back(&m);
    // The call paths, which can be many, share a quarter of alpha; the
    // metrics (totals and lock rows) the rest. A part with nothing to test
    // leaves all of it to the other.
    const double paths_share = tested.empty() ? 1.0 : paths.empty() ? 0.0 : kCallPathsShare;
    std::vector<double> p, w;
    for (const MetricDiff* m : tested) {
        p.push_back(m->test.p_value);
        w.push_back((1 - paths_share) / double(tested.size()));
    }
    for (const StackShift& sh : paths) {
        p.push_back(sh.share.p_value);
        w.push_back(paths_share / double(paths.size()));
    }
    const std::vector<double> adjusted = stats::weighted_holm_adjust(p, w);
    size_t at = 0;
    for (MetricDiff* m : tested)
        m->p_adjusted = adjusted[at++];
    for (StackShift& sh : paths)
        sh.p_adjusted = adjusted[at++];
    d.hypotheses = p.size();
    d.stack_paths_compared = paths.size();
    for (MetricDiff& m : d.totals)
        m.verdict = judge(m, d.alpha, d.min_effect);
    for (LockDiff& l : d.locks)
        for (MetricDiff& m : l.metrics)
            m.verdict = judge(m, d.alpha, d.min_effect);
    d.stack_shifts.clear();
    for (StackShift& sh : paths)
        if (sh.p_adjusted < d.alpha && std::fabs(sh.share.difference) >= d.min_effect)
            d.stack_shifts.push_back(std::move(sh));
    std::stable_sort(d.stack_shifts.begin(), d.stack_shifts.end(), [](const StackShift& x, const StackShift& y) {
        return std::fabs(x.share.difference) > std::fabs(y.share.difference);
    });
}

const char* verdict_name(Verdict v)
{
    static constexpr std::array kNames{
        "better", "worse", "higher", "lower", "no significant difference", "not enough data", "below min effect"};
    return enum_name<Verdict::BelowMinEffect>(kNames, v);
}

bool DiffResult::any_worse() const
{
    auto worse = [](const MetricDiff& m) { return m.verdict == Verdict::Worse; };
    return std::any_of(totals.begin(), totals.end(), worse) ||
           std::any_of(locks.begin(), locks.end(),
                       [&](const LockDiff& l) { return std::any_of(l.metrics.begin(), l.metrics.end(), worse); });
}

bool DiffResult::any_change() const
{
    return !stack_shifts.empty() || std::any_of(totals.begin(), totals.end(), called) ||
           std::any_of(locks.begin(), locks.end(),
                       [](const LockDiff& l) { return std::any_of(l.metrics.begin(), l.metrics.end(), called); });
}

}  // namespace lockscope
