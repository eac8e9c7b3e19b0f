#include "charts/time_series_chart.h"

#include "charts/chart_style.h"
#include "models/display.h"

#include <QLabel>
#include <QMouseEvent>
#include <QtCharts/QChartView>
#include <QtCharts/QLineSeries>
#include <QtCharts/QValueAxis>

#include <algorithm>
#include <cmath>

namespace lockscope::gui::charts {

// The chart view; paints the shared cursor and its value box on top.
class TimeSeriesChart::View : public QChartView {
public:
    View(QChart* chart, TimeSeriesChart* owner) : QChartView(chart), owner_(owner)
    {
        setRenderHint(QPainter::Antialiasing);
        setMouseTracking(true);
    }

protected:
    void mouseMoveEvent(QMouseEvent* event) override;
    void leaveEvent(QEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void drawForeground(QPainter* painter, const QRectF& rect) override;

private:
    TimeSeriesChart* owner_;
};

struct TimeSeriesChart::Private {
    QChart* chart = nullptr;
    View* view = nullptr;
    QLabel* empty = nullptr;
    QValueAxis* x_axis = nullptr;
    QValueAxis* y_axis = nullptr;
    QString y_title;
    Unit unit = Unit::Count;
    double y_scale = 1;  // plotted = raw × scale (percent, thousands, millions)
    QList<Line> lines;   // raw values, for the hover box
    QList<double> run_starts;
    double cursor_x = std::nan("");

    QString format(double raw) const
    {
        switch (unit) {
            case Unit::Fraction:
                return display::percent(raw);
            case Unit::PerSecond:
                return display::rate(raw);
            case Unit::Count:
                return display::count(uint64_t(std::llround(std::max(raw, 0.0))));
        }
        return QString::number(raw);
    }
};

namespace {

// The value of a line at time x: the interval ending at or after x.
const QPointF* point_at(const QList<QPointF>& points, double x)
{
    auto it = std::lower_bound(points.begin(), points.end(), x, [](const QPointF& p, double v) { return p.x() < v; });
    if (it == points.end())
        return points.isEmpty() ? nullptr : &points.back();
    return &*it;
}

}  // namespace

void TimeSeriesChart::View::mouseMoveEvent(QMouseEvent* event)
{
    QChartView::mouseMoveEvent(event);
    const QPointF scene = mapToScene(event->position().toPoint());
    const QPointF chart_pos = chart()->mapFromScene(scene);
    if (!chart()->plotArea().contains(chart_pos) || owner_->d->lines.isEmpty()) {
        emit owner_->left();
        return;
    }
    emit owner_->hovered(chart()->mapToValue(chart_pos).x());
}

void TimeSeriesChart::View::resizeEvent(QResizeEvent* event)
{
    QChartView::resizeEvent(event);
    owner_->d->empty->setGeometry(rect());
}

void TimeSeriesChart::View::leaveEvent(QEvent* event)
{
    QChartView::leaveEvent(event);
    emit owner_->left();
}

void TimeSeriesChart::View::drawForeground(QPainter* painter, const QRectF& rect)
{
    QChartView::drawForeground(painter, rect);
    const Private& p = *owner_->d;
    const QRectF area = chart()->plotArea();
    painter->save();
    // Run boundaries: where a repeat starts, the workload restarted.
    painter->setPen(QPen(QColor(0x90, 0x90, 0x90), 1, Qt::DashLine));
    for (int i = 1; i < p.run_starts.size(); ++i) {
        const double x = chart()->mapToPosition(QPointF(p.run_starts[i], 0)).x();
        if (x > area.left() && x < area.right())
            painter->drawLine(QPointF(x, area.top()), QPointF(x, area.bottom()));
    }
    if (std::isnan(p.cursor_x) || p.lines.isEmpty()) {
        painter->restore();
        return;
    }
    const double cx = chart()->mapToPosition(QPointF(p.cursor_x, 0)).x();
    if (cx < area.left() || cx > area.right()) {
        painter->restore();
        return;
    }
    painter->setPen(QPen(QColor(0x30, 0x30, 0x30), 1));
    painter->drawLine(QPointF(cx, area.top()), QPointF(cx, area.bottom()));

    QStringList rows;
    QList<QColor> colours;
    double shown_x = p.cursor_x;
    for (const Line& line : p.lines) {
        if (const QPointF* pt = point_at(line.points, p.cursor_x)) {
            rows << QStringLiteral("%1: %2").arg(line.name, p.format(pt->y()));
            colours << line.colour;
            shown_x = pt->x();
        }
    }
    const QString header = QStringLiteral("t = %1 s").arg(shown_x, 0, 'f', 1);
    QFont font = painter->font();
    font.setPointSizeF(8.5);
    painter->setFont(font);
    const QFontMetricsF fm(font);
    double width = fm.horizontalAdvance(header);
    for (const QString& r : rows)
        width = std::max(width, fm.horizontalAdvance(r) + 14);
    const double line_h = fm.height();
    QRectF box(0, area.top() + 4, width + 12, line_h * (rows.size() + 1) + 8);
    // Keep the box inside the plot, on the side away from the cursor.
    box.moveLeft(cx + 8 + box.width() <= area.right() ? cx + 8 : cx - 8 - box.width());
    painter->setPen(QColor(0xa0, 0xa0, 0xa0));
    painter->setBrush(QColor(255, 255, 255, 235));
    painter->drawRect(box);
    painter->setPen(Qt::black);
    double y = box.top() + 4;
    painter->drawText(QRectF(box.left() + 6, y, width, line_h), Qt::AlignLeft, header);
    for (int i = 0; i < rows.size(); ++i) {
        y += line_h;
        painter->fillRect(QRectF(box.left() + 6, y + line_h / 2 - 4, 8, 8), colours[i]);
        painter->drawText(QRectF(box.left() + 20, y, width, line_h), Qt::AlignLeft, rows[i]);
    }
    painter->restore();
}

TimeSeriesChart::TimeSeriesChart(const QString& title, QWidget* parent)
    : ChartWidget(parent), d(std::make_unique<Private>())
{
    d->chart = new QChart;
    style_chart(d->chart, title);
    d->x_axis = new QValueAxis;
    d->y_axis = new QValueAxis;
    style_axis(d->x_axis, tr("time since recording start (s)"));
    style_axis(d->y_axis, QString());
    d->chart->addAxis(d->x_axis, Qt::AlignBottom);
    d->chart->addAxis(d->y_axis, Qt::AlignLeft);
    d->view = new View(d->chart, this);
    d->empty = empty_label(d->view);
    fill_with_view(this, d->view, 160);
    setChartView(d->view, d->empty);
}

TimeSeriesChart::~TimeSeriesChart() = default;

void TimeSeriesChart::setYAxis(const QString& y_title, Unit unit)
{
    d->y_title = y_title;
    d->unit = unit;
}

void TimeSeriesChart::setLines(const QList<Line>& lines, double x_max)
{
    d->lines = lines;
    for (QAbstractSeries* s : d->chart->series())
        d->chart->removeSeries(s), delete s;

    double y_max = 0;
    for (const Line& line : lines)
        for (const QPointF& pt : line.points)
            if (std::isfinite(pt.y()))
                y_max = std::max(y_max, pt.y());
    QString suffix;
    d->y_scale = 1;
    if (d->unit == Unit::Fraction) {
        d->y_scale = 100;
        suffix = QStringLiteral(" (%)");
    } else if (y_max >= 1e6) {
        d->y_scale = 1e-6;
        suffix = QStringLiteral(" (×10⁶)");
    } else if (y_max >= 1e4) {
        d->y_scale = 1e-3;
        suffix = QStringLiteral(" (×1000)");
    }
    d->y_axis->setTitleText(d->y_title + suffix);
    // The axis follows the data, so a rate of 0.001% reads as a line with
    // its own scale on the axis labels, not as a flat zero; a flat-zero line
    // still gets a readable 0..1 axis (Qt Charts misbehaves on vanishing
    // ranges), and percentages never go past 100.
    const double top = y_max * d->y_scale * 1.05;
    nice_value_axis(d->y_axis, !(top > 0) ? 1.0 : d->unit == Unit::Fraction ? std::clamp(top, 1e-4, 100.0) : top, 5);
    // The time axis ends where the recording ends, ticks on round seconds.
    const double x_top = std::max(x_max, 1.0);
    set_dynamic_ticks(d->x_axis, 0, x_top, nice_ceil(x_top / 8));
    d->x_axis->setLabelFormat("%.0f");

    for (const Line& line : lines) {
        auto* series = new QLineSeries;
        series->setName(line.name);
        QList<QPointF> scaled;
        scaled.reserve(line.points.size());
        for (const QPointF& pt : line.points)
            scaled.append(QPointF(pt.x(), pt.y() * d->y_scale));
        series->replace(scaled);
        QPen pen(line.colour, 1.8);
        series->setPen(pen);
        d->chart->addSeries(series);
        series->attachAxis(d->x_axis);
        series->attachAxis(d->y_axis);
    }
    // One line needs no legend: the title and axis say what it is.
    d->chart->legend()->setVisible(lines.size() > 1);
    d->empty->setVisible(lines.isEmpty());
    if (lines.isEmpty())
        d->empty->setGeometry(d->view->rect());
    d->view->viewport()->update();
}

void TimeSeriesChart::setRunStarts(const QList<double>& starts_s)
{
    d->run_starts = starts_s;
    d->view->viewport()->update();
}

bool TimeSeriesChart::hasData() const
{
    return !d->lines.isEmpty();
}

void TimeSeriesChart::setCursorX(double x_s)
{
    d->cursor_x = x_s;
    d->view->viewport()->update();
}

void TimeSeriesChart::clearCursor()
{
    d->cursor_x = std::nan("");
    d->view->viewport()->update();
}

}  // namespace lockscope::gui::charts
