#include "models/key_figures_model.h"

#include "models/display.h"

namespace lockscope::gui {
namespace {

double ratio(uint64_t part, uint64_t whole)
{
    return whole ? double(part) / double(whole) : 0.0;
}

}  // namespace

KeyFiguresModel::KeyFiguresModel(QObject* parent) : QAbstractTableModel(parent) {}

void KeyFiguresModel::setSnapshot(SnapshotPtr snapshot)
{
    beginResetModel();
    snapshot_ = std::move(snapshot);
    endResetModel();
}

int KeyFiguresModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() || !snapshot_ ? 0 : FigureCount;
}

int KeyFiguresModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
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
        case SpinShare:
            return ratio(c.spin_ns, c.wait_ns);
        case OffCpuShare:
            return ratio(c.offcpu_ns(), c.wait_ns);
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
        case SpinShare:
        case OffCpuShare:
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
        case SpinShare:
            return QStringLiteral("of %1 wait").arg(display::duration(double(c.wait_ns)));
        case OffCpuShare:
            return QStringLiteral("%1 sleeps, %2 preemptions")
                .arg(display::count(c.sleeps), display::count(c.preemptions));
        case IdleFraction:
            return QStringLiteral("of all online CPUs");
        case Throughput: {
            const QString workload = QString::fromStdString(snapshot_->session->meta_value("workload"));
            return workload.isEmpty() ? QStringLiteral("no workload in this session")
                                      : QStringLiteral("workload %1").arg(workload);
        }
        case TopLock:
            return snapshot_->report.rows.empty()
                       ? QStringLiteral("no contention recorded")
                       : QStringLiteral("%1 of all wait").arg(display::percent(value(TopLock).toDouble()));
        case Lost:
            return t.lost ? QStringLiteral("results undercount") : QStringLiteral("nothing dropped");
    }
    return {};
}

QVariant KeyFiguresModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid) || !snapshot_)
        return {};
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
        case Qt::ToolTipRole:
            return headerData(figure, Qt::Vertical, Qt::ToolTipRole);
    }
    return {};
}

QVariant KeyFiguresModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation == Qt::Horizontal) {
        if (role != Qt::DisplayRole)
            return {};
        static const char* const columns[] = {"Figure", "Value", "Detail"};
        return section >= 0 && section < ColumnCount ? QString::fromUtf8(columns[section]) : QVariant();
    }
    if (section < 0 || section >= FigureCount)
        return {};
    static const char* const labels[FigureCount] = {"Contentions/s", "Spin-failure rate", "Wait spinning",
                                                    "Wait off CPU",  "CPU idle",          "Throughput",
                                                    "Top lock",      "Lost events"};
    static const char* const tips[FigureCount] = {
        "Contention episodes per second of recording",
        "Spin failures / spin attempts: optimistic spins that ended with the task queueing",
        "Share of all wait time spent spinning on CPU",
        "Share of all wait time the waiter was switched out (asleep or preempted)",
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
