#include "views/chart_feed.h"

namespace lockscope::gui {

charts::Line to_line(const Timeline& timeline, const Series& series, const QColor& colour)
{
    charts::Line line;
    line.name = QString::fromStdString(series.name);
    line.colour = colour;
    const size_t n = std::min(timeline.x_s.size(), series.y.size());
    line.points.reserve(qsizetype(n));
    for (size_t i = 0; i < n; ++i)
        if (i >= timeline.partial.size() || !timeline.partial[i])
            line.points.append(QPointF(timeline.x_s[i], series.y[i]));
    return line;
}

QList<double> run_starts(const Timeline& timeline)
{
    return QList<double>(timeline.run_starts_s.begin(), timeline.run_starts_s.end());
}

}  // namespace lockscope::gui
