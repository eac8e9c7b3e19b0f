#include "views/chart_feed.h"

#include <algorithm>

namespace lockscope::gui {

charts::Line to_line(const Timeline& timeline, const Series& series, const QColor& colour)
{
    charts::Line line;
    line.name = QString::fromStdString(series.name);
    line.colour = colour;
    // A value holds over its whole interval: a step from the interval's
    // start to its end, so the first interval starts the line at its own
    // start and a short one (a run's final flush) is as narrow as it lasted.
    // Only an interval without time has no rate to draw.
    const size_t n = std::min({timeline.x_s.size(), timeline.start_s.size(), series.y.size()});
    line.points.reserve(qsizetype(2 * n));
    for (size_t i = 0; i < n; ++i) {
        if (!(timeline.x_s[i] > timeline.start_s[i]))
            continue;
        line.points.append(QPointF(timeline.start_s[i], series.y[i]));
        line.points.append(QPointF(timeline.x_s[i], series.y[i]));
    }
    return line;
}

QList<double> run_starts(const Timeline& timeline)
{
    return QList<double>(timeline.run_starts_s.begin(), timeline.run_starts_s.end());
}

}  // namespace lockscope::gui
