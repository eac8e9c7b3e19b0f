// Snapshot series to chart lines: the only place where views translate
// value snapshots into the charts' plain inputs.
#pragma once

#include "charts/chart_data.h"
#include "session/snapshot.h"

#include <QList>

namespace lockscope::gui {

charts::Line to_line(const Timeline& timeline, const Series& series, const QColor& colour);
QList<double> run_starts(const Timeline& timeline);

}  // namespace lockscope::gui
