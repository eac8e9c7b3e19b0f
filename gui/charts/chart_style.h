// Look shared by every chart (private to gui/charts: includes Qt Charts).
#pragma once

#include <QtCharts/QChart>
#include <QtCharts/QValueAxis>

namespace lockscope::gui::charts {

void style_chart(QChart* chart, const QString& title);
void style_axis(QAbstractAxis* axis, const QString& title);

// 1, 2 or 5 × 10^k at or above `v` (v > 0): axis ends and tick steps that
// read as round numbers.
double nice_ceil(double v);
QString label_format(double step);  // printf format for tick labels `step` apart
// Sets range and tick step safely (see the .cpp for why).
void set_dynamic_ticks(QValueAxis* axis, double min, double max, double step);
// Range [0, top] with a dynamic tick step that lands on round numbers.
void nice_value_axis(QValueAxis* axis, double max, int target_ticks);

}  // namespace lockscope::gui::charts
