// The session's user-space locks (record's user-lock recorder), one row per
// lock and kind over every run, as `lockscope report --scope user` shows them.
#pragma once

#include "core/analysis/user_locks.h"
#include "models/table_model.h"

#include <vector>

namespace lockscope::gui {

class UserLockModel : public TableModel {
    Q_OBJECT
public:
    enum Columns { Name, Kind, Caller, Waits, Wait, Mean, Max, OnCpu, Asleep, Runnable, WokenBy, Owners, ColumnCount };

    explicit UserLockModel(QObject* parent = nullptr);

    void setReport(UserLockReport report);
    const UserLockReport& report() const { return report_; }
    // The sampled waiter stacks of a row, as text: the most waited first,
    // frames innermost first, each with its share of the sampled wait.
    QString stacksText(int row, int most = 5) const;

private:
    int rows() const override;
    QVariant cell(const QModelIndex& index, int role) const override;
    UserLockReport report_;
};

}  // namespace lockscope::gui
