// Sorting by raw values and filtering on the text columns (lock, kind,
// caller) of the locks table; numbers are not matched, so typing "12"
// finds lock_12 rather than every row with a 12 in its counts.
#pragma once

#include <QSortFilterProxyModel>

namespace lockscope::gui {

class LockFilterModel : public QSortFilterProxyModel {
    Q_OBJECT
public:
    explicit LockFilterModel(QObject* parent = nullptr);
    void setFilterText(const QString& text);
    QString filterText() const { return text_; }

protected:
    bool filterAcceptsRow(int source_row, const QModelIndex& source_parent) const override;

private:
    QString text_;
};

}  // namespace lockscope::gui
