#include "charts/chart_style.h"

#include "charts/chart_data.h"

#include <QFont>
#include <QGraphicsLayout>
#include <QLabel>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace lockscope::gui::charts {

QColor palette(int index)
{
    static const QColor colours[] = {QColor(0x00, 0x72, 0xb2), QColor(0xd5, 0x5e, 0x00), QColor(0x00, 0x9e, 0x73),
                                     QColor(0xcc, 0x79, 0xa7), QColor(0xe6, 0x9f, 0x00), QColor(0x56, 0xb4, 0xe9),
                                     QColor(0x44, 0x44, 0x44), QColor(0xf0, 0xe4, 0x42)};
    return colours[std::abs(index) % int(std::size(colours))];
}

void style_chart(QChart* chart, const QString& title)
{
    chart->setTheme(QChart::ChartThemeLight);
    chart->setBackgroundRoundness(0);
    chart->setMargins(QMargins(2, 2, 2, 2));
    chart->layout()->setContentsMargins(0, 0, 0, 0);
    QFont f = chart->titleFont();
    f.setPointSizeF(10);
    f.setBold(true);
    chart->setTitleFont(f);
    chart->setTitle(title);
    chart->legend()->setAlignment(Qt::AlignTop);
    QFont lf = chart->legend()->font();
    lf.setPointSizeF(8.5);
    chart->legend()->setFont(lf);
    chart->setAnimationOptions(QChart::NoAnimation);  // live updates must not wobble
}

void style_axis(QAbstractAxis* axis, const QString& title)
{
    QFont f = axis->labelsFont();
    f.setPointSizeF(8.5);
    axis->setLabelsFont(f);
    QFont tf = axis->titleFont();
    tf.setPointSizeF(8.5);
    tf.setBold(false);
    axis->setTitleFont(tf);
    axis->setTitleText(title);
    axis->setGridLineColor(QColor(0xe0, 0xe0, 0xe0));
}

double nice_ceil(double v)
{
    if (!(v > 0) || !std::isfinite(v))
        return 1;
    const double magnitude = std::pow(10.0, std::floor(std::log10(v)));
    for (double step : {1.0, 2.0, 2.5, 5.0, 10.0})
        if (step * magnitude >= v * (1 - 1e-9))
            return step * magnitude;
    return 10 * magnitude;
}

QString label_format(double step)
{
    // As many decimals as the step needs: 0.0025 → "%.4f", so that
    // neighbouring labels never print the same number.
    int decimals = 0;
    while (decimals < 6 && std::fabs(step * std::pow(10, decimals) - std::round(step * std::pow(10, decimals))) > 1e-6)
        ++decimals;
    return QStringLiteral("%.%1f").arg(decimals);
}

void set_dynamic_ticks(QValueAxis* axis, double min, double max, double step)
{
    // Fixed ticks while range and step change: with dynamic ticks, an old
    // small step over a new large range lays out millions of tick items.
    axis->setTickType(QValueAxis::TicksFixed);
    axis->setRange(min, max);
    axis->setTickAnchor(0);
    axis->setTickInterval(step);
    axis->setTickType(QValueAxis::TicksDynamic);
}

void nice_value_axis(QValueAxis* axis, double max, int target_ticks)
{
    const double step = nice_ceil(std::max(max, 1e-9) / target_ticks);
    const double top = std::max(step, std::ceil(max / step - 1e-9) * step);
    set_dynamic_ticks(axis, 0, top, step);
    axis->setLabelFormat(label_format(step));
}

QLabel* empty_label(QChartView* view)
{
    auto* label = new QLabel(view);
    label->setAlignment(Qt::AlignCenter);
    label->setStyleSheet(QStringLiteral("color: #606060; background: transparent;"));
    label->hide();
    return label;
}

void fill_with_view(QWidget* widget, QChartView* view, int min_height)
{
    auto* layout = new QVBoxLayout(widget);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(view);
    widget->setMinimumHeight(min_height);
}

QRect plot_rect(const QChartView* view, const QWidget* widget)
{
    const QRectF area = view->chart()->plotArea();
    const QPoint top_left = view->mapFromScene(area.topLeft());
    const QPoint bottom_right = view->mapFromScene(area.bottomRight());
    return QRect(view->mapTo(widget, top_left), view->mapTo(widget, bottom_right));
}

}  // namespace lockscope::gui::charts
