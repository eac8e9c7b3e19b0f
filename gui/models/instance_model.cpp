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
    if (role == Qt::TextAlignmentRole)
        return alignment(index.column() != Contentions && index.column() != Wait);
    const bool sort = role == SortRole;
    if (!sort && role != Qt::DisplayRole && role != Qt::ToolTipRole)
        return {};
    // A cell's text, or for SortRole what it sorts by: the numbers, not their text.
    switch (index.column()) {
        case Object:
            return QString::fromStdString(e.label);
        case Contentions:
            return sort ? QVariant(qulonglong(e.contentions)) : display::count(e.contentions);
        case Wait:
            return sort ? QVariant(qulonglong(e.wait_ns)) : display::duration(double(e.wait_ns));
        case Evidence:
            return e.detail.empty() && !sort ? QStringLiteral("–") : QString::fromStdString(e.detail);
    }
    return {};
}

}  // namespace lockscope::gui
