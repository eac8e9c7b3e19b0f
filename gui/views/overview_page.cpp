#include "views/overview_page.h"

#include "charts/time_series_chart.h"
#include "models/key_figures_model.h"
#include "views/chart_feed.h"
#include "views/key_figures_view.h"
#include "views/panes.h"

#include <QFileInfo>
#include <QGridLayout>
#include <QLabel>
#include <QVBoxLayout>

namespace lockscope::gui {

QString session_header(const SessionSnapshot& snap)
{
    const Session& s = *snap.session;
    auto meta = [&](const char* key) { return QString::fromStdString(s.meta_value(key)); };
    QStringList parts;
    parts << QStringLiteral("<b>%1</b>").arg(QFileInfo(snap.path).fileName().toHtmlEscaped());
    QString machine = meta("host");
    if (!meta("kernel_release").isEmpty())
        machine += QStringLiteral(", kernel %1").arg(meta("kernel_release"));
    if (!meta("online_cpus").isEmpty())
        machine += QStringLiteral(", %1 CPUs").arg(meta("online_cpus"));
    parts << machine.toHtmlEscaped();
    QString workload = meta("workload");
    if (!workload.isEmpty()) {
        if (!meta("workload.threads").isEmpty())
            workload += QStringLiteral(" × %1 threads").arg(meta("workload.threads"));
        parts << QStringLiteral("workload %1").arg(workload.toHtmlEscaped());
    }
    const ReportTotals& t = snap.report.totals;
    parts << QStringLiteral("%1 s in %2 run%3, %4 intervals")
                 .arg(t.duration_s, 0, 'f', 1)
                 .arg(t.runs)
                 .arg(t.runs == 1 ? "" : "s")
                 .arg(t.intervals);
    if (snap.recording)
        parts << QStringLiteral("<span style='color:#c62828'><b>● recording, following live</b></span>");
    return parts.join(QStringLiteral(" · "));
}

OverviewPage::OverviewPage(QWidget* parent) : QWidget(parent)
{
    figures_ = new KeyFiguresModel(this);
    header_ = new QLabel(this);
    header_->setTextFormat(Qt::RichText);
    auto* cards = new KeyFiguresView(this);
    cards->setModel(figures_);

    using charts::TimeSeriesChart;
    using charts::Unit;
    spin_failure_ = new TimeSeriesChart(tr("Spin-failure rate (spins that ended queued)"), this);
    spin_failure_->setYAxis(tr("failures / attempts"), Unit::Fraction);
    spin_failure_->setEmptyText(tr("No optimistic spinning recorded"));
    idle_ = new TimeSeriesChart(tr("CPU idle"), this);
    idle_->setYAxis(tr("idle share of all CPUs"), Unit::Fraction);
    contentions_ = new TimeSeriesChart(tr("Contentions per second by lock kind"), this);
    contentions_->setYAxis(tr("contentions/s"), Unit::PerSecond);
    contentions_->setEmptyText(tr("No contention recorded"));
    throughput_ = new TimeSeriesChart(tr("Workload throughput"), this);
    throughput_->setYAxis(tr("operations/s"), Unit::PerSecond);
    throughput_->setEmptyText(tr("No workload ran in this session"));

    const QList<TimeSeriesChart*> all = {spin_failure_, idle_, contentions_, throughput_};
    // One cursor for all four: hovering any chart shows every value at that time.
    for (TimeSeriesChart* source : all) {
        for (TimeSeriesChart* target : all) {
            connect(source, &TimeSeriesChart::hovered, target, &TimeSeriesChart::setCursorX);
            connect(source, &TimeSeriesChart::left, target, &TimeSeriesChart::clearCursor);
        }
    }

    auto* grid = new QGridLayout;
    grid->setSpacing(6);
    grid->addWidget(spin_failure_, 0, 0);
    grid->addWidget(idle_, 0, 1);
    grid->addWidget(contentions_, 1, 0);
    grid->addWidget(throughput_, 1, 1);
    auto* layout = page_layout(this);
    layout->addWidget(header_);
    layout->addWidget(cards);
    layout->addLayout(grid, 1);
}

void OverviewPage::setSnapshot(const SnapshotPtr& snap)
{
    figures_->setSnapshot(snap);
    if (!snap)
        return;
    header_->setText(session_header(*snap));
    const Timeline& t = snap->timeline;
    const double x_max = t.end_s();
    const bool spun = snap->report.totals.counters.spin_attempts > 0;
    spin_failure_->setLines(
        spun ? QList<charts::Line>{to_line(t, snap->spin_failure_rate, charts::palette(1))} : QList<charts::Line>{},
        x_max);
    idle_->setLines({to_line(t, snap->idle_fraction, charts::palette(0))}, x_max);
    QList<charts::Line> kinds;
    for (size_t i = 0; i < snap->contentions_by_kind.size(); ++i)
        kinds << to_line(t, snap->contentions_by_kind[i], charts::palette(int(i)));
    contentions_->setLines(kinds, x_max);
    throughput_->setLines(snap->ops_per_s.y.empty()
                              ? QList<charts::Line>{}
                              : QList<charts::Line>{to_line(t, snap->ops_per_s, charts::palette(2))},
                          x_max);
    for (auto* chart : {spin_failure_, idle_, contentions_, throughput_})
        chart->setRunStarts(run_starts(t));
}

}  // namespace lockscope::gui
