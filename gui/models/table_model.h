// What every flat table model here repeats: no child rows, one fixed list of
// column titles (and tooltips), and data() only for indexes that pass
// checkIndex. A subclass says how many rows it has and what one cell holds.
#pragma once

#include <QAbstractTableModel>
#include <QStringList>

#include <initializer_list>
#include <utility>

namespace lockscope::gui {

class TableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    int rowCount(const QModelIndex& parent = {}) const final;
    int columnCount(const QModelIndex& parent = {}) const final;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const final;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    // Qt::TextAlignmentRole's value: text reads from the left, numbers line up on the right.
    static QVariant alignment(bool text);

protected:
    // The titles' count is the column count; tips, when given, match them one to one.
    TableModel(std::initializer_list<const char*> titles, QObject* parent,
               std::initializer_list<const char*> tips = {});

    virtual int rows() const = 0;
    // Called only with a valid index of this model.
    virtual QVariant cell(const QModelIndex& index, int role) const = 0;

    // Swaps in new contents between beginResetModel and endResetModel.
    template <typename T, typename U>
    void reset(T& member, U&& value)
    {
        beginResetModel();
        member = std::forward<U>(value);
        endResetModel();
    }

private:
    QStringList titles_;
    QStringList tips_;
};

}  // namespace lockscope::gui
