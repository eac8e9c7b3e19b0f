// Diff: two sessions, or two groups of hosts in Prometheus, compared by the
// core diff engine. Metadata and config differences, totals, per-lock deltas
// with intervals and verdicts, and a chart of the largest changes.
#pragma once

#include "session/diff_loader.h"

#include <QWidget>

class QLabel;
class QProgressBar;
class QPushButton;
class QSortFilterProxyModel;
class QTableView;

namespace lockscope::gui {

class DiffLocksModel;
class DiffTotalsModel;
class MetaDiffModel;
namespace charts {
class BarChart;
}

class DiffPage : public QWidget {
    Q_OBJECT
public:
    explicit DiffPage(QWidget* parent = nullptr);

    void setPaths(const QString& a, const QString& b);
    // A fleet comparison asked for: the header names the groups and the window.
    void setFleet(const fleet::FleetOptions& options);
    void setDiff(const DiffPtr& diff);
    void setError(const QString& message);
    // While a comparison runs: a busy bar, `what` in the notes and a Cancel button.
    void setBusy(bool busy, const QString& what = {});

    QLabel* header() const { return paths_; }
    QLabel* notes() const { return notes_; }
    DiffLocksModel* locks() const { return locks_; }
    DiffTotalsModel* totals() const { return totals_; }
    MetaDiffModel* metadata() const { return meta_; }
    QTableView* locksView() const { return locks_view_; }

signals:
    void compareRequested(const QString& a, const QString& b);
    void cancelRequested();

private:
    void choose(bool a);
    QString summary(const DiffResult& d) const;
    void chartLargest(const DiffResult& d);

    DiffTotalsModel* totals_;
    DiffLocksModel* locks_;
    MetaDiffModel* meta_;
    QSortFilterProxyModel* locks_sorted_;
    QLabel* paths_;
    QLabel* notes_;
    QProgressBar* busy_;
    QPushButton* cancel_;
    QTableView* totals_view_;
    QTableView* locks_view_;
    QTableView* meta_view_;
    charts::BarChart* chart_;
    QString path_a_, path_b_;
};

}  // namespace lockscope::gui
