// Every model under QAbstractItemModelTester, and the numbers they show
// checked against `lockscope report --format json` of the same session:
// the GUI and the CLI must agree on every total.
#include "models/chain_graph.h"
#include "models/diff_models.h"
#include "models/display.h"
#include "models/histogram_model.h"
#include "models/holder_time_model.h"
#include "models/instance_model.h"
#include "models/key_figures_model.h"
#include "models/lock_filter_model.h"
#include "models/lock_table_model.h"
#include "models/owner_state_model.h"
#include "models/stack_model.h"
#include "session/diff_loader.h"
#include "session/lock_detail.h"
#include "session/snapshot.h"
#include "test_session.h"

#include "core/analysis/estimate.h"
#include "core/analysis/report.h"
#include "core/format.h"
#include "core/storage/session_store.h"

#include <QAbstractItemModelTester>
#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

using namespace lockscope;
using namespace lockscope::gui;

class ModelTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void lockTableUnderTester();
    void lockTableAgreesWithReport();
    void keyFiguresAgreeWithReport();
    void filterAndSort();
    void detailModels();
    void diffModels();
    void stepsAgreeWithDetailed();
    void chainGraphLaysOutChainsLeftToRight();
    void cgroupColumnShowsAndFiltersTheWaitersCgroups();
    void lockTableShowsEstimatesAndWhatWasNotTimed();
    void waitPartsSortAndAnOlderFormatSaysItCannotSplit();
    void holderSplitAgreesWithReport();
    void holderSplitOfAnOlderFormatIsADash();
    void everyColumnHasATitle();
    void callerStacksGoOnIntoTheWaitersUserCode();

private:
    QTemporaryDir dir_;
    QString path_a_, path_b_;
    SnapshotPtr snap_;
    nlohmann::json report_;
};

void ModelTest::initTestCase()
{
    QVERIFY(dir_.isValid());
    path_a_ = dir_.filePath("a.lockscope");
    path_b_ = dir_.filePath("b.lockscope");
    testing::write_session(path_a_, {});  // 3 runs × 20 intervals, 20 locks
    testing::SessionShape worse;
    worse.seed = 7;
    worse.contention_scale = 1.5;
    testing::write_session(path_b_, worse);
    snap_ = build_snapshot(path_a_);
    QCOMPARE(snap_->session->intervals.size(), size_t(60));
    QCOMPARE(snap_->session->runs.size(), size_t(3));
    // The CLI's rendering, parsed back: what `lockscope report --format json --top 0` prints.
    ReportOptions all;
    all.top = 0;
    report_ = nlohmann::json::parse(format_json(build_report(load_session(path_a_.toStdString()), all)));
}

void ModelTest::lockTableUnderTester()
{
    LockTableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setSnapshot(snap_);
    QVERIFY(model.rowCount() > 0);
    model.setSnapshot(nullptr);
    QCOMPARE(model.rowCount(), 0);
    model.setSnapshot(snap_);
}

void ModelTest::lockTableAgreesWithReport()
{
    LockTableModel model;
    model.setSnapshot(snap_);
    const auto& locks = report_["locks"];
    QCOMPARE(size_t(model.rowCount()), locks.size());
    uint64_t contentions = 0, wait = 0, spin_attempts = 0, sleeps = 0;
    for (int r = 0; r < model.rowCount(); ++r) {
        auto value = [&](int column) { return model.index(r, column).data(LockTableModel::SortRole); };
        const LockKey key = model.index(r, 0).data(LockTableModel::LockKeyRole).value<LockKey>();
        const auto it = std::find_if(locks.begin(), locks.end(), [&](const nlohmann::json& l) {
            return l["name"] == key.name && l["kind"] == key.kind && l["mode"] == key.mode;
        });
        QVERIFY2(it != locks.end(), key.name.c_str());
        const nlohmann::json& l = *it;
        QCOMPARE(value(LockTableModel::Contentions).toULongLong(), l["contentions"].get<uint64_t>());
        QCOMPARE(value(LockTableModel::SpinAttempts).toULongLong(), l["spin_attempts"].get<uint64_t>());
        QCOMPARE(value(LockTableModel::WaitTotal).toULongLong(), l["wait_ns"].get<uint64_t>());
        QCOMPARE(value(LockTableModel::WaitMax).toULongLong(), l["max_wait_ns"].get<uint64_t>());
        // The wait's four parts: shares of the row's wait as the report's
        // parts have them, whole percentages that add up to exactly 100.
        const std::pair<int, const char*> parts_of_wait[] = {{LockTableModel::SpinningShare, "spinning_ns"},
                                                             {LockTableModel::QueuedOnCpuShare, "queued_on_cpu_ns"},
                                                             {LockTableModel::AsleepShare, "asleep_ns"},
                                                             {LockTableModel::RunnableShare, "runnable_ns"}};
        const double row_wait = double(l["wait_ns"].get<uint64_t>());
        QVERIFY(row_wait > 0);
        int percents = 0;
        double shares = 0;
        for (const auto& [column, field] : parts_of_wait) {
            QCOMPARE(value(column).toDouble(), double(l[field].get<uint64_t>()) / row_wait);
            const QVariant percent = model.index(r, column).data(LockTableModel::PercentRole);
            QVERIFY(percent.isValid());
            QCOMPARE(model.index(r, column).data().toString(), QStringLiteral("%1%").arg(percent.toInt()));
            percents += percent.toInt();
            shares += value(column).toDouble();
        }
        QCOMPARE(percents, 100);
        QVERIFY(std::fabs(shares - 1.0) < 1e-9);
        QCOMPARE(value(LockTableModel::Sleeps).toULongLong(), l["sleeps"].get<uint64_t>());
        QCOMPARE(value(LockTableModel::SpinFailureRate).toDouble(), l["spin_failure_rate"].get<double>());
        QCOMPARE(value(LockTableModel::WaitMean).toDouble(), l["mean_wait_ns"].get<double>());
        QCOMPARE(value(LockTableModel::ShareOfWait).toDouble(), l["share_of_wait"].get<double>());
        QCOMPARE(model.index(r, LockTableModel::Caller).data().toString().toStdString(),
                 l["caller"].get<std::string>());
        contentions += value(LockTableModel::Contentions).toULongLong();
        wait += value(LockTableModel::WaitTotal).toULongLong();
        spin_attempts += value(LockTableModel::SpinAttempts).toULongLong();
        sleeps += value(LockTableModel::Sleeps).toULongLong();
    }
    // The rows add up to the session totals.
    const auto& totals = report_["totals"];
    QCOMPARE(contentions, totals["contentions"].get<uint64_t>());
    QCOMPARE(wait, totals["wait_ns"].get<uint64_t>());
    QCOMPARE(spin_attempts, totals["spin_attempts"].get<uint64_t>());
    QCOMPARE(sleeps, totals["sleeps"].get<uint64_t>());
}

void ModelTest::keyFiguresAgreeWithReport()
{
    KeyFiguresModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setSnapshot(snap_);
    const auto& t = report_["totals"];
    auto figure = [&](int row) { return model.index(row, KeyFiguresModel::Value).data(KeyFiguresModel::ValueRole); };
    QCOMPARE(figure(KeyFiguresModel::ContentionsPerSecond).toDouble(), t["contentions_per_s"].get<double>());
    QCOMPARE(figure(KeyFiguresModel::SpinFailureRate).toDouble(), t["spin_failure_rate"].get<double>());
    QCOMPARE(figure(KeyFiguresModel::IdleFraction).toDouble(), t["idle_fraction"].get<double>());
    QCOMPARE(figure(KeyFiguresModel::Throughput).toDouble(), t["ops_per_s"].get<double>());
    QCOMPARE(figure(KeyFiguresModel::Lost).toDouble(), double(t["lost"].get<uint64_t>()));
    // The wait's four parts, one card each: the report's parts, and whole
    // percentages that add up to exactly 100 (no two cards counting one ns).
    const std::pair<int, const char*> parts_of_wait[] = {{KeyFiguresModel::WaitSpinning, "spinning_ns"},
                                                         {KeyFiguresModel::WaitQueuedOnCpu, "queued_on_cpu_ns"},
                                                         {KeyFiguresModel::WaitAsleep, "asleep_ns"},
                                                         {KeyFiguresModel::WaitRunnable, "runnable_ns"}};
    int percents = 0;
    for (const auto& [row, field] : parts_of_wait) {
        QCOMPARE(figure(row).toDouble(), double(t[field].get<uint64_t>()) / double(t["wait_ns"].get<uint64_t>()));
        const int percent = model.index(row, KeyFiguresModel::Value).data(KeyFiguresModel::PercentRole).toInt();
        QCOMPARE(model.index(row, KeyFiguresModel::Value).data().toString(), QStringLiteral("%1%").arg(percent));
        percents += percent;
    }
    QCOMPARE(percents, 100);
    QCOMPARE(model.index(KeyFiguresModel::TopLock, KeyFiguresModel::Value).data().toString().toStdString(),
             report_["locks"][0]["name"].get<std::string>());
    // The time series add up to the totals as well (contentions by kind × seconds).
    double by_kind = 0;
    for (const Series& s : snap_->contentions_by_kind)
        for (size_t i = 0; i < s.y.size(); ++i)
            by_kind += s.y[i] * snap_->session->intervals[i].seconds();
    QCOMPARE(std::llround(by_kind), (long long)t["contentions"].get<uint64_t>());
}

void ModelTest::filterAndSort()
{
    LockTableModel source;
    LockFilterModel filter;
    filter.setSourceModel(&source);
    QAbstractItemModelTester tester(&filter, QAbstractItemModelTester::FailureReportingMode::QtTest);
    source.setSnapshot(snap_);
    filter.sort(LockTableModel::Contentions, Qt::AscendingOrder);
    for (int r = 1; r < filter.rowCount(); ++r)
        QVERIFY(filter.index(r - 1, LockTableModel::Contentions).data(LockTableModel::SortRole).toULongLong() <=
                filter.index(r, LockTableModel::Contentions).data(LockTableModel::SortRole).toULongLong());
    filter.setFilterText("MMAP_lock");
    QCOMPARE(filter.rowCount(), 2);  // read and write
    filter.setFilterText("rwsem");   // matches the kind column
    for (int r = 0; r < filter.rowCount(); ++r)
        QVERIFY(filter.index(r, LockTableModel::Kind).data().toString().startsWith("rwsem"));
    filter.setFilterText("no such lock");
    QCOMPARE(filter.rowCount(), 0);
    filter.setFilterText({});
    QCOMPARE(filter.rowCount(), source.rowCount());
}

void ModelTest::detailModels()
{
    HistogramModel histogram;
    OwnerStateModel owner;
    StackModel waiters, wakers, holders;
    InstanceModel objects;
    QAbstractItemModelTester t5(&objects, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemModelTester t1(&histogram, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemModelTester t2(&owner, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemModelTester t3(&waiters, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemModelTester t4(&wakers, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemModelTester t6(&holders, QAbstractItemModelTester::FailureReportingMode::QtTest);
    const auto& locks = report_["locks"];
    for (size_t g = 0; g < snap_->report.rows.size(); ++g) {
        const LockDetail d = build_lock_detail(*snap_, g);
        const nlohmann::json& l = locks[g];  // snapshot rows are the report rows, same order
        QCOMPARE(snap_->report.rows[g].name, l["name"].get<std::string>());
        histogram.setHistogram(d.counters.hist);
        uint64_t waits = 0;
        for (int r = 0; r < histogram.rowCount(); ++r)
            waits += histogram.index(r, HistogramModel::Count).data(HistogramModel::SortRole).toULongLong();
        uint64_t hist_total = 0;
        for (const auto& n : l["hist"])
            hist_total += n.get<uint64_t>();
        QCOMPARE(waits, hist_total);
        owner.setCounts(d.counters.owner);
        for (int s = 0; s < kOwnerStates; ++s)
            QCOMPARE(owner.index(s, OwnerStateModel::Count).data(OwnerStateModel::SortRole).toULongLong(),
                     l["owner_at_queueing"][owner_state_name(s)].get<uint64_t>());
        waiters.setStacks(d.waiters);
        wakers.setStacks(d.wakers);
        holders.setStacks(d.holders);
        QVERIFY(waiters.rowCount() > 0);
        // Holder stacks: every holder sample of the row's locks, each led by
        // what the holder was doing (where followed holders slept is not a
        // sample: the Holders tab's summary has it).
        uint64_t holder_raw = 0, holder_shown = 0;
        for (const StackSample& s : snap_->session->stacks)
            if (s.holder() && s.holder_state() != "asleep" &&
                std::count(snap_->report.rows[g].lock_ids.begin(), snap_->report.rows[g].lock_ids.end(), s.lock_id))
                holder_raw += s.samples;
        for (const StackEntry& h : d.holders) {
            holder_shown += h.samples;
            QVERIFY(!h.frames.empty());
            QVERIFY(h.frames[0] == "(preempted)" || h.frames[0] == "(running on another CPU)");
        }
        QCOMPARE(holder_shown, holder_raw);
        QCOMPARE(holders.rowCount(), int(d.holders.size()));
        // The objects add up to the class row, as report --by instance's rows do.
        objects.setInstances(d.instances);
        QVERIFY(objects.rowCount() > 0);
        uint64_t object_contentions = 0;
        for (int r = 0; r < objects.rowCount(); ++r)
            object_contentions +=
                objects.index(r, InstanceModel::Contentions).data(InstanceModel::SortRole).toULongLong();
        QCOMPARE(object_contentions, l["contentions"].get<uint64_t>());
        // Samples agree with the raw stack rows of the session.
        uint64_t raw = 0, shown = 0;
        for (const StackSample& s : snap_->session->stacks)
            if (s.role == "waiter" &&
                std::count(snap_->report.rows[g].lock_ids.begin(), snap_->report.rows[g].lock_ids.end(), s.lock_id))
                raw += s.samples;
        for (int r = 0; r < waiters.rowCount(); ++r)
            shown += waiters.index(r, StackModel::Samples).data(StackModel::SortRole).toULongLong();
        QCOMPARE(shown, raw);
        // Frames are children, innermost first; the summary skips lock internals.
        const QModelIndex top = waiters.index(0, 0);
        QCOMPARE(size_t(waiters.rowCount(top)), d.waiters[0].frames.size());
        QVERIFY(!waiters.data(top).toString().startsWith("__mutex_lock"));
    }
}

// A kernel stack whose waiters' user stacks were sampled: its samples are
// shared among its user stacks, whose frames follow the kernel's, marked.
void ModelTest::callerStacksGoOnIntoTheWaitersUserCode()
{
    auto session = std::make_shared<Session>();
    session->schema_version = kSchemaVersion;
    LockInfo lock;
    lock.id = 1;
    lock.name = "inode.i_rwsem";
    lock.kind = "rwsem";
    lock.mode = "write";
    session->locks.push_back(lock);
    IntervalTotals in;
    in.run = 1;
    in.end_ns = 1'000'000'000;
    session->intervals.push_back(in);
    LockInterval li;
    li.run = 1;
    li.lock_id = 1;
    li.counters.contentions = 10;
    li.counters.wait_ns = 10'000;
    session->lock_intervals.push_back(li);
    const std::vector<std::string> kernel = {"rwsem_down_write_slowpath+0x1", "down_write+0x2", "vfs_write+0x3"};
    session->stacks.push_back({1, 1, "waiter", kernel, 4, 4000});
    // Two user callers above the one kernel stack, each sample a microsecond's wait.
    for (const auto& [caller, samples] : {std::pair<const char*, uint64_t>{"writer", 3}, {"flusher", 1}})
        session->kernel_user_stacks.push_back({.run = 1,
                                               .lock_id = 1,
                                               .pid = 7,
                                               .kernel_frames = kernel,
                                               .frames = {"__libc_pwrite", caller},
                                               .samples = samples,
                                               .wait_ns = samples * 1000});
    const SnapshotPtr snap = build_snapshot(QStringLiteral("user-code.lockscope"), session);
    QCOMPARE(snap->report.rows.size(), size_t(1));
    const LockDetail d = build_lock_detail(*snap, 0);
    QCOMPARE(d.waiters.size(), size_t(2));
    StackModel waiters;
    QAbstractItemModelTester tester(&waiters, QAbstractItemModelTester::FailureReportingMode::QtTest);
    waiters.setStacks(d.waiters);
    const QModelIndex top = waiters.index(0, 0);
    QCOMPARE(waiters.index(0, StackModel::Samples).data(StackModel::SortRole).toULongLong(), 3ull);
    QCOMPARE(waiters.index(1, StackModel::Samples).data(StackModel::SortRole).toULongLong(), 1ull);
    QCOMPARE(waiters.rowCount(top), 5);
    QCOMPARE(waiters.index(4, 0, top).data().toString(), QStringLiteral("[user] writer"));
    QVERIFY2(waiters.data(top).toString().contains(QStringLiteral("⇐ writer")),
             qPrintable(waiters.data(top).toString()));
}

void ModelTest::diffModels()
{
    DiffTotalsModel totals;
    DiffLocksModel locks;
    MetaDiffModel meta;
    QAbstractItemModelTester t1(&totals, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemModelTester t2(&locks, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemModelTester t3(&meta, QAbstractItemModelTester::FailureReportingMode::QtTest);
    const DiffLoadResult r = load_diff(path_a_, path_b_);
    QVERIFY2(r.diff, qPrintable(r.error));
    totals.setDiff(r.diff);
    locks.setDiff(r.diff);
    meta.setDiff(r.diff);
    const DiffResult& d = r.diff->result;
    QCOMPARE(size_t(totals.rowCount()), d.totals.size());
    QCOMPARE(size_t(locks.rowCount()), d.locks.size() + d.only_a.size() + d.only_b.size());
    QVERIFY(meta.rowCount() >= 1);  // kernel_release differs
    // B contends 1.5× more: some lock is judged worse, and the verdict is text.
    bool worse = false;
    for (int row = 0; row < locks.rowCount(); ++row)
        if (locks.index(row, DiffLocksModel::Verdict).data(DiffLocksModel::VerdictRole).toInt() ==
            int(Verdict::Worse)) {
            worse = true;
            QCOMPARE(locks.index(row, DiffLocksModel::Verdict).data().toString(), QStringLiteral("worse"));
            QVERIFY(locks.index(row, DiffLocksModel::Verdict).data(Qt::ForegroundRole).value<QColor>().isValid());
        }
    QVERIFY(worse);
    QVERIFY(!load_diff(path_a_, dir_.filePath("missing")).error.isEmpty());
}

// The chain graph of the test session (pipe->mutex and i_rwsem behind
// mmap_lock, mmap_lock behind kernfs_mutex) and a cycle built by hand.
void ModelTest::chainGraphLaysOutChainsLeftToRight()
{
    const ChainGraph g = build_chain_graph(snap_->report.chains);
    QCOMPARE(g.edges.size(), size_t(3));
    QCOMPARE(g.nodes.size(), size_t(4));
    auto node = [&](const char* name) -> const ChainGraph::Node& {
        const int i = g.find(name);
        if (i < 0)
            qFatal("no node %s", name);
        return g.nodes[size_t(i)];
    };
    // Every edge points right: waiters' locks before the locks their holders waited for.
    for (const ChainGraph::Edge& e : g.edges) {
        QVERIFY(!e.back);
        QVERIFY(g.nodes[e.to].column > g.nodes[e.from].column);
    }
    QCOMPARE(node("pipe->mutex").column, 0);
    QCOMPARE(node("i_rwsem").column, 0);
    QCOMPARE(node("mmap_lock").column, 1);
    QCOMPARE(node("kernfs_mutex").column, 2);
    QCOMPARE(g.columns, 3);
    QCOMPARE(g.rows, 2);
    // Rows by weight: pipe->mutex explains more wait than i_rwsem.
    QCOMPARE(node("pipe->mutex").row, 0);
    QCOMPARE(node("i_rwsem").row, 1);
    QCOMPARE(g.edges.front().wait_ns, g.max_wait);
    // Edge weights are the session's edges, summed over its runs.
    uint64_t pipe_to_mmap = 0;
    for (const WaitEdge& e : snap_->session->edges)
        if (e.lock_id == 1)
            pipe_to_mmap += e.wait_ns;
    QCOMPARE(g.edges.front().wait_ns, pipe_to_mmap);
    QCOMPARE(node("mmap_lock").wait_in, node("pipe->mutex").wait_out + node("i_rwsem").wait_out);
    QVERIFY(node("kernfs_mutex").root_state.size() > 0);  // its holders were sampled: preempted or running

    // A cycle: A -> B -> A. One edge is drawn back; no column is unbounded.
    Chain ab{{"A", "B", "A"}, 5, 500, true, false, {}};
    Chain ba{{"B", "A", "B"}, 2, 200, true, false, {}};
    const ChainGraph cycle = build_chain_graph({ab, ba});
    QCOMPARE(cycle.edges.size(), size_t(2));
    QCOMPARE(int(std::count_if(cycle.edges.begin(), cycle.edges.end(), [](const auto& e) { return e.back; })), 1);
    QCOMPARE(cycle.columns, 2);
    QVERIFY(build_chain_graph({}).empty());

    // Holders waiting for another lock of the same class (one pipe's mutex
    // behind another's): an edge from the lock back to itself, not to nothing.
    Chain pipes{{"pipe_inode_info.mutex", "pipe_inode_info.mutex"}, 3, 12'900'000, true, false, {}};
    Chain onward{{"i_rwsem", "pipe_inode_info.mutex"},         2, 1'000'000, false, false,
                 {"pipe_inode_info.mutex", "sleeping", {}, {}}};
    const ChainGraph same_class = build_chain_graph({pipes, onward});
    QCOMPARE(same_class.nodes.size(), size_t(2));
    QCOMPARE(same_class.edges.size(), size_t(2));
    const ChainGraph::Edge& self = same_class.edges.front();
    QCOMPARE(self.from, self.to);
    QVERIFY(self.back);
    QCOMPARE(same_class.nodes[self.to].name, std::string("pipe_inode_info.mutex"));
    // Every edge of every graph here starts and ends on a node.
    for (const ChainGraph* graph : {&g, &cycle, &same_class})
        for (const ChainGraph::Edge& e : graph->edges)
            QVERIFY(e.from < graph->nodes.size() && e.to < graph->nodes.size());
}

// The Cgroups column: the sampled waiters' cgroups, the most sampled
// first, and the filter finds a lock by any of them.
void ModelTest::cgroupColumnShowsAndFiltersTheWaitersCgroups()
{
    LockTableModel table;
    table.setSnapshot(snap_);
    LockFilterModel filter;
    filter.setSourceModel(&table);
    int pipe = -1;
    for (int r = 0; r < table.rowCount(); ++r)
        if (table.index(r, LockTableModel::Name).data().toString() == QStringLiteral("pipe->mutex"))
            pipe = r;
    QVERIFY(pipe >= 0);
    QCOMPARE(table.index(pipe, LockTableModel::Cgroups).data().toString(),
             QStringLiteral("/system.slice/web.service (+1 more)"));
    QVERIFY(table.index(pipe, LockTableModel::Cgroups)
                .data(Qt::ToolTipRole)
                .toString()
                .contains(QStringLiteral("/user.slice/user-1000.slice")));
    filter.setFilterText(QStringLiteral("user-1000"));
    QCOMPARE(filter.rowCount(), 1);
    QCOMPARE(filter.index(0, LockTableModel::Name).data().toString(), QStringLiteral("pipe->mutex"));
    filter.setFilterText(QStringLiteral("db.service"));
    QCOMPARE(filter.rowCount(), table.rowCount() - 1);
    // Samples add up over runs, as the report's JSON has them.
    const ReportRow& row = snap_->report.rows[size_t(pipe)];
    uint64_t web = 0;
    for (const LockCgroup& c : snap_->session->lock_cgroups)
        if (c.lock_id == 1 && c.cgroup == "/system.slice/web.service")
            web += c.samples;
    QCOMPARE(row.cgroups.front().second, web);
}

// record --sample: an estimated wait carries its standard error, and a lock
// none of whose episodes was timed says so instead of showing 0.
void ModelTest::lockTableShowsEstimatesAndWhatWasNotTimed()
{
    auto snap = std::make_shared<SessionSnapshot>();
    set_timing_meta(snap->report.session, 64);
    ReportRow timed, untimed;
    timed.name = "timed_lock";
    timed.counters.contentions = 640;
    timed.counters.timed = 10;
    timed.counters.wait_ns = 1'230'000'000;
    timed.counters.wait_var_us2 = 2'500'000'000;
    untimed.name = "untimed_lock";
    untimed.counters.contentions = 3;
    untimed.counters.spin_attempts = 3;
    snap->report.rows = {timed, untimed};
    LockTableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setSnapshot(snap);
    QCOMPARE(model.index(0, LockTableModel::WaitTotal).data().toString(), QString::fromUtf8("1.23 s ± 0.05"));
    QCOMPARE(model.index(0, LockTableModel::Contentions).data(LockTableModel::SortRole).toULongLong(), 640ull);
    for (int column : {int(LockTableModel::WaitTotal), int(LockTableModel::WaitMean), int(LockTableModel::WaitMax),
                       int(LockTableModel::SpinningShare), int(LockTableModel::QueuedOnCpuShare),
                       int(LockTableModel::AsleepShare), int(LockTableModel::RunnableShare)})
        QCOMPARE(model.index(1, column).data().toString(), QStringLiteral("not timed"));
    QCOMPARE(model.index(1, LockTableModel::Contentions).data(LockTableModel::SortRole).toULongLong(), 3ull);
    QVERIFY(model.index(0, LockTableModel::WaitTotal).data(Qt::ToolTipRole).toString().contains("one episode in 64"));
}

// The part columns sort by share; a session whose format cannot split the
// wait shows the spin phases whole and queued on CPU as unknown, never a
// made-up split.
void ModelTest::waitPartsSortAndAnOlderFormatSaysItCannotSplit()
{
    LockTableModel table;
    table.setSnapshot(snap_);
    LockFilterModel sorted;
    sorted.setSourceModel(&table);
    sorted.sort(LockTableModel::AsleepShare, Qt::DescendingOrder);
    for (int r = 1; r < sorted.rowCount(); ++r)
        QVERIFY(sorted.index(r - 1, LockTableModel::AsleepShare).data(LockTableModel::SortRole).toDouble() >=
                sorted.index(r, LockTableModel::AsleepShare).data(LockTableModel::SortRole).toDouble());

    auto older = std::make_shared<SessionSnapshot>(*snap_);
    older->report.wait_parts_split = false;
    LockTableModel old_table;
    QAbstractItemModelTester tester(&old_table, QAbstractItemModelTester::FailureReportingMode::QtTest);
    old_table.setSnapshot(older);
    for (int r = 0; r < old_table.rowCount(); ++r) {
        const LockCounters& c = older->report.rows[size_t(r)].counters;
        QCOMPARE(old_table.index(r, LockTableModel::QueuedOnCpuShare).data().toString(), QStringLiteral("?"));
        QCOMPARE(old_table.index(r, LockTableModel::SpinningShare).data(LockTableModel::SortRole).toDouble(),
                 double(c.spin_ns) / double(c.wait_ns));
        for (int column = LockTableModel::SpinningShare; column <= LockTableModel::RunnableShare; ++column)
            QVERIFY(!old_table.index(r, column).data(LockTableModel::PercentRole).isValid());
        QVERIFY(old_table.index(r, LockTableModel::SpinningShare)
                    .data(Qt::ToolTipRole)
                    .toString()
                    .contains(QStringLiteral("keeps no off-CPU time of spin phases")));
    }
    KeyFiguresModel figures;
    figures.setSnapshot(older);
    auto text = [&](int row, int column) { return figures.index(row, column).data().toString(); };
    QCOMPARE(text(KeyFiguresModel::WaitSpinning, KeyFiguresModel::Value), QStringLiteral("?"));
    QCOMPARE(text(KeyFiguresModel::WaitQueuedOnCpu, KeyFiguresModel::Value), QStringLiteral("?"));
    QCOMPARE(text(KeyFiguresModel::WaitQueuedOnCpu, KeyFiguresModel::Detail),
             QStringLiteral("not split in this session's format"));
    QVERIFY(!figures.index(KeyFiguresModel::WaitAsleep, KeyFiguresModel::Value)
                 .data(KeyFiguresModel::PercentRole)
                 .isValid());
    QCOMPARE(text(KeyFiguresModel::WaitAsleep, KeyFiguresModel::Value),
             display::percent(double(older->report.totals.counters.asleep_ns()) /
                              double(older->report.totals.counters.wait_ns)));
}

// The column titles are given apart from the Columns enums: a title
// missing or one too many would shift every header after it.
template <typename Model>
static void check_titles()
{
    Model model;
    QCOMPARE(model.columnCount(), int(Model::ColumnCount));
    for (int column = 0; column < model.columnCount(); ++column)
        QVERIFY(!model.headerData(column, Qt::Horizontal, Qt::DisplayRole).toString().isEmpty());
}

void ModelTest::everyColumnHasATitle()
{
    check_titles<LockTableModel>();
    check_titles<HistogramModel>();
    check_titles<OwnerStateModel>();
    check_titles<InstanceModel>();
    check_titles<KeyFiguresModel>();
    check_titles<DiffTotalsModel>();
    check_titles<DiffLocksModel>();
    check_titles<MetaDiffModel>();
    // Header tips are what the lock table's cells fall back to.
    LockTableModel locks;
    for (int column = 0; column < locks.columnCount(); ++column)
        QVERIFY(!locks.headerData(column, Qt::Horizontal, Qt::ToolTipRole).toString().isEmpty());
}

// The holder split's columns, card and tasks: the report's holder parts of
// each lock, whole percentages that add up to 100; "–" on a lock with no
// owner to follow, never a made-up 100% unknown.
void ModelTest::holderSplitAgreesWithReport()
{
    LockTableModel model;
    model.setSnapshot(snap_);
    const auto& locks = report_["locks"];
    const char* const keys[] = {"holder_running_ns", "holder_runnable_ns", "holder_asleep_ns", "holder_unknown_ns"};
    int with_split = 0, without = 0;
    for (int r = 0; r < model.rowCount(); ++r) {
        const ReportRow& row = snap_->report.rows[size_t(r)];
        const auto it = std::find_if(locks.begin(), locks.end(), [&](const nlohmann::json& l) {
            return l["name"] == row.name && l["kind"] == row.kind && l["mode"] == row.mode;
        });
        QVERIFY(it != locks.end());
        const bool owned = row.kind == "mutex" || (row.kind == "rwsem" && row.mode == "write");
        int percents = 0;
        for (int part = 0; part < 4; ++part) {
            const QModelIndex cell = model.index(r, LockTableModel::HolderRunningShare + part);
            if (!owned) {
                QCOMPARE(cell.data().toString(), QStringLiteral("–"));
                QVERIFY(!cell.data(LockTableModel::PercentRole).isValid());
                QVERIFY(cell.data(Qt::ToolTipRole).toString().contains(QStringLiteral("No holder of this lock")));
                continue;
            }
            QCOMPARE(cell.data(LockTableModel::ExactRole).toULongLong(), (*it)[keys[part]].get<uint64_t>());
            const QVariant percent = cell.data(LockTableModel::PercentRole);
            QVERIFY(percent.isValid());
            QCOMPARE(cell.data().toString(), QStringLiteral("%1%").arg(percent.toInt()));
            percents += percent.toInt();
        }
        (owned ? with_split : without)++;
        if (!owned)
            continue;
        QCOMPARE(percents, 100);
        // The test session's holders: running 20%, runnable 45%, asleep 10%.
        QCOMPARE(model.index(r, LockTableModel::HolderRunnableShare).data().toString(), QStringLiteral("45%"));
        // The holder tab's tasks: the report's holders, then the tasks that preempted them.
        HolderTimeModel tasks;
        QAbstractItemModelTester tester(&tasks, QAbstractItemModelTester::FailureReportingMode::QtTest);
        tasks.setTasks(row.holder_times, row.preemptors);
        const auto& holders = (*it)["holder_split"]["holders"];
        const auto& preempted_by = (*it)["holder_split"]["preempted_by"];
        QCOMPARE(size_t(tasks.rowCount()), holders.size() + preempted_by.size());
        for (int t = 0; t < tasks.rowCount(); ++t) {
            const bool holder = size_t(t) < holders.size();
            const auto& j = holder ? holders[size_t(t)] : preempted_by[size_t(t) - holders.size()];
            auto cell = [&](int column) { return tasks.index(t, column).data(HolderTimeModel::ExactRole); };
            QCOMPARE(tasks.index(t, HolderTimeModel::Task).data().toString().toStdString(),
                     j["comm"].get<std::string>() + "[" + std::to_string(j["tid"].get<uint32_t>()) + "]");
            QCOMPARE(cell(HolderTimeModel::Runnable).toULongLong(), j["runnable_ns"].get<uint64_t>());
            QCOMPARE(cell(HolderTimeModel::Waits).toULongLong(), j["waits"].get<uint64_t>());
            if (holder) {
                QCOMPARE(cell(HolderTimeModel::Running).toULongLong(), j["running_ns"].get<uint64_t>());
                QCOMPARE(cell(HolderTimeModel::Asleep).toULongLong(), j["asleep_ns"].get<uint64_t>());
            } else {  // a preemptor keeps only the wait behind the holder it preempted
                QCOMPARE(tasks.index(t, HolderTimeModel::Running).data().toString(), QStringLiteral("–"));
                QCOMPARE(tasks.index(t, HolderTimeModel::Role).data().toString(), QStringLiteral("preemptor"));
            }
        }
        QCOMPARE(preempted_by.at(0)["comm"].get<std::string>(), std::string("cc1plus"));
    }
    QVERIFY(with_split > 0 && without > 0);

    // The card: running / runnable / asleep of all wait, unknown beside.
    KeyFiguresModel figures;
    figures.setSnapshot(snap_);
    const auto& totals = report_["totals"];
    std::vector<uint64_t> parts;
    for (const char* key : keys)
        parts.push_back(totals[key].get<uint64_t>());
    const std::vector<int> whole = whole_percents(parts);
    QCOMPARE(figures.index(KeyFiguresModel::HolderSplit, KeyFiguresModel::Value).data().toString(),
             QStringLiteral("%1% / %2% / %3%").arg(whole[0]).arg(whole[1]).arg(whole[2]));
    QCOMPARE(figures.index(KeyFiguresModel::HolderSplit, KeyFiguresModel::Detail).data().toString(),
             QStringLiteral("unknown %1%: no holder followed").arg(whole[3]));
    QVERIFY(whole[1] > 0 && whole[3] > 0);  // the spinlocks' and readers' wait is unknown
    const QVariant percents = figures.index(KeyFiguresModel::HolderSplit, 0).data(KeyFiguresModel::HolderPercentsRole);
    QCOMPARE(percents, QVariant(QVariantList{whole[0], whole[1], whole[2], whole[3]}));
}

// A session older than the split: every holder cell and the card say "–",
// with the reason in the tooltip; nothing is made up.
void ModelTest::holderSplitOfAnOlderFormatIsADash()
{
    auto older = std::make_shared<SessionSnapshot>(*snap_);
    older->report.holder_split.kept = false;
    LockTableModel table;
    QAbstractItemModelTester tester(&table, QAbstractItemModelTester::FailureReportingMode::QtTest);
    table.setSnapshot(older);
    QVERIFY(table.rowCount() > 0);
    for (int r = 0; r < table.rowCount(); ++r)
        for (int column = LockTableModel::HolderRunningShare; column <= LockTableModel::HolderUnknownShare; ++column) {
            const QModelIndex cell = table.index(r, column);
            QCOMPARE(cell.data().toString(), QStringLiteral("–"));
            QVERIFY(!cell.data(LockTableModel::PercentRole).isValid());
            QVERIFY(!cell.data(LockTableModel::ExactRole).isValid());
            QCOMPARE(cell.data(LockTableModel::SortRole).toDouble(), -1.0);
            QVERIFY(cell.data(Qt::ToolTipRole).toString().contains(QStringLiteral("keeps no holder split")));
        }
    KeyFiguresModel figures;
    figures.setSnapshot(older);
    QCOMPARE(figures.index(KeyFiguresModel::HolderSplit, KeyFiguresModel::Value).data().toString(),
             QStringLiteral("–"));
    QCOMPARE(figures.index(KeyFiguresModel::HolderSplit, KeyFiguresModel::Detail).data().toString(),
             QStringLiteral("not kept in this session's format"));
    QVERIFY(!figures.index(KeyFiguresModel::HolderSplit, 0).data(KeyFiguresModel::HolderPercentsRole).isValid());
}

QTEST_GUILESS_MAIN(ModelTest)
// The first steps of opening a file (SessionSnapshot::Level) show the same
// totals as the detailed snapshot; Totals also the same locks table.
void ModelTest::stepsAgreeWithDetailed()
{
    using Level = SessionSnapshot::Level;
    SnapshotPtr first = build_snapshot(path_a_, Level::Intervals);
    SnapshotPtr totals = build_snapshot(path_a_, Level::Totals);
    QVERIFY(!first->detailed() && !totals->detailed() && snap_->detailed());
    for (const SnapshotPtr& s : {first, totals}) {
        QVERIFY(s->report.totals.counters == snap_->report.totals.counters);
        QCOMPARE(s->report.totals.duration_s, snap_->report.totals.duration_s);
        QVERIFY(s->timeline.x_s == snap_->timeline.x_s);
        QVERIFY(s->spin_failure_rate.y == snap_->spin_failure_rate.y);
        QVERIFY(s->contentions_by_kind.empty());
        QVERIFY(s->lock_rows.empty());
    }
    QVERIFY(first->report.rows.empty());
    QCOMPARE(totals->report.rows.size(), snap_->report.rows.size());
    for (size_t i = 0; i < totals->report.rows.size(); ++i) {
        QVERIFY(totals->report.rows[i].name == snap_->report.rows[i].name);
        QVERIFY(totals->report.rows[i].caller == snap_->report.rows[i].caller);
        QVERIFY(totals->report.rows[i].counters == snap_->report.rows[i].counters);
        QVERIFY(totals->report.rows[i].lock_ids == snap_->report.rows[i].lock_ids);
    }
    QVERIFY(format_json(totals->report) == format_json(snap_->report));
}

#include "model_test.moc"
