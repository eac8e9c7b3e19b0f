#include "charts/chart_base.h"

#include "charts/chart_style.h"

#include <QLabel>

namespace lockscope::gui::charts {

QRect ChartWidget::plotRect() const
{
    return plot_rect(view_, this);
}

void ChartWidget::setEmptyText(const QString& text)
{
    empty_->setText(text);
}

void ChartWidget::setChartView(QChartView* view, QLabel* empty)
{
    view_ = view;
    empty_ = empty;
}

}  // namespace lockscope::gui::charts
