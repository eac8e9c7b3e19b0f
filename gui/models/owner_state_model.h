// Who held the lock when a spinner gave up and queued: the observable reason
// spinning failed (mutex and rwsem; see DESIGN.md "owner state at queueing").
#pragma once

#include "core/model.h"

#include "models/table_model.h"

#include <array>

namespace lockscope::gui {

class OwnerStateModel : public TableModel {
    Q_OBJECT
public:
    enum Columns { State, Count, Share, ColumnCount };
    enum Roles { SortRole = Qt::UserRole + 1 };

    explicit OwnerStateModel(QObject* parent = nullptr);

    void setCounts(const std::array<uint64_t, kOwnerStates>& owner);
    uint64_t total() const { return total_; }

    static QString stateLabel(int state);  // "writer on CPU"
    static QString stateExplanation(int state);

private:
    int rows() const override;
    QVariant cell(const QModelIndex& index, int role) const override;
    std::array<uint64_t, kOwnerStates> owner_{};
    uint64_t total_ = 0;
};

}  // namespace lockscope::gui
