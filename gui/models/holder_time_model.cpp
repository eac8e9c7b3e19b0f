#include "models/holder_time_model.h"

#include "models/display.h"

namespace lockscope::gui {
namespace {

}  // namespace

HolderTimeModel::HolderTimeModel(QObject* parent)
    : TableModel(
          {"Task", "Role", "Running", "Runnable", "Asleep", "Waits"}, parent,
          {"The task: command [thread id]",
           "holder: it held the lock while waiters waited; preemptor: its CPU ran it instead of a "
           "runnable holder",
           "The waiters' wait while this holder ran on a CPU",
           "A holder's: the waiters' wait while it was runnable, not on a CPU. A preemptor's: the wait "
           "behind the holder it had preempted",
           "The waiters' wait while this holder was asleep holding the lock", "Waits that had time behind this task"})
{
}

void HolderTimeModel::setTasks(const std::vector<HolderTimeShare>& holders,
                               const std::vector<HolderTimeShare>& preemptors)
{
    std::vector<HolderTimeShare> tasks = holders;
    tasks.insert(tasks.end(), preemptors.begin(), preemptors.end());
    holders_ = holders.size();
    reset(tasks_, std::move(tasks));
}

int HolderTimeModel::rows() const
{
    return int(tasks_.size());
}

bool HolderTimeModel::preemptor(int row) const
{
    return size_t(row) >= holders_;
}

QVariant HolderTimeModel::exact(int row, int column) const
{
    const HolderTimeShare& t = tasks_[size_t(row)];
    // A preemptor keeps only the wait behind the holder it preempted.
    switch (column) {
        case Running:
            return preemptor(row) ? QVariant() : QVariant(qulonglong(t.running_ns));
        case Runnable:
            return qulonglong(t.runnable_ns);
        case Asleep:
            return preemptor(row) ? QVariant() : QVariant(qulonglong(t.asleep_ns));
        case Waits:
            return qulonglong(t.waits);
    }
    return {};
}

QVariant HolderTimeModel::cell(const QModelIndex& index, int role) const
{
    const int row = index.row(), column = index.column();
    const HolderTimeShare& t = tasks_[size_t(row)];
    switch (role) {
        case Qt::DisplayRole:
            if (column == Task)
                return QStringLiteral("%1[%2]")
                    .arg(t.comm.empty() ? QStringLiteral("?") : QString::fromStdString(t.comm))
                    .arg(t.tid);
            if (column == Role)
                return preemptor(row) ? tr("preemptor") : tr("holder");
            if (!exact(row, column).isValid())
                return QStringLiteral("–");
            return column == Waits ? display::count(t.waits) : display::duration(exact(row, column).toDouble());
        case SortRole:
            if (column == Task)
                return QString::fromStdString(t.comm);
            if (column == Role)
                return preemptor(row) ? 1 : 0;
            return exact(row, column).isValid() ? exact(row, column) : QVariant(-1.0);
        case ExactRole:
            return exact(row, column);
        case Qt::ToolTipRole:
            if (column == Task)
                return tr("%1, thread %2 of process %3").arg(QString::fromStdString(t.comm)).arg(t.tid).arg(t.tgid);
            return headerData(column, Qt::Horizontal, Qt::ToolTipRole);
        case Qt::TextAlignmentRole:
            return alignment(column <= Role);
    }
    return {};
}

}  // namespace lockscope::gui
