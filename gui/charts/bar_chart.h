// Bars by category: vertical for the wait-time histogram, horizontal for
// the owner-state breakdown and the diff's largest changes. Bars of one
// group share a colour and a legend entry, so a verdict shows as both.
#pragma once

#include "charts/chart_base.h"
#include "charts/chart_data.h"

#include <memory>

namespace lockscope::gui::charts {

class BarChart : public ChartWidget {
    Q_OBJECT
public:
    BarChart(const QString& title, Qt::Orientation orientation, QWidget* parent = nullptr);
    ~BarChart() override;

    void setAxisTitles(const QString& category_title, const QString& value_title, Unit unit);
    void setBars(const QList<Bar>& bars);  // in display order (top or left first)

    bool hasData() const override;

private:
    struct Private;
    std::unique_ptr<Private> d;
};

}  // namespace lockscope::gui::charts
