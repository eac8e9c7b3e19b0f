#include "models/owner_state_model.h"

#include "models/display.h"

namespace lockscope::gui {

OwnerStateModel::OwnerStateModel(QObject* parent) : TableModel({"Owner at queueing", "Queueings", "Share"}, parent) {}

void OwnerStateModel::setCounts(const std::array<uint64_t, kOwnerStates>& owner)
{
    // Always five rows: a zero is an answer too ("never reader-owned").
    owner_ = owner;
    total_ = 0;
    for (uint64_t n : owner)
        total_ += n;
    emit dataChanged(index(0, 0), index(kOwnerStates - 1, ColumnCount - 1));
}

int OwnerStateModel::rows() const
{
    return kOwnerStates;
}

namespace {

struct StateText {
    const char* label;
    const char* explanation;
};

// Indexed by OwnerState.
const StateText kStateTexts[kOwnerStates] = {
    {"owner on CPU", "A writer held the lock and was running: spinning could have paid off"},
    {"owner off CPU", "The holder was switched out: spinning on it is pointless"},
    {"reader-owned", "Readers held the lock: the writer cannot see when they leave"},
    {"non-spinnable", "The lock was marked non-spinnable (e.g. a handoff was pending)"},
    {"no owner", "No owner recorded: mid-release, or the 4.7 NULL-owner check"},
};

bool known_state(int state)
{
    return state >= 0 && state < kOwnerStates;
}

}  // namespace

QString OwnerStateModel::stateLabel(int state)
{
    return known_state(state) ? QString::fromUtf8(kStateTexts[state].label) : QStringLiteral("unknown");
}

QString OwnerStateModel::stateExplanation(int state)
{
    return known_state(state) ? QString::fromUtf8(kStateTexts[state].explanation) : QString();
}

QVariant OwnerStateModel::cell(const QModelIndex& index, int role) const
{
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
            return alignment(index.column() == State);
    }
    return {};
}

}  // namespace lockscope::gui
