#include "views/locks_page.h"

#include "charts/bar_chart.h"
#include "charts/time_series_chart.h"
#include "models/display.h"
#include "models/histogram_model.h"
#include "models/instance_model.h"
#include "models/lock_filter_model.h"
#include "models/lock_table_model.h"
#include "models/owner_state_model.h"
#include "models/stack_model.h"
#include "session/lock_detail.h"
#include "views/chain_view.h"
#include "views/holder_tab.h"
#include "views/panes.h"
#include "views/chart_feed.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QItemSelectionModel>
#include <QLineEdit>
#include <QScrollArea>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QTreeView>
#include <QVBoxLayout>

namespace lockscope::gui {
namespace {

QTreeView* stack_view(StackModel* model, QWidget* parent)
{
    auto* view = new QTreeView(parent);
    view->setModel(model);
    view->setUniformRowHeights(true);
    view->setAlternatingRowColors(true);
    view->header()->setStretchLastSection(false);
    view->header()->setSectionResizeMode(StackModel::Frames, QHeaderView::Stretch);
    for (int c = StackModel::Samples; c < StackModel::ColumnCount; ++c)
        view->header()->setSectionResizeMode(c, QHeaderView::ResizeToContents);
    return view;
}

}  // namespace

LocksPage::LocksPage(QWidget* parent) : QWidget(parent)
{
    table_ = new LockTableModel(this);
    filter_ = new LockFilterModel(this);
    filter_->setSourceModel(table_);
    histogram_ = new HistogramModel(this);
    owner_ = new OwnerStateModel(this);
    waiters_ = new StackModel(this);
    wakers_ = new StackModel(this);
    holders_ = new StackModel(this);
    instances_ = new InstanceModel(this);

    filter_edit_ = new QLineEdit(this);
    filter_edit_->setPlaceholderText(tr("Filter by lock, kind, caller, name source or cgroup  (Ctrl+F)"));
    filter_edit_->setClearButtonEnabled(true);
    count_ = new QLabel(this);
    // What the user-lock rows leave out, or why a run recorded none.
    user_note_ = new QLabel(this);
    user_note_->setWordWrap(true);
    user_note_->hide();
    connect(filter_edit_, &QLineEdit::textChanged, this, [this](const QString& text) {
        filter_->setFilterText(text);
        updateCount();
    });

    setupTable();

    detail_title_ = new QLabel(tr("Select a lock to see its details"), this);
    QFont f = detail_title_->font();
    f.setBold(true);
    detail_title_->setFont(f);

    using charts::Unit;
    histogram_chart_ = new charts::BarChart(tr("Wait-time histogram (log2 buckets)"), Qt::Vertical, this);
    histogram_chart_->setAxisTitles(tr("wait time ≥"), tr("waits"), Unit::Count);
    histogram_chart_->setEmptyText(tr("No waits recorded"));
    series_chart_ = new charts::TimeSeriesChart(tr("This lock over time"), this);
    series_chart_->setYAxis(tr("events/s"), Unit::PerSecond);
    owner_chart_ = new charts::BarChart(tr("Owner when a spinner queued"), Qt::Horizontal, this);
    owner_chart_->setAxisTitles(QString(), tr("share of queueings"), Unit::Fraction);
    owner_chart_->setEmptyText(tr("No spinner queued on this lock\n(spinlocks do not record owner state)"));
    QTabWidget* stacks = buildStackTabs();

    auto* charts_left = split_panes(Qt::Vertical, {histogram_chart_, series_chart_}, this);
    auto* right = split_panes(Qt::Vertical, {owner_chart_, stacks}, this, {170, 280});
    // Sizes, as stretch factors do not apply to the first layout.
    auto* detail = split_panes(Qt::Horizontal, {charts_left, right}, this, {620, 640});

    auto* top = new QWidget(this);
    auto* top_layout = new QVBoxLayout(top);
    top_layout->setContentsMargins(0, 0, 0, 0);
    auto* filter_row = new QHBoxLayout;
    filter_row->addWidget(filter_edit_, 1);
    filter_row->addWidget(count_);
    top_layout->addLayout(filter_row);
    top_layout->addWidget(view_);
    top_layout->addWidget(user_note_);
    auto* bottom = new QWidget(this);
    auto* bottom_layout = new QVBoxLayout(bottom);
    bottom_layout->setContentsMargins(0, 0, 0, 0);
    bottom_layout->addWidget(detail_title_);
    bottom_layout->addWidget(detail, 1);

    page_layout(this)->addWidget(split_panes(Qt::Vertical, {top, bottom}, this, {250, 450}));
    setTabOrder(filter_edit_, view_);
}

// The lock table: sorted by total wait, one row selected at a time.
void LocksPage::setupTable()
{
    view_ = new QTableView(this);
    view_->setModel(filter_);
    view_->setSortingEnabled(true);
    view_->sortByColumn(LockTableModel::WaitTotal, Qt::DescendingOrder);
    view_->setSelectionBehavior(QAbstractItemView::SelectRows);
    view_->setSelectionMode(QAbstractItemView::SingleSelection);
    view_->setAlternatingRowColors(true);
    view_->setWordWrap(false);
    view_->verticalHeader()->hide();
    view_->verticalHeader()->setDefaultSectionSize(view_->fontMetrics().height() + 6);
    view_->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    view_->horizontalHeader()->setStretchLastSection(true);
    view_->setTabKeyNavigation(false);  // Tab leaves the table; arrows move within it
    connect(view_->selectionModel(), &QItemSelectionModel::currentRowChanged, this, &LocksPage::showSelected);
}

// The tabs under the charts: caller and waker stacks, the holders (split
// and sampled stacks), the lock's
// objects and the session's wait chains.
QTabWidget* LocksPage::buildStackTabs()
{
    waiter_view_ = stack_view(waiters_, this);
    waker_view_ = stack_view(wakers_, this);
    holder_tab_ = new HolderTab(holders_, this);
    auto* stacks = new QTabWidget(this);
    stacks->addTab(waiter_view_, tr("Caller stacks"));
    stacks->addTab(waker_view_, tr("Waker stacks"));
    stacks->addTab(holder_tab_, tr("Holders"));
    auto* objects = new QTreeView(this);
    objects->setModel(instances_);
    objects->setRootIsDecorated(false);
    objects->setUniformRowHeights(true);
    objects->setAlternatingRowColors(true);
    objects->header()->setSectionResizeMode(InstanceModel::Object, QHeaderView::ResizeToContents);
    stacks->addTab(objects, tr("Objects"));
    // The session's wait chains: a graph of all locks, the selected one
    // highlighted; clicking a lock there selects it in the table.
    chains_ = new ChainView(this);
    auto* chain_scroll = new QScrollArea(this);
    chain_scroll->setWidget(chains_);
    chain_scroll->setWidgetResizable(true);
    chain_scroll->setFrameShape(QFrame::NoFrame);
    stacks->addTab(chain_scroll, tr("Wait chains"));
    chains_tab_ = stacks->indexOf(chain_scroll);
    stacks_ = stacks;
    connect(chains_, &ChainView::lockClicked, this, &LocksPage::selectLockNamed);
    return stacks;
}

// Under the table: the futex waits the user-lock rows leave out, and why a
// run recorded no user locks; nothing for a session that did not try.
void LocksPage::setUserNote(const SnapshotPtr& snapshot)
{
    QStringList note;
    if (snapshot) {
        const UserLockReport& u = snapshot->report.user_locks;
        for (const std::string& why : u.unavailable)
            note << tr("User locks not recorded: %1").arg(QString::fromStdString(why));
        for (const auto& [reason, left] : u.left_out)
            note << tr("Left out of the user locks (%1): %2 futex %3 on %4 %5")
                        .arg(QString::fromStdString(reason), display::count(left.waits),
                             left.waits == 1 ? tr("wait") : tr("waits"), display::count(left.addresses),
                             left.addresses == 1 ? tr("address") : tr("addresses"));
    }
    user_note_->setText(note.join(QStringLiteral("; ")));
    user_note_->setVisible(!note.isEmpty());
}

void LocksPage::setSnapshot(const SnapshotPtr& snapshot)
{
    setUserNote(snapshot);
    const std::optional<LockKey> keep = selected_key_;
    table_->setSnapshot(snapshot);
    chains_->setGraph(snapshot ? build_chain_graph(snapshot->report.chains) : ChainGraph{});
    stacks_->setTabText(chains_tab_, chains_->graph().empty()
                                         ? tr("Wait chains")
                                         : tr("Wait chains (%1)").arg(chains_->graph().edges.size()));
    view_->resizeColumnsToContents();
    // Long kernel names would push the numbers off a 1280 px screen; the
    // tooltip has the whole name.
    if (view_->columnWidth(LockTableModel::Name) > 240)
        view_->setColumnWidth(LockTableModel::Name, 240);
    if (view_->columnWidth(LockTableModel::Caller) > 170)
        view_->setColumnWidth(LockTableModel::Caller, 170);
    updateCount();
    // A live reload replaces every row: find the selected lock again by name.
    for (int r = 0; r < filter_->rowCount() && keep; ++r) {
        QModelIndex index = filter_->index(r, 0);
        if (index.data(LockTableModel::LockKeyRole).value<LockKey>() == *keep) {
            view_->selectionModel()->setCurrentIndex(index,
                                                     QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
            return;
        }
    }
    showSelected();
}

void LocksPage::selectFirstRow()
{
    if (filter_->rowCount() > 0)
        view_->selectionModel()->setCurrentIndex(filter_->index(0, 0),
                                                 QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
}

// The row's name in the wait-chain graph: a user lock's carries its kind
// ("g_lock (user pthread_mutex)", core/analysis/chains.h).
QString LocksPage::chainName(const QModelIndex& row)
{
    const QString name = row.siblingAtColumn(LockTableModel::Name).data(Qt::DisplayRole).toString();
    if (row.siblingAtColumn(LockTableModel::Scope).data(Qt::DisplayRole).toString() != QLatin1String("user"))
        return name;
    return QString::fromStdString(user_lock_label(
        name.toStdString(), row.siblingAtColumn(LockTableModel::Kind).data(Qt::DisplayRole).toString().toStdString()));
}

bool LocksPage::selectLockNamed(const QString& name)
{
    auto find = [&]() -> QModelIndex {
        for (int r = 0; r < filter_->rowCount(); ++r) {
            const QModelIndex index = filter_->index(r, LockTableModel::Name);
            if (index.data(Qt::DisplayRole).toString() == name || chainName(index) == name)
                return index;
        }
        return {};
    };
    QModelIndex index = find();
    if (!index.isValid() && !filter_edit_->text().isEmpty()) {
        filter_edit_->clear();  // the filter hid it: show every lock again
        index = find();
    }
    if (!index.isValid())
        return false;
    view_->selectionModel()->setCurrentIndex(index, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    view_->scrollTo(index);
    return true;
}

void LocksPage::focusFilter()
{
    filter_edit_->setFocus(Qt::ShortcutFocusReason);
    filter_edit_->selectAll();
}

void LocksPage::updateCount()
{
    const SnapshotPtr& snap = table_->snapshot();
    const size_t user = snap ? snap->report.rows.size() - snap->user_rows_from : 0;
    count_->setText(
        user ? tr("%1 of %2 locks (%3 in user space)").arg(filter_->rowCount()).arg(table_->rowCount()).arg(user)
             : tr("%1 of %2 locks").arg(filter_->rowCount()).arg(table_->rowCount()));
}

void LocksPage::showSelected()
{
    const QModelIndex current = view_->selectionModel()->currentIndex();
    const SnapshotPtr& snap = table_->snapshot();
    if (!current.isValid() || !snap) {
        selected_key_.reset();
        chains_->setSelectedLock({});
        detail_title_->setText(tr("Select a lock to see its details"));
        histogram_->clear();
        owner_->setCounts({});
        waiters_->setStacks({});
        wakers_->setStacks({});
        holders_->setStacks({});
        holder_tab_->setRow(nullptr, true);
        instances_->setInstances({});
        histogram_chart_->setBars({});
        series_chart_->setLines({}, snap ? snap->timeline.end_s() : 1.0);
        owner_chart_->setBars({});
        return;
    }
    selected_key_ = current.data(LockTableModel::LockKeyRole).value<LockKey>();
    chains_->setSelectedLock(chainName(current));
    const int group = current.data(LockTableModel::GroupIndexRole).toInt();
    const LockDetail detail = build_lock_detail(*snap, size_t(group));
    detail_title_->setText(QString::fromStdString(detail.name));

    // A user lock's panes hold what its futex waits keep (LockDetail::user).
    owner_chart_->setEmptyText(detail.user
                                   ? tr("Not recorded for user locks")
                                   : tr("No spinner queued on this lock\n(spinlocks do not record owner state)"));
    // A user lock's waits are kept per run: each run's mean rate.
    series_chart_->setYAxis(detail.user ? tr("waits/s, each run's mean") : tr("events/s"), charts::Unit::PerSecond);
    wakers_->setCountTitle(detail.user ? tr("Wakes") : QString());
    histogram_->setHistogram(detail.counters.hist);
    QList<charts::Bar> bars;
    for (int r = 0; r < histogram_->rowCount(); ++r)
        bars << charts::Bar{histogram_->index(r, 0).data(HistogramModel::ShortLabelRole).toString(),
                            histogram_->index(r, HistogramModel::Count).data(HistogramModel::SortRole).toDouble(),
                            tr("waits"), charts::palette(0)};
    histogram_chart_->setBars(bars);

    const Timeline& t = snap->timeline;
    QList<charts::Line> lines = {to_line(t, detail.contentions_per_s, charts::palette(0))};
    if (detail.counters.spin_failures)
        lines << to_line(t, detail.spin_failures_per_s, charts::palette(1));
    if (detail.counters.sleeps)
        lines << to_line(t, detail.sleeps_per_s, charts::palette(2));
    series_chart_->setLines(lines, t.end_s());
    series_chart_->setRunStarts(run_starts(t));

    owner_->setCounts(detail.counters.owner);
    QList<charts::Bar> owner_bars;
    if (owner_->total() > 0)
        for (int r = 0; r < owner_->rowCount(); ++r)
            owner_bars << charts::Bar{
                owner_->index(r, OwnerStateModel::State).data().toString(),
                owner_->index(r, OwnerStateModel::Share).data(OwnerStateModel::SortRole).toDouble(), tr("share"),
                charts::palette(0)};
    owner_chart_->setBars(owner_bars);

    waiters_->setStacks(detail.waiters);
    wakers_->setStacks(detail.wakers);
    holders_->setStacks(detail.holders);
    holder_tab_->setRow(&snap->report.rows[size_t(group)], snap->report.holder_split.kept);
    instances_->setInstances(detail.instances);
    emit lockSelected(*selected_key_);
}

}  // namespace lockscope::gui
