// The lock objects behind one class row (the Locks page's "Objects" tab):
// which inode, which process's mm, which CPU, with the evidence behind the
// name; the same rows as `lockscope report --by instance`.
#pragma once

#include "session/lock_detail.h"

#include <QAbstractTableModel>

namespace lockscope::gui {

class InstanceModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Columns { Object, Contentions, Wait, Evidence, ColumnCount };
    enum Roles { SortRole = Qt::UserRole + 1 };

    explicit InstanceModel(QObject* parent = nullptr);

    void setInstances(std::vector<InstanceEntry> instances);
    const std::vector<InstanceEntry>& instances() const { return instances_; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
    std::vector<InstanceEntry> instances_;
};

}  // namespace lockscope::gui
