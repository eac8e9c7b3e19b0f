// Overview: key figures and the recording's time series on one time axis.
#pragma once

#include "session/snapshot.h"

#include <QList>
#include <QWidget>

class QLabel;

namespace lockscope::gui {

class KeyFiguresModel;
namespace charts {
class TimeSeriesChart;
}

class OverviewPage : public QWidget {
    Q_OBJECT
public:
    explicit OverviewPage(QWidget* parent = nullptr);
    void setSnapshot(const SnapshotPtr& snapshot);
    KeyFiguresModel* keyFigures() const { return figures_; }

private:
    KeyFiguresModel* figures_;
    QLabel* header_;
    charts::TimeSeriesChart* spin_failure_;
    charts::TimeSeriesChart* idle_;
    charts::TimeSeriesChart* contentions_;
    charts::TimeSeriesChart* throughput_;
};

// "pipe4.lockscope — host vm, kernel 6.1.0, 4 CPUs · 10.0 s in 1 run · recording"
QString session_header(const SessionSnapshot& snapshot);

}  // namespace lockscope::gui
