#include "models/display.h"

#include "core/analysis/holder_parts.h"
#include "core/format.h"
#include "core/lock_key.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

namespace lockscope::gui::display {

QString duration(double ns)
{
    return QString::fromStdString(format_duration(ns));
}
QString count(uint64_t n)
{
    return QString::fromStdString(format_count(n));
}
QString rate(double per_s, const QString& unit)
{
    return QString::fromStdString(format_rate(per_s, unit.toStdString()));
}
QString percent(double fraction, int decimals)
{
    return QString::fromStdString(format_percent(fraction, decimals));
}
QString kind(const std::string& k, const std::string& mode)
{
    return QString::fromStdString(kind_text(k, mode));
}

static_assert(WaitPartCount == kWaitPartCount, "the dashboard shows every part of the wait");

QString wait_part_name(int part)
{
    return part >= 0 && part < WaitPartCount ? QString::fromUtf8(kWaitParts[size_t(part)].label) : QString();
}

uint64_t wait_part_ns(const LockCounters& c, int part)
{
    return part >= 0 && part < WaitPartCount ? (c.*kWaitParts[size_t(part)].ns)() : 0;
}

std::array<int, WaitPartCount> wait_part_percents(const LockCounters& c)
{
    const auto ns = wait_parts(c);
    const std::vector<int> whole = whole_percents({ns.begin(), ns.end()});
    std::array<int, WaitPartCount> percents{};
    std::copy_n(whole.begin(), WaitPartCount, percents.begin());
    return percents;
}

static_assert(HolderPartCount == kHolderParts.size(), "the dashboard shows every part of the holder split");

QString holder_part_name(int part)
{
    return part >= 0 && part < HolderPartCount ? QString::fromUtf8(kHolderParts[size_t(part)].name) : QString();
}

uint64_t holder_part_ns(const LockCounters& c, int part)
{
    return part >= 0 && part < HolderPartCount ? kHolderParts[size_t(part)].ns(c) : 0;
}

std::array<int, HolderPartCount> holder_part_percents(const LockCounters& c)
{
    std::vector<uint64_t> ns;
    for (int part = 0; part < HolderPartCount; ++part)
        ns.push_back(holder_part_ns(c, part));
    const std::vector<int> whole = whole_percents(ns);
    std::array<int, HolderPartCount> percents{};
    std::copy_n(whole.begin(), HolderPartCount, percents.begin());
    return percents;
}

QString metric_label(const MetricDiff& m)
{
    static const std::pair<const char*, const char*> labels[] = {{"throughput", "throughput"},
                                                                 {"contentions_per_s", "contentions/s"},
                                                                 {"spin_failure_rate", "spin-failure rate"},
                                                                 {"wait_per_op", "wait per op"},
                                                                 {"wait_per_s", "wait per second"},
                                                                 {"spinning_share", "share of wait spinning"},
                                                                 {"queued_on_cpu_share", "share of wait queued on CPU"},
                                                                 {"asleep_share", "share of wait asleep"},
                                                                 {"runnable_share", "share of wait runnable"},
                                                                 {"idle_fraction", "CPU idle"}};
    for (const auto& [key, label] : labels)
        if (m.metric == key)
            return QString::fromUtf8(label);
    return QString::fromStdString(m.metric);
}

QString metric_value(const MetricDiff& m, double v)
{
    if (!std::isfinite(v))
        return QStringLiteral("–");
    const QString sign = v < 0 ? QStringLiteral("−") : QString();
    const double a = std::fabs(v);
    if (m.unit == "fraction")
        return percent(v);
    if (m.unit == "ns/op")
        return sign + duration(a) + "/op";
    if (m.unit == "ns/s")
        return sign + duration(a) + "/s";
    if (m.unit == "ops/s")
        return sign + rate(a, "ops");
    if (m.unit == "/s")
        return sign + rate(a);
    return QString::number(v, 'g', 3);
}

QString metric_change(const MetricDiff& m)
{
    const double r = m.test.relative;
    if (!std::isfinite(r))
        return m.test.center_a == 0 && m.test.center_b > 0 ? QStringLiteral("from 0") : QStringLiteral("–");
    if (r >= 9.995)
        return QStringLiteral("%1×").arg(r + 1, 0, 'f', 0);
    return QString::asprintf("%+.1f%%", r * 100);
}

QString metric_interval(const MetricDiff& m)
{
    const stats::TestResult& t = m.test;
    if (!t.enough_data)
        return QStringLiteral("–");
    auto pct = [](double r) {
        return r >= 9.995 ? QStringLiteral("%1×").arg(r + 1, 0, 'f', 0) : QString::asprintf("%+.1f%%", r * 100);
    };
    if (std::isfinite(t.rel_low) && std::isfinite(t.rel_high))
        return QStringLiteral("[%1, %2]").arg(pct(t.rel_low), pct(t.rel_high));
    if (std::isfinite(t.diff_low) && std::isfinite(t.diff_high))
        return QStringLiteral("[%1, %2]").arg(metric_value(m, t.diff_low), metric_value(m, t.diff_high));
    return QStringLiteral("unbounded");
}

QString metric_p(const MetricDiff& m)
{
    if (!m.test.enough_data)
        return QStringLiteral("–");
    if (m.p_adjusted < 0.001)
        return QStringLiteral("<0.001");
    return QString::number(m.p_adjusted, 'f', 3);
}

QString verdict_text(Verdict v)
{
    return QString::fromUtf8(verdict_name(v));
}

QColor verdict_colour(Verdict v)
{
    switch (v) {
        case Verdict::Worse:
            return QColor(0xc6, 0x28, 0x28);
        case Verdict::Better:
            return QColor(0x2e, 0x7d, 0x32);
        case Verdict::Higher:
        case Verdict::Lower:
            return QColor(0x15, 0x65, 0xc0);
        case Verdict::NoSignificantDifference:
        case Verdict::BelowMinEffect:
            return QColor(0x61, 0x61, 0x61);
        case Verdict::NotEnoughData:
            return QColor(0x9e, 0x9e, 0x9e);
    }
    return QColor(0x61, 0x61, 0x61);
}

}  // namespace lockscope::gui::display
