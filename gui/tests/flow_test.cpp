// The dashboard as a user drives it, offscreen: open a session, switch
// pages from the keyboard, sort and filter the locks, select one, open a
// diff, follow a session being recorded, and survive a file that is not a
// session.
#include "charts/bar_chart.h"
#include "charts/time_series_chart.h"
#include "models/diff_models.h"
#include "models/histogram_model.h"
#include "models/holder_time_model.h"
#include "models/key_figures_model.h"
#include "models/instance_model.h"
#include "models/lock_filter_model.h"
#include "models/lock_table_model.h"
#include "models/owner_state_model.h"
#include "models/stack_model.h"
#include "session/follower.h"
#include "test_session.h"
#include "views/chain_view.h"
#include "views/chart_feed.h"
#include "views/diff_page.h"
#include "views/holder_tab.h"
#include "views/locks_page.h"
#include "views/main_window.h"
#include "views/overview_page.h"

#include <QFile>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTreeView>
#include <QtTest>

using namespace lockscope;
using namespace lockscope::gui;

class FlowTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void openSwitchSortFilterSelect();
    void openDiff();
    void notASessionIsAMessage();
    void followsALiveRecording();
    void clickingALockInTheChainGraphSelectsIt();
    void chartLinesStartAtTheFirstInterval();
    void everyChainArrowEndsOnALock();
    void userLocksAreRowsOfTheLockTable();
    void userLockRowFillsTheDetailPanes();
    void holderSplitShowsInTheCardTheColumnsAndTheTab();

private:
    bool open(MainWindow& w, const QString& path);
    // Three runs of a program's user locks (g_cache_lock, g_table_lock) and
    // `kernel_locks` kernel locks.
    QString userSession(const QString& name, int kernel_locks);
    QTemporaryDir dir_;
    testing::SessionPair pair_;
};

void FlowTest::initTestCase()
{
    QVERIFY(dir_.isValid());
    pair_ = testing::write_session_pair(dir_.path(), 3);
}

bool FlowTest::open(MainWindow& w, const QString& path)
{
    QSignalSpy loaded(&w, &MainWindow::sessionLoaded);
    w.openSession(path);
    return loaded.wait(30000);
}

QString FlowTest::userSession(const QString& name, int kernel_locks)
{
    testing::SessionShape shape;
    shape.intervals = 4;
    shape.locks = kernel_locks;
    shape.user_locks = true;
    const QString path = dir_.filePath(name);
    testing::write_session(path, shape);
    return path;
}

void FlowTest::openSwitchSortFilterSelect()
{
    MainWindow w(false);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(open(w, pair_.a));
    QCOMPARE(w.tabs()->currentIndex(), int(MainWindow::Overview));

    QTest::keyClick(&w, Qt::Key_2, Qt::ControlModifier);
    QCOMPARE(w.tabs()->currentIndex(), int(MainWindow::Locks));
    LocksPage* page = w.locks();
    QTableView* view = page->view();
    QCOMPARE(page->filter()->rowCount(), page->table()->rowCount());

    // Default order: most wait first, as the report ranks them.
    auto sorted_by = [&](int column, bool ascending) {
        for (int r = 1; r < page->filter()->rowCount(); ++r) {
            const double a = page->filter()->index(r - 1, column).data(LockTableModel::SortRole).toDouble();
            const double b = page->filter()->index(r, column).data(LockTableModel::SortRole).toDouble();
            if (ascending ? a > b : a < b)
                return false;
        }
        return true;
    };
    QVERIFY(sorted_by(LockTableModel::WaitTotal, false));
    // Clicking a header sorts by it.
    const int x = view->horizontalHeader()->sectionViewportPosition(LockTableModel::Contentions) + 5;
    QTest::mouseClick(view->horizontalHeader()->viewport(), Qt::LeftButton, {}, QPoint(x, 5));
    QCOMPARE(view->horizontalHeader()->sortIndicatorSection(), int(LockTableModel::Contentions));
    QVERIFY(
        sorted_by(LockTableModel::Contentions, view->horizontalHeader()->sortIndicatorOrder() == Qt::AscendingOrder));

    // Ctrl+F jumps to the filter; typing narrows the table.
    QTest::keyClick(&w, Qt::Key_F, Qt::ControlModifier);
    QVERIFY(page->filterEdit()->hasFocus());
    QTest::keyClicks(page->filterEdit(), "i_rwsem");
    QCOMPARE(page->filter()->rowCount(), 2);
    page->filterEdit()->clear();

    // Select a lock from the keyboard: the details follow the selection.
    view->setFocus();
    QTest::keyClick(view, Qt::Key_Home);
    QTest::keyClick(view, Qt::Key_Down);
    const QModelIndex current = view->currentIndex();
    QVERIFY(current.isValid());
    QCOMPARE(current.row(), 1);
    QVERIFY(page->histogram()->rowCount() > 0);
    QVERIFY(page->waiters()->rowCount() > 0);
    QCOMPARE(page->ownerStates()->rowCount(), kOwnerStates);

    QTest::keyClick(&w, Qt::Key_1, Qt::ControlModifier);
    QCOMPARE(w.tabs()->currentIndex(), int(MainWindow::Overview));
}

void FlowTest::openDiff()
{
    MainWindow w(false);
    w.show();
    QVERIFY(open(w, pair_.a));
    QSignalSpy diffed(&w, &MainWindow::diffLoaded);
    w.openDiff(pair_.a, pair_.b);
    QVERIFY(diffed.wait(30000));
    QCOMPARE(w.tabs()->currentIndex(), int(MainWindow::Diff));
    DiffLocksModel* locks = w.diff()->locks();
    QVERIFY(locks->rowCount() > 0);
    // Sorted by effect, largest first.
    QTableView* view = w.diff()->locksView();
    for (int r = 1; r < view->model()->rowCount(); ++r)
        QVERIFY(view->model()->index(r - 1, DiffLocksModel::Effect).data(DiffLocksModel::SortRole).toDouble() >=
                view->model()->index(r, DiffLocksModel::Effect).data(DiffLocksModel::SortRole).toDouble());
    QVERIFY(w.diff()->metadata()->rowCount() > 0);
}

void FlowTest::notASessionIsAMessage()
{
    const QString junk = dir_.filePath("notes.txt");
    QFile f(junk);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("this is not a session, just some text that is long enough\n");
    f.close();

    MainWindow w(false);
    w.show();
    QSignalSpy failed(&w, &MainWindow::sessionFailed);
    w.openSession(junk);
    QVERIFY(failed.wait(30000));
    QVERIFY2(failed.first().first().toString().contains("not a lockscope session"),
             qPrintable(failed.first().first().toString()));
    w.openSession(dir_.filePath("does-not-exist"));
    QVERIFY(failed.wait(30000));
    // Still usable afterwards.
    QVERIFY(open(w, pair_.a));
    QVERIFY(w.snapshot());
}

void FlowTest::followsALiveRecording()
{
    const QString path = dir_.filePath("live.lockscope");
    testing::SessionShape shape;
    shape.runs = 1;
    shape.intervals = 5;
    shape.finish_last_run = false;
    testing::LiveSession live(path, shape);

    MainWindow w(false);
    w.show();
    QVERIFY(open(w, path));
    QVERIFY(w.snapshot()->recording);
    QVERIFY(w.follower()->following());
    QCOMPARE(w.snapshot()->session->intervals.size(), size_t(5));

    live.append(3);
    QTRY_COMPARE_WITH_TIMEOUT(w.snapshot()->session->intervals.size(), size_t(8), 15000);
    QCOMPARE(w.locks()->table()->rowCount(), shape.locks);

    live.finish();
    QTRY_VERIFY_WITH_TIMEOUT(!w.snapshot()->recording, 15000);
    QVERIFY(!w.follower()->following());
}

// The Wait chains tab: the graph of the session, the selected lock
// highlighted, and a click on a lock there selects its row, even when the
// table's filter hid it.
void FlowTest::clickingALockInTheChainGraphSelectsIt()
{
    MainWindow w(false);
    w.resize(1280, 800);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(open(w, pair_.a));
    w.showPage(MainWindow::Locks);
    LocksPage* page = w.locks();
    ChainView* graph = page->chains();
    QCOMPARE(graph->graph().edges.size(), size_t(3));
    QVERIFY(page->detailTabs()
                ->tabText(page->detailTabs()->indexOf(graph->parentWidget()->parentWidget()))
                .startsWith(QStringLiteral("Wait chains (3)")));
    page->detailTabs()->setCurrentIndex(page->chainsTab());
    QVERIFY(QTest::qWaitForWindowExposed(graph));

    QTest::keyClicks(page->filterEdit(), QStringLiteral("pipe"));
    const int i = graph->graph().find("kernfs_mutex");
    QVERIFY(i >= 0);
    QSignalSpy clicked(graph, &ChainView::lockClicked);
    QTest::mouseClick(graph, Qt::LeftButton, {}, graph->nodeRect(size_t(i)).center().toPoint());
    QCOMPARE(clicked.count(), 1);
    QCOMPARE(clicked.front().front().toString(), QStringLiteral("kernfs_mutex"));
    const QModelIndex current = page->view()->selectionModel()->currentIndex();
    QVERIFY(current.isValid());
    QCOMPARE(current.siblingAtColumn(LockTableModel::Name).data().toString(), QStringLiteral("kernfs_mutex"));
    QVERIFY2(page->filterEdit()->text().isEmpty(), "the filter that hid the lock is cleared");
    // A click between the boxes selects nothing new.
    QTest::mouseClick(graph, Qt::LeftButton, {}, QPoint(2, 2));
    QCOMPARE(clicked.count(), 1);
}

// Each interval's value is drawn over the whole interval: the first one
// from the recording's start, none left out.
void FlowTest::chartLinesStartAtTheFirstInterval()
{
    const SnapshotPtr snap = build_snapshot(pair_.a);
    const Timeline& t = snap->timeline;
    QCOMPARE(t.start_s.size(), t.x_s.size());
    const charts::Line line = to_line(t, snap->spin_failure_rate, Qt::black);
    QCOMPARE(size_t(line.points.size()), 2 * t.x_s.size());
    QCOMPARE(line.points.front(), QPointF(0, snap->spin_failure_rate.y.front()));
    QCOMPARE(line.points[1], QPointF(t.x_s.front(), snap->spin_failure_rate.y.front()));
    // An interval with no time has no rate to draw; the others stay.
    Timeline empty_first = t;
    empty_first.x_s[0] = empty_first.start_s[0];
    QCOMPARE(size_t(to_line(empty_first, snap->spin_failure_rate, Qt::black).points.size()), 2 * (t.x_s.size() - 1));
}

// The chain graph draws every arrow onto a box: a lock of another class, or
// back onto its own when holders waited for another lock of the same class.
void FlowTest::everyChainArrowEndsOnALock()
{
    Chain pipes{{"pipe_inode_info.mutex", "pipe_inode_info.mutex"}, 3, 12'900'000, true, false, {}};
    Chain onward{{"i_rwsem", "pipe_inode_info.mutex"},         2, 1'000'000, false, false,
                 {"pipe_inode_info.mutex", "sleeping", {}, {}}};
    Chain ab{{"A", "B", "A"}, 5, 500, true, false, {}};
    Chain ba{{"B", "A", "B"}, 2, 200, true, false, {}};
    ChainView view;
    view.resize(900, 400);
    view.setGraph(build_chain_graph({pipes, onward, ab, ba}));
    QCOMPARE(view.graph().edges.size(), size_t(4));
    for (const ChainGraph::Edge& e : view.graph().edges) {
        QPointF tip;
        view.edgePath(e, &tip);
        const QRectF target = view.nodeRect(e.to).adjusted(-0.5, -0.5, 0.5, 0.5);
        QVERIFY2(target.contains(tip), qPrintable(QString::fromStdString(view.graph().nodes[e.from].name + " -> " +
                                                                         view.graph().nodes[e.to].name)));
    }
}

// A session of a program with only user-lock contention opens on its
// locks, on the Locks page: rows of the one table (scope user), longest wait first, with what
// their futex waits give and "–" where they give nothing; a session with
// kernel locks too lists both, and the filter finds either scope.
void FlowTest::userLocksAreRowsOfTheLockTable()
{
    MainWindow w(false);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(open(w, userSession(QStringLiteral("user_only.lockscope"), 0)));
    LocksPage* page = w.locks();
    QAbstractItemModel* rows = page->filter();
    QCOMPARE(rows->rowCount(), 2);
    // No kernel contention: it opens on the Locks page, its first lock selected.
    QCOMPARE(w.tabs()->currentIndex(), int(MainWindow::Locks));
    QCOMPARE(page->view()->selectionModel()->currentIndex().row(), 0);
    auto cell = [&](int row, int column) { return rows->index(row, column).data().toString(); };
    QCOMPARE(cell(0, LockTableModel::Name), QStringLiteral("g_cache_lock"));
    QCOMPARE(cell(0, LockTableModel::Kind), QStringLiteral("pthread_mutex"));
    QCOMPARE(cell(0, LockTableModel::Scope), QStringLiteral("user"));
    QCOMPARE(cell(0, LockTableModel::Contentions), QStringLiteral("12,000"));  // 3 runs
    QCOMPARE(cell(0, LockTableModel::WaitMean), QStringLiteral("5.00 µs"));
    QCOMPARE(cell(0, LockTableModel::ShareOfWait), QStringLiteral("81.6%"));  // of the user locks' wait
    for (int column : {int(LockTableModel::SpinAttempts), int(LockTableModel::SpinFailureRate),
                       int(LockTableModel::SpinningShare), int(LockTableModel::Sleeps), int(LockTableModel::Cgroups)})
        QCOMPARE(cell(0, column), QStringLiteral("–"));
    QCOMPARE(cell(0, LockTableModel::QueuedOnCpuShare), QStringLiteral("10%"));  // on a CPU in the syscall
    QCOMPARE(cell(0, LockTableModel::AsleepShare), QStringLiteral("70%"));
    QCOMPARE(cell(0, LockTableModel::RunnableShare), QStringLiteral("20%"));
    QCOMPARE(cell(1, LockTableModel::Kind), QStringLiteral("pthread_rwlock/r"));
    QVERIFY2(page->userNote()->isVisibleTo(page), "the futex waits left out are said");
    QVERIFY2(
        page->userNote()->text().contains(QStringLiteral("Left out of the user locks (condition): 900 futex waits")),
        qPrintable(page->userNote()->text()));

    QVERIFY(open(w, userSession(QStringLiteral("kernel_and_user.lockscope"), 6)));
    QCOMPARE(rows->rowCount(), 8);
    QTest::keyClicks(page->filterEdit(), QStringLiteral("user"));
    int user_rows = 0;  // and the kernel rows of a cgroup under /user.slice
    for (int r = 0; r < rows->rowCount(); ++r)
        user_rows += cell(r, LockTableModel::Scope) == QLatin1String("user");
    QCOMPARE(user_rows, 2);
    page->filterEdit()->clear();
    QTest::keyClicks(page->filterEdit(), QStringLiteral("kernel"));
    QCOMPARE(rows->rowCount(), 6);
    page->filterEdit()->clear();

    QVERIFY(open(w, pair_.a));
    QVERIFY2(!page->userNote()->isVisibleTo(page), "a session without user locks has no note");
    for (int r = 0; r < rows->rowCount(); ++r)
        QCOMPARE(cell(r, LockTableModel::Scope), QStringLiteral("kernel"));
}

// Selecting a user lock fills the panes from what the session keeps of it:
// its histogram, each run's mean rate, its sampled user stacks, the threads
// that woke its waiters, the owners they saw, the processes; the owner
// state at queueing, which it does not have, says so.
void FlowTest::userLockRowFillsTheDetailPanes()
{
    MainWindow w(false);
    w.resize(1280, 800);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(open(w, userSession(QStringLiteral("user_detail.lockscope"), 0)));
    w.showPage(MainWindow::Locks);
    LocksPage* page = w.locks();
    page->selectFirstRow();
    QVERIFY(page->view()->selectionModel()->currentIndex().isValid());

    uint64_t waits = 0;
    for (int r = 0; r < page->histogram()->rowCount(); ++r)
        waits += page->histogram()->index(r, HistogramModel::Count).data(HistogramModel::SortRole).toULongLong();
    QCOMPARE(waits, uint64_t(12'000));
    QVERIFY(page->seriesChart()->hasData());
    QVERIFY2(!page->ownerChart()->hasData(), "no owner state is recorded for a user lock");

    QCOMPARE(page->waiters()->rowCount(), 1);
    const QString stack = page->waiters()->index(0, StackModel::Frames).data().toString();
    QVERIFY2(stack.startsWith(QStringLiteral("update_g_cache_lock")), qPrintable(stack));
    QCOMPARE(page->waiters()->index(0, StackModel::Samples).data().toString(), QStringLiteral("750"));
    QCOMPARE(page->wakers()->rowCount(), 3);  // one waker thread per run's process
    QCOMPARE(page->wakers()->headerData(StackModel::Samples, Qt::Horizontal, Qt::DisplayRole).toString(),
             QStringLiteral("Wakes"));
    QVERIFY(page->wakers()->index(0, StackModel::Frames).data().toString().contains(QStringLiteral("worker-2")));
    QCOMPARE(page->wakers()->index(0, StackModel::Samples).data().toString(), QStringLiteral("2,000"));
    QCOMPARE(page->holders()->rowCount(), 3);  // the owner each run's waiters saw
    QVERIFY(page->holders()->index(0, StackModel::Frames).data().toString().startsWith(QStringLiteral("thread 1011")));
    // Its holder split: the tab's figures, the owner and its preemptor, the
    // table's columns.
    const QString summary = page->holderTab()->summary()->text();
    QVERIFY2(summary.startsWith(QStringLiteral("While waiters waited")), qPrintable(summary));
    QVERIFY(page->holderTab()->times()->rowCount() > 0);
    const QString runnable =
        page->view()->currentIndex().siblingAtColumn(LockTableModel::HolderRunnableShare).data().toString();
    QVERIFY2(runnable != QStringLiteral("–") && runnable.endsWith(QLatin1Char('%')), qPrintable(runnable));
    QCOMPARE(page->instances()->rowCount(), 3);  // the three runs' processes

    // Back on a kernel lock, its panes are the kernel's again.
    QVERIFY(open(w, userSession(QStringLiteral("detail_mixed.lockscope"), 6)));
    // A user lock's node in the wait-chain graph selects its row.
    QVERIFY(page->chains()->graph().find("g_cache_lock (user pthread_mutex)") >= 0);
    QVERIFY(page->selectLockNamed(QStringLiteral("g_cache_lock (user pthread_mutex)")));
    const QModelIndex user_row = page->view()->selectionModel()->currentIndex();
    QCOMPARE(user_row.siblingAtColumn(LockTableModel::Name).data().toString(), QStringLiteral("g_cache_lock"));
    QCOMPARE(user_row.siblingAtColumn(LockTableModel::Scope).data().toString(), QStringLiteral("user"));
    QVERIFY(page->selectLockNamed(QStringLiteral("pipe->mutex")));
    QVERIFY(page->ownerChart()->hasData());
    QCOMPARE(page->wakers()->headerData(StackModel::Samples, Qt::Horizontal, Qt::DisplayRole).toString(),
             QStringLiteral("Samples"));
}

// The holder split as a user meets it: a card on the overview, four columns
// in the lock table, and the Holders tab of the selected lock with the
// holders and the tasks that preempted them. A lock with no owner to
// follow, and a session older than the split, show "–" and say why.
void FlowTest::holderSplitShowsInTheCardTheColumnsAndTheTab()
{
    MainWindow w(false);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(open(w, pair_.a));
    auto card_shows = [&](const QString& text) {
        for (const QLabel* label : w.overview()->findChildren<QLabel*>())
            if (label->text() == text)
                return true;
        return false;
    };
    const QString card =
        w.overview()->keyFigures()->index(KeyFiguresModel::HolderSplit, KeyFiguresModel::Value).data().toString();
    QVERIFY2(QRegularExpression(QStringLiteral("^\\d+% / \\d+% / \\d+%$")).match(card).hasMatch(), qPrintable(card));
    QVERIFY(card_shows(QStringLiteral("Holder: run / runnable / asleep")));
    QVERIFY(card_shows(card));

    QTest::keyClick(&w, Qt::Key_2, Qt::ControlModifier);
    LocksPage* page = w.locks();
    QAbstractItemModel* rows = page->filter();
    QVERIFY(page->selectLockNamed(QStringLiteral("pipe->mutex")));
    const int pipe = page->view()->currentIndex().row();
    auto cell = [&](int row, int column) { return rows->index(row, column).data().toString(); };
    // The test session's mutex holders ran 20%, were runnable 45% and asleep 10% of the wait.
    QCOMPARE(cell(pipe, LockTableModel::HolderRunningShare), QStringLiteral("20%"));
    QCOMPARE(cell(pipe, LockTableModel::HolderRunnableShare), QStringLiteral("45%"));
    QCOMPARE(cell(pipe, LockTableModel::HolderAsleepShare), QStringLiteral("10%"));
    QCOMPARE(cell(pipe, LockTableModel::HolderUnknownShare), QStringLiteral("25%"));
    QVERIFY(page->view()->horizontalHeader()->sectionSize(LockTableModel::HolderRunnableShare) > 0);

    HolderTab* tab = page->holderTab();
    page->detailTabs()->setCurrentWidget(tab);
    QCOMPARE(page->detailTabs()->tabText(page->detailTabs()->currentIndex()), QStringLiteral("Holders"));
    QVERIFY2(tab->summary()->text().contains(QStringLiteral("runnable")) &&
                 tab->summary()->text().contains(QStringLiteral("45%")),
             qPrintable(tab->summary()->text()));
    // and where its holders slept holding it, past the scheduler's frames
    QVERIFY2(
        tab->summary()->text().contains(QStringLiteral("It slept holding the lock in: folio_wait_bit_common &larr; ")),
        qPrintable(tab->summary()->text()));
    HolderTimeModel* tasks = tab->times();
    // The holders first (each run's two threads, the top three), then the
    // compiler and the softirq thread that preempted them.
    QCOMPARE(tasks->rowCount(), 5);
    for (int t = 0; t < 3; ++t)
        QCOMPARE(tasks->index(t, HolderTimeModel::Role).data().toString(), QStringLiteral("holder"));
    QCOMPARE(tasks->index(3, HolderTimeModel::Task).data().toString(), QStringLiteral("cc1plus[9000]"));
    QCOMPARE(tasks->index(3, HolderTimeModel::Role).data().toString(), QStringLiteral("preemptor"));
    QCOMPARE(tasks->index(4, HolderTimeModel::Task).data().toString(), QStringLiteral("ksoftirqd/0[14]"));
    QVERIFY(page->holders()->rowCount() > 0);  // the sampled holder stacks beside them

    // A spinlock has no owner to follow: "–", and the tab says why.
    QVERIFY(page->selectLockNamed(QStringLiteral("pipe->mutex.wait_lock")));
    const int spin = page->view()->currentIndex().row();
    for (int column = LockTableModel::HolderRunningShare; column <= LockTableModel::HolderUnknownShare; ++column)
        QCOMPARE(cell(spin, column), QStringLiteral("–"));
    QVERIFY(tab->summary()->text().contains(QStringLiteral("No holder of this lock was followed")));
    QCOMPARE(tasks->rowCount(), 0);

    // A session older than the split: every holder cell "–", the card too.
    auto older = std::make_shared<SessionSnapshot>(*w.snapshot());
    older->report.holder_split.kept = false;
    page->setSnapshot(older);
    w.overview()->setSnapshot(older);
    for (int r = 0; r < rows->rowCount(); ++r)
        for (int column = LockTableModel::HolderRunningShare; column <= LockTableModel::HolderUnknownShare; ++column)
            QCOMPARE(cell(r, column), QStringLiteral("–"));
    QVERIFY(page->selectLockNamed(QStringLiteral("pipe->mutex")));
    QCOMPARE(tab->summary()->text(), QStringLiteral("This session's format keeps no holder split."));
    QCOMPARE(tasks->rowCount(), 0);
    QVERIFY(card_shows(QStringLiteral("not kept in this session's format")));
}

QTEST_MAIN(FlowTest)
#include "flow_test.moc"
