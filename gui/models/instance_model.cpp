#include "models/instance_model.h"

#include "models/display.h"

namespace lockscope::gui {

InstanceModel::InstanceModel(QObject* parent) : TableModel({"Object", "Contentions", "Wait", "Why this name"}, parent)
{
}

void InstanceModel::setInstances(std::vector<InstanceEntry> instances)
{
    reset(instances_, std::move(instances));
}

int InstanceModel::rows() const
{
    return int(instances_.size());
}

QVariant InstanceModel::cell(const QModelIndex& index, int role) const
{
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
        return alignment(index.column() != Contentions && index.column() != Wait);
    return {};
}

}  // namespace lockscope::gui
