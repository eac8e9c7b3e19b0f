#include "models/user_lock_model.h"

#include "models/display.h"

#include <QStringList>

#include <optional>
#include <vector>

#include "core/format.h"

namespace lockscope::gui {

UserLockModel::UserLockModel(QObject* parent)
    : TableModel(
          {"Lock", "Kind", "Caller", "Waits", "Wait", "Mean", "Max", "On CPU", "Asleep", "Runnable", "Woken by",
           "Owners"},
          parent,
          {"the lock's symbol in its binary, or the function that takes a heap lock",
           "pthread_mutex, pthread_rwlock/r or /w, futex", "the first caller outside the locking library, most sampled",
           "futex waits on the lock (a contended acquisition can wait more than once)",
           "time in those waits, from the syscall's entry to its exit", "wait per futex wait", "the longest wait",
           "share of the wait in the futex syscall on a CPU (the three parts add up to 100%)",
           "share of the wait switched out blocked, until a wakeup",
           "share of the wait switched out runnable: woken or preempted, waiting for a CPU",
           "the thread whose wakeup ended most of the waits' sleeps (for a mutex, its unlock), and its share",
           "the holders' thread ids that sampled waiters saw"})
{
}

void UserLockModel::setReport(UserLockReport report)
{
    reset(report_, std::move(report));
}

QString UserLockModel::stacksText(int row, int most) const
{
    if (row < 0 || size_t(row) >= report_.rows.size())
        return {};
    const UserLockReportRow& r = report_.rows[size_t(row)];
    const QString lock =
        QString::fromStdString(r.name) + QStringLiteral(" (") + QString::fromStdString(r.kind) + QLatin1Char(')');
    if (r.stacks.empty())
        return tr("%1: no sampled stack in this session").arg(lock);
    uint64_t wait = 0;
    for (const UserLockReportStack& s : r.stacks)
        wait += s.wait_ns;
    QStringList lines;
    lines << tr("%1: %2 sampled stacks, innermost frame first").arg(lock).arg(r.stacks.size());
    for (size_t i = 0; i < r.stacks.size() && i < size_t(most); ++i) {
        const UserLockReportStack& s = r.stacks[i];
        lines << tr("%1 of the sampled wait, %2 samples:")
                     .arg(display::percent(wait ? double(s.wait_ns) / double(wait) : 0.0, 0),
                          display::count(s.samples));
        for (const std::string& frame : s.frames)
            lines << QStringLiteral("    ") + QString::fromStdString(frame);
    }
    if (r.stacks.size() > size_t(most))
        lines << tr("(%1 more in lockscope export --format folded)").arg(r.stacks.size() - size_t(most));
    return lines.join(QLatin1Char('\n'));
}

int UserLockModel::rows() const
{
    return int(report_.rows.size());
}

namespace {

// The wait's parts as whole percentages that add up to 100; none where the
// session does not split the wait.
std::optional<std::vector<int>> part_percents(const UserLockReport& report, const UserLockReportRow& r)
{
    if (!report.split || r.wait_ns == 0)
        return std::nullopt;
    return whole_percents({r.oncpu_ns, r.asleep_ns, r.runnable_ns});
}

QString woken_by(const UserLockReportRow& r)
{
    if (r.wakers.empty())
        return QStringLiteral("–");
    uint64_t credited = 0;
    for (const UserLockReportWaker& w : r.wakers)
        credited += w.wakes;
    const UserLockReportWaker& top = r.wakers.front();
    QString text = QString::number(top.tid) + QLatin1Char(' ') + QString::fromStdString(top.comm) +
                   QStringLiteral(" (") + display::percent(double(top.wakes) / double(credited), 0) + QLatin1Char(')');
    if (r.wakers.size() > 1)
        text += QStringLiteral(" +%1").arg(r.wakers.size() - 1);
    return text;
}

// Every waker, one a line: "28447 worker-1: 1,204 wakes (61%)".
QString all_wakers(const UserLockReportRow& r)
{
    if (r.wakers.empty())
        return QStringLiteral("no wait was woken by a thread (none slept, or the session does not say)");
    uint64_t credited = 0;
    for (const UserLockReportWaker& w : r.wakers)
        credited += w.wakes;
    QStringList lines;
    for (const UserLockReportWaker& w : r.wakers)
        lines << QStringLiteral("%1 %2: %3 wakes (%4)")
                     .arg(w.tid)
                     .arg(QString::fromStdString(w.comm), display::count(w.wakes),
                          display::percent(double(w.wakes) / double(credited), 0));
    return lines.join(QLatin1Char('\n'));
}

}  // namespace

QVariant UserLockModel::cell(const QModelIndex& index, int role) const
{
    const UserLockReportRow& r = report_.rows[size_t(index.row())];
    const bool number = index.column() >= Waits && index.column() <= Runnable;
    if (role == Qt::TextAlignmentRole)
        return alignment(!number);
    if (role != Qt::DisplayRole && role != Qt::ToolTipRole)
        return {};
    switch (index.column()) {
        case Name:
            return QString::fromStdString(r.name);
        case Kind:
            return QString::fromStdString(r.kind);
        case Caller:
            return r.caller.empty() ? QStringLiteral("–") : QString::fromStdString(r.caller);
        case Waits:
            return display::count(r.waits);
        case Wait:
            return display::duration(double(r.wait_ns));
        case Mean:
            return display::duration(r.mean_wait_ns());
        case Max:
            return display::duration(double(r.max_wait_ns));
        case OnCpu:
        case Asleep:
        case Runnable: {
            const auto parts = part_percents(report_, r);
            if (!parts)
                return role == Qt::ToolTipRole ? QStringLiteral("not split in this session's format")
                                               : QStringLiteral("–");
            return QString::number((*parts)[size_t(index.column() - OnCpu)]) + QLatin1Char('%');
        }
        case WokenBy:
            return role == Qt::ToolTipRole ? all_wakers(r) : woken_by(r);
        case Owners: {
            QStringList tids;
            for (uint32_t tid : r.owner_tids)
                tids << QString::number(tid);
            return tids.isEmpty() ? QStringLiteral("–") : tids.join(QLatin1Char(' '));
        }
    }
    return {};
}

}  // namespace lockscope::gui
