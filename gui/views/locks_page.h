// Locks: the sortable, filterable table and, for the selected row, its wait
// histogram, time series, owner state at queueing, caller, waker and holder
// stacks, the session's wait chains (a graph; clicking a lock selects it),
// and its user-space locks.
#pragma once

#include "session/snapshot.h"

#include <QWidget>

#include <optional>

class QLabel;
class QTabWidget;
class QLineEdit;
class QTableView;
class QTreeView;
class QPlainTextEdit;

namespace lockscope::gui {

class HistogramModel;
class LockFilterModel;
class LockTableModel;
class OwnerStateModel;
class StackModel;
class InstanceModel;
class UserLockModel;
class ChainView;
namespace charts {
class BarChart;
class TimeSeriesChart;
}  // namespace charts

class LocksPage : public QWidget {
    Q_OBJECT
public:
    explicit LocksPage(QWidget* parent = nullptr);
    void setSnapshot(const SnapshotPtr& snapshot);

    LockTableModel* table() const { return table_; }
    LockFilterModel* filter() const { return filter_; }
    QTableView* view() const { return view_; }
    QLineEdit* filterEdit() const { return filter_edit_; }
    HistogramModel* histogram() const { return histogram_; }
    OwnerStateModel* ownerStates() const { return owner_; }
    StackModel* waiters() const { return waiters_; }
    StackModel* wakers() const { return wakers_; }
    StackModel* holders() const { return holders_; }
    InstanceModel* instances() const { return instances_; }
    ChainView* chains() const { return chains_; }
    UserLockModel* userLocks() const { return user_locks_; }
    QTreeView* userLockView() const { return user_lock_view_; }
    QPlainTextEdit* userLockStacks() const { return user_lock_stacks_; }
    int chainsTab() const { return chains_tab_; }
    int userLocksTab() const { return user_locks_tab_; }
    QTabWidget* detailTabs() const { return stacks_; }

    void selectFirstRow();
    // Selects the lock row of that name (clearing a filter that hides it);
    // false when the table has no such lock.
    bool selectLockNamed(const QString& name);
    void focusFilter();

signals:
    void lockSelected(const lockscope::LockKey& lock_key);

private:
    void setupTable();
    QTabWidget* buildStackTabs();
    QWidget* buildUserLocks();
    void setUserLocks(const SnapshotPtr& snapshot);
    void showSelected();
    void updateCount();

    LockTableModel* table_;
    LockFilterModel* filter_;
    HistogramModel* histogram_;
    OwnerStateModel* owner_;
    StackModel* waiters_;
    StackModel* wakers_;
    StackModel* holders_;
    InstanceModel* instances_;
    QLineEdit* filter_edit_;
    QLabel* count_;
    QTableView* view_;
    QLabel* detail_title_;
    charts::BarChart* histogram_chart_;
    charts::TimeSeriesChart* series_chart_;
    charts::BarChart* owner_chart_;
    QTreeView* waiter_view_;
    QTreeView* waker_view_;
    QTreeView* holder_view_;
    ChainView* chains_;
    QTabWidget* stacks_;
    int chains_tab_ = -1;
    UserLockModel* user_locks_;
    QLabel* user_locks_note_;
    QTreeView* user_lock_view_;
    QPlainTextEdit* user_lock_stacks_;
    int user_locks_tab_ = -1;
    std::optional<LockKey> selected_key_;  // kept across live reloads
};

}  // namespace lockscope::gui
