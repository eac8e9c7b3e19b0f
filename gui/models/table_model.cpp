#include "models/table_model.h"

namespace lockscope::gui {
namespace {

QStringList from_utf8(std::initializer_list<const char*> texts)
{
    QStringList list;
    for (const char* text : texts)
        list << QString::fromUtf8(text);
    return list;
}

}  // namespace

TableModel::TableModel(std::initializer_list<const char*> titles, QObject* parent,
                       std::initializer_list<const char*> tips)
    : QAbstractTableModel(parent), titles_(from_utf8(titles)), tips_(from_utf8(tips))
{
}

int TableModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : rows();
}

int TableModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : int(titles_.size());
}

QVariant TableModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    return cell(index, role);
}

QVariant TableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation == Qt::Horizontal && section >= 0 && section < titles_.size()) {
        if (role == Qt::DisplayRole)
            return titles_[section];
        if (role == Qt::ToolTipRole && section < tips_.size())
            return tips_[section];
    }
    return QAbstractTableModel::headerData(section, orientation, role);
}

QVariant TableModel::alignment(bool text)
{
    return text ? int(Qt::AlignLeft | Qt::AlignVCenter) : int(Qt::AlignRight | Qt::AlignVCenter);
}

}  // namespace lockscope::gui
