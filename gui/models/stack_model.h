// Caller (waiter) or waker stacks of a selection as a tree: each stack is a
// row whose children are its frames, innermost first.
#pragma once

#include "session/lock_detail.h"

#include <QAbstractItemModel>

namespace lockscope::gui {

class StackModel : public QAbstractItemModel {
    Q_OBJECT
public:
    enum Columns { Frames, Samples, Share, Wait, ColumnCount };
    enum Roles { SortRole = Qt::UserRole + 1 };

    explicit StackModel(QObject* parent = nullptr);

    void setStacks(std::vector<StackEntry> stacks);
    // The Samples column's title where the entries count something else
    // (a user lock's wakers: "Wakes"); empty: "Samples".
    void setCountTitle(const QString& title);
    const std::vector<StackEntry>& stacks() const { return stacks_; }

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

    // The frames that say where the wait came from: lock internals skipped,
    // offsets dropped, "anon_pipe_write ← vfs_write ← ksys_write".
    static QString summary(const StackEntry& stack);

private:
    std::vector<StackEntry> stacks_;
    uint64_t total_samples_ = 0;
    QString count_title_;
};

}  // namespace lockscope::gui
