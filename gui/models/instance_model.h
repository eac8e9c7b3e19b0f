// The lock objects behind one class row (the Locks page's "Objects" tab):
// which inode, which process's mm, which CPU, with the evidence behind the
// name; the same rows as `lockscope report --by instance`.
#pragma once

#include "session/lock_detail.h"

#include "models/table_model.h"

namespace lockscope::gui {

class InstanceModel : public TableModel {
    Q_OBJECT
public:
    enum Columns { Object, Contentions, Wait, Evidence, ColumnCount };
    enum Roles { SortRole = Qt::UserRole + 1 };

    explicit InstanceModel(QObject* parent = nullptr);

    void setInstances(std::vector<InstanceEntry> instances);
    const std::vector<InstanceEntry>& instances() const { return instances_; }

private:
    int rows() const override;
    QVariant cell(const QModelIndex& index, int role) const override;
    std::vector<InstanceEntry> instances_;
};

}  // namespace lockscope::gui
