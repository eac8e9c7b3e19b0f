#include "core/analysis/diff_verdicts.h"
#include "core/enum_names.h"

#include <algorithm>

namespace lockscope {

Verdict judge(const MetricDiff& m, double alpha)
{
    if (!m.test.enough_data)
        return Verdict::NotEnoughData;
    if (!(m.p_adjusted < alpha))
        return Verdict::NoSignificantDifference;
    // Welch's sign is the mean difference; the rank test's is whether U sits
    // above its null mean (its shift estimate can be 0 with many ties).
    const double sign = m.test.method == stats::Method::Welch
                            ? m.test.difference
                            : m.test.statistic - double(m.test.n_a * m.test.n_b) / 2.0;
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

void adjust_family(std::vector<MetricDiff*> family, double alpha)
{
    std::vector<double> p;
    std::vector<MetricDiff*> tested;
    for (MetricDiff* m : family)
        if (m->test.enough_data) {
            p.push_back(m->test.p_value);
            tested.push_back(m);
        }
    const std::vector<double> adjusted = stats::holm_adjust(p);
    for (size_t i = 0; i < tested.size(); ++i)
        tested[i]->p_adjusted = adjusted[i];
    for (MetricDiff* m : family)
        m->verdict = judge(*m, alpha);
}

const char* verdict_name(Verdict v)
{
    static constexpr std::array kNames{"better",         "worse", "higher", "lower", "no significant difference",
                                       "not enough data"};
    return enum_name<Verdict::NotEnoughData>(kNames, v);
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
    auto changed = [](const MetricDiff& m) {
        return m.verdict != Verdict::NoSignificantDifference && m.verdict != Verdict::NotEnoughData;
    };
    return std::any_of(totals.begin(), totals.end(), changed) ||
           std::any_of(locks.begin(), locks.end(),
                       [&](const LockDiff& l) { return std::any_of(l.metrics.begin(), l.metrics.end(), changed); });
}

}  // namespace lockscope
