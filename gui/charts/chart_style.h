// Look shared by every chart (private to gui/charts: includes Qt Charts).
#pragma once

#include <QtCharts/QChart>
#include <QtCharts/QChartView>
#include <QtCharts/QValueAxis>

class QLabel;

namespace lockscope::gui::charts {

void style_chart(QChart* chart, const QString& title);
void style_axis(QAbstractAxis* axis, const QString& title);

// The grey message a chart shows over `view` in place of a plot without
// data; hidden until the chart has none.
QLabel* empty_label(QChartView* view);
// `widget` holds only `view`, edge to edge, at least `min_height` tall.
void fill_with_view(QWidget* widget, QChartView* view, int min_height);
// The plot area of `view`'s chart in `widget`'s coordinates.
QRect plot_rect(const QChartView* view, const QWidget* widget);

// 1, 2 or 5 × 10^k at or above `v` (v > 0): axis ends and tick steps that
// read as round numbers.
double nice_ceil(double v);
QString label_format(double step);  // printf format for tick labels `step` apart
// Sets range and tick step safely (see the .cpp for why).
void set_dynamic_ticks(QValueAxis* axis, double min, double max, double step);
// Range [0, top] with a dynamic tick step that lands on round numbers.
void nice_value_axis(QValueAxis* axis, double max, int target_ticks);

}  // namespace lockscope::gui::charts
