// Locks: the sortable, filterable table and, for the selected row, its wait
// histogram, time series, owner state at queueing, caller, waker and holder
// stacks, the session's wait chains (a graph; clicking a lock selects it).
// User-space locks are rows like the kernel's (scope user).
#pragma once

#include "session/snapshot.h"

#include <QWidget>

#include <optional>

class QLabel;
class QModelIndex;
class QTabWidget;
class QLineEdit;
class QTableView;
class QTreeView;

namespace lockscope::gui {

class HistogramModel;
class LockFilterModel;
class LockTableModel;
class OwnerStateModel;
class StackModel;
class InstanceModel;
class ChainView;
class HolderTab;
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
    HolderTab* holderTab() const { return holder_tab_; }
    QLabel* userNote() const { return user_note_; }
    charts::TimeSeriesChart* seriesChart() const { return series_chart_; }
    charts::BarChart* ownerChart() const { return owner_chart_; }
    int chainsTab() const { return chains_tab_; }
    QTabWidget* detailTabs() const { return stacks_; }

    void selectFirstRow();
    // Selects the lock row of that name, or of that wait-chain name (a user
    // lock's "g_lock (user pthread_mutex)"), clearing a filter that hides
    // it; false when the table has no such lock.
    bool selectLockNamed(const QString& name);
    void focusFilter();

signals:
    void lockSelected(const lockscope::LockKey& lock_key);

private:
    void setupTable();
    QTabWidget* buildStackTabs();
    void setUserNote(const SnapshotPtr& snapshot);
    static QString chainName(const QModelIndex& row);
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
    HolderTab* holder_tab_;
    ChainView* chains_;
    QTabWidget* stacks_;
    int chains_tab_ = -1;
    QLabel* user_note_;
    std::optional<LockKey> selected_key_;  // kept across live reloads
};

}  // namespace lockscope::gui
