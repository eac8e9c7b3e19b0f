// Who held the lock when a spinner gave up and queued: the observable reason
// spinning failed (mutex and rwsem; see DESIGN.md "owner state at queueing").
#pragma once

#include "core/model.h"

#include <QAbstractTableModel>

#include <array>

namespace lockscope::gui {

class OwnerStateModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Columns { State, Count, Share, ColumnCount };
    enum Roles { SortRole = Qt::UserRole + 1 };

    explicit OwnerStateModel(QObject* parent = nullptr);

    void setCounts(const std::array<uint64_t, kOwnerStates>& owner);
    uint64_t total() const { return total_; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

    static QString stateLabel(int state);  // "writer on CPU"
    static QString stateExplanation(int state);

private:
    std::array<uint64_t, kOwnerStates> owner_{};
    uint64_t total_ = 0;
};

}  // namespace lockscope::gui
