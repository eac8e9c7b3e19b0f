#include "models/lock_table_model.h"

#include "models/display.h"

#include "core/analysis/estimate.h"

#include <QStringList>

namespace lockscope::gui {
namespace {

bool is_part(int column)
{
    return column >= LockTableModel::SpinningShare && column <= LockTableModel::RunnableShare;
}

int part_of(int column)
{
    return column - LockTableModel::SpinningShare;
}

bool is_holder_part(int column)
{
    return column >= LockTableModel::HolderRunningShare && column <= LockTableModel::HolderUnknownShare;
}

int holder_part_of(int column)
{
    return column - LockTableModel::HolderRunningShare;
}

double ratio(uint64_t part, uint64_t whole)
{
    return whole ? double(part) / double(whole) : 0.0;
}

double mean_wait(const LockCounters& c)
{
    return c.contentions ? double(c.wait_ns) / double(c.contentions) : 0.0;
}

// The row's own field behind a column, where a row may not keep it
// (ReportRow::keeps): a user lock keeps no spins, sleeps or cgroups.
bool kept(const ReportRow& r, int column)
{
    switch (column) {
        case LockTableModel::SpinAttempts:
            return r.keeps("spin_attempts");
        case LockTableModel::SpinFailureRate:
            return r.keeps("spin_failure_rate");
        case LockTableModel::SpinningShare:
            return r.keeps("spinning_ns");
        case LockTableModel::Sleeps:
            return r.keeps("sleeps");
        case LockTableModel::Cgroups:
            return r.keeps("cgroups");
    }
    return true;
}

}  // namespace

bool LockTableModel::split(const ReportRow& row) const
{
    if (!snapshot_)
        return false;
    return row.scope == LockScope::User ? snapshot_->report.user_locks.split : snapshot_->report.wait_parts_split;
}

bool LockTableModel::holderFollowed(const ReportRow& row, bool kept)
{
    if (!kept || row.per_task || (row.scope == LockScope::User && !row.holder_split_kept))
        return false;
    return row.counters.holder_known_ns() > 0 || !row.holder_times.empty();
}

QString LockTableModel::noHolderSplitReason(const ReportRow& row, bool kept)
{
    if (!kept)
        return tr("This session's format keeps no holder split.");
    if (row.scope == LockScope::User && !row.holder_split_kept)
        return tr("This session's format keeps no holder split of user-space locks.");
    if (row.scope == LockScope::User && !holderFollowed(row, kept))
        return tr(
            "No owner of this lock was followed: an rwlock records none, and a lock whose waiters never slept "
            "had none to follow.");
    if (!holderFollowed(row, kept))
        return tr(
            "No holder of this lock was followed: spinlocks and rwlocks record no owner, a reader-owned "
            "rwsem has none.");
    return {};
}

bool LockTableModel::holderSplit(const ReportRow& row) const
{
    return snapshot_ && holderFollowed(row, snapshot_->report.holder_split.kept);
}

// A holder part's cell; "–" where the row has no holder split, with a
// tooltip that says why.
QVariant LockTableModel::holderCell(const ReportRow& r, int column, int role) const
{
    const LockCounters& c = r.counters;
    const int part = holder_part_of(column);
    const bool known = holderSplit(r) && c.wait_ns && times_measured(c, period(r));
    switch (role) {
        case Qt::DisplayRole:
            if (holderSplit(r) && c.wait_ns && !times_measured(c, period(r)))
                return tr("not timed");
            return known ? QStringLiteral("%1%").arg(display::holder_part_percents(c)[size_t(part)])
                         : QStringLiteral("–");
        case SortRole:  // unknown shares sort below every known one
            return known ? ratio(display::holder_part_ns(c, part), c.wait_ns) : -1.0;
        case PercentRole:
            return known ? QVariant(display::holder_part_percents(c)[size_t(part)]) : QVariant();
        case ExactRole:
            return holderSplit(r) && times_measured(c, period(r))
                       ? QVariant(qulonglong(display::holder_part_ns(c, part)))
                       : QVariant();
        case Qt::ToolTipRole: {
            const QString tip = headerData(column, Qt::Horizontal, Qt::ToolTipRole).toString();
            if (!holderSplit(r))
                return QStringLiteral("%1\n%2").arg(tip, noHolderSplitReason(r, snapshot_->report.holder_split.kept));
            if (known)
                return tr("%1\n%2 of %3 wait")
                    .arg(tip, display::duration(double(display::holder_part_ns(c, part))),
                         display::duration(double(c.wait_ns)));
            return tip;
        }
    }
    return {};
}

uint32_t LockTableModel::period(const ReportRow& row) const
{
    // record --sample N times one kernel episode in N; every futex wait is timed.
    if (!snapshot_ || row.scope == LockScope::User)
        return 1;
    return timing_period(snapshot_->report.session).value_or(1);
}

LockTableModel::LockTableModel(QObject* parent)
    : TableModel(
          {"Lock",
           "Kind",
           "Scope",
           "Caller",
           "Name from",
           "Contentions",
           "Spins",
           "Spin fail",
           "Wait",
           "Mean",
           "Max",
           "Spin %",
           "Queued %",
           "Asleep %",
           "Runnable %",
           "Holder running %",
           "Holder runnable %",
           "Holder asleep %",
           "Holder unknown %",
           "Sleeps",
           "Share",
           "Cgroups"},
          parent,
          {"Lock class: struct.member from kernel data (inode.i_rwsem), a global symbol, a class known from "
           "the caller, or kind@caller",
           "Lock kind and, for reader-writer locks, the mode",
           "kernel: a kernel lock (the lock:contention tracepoints); user: a user-space lock of a recorded "
           "process, from its futex waits (its spins, sleeps and cgroups are not recorded: –, and its share is "
           "of the user locks' wait)",
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
           "Spinning: share of this lock's wait on CPU in optimistic spin phases. The four parts of the wait "
           "(spin, queued, asleep, runnable) add up to 100%",
           "Queued on CPU: share of the wait on CPU after queueing (not spinning, not switched out)",
           "Asleep: share of the wait switched out blocked",
           "Runnable: share of the wait switched out runnable (preempted, or woken and not yet running)",
           "Holder running: share of the wait while the lock's holder ran on a CPU (a long or hot critical "
           "section). The four holder parts add up to 100%",
           "Holder runnable: share of the wait while the holder was preempted or waiting for a CPU (lock-holder "
           "preemption)",
           "Holder asleep: share of the wait while the holder was blocked holding the lock (I/O, a page fault, "
           "another lock)",
           "Holder unknown: share of the wait with no holder followed (no owner to follow, the lock free "
           "between holders, or a holder that took it without queueing, not seen yet)",
           "Times the waiter went to sleep",
           "Share of wait: this lock's part of all wait of its scope in the session (a kernel lock's of the kernel "
           "locks' wait, a user lock's of the user locks' wait: a futex wait can contain kernel lock waits, so the "
           "two do not add)",
           "The cgroups (containers, services) whose tasks were sampled waiting on this lock, most samples "
           "first: from the sampled waiter stacks, so every lock has at least one, but a cgroup that waited "
           "rarely may be missing. The filter matches any of them."})
{
}

void LockTableModel::setSnapshot(SnapshotPtr snapshot)
{
    reset(snapshot_, std::move(snapshot));
}

int LockTableModel::rows() const
{
    return snapshot_ ? int(snapshot_->report.rows.size()) : 0;
}

QVariant LockTableModel::display(const ReportRow& r, int column) const
{
    const LockCounters& c = r.counters;
    const uint32_t period = this->period(r);
    if (!kept(r, column))
        return QStringLiteral("–");
    if (is_holder_part(column))
        return holderCell(r, column, Qt::DisplayRole);
    // Sampled timing: a lock none of whose episodes was timed has unknown
    // wait and spin times, not 0, and so the shares of its wait; an
    // estimated wait total carries its standard error.
    if (!times_measured(c, period) && column >= WaitTotal && column <= RunnableShare)
        return tr("not timed");
    if (column == WaitTotal && period > 1)
        return QString::fromStdString(format_wait_estimate(c, period));
    switch (column) {
        case Name:
            return QString::fromStdString(r.name);
        case Kind:
            return display::kind(r.kind, r.mode);
        case Scope:
            return QString::fromLatin1(lock_scope_name(r.scope));
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
            // A maximum the session did not measure (report_max.h) is unknown.
            return r.max_wait_known ? display::duration(double(c.max_wait_ns)) : QStringLiteral("–");
        case SpinningShare:
        case QueuedOnCpuShare:
        case AsleepShare:
        case RunnableShare: {
            if (!c.wait_ns)
                return QStringLiteral("–");
            const QVariant percent = partPercent(r, column);
            if (percent.isValid())
                return QStringLiteral("%1%").arg(percent.toInt());
            if (r.scope == LockScope::User)
                return QStringLiteral("–");  // a format that does not split a user lock's wait
            // A format that cannot split the wait: the spin phases' whole
            // time (as `lockscope report` shows it), queued on CPU unknown.
            if (column == QueuedOnCpuShare)
                return QStringLiteral("?");
            return display::percent(
                ratio(column == SpinningShare ? c.spin_ns : display::wait_part_ns(c, part_of(column)), c.wait_ns));
        }
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
    if (!kept(r, column))  // below every known value; no text the filter could match
        return column == Cgroups ? QVariant(QString()) : QVariant(-1.0);
    switch (column) {
        case Name:
        case Kind:
        case Scope:
            return display(r, column);  // they sort as they read
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
            return r.max_wait_known ? QVariant(qulonglong(c.max_wait_ns)) : QVariant(-1.0);
        case SpinningShare:
        case QueuedOnCpuShare:
        case AsleepShare:
        case RunnableShare:
            // Unknown shares sort below every known one.
            if (!c.wait_ns || !times_measured(c, period(r)) || (!split(r) && column == QueuedOnCpuShare) ||
                (!split(r) && r.scope == LockScope::User))
                return -1.0;
            return ratio(!split(r) && column == SpinningShare ? c.spin_ns : display::wait_part_ns(c, part_of(column)),
                         c.wait_ns);
        case Sleeps:
            return qulonglong(c.sleeps);
        case ShareOfWait:
            return r.share_of_wait;
        case Cgroups:
            return cgroupList(r);
    }
    return {};
}

QVariant LockTableModel::partPercent(const ReportRow& r, int column) const
{
    const LockCounters& c = r.counters;
    if (!is_part(column) || !kept(r, column) || !split(r) || !c.wait_ns || !times_measured(c, period(r)))
        return {};
    return display::wait_part_percents(c)[part_of(column)];
}

QVariant LockTableModel::exact(const ReportRow& r, int column) const
{
    const LockCounters& c = r.counters;
    const bool timed = times_measured(c, period(r));
    if (!kept(r, column))
        return {};
    switch (column) {
        case Contentions:
            return qulonglong(c.contentions);
        case SpinAttempts:
            return qulonglong(c.spin_attempts);
        case Sleeps:
            return qulonglong(c.sleeps);
        case WaitTotal:
            return timed ? QVariant(qulonglong(c.wait_ns)) : QVariant();
        case WaitMax:
            return timed && r.max_wait_known ? QVariant(qulonglong(c.max_wait_ns)) : QVariant();
        case SpinningShare:
        case QueuedOnCpuShare:
        case AsleepShare:
        case RunnableShare: {
            // Off CPU is measured in every episode; the parts on CPU only
            // where times were, and where the session splits the wait.
            const bool on_cpu = column == SpinningShare || column == QueuedOnCpuShare;
            if ((on_cpu && (!timed || !split(r))) || (r.scope == LockScope::User && !split(r)))
                return {};
            return qulonglong(display::wait_part_ns(c, part_of(column)));
        }
    }
    return {};
}

QVariant LockTableModel::cell(const QModelIndex& index, int role) const
{
    const ReportRow& r = snapshot_->report.rows[size_t(index.row())];
    if (is_holder_part(index.column()) && role != Qt::TextAlignmentRole && role != GroupIndexRole &&
        role != LockKeyRole)
        return holderCell(r, index.column(), role);
    switch (role) {
        case Qt::DisplayRole:
            return display(r, index.column());
        case SortRole:
            return sortValue(r, index.column());
        case GroupIndexRole:
            return index.row();
        case LockKeyRole:
            return QVariant::fromValue(r.key());
        case PercentRole:
            return partPercent(r, index.column());
        case ExactRole:
            return exact(r, index.column());
        case Qt::TextAlignmentRole:
            return alignment(index.column() < Contentions || index.column() == Cgroups);
        case Qt::ToolTipRole:
            if (index.column() == Cgroups && !r.cgroups.empty()) {
                QString tip = tr("Cgroups whose tasks were sampled waiting on this lock (sampled waiter stacks):");
                for (const auto& [path, samples] : r.cgroups)
                    tip += QStringLiteral("\n  %1  %2").arg(display::count(samples), QString::fromStdString(path));
                return tip;
            }
            if (is_part(index.column()) && !split(r) && r.scope == LockScope::Kernel)
                return tr("%1\nThis session's format keeps no off-CPU time of spin phases: Spinning is the spin "
                          "phases' whole time, off-CPU time included, queued on CPU is unknown (?), and the "
                          "shares need not add up to 100%.")
                    .arg(headerData(index.column(), Qt::Horizontal, Qt::ToolTipRole).toString());
            if (index.column() >= WaitTotal && index.column() <= RunnableShare && period(r) > 1)
                return tr("%1\nSampled timing: one episode in %2 per CPU was timed; times are estimates "
                          "(± one standard error), max is the longest timed wait, and \"not timed\" means "
                          "none of this lock's episodes was.")
                    .arg(headerData(index.column(), Qt::Horizontal, Qt::ToolTipRole).toString())
                    .arg(period(r));
            if (index.column() <= Source && r.scope == LockScope::User)
                return tr("%1\n%2, a user-space lock, caller with the most wait: %3\nname from: %4, waited on in %5 "
                          "process(es)")
                    .arg(QString::fromStdString(r.name), QString::fromStdString(r.kind),
                         r.caller.empty() ? tr("unknown") : QString::fromStdString(r.caller),
                         QString::fromStdString(r.name_source))
                    .arg(r.instances);
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

}  // namespace lockscope::gui
