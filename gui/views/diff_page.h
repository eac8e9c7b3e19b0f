// Diff: two sessions compared by the core diff engine. Metadata and config
// differences, totals, per-lock deltas with intervals and verdicts, and a
// chart of the largest changes.
#pragma once

#include "session/diff_loader.h"

#include <QWidget>

class QLabel;
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
    void setDiff(const DiffPtr& diff);
    void setError(const QString& message);

    DiffLocksModel* locks() const { return locks_; }
    DiffTotalsModel* totals() const { return totals_; }
    MetaDiffModel* metadata() const { return meta_; }
    QTableView* locksView() const { return locks_view_; }

signals:
    void compareRequested(const QString& a, const QString& b);

private:
    void choose(bool a);

    DiffTotalsModel* totals_;
    DiffLocksModel* locks_;
    MetaDiffModel* meta_;
    QSortFilterProxyModel* locks_sorted_;
    QLabel* paths_;
    QLabel* notes_;
    QTableView* totals_view_;
    QTableView* locks_view_;
    QTableView* meta_view_;
    charts::BarChart* chart_;
    QString path_a_, path_b_;
};

}  // namespace lockscope::gui
