#include "models/instance_model.h"

#include "models/display.h"

namespace lockscope::gui {

InstanceModel::InstanceModel(QObject* parent) : QAbstractTableModel(parent) {}

void InstanceModel::setInstances(std::vector<InstanceEntry> instances)
{
    beginResetModel();
    instances_ = std::move(instances);
    endResetModel();
}

int InstanceModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : int(instances_.size());
}

int InstanceModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant InstanceModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const InstanceEntry& e = instances_[size_t(index.row())];
    if (role == Qt::DisplayRole || role == Qt::ToolTipRole) {
        switch (index.column()) {
            case Object:
                return QString::fromStdString(e.label);
            case Contentions:
                return display::count(e.contentions);
            case Wait:
                return display::duration(double(e.wait_ns));
            case Evidence:
                return e.detail.empty() ? QStringLiteral("–") : QString::fromStdString(e.detail);
        }
    }
    if (role == SortRole) {
        switch (index.column()) {
            case Object:
                return QString::fromStdString(e.label);
            case Contentions:
                return qulonglong(e.contentions);
            case Wait:
                return qulonglong(e.wait_ns);
            case Evidence:
                return QString::fromStdString(e.detail);
        }
    }
    if (role == Qt::TextAlignmentRole)
        return index.column() == Contentions || index.column() == Wait ? int(Qt::AlignRight | Qt::AlignVCenter)
                                                                       : int(Qt::AlignLeft | Qt::AlignVCenter);
    return {};
}

QVariant InstanceModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    static const char* const titles[ColumnCount] = {"Object", "Contentions", "Wait", "Why this name"};
    return QString::fromUtf8(titles[section]);
}

}  // namespace lockscope::gui
