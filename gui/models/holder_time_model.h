// The holder split's tasks of one lock row (the Locks page's "Holders"
// tab): the holders followed, with the wait each caused while running,
// runnable and asleep, then the tasks that ran instead of a runnable
// holder, with the wait behind the holder they had preempted; the same
// tasks as `lockscope report`'s "held by" and "preempted by" lines.
#pragma once

#include "core/analysis/report.h"

#include "models/table_model.h"

#include <vector>

namespace lockscope::gui {

class HolderTimeModel : public TableModel {
    Q_OBJECT
public:
    enum Columns { Task, Role, Running, Runnable, Asleep, Waits, ColumnCount };
    enum Roles {
        SortRole = Qt::UserRole + 1,
        ExactRole,  // qulonglong: the time or count behind a number cell; invalid where "–"
    };

    explicit HolderTimeModel(QObject* parent = nullptr);

    // Holders first, most wait first, then the preemptors.
    void setTasks(const std::vector<HolderTimeShare>& holders, const std::vector<HolderTimeShare>& preemptors);
    const std::vector<HolderTimeShare>& tasks() const { return tasks_; }

private:
    int rows() const override;
    QVariant cell(const QModelIndex& index, int role) const override;
    bool preemptor(int row) const;
    QVariant exact(int row, int column) const;

    std::vector<HolderTimeShare> tasks_;
    size_t holders_ = 0;  // the first rows are holders, the rest preemptors
};

}  // namespace lockscope::gui
