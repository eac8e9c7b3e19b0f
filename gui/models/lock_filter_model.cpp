#include "models/lock_filter_model.h"

#include "models/lock_table_model.h"

namespace lockscope::gui {

LockFilterModel::LockFilterModel(QObject* parent) : QSortFilterProxyModel(parent)
{
    setSortRole(LockTableModel::SortRole);
}

void LockFilterModel::setFilterText(const QString& text)
{
    if (text == text_)
        return;
    // Qt 6.4 has no begin/endFilterChange; invalidateFilter re-runs the rows.
    text_ = text;
    invalidateFilter();
}

bool LockFilterModel::filterAcceptsRow(int source_row, const QModelIndex& source_parent) const
{
    const QString needle = text_.trimmed();
    if (needle.isEmpty())
        return true;
    for (int column : {LockTableModel::Name, LockTableModel::Kind, LockTableModel::Scope, LockTableModel::Caller,
                       LockTableModel::Source, LockTableModel::Cgroups}) {
        QModelIndex index = sourceModel()->index(source_row, column, source_parent);
        if (index.data(LockTableModel::SortRole).toString().contains(needle, Qt::CaseInsensitive))
            return true;
    }
    return false;
}

}  // namespace lockscope::gui
