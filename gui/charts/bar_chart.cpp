#include "charts/bar_chart.h"

#include "charts/chart_style.h"
#include "models/display.h"

#include <QLabel>
#include <QToolTip>
#include <QCursor>
#include <QtCharts/QBarCategoryAxis>
#include <QtCharts/QBarSet>
#include <QtCharts/QChartView>
#include <QtCharts/QHorizontalStackedBarSeries>
#include <QtCharts/QStackedBarSeries>
#include <QtCharts/QValueAxis>

#include <algorithm>
#include <cmath>

namespace lockscope::gui::charts {

struct BarChart::Private {
    Qt::Orientation orientation;
    QChart* chart = nullptr;
    QChartView* view = nullptr;
    QLabel* empty = nullptr;
    QBarCategoryAxis* category_axis = nullptr;
    QValueAxis* value_axis = nullptr;
    QString category_title, value_title;
    Unit unit = Unit::Count;
    QList<Bar> bars;
};

namespace {

class EmptyAwareView : public QChartView {
public:
    EmptyAwareView(QChart* chart, QLabel** empty) : QChartView(chart), empty_(empty) {}

protected:
    void resizeEvent(QResizeEvent* event) override
    {
        QChartView::resizeEvent(event);
        if (*empty_)
            (*empty_)->setGeometry(rect());
    }

private:
    QLabel** empty_;
};

}  // namespace

BarChart::BarChart(const QString& title, Qt::Orientation orientation, QWidget* parent)
    : ChartWidget(parent), d(std::make_unique<Private>())
{
    d->orientation = orientation;
    d->chart = new QChart;
    style_chart(d->chart, title);
    // The axes live as long as the chart: Qt Charts keeps stale layout
    // space for axes removed at run time, so they are reconfigured instead.
    const bool horizontal = orientation == Qt::Horizontal;
    d->category_axis = new QBarCategoryAxis;
    d->value_axis = new QValueAxis;
    d->chart->addAxis(d->category_axis, horizontal ? Qt::AlignLeft : Qt::AlignBottom);
    d->chart->addAxis(d->value_axis, horizontal ? Qt::AlignBottom : Qt::AlignLeft);
    // Rotated histogram labels are short ("1.02 µs") but Qt elides them
    // against the horizontal space, which is wrong once they are rotated.
    d->category_axis->setTruncateLabels(horizontal);
    d->view = new EmptyAwareView(d->chart, &d->empty);
    d->view->setRenderHint(QPainter::Antialiasing);
    d->empty = empty_label(d->view);
    d->empty->setWordWrap(true);
    fill_with_view(this, d->view, 140);
    setChartView(d->view, d->empty);
}

BarChart::~BarChart() = default;

void BarChart::setAxisTitles(const QString& category_title, const QString& value_title, Unit unit)
{
    d->category_title = category_title;
    d->value_title = value_title;
    d->unit = unit;
}

void BarChart::setBars(const QList<Bar>& bars)
{
    d->bars = bars;
    d->chart->removeAllSeries();

    const bool horizontal = d->orientation == Qt::Horizontal;
    double largest = 0;
    for (const Bar& b : bars)
        largest = std::max(largest, std::fabs(b.value));
    // Percent for fractions; big counts in thousands, like the time series.
    const double scale = d->unit == Unit::Fraction ? 100 : largest >= 1e6 ? 1e-6 : largest >= 1e4 ? 1e-3 : 1;
    const QString suffix = d->unit == Unit::Fraction ? QStringLiteral(" (%)")
                           : scale == 1e-6           ? QStringLiteral(" (×10⁶)")
                           : scale == 1e-3           ? QStringLiteral(" (×1000)")
                                                     : QString();
    QStringList categories;
    QStringList groups;
    for (const Bar& b : bars) {
        // Qt Charts clips a long category label at the chart's edge: keep the
        // start and the "(kind)" end, the tooltip has it whole. Categories
        // must stay distinct, so a clash gets an invisible suffix.
        QString label = b.label.size() > 30 ? b.label.left(21) + QStringLiteral("…") + b.label.right(8) : b.label;
        while (categories.contains(label))
            label += QChar(0x200B);
        categories << label;
        if (!groups.contains(b.group))
            groups << b.group;
    }
    // Horizontal bar charts draw the first category at the bottom; reverse
    // so the list reads top-down in the given order.
    auto position = [&](int i) { return horizontal ? int(bars.size()) - 1 - i : i; };
    if (horizontal)
        std::reverse(categories.begin(), categories.end());

    QAbstractBarSeries* series = horizontal ? static_cast<QAbstractBarSeries*>(new QHorizontalStackedBarSeries)
                                            : static_cast<QAbstractBarSeries*>(new QStackedBarSeries);
    series->setBarWidth(0.75);
    double lo = 0, hi = 0;
    for (const QString& group : groups) {
        auto* set = new QBarSet(group);
        QList<qreal> values(bars.size(), 0.0);
        for (int i = 0; i < bars.size(); ++i) {
            if (bars[i].group != group)
                continue;
            const double v = bars[i].value * scale;
            values[position(i)] = v;
            lo = std::min(lo, v);
            hi = std::max(hi, v);
            set->setColor(bars[i].colour);
            set->setBorderColor(bars[i].colour.darker(120));
        }
        set->append(values);
        QObject::connect(set, &QBarSet::hovered, this, [this, group, horizontal](bool on, int index) {
            if (!on) {
                QToolTip::hideText();
                return;
            }
            const int i = horizontal ? int(d->bars.size()) - 1 - index : index;
            if (i < 0 || i >= d->bars.size() || d->bars[i].group != group)
                return;
            const Bar& b = d->bars[i];
            const QString value = d->unit == Unit::Fraction
                                      ? display::percent(b.value)
                                      : display::count(uint64_t(std::llround(std::max(b.value, 0.0))));
            QToolTip::showText(QCursor::pos(), QStringLiteral("%1\n%2: %3").arg(b.label, d->value_title, value));
        });
        series->append(set);
    }
    d->chart->addSeries(series);

    QBarCategoryAxis* category_axis = d->category_axis;
    category_axis->clear();
    category_axis->append(categories);
    style_axis(category_axis, d->category_title);
    QValueAxis* value_axis = d->value_axis;
    style_axis(value_axis, d->value_title + suffix);
    if (lo < 0) {
        // Changes in both directions: symmetric round ends keep 0 centred.
        const double m = nice_ceil(std::max(-lo, hi) * 1.05);
        const double step = nice_ceil(m / 3);
        set_dynamic_ticks(value_axis, -std::ceil(-lo * 1.05 / step) * step,
                          std::max(step, std::ceil(hi * 1.05 / step) * step), step);
        value_axis->setLabelFormat(label_format(step));
    } else {
        const double top = hi > 0 ? hi * 1.05 : 1.0;
        nice_value_axis(value_axis, d->unit == Unit::Fraction ? std::min(top, 100.0) : top, horizontal ? 5 : 4);
    }
    if (!horizontal) {
        category_axis->setLabelsAngle(bars.size() > 10 ? -60 : bars.size() > 6 ? -45 : 0);
    }
    series->attachAxis(category_axis);
    series->attachAxis(value_axis);
    d->chart->legend()->setVisible(groups.size() > 1);
    d->empty->setVisible(bars.isEmpty());
    d->empty->setGeometry(d->view->rect());
}

bool BarChart::hasData() const
{
    return !d->bars.isEmpty();
}

}  // namespace lockscope::gui::charts
