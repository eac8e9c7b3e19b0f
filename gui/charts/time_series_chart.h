// Lines over the recording's time axis with a hover cursor. Charts of one
// page share the cursor: hovering one shows the values of all at that time.
#pragma once

#include "charts/chart_base.h"
#include "charts/chart_data.h"

#include <memory>

namespace lockscope::gui::charts {

class TimeSeriesChart : public ChartWidget {
    Q_OBJECT
public:
    explicit TimeSeriesChart(const QString& title, QWidget* parent = nullptr);
    ~TimeSeriesChart() override;

    // `y_title` names the quantity ("spin-failure rate"); the unit is added.
    void setYAxis(const QString& y_title, Unit unit);
    void setLines(const QList<Line>& lines, double x_max);
    void setRunStarts(const QList<double>& starts_s);  // faint markers between runs

    bool hasData() const override;

public slots:
    void setCursorX(double x_s);
    void clearCursor();

signals:
    void hovered(double x_s);
    void left();

private:
    class View;
    struct Private;
    std::unique_ptr<Private> d;
};

}  // namespace lockscope::gui::charts
