#include "models/key_figures_model.h"

#include "models/display.h"

#include "core/analysis/estimate.h"

namespace lockscope::gui {
namespace {

double ratio(uint64_t part, uint64_t whole)
{
    return whole ? double(part) / double(whole) : 0.0;
}

bool is_wait_part(int figure)
{
    return figure >= KeyFiguresModel::WaitSpinning && figure <= KeyFiguresModel::WaitRunnable;
}

int wait_part(int figure)
{
    return figure - KeyFiguresModel::WaitSpinning;
}

}  // namespace

KeyFiguresModel::KeyFiguresModel(QObject* parent) : TableModel({"Figure", "Value", "Detail"}, parent) {}

void KeyFiguresModel::setSnapshot(SnapshotPtr snapshot)
{
    reset(snapshot_, std::move(snapshot));
}

int KeyFiguresModel::rows() const
{
    return snapshot_ ? FigureCount : 0;
}

bool KeyFiguresModel::partsKnown() const
{
    const Report& rep = snapshot_->report;
    return rep.wait_parts_split && times_measured(rep.totals.counters, timing_period(rep.session).value_or(1));
}

bool KeyFiguresModel::holderKnown() const
{
    const Report& rep = snapshot_->report;
    const LockCounters& c = rep.totals.counters;
    return rep.holder_split.kept && c.wait_ns && times_measured(c, timing_period(rep.session).value_or(1));
}

// "1% / 45% / 0%", and the times behind it with the unknown part.
QString KeyFiguresModel::holderText(int column) const
{
    const LockCounters& c = snapshot_->report.totals.counters;
    if (!holderKnown()) {
        if (column == Value)
            return QStringLiteral("–");
        return snapshot_->report.holder_split.kept ? QStringLiteral("no timed wait")
                                                   : QStringLiteral("not kept in this session's format");
    }
    const auto percents = display::holder_part_percents(c);
    if (column == Value)
        return QStringLiteral("%1% / %2% / %3%")
            .arg(percents[display::HolderRunning])
            .arg(percents[display::HolderRunnable])
            .arg(percents[display::HolderAsleep]);
    return QStringLiteral("unknown %1%: no holder followed").arg(percents[display::HolderUnknown]);
}

QVariant KeyFiguresModel::value(int figure) const
{
    const ReportTotals& t = snapshot_->report.totals;
    const LockCounters& c = t.counters;
    switch (figure) {
        case ContentionsPerSecond:
            return t.duration_s > 0 ? double(c.contentions) / t.duration_s : 0.0;
        case SpinFailureRate:
            return c.spin_failure_rate();
        case WaitSpinning:
        case WaitQueuedOnCpu:
        case WaitAsleep:
        case WaitRunnable:
            // Without the split, only the off-CPU parts stand on their own.
            if (!partsKnown() && (figure == WaitSpinning || figure == WaitQueuedOnCpu))
                return {};
            return ratio(display::wait_part_ns(c, wait_part(figure)), c.wait_ns);
        case HolderSplit:  // the share of the wait whose holder was followed
            return holderKnown() ? QVariant(ratio(c.holder_known_ns(), c.wait_ns)) : QVariant();
        case IdleFraction:
            return t.idle_fraction;
        case Throughput:
            return t.ops_per_s ? QVariant(*t.ops_per_s) : QVariant();
        case TopLock:
            return snapshot_->report.rows.empty() ? QVariant() : QVariant(snapshot_->report.rows[0].share_of_wait);
        case Lost:
            return double(t.lost);
    }
    return {};
}

QString KeyFiguresModel::valueText(int figure) const
{
    const QVariant v = value(figure);
    const Report& rep = snapshot_->report;
    switch (figure) {
        case ContentionsPerSecond:
            return display::rate(v.toDouble());
        case SpinFailureRate:
            return rep.totals.counters.spin_attempts ? display::percent(v.toDouble()) : QStringLiteral("–");
        case WaitSpinning:
        case WaitQueuedOnCpu:
        case WaitAsleep:
        case WaitRunnable:
            if (!rep.totals.counters.wait_ns)
                return QStringLiteral("–");
            if (partsKnown())
                return QStringLiteral("%1%").arg(display::wait_part_percents(rep.totals.counters)[wait_part(figure)]);
            return v.isValid() ? display::percent(v.toDouble()) : QStringLiteral("?");
        case HolderSplit:
            return holderText(Value);
        case IdleFraction:
            return display::percent(v.toDouble());
        case Throughput:
            return v.isValid() ? display::rate(v.toDouble(), "ops") : QStringLiteral("–");
        case TopLock:
            return rep.rows.empty() ? QStringLiteral("–") : QString::fromStdString(rep.rows[0].name);
        case Lost:
            return display::count(rep.totals.lost);
    }
    return {};
}

QString KeyFiguresModel::detail(int figure) const
{
    const ReportTotals& t = snapshot_->report.totals;
    const LockCounters& c = t.counters;
    switch (figure) {
        case ContentionsPerSecond:
            return QStringLiteral("%1 in %2 s").arg(display::count(c.contentions)).arg(t.duration_s, 0, 'f', 1);
        case SpinFailureRate:
            return QStringLiteral("%1 of %2 spins queued")
                .arg(display::count(c.spin_failures), display::count(c.spin_attempts));
        case WaitSpinning:
            return partsKnown()
                       ? QStringLiteral("%1 on CPU in spin phases").arg(display::duration(double(c.spinning_ns())))
                       : QStringLiteral("spin phases %1 with off CPU").arg(display::duration(double(c.spin_ns)));
        case WaitQueuedOnCpu:
            return partsKnown()
                       ? QStringLiteral("%1 on CPU after queueing").arg(display::duration(double(c.queued_on_cpu_ns())))
                       : QStringLiteral("not split in this session's format");
        case WaitAsleep:
            return QStringLiteral("%1 in %2 sleeps")
                .arg(display::duration(double(c.asleep_ns())), display::count(c.sleeps));
        case WaitRunnable:
            return QStringLiteral("%1 in %2 switch-outs")
                .arg(display::duration(double(c.runnable_ns())), display::count(c.preemptions));
        case HolderSplit:
            return holderText(Detail);
        case IdleFraction:
            return QStringLiteral("of all online CPUs");
        case Throughput: {
            const QString workload = QString::fromStdString(snapshot_->session->meta_value("workload"));
            return workload.isEmpty() ? QStringLiteral("no workload in this session")
                                      : QStringLiteral("workload %1").arg(workload);
        }
        case TopLock:
            return snapshot_->report.rows.empty() ? QStringLiteral("no contention recorded")
                   : snapshot_->report.rows[0].scope == LockScope::User
                       ? QStringLiteral("%1 of all user-lock wait").arg(display::percent(value(TopLock).toDouble()))
                       : QStringLiteral("%1 of all wait").arg(display::percent(value(TopLock).toDouble()));
        case Lost:
            return t.lost ? QStringLiteral("results undercount") : QStringLiteral("nothing dropped");
    }
    return {};
}

QVariant KeyFiguresModel::cell(const QModelIndex& index, int role) const
{
    const int figure = index.row();
    switch (role) {
        case Qt::DisplayRole:
            switch (index.column()) {
                case Label:
                    return headerData(figure, Qt::Vertical, Qt::DisplayRole);
                case Value:
                    return valueText(figure);
                case Detail:
                    return detail(figure);
            }
            break;
        case ValueRole:
            return value(figure);
        case AlertRole:
            return figure == Lost && snapshot_->report.totals.lost > 0;
        case PercentRole:
            if (!is_wait_part(figure) || !partsKnown())
                return {};
            return display::wait_part_percents(snapshot_->report.totals.counters)[wait_part(figure)];
        case HolderPercentsRole: {
            if (figure != HolderSplit || !holderKnown())
                return {};
            QVariantList percents;
            for (int p : display::holder_part_percents(snapshot_->report.totals.counters))
                percents << p;
            return percents;
        }
        case Qt::ToolTipRole: {
            QString tip = headerData(figure, Qt::Vertical, Qt::ToolTipRole).toString();
            if (figure == HolderSplit && holderKnown())
                for (int part = 0; part < display::HolderPartCount; ++part)
                    tip += QStringLiteral("\n%1: %2")
                               .arg(display::holder_part_name(part), display::duration(double(display::holder_part_ns(
                                                                         snapshot_->report.totals.counters, part))));
            if (is_wait_part(figure) && !snapshot_->report.wait_parts_split)
                tip += QStringLiteral(
                    "\nThis session's format keeps no off-CPU time of spin phases: the spin phases' time "
                    "includes it, so spinning and queued on CPU cannot be told apart.");
            return tip;
        }
    }
    return {};
}

QVariant KeyFiguresModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    // The figures' names head the rows.
    if (orientation == Qt::Horizontal)
        return TableModel::headerData(section, orientation, role);
    if (section < 0 || section >= FigureCount)
        return {};
    static const char* const labels[FigureCount] = {"Contentions/s",
                                                    "Spin-failure rate",
                                                    "Wait: spinning",
                                                    "Wait: queued on CPU",
                                                    "Wait: asleep",
                                                    "Wait: runnable",
                                                    "Holder: run / runnable / asleep",
                                                    "CPU idle",
                                                    "Throughput",
                                                    "Top lock",
                                                    "Lost events"};
    static const char* const tips[FigureCount] = {
        "Contention episodes per second of recording",
        "Spin failures / spin attempts: optimistic spins that ended with the task queueing",
        "Share of all wait time spent on CPU in optimistic spin phases. The four wait parts add up to 100%",
        "Share of all wait time on CPU after queueing (not spinning, not switched out)",
        "Share of all wait time switched out blocked (asleep)",
        "Share of all wait time switched out runnable: preempted, or woken and not yet running",
        "The same wait by what the lock's holder was doing: running on a CPU (a long critical section), runnable "
        "(preempted: lock-holder preemption), asleep (blocked while holding); the rest, unknown, had no holder "
        "followed",
        "Idle time / (recorded time × online CPUs)",
        "Workload operations per second",
        "The lock with the most wait time",
        "Events or keys dropped because a map or buffer was full"};
    if (role == Qt::DisplayRole)
        return QString::fromUtf8(labels[section]);
    if (role == Qt::ToolTipRole)
        return QString::fromUtf8(tips[section]);
    return {};
}

}  // namespace lockscope::gui
