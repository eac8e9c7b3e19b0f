#include "models/owner_state_model.h"

#include "models/display.h"

namespace lockscope::gui {

OwnerStateModel::OwnerStateModel(QObject* parent) : QAbstractTableModel(parent) {}

void OwnerStateModel::setCounts(const std::array<uint64_t, kOwnerStates>& owner)
{
    // Always five rows: a zero is an answer too ("never reader-owned").
    owner_ = owner;
    total_ = 0;
    for (uint64_t n : owner)
        total_ += n;
    emit dataChanged(index(0, 0), index(kOwnerStates - 1, ColumnCount - 1));
}

int OwnerStateModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : kOwnerStates;
}

int OwnerStateModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QString OwnerStateModel::stateLabel(int state)
{
    switch (static_cast<OwnerState>(state)) {
        case OwnerState::OnCpu:
            return QStringLiteral("owner on CPU");
        case OwnerState::OffCpu:
            return QStringLiteral("owner off CPU");
        case OwnerState::ReaderOwned:
            return QStringLiteral("reader-owned");
        case OwnerState::NonSpinnable:
            return QStringLiteral("non-spinnable");
        case OwnerState::None:
            return QStringLiteral("no owner");
    }
    return QStringLiteral("unknown");
}

QString OwnerStateModel::stateExplanation(int state)
{
    switch (static_cast<OwnerState>(state)) {
        case OwnerState::OnCpu:
            return QStringLiteral("A writer held the lock and was running: spinning could have paid off");
        case OwnerState::OffCpu:
            return QStringLiteral("The holder was switched out: spinning on it is pointless");
        case OwnerState::ReaderOwned:
            return QStringLiteral("Readers held the lock: the writer cannot see when they leave");
        case OwnerState::NonSpinnable:
            return QStringLiteral("The lock was marked non-spinnable (e.g. a handoff was pending)");
        case OwnerState::None:
            return QStringLiteral("No owner recorded: mid-release, or the 4.7 NULL-owner check");
    }
    return {};
}

QVariant OwnerStateModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const uint64_t n = owner_[size_t(index.row())];
    const double share = total_ ? double(n) / double(total_) : 0.0;
    switch (role) {
        case Qt::DisplayRole:
            switch (index.column()) {
                case State:
                    return stateLabel(index.row());
                case Count:
                    return display::count(n);
                case Share:
                    return total_ ? display::percent(share) : QStringLiteral("–");
            }
            break;
        case SortRole:
            switch (index.column()) {
                case State:
                    return index.row();
                case Count:
                    return qulonglong(n);
                case Share:
                    return share;
            }
            break;
        case Qt::ToolTipRole:
            return stateExplanation(index.row());
        case Qt::TextAlignmentRole:
            return index.column() == State ? int(Qt::AlignLeft | Qt::AlignVCenter)
                                           : int(Qt::AlignRight | Qt::AlignVCenter);
    }
    return {};
}

QVariant OwnerStateModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (role != Qt::DisplayRole || orientation != Qt::Horizontal)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
        case State:
            return QStringLiteral("Owner at queueing");
        case Count:
            return QStringLiteral("Queueings");
        case Share:
            return QStringLiteral("Share");
    }
    return {};
}

}  // namespace lockscope::gui
