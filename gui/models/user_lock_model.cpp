#include "models/user_lock_model.h"

#include "models/display.h"

#include <QStringList>

namespace lockscope::gui {

UserLockModel::UserLockModel(QObject* parent)
    : TableModel(
          {"Lock", "Kind", "Caller", "Waits", "Wait", "Mean", "Max", "Owners"}, parent,
          {"the lock's symbol in its binary, or the function that takes a heap lock",
           "pthread_mutex, pthread_rwlock/r or /w, futex", "the first caller outside the locking library, most sampled",
           "futex waits on the lock (a contended acquisition can wait more than once)",
           "time in those waits, from the syscall's entry to its exit", "wait per futex wait", "the longest wait",
           "the holders' thread ids that sampled waiters saw"})
{
}

void UserLockModel::setReport(UserLockReport report)
{
    reset(report_, std::move(report));
}

int UserLockModel::rows() const
{
    return int(report_.rows.size());
}

QVariant UserLockModel::cell(const QModelIndex& index, int role) const
{
    const UserLockReportRow& r = report_.rows[size_t(index.row())];
    const bool number = index.column() >= Waits && index.column() <= Max;
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
