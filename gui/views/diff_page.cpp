#include "views/diff_page.h"

#include "charts/bar_chart.h"
#include "models/diff_models.h"
#include "models/display.h"
#include "views/panes.h"

#include <QDateTime>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace lockscope::gui {
namespace {

QTableView* table(QAbstractItemModel* model, QWidget* parent)
{
    auto* view = new QTableView(parent);
    view->setModel(model);
    view->setSelectionBehavior(QAbstractItemView::SelectRows);
    view->setAlternatingRowColors(true);
    view->setWordWrap(false);
    view->verticalHeader()->hide();
    view->verticalHeader()->setDefaultSectionSize(view->fontMetrics().height() + 6);
    view->horizontalHeader()->setStretchLastSection(true);
    view->setTabKeyNavigation(false);
    return view;
}

QLabel* heading(const QString& text, QWidget* parent)
{
    auto* label = new QLabel(text, parent);
    QFont f = label->font();
    f.setBold(true);
    label->setFont(f);
    return label;
}

// "5m ending 2026-12-01T14:00:00Z": the window as the CLI spells it.
QString window_text(const fleet::FleetOptions& o)
{
    const auto w = qint64(o.window_s);
    const QString length = w % 86400 == 0  ? QStringLiteral("%1d").arg(w / 86400)
                           : w % 3600 == 0 ? QStringLiteral("%1h").arg(w / 3600)
                           : w % 60 == 0   ? QStringLiteral("%1m").arg(w / 60)
                                           : QStringLiteral("%1s").arg(w);
    return QObject::tr("%1 ending %2")
        .arg(length, QDateTime::fromSecsSinceEpoch(qint64(o.end), Qt::UTC).toString(Qt::ISODate));
}

QWidget* titled(const QString& title, QWidget* body, QWidget* parent)
{
    auto* box = new QWidget(parent);
    auto* layout = new QVBoxLayout(box);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addWidget(heading(title, box));
    layout->addWidget(body, 1);
    return box;
}

}  // namespace

DiffPage::DiffPage(QWidget* parent) : QWidget(parent)
{
    totals_ = new DiffTotalsModel(this);
    locks_ = new DiffLocksModel(this);
    meta_ = new MetaDiffModel(this);
    locks_sorted_ = new QSortFilterProxyModel(this);
    locks_sorted_->setSourceModel(locks_);
    locks_sorted_->setSortRole(DiffLocksModel::SortRole);

    paths_ = new QLabel(tr("Choose two sessions to compare: A (baseline) and B."), this);
    paths_->setTextFormat(Qt::RichText);
    // Fleet selectors and URLs run long: wrap rather than widen the window.
    paths_->setWordWrap(true);
    auto* choose_a = new QPushButton(tr("Session &A…"), this);
    auto* choose_b = new QPushButton(tr("Session &B…"), this);
    connect(choose_a, &QPushButton::clicked, this, [this] { choose(true); });
    connect(choose_b, &QPushButton::clicked, this, [this] { choose(false); });
    notes_ = new QLabel(this);
    notes_->setWordWrap(true);
    notes_->setTextFormat(Qt::RichText);
    busy_ = new QProgressBar(this);
    busy_->setRange(0, 0);  // a fleet query gives no progress to count: just busy
    busy_->setMaximumWidth(140);
    busy_->setTextVisible(false);
    busy_->hide();
    cancel_ = new QPushButton(tr("&Cancel"), this);
    cancel_->hide();
    connect(cancel_, &QPushButton::clicked, this, &DiffPage::cancelRequested);

    totals_view_ = table(totals_, this);
    meta_view_ = table(meta_, this);
    locks_view_ = table(locks_sorted_, this);
    locks_view_->setSortingEnabled(true);
    locks_view_->sortByColumn(DiffLocksModel::Effect, Qt::DescendingOrder);
    // The values carry their unit ("426 ns/op"), so the metric column would
    // only push the verdict off a 1280 px screen; its tooltip stays on A/B.
    locks_view_->setColumnHidden(DiffLocksModel::Metric, true);
    chart_ = new charts::BarChart(tr("Largest changes, B vs A"), Qt::Horizontal, this);
    chart_->setAxisTitles(QString(), tr("change"), charts::Unit::Fraction);
    chart_->setEmptyText(tr("Open two sessions to compare"));

    auto* header = new QHBoxLayout;
    header->addWidget(paths_, 1);
    header->addWidget(busy_);
    header->addWidget(cancel_);
    header->addWidget(choose_a);
    header->addWidget(choose_b);

    // Sizes, as stretch factors do not apply to the first layout.
    auto* upper = split_panes(Qt::Horizontal,
                              {titled(tr("Totals"), totals_view_, this),
                               titled(tr("Kernel, config and setup differences"), meta_view_, this)},
                              this, {760, 500});
    auto* lower =
        split_panes(Qt::Horizontal, {titled(tr("Locks, by effect size"), locks_view_, this), chart_}, this, {850, 410});
    auto* split = split_panes(Qt::Vertical, {upper, lower}, this, {230, 470});

    auto* layout = page_layout(this);
    layout->addLayout(header);
    layout->addWidget(notes_);
    layout->addWidget(split, 1);
}

void DiffPage::choose(bool a)
{
    const QString path = QFileDialog::getOpenFileName(this, a ? tr("Session A (baseline)") : tr("Session B"), QString(),
                                                      tr("lockscope sessions (*.lockscope *.db);;All files (*)"));
    if (path.isEmpty())
        return;
    (a ? path_a_ : path_b_) = path;
    setPaths(path_a_, path_b_);
    if (!path_a_.isEmpty() && !path_b_.isEmpty())
        emit compareRequested(path_a_, path_b_);
}

void DiffPage::setPaths(const QString& a, const QString& b)
{
    path_a_ = a;
    path_b_ = b;
    auto name = [](const QString& p) {
        return p.isEmpty() ? QStringLiteral("<i>not chosen</i>") : QFileInfo(p).fileName().toHtmlEscaped();
    };
    paths_->setText(tr("<b>A</b> (baseline): %1 &nbsp;&nbsp; <b>B</b>: %2").arg(name(a), name(b)));
}

void DiffPage::setFleet(const fleet::FleetOptions& o)
{
    path_a_.clear();
    path_b_.clear();
    const QString over = tr("over %1 from %2").arg(window_text(o), QString::fromStdString(o.url)).toHtmlEscaped();
    if (!o.by.empty()) {
        paths_->setText(tr("The two largest groups of hosts by <b>%1</b> (the lower value as A) &nbsp;&nbsp; %2")
                            .arg(QString::fromStdString(o.by).toHtmlEscaped(), over));
        return;
    }
    paths_->setText(tr("<b>A</b> (baseline): %1 &nbsp;&nbsp; <b>B</b>: %2 &nbsp;&nbsp; %3")
                        .arg(QString::fromStdString(o.selector_a).toHtmlEscaped(),
                             QString::fromStdString(o.selector_b).toHtmlEscaped(), over));
}

void DiffPage::setBusy(bool busy, const QString& what)
{
    busy_->setVisible(busy);
    cancel_->setVisible(busy);
    if (busy) {
        setDiff(nullptr);  // no stale tables under a new question
        chart_->setEmptyText(tr("Comparing…"));
        notes_->setText(what.toHtmlEscaped());
    } else {
        chart_->setEmptyText(tr("Nothing compared"));  // until a diff brings bars
    }
}

void DiffPage::setError(const QString& message)
{
    setBusy(false);
    notes_->setText(
        QStringLiteral("<span style='color:#c62828'><b>Cannot compare:</b> %1</span>").arg(message.toHtmlEscaped()));
}

QString DiffPage::summary(const DiffResult& d) const
{
    const QString method = tr("Welch t-test with the %1 as samples: %2 vs %3 %1")
                               .arg(d.by_hosts ? tr("hosts") : tr("runs"))
                               .arg(d.runs_a)
                               .arg(d.runs_b);
    QStringList lines;
    lines << method + tr(". α = %1 for the whole diff (all %2 p-values adjusted together); nothing below %3% is "
                         "called; colour repeats the text.")
                          .arg(d.alpha)
                          .arg(d.hypotheses)
                          .arg(100 * d.min_effect);
    for (const std::string& w : d.warnings)
        lines
            << QStringLiteral("<span style='color:#c62828'>⚠ %1</span>").arg(QString::fromStdString(w).toHtmlEscaped());
    return lines.join(QStringLiteral("<br>"));
}

void DiffPage::setDiff(const DiffPtr& diff)
{
    totals_->setDiff(diff);
    locks_->setDiff(diff);
    meta_->setDiff(diff);
    if (!diff) {
        chart_->setBars({});
        return;
    }
    setBusy(false);
    const DiffResult& d = diff->result;
    if (diff->fleet) {
        // The groups as the engine resolved them (--by names its values),
        // each with the hosts it found.
        paths_->setText(tr("<b>A</b> (baseline): %1 — <b>%2 hosts</b><br><b>B</b>: %3 — <b>%4 hosts</b>"
                           "&nbsp;&nbsp; %5")
                            .arg(QString::fromStdString(d.label_a).toHtmlEscaped())
                            .arg(d.runs_a)
                            .arg(QString::fromStdString(d.label_b).toHtmlEscaped())
                            .arg(d.runs_b)
                            .arg(tr("over %1 from %2")
                                     .arg(window_text(*diff->fleet), QString::fromStdString(diff->fleet->url))
                                     .toHtmlEscaped()));
    } else {
        setPaths(diff->path_a, diff->path_b);
    }
    notes_->setText(summary(d));

    for (QTableView* v : {totals_view_, meta_view_, locks_view_})
        v->resizeColumnsToContents();
    if (locks_view_->columnWidth(DiffLocksModel::Lock) > 220)
        locks_view_->setColumnWidth(DiffLocksModel::Lock, 220);
    chartLargest(d);
}

// The chart: the ten largest effects, as relative change, one colour per verdict.
void DiffPage::chartLargest(const DiffResult& d)
{
    std::vector<const LockDiff*> top;
    for (const LockDiff& l : d.locks)
        if (!l.metrics.empty() && std::isfinite(l.metrics.front().test.relative))
            top.push_back(&l);
    std::stable_sort(top.begin(), top.end(),
                     [](const LockDiff* a, const LockDiff* b) { return a->effect > b->effect; });
    if (top.size() > 10)
        top.resize(10);
    QList<charts::Bar> bars;
    for (const LockDiff* l : top) {
        const MetricDiff& m = l->metrics.front();
        // Kernel lock names run long; the table beside the chart has them whole.
        QString label = QString::fromStdString(l->name);
        if (label.size() > 24)
            label = label.left(23) + QStringLiteral("…");
        if (!l->mode.empty())
            label += QStringLiteral(" (%1)").arg(QString::fromStdString(l->mode));
        bars << charts::Bar{label, m.test.relative, display::verdict_text(m.verdict),
                            display::verdict_colour(m.verdict)};
    }
    chart_->setEmptyText(tr("No lock was seen on both sides"));
    if (!top.empty())
        chart_->setAxisTitles(QString(), tr("change in %1").arg(display::metric_label(top.front()->metrics.front())),
                              charts::Unit::Fraction);
    chart_->setBars(bars);
}

}  // namespace lockscope::gui
