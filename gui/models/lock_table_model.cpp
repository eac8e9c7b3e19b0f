#include "models/lock_table_model.h"

#include "models/display.h"

#include "core/analysis/estimate.h"

#include <QStringList>

namespace lockscope::gui {
namespace {

double mean_wait(const LockCounters& c)
{
    return c.contentions ? double(c.wait_ns) / double(c.contentions) : 0.0;
}

// record --sample N's N (core/analysis/estimate.h); 1 with full timing.
uint32_t timing_period_of(const SnapshotPtr& snapshot)
{
    return snapshot ? timing_period(snapshot->report.session).value_or(1) : 1;
}

}  // namespace

LockTableModel::LockTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void LockTableModel::setSnapshot(SnapshotPtr snapshot)
{
    beginResetModel();
    snapshot_ = std::move(snapshot);
    endResetModel();
}

int LockTableModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() || !snapshot_ ? 0 : int(snapshot_->report.rows.size());
}

int LockTableModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QString LockTableModel::lockKey(const ReportRow& row)
{
    return QString::fromStdString(row.name + '\t' + row.kind + '\t' + row.mode);
}

QVariant LockTableModel::display(const ReportRow& r, int column) const
{
    const LockCounters& c = r.counters;
    const uint32_t period = timing_period_of(snapshot_);
    // Sampled timing: a lock none of whose episodes was timed has unknown
    // wait and spin times, not 0 (off-CPU time is measured in every episode);
    // an estimated wait total carries its standard error.
    if (!times_measured(c, period) && column >= WaitTotal && column <= SpinTime)
        return tr("not timed");
    if (column == WaitTotal && period > 1)
        return QString::fromStdString(format_wait_estimate(c, period));
    switch (column) {
        case Name:
            return QString::fromStdString(r.name);
        case Kind:
            return display::kind(r.kind, r.mode);
        case Caller:
            return r.caller.empty() ? QStringLiteral("–") : QString::fromStdString(r.caller);
        case Source:
            return r.name_source.empty() ? QStringLiteral("–") : QString::fromStdString(r.name_source);
        case Contentions:
            return display::count(c.contentions);
        case SpinAttempts:
            return display::count(c.spin_attempts);
        case SpinFailureRate:
            return c.spin_attempts ? display::percent(c.spin_failure_rate()) : QStringLiteral("–");
        case WaitTotal:
            return display::duration(double(c.wait_ns));
        case WaitMean:
            return display::duration(mean_wait(c));
        case WaitMax:
            return display::duration(double(c.max_wait_ns));
        // The rwsem writers' spin counted through fentry is not timed: not 0 ns.
        case SpinTime:
            return c.spin_attempts && !c.spin_ns && c.wait_ns ? QStringLiteral("n/m")
                                                              : display::duration(double(c.spin_ns));
        case OffCpuTime:
            return display::duration(double(c.offcpu_ns()));
        case Sleeps:
            return display::count(c.sleeps);
        case ShareOfWait:
            return display::percent(r.share_of_wait);
        case Cgroups:
            if (r.cgroups.empty())
                return QStringLiteral("–");
            if (r.cgroups.size() == 1)
                return QString::fromStdString(r.cgroups.front().first);
            return tr("%1 (+%2 more)").arg(QString::fromStdString(r.cgroups.front().first)).arg(r.cgroups.size() - 1);
    }
    return {};
}

QString LockTableModel::cgroupList(const ReportRow& r)
{
    QStringList paths;
    for (const auto& [path, samples] : r.cgroups)
        paths << QString::fromStdString(path);
    return paths.join(QLatin1Char('\n'));
}

QVariant LockTableModel::sortValue(const ReportRow& r, int column) const
{
    const LockCounters& c = r.counters;
    switch (column) {
        case Name:
            return QString::fromStdString(r.name);
        case Kind:
            return display::kind(r.kind, r.mode);
        case Caller:
            return QString::fromStdString(r.caller);
        case Source:
            return QString::fromStdString(r.name_source);
        case Contentions:
            return qulonglong(c.contentions);
        case SpinAttempts:
            return qulonglong(c.spin_attempts);
        case SpinFailureRate:
            return c.spin_failure_rate();
        case WaitTotal:
            return qulonglong(c.wait_ns);
        case WaitMean:
            return mean_wait(c);
        case WaitMax:
            return qulonglong(c.max_wait_ns);
        case SpinTime:
            return qulonglong(c.spin_ns);
        case OffCpuTime:
            return qulonglong(c.offcpu_ns());
        case Sleeps:
            return qulonglong(c.sleeps);
        case ShareOfWait:
            return r.share_of_wait;
        case Cgroups:
            return cgroupList(r);
    }
    return {};
}

QVariant LockTableModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid) || !snapshot_)
        return {};
    const ReportRow& r = snapshot_->report.rows[size_t(index.row())];
    switch (role) {
        case Qt::DisplayRole:
            return display(r, index.column());
        case SortRole:
            return sortValue(r, index.column());
        case GroupIndexRole:
            return index.row();
        case LockKeyRole:
            return lockKey(r);
        case Qt::TextAlignmentRole:
            return index.column() >= Contentions && index.column() != Cgroups ? int(Qt::AlignRight | Qt::AlignVCenter)
                                                                              : int(Qt::AlignLeft | Qt::AlignVCenter);
        case Qt::ToolTipRole:
            if (index.column() == Cgroups && !r.cgroups.empty()) {
                QString tip = tr("Cgroups whose tasks were sampled waiting on this lock (sampled waiter stacks):");
                for (const auto& [path, samples] : r.cgroups)
                    tip += QStringLiteral("\n  %1  %2").arg(display::count(samples), QString::fromStdString(path));
                return tip;
            }
            if (index.column() >= WaitTotal && index.column() <= OffCpuTime && timing_period_of(snapshot_) > 1)
                return tr("%1\nSampled timing: one episode in %2 per CPU was timed; times are estimates "
                          "(± one standard error), max is the longest timed wait, and \"not timed\" means "
                          "none of this lock's episodes was.")
                    .arg(headerData(index.column(), Qt::Horizontal, Qt::ToolTipRole).toString())
                    .arg(timing_period_of(snapshot_));
            if (index.column() <= Source)
                return QStringLiteral("%1\n%2, caller with the most wait: %3\nname from: %4, %5 lock object(s)")
                    .arg(QString::fromStdString(r.name), display::kind(r.kind, r.mode),
                         r.caller.empty() ? QStringLiteral("unknown") : QString::fromStdString(r.caller),
                         r.name_source.empty() ? QStringLiteral("not recorded (older session)")
                                               : QString::fromStdString(r.name_source))
                    .arg(r.instances);
            return headerData(index.column(), Qt::Horizontal, Qt::ToolTipRole);
    }
    return {};
}

QVariant LockTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount)
        return QAbstractTableModel::headerData(section, orientation, role);
    static const char* const titles[ColumnCount] = {"Lock",     "Kind",      "Caller", "Name from", "Contentions",
                                                    "Spins",    "Spin fail", "Wait",   "Mean",      "Max",
                                                    "Spinning", "Off CPU",   "Sleeps", "Share",     "Cgroups"};
    static const char* const tips[ColumnCount] = {
        "Lock class: struct.member from kernel data (inode.i_rwsem), a global symbol, a class known from "
        "the caller, or kind@caller",
        "Lock kind and, for reader-writer locks, the mode",
        "The caller that accounts for most of this lock's wait",
        "Where the name came from: slab (the object and member, from the slab cache and BTF), global, "
        "percpu, task (the waiter's own mm, files, signals), kernel-data (unnamed kernel image data), "
        "caller, unknown",
        "Contention episodes: first contention_begin to contention_end",
        "Spin attempts: optimistic spin phases (mutex)",
        "Spin-failure rate = spin failures / spin attempts: spin phases that ended with the task queueing",
        "Total wait time of all episodes",
        "Mean wait time per contention",
        "Longest single wait",
        "Time spent spinning",
        "Off-CPU time: the waiter was switched out, asleep or preempted",
        "Times the waiter went to sleep",
        "Share of wait: this lock's part of all wait in the session",
        "The cgroups (containers, services) whose tasks were sampled waiting on this lock, most samples "
        "first: from the sampled waiter stacks, so every lock has at least one, but a cgroup that waited "
        "rarely may be missing. The filter matches any of them."};
    if (role == Qt::DisplayRole)
        return QString::fromUtf8(titles[section]);
    if (role == Qt::ToolTipRole)
        return QString::fromUtf8(tips[section]);
    return {};
}

}  // namespace lockscope::gui
